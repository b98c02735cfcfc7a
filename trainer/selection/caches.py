"""The caches of one greedy run, split into blocks of rows x targets, and their step operations.

A :class:`CacheBlock` holds the lam-scaled caches (R, E, h, P, sigma;
:mod:`sensorbudget.trainer.selection.rls_math`) of one set of rows and the targets observed on all of them, plus,
with sample groups, the hold-out caches of :mod:`sensorbudget.trainer.selection.holdout_math`. The greedy
criterion is the sum of the blocks' criteria, and adding a feature updates every block the same way,
so the one selection loop (:func:`sensorbudget.trainer.selection.loop.greedy_select`) only sums scores over
blocks.

Missing targets (NaN in Y; publication III, multi-task RLS with different samples per task):
targets with the same observation mask share one block over their observed rows, with its own
centring and scaling (:func:`target_blocks`). Each target's criterion is then exactly the one of
a run on its observed rows alone. Memory: one n_p x d array R per distinct mask p (plus U for
grouped rows), i.e. O(d * sum_p n_p); without NaNs there is one block over all rows and the
computation is the plain algorithm's, operation for operation.

Rows and sums (``docs/method.md``, "Row-partitioned view"). A block is split in two:
a :class:`RowBlock` holds the row-local caches (R, E, h, hold-out caches) of the rows one
process holds, and returns *partials* (sums over its rows: candidate scores, Grams, R^T X_J,
SSE); :class:`CacheBlock` holds the global O(d t) state (P, sigma, Grams) and reaches its rows
through a *row store* with one method, ``map(method, *args)``, which calls a
:class:`RowBlock` method on every partition and returns the results in partition order. The
driver sums the partials in that fixed order. In this process (:class:`LocalRows`) there is one
partition and ``map`` is a direct call, so the single-machine path is the plain computation;
:mod:`sensorbudget.trainer.distributed.row_store` provides a store whose partitions live on Dask workers.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import TrainerError
from . import group_math, holdout_blocks, holdout_math, rls_math, wide_rows


class GramStore:
    """Within-group Grams S_g = X_g^T R_g of the groups scored at the last step, kept current.

    A group seen again (same columns) reuses its Gram, downdated after each step by
    :func:`group_math.downdate_grams`; new groups are computed from X (a sum over rows).
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
            group_math.downdate_grams(S, idx, Rr, K_inv)


def target_columns(Y, cols):
    """Y[:, cols], or Y itself (no n x t copy) when ``cols`` lists every column in order."""
    cols = np.asarray(cols)
    if cols.dtype != bool and np.array_equal(cols, np.arange(Y.shape[1])):
        return Y
    return Y[:, cols]


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
            out.append((None, targets, replace(prep, y_mean=prep.y_mean[targets])))
        else:
            out.append((rows, targets, type(prep).fit(X[rows], Y[np.ix_(rows, targets)],
                                                      prep.fit_intercept, prep.standardize)))
    return out


def intercept_offset(prep, n_rows: int) -> float:
    """1/n with an intercept (n = ``prep.n_rows``, the rows its means came from; else
    ``n_rows``), 0 without.

    Ridge with an unpenalized intercept has the hat matrix J/n + H_c (H_c: ridge on the
    centred columns), so refitting it without held-out rows Q leaves the residuals
    (I - H_c,QQ - 11^T/n)^{-1} E_Q (LOO: E_j / (1 - h_c,jj - 1/n)). Because the centred
    columns, and hence R and E, are orthogonal to 1, this is the centred problem's caches
    with the constant column added unpenalized first: h starts at 1 - 1/n and the hold-out
    blocks at (I - 11^T/n)_QQ, and every later update is unchanged (docs/method.md).
    """
    if not prep.fit_intercept:
        return 0.0
    return 1.0 / float(prep.n_rows or n_rows)


class RowBlock:
    """Row-local greedy RLS caches of the rows ``rows`` (None: all) of ``X`` for ``targets``.

    Holds R, E, h and, with ``groups`` (ids of the rows), the hold-out caches of
    :mod:`sensorbudget.trainer.selection.holdout_math` (rows reordered by :func:`holdout_math.group_layout`; rows
    of singleton groups are scored by the LOO formulas). ``X`` is kept by reference for the
    columns of added features. Every method is row-local or returns a sum over these rows;
    the global P and sigma come in as arguments. ``check_groups`` raises for fewer than 2
    groups (off on a partition: the count is then checked over all partitions).
    """

    def __init__(self, X, Y, prep, dtype, rows=None, targets=None, groups=None,
                 check_groups=True):
        n = X.shape[0] if rows is None else rows.size
        self.X = X
        self.targets = np.arange(Y.shape[1]) if targets is None else targets
        self.prep, self.dtype, self.n_rows = prep, dtype, n
        layout = None
        if groups is not None:
            layout = holdout_math.group_layout(groups if rows is None else np.asarray(groups)[rows])
            if check_groups and layout.n_groups < 2:
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
        Yr = target_columns(Y if rows is None else Y[rows], self.targets)
        self.E, self.h = rls_math.initial_rows(self.R, np.asarray(Yr, dtype=np.float64),
                                               prep.y_mean)
        self.a2 = None       # ||E_j||^2 of the singleton rows, set by sse_parts until E changes
        offset = intercept_offset(prep, n)
        self.h -= offset
        self.n_single = n if layout is None else layout.n_single
        self.holdout = None if layout is None else holdout_math.init_holdout(
            layout, self.R, self.E, offset)
        # Q = E P^T kept by rank-2 updates with many targets (:mod:`wide_rows`), from the
        # first scoring pass on; None when not kept or out of date.
        self.keep_q = self.holdout is None and self.targets.size >= wide_rows.TRACK_TARGETS
        self.Q = None

    def initial_sums(self):
        """Partial (P, sigma) of S = {} over these rows (:func:`rls_math.initial_sums`)."""
        return rls_math.initial_sums(self.R, self.E)

    def columns(self, cols) -> np.ndarray:
        """Transformed X columns ``cols`` on the block's rows (rows x len(cols))."""
        cols = np.asarray(cols, dtype=np.intp)
        if self.rows is None:
            return self.prep.columns(self.X, cols, self.dtype)
        return ((self.X[np.ix_(self.rows, cols)] - self.prep.x_mean[cols])
                / self.prep.x_scale[cols]).astype(self.dtype)

    def sse_parts(self):
        """(criterion SSE, SSE per target (t,)) over these rows: LOO over singleton rows plus
        sum_Q ||F_Q||^2 over grouped rows; keeps the row norms ``a2`` for the next scoring."""
        n1 = self.n_single
        per_target = np.zeros(self.targets.size)
        if n1:
            per_target, self.a2 = rls_math.loo_sse_terms(self.E[:n1], self.h[:n1])
        if self.holdout is None:
            return float(per_target.sum()), per_target     # n1 = all rows: one pass
        per_target = per_target + holdout_math.holdout_sse_per_target(self.holdout)
        return float(per_target.sum()), per_target

    def gram(self, idx) -> np.ndarray:
        """Partial within-group Grams X_g^T R_g of the candidate groups ``idx`` (g, m)."""
        return group_math.block_gram(self.columns(idx.ravel()), self.R, idx)

    def score(self, moves, lam, P, sigma, grams) -> np.ndarray:
        """Partial criterion after each move, bucketed by the number m of columns it adds.

        m = 1: :func:`rls_math.candidate_loo_sse` (over all columns when the bucket covers at
        least half of them) on singleton rows, :func:`holdout_math.candidate_lgo_sse` on
        grouped rows; m > 1: :func:`group_math.group_loo_sse` and
        :func:`holdout_blocks.group_lgo_sse` with the Grams ``grams[m]`` (summed over all rows).
        """
        R, E, h, n1 = self.R, self.E, self.h, self.n_single
        single = R if n1 == R.shape[0] else R[:n1]
        scores = np.zeros(len(moves.sizes))
        d = R.shape[1]
        for m in np.unique(moves.sizes):
            sel = np.flatnonzero(moves.sizes == m)
            idx = moves.index_matrix(sel, int(m))
            if m == 1:
                cols = idx[:, 0]
                full = 2 * cols.size >= d
                if self.keep_q and self.Q is None:
                    self.Q = wide_rows.target_products(E, P)
                Q = self.Q
                if n1:
                    scores[sel] = (rls_math.candidate_loo_sse(single, E[:n1], h[:n1], P, sigma, lam,
                                                              a2=self.a2, Q=Q)
                                   [cols] if full else rls_math.candidate_loo_sse(
                                       np.ascontiguousarray(single[:, cols]), E[:n1], h[:n1],
                                       P[cols], sigma[cols], lam, a2=self.a2,
                                       Q=None if Q is None else np.ascontiguousarray(Q[:, cols])))
                if self.holdout is not None:
                    hc = self.holdout
                    scores[sel] += (holdout_math.candidate_lgo_sse(R[n1:], hc, P, sigma, lam)[cols]
                                    if full else holdout_math.candidate_lgo_sse(
                                        R[n1:, cols], hc, P[cols], sigma[cols], lam,
                                        cols=cols))
            else:
                S = grams[int(m)]
                if n1:
                    scores[sel] = group_math.group_loo_sse(single, E[:n1], h[:n1], P, idx, S, lam)
                if self.holdout is not None:
                    scores[sel] += holdout_blocks.group_lgo_sse(R[n1:], E[n1:], self.holdout,
                                                                P, idx, S, lam)
        return scores

    def products(self, J) -> np.ndarray:
        """Partial R^T X_J: (d,) in R's dtype for one column, (d, m) float64 for a block."""
        if J.size == 1:
            return rls_math.residual_products(self.R, self.columns(J)[:, 0])
        return group_math.block_products(self.R, self.columns(J))

    def add(self, J, lam, Rr, coef, PJ, PPJ=None):
        """Apply the row-local update of adding the columns J, given the global Rr = R^T X_J,
        ``coef`` (den = lam + sigma_b for one column, K^{-1} for a block), the old P_J and, for
        one column, PPJ = P P_J of the old P (keeps Q, :func:`wide_rows.add_feature_wide`;
        None drops Q); then the hold-out caches. Returns :meth:`sse_parts` after the step."""
        if self.Q is not None and J.size == 1 and PPJ is not None:
            per_target, self.a2 = wide_rows.add_feature_wide(self.R, self.E, self.h, self.Q, Rr,
                                                             coef, J[0], PJ, PPJ)
            return float(per_target.sum()), per_target
        self.Q = None
        self.a2 = None
        saved = None if self.holdout is None else holdout_math.holdout_save(self.holdout, self.R, J)
        if J.size == 1:
            rls_math.add_feature_rows(self.R, self.E, self.h, Rr, coef, J[0], PJ)
            Rr, K_inv = np.asarray(Rr, dtype=np.float64)[:, None], np.array([[1.0 / coef]])
        else:
            group_math.add_group_rows(self.R, self.E, self.h, Rr, coef, J, PJ)
            K_inv = coef
        if self.holdout is not None:
            holdout_math.holdout_add(self.holdout, self.R, self.E, saved, Rr, K_inv, lam)
        return self.sse_parts()


class LocalRows:
    """Row store of one :class:`RowBlock` in this process: one partition, direct calls."""

    def __init__(self, block: RowBlock):
        self.block = block

    def map(self, method: str, *args) -> list:
        return [getattr(self.block, method)(*args)]


def total(parts: list):
    """Sum of per-partition partial results, in partition order (a single part unchanged)."""
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    return out


def total_sse(parts: list):
    """Sum of per-partition (SSE, SSE per target) pairs, in partition order."""
    return total([p[0] for p in parts]), total([p[1] for p in parts])


class CacheBlock:
    """Greedy RLS caches over the rows ``rows`` (None: all) for the targets ``targets``.

    The global state (P, sigma, the :class:`GramStore`) lives here; the row-local caches live
    in the :class:`RowBlock` s of a row store (``rows_store``; built here from ``X``, ``Y`` by
    default: one local partition). Each step sums the partitions' partial results in order.
    With ``groups`` (ids of the block's rows) the criterion is the leave-group-out SSE; rows of
    singleton groups are scored by the LOO formulas, so groups of one row give exactly LOO.
    """

    def __init__(self, X=None, Y=None, prep=None, dtype=np.float64, rows=None, targets=None,
                 groups=None, *, rows_store=None, n_rows=None, sums=None, sse=None):
        if rows_store is None:
            block = RowBlock(X, Y, prep, dtype, rows=rows, targets=targets, groups=groups)
            rows_store, targets, n_rows = LocalRows(block), block.targets, block.n_rows
            sums, sse = [block.initial_sums()], [block.sse_parts()]
        self.parts, self.targets, self.n_rows = rows_store, targets, n_rows
        self.P, self.sigma = total([s[0] for s in sums]), total([s[1] for s in sums])
        self._sse = total_sse(sse)
        self.grams = GramStore()

    @property
    def local(self) -> RowBlock:
        """The :class:`RowBlock` of a block held in this process (for tests and inspection)."""
        if not isinstance(self.parts, LocalRows):
            raise AttributeError("the rows of this block live in a distributed row store")
        return self.parts.block

    R = property(lambda self: self.local.R)
    E = property(lambda self: self.local.E)
    h = property(lambda self: self.local.h)
    rows = property(lambda self: self.local.rows)
    holdout = property(lambda self: self.local.holdout)
    n_single = property(lambda self: self.local.n_single)

    def sse_per_target(self) -> np.ndarray:
        """The block's criterion per target: LOO over singleton rows + sum_Q ||F_Q||^2."""
        return self._sse[1]

    def sse(self) -> float:
        return self._sse[0]

    def score(self, moves, lam, X=None) -> np.ndarray:
        """Criterion after each move (:meth:`RowBlock.score` summed over the partitions), with
        the Grams of group moves from the :class:`GramStore` (new ones summed over the rows).
        ``X`` is unused (the rows hold their data); kept for the signature."""
        grams = {}
        for m in np.unique(moves.sizes):
            if m > 1:
                idx = moves.index_matrix(np.flatnonzero(moves.sizes == m), int(m))
                grams[int(m)] = self.grams.lookup(
                    idx, lambda miss: total(self.parts.map("gram", miss)))
        return total(self.parts.map("score", moves, lam, self.P, self.sigma, grams))

    def add(self, J, lam, X=None) -> None:
        """Add the columns J to S: Rr = R^T X_J summed over the rows, the global update of
        P and sigma (:func:`rls_math.add_feature_sums` / :func:`group_math.add_group_sums`),
        the row-local update on every partition, then the Grams."""
        J = np.asarray(J, dtype=np.intp)
        Rr = total(self.parts.map("products", J))
        if J.size == 1:
            PPJ = self.P @ self.P[J[0]]                # for the kept Q (wide_rows)
            den, PJ = rls_math.add_feature_sums(self.P, self.sigma, Rr, J[0], lam)
            self._sse = total_sse(self.parts.map("add", J, lam, Rr, den, PJ, PPJ))
            Rr, K_inv = np.asarray(Rr, dtype=np.float64)[:, None], np.array([[1.0 / den]])
        else:
            K_inv, PJ = group_math.add_group_sums(self.P, self.sigma, Rr, J, lam)
            self._sse = total_sse(self.parts.map("add", J, lam, Rr, K_inv, PJ))
        if self.grams.by_size:
            self.grams.downdate(Rr, K_inv)


def make_blocks(X, Y, prep, dtype, groups=None) -> list:
    """The :class:`CacheBlock` s of a run: one per target observation mask."""
    if groups is not None and np.unique(np.asarray(groups)).size < 2:
        raise TrainerError("groups has a single group: leave-group-out needs at least 2")
    return [CacheBlock(X, Y, p, dtype, rows=rows, targets=targets, groups=groups)
            for rows, targets, p in target_blocks(X, Y, prep)]
