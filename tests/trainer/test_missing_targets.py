"""Targets with missing values (NaN): each target on its observed rows, against brute force."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from tests.trainer.reference import (
    convention_transform,
    greedy_by_criterion,
    lgo_sse_bruteforce,
    loo_sse_bruteforce,
)
from sensorbudget.trainer import GreedyRLS, TrainerError
from sensorbudget.trainer.bundle.model import bundle_contents


def make_data(n, d, t, seed=0, missing=(0.0, 0.3, 0.3, 0.5)):
    """X, Y with NaN in Y: target q misses a fraction missing[q] of rows; targets 1 and 2 share
    their observation mask (one cache block)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=d) + rng.normal(size=d)
    W = np.zeros((d, t))
    W[rng.choice(d, size=min(4, d), replace=False)] = rng.normal(size=(min(4, d), t))
    Y = X @ W + 0.5 * rng.normal(size=(n, t)) + rng.normal(size=t)
    masks = {}
    for q in range(t):
        frac = missing[q % len(missing)]
        key = frac if q in (1, 2) else (frac, q)
        if key not in masks:
            masks[key] = rng.random(n) < frac
        Y[masks[key], q] = np.nan
    return X, Y


def observed(Y, q):
    return np.flatnonzero(~np.isnan(Y[:, q]))


def per_target_criterion(X, Y, lam, fit_intercept, standardize, groups=None):
    """criterion(S) = sum_q of the LOO (or LGO) SSE of target q refitted on its observed rows,
    centred and scaled with those rows (the documented convention)."""
    parts = []
    for q in range(Y.shape[1]):
        rows = observed(Y, q)
        Xt, yt = convention_transform(X[rows], Y[rows, q:q + 1], fit_intercept, standardize)
        parts.append((Xt, yt, None if groups is None else groups[rows]))

    def crit(S):
        return sum(loo_sse_bruteforce(Xt[:, S], yt, lam, fit_intercept) if g is None
                   else lgo_sse_bruteforce(Xt[:, S], yt, g, lam, fit_intercept)
                   for Xt, yt, g in parts)

    return crit


@pytest.mark.parametrize("fit_intercept,standardize", [(False, False), (True, True)])
@pytest.mark.parametrize("n,d,t", [(20, 7, 3), (14, 16, 4)])
def test_joint_selection_sums_per_target_criteria(fit_intercept, standardize, n, d, t):
    X, Y = make_data(n, d, t, seed=n + t)
    lam, budget = 0.5, 4
    est = GreedyRLS(budget=budget, lam=lam, fit_intercept=fit_intercept,
                    standardize=standardize).fit(X, Y)
    sel, sse = greedy_by_criterion(per_target_criterion(X, Y, lam, fit_intercept, standardize),
                                   d, budget)
    assert est.selected_.tolist() == sel
    counts = (~np.isnan(Y)).sum(axis=0)
    np.testing.assert_allclose(est.loo_path_, sse / counts.sum(), rtol=1e-9)
    np.testing.assert_array_equal(est.target_rows_, counts)


def test_weights_are_each_targets_ridge_on_its_rows():
    X, Y = make_data(25, 8, 3, seed=3)
    lam = 0.7
    est = GreedyRLS(budget=3, lam=lam).fit(X, Y)
    sel = est.selected_
    for q in range(3):
        rows = observed(Y, q)
        scale = X[rows][:, sel].std(axis=0)
        ref = Ridge(alpha=lam).fit(X[rows][:, sel] / scale, Y[rows, q])
        np.testing.assert_allclose(est.coef_[:, q], ref.coef_ / scale, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(est.intercept_[q], ref.intercept_, rtol=1e-8, atol=1e-10)
    assert np.isfinite(est.predict(X)).all()


@pytest.mark.parametrize("lam", [0.5, None])
def test_separate_mode_equals_each_target_on_its_observed_rows(lam):
    X, Y = make_data(22, 9, 3, seed=7)
    est = GreedyRLS(budget=3, lam=lam, mode="separate").fit(X, Y)
    for q in range(3):
        rows = observed(Y, q)
        alone = GreedyRLS(budget=3, lam=lam).fit(X[rows], Y[rows, q])
        np.testing.assert_array_equal(est.target_selected_[q], alone.selected_)
        np.testing.assert_allclose(est.path_[-1]["loo_mse_per_target"][q], alone.loo_path_[-1],
                                   rtol=1e-12)
        position = [est.selected_.tolist().index(f) for f in alone.selected_]
        np.testing.assert_allclose(est.coef_[position, q], alone.coef_[:, 0], rtol=1e-10)
        np.testing.assert_allclose(est.intercept_[q], alone.intercept_[0], rtol=1e-10)


def test_one_shared_mask_equals_a_fit_on_the_observed_rows():
    X, Y = make_data(20, 6, 2, seed=1, missing=(0.0,))
    Y[[1, 4, 5, 11], :] = np.nan
    rows = observed(Y, 0)
    est = GreedyRLS(budget=3, lam=None).fit(X, Y)
    ref = GreedyRLS(budget=3, lam=None).fit(X[rows], Y[rows])
    np.testing.assert_array_equal(est.selected_, ref.selected_)
    np.testing.assert_allclose(est.loo_path_, ref.loo_path_, rtol=1e-12)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-10)


def test_missing_targets_with_groups():
    X, Y = make_data(24, 6, 3, seed=12)
    groups = np.repeat(np.arange(8), 3)
    lam = 0.9
    est = GreedyRLS(budget=3, lam=lam, fit_intercept=False, standardize=False)
    est.fit(X, Y, groups=groups)
    crit = per_target_criterion(X, Y, lam, False, False, groups=groups)
    sel, sse = greedy_by_criterion(crit, 6, 3)
    assert est.selected_.tolist() == sel
    np.testing.assert_allclose(est.loo_path_, sse / (~np.isnan(Y)).sum(), rtol=1e-9)


def test_extractor_groups_with_missing_targets():
    X, Y = make_data(21, 8, 3, seed=4)
    names = ["a", "a", "b", "b", "b", "c", "d", "d"]
    cols = {e: [i for i, n in enumerate(names) if n == e] for e in dict.fromkeys(names)}
    units = list(cols)
    est = GreedyRLS(budget=2, lam=0.5, fit_intercept=False, standardize=False,
                    extractors=names).fit(X, Y)
    crit = per_target_criterion(X, Y, 0.5, False, False)
    sel, _ = greedy_by_criterion(lambda s: crit([c for u in s for c in cols[units[u]]]),
                                 len(units), 2)
    assert est.selected_extractors_ == [units[u] for u in sel]


def test_bundle_records_rows_per_target():
    X, Y = make_data(20, 5, 3, seed=2)
    est = GreedyRLS(budget=2, lam=1.0).fit(X, Y)
    meta, _ = bundle_contents(est, X, [f"f{i}" for i in range(5)], ["a", "b", "c"],
                              task="regression")
    assert meta["target_rows"] == (~np.isnan(Y)).sum(axis=0).tolist()
    assert meta["criterion"] == "loo" and meta["n_groups"] is None


def test_too_few_observed_values_and_inf_are_errors():
    X, Y = make_data(10, 4, 2, seed=0, missing=(0.0,))
    Y[1:, 1] = np.nan
    with pytest.raises(TrainerError, match="target column 1 has 1 observed"):
        GreedyRLS(budget=2).fit(X, Y)
    Y[:, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        GreedyRLS(budget=2).fit(X, Y)
