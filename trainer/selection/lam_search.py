"""Choosing lambda: the exhaustive grid, or one greedy path steered along the grid.

``lam_search="grid"`` (the paper): one greedy run per value of the grid 2^-15 ... 2^15 and the
value whose own path ends with the lowest criterion. 31 runs.

``lam_search="path"`` (the default): for a *fixed* selected set S the criterion of every grid
lambda is exact and cheap (:func:`criterion_curve`: one SVD of the |S| selected columns,
:func:`sensorbudget.trainer.selection.rls_math.loo_sse_lambda_curve`; with sample groups or missing targets
one block update per lambda on those columns only). So:

1. *Steered run.* The greedy run starts at ``START`` and, at checkpoints (steps 1, 2, 3, 4, 6,
   8, 12, ... , geometric), computes the curve of its current set over ``WINDOW`` grid steps
   either side; when another lambda is lower by more than ``MOVE_RTOL`` the caches are rebuilt
   there (one block Woodbury update,
   :func:`sensorbudget.trainer.selection.loop.rebuild_blocks`) and the run goes on at that lambda.
2. *Confirming run.* lambda* = the argmin of the final set's curve (the steered run's last
   lambda when that is within ``MOVE_RTOL`` of it). If the steered run made every pick at
   lambda* it *is* the greedy path at lambda*; otherwise a plain greedy run at lambda* gives it. The result is always the greedy path of one grid lambda (as the grid
   would have it for that lambda), chosen by the exact criterion of the sets the search met.

Cost: one run plus the checkpoints' curves (each about one step) and the rebuilds (GEMMs of
O(n d |S|)), plus at most one more run: at most about 2.3 fixed-lambda runs
(``benchmarks/bench_lambda.py``). ``finals`` maps every grid lambda to the exact criterion
SSE of the final set at that lambda (what ``lam_loo_`` reports).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from . import rls_math
from .caches import intercept_offset, make_blocks
from .loop import LAMBDA_GRID, TIE_RTOL, greedy_select, run_strategies, select_with_lambda

LAM_SEARCHES = ("path", "grid")
#: Where the steered run starts (the middle of the grid).
START = 1.0
#: The steered run moves only when another lambda lowers its set's criterion by this much.
MOVE_RTOL = 1e-3
#: At a checkpoint the steered run looks this many grid steps to either side (a factor 2^8).
WINDOW = 8


def checkpoints(limit: int) -> set:
    """Steps after which the steered run looks at the curve: 1, 2, 3, 4, 6, 8, 12, 16, ..."""
    out, s = set(), 1
    while s <= limit:
        out.update((s, s + s // 2) if s >= 2 else (s,))
        s *= 2
    return {c for c in out if c <= limit}


def criterion_curve(X, Y, prep, selected, lams=LAMBDA_GRID, groups=None) -> np.ndarray:
    """The exact criterion SSE of ridge on the columns ``selected`` at every lambda in ``lams``.

    Plain LOO (no groups, every target observed): :func:`rls_math.loo_sse_lambda_curve` on the
    transformed columns (with the intercept refitted per held-out row when ``prep`` fits one), O(n s (s + t)) once plus O(n s min(s, t)) per lambda. Otherwise the
    selection's own caches on those s columns only (:func:`sensorbudget.trainer.selection.caches.make_blocks`
    and one block update per lambda), O(n s (s + t)) per lambda.
    """
    S = np.asarray(selected, dtype=np.intp)
    if groups is None and not np.isnan(Y).any():
        return rls_math.loo_sse_lambda_curve(prep.columns(X, S, np.float64), Y - prep.y_mean,
                                             lams, intercept_offset(prep, X.shape[0]))
    sub = replace(prep, x_mean=prep.x_mean[S], x_scale=prep.x_scale[S])
    XS = np.asarray(X[:, S], dtype=np.float64)
    J = np.arange(S.size)
    out = []
    for lam in lams:
        blocks = make_blocks(XS, Y, sub, np.float64, groups)
        for b in blocks:
            b.add(J, lam, XS)
        out.append(sum(b.sse() for b in blocks))
    return np.asarray(out)


def best_index(values: np.ndarray) -> int:
    """Index of the lowest value; near-ties (relative ``TIE_RTOL``) to the smaller lambda."""
    best = np.nanmin(values)
    return int(np.flatnonzero(values <= best + TIE_RTOL * abs(best))[0])


class Steering:
    """The ``steer`` callback of the steered run (see the module docstring): at checkpoint
    steps it returns the grid lambda with the lowest criterion for the current set when that
    beats the current lambda's by more than ``MOVE_RTOL``, else None. ``curves`` counts the
    curve evaluations."""

    def __init__(self, curve, lams, steps):
        self.curve, self.lams = curve, tuple(lams)
        self.at = checkpoints(steps - 1 if steps else 1 << 30)
        self.curves = 0

    def __call__(self, selected, lam):
        if len(selected) not in self.at:
            return None
        now = self.lams.index(lam)
        lo = max(0, now - WINDOW)
        window = self.lams[lo:now + WINDOW + 1]
        values = self.curve(selected, window)
        self.curves += 1
        i = best_index(values)
        return window[i] if values[i] < values[now - lo] * (1.0 - MOVE_RTOL) else None


def search_lambda(X, Y, budget, prep, *, dtype=np.float64, progress=None, plan=None,
                  strategy="error", groups=None, steps=None):
    """The "path" search of the module docstring for every choice rule of ``strategy``
    (the rule with the lower final criterion is kept, as at a fixed lambda).

    Returns (path, {lam: criterion SSE of the final set at lam}, info) where ``info`` says how
    lambda was chosen: method, start, moves of the steered run, greedy runs, curve evaluations.
    """
    lams = LAMBDA_GRID
    rules = run_strategies(plan, strategy)
    steps = steps or 1
    total = 2 * len(rules) * steps

    def curve(sel, values=lams):
        return criterion_curve(X, Y, prep, sel, values, groups)

    def ticker(base):
        return None if progress is None else (lambda step: progress(base + step, total))

    results = []
    for j, rule in enumerate(rules):
        steer = Steering(curve, lams, budget)
        kw = dict(dtype=dtype, plan=plan, strategy=rule, groups=groups)
        path = greedy_select(X, Y, budget, START, prep, progress=ticker(2 * j * steps),
                             steer=steer, **kw)
        values = curve(path.selected)
        star = lams[best_index(values)]
        if values[lams.index(path.lam)] <= values[lams.index(star)] / (1.0 - MOVE_RTOL):
            star = path.lam                  # within MOVE_RTOL: not worth another run
        moves = [(int(s), float(v)) for s, v in path.lam_moves]
        runs = 1
        if moves or star != path.lam:
            path = greedy_select(X, Y, budget, star, prep, progress=ticker((2 * j + 1) * steps),
                                 **kw)
            values = curve(path.selected)
            runs = 2
        elif progress is not None:
            progress((2 * j + 2) * steps, total)
        results.append((path, values, {"method": "path", "start": START, "moves": moves,
                                       "runs": runs, "curves": steer.curves + runs}))
    path, values, info = min(results, key=lambda r: r[0].loo_sse[-1])
    info["runs"] = sum(r[2]["runs"] for r in results)
    return path, dict(zip(lams, values.tolist())), info


def choose_lambda(X, Y, budget, lam, prep, *, lam_search="path", dtype=np.float64,
                  progress=None, plan=None, strategy="error", groups=None):
    """The greedy path and its lambda: at ``lam`` when given, else by ``lam_search`` ("path":
    :func:`search_lambda`; "grid": every grid value, :func:`sensorbudget.trainer.selection.loop.
    select_with_lambda`). A row source X (Dask rows, ``Y`` None) always uses the grid.
    Returns (path, {lam: final criterion SSE}, info: how lambda was chosen)."""
    if lam_search not in LAM_SEARCHES:
        raise ValueError(f"lam_search={lam_search!r} must be one of {LAM_SEARCHES}")
    if lam is None and lam_search == "path" and Y is not None:
        steps = budget if budget is not None else (plan.n_extractors if plan is not None
                                                   else X.shape[1])
        with rls_math.single_threaded_blas():      # small SVDs: 2 BLAS threads cost 100x
            return search_lambda(X, Y, budget, prep, dtype=dtype, progress=progress,
                                 plan=plan, strategy=strategy, groups=groups, steps=steps)
    path, finals = select_with_lambda(X, Y, budget, lam, prep, dtype=dtype, progress=progress,
                                      plan=plan, strategy=strategy, groups=groups)
    method = "fixed" if lam is not None else "grid"
    runs = len(finals) * len(run_strategies(plan, strategy))
    return path, finals, {"method": method, "runs": runs}


def lam_choice(est) -> dict:
    """How lambda was chosen (``est.lam_search_``; per target in separate mode) as JSON:
    ``method`` fixed / grid / path, greedy ``runs`` and, for a search, the grid's
    criterion MSE per lambda (``lam_loo_``)."""
    info = getattr(est, "lam_search_", None)
    if info is None:
        return {"method": "fixed" if getattr(est, "lam", None) is not None else "grid"}
    infos = info if isinstance(info, list) else [info]
    out = {"method": infos[0]["method"], "runs": int(sum(i["runs"] for i in infos))}
    if out["method"] == "path":
        out["moves"] = [[[int(s), float(v)] for s, v in i.get("moves", [])] for i in infos]
        out["moves"] = out["moves"][0] if len(infos) == 1 else out["moves"]
    if out["method"] != "fixed":
        out["grid"] = [float(v) for v in LAMBDA_GRID]
        out["criterion_mse"] = np.asarray(est.lam_loo_, dtype=np.float64).tolist()
    return out
