"""GreedyRLSClassifier: greedy RLS selection for multi-label and multi-class (and binary) labels,
deciding by the one rule of every surface (:func:`sensorbudget.trainer.bundle.decision.decide_scores`)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import column_or_1d, validate_data

from .bundle.decision import decide_scores, platt_probabilities
from .errors import TrainerError
from .estimators import _GreedyRLSBase
from .selection.validation import is_distributed_input
from .tasks import encode_labels

__all__ = ["GreedyRLSClassifier"]


class GreedyRLSClassifier(_GreedyRLSBase, SelectorMixin, ClassifierMixin, BaseEstimator):
    """Greedy RLS selection for multi-label ({0,1} indicator y) or multi-class (1-D y) data.

    Labels are encoded +1/-1 (one column per label, or one-hot per class, two columns for a
    binary problem) and regressed as in :class:`GreedyRLS`. ``decision_function`` returns the
    scores; ``predict`` applies the one decision rule of every surface
    (:func:`sensorbudget.trainer.bundle.decision.decide_scores`): a multi-label label is on when its score
    is > its threshold (``thresholds_``), a multi-class prediction is the argmax class.
    Parameters and attributes are those of :class:`GreedyRLS`, plus:

    Parameters
    ----------
    threshold : {"f1", "zero"}, "precision:P" or float, default="f1"
        Multi-label decisions, as ``sensorbudget train --threshold``: per label, the threshold
        maximising F1 on the final model's held-out (LOO or leave-group-out) scores ("f1"),
        the lowest reaching held-out precision P ("precision:P"), or one fixed number for
        every label ("zero" = 0.0: the sign). Chosen by
        :func:`sensorbudget.trainer.evaluation.calibration.decision_entry`, the function ``train`` uses.
    platt : bool, default=False
        Multi-label: also fit Platt probabilities on the same held-out scores
        (``predict_proba``).

    Attributes
    ----------
    classes_, task_ :
        The label indices or class values, and "multilabel" or "multiclass".
    thresholds_ : ndarray of shape (n_labels,)
        Multi-label only: the label thresholds ``predict`` applies.
    decision_ : dict
        Multi-label only: the bundle's ``decision`` entry (rule, thresholds and, chosen on
        held-out scores, their held-out F1 and with ``platt`` the coefficients);
        :func:`sensorbudget.trainer.bundle.model.bundle_contents` stores it, so the bundle decides as the
        estimator does.
    """

    def __init__(self, budget=10, lam=None, fit_intercept=True, standardize=True,
                 dtype="float64", extractors=None, extractor_costs=None,
                 extractor_sensors=None, sensor_costs=None, max_cost=None, max_sensors=None,
                 max_energy=None, max_time=None, mode="joint", strategy="auto",
                 backend="local", client=None, n_partitions=None, lam_search="path",
                 standardize_targets=False, threshold="f1", platt=False, max_ram=None,
                 max_flash=None):
        super().__init__(budget=budget, lam=lam, fit_intercept=fit_intercept,
                         standardize=standardize, dtype=dtype, extractors=extractors,
                         extractor_costs=extractor_costs, extractor_sensors=extractor_sensors,
                         sensor_costs=sensor_costs, max_cost=max_cost, max_sensors=max_sensors,
                         max_energy=max_energy, max_time=max_time, mode=mode,
                         strategy=strategy, backend=backend, client=client,
                         n_partitions=n_partitions, lam_search=lam_search,
                         standardize_targets=standardize_targets, max_ram=max_ram,
                         max_flash=max_flash)
        self.threshold = threshold
        self.platt = platt

    def fit(self, X, y, groups=None, progress=None):
        """Encode the labels as +1/-1 targets and select ``budget`` features for them
        (``groups``: leave-group-out criterion, as in :meth:`GreedyRLS.fit`), then choose the
        multi-label thresholds (``threshold``) on the held-out scores. A Dask array X is
        fitted on Dask workers (the labels y are encoded here)."""
        distributed = is_distributed_input(X)
        if distributed:
            if y is None:
                raise TrainerError("GreedyRLSClassifier needs the labels y; for sharded tables "
                                   "fit GreedyRLS on +1/-1 label columns")
            y = np.asarray(y.compute() if hasattr(y, "__dask_graph__") else y)
        else:
            X, y = validate_data(self, X, y, multi_output=True, dtype=np.float64,
                                 y_numeric=False)
        rule = _threshold_rule(self.threshold)
        if type_of_target(y) == "multilabel-indicator":
            Y = self._encode_multilabel(np.asarray(y))
        else:
            y = column_or_1d(y, warn=True)
            check_classification_targets(y)
            Y = self._encode_multiclass(y)
        if distributed:
            self._fit_on_cluster(X, Y, groups, progress)
        else:
            self._fit_targets(X, Y, progress, groups)
        if self.task_ == "multilabel":
            self._calibrate(Y > 0, rule)
        return self

    def _calibrate(self, Y01, rule) -> None:
        """``thresholds_`` and ``decision_`` from the held-out scores of the +1/-1 labels."""
        from .evaluation.calibration import decision_entry

        fixed = not isinstance(rule, str)
        entry = None
        if not fixed or self.platt:
            entry = decision_entry(self.heldout_predictions_, Y01.astype(int),
                                   "zero" if fixed else rule, platt=bool(self.platt),
                                   source=str(self.criterion_))
        if not fixed:
            self.thresholds_ = np.asarray(entry["thresholds"], dtype=np.float64)
            self.decision_ = entry
            return
        # one number for every label: no held-out F1 of other thresholds is kept with it
        self.thresholds_ = np.full(Y01.shape[1], float(rule))
        self.decision_ = {"rule": f"{float(rule):g}", "heldout": str(self.criterion_),
                          "thresholds": self.thresholds_.tolist(),
                          **({"platt": entry["platt"]} if entry is not None else {})}

    def _encode_multilabel(self, y):
        values = np.unique(y)
        if not np.isin(values, (0, 1)).all():
            bad = values[~np.isin(values, (0, 1))][0]
            raise TrainerError(f"multi-label y must be 0/1; found the value {bad!r}")
        for j in range(y.shape[1]):
            if np.unique(y[:, j]).size < 2:
                raise TrainerError(
                    f"label column {j} has only one class ({y[0, j]!r}); need both 0 and 1")
        self.task_ = "multilabel"
        self.classes_ = np.arange(y.shape[1])
        return encode_labels(y)                # checked 0/1 above

    def _encode_multiclass(self, y):
        classes, index = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise TrainerError(
                f"y has only one class ({classes[0]!r}); a classifier needs at least 2")
        self.task_ = "multiclass"
        self.classes_ = classes
        return encode_labels(np.eye(classes.size)[index.reshape(-1)])   # one-hot as +1/-1

    def decision_function(self, X):
        """Scores (n x labels/classes); for a binary problem the (n,) margin of classes_[1]."""
        scores = self._scores(X)
        if self.task_ == "multiclass" and self.classes_.size == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X):
        """Labels: multi-label 0/1 (score > ``thresholds_``); multi-class the argmax class
        (``classes_``), both by :func:`sensorbudget.trainer.bundle.decision.decide_scores`."""
        scores = self._scores(X)
        if self.task_ == "multilabel":
            return decide_scores(scores, "multilabel", self.thresholds_)
        return self.classes_[decide_scores(scores, "multiclass")]

    def _has_platt(self):
        return bool(getattr(self, "decision_", None) and self.decision_.get("platt"))

    @available_if(_has_platt)
    def predict_proba(self, X):
        """Multi-label Platt probabilities (n x labels) 1 / (1 + exp(-(a s + b))), fitted on
        the held-out scores (only with ``platt=True``)."""
        return platt_probabilities(self._scores(X), self.decision_["platt"])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags


def _threshold_rule(value):
    """"f1", "zero", "precision:P" (checked) or a finite float; the CLI's choices."""
    from .evaluation.calibration import parse_rule

    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        if not np.isfinite(value):
            raise TrainerError(f"threshold={value!r} must be a finite number, f1, zero or "
                               f"precision:P")
        return float(value)
    if not isinstance(value, str):
        raise TrainerError(f"threshold={value!r} must be f1, zero, precision:P or a number")
    parse_rule(value)
    return 0.0 if value.strip() == "zero" else value.strip()
