"""Greedy RLS against its slow definition: explicit LOO refits and a refit-per-candidate loop."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from tests.trainer.reference import (
    convention_transform,
    greedy_bruteforce,
    loo_sse_bruteforce,
    ridge,
)
from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.selection import rls_math
from sensorbudget.trainer.selection.loop import LAMBDA_GRID


def make_data(n, d, t, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=d) + rng.normal(size=d)
    W = np.zeros((d, t))
    W[rng.choice(d, size=min(3, d), replace=False)] = rng.normal(size=(min(3, d), t))
    Y = X @ W + 0.3 * rng.normal(size=(n, t)) + rng.normal(size=t)
    return X, Y


@pytest.mark.parametrize("n,d", [(15, 8), (11, 20)])
@pytest.mark.parametrize("t", [1, 3])
@pytest.mark.parametrize("lam", [0.1, 2.0])
def test_algorithm2_equals_refit_greedy(n, d, t, lam):
    X, Y = make_data(n, d, t, seed=n * d + t)
    budget = 5
    est = GreedyRLS(budget=budget, lam=lam, fit_intercept=False, standardize=False).fit(X, Y)
    sel, sse = greedy_bruteforce(X, Y, lam, budget)
    assert est.selected_.tolist() == sel
    np.testing.assert_allclose(est.loo_path_, sse / Y.size, rtol=1e-9)
    np.testing.assert_allclose(est.coef_, ridge(X[:, sel], Y, lam), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(est.intercept_, 0.0)


@pytest.mark.parametrize("fit_intercept,standardize", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("n,d", [(14, 6), (10, 16)])
def test_intercept_and_standardize_convention(fit_intercept, standardize, n, d):
    X, Y = make_data(n, d, 2, seed=7 + d)
    lam = 0.5
    est = GreedyRLS(budget=4, lam=lam, fit_intercept=fit_intercept,
                    standardize=standardize).fit(X, Y)
    Xt, Yt = convention_transform(X, Y, fit_intercept, standardize)
    sel, sse = greedy_bruteforce(Xt, Yt, lam, 4, intercept=fit_intercept)
    assert est.selected_.tolist() == sel
    np.testing.assert_allclose(est.loo_path_, sse / Y.size, rtol=1e-9)
    # coef_ in original units equals a plain ridge on the (scaled) selected columns.
    scale = est.x_scale_[sel]
    ref = Ridge(alpha=lam, fit_intercept=fit_intercept).fit(X[:, sel] / scale, Y)
    np.testing.assert_allclose(est.coef_, ref.coef_.T / scale[:, None], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(est.intercept_, np.zeros(2) + ref.intercept_, rtol=1e-8,
                               atol=1e-10)
    np.testing.assert_allclose(est.predict(X), ref.predict(X[:, sel] / scale), rtol=1e-8,
                               atol=1e-10)


@pytest.mark.parametrize("n,d,t", [(12, 7, 2), (9, 15, 1)])
def test_candidate_scores_equal_explicit_refits(n, d, t):
    X, Y = make_data(n, d, t, seed=3)
    lam = 0.7
    R = X.copy()
    E, h, P, sigma = rls_math.initial_caches(R, Y)
    rls_math.add_feature(R, E, h, P, sigma, X[:, 2], 2, lam)
    rls_math.add_feature(R, E, h, P, sigma, X[:, 5], 5, lam)
    assert rls_math.loo_sse(E, h) == pytest.approx(loo_sse_bruteforce(X[:, [2, 5]], Y, lam), rel=1e-10)
    scores = rls_math.candidate_loo_sse(R, E, h, P, sigma, lam, row_block=4, col_block=3)
    for i in range(d):
        if i not in (2, 5):
            ref = loo_sse_bruteforce(X[:, [2, 5, i]], Y, lam)
            assert scores[i] == pytest.approx(ref, rel=1e-9)
    # Row-partitioned partial scores sum to the whole (the distributed view).
    Pt, w, p2 = rls_math.scoring_terms(P, sigma, lam, R.dtype)
    parts = sum(rls_math.candidate_loo_sse_partial(R[r], E[r], h[r], Pt, w, p2)
                for r in (slice(0, 5), slice(5, n)))
    np.testing.assert_allclose(parts, scores, rtol=1e-12)


def test_sigma_and_p_updates_match_recomputation():
    X, Y = make_data(20, 9, 3, seed=11)
    lam = 0.3
    R = X.copy()
    E, h, P, sigma = rls_math.initial_caches(R, Y)
    for b in (4, 0, 7):
        rls_math.add_feature(R, E, h, P, sigma, X[:, b], b, lam)
    S = [4, 0, 7]
    G = np.linalg.inv(X[:, S] @ X[:, S].T + lam * np.eye(20))
    np.testing.assert_allclose(R, lam * G @ X, atol=1e-10)
    np.testing.assert_allclose(E, lam * G @ Y, atol=1e-10)
    np.testing.assert_allclose(h, lam * np.diag(G), atol=1e-12)
    np.testing.assert_allclose(P, X.T @ (lam * G @ Y), atol=1e-9)
    np.testing.assert_allclose(sigma, np.diag(X.T @ (lam * G @ X)), atol=1e-9)


def test_lambda_chosen_by_loo_over_grid():
    X, Y = make_data(25, 10, 2, seed=5)
    est = GreedyRLS(budget=3, lam_search="grid").fit(X, Y)
    assert len(est.lam_loo_) == len(LAMBDA_GRID) == 31
    assert est.lam_ == LAMBDA_GRID[int(np.argmin(est.lam_loo_))]
    for lam in (LAMBDA_GRID[0], est.lam_, LAMBDA_GRID[-1]):
        fixed = GreedyRLS(budget=3, lam=lam).fit(X, Y)
        assert fixed.loo_path_[-1] == pytest.approx(est.lam_loo_[LAMBDA_GRID.index(lam)])
    assert est.loo_path_[-1] == pytest.approx(est.lam_loo_.min())


def test_float32_option_matches_float64_picks():
    X, Y = make_data(200, 40, 4, seed=2)
    a = GreedyRLS(budget=6, lam=1.0).fit(X, Y)
    b = GreedyRLS(budget=6, lam=1.0, dtype="float32").fit(X, Y)
    assert a.selected_.tolist() == b.selected_.tolist()
    np.testing.assert_allclose(a.loo_path_, b.loo_path_, rtol=1e-4)
