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
        max_time=est.max_time)
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
        biggest = float(np.nanmax(np.abs(values))) if not np.isnan(values).all() else 0.0
        limit = math.sqrt(np.finfo(np.float64).max / max(values.size, 1)) / 4
        if biggest > limit:
            raise TrainerError(f"{what} values reach {biggest:.3g}; squared and summed over "
                               f"{values.size} entries they overflow float64 (limit "
                               f"{limit:.3g}): rescale the {what}s")
