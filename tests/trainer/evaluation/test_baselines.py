"""The multi-task lasso baseline hits the requested feature budgets."""

import numpy as np
import pytest

from sensorbudget.trainer.errors import TrainerError
from sensorbudget.trainer.evaluation.baselines import mtlasso_to_budget


def make_data(n=60, d=14, t=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=d) + rng.normal(size=d)
    W = np.zeros((d, t))
    W[:5] = rng.normal(size=(5, t))
    return X, X @ W + 0.3 * rng.normal(size=(n, t))


@pytest.mark.parametrize("budget", [1, 3, 7, 14])
def test_hits_the_budget(budget):
    X, Y = make_data()
    fit = mtlasso_to_budget(X, Y, budget)
    assert len(fit.selected) == budget
    assert len(set(fit.selected.tolist())) == budget
    assert np.all(np.linalg.norm(fit.coef, axis=1) > 0)       # every selected row is used
    assert fit.predict(X).shape == Y.shape


def test_cut_support_still_hits_the_budget():
    X, Y = make_data(seed=1)
    X[:, 9] = X[:, 8]                          # a duplicated column: its rows enter in pairs
    fits = [mtlasso_to_budget(X, Y, budget, max_search=6) for budget in range(1, 14)]
    for budget, fit in enumerate(fits, start=1):
        assert len(fit.selected) == budget
        assert fit.exact or fit.n_nonzero > budget
    assert not all(fit.exact for fit in fits)                  # the cut path was exercised


def test_predictions_in_original_units_match_the_standardized_model():
    X, Y = make_data(seed=2)
    fit = mtlasso_to_budget(X, Y, 5)
    from sklearn.linear_model import MultiTaskLasso

    Xs = (X - X.mean(0)) / X.std(0)
    ref = MultiTaskLasso(alpha=fit.alpha, fit_intercept=False, tol=1e-10, max_iter=20000)
    ref.fit(Xs, Y - Y.mean(0))
    np.testing.assert_allclose(fit.predict(X), ref.predict(Xs) + Y.mean(0), atol=1e-4)


def test_strong_features_are_found_first():
    X, Y = make_data(n=200, seed=3)
    fit = mtlasso_to_budget(X, Y, 5)
    assert set(fit.selected.tolist()) == set(range(5))


def test_bad_budget():
    X, Y = make_data()
    with pytest.raises(TrainerError, match="budget=0"):
        mtlasso_to_budget(X, Y, 0)
    with pytest.raises(TrainerError, match="budget=15"):
        mtlasso_to_budget(X, Y, 15)
    with pytest.raises(TrainerError, match="constant"):
        mtlasso_to_budget(X, np.ones((60, 2)), 2)
