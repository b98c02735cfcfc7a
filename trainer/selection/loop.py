"""The one greedy selection loop, data preparation and the choice of lambda by the criterion.

The loop selects *moves* of a :class:`sensorbudget.trainer.selection.costs.CostPlan` (single features, extractor
groups, Cartesian rows/columns) under its budgets. Single-column moves are scored by the
Sherman-Morrison pass of :mod:`sensorbudget.trainer.selection.rls_math`, groups of m columns by the block
Woodbury pass of
:mod:`sensorbudget.trainer.selection.group_math` (moves bucketed by size). The criterion is the LOO SSE, or with
sample ``groups`` the leave-group-out SSE (:mod:`sensorbudget.trainer.selection.holdout_math`); targets with
missing values are scored on their observed rows (:mod:`sensorbudget.trainer.selection.caches`), and the
criterion sums over targets. Two choice rules: ``"error"`` (lowest criterion, Algorithm 2) and
``"cost-ratio"`` (largest criterion decrease per unit of weighted added cost,
:meth:`CostPlan.ratio_weights`); ``"auto"`` runs both under the same budget and keeps the lower
final criterion (best-of-two).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import rls_math
from .caches import make_blocks
from .costs import CostPlan, singleton_plan

#: The paper's lambda grid, 2^-15 ... 2^15.
LAMBDA_GRID = tuple(2.0 ** e for e in range(-15, 16))
#: Scores within this relative distance of the best are ties, resolved to the lowest index.
TIE_RTOL = 1e-12
STRATEGIES = ("auto", "cost-ratio", "error")


#: A column whose standard deviation is at most this fraction of its largest magnitude is
#: constant (below float64 resolution of its values): it keeps scale 1.
CONSTANT_RTOL = 1e-12


@dataclass
class Preprocessing:
    """Affine map applied to X and Y before selection: Xs = (X - x_mean) / x_scale, Yc = Y - y_mean.

    Convention: with ``fit_intercept`` X and Y are centred with the means of all ``n_rows``
    rows, and the criterion is the LOO (leave-group-out) error of ridge with an *unpenalized
    intercept refitted without the held-out rows*: the hat matrix is J/n + H_c (H_c of the
    centred problem), so the caches start from 1 - leverage = 1 - 1/n and, per group Q, from
    (I - 11^T/n)_QQ (:func:`sensorbudget.trainer.selection.caches.intercept_offset`; docs/method.md,
    "Intercept and scaling"). The centring is thus refitted per fold, exactly. The scale is
    not: with ``standardize`` each column is divided by its standard deviation over all rows
    (root mean square when there is no intercept), a fixed per-feature weighting of the
    penalty in every fold. It is computed from sums centred per row block (:func:`row_sums`,
    stable for columns far from zero such as ``1e8 + 0.01 z``); a column is constant, and
    keeps scale 1, when that deviation is at most :data:`CONSTANT_RTOL` times its largest
    magnitude. NaN targets are left out of ``y_mean``; the selection refits the map on each
    target's observed rows (:func:`sensorbudget.trainer.selection.caches.target_blocks`).
    """

    x_mean: np.ndarray
    x_scale: np.ndarray
    y_mean: np.ndarray
    fit_intercept: bool = True
    standardize: bool = True
    #: Rows the means were computed from (n of the intercept's J/n; None: the block's rows).
    n_rows: int | None = None

    @classmethod
    def fit(cls, X, Y, fit_intercept: bool, standardize: bool) -> "Preprocessing":
        return cls.from_sums(row_sums(X, Y), fit_intercept, standardize)

    @classmethod
    def from_sums(cls, sums: dict, fit_intercept: bool, standardize: bool) -> "Preprocessing":
        """The map from the sums over rows of :func:`row_sums` (added over row partitions)."""
        n = sums["n"]
        mean = sums["x"] / n
        d = mean.shape[0]
        x_mean = mean if fit_intercept else np.zeros(d)
        y_mean = (sums["y"] / np.maximum(sums["y_count"], 1) if fit_intercept
                  else np.zeros(sums["y"].shape[0]))
        x_scale = np.ones(d)
        if standardize:
            # variance about the mean from the centred sums (no E[x^2] - m^2 cancellation);
            # without an intercept the root mean square: (M2 + n m^2) / n.
            var = sums["m2"] / n + (0.0 if fit_intercept else mean ** 2)
            scale = np.sqrt(var)
            ok = scale > CONSTANT_RTOL * sums["absmax"]
            x_scale = np.where(ok, scale, 1.0)
        return cls(x_mean=x_mean, x_scale=x_scale, y_mean=y_mean, fit_intercept=fit_intercept,
                   standardize=standardize, n_rows=int(n))

    def transform_into(self, X, dtype, rows=None) -> np.ndarray:
        """A new C-ordered array (X[rows] - x_mean) / x_scale of ``dtype`` (the one n x d copy;
        ``rows`` None means all rows in order)."""
        n = X.shape[0] if rows is None else len(rows)
        out = np.empty((n, X.shape[1]), dtype=dtype)
        step = max(1, (1 << 20) // max(1, X.shape[1]))
        direct = np.dtype(dtype) == np.float64          # else via a float64 chunk buffer
        buf = None if direct else np.empty((min(step, n), X.shape[1]))
        for i0 in range(0, n, step):      # float64 arithmetic, no chunk-sized temporaries
            part = X[i0:i0 + step] if rows is None else X[rows[i0:i0 + step]]
            dst = out[i0:i0 + step] if direct else buf[:part.shape[0]]
            np.subtract(part, self.x_mean, out=dst, dtype=np.float64)
            np.divide(dst, self.x_scale, out=dst if direct else out[i0:i0 + step])
        return out

    def column(self, X, b, dtype) -> np.ndarray:
        """Column b of the transformed X, computed from the original X (no stored copy)."""
        return ((X[:, b] - self.x_mean[b]) / self.x_scale[b]).astype(dtype)

    def columns(self, X, cols, dtype) -> np.ndarray:
        """Columns ``cols`` of the transformed X (n x len(cols))."""
        cols = np.asarray(cols, dtype=np.intp)
        return ((X[:, cols] - self.x_mean[cols]) / self.x_scale[cols]).astype(dtype)


def row_sums(X, Y) -> dict:
    """Sums over rows behind :class:`Preprocessing`: n; per X column the sum, ``m2`` = the sum
    of squared deviations from these rows' mean (two passes, in row chunks: no n x d
    temporary), and the largest magnitude; per Y column the sum and count of the observed
    (non-NaN) values. Row partitions combine with :func:`combine_sums`."""
    Y = np.asarray(Y, dtype=np.float64)
    nan = np.isnan(Y)
    n, d = X.shape
    total = X.sum(axis=0)
    mean = total / max(n, 1)
    m2, absmax = np.zeros(d), np.zeros(d)
    step = max(1, (1 << 20) // max(1, d))
    buf = np.empty((min(step, n), d))          # one chunk buffer (no per-chunk temporaries)
    for i0 in range(0, n, step):
        part = buf[:min(step, n - i0)]
        np.subtract(X[i0:i0 + step], mean, out=part)
        m2 += np.einsum("ij,ij->j", part, part)
        np.abs(X[i0:i0 + step], out=part)
        np.maximum(absmax, part.max(axis=0), out=absmax)
    return {"n": n, "x": total, "m2": m2, "absmax": absmax,
            "y": np.where(nan, 0.0, Y).sum(axis=0), "y_count": (~nan).sum(axis=0)}


def combine_sums(parts: list) -> dict:
    """The :func:`row_sums` of the union of row partitions, in the given order. Sums and
    counts add; ``m2`` combines by the parallel-variance identity (Chan et al.)
    M2 = sum_p [M2_p + n_p (mean_p - mean)^2]; ``absmax`` is the largest."""
    n = sum(p["n"] for p in parts)
    x = sum(np.asarray(p["x"], dtype=np.float64) for p in parts)
    mean = x / max(n, 1)
    m2 = sum(np.asarray(p["m2"]) + p["n"] * (np.asarray(p["x"]) / max(p["n"], 1) - mean) ** 2
             for p in parts if p["n"])
    return {"n": n, "x": x, "m2": m2 if np.ndim(m2) else np.zeros_like(x),
            "absmax": np.max([p["absmax"] for p in parts], axis=0),
            "y": sum(p["y"] for p in parts), "y_count": sum(p["y_count"] for p in parts)}


@dataclass
class GreedyPath:
    """Result of one greedy run at a fixed lambda.

    ``selected`` lists feature indices in selection order; the other lists have one entry per
    step: ``steps`` (extractor ids, feature ids, sensor ids added), ``loo_sse`` (total),
    ``loo_sse_per_target`` (t,) and ``totals`` (cumulative costs over ``costs.TOTALS``).
    With one feature per step (plain selection) steps and features coincide. ``loo_sse`` is
    the run's criterion: LOO SSE, or leave-group-out SSE when ``criterion`` says so;
    ``target_rows`` (t,) counts the rows each target was scored on (its observed rows).
    ``lam_moves`` lists (step, new lambda) when a ``steer`` callback moved lambda mid-path
    (:mod:`sensorbudget.trainer.selection.lam_search`); ``lam`` is then the lambda of the last steps.
    """

    lam: float
    selected: list = field(default_factory=list)
    loo_sse: list = field(default_factory=list)
    strategy: str = "error"
    steps: list = field(default_factory=list)
    loo_sse_per_target: list = field(default_factory=list)
    totals: list = field(default_factory=list)
    target_rows: list = field(default_factory=list)
    criterion: str = "loo"
    lam_moves: list = field(default_factory=list)


def pick(scores: np.ndarray) -> int:
    """Index of the lowest score; near-ties (relative ``TIE_RTOL``) go to the lowest index."""
    finite = np.isfinite(scores)
    if not finite.any():
        return int(np.flatnonzero(~np.isnan(scores))[0])
    best = scores[finite].min()
    return int(np.flatnonzero(scores <= best + TIE_RTOL * abs(best))[0])


def pick_ratio(scores: np.ndarray, cost: np.ndarray, sse_now: float) -> int:
    """Cost-ratio rule: the largest (sse_now - score) / cost among moves that lower the error.

    Falls back to :func:`pick` when no move lowers the LOO error or every move costs the same
    (then the two rules agree). A free move that lowers the error has ratio +inf; among several,
    the lowest score wins. Near-ties go to the lowest index.
    """
    decrease = sse_now - scores
    gain = np.isfinite(scores) & (decrease > 0)
    if not gain.any() or np.ptp(cost[gain]) <= TIE_RTOL * max(abs(cost[gain]).max(), 1e-300):
        return pick(scores)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(cost > 0, decrease / np.where(cost > 0, cost, 1.0), np.inf)
    ratio = np.where(gain, ratio, -np.inf)
    best = ratio.max()
    if np.isinf(best):
        return pick(np.where(np.isinf(ratio) & (ratio > 0), scores, np.nan))
    return int(np.flatnonzero(ratio >= best - TIE_RTOL * abs(best))[0])


def greedy_select(X, Y, budget, lam, prep: Preprocessing, *, dtype=np.float64,
                  progress=None, plan: CostPlan | None = None, strategy="error",
                  groups=None, steer=None) -> GreedyPath:
    """The greedy run of :func:`_greedy_select` with BLAS single-threaded throughout when the
    row blocks use worker threads (see :func:`rls_math.single_threaded_blas`)."""
    with rls_math.single_threaded_blas():
        return _greedy_select(X, Y, budget, lam, prep, dtype=dtype, progress=progress,
                              plan=plan, strategy=strategy, groups=groups, steer=steer)


def _greedy_select(X, Y, budget, lam, prep: Preprocessing, *, dtype=np.float64,
                   progress=None, plan: CostPlan | None = None, strategy="error",
                   groups=None, steer=None) -> GreedyPath:
    """Greedy forward selection by a closed-form hold-out criterion (Algorithm 2), over the
    moves of ``plan``.

    The criterion is the LOO SSE, or with ``groups`` (one id per row) the leave-group-out SSE;
    NaN entries of Y are left out (each target is scored on its observed rows). ``X`` may also be
    a *row source* with ``Y`` None: an object holding the rows elsewhere (the partitions of
    :mod:`sensorbudget.trainer.distributed.row_store`) with ``shape``, ``criterion`` and ``make_blocks(prep,
    dtype)`` returning :class:`sensorbudget.trainer.selection.caches.CacheBlock` s over its row store. The caches
    live in :class:`sensorbudget.trainer.selection.caches.CacheBlock` s (one per target observation mask); each
    step sums
    the blocks' scores of every affordable move, picks one by ``strategy`` (``"error"``:
    :func:`pick`, ``"cost-ratio"``: :func:`pick_ratio`) and adds its columns to every block.
    It stops when no affordable move is left; ``budget`` limits the number of extractors (None:
    no limit). ``plan`` defaults to one feature per extractor (plain selection of ``budget``
    features). Raises :class:`TrainerError` naming the cheapest option when nothing fits.
    Cost per step O(n D (t + m)) for D candidate columns in groups of m (groups of rows add
    about one more pass of the same order, :mod:`sensorbudget.trainer.selection.holdout_math`).
    ``steer(selected, lam)``, when given, is called after every step and may return a new
    lambda: the caches are then rebuilt at that lambda for the selected columns (one block
    Woodbury update, :func:`rebuild_blocks`) and the run goes on from there.
    """
    if Y is None:                                  # a row source holding X and Y
        blocks, criterion = X.make_blocks(prep, dtype), X.criterion
    else:
        blocks = make_blocks(X, Y, prep, dtype, groups)
        criterion = "loo" if groups is None else "leave-group-out"
    t = prep.y_mean.shape[0]
    plan = (singleton_plan(X.shape[1]) if plan is None else plan).with_limit("extractors", budget)
    weights = plan.ratio_weights()
    state = plan.start()
    rows = np.zeros(t, dtype=np.intp)
    for b in blocks:
        rows[b.targets] = b.n_rows
    path = GreedyPath(lam=float(lam), strategy=strategy, target_rows=rows.tolist(),
                      criterion=criterion)
    sse = sum(b.sse() for b in blocks)
    while True:
        moves = plan.moves(state)
        ok = plan.affordable(state, moves)
        if not ok.any():
            if not path.steps:
                raise plan.infeasible_error(moves)
            break
        moves = moves.subset(ok) if not ok.all() else moves
        scores = blocks[0].score(moves, lam, X)
        for b in blocks[1:]:
            scores += b.score(moves, lam, X)
        k = pick(scores) if strategy == "error" else pick_ratio(scores, moves.added @ weights, sse)
        J = moves.features(k)
        for b in blocks:
            b.add(J, lam, X)
        sensors = plan.take(state, moves.extractors[k], J)
        sse = sum(b.sse() for b in blocks)
        per_target = np.zeros(t)
        for b in blocks:
            per_target[b.targets] = b.sse_per_target()
        path.selected.extend(int(j) for j in J)
        path.steps.append((tuple(moves.extractors[k]), [int(j) for j in J], sensors))
        path.loo_sse.append(sse)
        path.loo_sse_per_target.append(per_target)
        path.totals.append(state.totals.copy())
        if progress is not None:
            progress(len(path.steps))
        new = None if steer is None else steer(path.selected, lam)
        if new is not None and new != lam:
            lam = float(new)
            blocks = rebuild_blocks(X, Y, prep, dtype, groups, path.selected, lam)
            sse = sum(b.sse() for b in blocks)
            path.lam = lam
            path.lam_moves.append((len(path.steps), lam))
    return path


def rebuild_blocks(X, Y, prep, dtype, groups, selected, lam) -> list:
    """Fresh caches at ``lam`` with the columns ``selected`` already in S: the blocks of S = {}
    plus one block (Woodbury) update adding all of them (exact; O(n d |S|) GEMM work)."""
    blocks = X.make_blocks(prep, dtype) if Y is None else make_blocks(X, Y, prep, dtype, groups)
    J = np.asarray(selected, dtype=np.intp)
    for b in blocks:
        b.add(J, lam, X)
    return blocks


def run_strategies(plan, strategy) -> tuple:
    """The choice rules ``strategy`` runs: "auto" is both unless they provably agree."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy={strategy!r} must be one of {STRATEGIES}")
    if strategy != "auto":
        return (strategy,)
    return ("error",) if plan is None or plan.uniform() else ("error", "cost-ratio")


def select_with_lambda(X, Y, budget, lam, prep, *, dtype=np.float64, progress=None, plan=None,
                       strategy="error", groups=None):
    """Run :func:`greedy_select` at ``lam``, or at every grid value when ``lam`` is None.

    With ``strategy="auto"`` both rules run at each lambda and the one with the lower final
    criterion (LOO, or leave-group-out with ``groups``) is kept (ties to "error"). Returns
    (best path, {lam: final criterion SSE}); the best lambda has the lowest criterion at the
    end of its path (ties to the smaller lambda).
    """
    grid = LAMBDA_GRID if lam is None else (float(lam),)
    rules = run_strategies(plan, strategy)
    steps = budget if budget is not None else (plan.n_extractors if plan is not None
                                               else X.shape[1])
    total = len(grid) * len(rules) * steps
    paths = []
    for i, value in enumerate(grid):
        runs = []
        for j, rule in enumerate(rules):
            def tick(step, base=(i * len(rules) + j) * steps):
                if progress is not None:
                    progress(base + step, total)
            runs.append(greedy_select(X, Y, budget, value, prep, dtype=dtype, progress=tick,
                                      plan=plan, strategy=rule, groups=groups))
        paths.append(min(runs, key=lambda p: p.loo_sse[-1]))
    finals = {p.lam: p.loo_sse[-1] for p in paths}
    best = min(paths, key=lambda p: (p.loo_sse[-1], p.lam))
    return best, finals


def path_records(path: GreedyPath, plan: CostPlan, n_samples: int) -> list:
    """The path as JSON-ready dicts: per step the added features (indices), extractors and
    sensors (names), cumulative ``costs`` of every kind, the criterion's MSE overall and per
    target (``loo_mse``: SSE over the scored entries; per target over its ``target_rows``,
    ``n_samples`` when the path does not record them)."""
    out = []
    t = len(path.loo_sse_per_target[0]) if path.loo_sse_per_target else 1
    rows = np.asarray(path.target_rows if path.target_rows else [n_samples] * t, dtype=float)
    for step, ((ext, feats, sensors), sse, per_t, totals) in enumerate(
            zip(path.steps, path.loo_sse, path.loo_sse_per_target, path.totals), start=1):
        out.append({
            "step": step, "added": list(feats),
            "added_extractors": [plan.extractor_names[e] for e in ext],
            "added_sensors": [plan.sensor_names[s] for s in sensors],
            "costs": plan.cost_dict(totals), "loo_mse": float(sse) / float(rows.sum()),
            "loo_mse_per_target": [float(v) / r for v, r in zip(per_t, rows)]})
    return out


def merge_target_paths(records: list, plan: CostPlan) -> list:
    """One path for separate mode (one path per target): step k joins every target's step k.

    A target whose path is shorter stays at its last step. ``costs`` are those of the union of
    the extractors chosen so far (the device must carry them all), ``costs_mean_per_target``
    the average over targets of each target's own cumulative costs; ``loo_mse`` is the mean of
    the per-target LOO MSEs.
    """
    names = {n: i for i, n in enumerate(plan.extractor_names)}
    merged, chosen, seen_f, seen_s = [], {}, {}, {}
    for k in range(max(len(r) for r in records)):
        added, ext, sensors, per_target, own = [], [], [], [], []
        for rec in records:
            entry = rec[min(k, len(rec) - 1)]
            per_target += entry["loo_mse_per_target"]
            own.append(list(entry["costs"].values()))
            if k < len(rec):
                added += _fresh(entry["added"], seen_f)
                ext += _fresh(entry["added_extractors"], chosen)
                sensors += _fresh(entry["added_sensors"], seen_s)
        kinds = list(records[0][0]["costs"])
        merged.append({
            "step": k + 1, "added": added, "added_extractors": ext, "added_sensors": sensors,
            "costs": plan.cost_dict(plan.totals_of([names[e] for e in chosen])),
            "costs_mean_per_target": dict(zip(kinds, np.mean(own, axis=0).tolist())),
            "loo_mse": float(np.mean(per_target)), "loo_mse_per_target": per_target})
    return merged


def _fresh(items, seen: dict) -> list:
    """The items not in ``seen`` (an insertion-ordered dict used as a set), now added to it."""
    out = [x for x in items if x not in seen]
    seen.update(dict.fromkeys(out))
    return out
