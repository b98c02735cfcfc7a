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
can be partitioned (:mod:`sensorbudget.trainer.distributed.row_store` sums the partial results of row
partitions).
"""

from __future__ import annotations

import contextlib
import functools
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from threadpoolctl import ThreadpoolController

from .blas_rows import rank_one_update, scratch  # noqa: F401  (re-exported)
from .lam_curve import loo_sse_lambda_curve, ridge_weights  # noqa: F401  (re-exported)

#: Rows/columns per block of the element-wise scoring pass (keeps temporaries cache-sized).
ROW_BLOCK = 256
COL_BLOCK = 2048
#: Entries of R per task of the scoring pass when its row block is chosen from the shape
#: (rows = BLOCK_ENTRIES // min(d, COL_BLOCK)); whole rows of R (d <= COL_BLOCK) keep every
#: operand contiguous, and with many targets the GEMM of a tall block runs near BLAS peak.
BLOCK_ENTRIES = 1 << 19
#: Entries per element-wise sub-block of the scoring pass (3 scratch arrays of 1 MiB), and the
#: target count from which the GEMM runs once per task (measured on 2 cores: 13-19 % faster
#: per step than 256 x 1024 blocks without sub-blocks; 2^15 fits L2 but loses to call overhead).
SUB_ENTRIES = 1 << 17
WIDE_T = 64
#: Rows per block of the light passes that sum over rows (fixed by the shape, not by the
#: thread count, so every sum has the same order on every machine).
UPDATE_ROWS = 4 * ROW_BLOCK
#: Light passes over fewer entries than this stay on the calling thread (handing work to
#: threads costs about 0.1 ms on a busy machine; a 2000 x 1000 rank-one update takes 0.7 ms).
PARALLEL_ENTRIES = 1 << 22


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


def initial_rows(R: np.ndarray, Y: np.ndarray, y_mean=None):
    """The row-local caches for S = {}: E = Y - y_mean (computed in float64 from a float ``Y``,
    stored in a new C-ordered array of R's dtype; no other n x t copy) and h = 1."""
    E = np.empty(Y.shape, dtype=R.dtype)
    np.subtract(Y, 0.0 if y_mean is None else y_mean, out=E, dtype=np.result_type(Y, 1.0))
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


def loo_sse_per_target(E: np.ndarray, h: np.ndarray, *, row_block=UPDATE_ROWS) -> np.ndarray:
    """LOO SSE of each target: sum_j (E_jq / h_j)^2 = ((E o E)^T w)_q with w_j = 1 / h_j^2 (t,).

    One read of E in row blocks (a GEMV per block on a reused scratch square), no n x t
    temporary: with many labels this pass runs every step. Sums in float64.
    """
    return loo_sse_terms(E, h, row_block=row_block)[0]


def loo_sse_terms(E: np.ndarray, h: np.ndarray, *, row_block=UPDATE_ROWS):
    """(LOO SSE per target (t,), a2) with a2_j = ||E_j||^2 (rows,) from the same squares.

    Per target: sum_j (E_jq / h_j)^2 = ((E o E)^T w)_q, w_j = 1 / h_j^2; a2 = (E o E) 1 is
    the row term of :func:`candidate_loo_sse_partial`, so the next scoring pass does not read
    E again. Row blocks on the worker threads, partial sums added in row order in float64;
    within a block the squares and sums are in E's dtype (float32 caches: relative error about
    1e-6, 3x faster than converting every square to float64).
    """
    n, t = E.shape
    a2 = np.empty(n, dtype=E.dtype)

    def part(rows):
        block = E[rows]
        buf = scratch(1, block.size, E.dtype, tag="sse")[0]
        square = buf[:block.size].reshape(block.shape)
        np.multiply(block, block, out=square)
        np.sum(square, axis=1, out=a2[rows])
        w = np.square(1.0 / np.asarray(h[rows], dtype=np.float64)).astype(E.dtype, copy=False)
        return np.asarray(w @ square, dtype=np.float64)

    out = np.zeros(t, dtype=np.float64)
    for p in row_map(part, n, row_block, chunked=True, parallel=n * t >= PARALLEL_ENTRIES):
        out += p                                # fixed order: deterministic sums
    return out, a2


def candidate_loo_sse_partial(R, E, h, Pt, w, p2, *, col_block=COL_BLOCK, a2=None, Q=None):
    """Partial (over the given rows) LOO SSE of the model after adding each single candidate.

    Sherman-Morrison with w_i = 1 / (lam + sigma_i): adding feature i changes
    E -> E - w_i R_i P_i^T and h -> h - w_i R_i o R_i, hence, with Q = E P^T (n x d),
    a2_j = sum_q E_jq^2, p2_i = sum_q P_iq^2 and z_ji = w_i R_ji^2,

        e_i = sum_j (a2_j - 2 w_i R_ji Q_ji + z_ji w_i p2_i) / (h_j - z_ji)^2.

    ``R``, ``E``, ``h`` may hold any subset of the rows; ``Pt`` = P^T (t x d), ``w`` and ``p2``
    are global. The full e is the sum of the partial results over a row partition. Cost:
    2 rows d t flops (the GEMM for -2 w_i Q_ji, the factor folded into P) plus one element-wise
    pass in sub-blocks of :data:`SUB_ENTRIES` (cache-sized scratch, :func:`scratch`, reused
    across calls); with many targets (t >= :data:`WIDE_T`) the GEMM runs once over all the
    rows. A candidate whose updated 1 - leverage is not positive scores
    inf. ``a2`` (rows,): the row norms ||E_j||^2 when known (:func:`loo_sse_terms`). ``Q``
    (rows x d): E P^T when kept (:mod:`sensorbudget.trainer.selection.wide_rows`); no GEMM is then run.
    Each sub-block's column sums are taken in the caches' dtype and added in float64.
    """
    rows, d = R.shape
    a2 = (np.einsum("ij,ij->i", E, E) if a2 is None else a2)[:, None]
    w2 = -2.0 * w
    Pw = None if Q is not None else Pt * w2    # folds -2 w_i into the GEMM
    wp2 = w * p2
    out = np.zeros(d, dtype=np.float64)
    dtype, cols = np.result_type(R, E, Pt), min(col_block, d)
    sub = min(rows, max(8, SUB_ENTRIES // max(cols, 1)))
    wide = Q is None and E.shape[1] >= WIDE_T and sub < rows
    G, Z, T = scratch(3, max(sub, rows if wide else 0) * cols, dtype, tag="score")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for j0 in range(0, d, col_block):
            J = slice(j0, min(j0 + col_block, d))
            c = J.stop - j0
            if wide:
                np.matmul(E, Pw[:, J], out=G[:rows * c].reshape(rows, c))
            bad = np.zeros(c, dtype=bool)
            for i0 in range(0, rows, sub):
                S = slice(i0, min(i0 + sub, rows))
                m = S.stop - i0
                num = G[i0 * c:S.stop * c] if wide else G[:m * c]
                if Q is not None:
                    np.multiply(Q[S, J], w2[J], out=num.reshape(m, c))
                elif not wide:
                    np.matmul(E[S], Pw[:, J], out=num.reshape(m, c))
                bad |= _score_rows(num.reshape(m, c), R[S, J], w[J], wp2[J], a2[S], h[S, None],
                                   Z[:m * c].reshape(m, c), T[:m * c].reshape(m, c), out[J])
            out[J][bad] = np.inf
    return out


def _score_rows(num, RJ, w, wp2, a2, hcol, Z, T, acc):
    """One L2-sized sub-block of :func:`candidate_loo_sse_partial`: ``num`` holds -2 w_i Q_ji;
    adds sum_j of the terms to ``acc`` and returns the columns whose 1 - leverage is <= 0."""
    num *= RJ                              # -2 w_i R_ji Q_ji
    np.multiply(RJ, w, out=Z)
    Z *= RJ                                # z_ji = w_i R_ji^2
    np.multiply(Z, wp2, out=T)
    num += T
    num += a2                              # the squared norm of the updated residual row
    np.subtract(hcol, Z, out=Z)            # h_j - z_ji
    bad = Z.min(axis=0) <= 0
    Z *= Z                                 # one division (the slow operation) per entry
    num /= Z
    acc += num.sum(axis=0)                 # in the caches' dtype per sub-block, then float64
    return bad


def scoring_terms(P, sigma, lam, dtype):
    """Global terms of the candidate scores: P^T, w = 1 / (lam + sigma), p2_i = ||P_i||^2."""
    w = (1.0 / (lam + np.maximum(sigma, 0.0))).astype(dtype)
    p2 = np.einsum("ij,ij->i", P, P).astype(dtype)
    return np.ascontiguousarray(P.T, dtype=dtype), w, p2


def candidate_loo_sse(R, E, h, P, sigma, lam, *, row_block=None, col_block=COL_BLOCK, a2=None,
                      Q=None):
    """LOO SSE after adding each candidate, as the sum of partial scores over row blocks.

    Identity: e = sum over row blocks B of ``candidate_loo_sse_partial(R_B, E_B, h_B, ...)``.
    ``row_block`` None: :data:`BLOCK_ENTRIES` // min(d, ``col_block``) rows. ``a2``, ``Q``: see
    :func:`candidate_loo_sse_partial`.
    """
    n, d = R.shape
    Pt, w, p2 = scoring_terms(P, sigma, lam, R.dtype)
    if row_block is None:
        row_block = max(16, BLOCK_ENTRIES // max(1, min(d, col_block)))

    def part(rows):
        return candidate_loo_sse_partial(R[rows], E[rows], h[rows], Pt, w, p2,
                                         col_block=col_block,
                                         a2=None if a2 is None else a2[rows],
                                         Q=None if Q is None else Q[rows])

    parts = row_map(part, n, row_block)
    total = np.zeros(d, dtype=np.float64)
    for p in parts:                              # fixed order: deterministic sums
        total += p
    return total


_WORKERS = min(4, os.cpu_count() or 1)


def row_map(fn, n: int, row_block: int, *, chunked: bool = False, parallel: bool = True) -> list:
    """[fn(rows) for the row blocks slice(i0, i0 + row_block) of n rows], in row order; on the
    worker threads when ``parallel`` and there are several blocks (numpy releases the GIL),
    with BLAS single-threaded meanwhile. ``chunked``: one task per worker thread, each running
    its contiguous share of the blocks in order (for light per-block work: a task costs about
    0.1 ms to hand over on a busy machine); the results are the same."""
    blocks = [slice(i0, min(i0 + row_block, n)) for i0 in range(0, n, row_block)] or [slice(0, 0)]
    if len(blocks) <= 1 or _WORKERS <= 1 or not parallel:
        return [fn(rows) for rows in blocks]
    with single_threaded_blas():
        if not chunked:
            return list(_thread_pool().map(fn, blocks))
        share = -(-len(blocks) // _WORKERS)
        chunks = [blocks[i:i + share] for i in range(0, len(blocks), share)]
        done = _thread_pool().map(lambda chunk: [fn(rows) for rows in chunk], chunks)
        return [r for chunk in done for r in chunk]


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
    """r = R^T x_b (a sum over rows): r_i = lam x_b^T G x_i, symmetric in (b, i).

    GEMVs over row blocks of :data:`UPDATE_ROWS` (on the worker threads from
    :data:`PARALLEL_ENTRIES`: numpy releases the GIL), added in row order.
    """
    n, d = R.shape
    parts = row_map(lambda rows: R[rows].T @ x_b[rows], n, UPDATE_ROWS, chunked=True,
                    parallel=n * d >= PARALLEL_ENTRIES)
    r = parts[0]
    for p in parts[1:]:
        r += p
    return r


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
    E <- E - R_b P_b^T / den, h <- h - R_b o R_b / den (in place; h clipped > 0).

    The rank-one updates stay on this thread: scipy's BLAS wrappers hold the GIL (row blocks on
    the worker threads run one at a time), and lending BLAS a second thread leaves it spinning
    into the next scoring pass (measured: whole runs 10 % slower)."""
    Rb = R[:, b].copy()
    rank_one_update(R, -1.0 / den, Rb, r)
    rank_one_update(E, -1.0 / den, Rb, Pb)
    h -= (Rb * Rb / den).astype(h.dtype, copy=False)
    np.maximum(h, np.finfo(h.dtype).tiny, out=h)
