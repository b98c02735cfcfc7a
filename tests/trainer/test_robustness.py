"""Degenerate inputs: duplicated, constant and collinear columns, n < d, tiny lambda; constant
targets, budgets beyond a fold's rows and lambda at the grid's ends (issue 16.3)."""

import numpy as np
import pytest

from tests.trainer.reference import greedy_bruteforce
from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier, TrainerError
from sensorbudget.trainer.errors import TrainerWarning
from sensorbudget.trainer.selection.loop import LAMBDA_GRID, Preprocessing
from sensorbudget.trainer.selection.validation import check_budget, check_targets, fold_rows


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


def test_n_smaller_than_d_tiny_lambda_up_to_the_fold_limit():
    """n = 6 rows, d = 30: a LOO fold has 5 training rows, 4 features after the intercept."""
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(6, 30)), rng.normal(size=(6, 3))
    for intercept, budget in ((True, 4), (False, 5)):
        est = GreedyRLS(budget=budget, lam=2.0 ** -15, fit_intercept=intercept).fit(X, Y)
        assert np.isfinite(est.loo_path_).all() and np.isfinite(est.coef_).all()
        assert np.isfinite(est.heldout_predictions_).all()
        assert len(set(est.selected_.tolist())) == budget


@pytest.fixture
def no_computation(monkeypatch):
    """Fail if the selection starts: checks must come before any computation."""
    def refuse(*args, **kwargs):
        raise AssertionError("the selection started before the input was refused")

    monkeypatch.setattr(Preprocessing, "fit", classmethod(refuse))


@pytest.mark.parametrize("budget,groups,match", [
    (30, None, "budget=30 features is more than the smallest training fold supports: 5 "
               "training rows, at most 4 features after the intercept"),
    (5, None, "budget=5 features .* at most 4 features"),
    (3, [0, 0, 0, 1, 2, 2], "budget=3 features .* 3 training rows, at most 2"),
])
def test_budget_beyond_a_fold_is_an_error_before_any_computation(no_computation, budget, groups,
                                                                 match):
    X, Y = np.random.default_rng(1).normal(size=(6, 30)), np.arange(6.0)
    with pytest.raises(TrainerError, match=match):
        GreedyRLS(budget=budget, lam=1.0).fit(X, Y, groups=groups)


def test_check_budget_is_reusable():
    check_budget(10, 9)
    check_budget(10, 10, fit_intercept=False)
    check_budget(10, None)
    with pytest.raises(TrainerError, match="budget=10 features is more than the smallest "
                                           "training fold supports: 10 training rows, at most 9"):
        check_budget(10, 10)
    with pytest.raises(TrainerError, match="budget=4 extractors is more than fold 2 supports"):
        check_budget(3, 4, fit_intercept=False, what="extractors", where="fold 2")
    assert fold_rows(10) == 9 and fold_rows(10, [0, 0, 0, 1, 1, 2, 2, 2, 2, 3]) == 6


@pytest.mark.parametrize("y,names,match", [
    (np.zeros(12), None, r"target column 0 has a single value \(0\) on every row"),
    (np.column_stack([np.arange(12.0), np.full(12, 2.5)]), None, r"target column 1 .*\(2\.5\)"),
    (np.column_stack([np.arange(12.0), np.r_[np.nan, np.nan, np.ones(10)]]), None,
     "target column 1 has a single value"),
])
def test_constant_target_is_an_error_before_any_computation(no_computation, y, names, match):
    X = np.random.default_rng(0).normal(size=(12, 4))
    with pytest.raises(TrainerError, match=match):
        GreedyRLS(budget=2).fit(X, y)


def test_constant_target_is_named_from_pandas():
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(0).normal(size=(12, 4))
    y = pd.DataFrame({"CO(GT)": np.arange(12.0), "alarm": np.zeros(12)})
    with pytest.raises(TrainerError, match="target 'alarm' has a single value"):
        GreedyRLS(budget=2).fit(X, y)
    with pytest.raises(TrainerError, match="target 'flat' has a single value"):
        GreedyRLS(budget=2).fit(X, pd.Series(np.ones(12), name="flat"))


def test_constant_label_and_named_targets():
    X = np.random.default_rng(0).normal(size=(12, 4))
    with pytest.raises(TrainerError, match="label column 1 has only one class"):
        GreedyRLSClassifier(budget=2).fit(X, np.column_stack([X[:, 0] > 0, np.zeros(12)]))
    with pytest.raises(TrainerError, match="target 'NOx' has a single value"):
        check_targets(np.column_stack([X[:, 0], np.ones(12)]), names=["CO", "NOx"])
    check_targets(np.column_stack([X[:, 0], np.r_[np.nan, np.ones(10), 2.0]]))


def test_lambda_at_either_end_of_the_grid_is_a_warning():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    exact = X[:, 0] - 2 * X[:, 1]                        # no noise: the smallest lambda wins
    with pytest.warns(TrainerWarning, match=r"lambda=3\.05e-05 \(2\^-15\) chosen at the lower "
                                            r"end of the grid .* give --lam"):
        est = GreedyRLS(budget=2, standardize=False).fit(X, exact)
    assert est.lam_ == 2.0 ** -15
    noise = np.random.default_rng(3).normal(size=40)     # pure noise: the largest lambda wins
    with pytest.warns(TrainerWarning, match=r"lambda=3\.28e\+04 \(2\^15\) chosen for target "
                                            r"column 1 at the upper end"):
        GreedyRLS(budget=1, mode="separate").fit(X, np.column_stack([exact, noise]))


def test_no_warning_for_a_given_or_inner_lambda(recwarn):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    y = X[:, 0] + rng.normal(size=40)
    GreedyRLS(budget=2, lam=2.0 ** -15).fit(X, y)
    est = GreedyRLS(budget=2).fit(X, y)
    assert LAMBDA_GRID[0] < est.lam_ < LAMBDA_GRID[-1]
    assert not [w for w in recwarn if issubclass(w.category, TrainerWarning)]


def test_classifier_on_degenerate_data():
    X, _ = degenerate_data(n=20)
    y = (X[:, 0] > 0).astype(int)
    est = GreedyRLSClassifier(budget=3, lam=1e-4).fit(X, y)
    assert np.isfinite(est.decision_function(X)).all()
