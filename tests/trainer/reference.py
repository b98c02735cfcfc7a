"""Slow, obviously-correct references for the greedy RLS tests: explicit ridge refits."""

from __future__ import annotations

import numpy as np


def ridge(X, Y, lam):
    """Primal ridge solution (X^T X + lam I)^{-1} X^T Y, by a direct solve."""
    return np.linalg.solve(X.T @ X + lam * np.eye(X.shape[1]), X.T @ Y)


def fold_predict(X_train, Y_train, X_test, lam, intercept=False):
    """Ridge fitted on the training rows, predicting ``X_test``; with ``intercept`` an
    unpenalized intercept fitted on the training rows alone (their means centre X and Y)."""
    t = np.asarray(Y_train).reshape(len(Y_train), -1).shape[1]
    mx = X_train.mean(axis=0) if intercept else np.zeros(X_train.shape[1])
    my = Y_train.mean(axis=0) if intercept else np.zeros(t)
    if X_train.shape[1] == 0:
        return np.broadcast_to(my, (X_test.shape[0], t)).reshape(X_test.shape[0], -1)
    W = ridge(X_train - mx, Y_train - my, lam)
    return (X_test - mx) @ W + my


def loo_sse_bruteforce(X, Y, lam, intercept=False):
    """LOO SSE by n explicit ridge refits, each leaving one row out (``intercept``: the
    intercept refitted without the row too)."""
    n = X.shape[0]
    sse = 0.0
    for j in range(n):
        keep = np.arange(n) != j
        pred = fold_predict(X[keep], Y[keep], X[j:j + 1], lam, intercept)
        sse += float(np.sum((pred.ravel() - Y[j]) ** 2))
    return sse


def greedy_bruteforce(X, Y, lam, budget, intercept=False):
    """Algorithm 2 by definition: each step refits for every candidate; ties to lowest index."""
    selected, path = [], []
    for _ in range(budget):
        scores = [np.inf if i in selected
                  else loo_sse_bruteforce(X[:, selected + [i]], Y, lam, intercept)
                  for i in range(X.shape[1])]
        best = int(np.argmin(scores))
        selected.append(best)
        path.append(scores[best])
    return selected, np.array(path)


def convention_transform(X, Y, fit_intercept, standardize):
    """The documented centring/scaling convention, computed the plain way."""
    Xt, Yt = X.astype(float).copy(), Y.astype(float).copy()
    if fit_intercept:
        Xt -= X.mean(axis=0)
        Yt -= Y.mean(axis=0)
    if standardize:
        scale = np.sqrt((Xt ** 2).mean(axis=0))
        scale[scale < 1e-12] = 1.0
        Xt /= scale
    return Xt, Yt


def lgo_sse_bruteforce(X, Y, groups, lam, intercept=False):
    """Leave-group-out SSE by one explicit ridge refit per group, each leaving all rows of
    that group out and predicting them (``intercept``: refitted without the group too)."""
    groups = np.asarray(groups)
    sse = 0.0
    for g in np.unique(groups):
        out = groups == g
        pred = fold_predict(X[~out], Y[~out], X[out], lam, intercept)
        sse += float(np.sum((pred - Y[out].reshape(pred.shape)) ** 2))
    return sse


def greedy_by_criterion(criterion, n_units, budget):
    """Greedy forward selection by definition: each step evaluates ``criterion(units)`` (a
    refit) for every unselected unit and keeps the lowest; ties to the lowest index."""
    selected, path = [], []
    for _ in range(budget):
        scores = [np.inf if i in selected else criterion(selected + [i]) for i in range(n_units)]
        best = int(np.argmin(scores))
        selected.append(best)
        path.append(scores[best])
    return selected, np.array(path)


def ridge_intercept_predict(X_train, Y_train, X_test, lam):
    """Ridge with an unpenalized intercept fitted on the training rows alone (sklearn
    ``Ridge(alpha=lam, fit_intercept=True)``), predicting ``X_test``."""
    from sklearn.linear_model import Ridge

    if X_train.shape[1] == 0:
        return np.broadcast_to(Y_train.mean(axis=0), (X_test.shape[0], Y_train.shape[1]))
    model = Ridge(alpha=lam, fit_intercept=True, solver="cholesky").fit(X_train, Y_train)
    return model.predict(X_test).reshape(X_test.shape[0], -1)


def heldout_intercept_bruteforce(X, Y, groups, lam):
    """Held-out predictions (n x t, rows in input order) of ridge with the intercept refitted
    inside each fold: one sklearn refit per group (groups None: per row, LOO)."""
    n = X.shape[0]
    groups = np.arange(n) if groups is None else np.asarray(groups)
    Y = Y.reshape(n, -1)
    out = np.empty(Y.shape)
    for g in np.unique(groups):
        test = groups == g
        out[test] = ridge_intercept_predict(X[~test], Y[~test], X[test], lam)
    return out


def holdout_intercept_sse(X, Y, groups, lam):
    """The exact criterion with an intercept: SSE of :func:`heldout_intercept_bruteforce`."""
    return float(np.sum((heldout_intercept_bruteforce(X, Y, groups, lam) - Y.reshape(len(Y), -1))
                        ** 2))
