"""Closed-form leave-one-out (LOO) greedy RLS: the step math as pure numpy functions.

Notation (``docs/method.md``; Naula et al. 2014, Algorithm 2). X (n x d) are the
candidate features, Y (n x t) the targets, S the selected set, lam > 0 the ridge parameter and
G = (X_S X_S^T + lam I)^{-1}. The paper keeps A = G Y, g = diag(G), C = G X. We keep the same
caches multiplied by lam, which removes every 1/lam factor (no overflow for tiny lam, usable in
float32) and makes each cache an interpretable, *row-local* quantity (push-through identity
lam G = I - X_S (X_S^T X_S + lam I)^{-1} X_S^T):

    R = lam C      (n x d)  candidate features with the selected ones ridge-regressed out
    E = lam A      (n x t)  ridge residuals of the targets
    h = lam g      (n,)     1 - leverage of every sample
    P = X^T E      (d x t)  a sum over rows
    sigma_i = x_i^T R_i     (d,)  a sum over rows

The classical ridge identity gives the LOO residual of sample j, target q as E_jq / h_j, so
LOO SSE = sum_jq (E_jq / h_j)^2.

Every function is either row-local (works on any subset of rows) or a sum over rows, so the rows
can be partitioned (:mod:`trainer.distributed.row_store` sums the partial results of row
partitions).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.linalg import get_blas_funcs
from threadpoolctl import ThreadpoolController

#: Rows/columns per block of the element-wise scoring pass (keeps temporaries cache-sized).
ROW_BLOCK = 256
COL_BLOCK = 1024


def initial_caches(R: np.ndarray, Y: np.ndarray):
    """Caches for S = {}: R = X, E = Y, h = 1, P = X^T Y, sigma_i = x_i^T x_i.

    ``R`` must already hold the (centred/scaled) candidate matrix X; it is taken over and
    updated in place by :func:`add_feature`, so the algorithm owns exactly one n x d array.
    P and sigma are kept in float64 whatever the dtype of R. Cost O(n d t). Row-local part
    :func:`initial_rows`, sums over rows :func:`initial_sums`.
    """
    E, h = initial_rows(R, Y)
    P, sigma = initial_sums(R, E)
    return E, h, P, sigma


def initial_rows(R: np.ndarray, Y: np.ndarray):
    """The row-local caches for S = {}: E = Y (a copy in R's dtype) and h = 1."""
    E = np.array(Y, dtype=R.dtype, copy=True, order="C")
    h = np.ones(R.shape[0], dtype=R.dtype)
    return E, h


def initial_sums(R: np.ndarray, E: np.ndarray):
    """The sums over rows for S = {}: P = R^T E (d x t) and sigma_i = ||R_i||^2, in float64."""
    P = np.asarray(R.T @ E, dtype=np.float64)
    sigma = np.einsum("ij,ij->j", R, R, dtype=np.float64)
    return P, sigma


def loo_sse(E: np.ndarray, h: np.ndarray) -> float:
    """LOO sum of squared errors of the current model: sum_jq (E_jq / h_j)^2."""
    return float(loo_sse_per_target(E, h).sum())


def loo_sse_per_target(E: np.ndarray, h: np.ndarray, *, row_block=4 * ROW_BLOCK) -> np.ndarray:
    """LOO SSE of each target: sum_j (E_jq / h_j)^2 = ((E o E)^T w)_q with w_j = 1 / h_j^2 (t,).

    One read of E in row blocks (a GEMV per block on a reused scratch square), no n x t
    temporary: with many labels this pass runs every step. Sums in float64.
    """
    n, t = E.shape
    w = 1.0 / np.square(np.asarray(h, dtype=np.float64))
    out = np.zeros(t, dtype=np.float64)
    buf = scratch(1, min(row_block, max(n, 1)) * t, np.float64, tag="sse")[0]
    for i0 in range(0, n, row_block):
        block = E[i0:i0 + row_block]
        square = buf[:block.size].reshape(block.shape)
        np.multiply(block, block, out=square, dtype=np.float64)
        out += w[i0:i0 + row_block] @ square
    return out


def candidate_loo_sse_partial(R, E, h, Pt, w, p2, *, col_block=COL_BLOCK):
    """Partial (over the given rows) LOO SSE of the model after adding each single candidate.

    Sherman-Morrison with w_i = 1 / (lam + sigma_i): adding feature i changes
    E -> E - w_i R_i P_i^T and h -> h - w_i R_i o R_i, hence, with Q = E P^T (n x d),
    a2_j = sum_q E_jq^2 and p2_i = sum_q P_iq^2,

        e_i = sum_j (a2_j - 2 w_i R_ji Q_ji + w_i^2 R_ji^2 p2_i) / (h_j - w_i R_ji^2)^2.

    ``R``, ``E``, ``h`` may hold any subset of the rows; ``Pt`` = P^T (t x d), ``w`` and ``p2``
    are global. The full e is the sum of the partial results over a row partition. Cost:
    2 rows d t flops (the GEMM for Q) plus one element-wise pass over rows x ``col_block``
    scratch arrays (:func:`scratch`, reused across calls). A candidate whose updated
    1 - leverage is not positive scores inf.
    """
    rows, d = R.shape
    a2 = np.einsum("ij,ij->i", E, E)[:, None]
    hcol = h[:, None]
    Pm2 = Pt * -2.0                            # folds the factor -2 into the GEMM
    out = np.empty(d, dtype=np.float64)
    bufs = scratch(3, rows * min(col_block, d), np.result_type(R, E, Pt))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for j0 in range(0, d, col_block):
            J = slice(j0, min(j0 + col_block, d))
            num, WR, Ht = (b[:rows * (J.stop - j0)].reshape(rows, -1) for b in bufs)
            np.matmul(E, Pm2[:, J], out=num)   # -2 Q_ji for the block
            np.multiply(R[:, J], w[J], out=WR)  # w_i R_ji
            np.multiply(WR, p2[J], out=Ht)
            num += Ht                          # -2 Q_ji + w_i R_ji p2_i
            num *= WR
            num += a2                          # a2_j - 2 w_i R_ji Q_ji + w_i^2 R_ji^2 p2_i
            np.multiply(R[:, J], WR, out=Ht)   # w_i R_ji^2
            np.subtract(hcol, Ht, out=Ht)      # h_j - w_i R_ji^2
            bad = Ht.min(axis=0) <= 0
            Ht *= Ht                           # one division (the slow operation) per entry
            num /= Ht
            part = num.sum(axis=0, dtype=np.float64)
            part[bad] = np.inf
            out[J] = part
    return out


_SCRATCH = threading.local()


def scratch(count: int, size: int, dtype, tag: str = "") -> list:
    """``count`` flat scratch arrays of at least ``size`` elements, cached per thread.

    Reused by every call on the same thread: allocating several MB per row block anew makes
    glibc map fresh pages each time (mmap threshold; heap trimming), and the page faults cost
    more than the arithmetic (measured 4-5x on a LOO step). Memory: count x size per thread.
    Callers whose buffers are alive at the same time use different ``tag``s.
    """
    cache = _SCRATCH.__dict__.setdefault("arrays", {})
    key = (tag, count, np.dtype(dtype).str)
    bufs = cache.get(key)
    if bufs is None or bufs[0].size < size:
        bufs = cache[key] = [np.empty(size, dtype=dtype) for _ in range(count)]
    return bufs


def scoring_terms(P, sigma, lam, dtype):
    """Global terms of the candidate scores: P^T, w = 1 / (lam + sigma), p2_i = ||P_i||^2."""
    w = (1.0 / (lam + np.maximum(sigma, 0.0))).astype(dtype)
    p2 = np.einsum("ij,ij->i", P, P).astype(dtype)
    return np.ascontiguousarray(P.T, dtype=dtype), w, p2


def candidate_loo_sse(R, E, h, P, sigma, lam, *, row_block=ROW_BLOCK, col_block=COL_BLOCK):
    """LOO SSE after adding each candidate, as the sum of partial scores over row blocks.

    Identity: e = sum over row blocks B of ``candidate_loo_sse_partial(R_B, E_B, h_B, ...)``.
    """
    n, d = R.shape
    Pt, w, p2 = scoring_terms(P, sigma, lam, R.dtype)
    blocks = [slice(i0, min(i0 + row_block, n)) for i0 in range(0, n, row_block)]

    def part(rows):
        return candidate_loo_sse_partial(R[rows], E[rows], h[rows], Pt, w, p2,
                                         col_block=col_block)

    if len(blocks) > 1 and _WORKERS > 1:
        # Row blocks on worker threads (numpy releases the GIL); BLAS single-threaded meanwhile.
        with single_threaded_blas():
            parts = list(_thread_pool().map(part, blocks))
    else:
        parts = [part(rows) for rows in blocks]
    total = np.zeros(d, dtype=np.float64)
    for p in parts:                              # fixed order: deterministic sums
        total += p
    return total


_WORKERS = min(4, os.cpu_count() or 1)


def set_threads(n: int) -> None:
    """Use ``n`` threads for the row-block passes of this process (a Dask worker sets its own
    thread count, so worker processes on one machine do not oversubscribe its cores)."""
    global _WORKERS
    _WORKERS = max(1, int(n))
    _thread_pool.cache_clear()


@functools.lru_cache(maxsize=1)
def _thread_pool():
    return ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="greedy-rls")


@functools.lru_cache(maxsize=1)
def _blas_controller():
    return ThreadpoolController()


_blas_depth = 0


@contextlib.contextmanager
def single_threaded_blas():
    """BLAS limited to one thread while the row blocks run on this module's worker threads.

    Re-entrant: only the outermost call changes the BLAS thread count, so a whole greedy run
    enters it once (switching OpenBLAS's thread count costs milliseconds, more than a step's
    small GEMV/GER calls gain from a second thread).
    """
    global _blas_depth
    if _WORKERS <= 1 or _blas_depth:
        _blas_depth += 1
        try:
            yield
        finally:
            _blas_depth -= 1
        return
    with _blas_controller().limit(limits=1, user_api="blas"):
        _blas_depth += 1
        try:
            yield
        finally:
            _blas_depth -= 1


def residual_products(R: np.ndarray, x_b: np.ndarray) -> np.ndarray:
    """r = R^T x_b (a sum over rows): r_i = lam x_b^T G x_i, symmetric in (b, i)."""
    return R.T @ x_b


def rank_one_update(R: np.ndarray, alpha: float, u: np.ndarray, v: np.ndarray) -> None:
    """In place R <- R + alpha u v^T (row-local), with BLAS ``ger`` when R is C-contiguous.

    ``ger`` on the Fortran-ordered view R^T (R^T + alpha v u^T) touches R once, without an
    n x d temporary; other layouts fall back to row blocks.
    """
    u = np.ascontiguousarray(u, dtype=R.dtype)
    v = np.ascontiguousarray(v, dtype=R.dtype)
    if R.flags.c_contiguous and R.size:
        ger = get_blas_funcs("ger", (R,))
        out = ger(alpha, v, u, a=R.T, overwrite_a=True)
        if np.shares_memory(out, R):
            return
        R[...] = out.T   # pragma: no cover - BLAS declined to work in place
        return
    for i0 in range(0, R.shape[0], ROW_BLOCK):
        rows = slice(i0, i0 + ROW_BLOCK)
        R[rows] += alpha * np.outer(u[rows], v)


def add_feature(R, E, h, P, sigma, x_b, b, lam):
    """Add feature ``b`` (column ``x_b`` of X) to S, updating every cache in place.

    With r = R^T x_b, den = lam + sigma_b and the old column R_b (Sherman-Morrison):

        R <- R - R_b r^T / den,   E <- E - R_b P_b^T / den,   h <- h - R_b o R_b / den,
        P <- P - r P_b^T / den,   sigma <- sigma - r o r / den.

    The P and sigma updates use X^T R_b = r (G is symmetric), so X is never needed beyond
    ``x_b``. Cost O(n d + n t + d t). ``sigma`` and ``h`` are clipped at their mathematical
    lower bounds (0 and > 0) against round-off. Returns (r, den) (for group Gram caches).

    Split for row partitions: r is a sum over rows (:func:`residual_products`), then
    :func:`add_feature_sums` updates the global P, sigma and :func:`add_feature_rows` the
    row-local R, E, h with the same (r, den, P_b) on every partition.
    """
    r = residual_products(R, x_b)
    den, Pb = add_feature_sums(P, sigma, r, b, lam)
    add_feature_rows(R, E, h, r, den, b, Pb)
    return r, den


def add_feature_sums(P, sigma, r, b, lam):
    """The global part of :func:`add_feature`: P <- P - r P_b^T / den, sigma <- sigma - r o r
    / den (in place), given r = R^T x_b summed over all rows. Returns (den, old P_b)."""
    den = lam + max(float(sigma[b]), 0.0)
    Pb = P[b].copy()
    P -= np.outer(r / den, Pb).astype(P.dtype, copy=False)
    sigma -= (r * r / den).astype(sigma.dtype, copy=False)
    np.maximum(sigma, 0.0, out=sigma)
    return den, Pb


def add_feature_rows(R, E, h, r, den, b, Pb):
    """The row-local part of :func:`add_feature` on any subset of rows: R <- R - R_b r^T / den,
    E <- E - R_b P_b^T / den, h <- h - R_b o R_b / den (in place; h clipped > 0)."""
    Rb = R[:, b].copy()
    rank_one_update(R, -1.0 / den, Rb, r)
    rank_one_update(E, -1.0 / den, Rb, Pb)
    h -= (Rb * Rb / den).astype(h.dtype, copy=False)
    np.maximum(h, np.finfo(h.dtype).tiny, out=h)


def ridge_weights(X_S: np.ndarray, Y: np.ndarray, lam: float) -> np.ndarray:
    """W = (X_S^T X_S + lam I)^{-1} X_S^T Y (k x t): the primal ridge solution on S.

    Equals X_S^T A of the paper (push-through identity); solved directly for accuracy.
    """
    X_S = np.asarray(X_S, dtype=np.float64)
    k = X_S.shape[1]
    if k == 0:
        return np.zeros((0, Y.shape[1]))
    K = X_S.T @ X_S + lam * np.eye(k)
    return np.linalg.solve(K, X_S.T @ np.asarray(Y, dtype=np.float64))


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
