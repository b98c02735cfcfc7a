"""Input checks shared by the estimators: sample groups, targets with NaN, Dask inputs."""

from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.utils.validation import check_array, check_consistent_length, validate_data

from ..errors import TrainerError
from .costs import build_plan
from .lam_search import LAM_SEARCHES
from .loop import STRATEGIES

DTYPES = ("float64", "float32")
MODES = ("joint", "separate")
BACKENDS = ("local", "dask")


def is_distributed_input(X) -> bool:
    """True for inputs only the Dask backend takes: Dask collections and shard tables."""
    return hasattr(X, "__dask_graph__") or hasattr(X, "partition_specs")


def check_groups(groups, n_samples: int):
    """Validated sample group ids (n,) or None; raises :class:`TrainerError`."""
    if groups is None:
        return None
    groups = np.asarray(groups)
    if groups.ndim != 1 or groups.shape[0] != n_samples:
        raise TrainerError(f"groups has shape {groups.shape}; expected ({n_samples},), one id "
                           f"per sample")
    if groups.dtype.kind == "f" and np.isnan(groups).any():
        raise TrainerError(f"groups holds NaN in row {int(np.flatnonzero(np.isnan(groups))[0])}")
    try:
        n_groups = np.unique(groups).size
    except TypeError:
        raise TrainerError("groups must hold comparable ids (all numbers or all strings)") from None
    if n_groups < 2:
        raise TrainerError(f"groups has {n_groups} distinct value(s); leave-group-out needs "
                           f"at least 2")
    return groups


def validate_targets_allow_nan(est, X, y):
    """(X, y) validated as sklearn does, except that y may hold NaN (missing targets)."""
    if y is not None:
        y_arr = check_array(y, ensure_2d=False, ensure_all_finite="allow-nan", dtype=np.float64,
                            input_name="y")
        if np.isnan(y_arr).any():
            X = validate_data(est, X, dtype=np.float64)
            check_consistent_length(X, y_arr)
            return X, y_arr
    return validate_data(est, X, y, multi_output=True, y_numeric=True, dtype=np.float64)


def check_params(est, n_samples, n_features):
    """Validate the estimator parameters against the data shape; returns the cost plan."""
    names = getattr(est, "feature_names_in_", None)
    plan = build_plan(
        n_features, feature_names=None if names is None else list(names),
        extractors=est.extractors, extractor_costs=est.extractor_costs,
        extractor_sensors=est.extractor_sensors, sensor_costs=est.sensor_costs,
        max_sensors=est.max_sensors, max_cost=est.max_cost, max_energy=est.max_energy,
        max_time=est.max_time, max_ram=getattr(est, "max_ram", None),
        max_flash=getattr(est, "max_flash", None))
    budget, n_ext = est.budget, plan.n_extractors
    what = "n_extractors" if est.extractors is not None else "n_features"
    if budget is not None:
        if not isinstance(budget, numbers.Integral) or isinstance(budget, bool):
            raise TrainerError(f"budget={budget!r} must be an integer number of "
                               f"{'extractors' if est.extractors is not None else 'features'}"
                               f" (or None)")
        if budget < 1 or budget > n_ext:
            raise TrainerError(f"budget={budget} is outside 1..{n_ext} ({what}={n_ext})")
    if est.lam is not None:
        if (not isinstance(est.lam, numbers.Real) or isinstance(est.lam, bool)
                or not np.isfinite(est.lam) or est.lam <= 0):
            raise TrainerError(f"lam={est.lam!r} must be a finite number > 0 (or None)")
    if est.dtype not in DTYPES:
        raise TrainerError(f"dtype={est.dtype!r} must be one of {sorted(DTYPES)}")
    if est.mode not in MODES:
        raise TrainerError(f"mode={est.mode!r} must be one of {MODES}")
    if est.strategy not in STRATEGIES:
        raise TrainerError(f"strategy={est.strategy!r} must be one of {STRATEGIES}")
    lam_search = getattr(est, "lam_search", "path")
    if lam_search not in LAM_SEARCHES:
        raise TrainerError(f"lam_search={lam_search!r} must be one of {LAM_SEARCHES}")
    if n_samples < 2:
        raise TrainerError(f"{n_samples} sample(s) given; at least 2 are required")
    backend = getattr(est, "backend", "local")
    if backend not in BACKENDS:
        raise TrainerError(f"backend={backend!r} must be one of {BACKENDS}")
    parts = getattr(est, "n_partitions", None)
    if parts is not None and (not isinstance(parts, numbers.Integral) or parts < 1):
        raise TrainerError(f"n_partitions={parts!r} must be an integer >= 1 (or None)")
    return plan


def check_magnitudes(X, Y) -> None:
    """Refuse values whose squares, summed over the rows (and targets), overflow float64: the
    criterion and the caches sum them (a target of 1e156 gave an IndexError deep in the
    selection). The limit is sqrt(float64 max / entries)."""
    for what, values in (("target", Y), ("feature", X)):
        values = np.asarray(values, dtype=np.float64)
        if values.size == 0:
            continue
        # fmax/fmin skip NaN and read the values in place (no n x d temporaries)
        ends = np.array([np.fmax.reduce(values, axis=None), np.fmin.reduce(values, axis=None)])
        biggest = float(np.nan_to_num(np.abs(ends), nan=0.0).max())
        limit = math.sqrt(np.finfo(np.float64).max / max(values.size, 1)) / 4
        if biggest > limit:
            raise TrainerError(f"{what} values reach {biggest:.3g}; squared and summed over "
                               f"{values.size} entries they overflow float64 (limit "
                               f"{limit:.3g}): rescale the {what}s")


def check_targets(Y, names=None) -> None:
    """Refuse a target (or label) column with fewer than two observed values, or a single
    distinct one: its criterion is 0 whatever is selected (a constant label gave 66 features
    with LOO error 0). ``names`` (one per column) name it, else "target column q". Raises
    :class:`TrainerError` before any computation."""
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y.reshape(len(Y), -1)
    seen = ~np.isnan(Y)
    counts = seen.sum(axis=0)
    if Y.size and counts.min() < 2:
        q = int(np.argmin(counts))
        name = f"target {names[q]!r}" if names is not None else f"target column {q}"
        raise TrainerError(f"{name} has {int(counts[q])} observed value(s); at least 2 are "
                           f"required")
    check_target_range(np.min(Y, axis=0, initial=np.inf, where=seen),
                       np.max(Y, axis=0, initial=-np.inf, where=seen), names)


def check_target_range(lo, hi, names=None) -> None:
    """:func:`check_targets` from each target's (min, max) over its observed rows (sums a
    row store can give without moving rows)."""
    for q, (a, b) in enumerate(zip(np.asarray(lo).tolist(), np.asarray(hi).tolist())):
        if a == b:
            name = f"target {names[q]!r}" if names is not None else f"target column {q}"
            raise TrainerError(f"{name} has a single value ({a:g}) on every row: nothing can "
                               f"be learnt from it (its criterion is 0 for any selection); "
                               f"drop it or fix the data")


def fold_rows(n_rows: int, groups=None) -> int:
    """Training rows of the smallest fold of the criterion: n - 1 for LOO, n minus the
    largest group with ``groups``."""
    if groups is None:
        return n_rows - 1
    return n_rows - int(np.unique(np.asarray(groups), return_counts=True)[1].max())


def check_budget(n_rows_per_fold: int, budget, *, fit_intercept: bool = True,
                 what: str = "features", where: str = "the smallest training fold") -> None:
    """Refuse a ``budget`` the data cannot support: more ``what`` than rows in a fold.

    A fold of ``n_rows_per_fold`` training rows (:func:`fold_rows`) supports at most that many
    features, one fewer with an intercept (it takes one degree of freedom). ``budget`` None
    (cost budgets only) is not checked. Every extractor adds at least one feature, so an
    extractor budget is checked as that many features. Raises :class:`TrainerError` naming
    the budget and the limit, before any computation.
    """
    if budget is None:
        return
    limit = int(n_rows_per_fold) - int(bool(fit_intercept))
    if int(budget) > limit:
        extra = " after the intercept" if fit_intercept else ""
        raise TrainerError(f"budget={budget} {what} is more than {where} supports: "
                           f"{n_rows_per_fold} training rows, at most {max(limit, 0)} "
                           f"{what}{extra}; lower the budget or add rows")


def budget_unit(est) -> str:
    """What the estimator's ``budget`` counts: "extractors" or "features"."""
    return "extractors" if est.extractors is not None else "features"


def check_fit_data(est, Y, groups=None, names=None) -> None:
    """The checks of a local fit before any computation: :func:`check_targets` (Y: n x t, NaN
    = missing) and :func:`check_budget` against the smallest fold of the criterion (over the
    rows of the target with the fewest observed values)."""
    check_targets(Y, names)
    seen = ~np.isnan(Y)
    rows = int(seen.sum(axis=0).min()) if not seen.all() else Y.shape[0]
    check_budget(fold_rows(rows, groups), est.budget, fit_intercept=est.fit_intercept,
                 what=budget_unit(est))


def target_names(y):
    """Column names of a pandas y (DataFrame columns, a Series' name) for messages, else None."""
    if hasattr(y, "columns"):
        return [str(c) for c in y.columns]
    name = getattr(y, "name", None)
    return None if name is None or np.ndim(y) != 1 else [str(name)]
