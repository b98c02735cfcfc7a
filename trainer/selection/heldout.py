"""Held-out predictions of a fixed model in closed form: LOO or leave-group-out, with the
intercept refitted in every fold.

Ridge on the columns Xs (n x k, centred with the means of all n rows when there is an
intercept) has the hat matrix J/n + H_c with H_c = Xs (Xs^T Xs + lam I)^{-1} Xs^T = T T^T,
T = Xs L^{-T} for the Cholesky factor L L^T = Xs^T Xs + lam I. With the full fit's residuals
E = Yc - H_c Yc and V = [T, 1/sqrt(n)] (just T without an intercept), I - H = I - V V^T, so
refitting without the rows Q and predicting them leaves the residuals (block hold-out
identity, docs/method.md)

    F_Q = (I - V_Q V_Q^T)^{-1} E_Q = E_Q + V_Q (I - V_Q^T V_Q)^{-1} V_Q^T E_Q    (Woodbury),

and for a single row F_j = E_j / (1 - ||V_j||^2) = E_j / (1 - h_c,jj - 1/n). The held-out
predictions are Y_Q - F_Q. Cost O(n k (k + t)) for any group sizes (a (k+1) x (k+1) solve
per group): the same numbers the greedy criterion sums, from the selected columns alone.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, solve_triangular

from . import rls_math
from .caches import intercept_offset, target_blocks, target_columns
from .holdout_math import group_layout
from .lam_curve import centred_products

#: Entries of the (groups, rows, k + 1) chunk of V processed at once.
CHUNK = 1 << 22


def fit_terms(Xs, Yc, lam, y_mean=None):
    """(L, W): the lower Cholesky factor of Xs^T Xs + lam I and the ridge weights
    W = (Xs^T Xs + lam I)^{-1} Xs^T Yc (k x t), from the Gram (a sum over rows); with
    ``y_mean``, ``Yc`` holds Y and is centred chunk by chunk (no n x t temporary)."""
    Xs = np.asarray(Xs, dtype=np.float64)
    K = Xs.T @ Xs + lam * np.eye(Xs.shape[1])
    return gram_terms(K, centred_products(Xs, Yc, y_mean))


def gram_terms(K, XtY):
    """(L, W) from K = Xs^T Xs + lam I and Xs^T Yc (sums over rows, e.g. of partitions)."""
    if K.shape[0] == 0:
        return np.zeros((0, 0)), np.zeros((0, XtY.shape[1]))
    L = np.tril(cho_factor(K, lower=True)[0])
    W = solve_triangular(L.T, solve_triangular(L, XtY, lower=True), lower=False)
    return L, W


def heldout_residuals(Xs, Yc, L, W, groups=None, offset=0.0, y_mean=None) -> np.ndarray:
    """Hold-out residuals F (rows in the given order) of ridge on ``Xs`` (module notes).

    ``L``, ``W``: :func:`fit_terms` of all rows (possibly summed over other rows too: the
    function is local to whole groups); ``groups`` None means LOO; ``offset`` = 1/n with an
    intercept refitted per fold (n = the rows the centring means came from), else 0.
    Identity: F_Q = E_Q + V_Q (I - V_Q^T V_Q)^{-1} V_Q^T E_Q with E = Yc - Xs W and
    V = [Xs L^{-T}, sqrt(offset) 1]. With ``y_mean``, ``Yc`` holds Y and E = Y - (Xs W + y_mean).
    """
    Xs = np.asarray(Xs, dtype=np.float64)
    E = Xs @ W                                   # n x t: built and finished in place
    if y_mean is not None:
        E += y_mean
    np.subtract(np.asarray(Yc, dtype=np.float64), E, out=E)
    n = Xs.shape[0]
    V = solve_triangular(L, Xs.T, lower=True).T if Xs.shape[1] else np.zeros((n, 0))
    if offset:
        V = np.column_stack([V, np.full(n, np.sqrt(offset))])
    if V.shape[1] == 0:
        return E
    if groups is None:
        E /= (1.0 - np.einsum("ij,ij->i", V, V))[:, None]
        return E
    layout = group_layout(groups)
    order = layout.order
    Vo, Eo = V[order], E[order]
    F = np.empty_like(E)
    n1 = layout.n_single
    F[order[:n1]] = Eo[:n1] / (1.0 - np.einsum("ij,ij->i", Vo[:n1], Vo[:n1]))[:, None]
    k1 = V.shape[1]
    for m, a, b in layout.buckets:
        step = max(1, CHUNK // (m * k1)) * m
        for s in range(n1 + a, n1 + b, step):
            e = min(s + step, n1 + b)
            V3 = Vo[s:e].reshape(-1, m, k1)
            E3 = Eo[s:e].reshape(-1, m, E.shape[1])
            M = np.eye(k1) - np.matmul(V3.transpose(0, 2, 1), V3)
            Z = np.linalg.solve(M, np.matmul(V3.transpose(0, 2, 1), E3))
            F[order[s:e]] = (E3 + np.matmul(V3, Z)).reshape(e - s, -1)
    return F


def heldout_predictions(Xs, Y, y_mean, lam, groups=None, offset=0.0) -> np.ndarray:
    """Held-out predictions Y - F in the units of ``Y`` (n x t, rows in the given order):
    :func:`heldout_residuals` of ridge on the transformed columns ``Xs`` and Yc = Y - y_mean."""
    Y = np.asarray(Y, dtype=np.float64)
    L, W = fit_terms(Xs, Y, lam, y_mean=y_mean)
    F = heldout_residuals(Xs, Y, L, W, groups, offset, y_mean=y_mean)
    return np.subtract(Y, F, out=F)             # one n x t array, finished in place


def observed_heldout(X, Y, groups, features, cols, prep, lam) -> list:
    """Held-out predictions of the targets ``cols`` of ``Y`` (NaN = missing) by ridge on the
    columns ``features`` of ``X`` at ``lam``, per target observation mask (each refitted on its
    observed rows, as the selection scores it; :func:`sensorbudget.trainer.selection.caches.target_blocks`):
    [(rows or None, targets within cols, predictions (rows x targets))]."""
    with rls_math.single_threaded_blas():       # small products: threads cost more here
        return _observed_heldout(X, Y, groups, features, cols, prep, lam)


def _observed_heldout(X, Y, groups, features, cols, prep, lam) -> list:
    out = []
    features = np.asarray(features, dtype=np.intp)
    for rows, targets, q in target_blocks(X, target_columns(Y, cols), prep):
        Xr, Yr = (X, Y) if rows is None else (X[rows], Y[rows])
        g = None if groups is None else (np.asarray(groups) if rows is None
                                         else np.asarray(groups)[rows])
        Xs = q.columns(Xr, features, np.float64)
        out.append((rows, targets, heldout_predictions(
            Xs, target_columns(Yr, np.asarray(cols)[targets]), q.y_mean, lam, g,
            intercept_offset(q, Xr.shape[0]))))
    return out
