"""Leave-group-out scores of block moves (an extractor's m_b columns at once).

The identities are those of :mod:`sensorbudget.trainer.selection.holdout_math` (module notes: M_Q = K - V^T W,
Z_Q = V^T F_Q - P_J, the increment 2 tr(Z^T M^{-1} W^T F) + tr(Z^T M^{-1} W^T W M^{-1} Z)).
Here they are evaluated through mb x mb Grams summed over each group's rows
(:func:`group_grams`, :func:`group_lgo_increments`), except for groups of two rows, which use
the 2 x 2 row-space form of :func:`pair_lgo_sse_partial`.
"""

from __future__ import annotations

import numpy as np

from . import batched, group_math
from .holdout_math import (
    COL_BLOCK,
    ROW_BLOCK,
    SMALL_GROUP,
    HoldoutCaches,
    _chunks,
    _run,
    _view,
    holdout_sse_per_target,
)


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
    Z, Y = batched.buffers("lgo-group", R4.dtype, (g, t, mb, c), (g, t, mb, c))
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
    Fp, N = batched.buffers("lgo-group", R4.dtype, (g, m, mb, c), (g, m, mb, c))
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
    (mb, mb, c) = lam I + S_c. M = K - V^T W; M^{-1} by
    :func:`~sensorbudget.trainer.selection.batched.spd_inverse`.
    """
    VW, WW, ZZ, YZ = grams
    M_inv = batched.buffers("lgo-inverse", np.float64, VW.shape)[0]
    batched.spd_inverse(np.subtract(K[:, :, None], VW, out=VW), lam, out=M_inv)
    A = np.einsum("akgc,kbgc->abgc", M_inv, WW, out=WW)                 # M^{-1} W^T W
    C = np.einsum("akgc,kbgc->abgc", M_inv, ZZ, out=ZZ)                 # M^{-1} Z Z^T
    out = 2.0 * np.einsum("abgc,abgc->c", M_inv, YZ)
    out += np.einsum("abgc,bagc->c", A, C)
    return out


def pair_lgo_sse_partial(R_cols, E, H, EE, Tt, Pw, mu):
    """LGO SSE after adding each candidate group, over sample groups of two rows (one chunk).

    For m = 2 the block hold-out identity is evaluated in the 2 x 2 row space, as
    :func:`~sensorbudget.trainer.selection.group_math.group_loo_sse_partial` does for single rows: with the
    whitened columns V~ = V T (T^T K T = I, from
    :func:`~sensorbudget.trainer.selection.group_math.group_whitening`, which also gives P~ = T^T P_J with
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
    Rt, Z, QW, muZ = batched.buffers("lgo-pairs", dtype, *[(c, mb, 2, g)] * 4)
    np.copyto(Rt.reshape(c * mb, 2, g), R_cols.reshape(g, 2, c * mb).transpose(2, 1, 0))
    np.matmul(Tt.astype(dtype, copy=False), Rt.reshape(c, mb, rows),
              out=Z.reshape(c, mb, rows))                               # V~^T, row 0s then 1s
    Et = np.ascontiguousarray(E.reshape(g, 2, t).transpose(2, 1, 0), dtype=dtype)
    np.matmul(Pw.reshape(c * mb, t).astype(dtype, copy=False), Et.reshape(t, rows),
              out=QW.reshape(c * mb, rows))                             # P~ E^T
    np.multiply(Z, mu.astype(dtype, copy=False)[:, :, None, None], out=muZ)
    A00, A01, A11, b00, b01, b11, det, num, sq, tmp = batched.buffers("lgo-pairs-2", dtype,
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
    if any(m == 2 for m, _, _ in hc.layout.buckets):
        T, Pw, mu = group_math.group_whitening(np.asarray(S, dtype=np.float64),
                                               np.asarray(P)[idx], lam)
        Tt = np.ascontiguousarray(T.transpose(0, 2, 1))

    def pairs(a, b):
        """Pairs a..b: sum of ||F'_Q||^2 - ||F_Q||^2 (the chunk's part of the increment)."""
        Bq = hc.B_rows(a, b, 2)
        det = Bq[:, 0, 0] * Bq[:, 1, 1] - Bq[:, 0, 1] ** 2                # H_QQ = B_Q^{-1}
        H = np.stack([Bq[:, 1, 1], -Bq[:, 0, 1], -Bq[:, 0, 1], Bq[:, 0, 0]], axis=1)
        H = (H / det[:, None]).reshape(-1, 2, 2)
        E3 = _view(np.asarray(E_h[a:b], dtype=np.float64), 0, b - a, 2)
        EE = np.matmul(E3, E3.transpose(0, 2, 1))
        out, bad = np.empty(n_cand), np.zeros(n_cand, dtype=bool)
        for C in cand:
            out[C], bad[C] = pair_lgo_sse_partial(R_h[a:b][:, idx[C].ravel()],
                                                  E_h[a:b].astype(R_h.dtype, copy=False), H,
                                                  EE, Tt[C], Pw[C], mu[C])
        out -= float(np.sum(hc.F[a:b] ** 2))
        out[bad] = np.inf
        return out

    def part(piece):
        m, a, b = piece
        if m == 2:
            return pairs(a, b)
        g, sub = (b - a) // m, max(1, sub_block // m)
        out = np.empty(n_cand)
        for C in cand:
            c = C.stop - C.start
            grams = batched.buffers("lgo-grams", np.float64, (4, mb, mb, g, c))[0]
            for g0 in range(0, g, sub):
                s, e = a + g0 * m, min(a + (g0 + sub) * m, b)
                V, W = _gather(hc, R_h, s, e, m, idx[C])
                group_grams(V, W, _view(F, s, e, m), PJ[..., C], grams[:, :, :, g0:g0 + sub])
            out[C] = group_lgo_increments(grams, K[..., C], lam)
        return out

    total = np.full(n_cand, float(holdout_sse_per_target(hc).sum()))
    for p in _run(part, _chunks(hc.layout, row_block)):
        total += p
    return total


def _gather(hc: HoldoutCaches, R_h, s, e, m, sel):
    """V and W = B V: the columns ``sel`` (c, mb) of R and U on the grouped rows s..e, as
    (g, m, mb, c) arrays, column position first. Consecutive columns (extractors stored side by
    side, the usual case) are a transposed copy into a scratch buffer, 35% cheaper than a
    fancy-index gather. W is formed from V for small groups, gathered from the U cache else."""
    c, mb = sel.shape
    lo = int(sel[0, 0])
    contiguous = np.array_equal(sel, lo + np.arange(c * mb).reshape(c, mb))

    def take(A3, tag):
        if not contiguous:
            return A3[:, :, sel.T.ravel()].reshape(-1, m, mb, c)
        out = batched.buffers(tag, A3.dtype, (A3.shape[0], m, mb, c))[0]
        np.copyto(out, A3[:, :, lo:lo + c * mb].reshape(-1, m, c, mb).transpose(0, 1, 3, 2))
        return out

    V = take(_view(R_h, s, e, m), "lgo-gather-v")
    if m > SMALL_GROUP:
        return V, take(_view(hc.U, s - hc.u_start, e - hc.u_start, m), "lgo-gather-w")
    return V, hc.times_B(s, e, m, V, "lgo-gather-w")
