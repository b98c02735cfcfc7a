"""The pipeline in Python: what the ``sensorbudget`` commands run, as typed functions.

Usage::

    import sensorbudget as sb

    data = sb.features("AirQualityUCI.csv", sensors="air_quality.sensors.toml")
    data.save("feats.npz")                      # the bytes 'sensorbudget features' writes
    bundle = sb.train(data, budget=8, max_cost=30)
    bundle.save("bundle")                       # the bytes 'sensorbudget train' writes
    sb.evaluate(data, budgets="2,4", folds=5).save("report")
    sb.predict(bundle, "new.csv").save("predictions.csv")

Every function returns a typed object with ``.save(path)``, writing exactly what the command
writes (the commands call ``.save``), and a ``.load(path)`` to read it back:
:class:`Dataset`, :class:`Bundle`, :class:`Evaluation`, :class:`Predictions`. ``data``
arguments are a :class:`Dataset` or a path read by :meth:`Dataset.load` with the keyword
options given (``sensors=``, ``targets=``, ``labels=``, ``groups=``, ``time_column=``, ...).
"""

from __future__ import annotations

from .bundle.model import Bundle
from .dataset import Dataset, as_dataset
from .errors import TrainerError
from .predictions import Predictions, predict
from .results import Evaluation, evaluate
from .tasks import Task
from .version import package_version

__all__ = ["features", "train", "evaluate", "predict", "Dataset", "Bundle", "Evaluation",
           "Predictions", "Task"]
_LOAD_KEYS = ("sensors", "groups", "window", "hop", "compute_target", "on_missing",
              "stream_format", "max_drop_fraction")


def features(recordings, sensors, *, window=None, hop=None, on_missing=None,
             compute_target=None, stream_format=None, progress=None,
             **recording_options) -> Dataset:
    """Window ``recordings`` (a CSV/NPZ stream, a .ts file, AirQualityUCI.csv or a folder)
    into the candidate features ``sensors`` (sensors.toml) describes: ``sensorbudget
    features``. ``recording_options``: ``time_column``, ``time_unit``, ``columns``,
    ``split_gaps``, ``recording_column``
    (:class:`~sensorbudget.trainer.sensing.streams.StreamFormat`)."""
    return Dataset.from_recordings(recordings, sensors, window=window, hop=hop,
                                   on_missing=on_missing, compute_target=compute_target,
                                   stream_format=stream_format, progress=progress,
                                   **recording_options)


def train(data, *, budget=None, task="auto", lam=None, lam_search="path",
          fit_intercept=True, standardize=True, standardize_targets=False, dtype="float64",
          compress_labels=None, max_sensors=None, max_cost=None, max_energy=None,
          max_time=None, mode="joint", strategy="auto", unit="feature", groups=None,
          threshold=None, platt=False, dask=None, ram_costs=None, progress=None,
          created_by=None, **data_options) -> Bundle:
    """Select features of ``data`` under the budgets and fit the model: ``sensorbudget train``.

    Parameters
    ----------
    data : Dataset or path (read with ``data_options``; ``dask``: a glob or folder of shards)
    budget : int or None, the number of extractors; ``max_sensors``, ``max_cost``,
        ``max_energy``, ``max_time``: cost budgets (at least one budget is needed)
    task : ``auto`` (the data's), or a :class:`Task` / its name
    groups : None, ``"recording"`` or a table's group column: leave-group-out criterion
    threshold, platt : multi-label decisions (``"f1"``, ``"precision:P"``, ``"zero"``)
    dask : None, or ``local[:N]``, a scheduler address or file, or a ``distributed.Client``
    ram_costs : callable(kwargs, feature_set, unit, n_targets) -> kwargs adding a board's RAM
        costs (``firmware_gen.memory``; the command's ``--board``)
    progress : callable(done, total) or None

    Returns
    -------
    Bundle, not yet written (:meth:`Bundle.save`); its ``meta`` is the final model.json.
    """
    from . import training as tr
    from .bundle.contents import bundle_contents

    costs = dict(max_sensors=max_sensors, max_cost=max_cost, max_energy=max_energy,
                 max_time=max_time)
    tr.check_budget(budget, **costs)
    if dask is not None and compress_labels is not None:
        raise TrainerError("--compress-labels does not apply with --dask")
    data = as_dataset(data, shards=dask is not None, groups=groups, **data_options)
    task = tr.resolve_task(task, data)
    if dask is not None:
        est, y, targets, extra = tr.dask_estimator_for_task(task, data)
    else:
        est, y, targets, extra = tr.estimator_for_task(task, data.Y, data.target_names)
    if standardize_targets and (task != "regression" or compress_labels is not None):
        raise TrainerError(f"--standardize-targets applies to regression targets without "
                           f"--compress-labels (task {task})")
    kwargs = tr.cost_kwargs(data.feature_set, mode=mode, strategy=strategy, unit=unit, **costs)
    if ram_costs is not None:
        kwargs = ram_costs(kwargs, data.feature_set, unit, len(targets))
    est.set_params(budget=budget, lam=lam, lam_search=lam_search,
                   standardize_targets=standardize_targets, fit_intercept=fit_intercept,
                   standardize=standardize, dtype=dtype, **kwargs)
    training_rows, group_ids = {"X": data.X}, None
    if dask is None:
        group_ids = data.group_ids(groups)
        tr.warn_overlap(data, group_ids)
    if dask is not None:
        training_rows = {"X": None, **tr.fit_on_dask(est, y, dask, progress=progress)}
    elif compress_labels is not None:
        tr.fit_compressed(est, data.X, y, task, compress_labels, extra)
    else:
        with tr.target_scale_warning(task, y, targets, standardize_targets):
            est.fit(data.X, y, groups=group_ids, progress=progress)
    decision = tr.decision_for(est, task, data.X, y if dask is None else None, group_ids,
                               threshold, platt, dask is not None)
    if task == "multiclass" and dask is None:
        column = data.class_column or (targets[0] if len(targets) == 1 else None)
        targets = tr.class_names(est.classes_.tolist())
        extra = {"classes": targets, **({"class_column": column} if column else {})}
    extractors, sensors, structure = data.structure()
    meta, arrays = bundle_contents(est, features=data.feature_names, targets=targets,
                                   task=task, extractors=extractors, sensors=sensors,
                                   created_by=created_by or f"sensorbudget {package_version()}",
                                   extra={**structure, **extra, "data": data.source},
                                   decision=decision, **training_rows)
    if meta.get("multi_rate"):
        from .sensing.rates import with_chosen_rates

        meta = with_chosen_rates(meta)
    return Bundle.from_contents(meta, arrays)
