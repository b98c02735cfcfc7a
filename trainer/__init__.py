"""Budgeted multi-target feature selection with greedy regularized least squares (greedy RLS).

- :mod:`~sensorbudget.trainer.estimators`: :class:`GreedyRLS`, :mod:`~sensorbudget.trainer.classifier`:
  :class:`GreedyRLSClassifier` (scikit-learn estimators); :mod:`~sensorbudget.trainer.ranking`:
  :class:`GreedyRankRLS`;
- :mod:`~sensorbudget.trainer.selection`: the one greedy loop, the cost model and the closed-form math;
- :mod:`~sensorbudget.trainer.sensing`: recordings, ``sensors.toml``, extractors, feature tables;
- :mod:`~sensorbudget.trainer.evaluation`: nested cross-validation, methods, baselines, metrics, reports;
- :mod:`~sensorbudget.trainer.distributed`: the same selection with the rows on Dask workers;
- :mod:`~sensorbudget.trainer.bundle`: the model bundle and all-or-nothing output files;
- :mod:`~sensorbudget.trainer.api`: the pipeline as Python functions (features, train,
  evaluate, predict) with typed results; :mod:`~sensorbudget.trainer.dataset`: ``Dataset``,
  the one loader (tables, feature NPZ, recordings; shards:
  :mod:`~sensorbudget.trainer.dataset_shards`); :mod:`~sensorbudget.trainer.training` (what
  train runs), :mod:`~sensorbudget.trainer.results` (``Evaluation``),
  :mod:`~sensorbudget.trainer.predictions`, :mod:`~sensorbudget.trainer.tasks` (``Task``),
  :mod:`~sensorbudget.trainer.text` (terminal- and spreadsheet-safe text);
- :mod:`~sensorbudget.trainer.data` (feature tables from CSV/ARFF/NPZ;
  :mod:`~sensorbudget.trainer.table`: the checks they end with),
  :mod:`~sensorbudget.trainer.label_compression`
  (many labels), :mod:`~sensorbudget.trainer.plots` (Pareto plot), :mod:`~sensorbudget.trainer.target_scaling`
  (standardised targets), :mod:`~sensorbudget.trainer.provenance` (is this the training data?),
  :mod:`~sensorbudget.trainer.errors`, :mod:`~sensorbudget.trainer.version`.
"""

from importlib import import_module

from .errors import BundleError, DataError, TrainerError

# The estimators import scikit-learn (about 0.9 s): they load on first use, so that importing a
# light module such as trainer.bundle (the CLI, firmware_gen) does not pay for it.
_LAZY = {"GreedyRLS": "estimators", "GreedyRLSClassifier": "classifier",
         "GreedyRankRLS": "ranking"}

__all__ = ["GreedyRLS", "GreedyRLSClassifier", "GreedyRankRLS", "TrainerError", "DataError",
           "BundleError"]


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
