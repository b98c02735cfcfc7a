"""Multi-task lasso baseline with its regularization searched to hit a feature budget exactly.

The paper compares greedy RLS with the multi-task lasso (L1,2 / L1,inf regularization, Obozinski
et al.) at the same number of selected features. We use scikit-learn's ``MultiTaskLasso``
(L1,2, coordinate descent), objective

    (1 / (2 n)) ||Y_c - X_s W||_F^2 + alpha sum_i ||W_i||_2,

on standardized features X_s and centred targets Y_c (the greedy estimators' convention). The
number of non-zero rows of W grows as alpha falls from alpha_max = max_i ||x_i^T Y_c||_2 / n
(where W = 0). :func:`mtlasso_to_budget` bisects log(alpha) until exactly ``budget`` rows are
non-zero (``exact=True``). When no alpha gives exactly that many (the support jumps past it),
the smallest support larger than the budget is cut to its ``budget`` rows of largest norm and the
lasso is refitted on those features at the same alpha (``exact=False``). We do not interpolate
between budgets as the paper does; every reported point is a model with at most ``budget``
features.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import MultiTaskLasso

from ..errors import TrainerError


@dataclass
class LassoFit:
    """A multi-task lasso model on a feature subset, in original feature units.

    ``selected`` are feature indices ordered by decreasing weight-row norm, ``coef`` (k x t) and
    ``intercept`` (t,) give predictions X[:, selected] @ coef + intercept; ``alpha`` is the
    regularization used, ``n_nonzero`` the support size at that alpha before any cut, and
    ``exact`` tells whether the search hit the budget without cutting.
    """

    selected: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    alpha: float
    n_nonzero: int
    exact: bool

    def predict(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        return X[:, self.selected] @ self.coef + self.intercept


def _standardize(X, Y, fit_intercept, standardize):
    x_mean = X.mean(axis=0) if fit_intercept else np.zeros(X.shape[1])
    y_mean = Y.mean(axis=0) if fit_intercept else np.zeros(Y.shape[1])
    scale = X.std(axis=0) if standardize else np.ones(X.shape[1])
    scale = np.where(scale > 1e-12 * np.maximum(1.0, np.abs(x_mean)), scale, 1.0)
    return (X - x_mean) / scale, Y - y_mean, x_mean, scale, y_mean


class _Lasso:
    """One warm-started MultiTaskLasso reused along the alpha search."""

    def __init__(self, Xs, Yc, max_iter, tol):
        self.Xs, self.Yc = Xs, Yc
        self.model = MultiTaskLasso(fit_intercept=False, warm_start=True, max_iter=max_iter,
                                    tol=tol)

    def fit(self, alpha, columns=None) -> np.ndarray:
        """Weights W (d x t) at ``alpha`` (zero outside ``columns`` when given)."""
        X = self.Xs if columns is None else self.Xs[:, columns]
        model = self.model if columns is None else MultiTaskLasso(
            fit_intercept=False, max_iter=self.model.max_iter, tol=self.model.tol)
        model.set_params(alpha=alpha)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, self.Yc)
        if columns is None:
            return model.coef_.T.copy()
        W = np.zeros((self.Xs.shape[1], self.Yc.shape[1]))
        W[columns] = model.coef_.T
        return W


def _support(W) -> np.ndarray:
    return np.flatnonzero(np.any(W != 0, axis=1))


def mtlasso_to_budget(X, Y, budget: int, *, fit_intercept=True, standardize=True,
                      max_search=40, max_iter=5000, tol=1e-6) -> LassoFit:
    """Fit the multi-task lasso with alpha chosen so that ``budget`` features are used.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    Y : array-like of shape (n_samples, n_targets)
    budget : int
        Number of features, 1 <= budget <= n_features.
    max_search : int, default=40
        Bisection steps on log(alpha) (the bracket shrinks by 2^-40 of ~14 decades).

    Returns
    -------
    LassoFit
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64).reshape(len(X), -1)
    d = X.shape[1]
    integral = isinstance(budget, (int, np.integer)) and not isinstance(budget, bool)
    if not integral or not 1 <= budget <= d:
        raise TrainerError(f"budget={budget!r} must be an integer in 1..{d} (n_features={d})")
    Xs, Yc, x_mean, scale, y_mean = _standardize(X, Y, fit_intercept, standardize)
    alpha_max = float(np.max(np.linalg.norm(Xs.T @ Yc, axis=1))) / len(X)
    if alpha_max <= 0:
        raise TrainerError("the targets are constant (or uncorrelated with every feature): the "
                           "multi-task lasso selects nothing")
    lasso = _Lasso(Xs, Yc, max_iter, tol)
    hi, lo = np.log(alpha_max), np.log(alpha_max * 1e-6)
    best_above = None                      # (support size, alpha, W) with the fewest rows > budget
    W, alpha = None, alpha_max
    for _ in range(max_search):
        alpha = float(np.exp(0.5 * (hi + lo)))
        W = lasso.fit(alpha)
        size = _support(W).size
        if size == budget:
            return _finish(W, alpha, size, True, x_mean, scale, y_mean)
        if size > budget:
            lo = np.log(alpha)
            if best_above is None or size <= best_above[0]:
                best_above = (size, alpha, W)
        else:
            hi = np.log(alpha)
    if best_above is None:                 # even the smallest alpha tried uses too few features
        W = lasso.fit(float(np.exp(lo)))
        return _finish(W, float(np.exp(lo)), _support(W).size, False, x_mean, scale, y_mean)
    size, alpha, W = best_above
    keep = np.argsort(-np.linalg.norm(W, axis=1), kind="stable")[:budget]
    W_cut = lasso.fit(alpha, columns=np.sort(keep))
    return _finish(W_cut, alpha, size, False, x_mean, scale, y_mean, columns=keep)


def _finish(W, alpha, n_nonzero, exact, x_mean, scale, y_mean, columns=None) -> LassoFit:
    """Order the support by row norm and express the weights in original feature units."""
    support = _support(W) if columns is None else np.asarray(columns, dtype=np.intp)
    norms = np.linalg.norm(W[support], axis=1)
    selected = support[np.argsort(-norms, kind="stable")]
    coef = W[selected] / scale[selected][:, None]
    intercept = y_mean - x_mean[selected] @ coef
    return LassoFit(selected=selected, coef=coef, intercept=intercept, alpha=alpha,
                    n_nonzero=int(n_nonzero), exact=bool(exact))
