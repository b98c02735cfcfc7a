"""Leave-group-out (LGO) criterion of greedy RLS: the block hold-out identity on the caches.

Notation of :mod:`sensorbudget.trainer.selection.rls_math`: H = lam G = lam (X_S X_S^T + lam I)^{-1} (n x n,
never formed), R = H X, E = H Y, P = X^T E, sigma_i = x_i^T R_i. The rows come in groups Q (a
recording, a subject, a query). Refitting ridge without the rows Q and predicting them gives
the hold-out residuals (block hold-out identity; Pahikkala et al. 2010, publication I)

    Y_Q - X_{Q,S} W_{-Q} = (G_QQ)^{-1} (G Y)_Q = (H_QQ)^{-1} E_Q =: F_Q        (m_Q x t),

so LGO SSE = sum_Q ||F_Q||^2. With an intercept refitted per fold, H is that of the centred
problem with the constant column added unpenalized first (H_QQ starts at I - 11^T/n,
:func:`init_holdout`; docs/method.md, "Intercept and scaling"). Per group we keep B_Q = (H_QQ)^{-1} (m_Q x m_Q) and F_Q, and
for all rows of groups with m_Q >= 2 the cache U = blockdiag(B_Q) R (publication I's U).
A group of one row has B = 1/h_j and F = E_j / h_j: LOO is the special case of singleton
groups, whose rows are scored by :mod:`sensorbudget.trainer.selection.rls_math` unchanged.

One feature i (w = 1/(lam + sigma_i), r = R_{Q,i}, u = U_{Q,i}, p = P_i): H_QQ changes by
-w r r^T, so (Sherman-Morrison) B_Q -> B_Q + c u u^T with s = r^T u, c = w / (1 - w s), and
E_Q -> E_Q - w r p^T. Collecting terms (w + c w s = c):

    F_Q -> F_Q + c u v^T,   v = F_Q^T r - p   (t,),
    ||F_Q'||^2 = ||F_Q||^2 + 2 c (F_Q^T u) . v + c^2 ||u||^2 ||v||^2.

Every term is a sum over the group's rows (s, ||u||^2, and the t-vectors F_Q^T r, F_Q^T u):
O(n t) per candidate, O(n d t) per step as for LOO (two batched products F_Q^T R_Q, F_Q^T U_Q).
A Schur complement gives 1 - w s >= lam w, so c is clipped there against round-off.

A block of m_b columns J (an extractor group, or the chosen move) with K = lam I + X_J^T R_J,
V = R_{Q,J}, W = U_{Q,J} = B_Q V and M_Q = K - V^T W (>= lam I, again a Schur complement):

    B_Q -> B_Q + W M_Q^{-1} W^T,   F_Q -> F_Q + W M_Q^{-1} Z_Q,   Z_Q = V^T F_Q - P_J,
    ||F_Q'||^2 = ||F_Q||^2 + 2 tr(Z^T M^{-1} W^T F_Q) + tr(Z^T M^{-1} W^T W M^{-1} Z),
    U_Q -> U_Q + W M_Q^{-1} (W^T R_Q - Rr^T) = U_Q + W (M_Q^{-1} W^T R'_Q - K^{-1} Rr^T)

with Rr = R^T X_J and R' the updated R (the last form lets the caller update R first). For
groups of up to ``RECOMPUTE_U`` m_b rows, U_Q = B_Q R'_Q is recomputed instead (cheaper there);
groups of up to ``SMALL_GROUP`` rows keep no U at all (formed from R where it is used).

Rows are permuted so that groups are contiguous and bucketed by size (:func:`group_layout`);
a bucket of g groups of m rows is then a (g, m, .) view. Every function is local to whole
groups and the criterion is a sum over groups, so groups can be spread over workers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import batched, rls_math

#: Rows per chunk of groups in the scoring pass, and columns per block.
ROW_BLOCK = 256
COL_BLOCK = 1024


@dataclass(frozen=True)
class GroupLayout:
    """Row order making groups contiguous: singleton rows first, then groups by size.

    ``order`` permutes the rows (stable: singletons keep their order, groups follow their first
    row); rows ``[0, n_single)`` are singleton groups; ``buckets`` lists (m, start, stop) with
    rows ``n_single + start .. n_single + stop`` holding (stop - start) / m groups of m rows.
    """

    order: np.ndarray
    n_single: int
    buckets: tuple
    n_groups: int


def group_layout(groups) -> GroupLayout:
    """The :class:`GroupLayout` of a vector of group ids (any sortable values)."""
    groups = np.asarray(groups)
    n = groups.shape[0]
    _, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    first = np.full(counts.size, n, dtype=np.intp)
    np.minimum.at(first, inverse, np.arange(n))
    size = counts[inverse]
    order = np.lexsort((np.arange(n), first[inverse], size))
    n_single = int(np.sum(counts == 1))
    buckets, pos = [], 0
    for m in np.unique(counts[counts > 1]):
        rows = int(m) * int(np.sum(counts == m))
        buckets.append((int(m), pos, pos + rows))
        pos += rows
    return GroupLayout(order, n_single, tuple(buckets), int(counts.size))


#: Groups of up to SMALL_GROUP rows keep no U cache: U_Q = B_Q R_Q is formed where it is used
#: (one batched product, 2 m flops per entry, no more than keeping a cache up to date costs),
#: which saves its memory and its update. Larger groups cache U (publication I).
SMALL_GROUP = 16


@dataclass
class HoldoutCaches:
    """Caches of the rows in groups of >= 2 (rows ``layout.n_single`` onwards): B (per bucket,
    (g, m, m)), the hold-out residuals F = blockdiag(B) E and, for the groups of more than
    ``SMALL_GROUP`` rows (grouped rows ``u_start`` onwards), U = blockdiag(B) R."""

    layout: GroupLayout
    B: list
    U: np.ndarray
    F: np.ndarray
    u_start: int

    def groups_of(self, s: int, e: int, m: int) -> tuple:
        """(bucket index, slice of its groups) of the grouped rows s..e (whole groups of m)."""
        for i, (bm, a, b) in enumerate(self.layout.buckets):
            if bm == m and a <= s < b:
                return i, slice((s - a) // m, (e - a) // m)
        raise IndexError(f"rows {s}..{e} are not whole groups of {m} rows")

    def B_rows(self, s: int, e: int, m: int) -> np.ndarray:
        """B of the groups in grouped rows s..e (whole groups of one bucket of size m)."""
        i, G = self.groups_of(s, e, m)
        return self.B[i][G]

    def times_B(self, s: int, e: int, m: int, A3: np.ndarray, tag: str) -> np.ndarray:
        """blockdiag(B) A on the grouped rows s..e: ``A3`` (g, m, ...) holds their rows of A;
        the product goes into a scratch buffer under ``tag``."""
        g = A3.shape[0]
        out = batched.buffers(tag, A3.dtype, A3.shape)[0]
        np.matmul(self.B_rows(s, e, m).astype(A3.dtype, copy=False), A3.reshape(g, m, -1),
                  out=out.reshape(g, m, -1))
        return out


def init_holdout(layout: GroupLayout, R: np.ndarray, E: np.ndarray,
                 offset: float = 0.0) -> HoldoutCaches:
    """Caches for S = {}: H_QQ = I - offset 11^T, so B_Q = I + 11^T offset / (1 - m offset)
    (Sherman-Morrison), U = B R (large groups) and F = B E on the grouped rows.

    ``offset`` is 1/n with an intercept refitted per fold (the constant column added
    unpenalized; :func:`sensorbudget.trainer.selection.caches.intercept_offset`), 0 without: then B_Q = I,
    U = R and F = E."""
    n1 = layout.n_single
    B = [np.broadcast_to(np.eye(m) + offset / (1.0 - m * offset), ((b - a) // m, m, m)).copy()
         for m, a, b in layout.buckets]
    u_start = next((a for m, a, _ in layout.buckets if m > SMALL_GROUP), R.shape[0] - n1)
    F = np.asarray(E[n1:], dtype=np.float64).copy()
    U = R[n1 + u_start:].copy()
    for m, a, b in layout.buckets if offset else ():     # B_Q A_Q = A_Q + c 1 (1^T A_Q)
        c = offset / (1.0 - m * offset)
        F3 = _view(F, a, b, m)
        F3 += c * F3.sum(axis=1, keepdims=True)
        if a >= u_start:
            U3 = _view(U, a - u_start, b - u_start, m)
            U3 += (c * U3.sum(axis=1, keepdims=True, dtype=np.float64)).astype(U.dtype)
    return HoldoutCaches(layout, B, U, F, u_start)


def u_rows(hc: HoldoutCaches, R_h, U_h, s: int, e: int, m: int, tag: str) -> np.ndarray:
    """U = blockdiag(B) R on the grouped rows s..e (whole groups of m) as (g, m, columns):
    ``R_h`` and ``U_h`` hold the same columns of the grouped rows of R and of the U cache.
    Small groups: formed from R into a scratch buffer under ``tag``; larger: a cache view."""
    if m > SMALL_GROUP:
        return _view(U_h, s - hc.u_start, e - hc.u_start, m)
    return hc.times_B(s, e, m, _view(R_h, s, e, m), tag)


def _view(A: np.ndarray, start: int, stop: int, m: int) -> np.ndarray:
    """Rows start..stop of A as (groups, m, columns)."""
    return A[start:stop].reshape((stop - start) // m, m, -1)


def _chunks(layout: GroupLayout, row_block: int):
    """(m, start, stop) pieces of whole groups of about ``row_block`` rows, bucket by bucket."""
    out = []
    for m, a, b in layout.buckets:
        step = max(m, (row_block // m) * m)
        out += [(m, s, min(s + step, b)) for s in range(a, b, step)]
    return out


def holdout_sse_per_target(hc: HoldoutCaches) -> np.ndarray:
    """sum_Q ||F_Q[:, q]||^2 for every target q (t,)."""
    return np.einsum("ij,ij->j", hc.F, hc.F)


def candidate_lgo_sse_partial(R3, U3, F3, Pt, w, lam):
    """Partial LGO SSE increments of single candidates over the groups of one chunk.

    ``R3``, ``U3`` (g, m, cols), ``F3`` (g, m, t), ``Pt`` = P^T of the columns (t, cols), ``w``
    (cols,). Returns sum_Q (2 c (F_Q^T u) . v + c^2 ||u||^2 ||v||^2) per column (module notes);
    the constant sum_Q ||F_Q||^2 is not included. Groups of m < t rows use the expanded form
    of :func:`_expanded_terms` (measured cheaper there, m = 2..41, t = 1..40; same values).
    All (g, cols) and (g, m, cols) intermediates live in per-thread scratch buffers
    (:func:`~sensorbudget.trainer.selection.rls_math.scratch`): fresh multi-MB temporaries cost more in page
    faults than the arithmetic.
    """
    g, m, cols = R3.shape
    t = F3.shape[2]
    dtype = R3.dtype
    sums = batched.buffers("lgo-sums", dtype, *[(g, cols)] * 4)
    if m < t:
        s, uu, cross, vv = _expanded_terms(R3, U3, F3, Pt, sums)
    else:
        s, uu, cross, vv = sums
        Ft = F3.transpose(0, 2, 1)
        V, FU = batched.buffers("lgo-terms", dtype, (g, t, cols), (g, t, cols))
        np.matmul(Ft, R3, out=V)                       # F_Q^T r           (g, t, cols)
        np.matmul(Ft, U3, out=FU)                      # F_Q^T u
        V -= Pt                                        # v = F^T r - p
        np.einsum("gtd,gtd->gd", FU, V, out=cross)
        np.einsum("gtd,gtd->gd", V, V, out=vv)
        np.einsum("gmd,gmd->gd", R3, U3, out=s)        # r^T B r
        np.einsum("gmd,gmd->gd", U3, U3, out=uu)       # ||u||^2
    c = s                                              # c = w / max(1 - w s, lam w), in place
    c *= -w
    c += 1.0
    np.maximum(c, lam * w, out=c)
    np.divide(w, c, out=c)
    uu *= vv
    uu *= c
    cross *= 2.0
    cross += uu
    cross *= c                                         # c (2 cross + c uu vv)
    return np.sum(cross, axis=0, dtype=np.float64)


def _expanded_terms(R3, U3, F3, Pt, out):
    """(s, ||u||^2, (F^T u) . v, ||v||^2) per group and column, for groups with few rows
    relative to the targets, written into ``out`` (four (g, cols) arrays).

    With M_Q = F_Q F_Q^T (m x m) and Fp = F P^T (one GEMM):
    (F^T u) . v = u^T M r - u^T Fp_i and ||v||^2 = r^T M r - 2 r^T Fp_i + ||p_i||^2, i.e.
    group sums of U o (N - Fp) and R o (N - 2 Fp) with N = blockdiag(M) R. Cost
    2 n cols (m + t) flops and a few element-wise passes; no (g, t, cols) arrays.
    """
    g, m, cols = R3.shape
    s, uu, cross, vv = out
    M = np.einsum("gat,gbt->gab", F3, F3).astype(R3.dtype)
    Fp, N = batched.buffers("lgo-terms", R3.dtype, (g, m, cols), (g, m, cols))
    np.matmul(F3.reshape(g * m, -1), Pt, out=Fp.reshape(g * m, cols))
    np.matmul(M, R3, out=N)
    N -= Fp
    np.einsum("gmd,gmd->gd", U3, N, out=cross)
    N -= Fp
    np.einsum("gmd,gmd->gd", R3, N, out=vv)
    vv += np.einsum("td,td->d", Pt, Pt)
    np.einsum("gmd,gmd->gd", R3, U3, out=s)
    np.einsum("gmd,gmd->gd", U3, U3, out=uu)
    return s, uu, cross, vv


def candidate_lgo_sse(R_h, hc: HoldoutCaches, P, sigma, lam, *, cols=None,
                      row_block=ROW_BLOCK, col_block=COL_BLOCK):
    """LGO SSE over the grouped rows after adding each candidate column (d,).

    ``R_h`` holds the grouped rows of R (all columns, or the columns ``cols``), ``P`` and
    ``sigma`` the candidates' rows. Identity: sum over chunks of whole groups of
    :func:`candidate_lgo_sse_partial`, plus sum_Q ||F_Q||^2. Chunks run on the trainer's threads.
    """
    U_h = hc.U if cols is None else hc.U[:, cols]
    d = R_h.shape[1]
    dtype = R_h.dtype
    w = (1.0 / (lam + np.maximum(sigma, 0.0))).astype(dtype)
    Pt = np.ascontiguousarray(np.asarray(P).T, dtype=dtype)
    F = hc.F.astype(dtype, copy=False)
    blocks = [slice(j, min(j + col_block, d)) for j in range(0, d, col_block)]

    def part(piece):
        m, a, b = piece
        R3, F3 = _view(R_h, a, b, m), _view(F, a, b, m)
        U3 = u_rows(hc, R_h, U_h, a, b, m, "lgo-u")
        out = np.empty(d)
        for J in blocks:
            out[J] = candidate_lgo_sse_partial(R3[:, :, J], U3[:, :, J], F3, Pt[:, J], w[J], lam)
        return out

    total = np.full(d, float(holdout_sse_per_target(hc).sum()))
    for p in _run(part, _chunks(hc.layout, row_block)):
        total += p
    return total


def _run(func, items) -> list:
    """func over items, on the trainer's threads (BLAS single-threaded) when worthwhile;
    results in item order (deterministic sums)."""
    if len(items) > 1 and rls_math._WORKERS > 1:
        with rls_math._blas_controller().limit(limits=1, user_api="blas"):
            return list(rls_math._thread_pool().map(func, items))
    return [func(x) for x in items]


def holdout_save(hc: HoldoutCaches, R: np.ndarray, J) -> tuple:
    """Before adding the columns J: W = U[:, J] and the old R[:, J] on the grouped rows."""
    J = np.asarray(J, dtype=np.intp)
    RJ = np.asarray(R[hc.layout.n_single:, J], dtype=np.float64)
    W = np.empty_like(RJ)
    for (m, a, b), B in zip(hc.layout.buckets, hc.B):
        if m <= SMALL_GROUP:
            np.matmul(B, _view(RJ, a, b, m), out=_view(W, a, b, m))
    W[hc.u_start:] = hc.U[:, J]
    return W, RJ


#: Groups of up to RECOMPUTE_U x (columns added) rows get U = B R' recomputed (2 m flops per
#: entry) instead of the rank-mb update (4 mb flops in four passes): measured faster up to
#: m ~ 20 mb at d = 400.
RECOMPUTE_U = 16


def holdout_add(hc: HoldoutCaches, R, E, saved, Rr, K_inv, lam, *, row_block=ROW_BLOCK):
    """Update B, U and F in place after the columns J were added to S (module notes).

    ``R``, ``E`` are the updated caches (block rows); ``saved`` is :func:`holdout_save`'s
    result; ``Rr`` = R^T X_J (d x mb, before the update) and ``K_inv`` = K^{-1} as returned by
    ``add_feature`` / ``add_group``. Per bucket: M = K - V^T W, B += W M^{-1} W^T, F = B E;
    then on the rows of the cached (large) groups U += W (M^{-1} W^T R' - K^{-1} Rr^T), or, for
    groups of at most ``RECOMPUTE_U`` mb rows, U = B R' (one batched product; cheaper there,
    and U carries no accumulated round-off). Cost O(n d min(m, mb) + n m (m + t)).
    """
    W_all, RJ_all = saved
    n1 = hc.layout.n_single
    K_inv = np.atleast_2d(K_inv)
    K = np.linalg.inv(K_inv)
    K = 0.5 * (K + K.T)
    mb = K.shape[0]
    dtype = hc.U.dtype
    KRr = (K_inv @ np.asarray(Rr, dtype=np.float64).T).astype(dtype)       # K^{-1} Rr^T
    R_h, E_h = R[n1:], E[n1:]
    M_inv = []
    for (m, a, b), B in zip(hc.layout.buckets, hc.B):     # per-group algebra, whole buckets
        W, RJ = _view(W_all, a, b, m), _view(RJ_all, a, b, m)
        M = K[None] - batched.bmm(RJ.transpose(0, 2, 1), W)
        if mb == 1:
            Mi = 1.0 / np.maximum(M, lam)
        else:
            Mi = batched.spd_inverse(0.5 * (M + M.transpose(0, 2, 1)).transpose(1, 2, 0),
                                lam).transpose(2, 0, 1)
        B += batched.bmm(batched.bmm(W, Mi), W.transpose(0, 2, 1))
        E3 = _view(np.asarray(E_h[a:b], dtype=np.float64), 0, b - a, m)
        hc.F[a:b] = batched.bmm(B, E3).reshape(b - a, -1)
        M_inv.append(Mi)

    def update(piece):                                 # U on the rows of whole groups
        m, s, e = piece
        i, G = hc.groups_of(s, e, m)
        R3, U3 = _view(R_h, s, e, m), _view(hc.U, s - hc.u_start, e - hc.u_start, m)
        if m <= RECOMPUTE_U * mb:                      # U = blockdiag(B) R' afresh
            np.matmul(hc.B[i][G].astype(dtype), R3, out=U3)
        else:
            W = _view(W_all, s, e, m).astype(dtype)
            g, _, d = R3.shape
            WR, T, step = batched.buffers("lgo-update", dtype, (g, mb, d), (g, mb, d), (g, m, d))
            batched.bmm(M_inv[i][G].astype(dtype),
                        batched.bmm(W.transpose(0, 2, 1), R3, out=WR), out=T)
            T -= KRr                                   # M^{-1} W^T R' - K^{-1} Rr^T
            U3 += batched.bmm(W, T, out=step)

    _run(update, [p for p in _chunks(hc.layout, row_block) if p[0] > SMALL_GROUP])
