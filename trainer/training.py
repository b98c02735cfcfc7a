"""Budgeted selection of a :class:`~sensorbudget.trainer.dataset.Dataset` into a
:class:`~sensorbudget.trainer.bundle.model.Bundle`: what ``sensorbudget train`` runs
(:func:`sensorbudget.trainer.api.train` is its entry point).

The targets are encoded once here (:func:`estimator_for_task`): regression as they are,
multi-label 0/1 labels as +1/-1 scores, multi-class one column of class values (numbers or
text) or one-hot 0/1 columns named by class.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from .errors import DataError, TrainerError
from .tasks import LABEL_MAP, TASK_NAMES, Task, check_binary, encode_labels

#: the ``task`` choices of train (``auto``: what the data suggest; ``binary``: multi-class with
#: at most 2 classes)
TASKS = ("auto", *TASK_NAMES)
COST_BUDGETS = ("max_sensors", "max_cost", "max_energy", "max_time")


def check_budget(budget, **cost_budgets) -> None:
    """TrainerError unless a count ``budget`` >= 1 or a cost budget is given."""
    if budget is not None and budget <= 0:
        raise TrainerError(f"--budget={budget} must be at least 1")
    if budget is None and all(cost_budgets.get(k) is None for k in COST_BUDGETS):
        raise TrainerError("give --budget K or a cost budget (--max-cost, --max-sensors, "
                           "--max-energy, --max-time)")


def resolve_task(task, data) -> str:
    """The stored task name of ``task`` (a :class:`Task`, its name, or ``auto``: the data's);
    ``binary`` is ``multiclass`` once the data are checked to hold at most 2 classes."""
    if task in (None, "auto"):
        return data.task
    task = Task.of(str(task))
    check_binary(task, data.Y, data.target_names, getattr(data, "class_values", None))
    return task.stored


def cost_kwargs(feature_set=None, *, max_sensors=None, max_cost=None, max_energy=None,
                max_time=None, mode="joint", strategy="auto", unit="feature") -> dict:
    """GreedyRLS keyword arguments of the budgets, with the sensors' prices, energies and
    shared extractors when the windows' ``feature_set`` knows its sensors
    (:func:`~sensorbudget.trainer.sensing.sensor_budget.cost_kwargs_from_feature_set`);
    budgets on sensors, energy or time without them are a TrainerError."""
    kwargs = {"max_sensors": max_sensors, "max_cost": max_cost, "max_energy": max_energy,
              "max_time": max_time, "mode": mode, "strategy": strategy}
    fs = feature_set
    if fs is not None and getattr(fs, "sensors", None):
        from .sensing.sensor_budget import cost_kwargs_from_feature_set

        kwargs.update(cost_kwargs_from_feature_set(fs, unit=unit))
        return kwargs
    needs = [f"--{n.replace('_', '-')}" for n in ("max_sensors", "max_energy", "max_time")
             if kwargs[n] is not None]
    if unit != "feature":
        needs.append(f"--unit {unit}")
    if needs:
        raise TrainerError(f"{needs[0]} needs sensor information: give --sensors "
                           f"sensors.toml (or a feature table built from one)")
    return kwargs


def estimator_for_task(task, Y, targets, class_values=None):
    """(unfitted estimator, y, target names, extra model.json keys) for a task.

    Multi-label: labels as +1/-1 scores (what GreedyRLSClassifier does, for any L >= 1).
    Multi-class: one target column of class values, or one-hot 0/1 columns named by class.
    """
    from . import GreedyRLS, GreedyRLSClassifier
    from .selection.validation import check_targets

    if task != "multiclass":
        check_targets(Y, targets)            # a single-valued target, named (issue 16)
    if task == "regression":
        return GreedyRLS(), Y, targets, {}
    if task == "multilabel":
        for j, name in enumerate(targets):
            values = np.unique(Y[:, j][~np.isnan(Y[:, j])])
            if not np.isin(values, (0.0, 1.0)).all():
                bad = values[~np.isin(values, (0.0, 1.0))][0]
                raise DataError(f"task multilabel needs 0/1 labels; target column {name!r} "
                                f"holds {bad:g} ({values.size} distinct values): use --task "
                                f"regression")
        return GreedyRLS(), encode_labels(Y), targets, {}
    if Y.shape[1] == 1:
        values = np.unique(Y[:, 0][~np.isnan(Y[:, 0])])
        if (values != np.round(values)).any() or values.size > max(20, len(Y) // 2):
            raise DataError(f"task multiclass needs class values; target column "
                            f"{targets[0]!r} holds {values.size} distinct values, e.g. "
                            f"{values[-1]:g}: use --task regression")
        return GreedyRLSClassifier(), Y[:, 0], targets, {}
    if not np.isin(Y, (0.0, 1.0)).all() or not (Y.sum(axis=1) == 1).all():
        raise DataError(f"multiclass with {Y.shape[1]} target columns needs one-hot 0/1 rows")
    names = np.asarray(targets)
    return GreedyRLSClassifier(), names[Y.argmax(axis=1)], targets, {}


def dask_estimator_for_task(task, data):
    """(unfitted estimator, shard table, target names, extra model.json keys) for shards.

    Multi-label: 0/1 labels become +1/-1 on the workers, as without Dask. Multi-class: the
    classes must be one-hot 0/1 columns (a ``sensorbudget features`` table has them),
    regressed as +1/-1 like :class:`~sensorbudget.trainer.GreedyRLSClassifier` does; the
    bundle's classes are the column names, sorted as the classifier sorts its classes.
    """
    from dataclasses import replace

    from . import GreedyRLS

    if task == "regression":
        return GreedyRLS(), data.X, data.target_names, {}
    if task == "multilabel":
        return (GreedyRLS(), replace(data.X, target_map=LABEL_MAP, check="binary"),
                data.target_names, {})
    if len(data.target_names) < 2:
        raise DataError("--dask takes multi-class targets as one-hot 0/1 columns, one per "
                        "class; this table has a single class-value column")
    classes = sorted(data.target_names)     # the order GreedyRLSClassifier gives (np.unique)
    shards = replace(data.X, options={**data.X.options, "targets": classes},
                     target_map=LABEL_MAP, check="onehot")
    return GreedyRLS(), shards, classes, {"classes": classes}


def fit_on_dask(est, X, client, progress=None) -> dict:
    """Fit ``est`` on the shards ``X`` on the Dask cluster ``client`` (an address, a scheduler
    file, ``local[:N]`` or a Client:
    :func:`~sensorbudget.trainer.distributed.dask_data.open_client`).

    Returns the ``bundle_contents`` keywords that stand in for the training matrix, which is
    never gathered: ``x_range`` (min and max of each selected column over all rows) and
    ``n_samples``.
    """
    from .distributed.dask_data import open_client

    with open_client(client) as opened:
        est.set_params(backend="dask", client=opened)
        try:
            est.fit(X, None, progress=progress)
        finally:
            est.set_params(client=None)          # do not keep a closed client in the model
    return {"x_range": est.selected_range_, "n_samples": int(sum(est.distributed_["rows"]))}


def fit_compressed(est, X, y, task, energy, extra) -> None:
    """Fit with the selection on SVD-compressed targets (``compress_labels``)."""
    if task == "multiclass":
        raise TrainerError("--compress-labels applies to regression and multi-label targets")
    from .label_compression import fit_on_compressed_labels

    fit_on_compressed_labels(est, X, y, energy)
    extra["label_compression"] = est.label_compression_


def decision_for(est, task, X, y, groups, rule, platt, on_dask) -> dict | None:
    """The bundle's ``decision`` entry (multi-label: thresholds chosen by ``rule`` on the
    final model's held-out scores), or None; TrainerError for options that do not apply."""
    if task != "multilabel":
        if rule is not None or platt:
            raise TrainerError(f"--threshold/--platt apply to multi-label targets, not task "
                               f"{task}")
        return None
    if on_dask:
        if rule is not None or platt:
            raise TrainerError("--threshold/--platt need the rows in memory (not --dask)")
        return None
    from .evaluation.calibration import decision_entry, heldout_predictions

    scores = heldout_predictions(est, X, y, groups)
    return decision_entry(scores, (y > 0).astype(int), rule or "f1", platt=platt,
                          source=str(getattr(est, "criterion_", "loo")))


def warn_overlap(data, groups) -> None:
    """Warn when the training windows overlap and no grouping is in force."""
    fs = data.feature_set
    if fs is not None and groups is None and fs.hop < fs.window:
        from .evaluation.folds import overlap_warning

        overlap_warning(fs.window, fs.hop, "train")


@contextlib.contextmanager
def target_scale_warning(task, y, targets, standardize_targets):
    """Warn once, naming the targets, when regression targets' spreads differ >10x without
    ``standardize_targets`` (:func:`~sensorbudget.trainer.target_scaling.warn_scales`); the
    estimator's own unnamed warning is silenced inside."""
    from . import target_scaling

    if task == "regression" and not standardize_targets:
        target_scaling.warn_scales(y, targets)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", target_scaling.TargetScaleWarning)
        yield


def class_names(classes) -> list:
    """The bundle's class names of the fitted classes (numbers as ``%g``)."""
    return [f"{c:g}" if isinstance(c, float) else str(c) for c in classes]
