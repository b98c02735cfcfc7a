"""A sparse linear model at one budget, and ridge refitted on a chosen feature set."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .caches import target_blocks, target_columns
from .rls_math import ridge_weights


@dataclass
class Model:
    """A fitted model at one budget: predictions X[:, features] @ coef + intercept."""

    features: list
    coef: np.ndarray
    intercept: np.ndarray
    lam: object = None
    exact: bool = True

    def predict(self, X):
        return np.asarray(X, dtype=np.float64)[:, self.features] @ self.coef + self.intercept


def ridge_refit(X, Y, features, lam, x_mean, x_scale, fit_intercept) -> Model:
    """Ridge on the standardized columns ``features`` (the estimator's convention), weights in
    original units."""
    f = np.asarray(features, dtype=np.intp)
    y_mean = Y.mean(axis=0) if fit_intercept else np.zeros(Y.shape[1])
    W = ridge_weights((X[:, f] - x_mean[f]) / x_scale[f], Y - y_mean, lam)
    coef = W / x_scale[f][:, None]
    return Model(list(map(int, f)), coef, y_mean - x_mean[f] @ coef, lam=float(lam))


def observed_ridge(X, Y, features, cols, prep, lam) -> list:
    """Ridge weights of the targets ``cols`` of ``Y`` (NaN = missing) on the columns
    ``features`` of ``X``, per target observation mask (:func:`~sensorbudget.trainer.selection.caches.
    target_blocks`): [(targets within cols, that mask's preprocessing, W)], each W fitted on
    the mask's rows, centred and scaled by its preprocessing."""
    out = []
    for rows, targets, q in target_blocks(X, target_columns(Y, cols), prep):
        Xr, Yr = (X, Y) if rows is None else (X[rows], Y[rows])
        Xs = (Xr[:, features] - q.x_mean[features]) / q.x_scale[features]
        Ysel = target_columns(Yr, np.asarray(cols)[targets])
        out.append((targets, q, ridge_weights(Xs, Ysel, lam, y_mean=q.y_mean)))
    return out
