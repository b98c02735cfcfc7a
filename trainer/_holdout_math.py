"""Leave-group-out (LGO) criterion of greedy RLS: the block hold-out identity on the caches.

Notation of :mod:`trainer._rls_math`: H = lam G = lam (X_S X_S^T + lam I)^{-1} (n x n, never
formed), R = H X, E = H Y, P = X^T E, sigma_i = x_i^T R_i. The rows come in groups Q (a
recording, a subject, a query). Refitting ridge without the rows Q and predicting them gives
the hold-out residuals (block hold-out identity; Pahikkala et al. 2010, publication I)

    Y_Q - X_{Q,S} W_{-Q} = (G_QQ)^{-1} (G Y)_Q = (H_QQ)^{-1} E_Q =: F_Q        (m_Q x t),

so LGO SSE = sum_Q ||F_Q||^2. Per group we keep B_Q = (H_QQ)^{-1} (m_Q x m_Q) and F_Q, and
for all rows of groups with m_Q >= 2 the cache U = blockdiag(B_Q) R (publication I's U).
A group of one row has B = 1/h_j and F = E_j / h_j: LOO is the special case of singleton
groups, whose rows are scored by :mod:`trainer._rls_math` unchanged.

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
groups of up to ``RECOMPUTE_U`` m_b rows, U_Q = B_Q R'_Q is recomputed instead (cheaper there).

Rows are permuted so that groups are contiguous and bucketed by size (:func:`group_layout`);
a bucket of g groups of m rows is then a (g, m, .) view. Every function is local to whole
groups and the criterion is a sum over groups, so groups can be spread over workers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _batched as bt
from . import _group_math as gm
from . import _rls_math as rm

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


@dataclass
class HoldoutCaches:
    """Caches of the rows in groups of >= 2: B (per bucket, (g, m, m)), U = blockdiag(B) R and
    the hold-out residuals F = blockdiag(B) E (rows ``layout.n_single`` onwards)."""

    layout: GroupLayout
    B: list
    U: np.ndarray
    F: np.ndarray


def init_holdout(layout: GroupLayout, R: np.ndarray, E: np.ndarray) -> HoldoutCaches:
    """Caches for S = {} (H = I): B_Q = I, U = R, F = E on the grouped rows."""
    n1 = layout.n_single
    B = [np.broadcast_to(np.eye(m), ((b - a) // m, m, m)).copy() for m, a, b in layout.buckets]
    return HoldoutCaches(layout, B, R[n1:].copy(), np.asarray(E[n1:], dtype=np.float64).copy())


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
    (:func:`~trainer._rls_math.scratch`): fresh multi-MB temporaries cost more in page faults
    than the arithmetic.
    """
    g, m, cols = R3.shape
    t = F3.shape[2]
    dtype = R3.dtype
    sums = bt.buffers("lgo-sums", dtype, *[(g, cols)] * 4)
    if m < t:
        s, uu, cross, vv = _expanded_terms(R3, U3, F3, Pt, sums)
    else:
        s, uu, cross, vv = sums
        Ft = F3.transpose(0, 2, 1)
        V, FU = bt.buffers("lgo-terms", dtype, (g, t, cols), (g, t, cols))
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
    Fp, N = bt.buffers("lgo-terms", R3.dtype, (g, m, cols), (g, m, cols))
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


def candidate_lgo_sse(R_h, hc: HoldoutCaches, P, sigma, lam, *, U=None,
                      row_block=ROW_BLOCK, col_block=COL_BLOCK):
    """LGO SSE over the grouped rows after adding each candidate column (d,).

    ``R_h`` holds the grouped rows of R (``U`` the same columns of hc.U; default hc.U), ``P``
    and ``sigma`` the candidates' rows. Identity: sum over chunks of whole groups of
    :func:`candidate_lgo_sse_partial`, plus sum_Q ||F_Q||^2. Chunks run on the trainer's threads.
    """
    U = hc.U if U is None else U
    d = R_h.shape[1]
    dtype = R_h.dtype
    w = (1.0 / (lam + np.maximum(sigma, 0.0))).astype(dtype)
    Pt = np.ascontiguousarray(np.asarray(P).T, dtype=dtype)
    F = hc.F.astype(dtype, copy=False)
    blocks = [slice(j, min(j + col_block, d)) for j in range(0, d, col_block)]

    def part(piece):
        m, a, b = piece
        R3, U3, F3 = _view(R_h, a, b, m), _view(U, a, b, m), _view(F, a, b, m)
        out = np.empty(d)
        for J in blocks:
            out[J] = candidate_lgo_sse_partial(R3[:, :, J], U3[:, :, J], F3, Pt[:, J], w[J], lam)
        return out

    total = np.full(d, float(holdout_sse_per_target(hc).sum()))
    for p in _run(part, _chunks(hc.layout, row_block)):
        total += p
    return total


def group_grams(R4, U4, F3, PJ, out):
    """The mb x mb Grams of candidate groups over the sample groups of one chunk.

    ``R4``, ``U4`` (g, m, mb, c): the candidate groups' columns V and W = B V, column position
    first; ``F3`` (g, m, t); ``PJ`` (t, mb, c). Writes into ``out`` (4, mb, mb, g, c), one
    contiguous-row (g, c) plane per entry: V^T W (= V^T B V), W^T W, Z Z^T and W^T F Z^T with
    Z = V^T F - P_J. Every entry is a sum over rows (einsums over (g, ., c) slices). The two
    target Grams come from :func:`_target_grams` (via Z, for m >= t) or
    :func:`_expanded_target_grams` (via F F^T, for m < t).
    """
    VW, WW = out[0], out[1]
    mb = R4.shape[2]
    if R4.shape[1] < F3.shape[2]:
        _expanded_target_grams(R4, U4, F3, PJ, out[2], out[3])
    else:
        _target_grams(R4, U4, F3, PJ, out[2], out[3])
    for a in range(mb):
        for b in range(a, mb):
            np.einsum("gmc,gmc->gc", R4[:, :, a], U4[:, :, b], out=VW[a, b])
            np.einsum("gmc,gmc->gc", U4[:, :, a], U4[:, :, b], out=WW[a, b])
            VW[b, a], WW[b, a] = VW[a, b], WW[a, b]


def _target_grams(R4, U4, F3, PJ, ZZ, YZ):
    """Z Z^T and W^T F Z^T from Z = V^T F - P_J and Y = W^T F (two batched products)."""
    g, m, mb, c = R4.shape
    t = F3.shape[2]
    Ft = F3.transpose(0, 2, 1)
    Z, Y = bt.buffers("lgo-group", R4.dtype, (g, t, mb, c), (g, t, mb, c))
    np.matmul(Ft, R4.reshape(g, m, mb * c), out=Z.reshape(g, t, mb * c))   # V^T F
    Z -= PJ.astype(Z.dtype, copy=False)                                      # Z = V^T F - P_J
    np.matmul(Ft, U4.reshape(g, m, mb * c), out=Y.reshape(g, t, mb * c))   # W^T F
    for a in range(mb):
        for b in range(mb):
            np.einsum("gtc,gtc->gc", Y[:, :, a], Z[:, :, b], out=YZ[a, b])
            if b >= a:
                np.einsum("gtc,gtc->gc", Z[:, :, a], Z[:, :, b], out=ZZ[a, b])
                ZZ[b, a] = ZZ[a, b]


def _expanded_target_grams(R4, U4, F3, PJ, ZZ, YZ):
    """The target Grams without (g, t, .) arrays, for groups of m < t rows.

    With M_F = F F^T (m x m per group) and Fp = F P_J^T (one GEMM):
    W^T F Z^T = W^T (M_F V - Fp) and Z Z^T = V^T (M_F V - 2 Fp) + P_J P_J^T up to its
    antisymmetric part, which the symmetric weights of :func:`group_lgo_increments` ignore.
    Cost 2 n mb c (m + t) flops and sums over m rows instead of t targets.
    """
    g, m, mb, c = R4.shape
    t = F3.shape[2]
    MF = np.einsum("gat,gbt->gab", F3, F3).astype(R4.dtype)
    Fp, N = bt.buffers("lgo-group", R4.dtype, (g, m, mb, c), (g, m, mb, c))
    np.matmul(F3.reshape(g * m, t), PJ.reshape(t, mb * c).astype(R4.dtype, copy=False),
              out=Fp.reshape(g * m, mb * c))
    np.matmul(MF, R4.reshape(g, m, mb * c), out=N.reshape(g, m, mb * c))
    N -= Fp                                                             # M_F V - Fp
    for a in range(mb):
        for b in range(mb):
            np.einsum("gmc,gmc->gc", U4[:, :, a], N[:, :, b], out=YZ[a, b])
    N -= Fp                                                             # M_F V - 2 Fp
    PP = np.einsum("tac,tbc->abc", PJ, PJ)
    for a in range(mb):
        for b in range(mb):
            np.einsum("gmc,gmc->gc", R4[:, :, a], N[:, :, b], out=ZZ[a, b])
            ZZ[a, b] += PP[a, b]


def group_lgo_increments(grams, K, lam):
    """Per candidate group, the sum over sample groups of the LGO SSE increment
    2 tr(Z^T M^{-1} W^T F) + tr(Z^T M^{-1} W^T W M^{-1} Z) (module notes), written as
    2 <M^{-1}, W^T F Z^T> + <M^{-1} W^T W, M^{-1} Z Z^T> so that the targets enter only through
    the Grams of :func:`group_grams` (``grams`` (4, mb, mb, g, c), overwritten); ``K``
    (mb, mb, c) = lam I + S_c. M = K - V^T W; M^{-1} by :func:`~trainer._batched.spd_inverse`.
    """
    VW, WW, ZZ, YZ = grams
    M_inv = bt.buffers("lgo-inverse", np.float64, VW.shape)[0]
    bt.spd_inverse(np.subtract(K[:, :, None], VW, out=VW), lam, out=M_inv)
    A = np.einsum("akgc,kbgc->abgc", M_inv, WW, out=WW)                 # M^{-1} W^T W
    C = np.einsum("akgc,kbgc->abgc", M_inv, ZZ, out=ZZ)                 # M^{-1} Z Z^T
    out = 2.0 * np.einsum("abgc,abgc->c", M_inv, YZ)
    out += np.einsum("abgc,bagc->c", A, C)
    return out


def pair_lgo_sse_partial(R_cols, E, H, EE, Tt, Pw, mu):
    """LGO SSE after adding each candidate group, over sample groups of two rows (one chunk).

    For m = 2 the block hold-out identity is evaluated in the 2 x 2 row space, as
    :func:`~trainer._group_math.group_loo_sse_partial` does for single rows: with the
    whitened columns V~ = V T (T^T K T = I, from
    :func:`~trainer._group_math.group_whitening`, which also gives P~ = T^T P_J with
    P~ P~^T = diag(mu)), adding the group J makes

        A = H_QQ - V~ V~^T,   b = E_Q - V~ P~,   F'_Q = A^{-1} b,
        ||F'_Q||^2 = <adj(A)^2, b b^T> / det(A)^2,
        (b b^T)_ij = E_i.E_j - V~_j . (P~ E_i) - V~_i . (P~ E_j) + sum_k mu_k V~_ik V~_jk.

    ``R_cols`` (rows x c*mb, rows in pair order), ``E`` (rows x t), ``H`` (g, 2, 2) = H_QQ,
    ``EE`` (g, 2, 2) = E_Q E_Q^T, ``Tt`` = T^T (c, mb, mb), ``Pw`` = P~ (c, mb, t), ``mu``
    (c, mb). Returns (sum over pairs of ||F'_Q||^2 (c,), bad (c,)); ``bad`` flags a candidate
    whose updated block is not positive definite on some pair (it scores inf). No U cache
    and no mb x mb algebra: O(rows c mb (mb + t)) like LOO.
    """
    rows = R_cols.shape[0]
    c, mb = Tt.shape[0], Tt.shape[1]
    g, t, dtype = rows // 2, E.shape[1], R_cols.dtype
    Rt, Z, QW, muZ = bt.buffers("lgo-pairs", dtype, *[(c, mb, 2, g)] * 4)
    np.copyto(Rt.reshape(c * mb, 2, g), R_cols.reshape(g, 2, c * mb).transpose(2, 1, 0))
    np.matmul(Tt.astype(dtype, copy=False), Rt.reshape(c, mb, rows),
              out=Z.reshape(c, mb, rows))                               # V~^T, row 0s then 1s
    Et = np.ascontiguousarray(E.reshape(g, 2, t).transpose(2, 1, 0), dtype=dtype)
    np.matmul(Pw.reshape(c * mb, t).astype(dtype, copy=False), Et.reshape(t, rows),
              out=QW.reshape(c * mb, rows))                             # P~ E^T
    np.multiply(Z, mu.astype(dtype, copy=False)[:, :, None, None], out=muZ)
    A00, A01, A11, b00, b01, b11, det, num, sq, tmp = bt.buffers("lgo-pairs-2", dtype,
                                                                 *[(c, g)] * 10)

    def dot(x, y, i, j, out):
        return np.einsum("ckg,ckg->cg", x[:, :, i], y[:, :, j], out=out)

    for A, (i, j) in ((A00, (0, 0)), (A01, (0, 1)), (A11, (1, 1))):
        np.subtract(H[:, i, j], dot(Z, Z, i, j, A), out=A)              # A = H_QQ - V~ V~^T
    for bb, (i, j) in ((b00, (0, 0)), (b11, (1, 1))):                   # b_i . b_i
        dot(muZ, Z, i, i, bb)
        dot(QW, Z, i, i, tmp)
        tmp *= 2.0
        bb -= tmp
        bb += EE[:, i, i]
    dot(muZ, Z, 0, 1, b01)                                              # b_0 . b_1
    b01 -= dot(QW, Z, 0, 1, tmp)
    b01 -= dot(QW, Z, 1, 0, tmp)
    b01 += EE[:, 0, 1]
    np.multiply(A01, A01, out=sq)
    np.multiply(A00, A11, out=det)
    det -= sq                                                           # det(A)
    bad = ~((A00 > 0) & (det > 0)).all(axis=1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        np.multiply(A11, A11, out=num)                                  # <adj(A)^2, b b^T>
        num += sq
        num *= b00
        np.multiply(A00, A00, out=tmp)
        tmp += sq
        tmp *= b11
        num += tmp
        A00 += A11
        A00 *= A01
        A00 *= b01
        A00 *= 2.0
        num -= A00
        det *= det
        num /= det
    return num.sum(axis=1, dtype=np.float64), bad


def group_lgo_sse(R_h, E_h, hc: HoldoutCaches, P, idx, S, lam, *, row_block=4 * ROW_BLOCK,
                  sub_block=ROW_BLOCK, col_block=2 * COL_BLOCK):
    """LGO SSE over the grouped rows (``R_h``, ``E_h``) after adding each candidate group
    ``idx[c]`` (c, mb), given its Gram ``S[c]`` = X_J^T R_J (c, mb, mb).

    Per chunk of ``row_block`` rows (whole groups): the Grams of :func:`group_grams` on
    sub-chunks of ``sub_block`` rows (gathered columns stay in cache), then the mb x mb algebra
    of :func:`group_lgo_increments` once on the whole chunk (fewer, larger numpy calls).
    Groups of two rows go through :func:`pair_lgo_sse_partial` instead (2 x 2 row space).
    """
    n_cand, mb = idx.shape
    K = (lam * np.eye(mb) + 0.5 * (S + S.transpose(0, 2, 1))).transpose(1, 2, 0)   # (mb, mb, c)
    PJ = np.asarray(P)[idx].transpose(2, 1, 0)                                      # (t, mb, c)
    chunk = max(1, col_block // mb)
    cand = [slice(c0, min(c0 + chunk, n_cand)) for c0 in range(0, n_cand, chunk)]
    F = hc.F.astype(R_h.dtype, copy=False)

    def part(piece):
        m, a, b = piece
        if m == 2:
            return pairs(a, b)
        g, sub = (b - a) // m, max(1, sub_block // m)
        out = np.empty(n_cand)
        for C in cand:
            c = C.stop - C.start
            grams = bt.buffers("lgo-grams", np.float64, (4, mb, mb, g, c))[0]
            for g0 in range(0, g, sub):
                s, e = a + g0 * m, min(a + (g0 + sub) * m, b)
                V, W = _gather(R_h, hc.U, s, e, m, idx[C])
                group_grams(V, W, _view(F, s, e, m), PJ[..., C], grams[:, :, :, g0:g0 + sub])
            out[C] = group_lgo_increments(grams, K[..., C], lam)
        return out

    if any(m == 2 for m, _, _ in hc.layout.buckets):
        T, Pw, mu = gm.group_whitening(np.asarray(S, dtype=np.float64), np.asarray(P)[idx], lam)
        Tt = np.ascontiguousarray(T.transpose(0, 2, 1))
        pair_B = dict(zip([a for m, a, _ in hc.layout.buckets], hc.B))

    def pairs(a, b):
        """Pairs a..b: sum of ||F'_Q||^2 - ||F_Q||^2 (the chunk's part of the increment)."""
        start = max(x for x in pair_B if x <= a)
        Bq = pair_B[start][(a - start) // 2:(b - start) // 2]
        det = Bq[:, 0, 0] * Bq[:, 1, 1] - Bq[:, 0, 1] ** 2                # H_QQ = B_Q^{-1}
        H = np.stack([Bq[:, 1, 1], -Bq[:, 0, 1], -Bq[:, 0, 1], Bq[:, 0, 0]], axis=1)
        H = (H / det[:, None]).reshape(-1, 2, 2)
        E3 = _view(np.asarray(E_h, dtype=np.float64), a, b, 2)
        EE = np.matmul(E3, E3.transpose(0, 2, 1))
        out, bad = np.empty(n_cand), np.zeros(n_cand, dtype=bool)
        for C in cand:
            out[C], bad[C] = pair_lgo_sse_partial(R_h[a:b][:, idx[C].ravel()],
                                                  E_h[a:b].astype(R_h.dtype, copy=False), H,
                                                  EE, Tt[C], Pw[C], mu[C])
        out -= float(np.sum(hc.F[a:b] ** 2))
        out[bad] = np.inf
        return out

    total = np.full(n_cand, float(holdout_sse_per_target(hc).sum()))
    for p in _run(part, _chunks(hc.layout, row_block)):
        total += p
    return total


def _gather(R_h, U, s, e, m, sel):
    """Columns ``sel`` (c, mb) of the grouped rows s..e of R and U as (g, m, mb, c) arrays,
    column position first. Consecutive columns (extractors stored side by side, the usual
    case) are a transposed copy into scratch buffers, 35% cheaper than a fancy-index gather."""
    c, mb = sel.shape
    R3, U3 = _view(R_h, s, e, m), _view(U, s, e, m)
    lo = int(sel[0, 0])
    if not np.array_equal(sel, lo + np.arange(c * mb).reshape(c, mb)):
        cols = sel.T.ravel()
        return (R3[:, :, cols].reshape(-1, m, mb, c), U3[:, :, cols].reshape(-1, m, mb, c))
    out = bt.buffers("lgo-gather", R3.dtype, *[(R3.shape[0], m, mb, c)] * 2)
    for A, dst in zip((R3, U3), out):
        np.copyto(dst, A[:, :, lo:lo + c * mb].reshape(-1, m, c, mb).transpose(0, 1, 3, 2))
    return out


def _run(func, items) -> list:
    """func over items, on the trainer's threads (BLAS single-threaded) when worthwhile;
    results in item order (deterministic sums)."""
    if len(items) > 1 and rm._WORKERS > 1:
        with rm._blas_controller().limit(limits=1, user_api="blas"):
            return list(rm._thread_pool().map(func, items))
    return [func(x) for x in items]


def holdout_save(hc: HoldoutCaches, R: np.ndarray, J) -> tuple:
    """Before adding the columns J: W = U[:, J] and the old R[:, J] on the grouped rows."""
    J = np.asarray(J, dtype=np.intp)
    return (np.asarray(hc.U[:, J], dtype=np.float64),
            np.asarray(R[hc.layout.n_single:, J], dtype=np.float64))


#: Groups of up to RECOMPUTE_U x (columns added) rows get U = B R' recomputed (2 m flops per
#: entry) instead of the rank-mb update (4 mb flops in four passes): measured faster up to
#: m ~ 20 mb at d = 400.
RECOMPUTE_U = 16


def holdout_add(hc: HoldoutCaches, R, E, saved, Rr, K_inv, lam, *, row_block=ROW_BLOCK):
    """Update B, U and F in place after the columns J were added to S (module notes).

    ``R``, ``E`` are the updated caches (block rows); ``saved`` is :func:`holdout_save`'s
    result; ``Rr`` = R^T X_J (d x mb, before the update) and ``K_inv`` = K^{-1} as returned by
    ``add_feature`` / ``add_group``. Per chunk of groups: M = K - V^T W, B += W M^{-1} W^T,
    F = B E, and U += W (M^{-1} W^T R' - K^{-1} Rr^T), or, for groups of at most
    ``RECOMPUTE_U`` mb rows, U = B R' (one batched product; cheaper there, and U carries no
    accumulated round-off). Cost O(n d min(m, mb) + n m (m + t)).
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
    M_inv = {}
    for (m, a, b), B in zip(hc.layout.buckets, hc.B):     # per-group algebra, whole buckets
        W, RJ = _view(W_all, a, b, m), _view(RJ_all, a, b, m)
        M = K[None] - bt.bmm(RJ.transpose(0, 2, 1), W)
        if mb == 1:
            Mi = 1.0 / np.maximum(M, lam)
        else:
            Mi = bt.spd_inverse(0.5 * (M + M.transpose(0, 2, 1)).transpose(1, 2, 0),
                             lam).transpose(2, 0, 1)
        B += bt.bmm(bt.bmm(W, Mi), W.transpose(0, 2, 1))
        E3 = _view(np.asarray(E_h[a:b], dtype=np.float64), 0, b - a, m)
        hc.F[a:b] = bt.bmm(B, E3).reshape(b - a, -1)
        M_inv[a] = (b, B, Mi)
    starts = sorted(M_inv)

    def update(piece):                                 # U on the rows of whole groups
        m, s, e = piece
        a = max(x for x in starts if x <= s)
        G = slice((s - a) // m, (e - a) // m)
        _, B, Mi = M_inv[a]
        R3, U3 = _view(R_h, s, e, m), _view(hc.U, s, e, m)
        if m <= RECOMPUTE_U * mb:                      # U = blockdiag(B) R' afresh
            np.matmul(B[G].astype(dtype), R3, out=U3)
        else:
            W = _view(W_all, s, e, m).astype(dtype)
            g, _, d = R3.shape
            WR, T, step = bt.buffers("lgo-update", dtype, (g, mb, d), (g, mb, d), (g, m, d))
            bt.bmm(Mi[G].astype(dtype), bt.bmm(W.transpose(0, 2, 1), R3, out=WR), out=T)
            T -= KRr                                   # M^{-1} W^T R' - K^{-1} Rr^T
            U3 += bt.bmm(W, T, out=step)

    _run(update, _chunks(hc.layout, row_block))
