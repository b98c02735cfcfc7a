"""Defaults of an evaluation that run on any valid dataset: budgets from the data's size and
methods that support the budgets given.

- Budgets: counts 1, 2, 4, ... (powers of two) up to the cap
  ``min(units, rows // 2)``, the cap included, where ``units`` are the selection units
  (features, or extractors with extractor groups) and ``rows`` the rows of the smallest outer
  training fold. A fixed fraction such as ``high`` (80 % of the units) exceeds the rows of a
  fold when there are about as many features as rows; half the rows keeps every ridge fit
  over-determined enough for the LOO choice of lambda to mean something.
- Methods: greedy-joint and greedy-separate always; mtlasso only with count/fraction budgets
  and single-feature units (it selects single features and cannot be steered to a price,
  energy, time or sensor limit); ranking: greedy-rank and greedy-joint. Each method left out
  gets a note saying why.
"""

from __future__ import annotations

from .folds import choose_split, fold_classes, make_split
from .methods import Budget, Setup, _plan

DEFAULT_METHODS = ("greedy-joint", "greedy-separate", "mtlasso")
RANKING_METHODS = ("greedy-rank", "greedy-joint")


def smallest_training_fold(data, folds: int, split: str, seed: int) -> int:
    """Rows of the smallest outer training fold of ``data`` (an ``EvalData``) with the split
    that :func:`sensorbudget.trainer.evaluation.protocol.evaluate` makes."""
    kind = choose_split(split, folds, data.groups, data.window_start)
    splits = make_split(kind, len(data.X), folds, seed, data.groups, data.window_start,
                        data.window, fold_classes(data.Y, data.task))
    return min(len(train) for train, _ in splits)


def power_of_two_counts(cap: int) -> list:
    """[1, 2, 4, ..., cap]: the powers of two below ``cap`` (>= 1), then ``cap`` itself."""
    cap = max(1, int(cap))
    out, k = [], 1
    while k < cap:
        out.append(k)
        k *= 2
    return out + [cap]


def default_budgets(data, setup: Setup, folds: int, split: str = "auto") -> tuple:
    """(budgets, note): count budgets :func:`power_of_two_counts` of
    ``min(units, rows // 2)`` (module notes) and one line saying how they were chosen."""
    units = _plan(setup, data.X.shape[1]).n_extractors
    rows = smallest_training_fold(data, folds, split, setup.seed)
    cap = min(units, rows // 2)
    budgets = [Budget("count", k, str(k)) for k in power_of_two_counts(cap)]
    what = "extractors" if units < data.X.shape[1] else "features"
    note = (f"budgets {','.join(b.label for b in budgets)} (default: powers of two up to "
            f"min({units} {what}, {rows // 2} = half the {rows} rows of the smallest training "
            f"fold))")
    return budgets, note


def default_methods(task: str, budgets, setup: Setup, n_features: int) -> tuple:
    """(method names, notes) for ``task``: :data:`DEFAULT_METHODS` (ranking:
    :data:`RANKING_METHODS`) without those that cannot run at ``budgets``, each with a note."""
    if task == "ranking":
        return list(RANKING_METHODS), []
    methods, notes = list(DEFAULT_METHODS), []
    costs = [b.label for b in budgets if b.kind not in ("count", "fraction")]
    grouped = _plan(setup, n_features).n_extractors < n_features
    if costs or grouped:
        methods.remove("mtlasso")
        why = (f"cost budget {costs[0]!r}" if costs
               else "extractor groups (it selects single features)")
        notes.append(f"mtlasso left out of the default methods: it does not support {why}")
    return methods, notes
