"""Greedy RLS over candidate *groups* of features: block (rank-m) Woodbury step math.

Same lam-scaled, row-local caches as :mod:`sensorbudget.trainer.selection.rls_math` (R = lam G X, E = lam G Y,
h = lam diag G, P = X^T E). A candidate group g is a set J of m feature columns X_g = X[:, J]
(an extractor yielding m features). Adding it to S changes G by the Woodbury identity

    G' = G - G X_g (I_m + X_g^T G X_g)^{-1} X_g^T G,

which, with S_g = X_g^T R_g (m x m, the within-group Gram of X against R; a sum over rows) and
K_g = lam I_m + S_g, reads in the scaled caches (``docs/method.md``, "Groups of features")

    R' = R - R_g K_g^{-1} (X_g^T R),   E' = E - R_g K_g^{-1} P_J,
    h' = h - rowsum((R_g K_g^{-1}) o R_g).

Scoring every group at once. Take T_g (m x m) with T_g^T K_g T_g = I and
T_g^T P_J P_J^T T_g = diag(mu_g) (a generalized eigenbasis of the pair K_g, P_J P_J^T), and
B_g = T_g^T P_J (m x t). Then R_g K_g^{-1} = Z_g T_g^{-1} with Z_g = R_g T_g (n x m), so
E'_j = E_j - Z_gj B_g and ||B_g^T z||^2 = sum_k mu_gk z_k^2, and the LOO SSE after adding g is

    e_g = sum_j (a2_j - 2 sum_k Z_gjk (E_j . B_gk) + sum_k mu_gk Z_gjk^2) / (h_j - sum_k Z_gjk^2)^2

with a2_j = ||E_j||^2. Per group this is O(n m (m + t)) flops (the m x m transform and the
n x m x t product E B_g^T); a step over D columns in groups of m costs about a singleton step
over D columns plus n D m flops. The m x m matrices (S_g, T_g, B_g, mu_g) are global (sums
over rows); Z_g and the partial sums are row-local, so rows can be partitioned.
"""

from __future__ import annotations

import numpy as np

from . import rls_math

#: Rows per block of the element-wise scoring pass and max columns (groups x m) per block.
ROW_BLOCK = 1024
COL_BLOCK = 512


def block_gram_partial(X_cols: np.ndarray, R_cols: np.ndarray, m: int) -> np.ndarray:
    """Within-group Grams S_g = X_g^T R_g over the given rows, for groups of m columns.

    ``X_cols`` and ``R_cols`` (rows x g*m) hold the groups' columns side by side (group g is
    columns g*m .. g*m+m-1). Returns (g, m, m); sums of partial results over a row partition
    give the full Grams. Cost 2 rows g m^2 flops.
    """
    rows = X_cols.shape[0]
    g = X_cols.shape[1] // m
    Xt = np.ascontiguousarray(X_cols.T, dtype=np.float64).reshape(g, m, rows)
    Rt = np.ascontiguousarray(R_cols.T, dtype=np.float64).reshape(g, m, rows)
    return np.matmul(Xt, Rt.transpose(0, 2, 1))


def _inverse_sqrt(K: np.ndarray, floor: float) -> np.ndarray:
    """W with W^T K W = I for symmetric K >= floor I (batched); eigenvalues clipped at floor."""
    vals, vecs = np.linalg.eigh(K)
    return vecs / np.sqrt(np.maximum(vals, floor))[..., None, :]


def group_whitening(S: np.ndarray, PJ: np.ndarray, lam: float):
    """(T, B, mu) of the scoring identity for every group (batched, float64).

    K = lam I + S (S symmetrized), W = K^{-1/2}, C = W^T P_J, C C^T = U diag(mu) U^T; then
    T = W U satisfies T^T K T = I and T^T P_J P_J^T T = diag(mu), and B = T^T P_J = U^T C.
    ``S`` is (g, m, m), ``PJ`` (g, m, t). K >= lam I mathematically; eigenvalues are clipped
    there against round-off.
    """
    m = S.shape[-1]
    K = lam * np.eye(m) + 0.5 * (S + S.transpose(0, 2, 1))
    W = _inverse_sqrt(K, lam)
    C = np.matmul(W.transpose(0, 2, 1), PJ)
    mu, U = np.linalg.eigh(np.matmul(C, C.transpose(0, 2, 1)))
    T = np.matmul(W, U)
    B = np.matmul(U.transpose(0, 2, 1), C)
    return T, B, np.maximum(mu, 0.0)


def group_loo_sse_partial(R_cols, E, h, Tt, B, mu, m):
    """Partial (over the given rows) LOO SSE after adding each group (see the module notes).

    ``R_cols`` (rows x g*m): the groups' columns of R side by side; ``E`` (rows x t), ``h``;
    ``Tt`` = T^T (g, m, m), ``B`` (g, m, t), ``mu`` (g, m) from :func:`group_whitening`.
    Returns (partial SSE (g,), bad (g,)) where ``bad`` flags groups whose updated 1 - leverage
    is not positive on some row (such a group scores inf).
    """
    rows = R_cols.shape[0]
    g = R_cols.shape[1] // m
    dtype = R_cols.dtype
    Rt = np.ascontiguousarray(R_cols.T).reshape(g, m, rows)
    Z = np.matmul(Tt.astype(dtype, copy=False), Rt)                  # Z_g^T   (g, m, rows)
    QW = np.matmul(B.astype(dtype, copy=False), E.T)                 # B_g E^T (g, m, rows)
    a2 = np.einsum("ij,ij->i", E, E)
    QW *= Z
    cross = QW.sum(axis=1)                                           # sum_k Z (E . B_k)
    Z *= Z
    lev = Z.sum(axis=1)                                              # sum_k Z^2
    Z *= mu.astype(dtype, copy=False)[:, :, None]
    quad = Z.sum(axis=1)                                             # sum_k mu_k Z^2
    den = h[None, :] - lev
    bad = ~(den > 0).all(axis=1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        num = a2[None, :] - 2.0 * cross + quad
        den *= den
        num /= den
        part = num.sum(axis=1, dtype=np.float64)
    return part, bad


def group_loo_sse(R, E, h, P, idx, S, lam, *, row_block=ROW_BLOCK, col_block=COL_BLOCK):
    """LOO SSE after adding each group ``idx[g]`` (g, m) given its Gram ``S[g]`` (g, m, m).

    Identity: e = sum over row blocks of :func:`group_loo_sse_partial`, with the global terms
    from :func:`group_whitening`. Groups are processed in chunks of ``col_block // m``.
    """
    n = R.shape[0]
    g, m = idx.shape
    T, B, mu = group_whitening(S, P[idx], lam)
    Tt = np.ascontiguousarray(T.transpose(0, 2, 1))
    chunk = max(1, col_block // m)
    chunks = [slice(g0, min(g0 + chunk, g)) for g0 in range(0, g, chunk)]
    blocks = [slice(i0, min(i0 + row_block, n)) for i0 in range(0, n, row_block)]

    def part(G):
        cols = idx[G].ravel()
        total, bad = np.zeros(G.stop - G.start), np.zeros(G.stop - G.start, dtype=bool)
        for rows in blocks:                      # fixed order: deterministic sums
            p, b = group_loo_sse_partial(R[rows][:, cols], E[rows], h[rows], Tt[G], B[G],
                                         mu[G], m)
            total += p
            bad |= b
        total[bad] = np.inf
        return total

    workers = getattr(rls_math, "_WORKERS", 1)
    if len(chunks) > 1 and workers > 1:
        # Group chunks on the trainer's worker threads (numpy releases the GIL), BLAS serial.
        with rls_math._blas_controller().limit(limits=1, user_api="blas"):
            parts = list(rls_math._thread_pool().map(part, chunks))
    else:
        parts = [part(G) for G in chunks]
    return np.concatenate(parts)


def block_gram(X_cols, R, idx, *, row_block=ROW_BLOCK):
    """S_g = X_g^T R_g for groups ``idx`` (g, m); ``X_cols`` holds X[:, idx.ravel()]."""
    g, m = idx.shape
    cols = idx.ravel()
    S = np.zeros((g, m, m))
    for i0 in range(0, R.shape[0], row_block):
        rows = slice(i0, min(i0 + row_block, R.shape[0]))
        S += block_gram_partial(X_cols[rows], R[rows][:, cols], m)
    return S


def downdate_grams(S: np.ndarray, idx: np.ndarray, Rr: np.ndarray, K_inv: np.ndarray) -> None:
    """After adding block b: S_g <- S_g - Rr_J K_b^{-1} Rr_J^T for every cached group (in place).

    ``Rr`` = R^T X_b (d x m_b, before the update), ``K_inv`` = (lam I + X_b^T R_b)^{-1}; this
    is X_g^T R'_g by the update of R (X_J^T R_b = Rr_J since X^T R is symmetric).
    """
    A = Rr[idx]                                          # (g, m, m_b)
    S -= np.matmul(np.matmul(A, K_inv), A.transpose(0, 2, 1))


def add_group(R, E, h, P, sigma, X_b, J, lam, *, row_block=ROW_BLOCK):
    """Add the block ``J`` (columns ``X_b`` = X[:, J], n x m) to S, updating caches in place.

    With Rr = R^T X_b (d x m, a sum over rows), K = lam I + Rr_J and V = R_J K^{-1}:

        R <- R - V Rr^T,  E <- E - V P_J,  h <- h - rowsum(V o R_J),
        P <- P - Rr K^{-1} P_J,  sigma <- sigma - rowsum((Rr K^{-1}) o Rr),

    (X^T R_J = Rr, so X is never needed beyond X_b). Returns (Rr, K^{-1}) for
    :func:`downdate_grams`. Cost O(n d m + n t m + d m^2). Clipping as in ``add_feature``.
    Split for row partitions: Rr (:func:`block_products`) is a sum over rows, then
    :func:`add_group_sums` (global P, sigma) and :func:`add_group_rows` (row-local R, E, h).
    """
    Rr = block_products(R, X_b)
    K_inv, PJ = add_group_sums(P, sigma, Rr, J, lam)
    add_group_rows(R, E, h, Rr, K_inv, J, PJ, row_block=row_block)
    return Rr, K_inv


def block_products(R, X_b) -> np.ndarray:
    """Rr = R^T X_b (d x m, float64): a sum over rows."""
    return np.asarray(R.T @ X_b, dtype=np.float64)


def add_group_sums(P, sigma, Rr, J, lam):
    """The global part of :func:`add_group` (in place) given Rr summed over all rows:
    P <- P - Rr K^{-1} P_J, sigma <- sigma - rowsum((Rr K^{-1}) o Rr). Returns (K^{-1}, old P_J)."""
    m = len(J)
    K = lam * np.eye(m) + 0.5 * (Rr[J] + Rr[J].T)
    W = _inverse_sqrt(K[None], lam)[0]
    K_inv = W @ W.T
    PJ = P[J].copy()
    RrK = Rr @ K_inv
    P -= RrK @ PJ
    sigma -= np.einsum("ij,ij->i", RrK, Rr)
    np.maximum(sigma, 0.0, out=sigma)
    return K_inv, PJ


def add_group_rows(R, E, h, Rr, K_inv, J, PJ, *, row_block=ROW_BLOCK):
    """The row-local part of :func:`add_group` on any subset of rows (in place; h clipped > 0):
    V = R_J K^{-1}, R <- R - V Rr^T, E <- E - V P_J, h <- h - rowsum(V o R_J)."""
    V = (R[:, J] @ K_inv).astype(R.dtype)
    RJ = R[:, J].copy()
    RrT = Rr.T.astype(R.dtype)
    for i0 in range(0, R.shape[0], row_block):
        rows = slice(i0, min(i0 + row_block, R.shape[0]))
        R[rows] -= V[rows] @ RrT
    E -= (V @ PJ).astype(E.dtype, copy=False)
    h -= np.einsum("ij,ij->i", V, RJ).astype(h.dtype, copy=False)
    np.maximum(h, np.finfo(h.dtype).tiny, out=h)
