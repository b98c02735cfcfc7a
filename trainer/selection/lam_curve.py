"""Ridge on fixed columns: its weights, and its LOO SSE for a whole grid of lambdas from one
thin SVD.

Used by the lambda search (:mod:`sensorbudget.trainer.selection.lam_search`); re-exported by
:mod:`sensorbudget.trainer.selection.rls_math`, whose notation (E residuals, h = 1 - leverage, LOO SSE =
sum_jq (E_jq / h_j)^2) it follows.
"""

from __future__ import annotations

import numpy as np


def loo_sse_lambda_curve(XS: np.ndarray, Y: np.ndarray, lams, offset: float = 0.0) -> np.ndarray:
    """LOO SSE of ridge on the fixed columns ``XS`` (n x s) for every lambda in ``lams``.

    ``offset`` = 1/n adds an unpenalized intercept refitted per held-out row (``XS`` and ``Y``
    centred with the means of all n rows): its hat matrix is J/n + the centred one, so every
    1 - leverage below is lowered by 1/n.

    One thin SVD XS = U diag(d) V^T serves every lambda: the ridge hat matrix is
    U diag(f) U^T with f_k = d_k^2 / (d_k^2 + lam), so with g = 1 - f = lam / (d_k^2 + lam),
    B = U^T Y (s x t) and the part of Y outside span(U), Yp = Y - U B, the residuals are
    E = Yp + U diag(g) B and 1 - leverage is h_j = 1 - sum_k U_jk^2 + sum_k U_jk^2 g_k.
    With N = Yp B^T (n x s) and B B^T = L L^T (L: s x r, r = rank(B) <= min(s, t)):

        ||E_j||^2 = ||Yp_j||^2 + 2 sum_k g_k U_jk N_jk + ||(U diag(g) L)_j||^2,

    and LOO SSE(lam) = sum_j ||E_j||^2 / h_j^2 (the LOO identity of this module). Every term
    is of the size of the residual (no cancellation against ||Y||^2). Cost O(n s (s + t))
    once plus O(n s r) per lambda: all lambdas for about the price of one greedy step.
    """
    XS = np.asarray(XS, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    lams = np.asarray(lams, dtype=np.float64)
    if XS.shape[1] == 0:
        return np.full(lams.shape, float(np.sum(np.square(Y))) / (1.0 - offset) ** 2)
    U, d, _ = np.linalg.svd(XS, full_matrices=False)
    B = U.T @ Y
    Yp = Y - U @ B
    p2 = np.einsum("ij,ij->i", Yp, Yp)
    UN = U * (Yp @ B.T)
    w, V = np.linalg.eigh(B @ B.T)
    keep = w > w.max(initial=0.0) * 1e-15
    L = V[:, keep] * np.sqrt(w[keep])
    U2 = U * U
    outside = 1.0 - offset - U2.sum(axis=1)
    out = np.empty(lams.shape)
    for i, lam in enumerate(lams):
        g = lam / (d * d + lam)
        h = outside + U2 @ g
        e2 = p2 + 2.0 * (UN @ g) + np.einsum("ij,ij->i", *(2 * ((U * g) @ L,)))
        out[i] = float(np.sum(e2 / (h * h)))
    return out


#: Entries of Y centred per chunk by :func:`centred_products` (a reused 1 MiB buffer).
CENTRE_CHUNK = 1 << 17


def centred_products(X_S: np.ndarray, Y: np.ndarray, y_mean=None) -> np.ndarray:
    """X_S^T (Y - 1 y_mean^T) (k x t) as a sum over row chunks, each centred in one reused
    buffer: no n x t temporary (a fresh 100 MB array costs more in page faults than the
    arithmetic). ``y_mean`` None: Y is already centred."""
    X_S = np.asarray(X_S, dtype=np.float64)
    if y_mean is None:
        return X_S.T @ np.asarray(Y, dtype=np.float64)
    n, t = Y.shape
    rows = max(1, CENTRE_CHUNK // max(t, 1))
    buf = np.empty((min(rows, n), t))
    out = np.zeros((X_S.shape[1], t))
    for i0 in range(0, n, rows):
        part = buf[:min(rows, n - i0)]
        np.subtract(Y[i0:i0 + rows], y_mean, out=part)
        out += X_S[i0:i0 + rows].T @ part
    return out


def ridge_weights(X_S: np.ndarray, Y: np.ndarray, lam: float, y_mean=None) -> np.ndarray:
    """W = (X_S^T X_S + lam I)^{-1} X_S^T Yc (k x t): the primal ridge solution on S, with
    Yc = Y - 1 y_mean^T (``y_mean`` None: Y itself; :func:`centred_products`).

    Equals X_S^T A of the paper (push-through identity); solved directly for accuracy.
    """
    X_S = np.asarray(X_S, dtype=np.float64)
    k = X_S.shape[1]
    if k == 0:
        return np.zeros((0, Y.shape[1]))
    K = X_S.T @ X_S + lam * np.eye(k)
    return np.linalg.solve(K, centred_products(X_S, Y, y_mean))
