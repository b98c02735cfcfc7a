"""Degenerate inputs: duplicated, constant and collinear columns, n < d, tiny lambda."""

import numpy as np
import pytest

from tests.trainer.reference import greedy_bruteforce
from trainer import GreedyRLS, GreedyRLSClassifier


def degenerate_data(seed=0, n=12):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, 5))
    X = np.column_stack([
        base[:, 0], base[:, 0],                # duplicated pair
        np.full(n, 3.0), np.zeros(n),          # constant and all-zero
        base[:, 1], 2 * base[:, 1] - base[:, 2], base[:, 2],  # collinear triple
        base[:, 3], base[:, 4], base[:, 3] + 1e-13 * base[:, 4],
    ])
    Y = np.column_stack([base[:, 0] + base[:, 1], base[:, 3] - base[:, 2]])
    return X, Y


@pytest.mark.parametrize("lam", [2.0 ** -15, 1e-3, 1.0, 2.0 ** 15])
@pytest.mark.parametrize("fit_intercept,standardize", [(False, False), (True, True)])
def test_degenerate_columns_are_finite_and_deterministic(lam, fit_intercept, standardize):
    X, Y = degenerate_data()
    fits = [GreedyRLS(budget=8, lam=lam, fit_intercept=fit_intercept,
                      standardize=standardize).fit(X, Y) for _ in range(2)]
    a, b = fits
    assert np.isfinite(a.loo_path_).all() and np.isfinite(a.coef_).all()
    assert np.isfinite(a.predict(X)).all()
    assert a.selected_.tolist() == b.selected_.tolist()
    np.testing.assert_array_equal(a.loo_path_, b.loo_path_)
    assert len(set(a.selected_.tolist())) == 8
    # Of the duplicated pair, the lower index is always tried first.
    if 1 in a.selected_:
        assert 0 in a.selected_ and a.selected_.tolist().index(0) < a.selected_.tolist().index(1)


def test_duplicate_tie_goes_to_lowest_index_as_in_reference():
    X, Y = degenerate_data(seed=3)
    X = X[:, :9]   # the last column is a near-duplicate (1e-13): inside the documented tie band
    est = GreedyRLS(budget=3, lam=0.5, fit_intercept=False, standardize=False).fit(X, Y)
    sel, _ = greedy_bruteforce(X, Y, 0.5, 3)
    assert est.selected_.tolist() == sel


def test_n_smaller_than_d_full_budget_tiny_lambda():
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(6, 30)), rng.normal(size=(6, 3))
    est = GreedyRLS(budget=30, lam=2.0 ** -15).fit(X, Y)
    assert np.isfinite(est.loo_path_).all() and np.isfinite(est.coef_).all()
    assert sorted(est.selected_.tolist()) == list(range(30))


def test_classifier_on_degenerate_data():
    X, _ = degenerate_data(n=20)
    y = (X[:, 0] > 0).astype(int)
    est = GreedyRLSClassifier(budget=3, lam=1e-4).fit(X, y)
    assert np.isfinite(est.decision_function(X)).all()
