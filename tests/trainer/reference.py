"""Slow, obviously-correct references for the greedy RLS tests: explicit ridge refits."""

from __future__ import annotations

import numpy as np


def ridge(X, Y, lam):
    """Primal ridge solution (X^T X + lam I)^{-1} X^T Y, by a direct solve."""
    return np.linalg.solve(X.T @ X + lam * np.eye(X.shape[1]), X.T @ Y)


def loo_sse_bruteforce(X, Y, lam):
    """LOO SSE by n explicit ridge refits (no intercept), each leaving one row out."""
    n = X.shape[0]
    sse = 0.0
    for j in range(n):
        keep = np.arange(n) != j
        if X.shape[1]:
            W = ridge(X[keep], Y[keep], lam)
            pred = X[j] @ W
        else:
            pred = np.zeros(Y.shape[1])
        sse += float(np.sum((pred - Y[j]) ** 2))
    return sse


def greedy_bruteforce(X, Y, lam, budget):
    """Algorithm 2 by definition: each step refits for every candidate; ties to lowest index."""
    selected, path = [], []
    for _ in range(budget):
        scores = [np.inf if i in selected else loo_sse_bruteforce(X[:, selected + [i]], Y, lam)
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


def lgo_sse_bruteforce(X, Y, groups, lam):
    """Leave-group-out SSE by one explicit ridge refit (no intercept) per group, each leaving
    all rows of that group out and predicting them."""
    groups = np.asarray(groups)
    sse = 0.0
    for g in np.unique(groups):
        out = groups == g
        pred = ridge(X[~out], Y[~out], lam) if X.shape[1] else np.zeros((0, Y.shape[1]))
        sse += float(np.sum((X[out] @ pred - Y[out]) ** 2))
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
