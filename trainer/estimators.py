"""scikit-learn estimators for budgeted multi-target greedy RLS feature selection."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from ._rls_math import ridge_weights
from .errors import TrainerError
from .selection import LAMBDA_GRID, Preprocessing, select_with_lambda

_DTYPES = {"float64": np.float64, "float32": np.float32}


class _GreedyRLSBase:
    """Shared fit logic: validation, the greedy path, weights in original units."""

    def __init__(self, budget=10, lam=None, fit_intercept=True, standardize=True,
                 dtype="float64"):
        self.budget = budget
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.standardize = standardize
        self.dtype = dtype

    def _check_params(self, n_samples, n_features):
        budget = self.budget
        if not isinstance(budget, numbers.Integral) or isinstance(budget, bool):
            raise TrainerError(f"budget={budget!r} must be an integer number of features")
        if budget < 1 or budget > n_features:
            raise TrainerError(
                f"budget={budget} is outside 1..{n_features} (n_features={n_features})")
        if self.lam is not None:
            if (not isinstance(self.lam, numbers.Real) or isinstance(self.lam, bool)
                    or not np.isfinite(self.lam) or self.lam <= 0):
                raise TrainerError(f"lam={self.lam!r} must be a finite number > 0 (or None)")
        if self.dtype not in _DTYPES:
            raise TrainerError(f"dtype={self.dtype!r} must be one of {sorted(_DTYPES)}")
        if n_samples < 2:
            raise TrainerError(f"{n_samples} sample(s) given; at least 2 are required")

    def _fit_targets(self, X, Y, progress=None):
        """Select features for the target matrix Y (n x t) and set every fitted attribute."""
        n, d = X.shape
        self._check_params(n, d)
        X = np.asarray(X, dtype=np.float64)
        prep = Preprocessing.fit(X, Y, self.fit_intercept, self.standardize)
        path, finals = select_with_lambda(X, Y, self.budget, self.lam, prep,
                                          dtype=_DTYPES[self.dtype], progress=progress)
        sel = np.asarray(path.selected, dtype=np.intp)
        Xs = (X[:, sel] - prep.x_mean[sel]) / prep.x_scale[sel]
        W = ridge_weights(Xs, Y - prep.y_mean, path.lam)
        self.selected_ = sel
        self.lam_ = path.lam
        self.loo_path_ = np.asarray(path.loo_sse) / Y.size
        self.lam_loo_ = (np.array([finals[v] for v in LAMBDA_GRID]) / Y.size
                         if self.lam is None else np.asarray([path.loo_sse[-1] / Y.size]))
        self.x_mean_ = prep.x_mean
        self.x_scale_ = prep.x_scale
        self.coef_ = W / prep.x_scale[sel][:, None]
        self.intercept_ = prep.y_mean - prep.x_mean[sel] @ self.coef_
        return self

    def _get_support_mask(self):
        check_is_fitted(self, "selected_")
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.selected_] = True
        return mask

    def _scores(self, X):
        check_is_fitted(self, "selected_")
        X = validate_data(self, X, reset=False)
        return np.asarray(X, dtype=np.float64)[:, self.selected_] @ self.coef_ + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


class GreedyRLS(_GreedyRLSBase, SelectorMixin, RegressorMixin, BaseEstimator):
    """Budgeted multi-target feature selection by greedy regularized least squares.

    At every step the feature whose addition gives the lowest leave-one-out (LOO) squared error,
    summed over all targets, is added (Naula et al. 2014, Algorithm 2); LOO errors come in closed
    form from Sherman-Morrison updates, so ``budget`` steps cost O(budget n d t).

    Parameters
    ----------
    budget : int, default=10
        Number of features to select (1 <= budget <= n_features).
    lam : float or None, default=None
        Ridge parameter; None chooses it by LOO error at the full budget over 2^-15 ... 2^15.
    fit_intercept : bool, default=True
        Centre X and Y with training means (see :class:`trainer.selection.Preprocessing`).
    standardize : bool, default=True
        Scale each feature to unit standard deviation before selection; weights are reported
        in original feature units either way.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the n x d working arrays (float32 halves memory for large data).

    Attributes
    ----------
    selected_ : ndarray of shape (budget,)
        Selected feature indices in selection order.
    loo_path_ : ndarray of shape (budget,)
        LOO mean squared error over all n*t entries after each step.
    lam_ : float
        The ridge parameter used.
    lam_loo_ : ndarray
        Final LOO MSE for each grid value (when ``lam`` is None), else for ``lam``.
    coef_ : ndarray of shape (budget, n_targets)
        Weights of the selected features in original units.
    intercept_ : ndarray of shape (n_targets,)
    """

    def fit(self, X, y, progress=None):
        """Select ``budget`` features for the targets ``y`` and fit the ridge model on them."""
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True,
                             dtype=np.float64)
        Y = np.asarray(y, dtype=np.float64)
        self._y_1d = Y.ndim == 1
        return self._fit_targets(X, Y.reshape(len(Y), -1), progress)

    def predict(self, X):
        """Predicted targets: X[:, selected_] @ coef_ + intercept_."""
        scores = self._scores(X)
        return scores.ravel() if self._y_1d else scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class GreedyRLSClassifier(_GreedyRLSBase, SelectorMixin, ClassifierMixin, BaseEstimator):
    """Greedy RLS selection for multi-label ({0,1} indicator y) or multi-class (1-D y) data.

    Labels are encoded +1/-1 (one column per label, or one-hot per class, two columns for a
    binary problem) and regressed as in :class:`GreedyRLS`. ``decision_function`` returns the
    scores; ``predict`` turns a multi-label score > 0 into label 1 and a multi-class argmax into
    the class. Parameters and attributes are those of :class:`GreedyRLS`, plus ``classes_`` and
    ``task_`` ("multilabel" or "multiclass").
    """

    def fit(self, X, y, progress=None):
        """Encode the labels as +1/-1 targets and select ``budget`` features for them."""
        X, y = validate_data(self, X, y, multi_output=True, dtype=np.float64, y_numeric=False)
        if type_of_target(y) == "multilabel-indicator":
            Y = self._encode_multilabel(np.asarray(y))
        else:
            y = column_or_1d(y, warn=True)
            check_classification_targets(y)
            Y = self._encode_multiclass(y)
        return self._fit_targets(X, Y, progress)

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
        return np.where(y == 1, 1.0, -1.0)

    def _encode_multiclass(self, y):
        classes, index = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise TrainerError(
                f"y has only one class ({classes[0]!r}); a classifier needs at least 2")
        self.task_ = "multiclass"
        self.classes_ = classes
        Y = -np.ones((y.size, classes.size))
        Y[np.arange(y.size), index] = 1.0
        return Y

    def decision_function(self, X):
        """Scores (n x labels/classes); for a binary problem the (n,) margin of classes_[1]."""
        scores = self._scores(X)
        if self.task_ == "multiclass" and self.classes_.size == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X):
        """Labels: multi-label score > 0 (0/1 matrix); multi-class argmax (classes_)."""
        scores = self._scores(X)
        if self.task_ == "multilabel":
            return (scores > 0).astype(int)
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags
