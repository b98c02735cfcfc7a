"""The caches of one greedy run, split into blocks of rows x targets, and their step operations.

A :class:`CacheBlock` holds the lam-scaled caches (R, E, h, P, sigma; :mod:`trainer._rls_math`)
of one set of rows and the targets observed on all of them, plus, with sample groups, the
hold-out caches of :mod:`trainer._holdout_math`. The greedy criterion is the sum of the blocks'
criteria, and adding a feature updates every block the same way, so the one selection loop
(:func:`trainer.selection.greedy_select`) only sums scores over blocks.

Missing targets (NaN in Y; publication III, multi-task RLS with different samples per task):
targets with the same observation mask share one block over their observed rows, with its own
centring and scaling (:func:`target_blocks`). Each target's criterion is then exactly the one of
a run on its observed rows alone. Memory: one n_p x d array R per distinct mask p (plus U for
grouped rows), i.e. O(d * sum_p n_p); without NaNs there is one block over all rows and the
computation is the plain algorithm's, operation for operation.
"""

from __future__ import annotations

import numpy as np

from . import _group_math as gm
from . import _holdout_math as hm
from . import _rls_math as rm
from .errors import TrainerError


class GramStore:
    """Within-group Grams S_g = X_g^T R_g of the groups scored at the last step, kept current.

    A group seen again (same columns) reuses its Gram, downdated after each step by
    :func:`_group_math.downdate_grams`; new groups are computed from X (a sum over rows).
    """

    def __init__(self):
        self.by_size = {}

    def lookup(self, idx: np.ndarray, compute) -> np.ndarray:
        m = idx.shape[1]
        keys, _, old = self.by_size.get(m, ({}, None, None))
        rows = np.array([keys.get(tuple(r), -1) for r in idx.tolist()], dtype=np.intp)
        S = np.empty((len(idx), m, m))
        hit = rows >= 0
        if hit.any():
            S[hit] = old[rows[hit]]
        if not hit.all():
            S[~hit] = compute(idx[~hit])
        self.by_size[m] = ({tuple(r): i for i, r in enumerate(idx.tolist())}, idx, S)
        return S

    def downdate(self, Rr: np.ndarray, K_inv: np.ndarray) -> None:
        for _, idx, S in self.by_size.values():
            gm.downdate_grams(S, idx, Rr, K_inv)


def target_blocks(X, Y, prep) -> list:
    """[(rows or None, target indices, Preprocessing)] grouping targets by observation mask.

    Rows are the rows where the targets are observed (None: all rows, in order); the block's
    preprocessing is ``prep`` for all rows and refitted on the observed rows otherwise (centring
    with the observed rows' means, as a run on those rows alone). Raises :class:`TrainerError`
    for a target with fewer than 2 observed values.
    """
    Y = np.asarray(Y, dtype=np.float64)
    mask = ~np.isnan(Y)
    if mask.all():
        return [(None, np.arange(Y.shape[1]), prep)]
    counts = mask.sum(axis=0)
    if counts.min() < 2:
        q = int(np.argmin(counts))
        raise TrainerError(f"target column {q} has {int(counts[q])} observed value(s); at "
                           f"least 2 are required")
    patterns, out = {}, []
    for q in range(Y.shape[1]):
        patterns.setdefault(mask[:, q].tobytes(), []).append(q)
    for qs in patterns.values():
        targets = np.asarray(qs, dtype=np.intp)
        rows = np.flatnonzero(mask[:, qs[0]])
        if rows.size == Y.shape[0]:
            out.append((None, targets, type(prep)(prep.x_mean, prep.x_scale, prep.y_mean[targets],
                                                  prep.fit_intercept, prep.standardize)))
        else:
            out.append((rows, targets, type(prep).fit(X[rows], Y[np.ix_(rows, targets)],
                                                      prep.fit_intercept, prep.standardize)))
    return out


class CacheBlock:
    """Greedy RLS caches over the rows ``rows`` (None: all) for the targets ``targets``.

    With ``groups`` (ids of the block's rows) the rows are reordered by
    :func:`_holdout_math.group_layout` and the criterion is the leave-group-out SSE; rows of
    singleton groups are scored by the LOO formulas, so groups of one row give exactly LOO.
    """

    def __init__(self, X, Y, prep, dtype, rows=None, targets=None, groups=None):
        n = X.shape[0] if rows is None else rows.size
        self.targets = np.arange(Y.shape[1]) if targets is None else targets
        self.prep, self.dtype, self.n_rows = prep, dtype, n
        layout = None
        if groups is not None:
            layout = hm.group_layout(groups if rows is None else np.asarray(groups)[rows])
            if layout.n_groups < 2:
                raise TrainerError(f"the {n} rows where target(s) {self.targets.tolist()} are "
                                   f"observed hold a single group; leave-group-out needs 2")
            base = np.arange(n) if rows is None else rows
            rows = base[layout.order]
            if layout.n_single == n:
                layout = None                                  # singleton groups: plain LOO
            if np.array_equal(rows, np.arange(X.shape[0])):
                rows = None
        self.rows = rows
        self.R = prep.transform_into(X, dtype, rows=rows)
        Yr = Y if rows is None else Y[rows]
        Yc = np.asarray(Yr[:, self.targets], dtype=np.float64) - prep.y_mean
        self.E, self.h, self.P, self.sigma = rm.initial_caches(self.R, Yc)
        self.n_single = n if layout is None else layout.n_single
        self.holdout = None if layout is None else hm.init_holdout(layout, self.R, self.E)
        self.grams = GramStore()

    def columns(self, X, cols) -> np.ndarray:
        """Transformed X columns ``cols`` on the block's rows (rows x len(cols))."""
        cols = np.asarray(cols, dtype=np.intp)
        if self.rows is None:
            return self.prep.columns(X, cols, self.dtype)
        return ((X[np.ix_(self.rows, cols)] - self.prep.x_mean[cols])
                / self.prep.x_scale[cols]).astype(self.dtype)

    def sse_per_target(self) -> np.ndarray:
        """The block's criterion per target: LOO over singleton rows + sum_Q ||F_Q||^2."""
        n1 = self.n_single
        out = rm.loo_sse_per_target(self.E[:n1], self.h[:n1]) if n1 else np.zeros(
            self.targets.size)
        if self.holdout is not None:
            out = out + hm.holdout_sse_per_target(self.holdout)
        return out

    def sse(self) -> float:
        if self.holdout is None:
            return rm.loo_sse(self.E, self.h)
        return float(self.sse_per_target().sum())

    def score(self, moves, lam, X) -> np.ndarray:
        """Criterion after each move, bucketed by the number m of columns it adds.

        m = 1: :func:`_rls_math.candidate_loo_sse` (over all columns when the bucket covers at
        least half of them) on singleton rows, :func:`_holdout_math.candidate_lgo_sse` on
        grouped rows; m > 1: :func:`_group_math.group_loo_sse` and
        :func:`_holdout_math.group_lgo_sse`, with Grams from the block's :class:`GramStore`.
        """
        R, E, h, P, sigma, n1 = self.R, self.E, self.h, self.P, self.sigma, self.n_single
        single = R if n1 == R.shape[0] else R[:n1]
        scores = np.zeros(len(moves.sizes))
        d = R.shape[1]
        for m in np.unique(moves.sizes):
            sel = np.flatnonzero(moves.sizes == m)
            idx = moves.index_matrix(sel, int(m))
            if m == 1:
                cols = idx[:, 0]
                full = 2 * cols.size >= d
                if n1:
                    scores[sel] = (rm.candidate_loo_sse(single, E[:n1], h[:n1], P, sigma, lam)
                                   [cols] if full else rm.candidate_loo_sse(
                                       np.ascontiguousarray(single[:, cols]), E[:n1], h[:n1],
                                       P[cols], sigma[cols], lam))
                if self.holdout is not None:
                    hc = self.holdout
                    scores[sel] += (hm.candidate_lgo_sse(R[n1:], hc, P, sigma, lam)[cols]
                                    if full else hm.candidate_lgo_sse(
                                        R[n1:, cols], hc, P[cols], sigma[cols], lam,
                                        U=hc.U[:, cols]))
            else:
                S = self.grams.lookup(idx, lambda miss: gm.block_gram(
                    self.columns(X, miss.ravel()), R, miss))
                if n1:
                    scores[sel] = gm.group_loo_sse(single, E[:n1], h[:n1], P, idx, S, lam)
                if self.holdout is not None:
                    scores[sel] += hm.group_lgo_sse(R[n1:], self.holdout, P, idx, S, lam)
        return scores

    def add(self, J, lam, X) -> None:
        """Add the columns J to S: :func:`_rls_math.add_feature` (one column) or
        :func:`_group_math.add_group` (a block), then the Gram and hold-out caches."""
        saved = None if self.holdout is None else hm.holdout_save(self.holdout, self.R, J)
        if J.size == 1:
            r, den = rm.add_feature(self.R, self.E, self.h, self.P, self.sigma,
                                    self.columns(X, J)[:, 0], J[0], lam)
            Rr, K_inv = np.asarray(r, dtype=np.float64)[:, None], np.array([[1.0 / den]])
        else:
            Rr, K_inv = gm.add_group(self.R, self.E, self.h, self.P, self.sigma,
                                     self.columns(X, J), J, lam)
        if self.grams.by_size:
            self.grams.downdate(Rr, K_inv)
        if self.holdout is not None:
            hm.holdout_add(self.holdout, self.R, self.E, saved, Rr, K_inv, lam)


def make_blocks(X, Y, prep, dtype, groups=None) -> list:
    """The :class:`CacheBlock` s of a run: one per target observation mask."""
    if groups is not None and np.unique(np.asarray(groups)).size < 2:
        raise TrainerError("groups has a single group: leave-group-out needs at least 2")
    return [CacheBlock(X, Y, p, dtype, rows=rows, targets=targets, groups=groups)
            for rows, targets, p in target_blocks(X, Y, prep)]
