"""The criterion with an intercept is that of ridge with the intercept *refitted inside each
fold* (issue 16.1): picks, path, lambda curve and held-out predictions against one explicit
refit per held-out row or group (numpy, and sklearn ``Ridge(fit_intercept=True)``)."""

import numpy as np
import pytest

from tests.trainer.reference import (
    greedy_by_criterion,
    heldout_intercept_bruteforce,
    lgo_sse_bruteforce,
    loo_sse_bruteforce,
)
from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier
from sensorbudget.trainer.selection import heldout, rls_math
from sensorbudget.trainer.selection.loop import LAMBDA_GRID


def make_data(n, d, t, seed=0):
    """Columns far from zero with different scales, targets with large means: the centring
    matters (an intercept leaking through the held-out rows would show)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=d) + 4 * rng.normal(size=d)
    W = np.zeros((d, t))
    W[rng.choice(d, size=3, replace=False)] = rng.normal(size=(3, t))
    return X, X @ W + rng.normal(size=(n, t)) + 10 * rng.normal(size=t)


def make_groups(n, kind, seed=0):
    """Shuffled group ids: every group of ``kind`` rows (1, 2, 5), or uneven sizes with
    singletons and a group above holdout_math.SMALL_GROUP (16) rows (its U cache)."""
    rng = np.random.default_rng(seed)
    if kind == "uneven":
        sizes = [1, 2, 3, 1, 18, 4, 2, 1, 5]
        ids = np.repeat(np.arange(len(sizes)), sizes)
        ids = np.concatenate([ids, 100 + np.arange(n - ids.size)])[:n]
    else:
        ids = np.arange(n) // kind
    return rng.permutation(ids)


def transformed(est, X):
    """X as the estimator scales it (the scale is fixed over all rows, not refitted per fold;
    centring does not matter: the intercept is refitted in each fold)."""
    return X / est.x_scale_


KINDS = [None, 1, 2, 5, "uneven"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("t", [1, 3])
@pytest.mark.parametrize("standardize", [True, False])
def test_picks_and_path_equal_refits_with_the_intercept_in_each_fold(kind, t, standardize):
    n, d, lam, budget = 40, 7, 0.6, 4
    X, Y = make_data(n, d, t, seed=t + d)
    groups = None if kind is None else make_groups(n, kind, seed=t)
    est = GreedyRLS(budget=budget, lam=lam, standardize=standardize).fit(X, Y, groups=groups)
    Xs = transformed(est, X)
    if groups is None:
        def crit(s):
            return loo_sse_bruteforce(Xs[:, s], Y, lam, intercept=True)
    else:
        def crit(s):
            return lgo_sse_bruteforce(Xs[:, s], Y, groups, lam, intercept=True)
    sel, sse = greedy_by_criterion(crit, d, budget)
    assert est.selected_.tolist() == sel
    np.testing.assert_allclose(est.loo_path_, sse / Y.size, rtol=1e-9)
    # the held-out predictions of the final model: sklearn refits, intercept inside the fold
    ref = heldout_intercept_bruteforce(Xs[:, sel], Y, groups, lam)
    np.testing.assert_allclose(est.heldout_predictions_, ref, rtol=1e-9, atol=1e-9)
    assert np.sum((est.heldout_predictions_ - Y) ** 2) / Y.size == pytest.approx(
        est.loo_path_[-1], rel=1e-9)


def test_the_old_centred_criterion_was_optimistic_and_is_gone():
    """The issue's leak: centring on all rows, held-out group included, under-reports the
    leave-group-out error by O(group size / n); the estimator now reports the refit's."""
    X, Y = make_data(30, 5, 2, seed=4)
    groups = make_groups(30, 5, seed=1)
    est = GreedyRLS(budget=3, lam=1.0, standardize=False).fit(X, Y, groups=groups)
    cols = est.selected_.tolist()
    exact = lgo_sse_bruteforce(X[:, cols], Y, groups, 1.0, intercept=True) / Y.size
    leaky = lgo_sse_bruteforce(X[:, cols] - X[:, cols].mean(0), Y - Y.mean(0), groups,
                               1.0) / Y.size
    assert est.loo_path_[-1] == pytest.approx(exact, rel=1e-10)
    assert leaky < 0.98 * exact                  # 3.4 % optimistic here (groups of 5 of 30)


@pytest.mark.parametrize("kind", [None, 2, "uneven"])
def test_extractor_groups_with_the_intercept(kind):
    """Block (Woodbury) moves of 1-3 columns under the exact criterion."""
    n = 36
    X, Y = make_data(n, 9, 2, seed=8)
    names = ["a", "a", "b", "c", "c", "c", "d", "e", "e"]
    cols = {"a": [0, 1], "b": [2], "c": [3, 4, 5], "d": [6], "e": [7, 8]}
    units = sorted(cols)
    groups = None if kind is None else make_groups(n, kind, seed=3)
    est = GreedyRLS(budget=3, lam=0.8, extractors=names).fit(X, Y, groups=groups)
    Xs = transformed(est, X)

    def crit(s):
        feats = [c for u in s for c in cols[units[u]]]
        if groups is None:
            return loo_sse_bruteforce(Xs[:, feats], Y, 0.8, intercept=True)
        return lgo_sse_bruteforce(Xs[:, feats], Y, groups, 0.8, intercept=True)

    sel, sse = greedy_by_criterion(crit, len(units), 3)
    assert est.selected_extractors_ == [units[u] for u in sel]
    np.testing.assert_allclose([e["loo_mse"] for e in est.path_], sse / Y.size, rtol=1e-9)


@pytest.mark.parametrize("kind", [None, 5])
def test_lambda_curve_equals_refits_at_every_grid_lambda(kind):
    n = 30
    X, Y = make_data(n, 6, 2, seed=5)
    groups = None if kind is None else make_groups(n, kind, seed=2)
    est = GreedyRLS(budget=3).fit(X, Y, groups=groups)
    Xs = transformed(est, X)[:, est.selected_]
    ref = [(loo_sse_bruteforce(Xs, Y, lam, intercept=True) if groups is None else
            lgo_sse_bruteforce(Xs, Y, groups, lam, intercept=True)) / Y.size
           for lam in LAMBDA_GRID]
    np.testing.assert_allclose(est.lam_loo_, ref, rtol=1e-7)
    grid = GreedyRLS(budget=3, lam_search="grid").fit(X, Y, groups=groups)
    assert grid.lam_loo_[LAMBDA_GRID.index(grid.lam_)] == pytest.approx(
        grid.loo_path_[-1], rel=1e-12)


def test_svd_curve_with_the_intercept_offset():
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(14, 3)) + 2, rng.normal(size=(14, 2)) + 5
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    curve = rls_math.loo_sse_lambda_curve(Xc, Yc, LAMBDA_GRID, offset=1 / 14)
    ref = [loo_sse_bruteforce(X, Y, lam, intercept=True) for lam in LAMBDA_GRID]
    np.testing.assert_allclose(curve, ref, rtol=1e-8)
    empty = rls_math.loo_sse_lambda_curve(Xc[:, :0], Yc, [1.0], offset=1 / 14)
    assert empty[0] == pytest.approx(loo_sse_bruteforce(X[:, :0], Y, 1.0, intercept=True))


@pytest.mark.parametrize("kind", [None, 2, "uneven"])
def test_heldout_predictions_separate_mode_and_missing_targets(kind):
    n = 36
    X, Y = make_data(n, 6, 3, seed=11)
    groups = None if kind is None else make_groups(n, kind, seed=6)
    est = GreedyRLS(budget=2, lam=0.9, mode="separate").fit(X, Y, groups=groups)
    Xs = transformed(est, X)
    for q, feats in enumerate(est.target_selected_):
        ref = heldout_intercept_bruteforce(Xs[:, feats], Y[:, [q]], groups, 0.9)
        np.testing.assert_allclose(est.heldout_predictions_[:, [q]], ref, rtol=1e-9, atol=1e-9)
    Ym = Y.copy()
    Ym[[0, 5, 9, 20], 1] = np.nan
    est = GreedyRLS(budget=2, lam=0.9).fit(X, Ym, groups=groups)
    assert np.isnan(est.heldout_predictions_[[0, 5, 9, 20], 1]).all()
    for q in range(3):
        rows = ~np.isnan(Ym[:, q])
        scale = X[rows].std(axis=0)                 # each mask scaled on its observed rows
        Xq = (X[rows] / scale)[:, est.selected_]
        ref = heldout_intercept_bruteforce(Xq, Y[rows][:, [q]],
                                           None if groups is None else groups[rows], 0.9)
        np.testing.assert_allclose(est.heldout_predictions_[rows, q], ref[:, 0], rtol=1e-9,
                                   atol=1e-9)


def test_heldout_predictions_without_intercept_and_of_the_classifier():
    X, Y = make_data(30, 6, 2, seed=2)
    groups = make_groups(30, 2, seed=4)
    est = GreedyRLS(budget=3, lam=0.5, fit_intercept=False, standardize=False)
    est.fit(X, Y, groups=groups)
    sel = est.selected_
    ref = np.empty_like(Y)
    for g in np.unique(groups):
        out = groups == g
        W = np.linalg.lstsq(np.vstack([X[~out][:, sel], np.sqrt(0.5) * np.eye(3)]),
                            np.vstack([Y[~out], np.zeros((3, 2))]), rcond=None)[0]
        ref[out] = X[out][:, sel] @ W
    np.testing.assert_allclose(est.heldout_predictions_, ref, rtol=1e-9, atol=1e-9)
    labels = (Y > np.median(Y, axis=0)).astype(int)
    clf = GreedyRLSClassifier(budget=3, lam=0.5).fit(X, labels)
    ref = heldout_intercept_bruteforce(transformed(clf, X)[:, clf.selected_],
                                       np.where(labels == 1, 1.0, -1.0), None, 0.5)
    np.testing.assert_allclose(clf.heldout_predictions_, ref, rtol=1e-9, atol=1e-9)


def test_heldout_module_woodbury_matches_direct_block_inverse():
    """heldout_residuals against (I - H_QQ)^{-1} E_Q with the hat matrix formed explicitly."""
    rng = np.random.default_rng(0)
    n, k, lam = 25, 3, 0.4
    X, Y = rng.normal(size=(n, k)), rng.normal(size=(n, 2))
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    H = np.ones((n, n)) / n + Xc @ np.linalg.solve(Xc.T @ Xc + lam * np.eye(k), Xc.T)
    E = Y - H @ Y
    groups = make_groups(n, "uneven", seed=1)
    L, W = heldout.fit_terms(Xc, Yc, lam)
    got = heldout.heldout_residuals(Xc, Yc, L, W, groups, 1 / n)
    for g in np.unique(groups):
        Q = np.flatnonzero(groups == g)
        ref = np.linalg.solve(np.eye(Q.size) - H[np.ix_(Q, Q)], E[Q])
        np.testing.assert_allclose(got[Q], ref, rtol=1e-10, atol=1e-12)


def test_float32_follows_float64_under_the_exact_criterion():
    X, Y = make_data(60, 10, 3, seed=13)
    groups = make_groups(60, "uneven", seed=9)
    a = GreedyRLS(budget=4, lam=1.0).fit(X, Y, groups=groups)
    b = GreedyRLS(budget=4, lam=1.0, dtype="float32").fit(X, Y, groups=groups)
    np.testing.assert_array_equal(a.selected_, b.selected_)
    np.testing.assert_allclose(b.loo_path_, a.loo_path_, rtol=1e-4)
