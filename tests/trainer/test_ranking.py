"""Greedy RankRLS against a brute-force leave-query-out greedy on explicit pairs."""

import itertools

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from tests.trainer.reference import greedy_by_criterion
from sensorbudget.trainer import GreedyRankRLS
from sensorbudget.trainer.evaluation.methods import GreedyRankMethod
from sensorbudget.trainer.evaluation.ranking_metrics import (
    pairwise_ranking_error,
    pairwise_squared_error,
    ranking_scores,
)
from sensorbudget.trainer.ranking import query_laplacian_transform


def make_queries(sizes, d, seed=0):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(len(sizes)) * 3 + 1, sizes)
    n = qid.size
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 2, size=d)
    w = np.zeros(d)
    w[rng.choice(d, size=3, replace=False)] = rng.normal(size=3)
    offsets = rng.normal(size=len(sizes)) * 5                 # per-query shifts: irrelevant
    y = X @ w + 0.3 * rng.normal(size=n) + np.repeat(offsets, sizes)
    perm = rng.permutation(n)
    return X[perm], y[perm], qid[perm]


def pairs(X, y, qid):
    """Explicit within-query pair differences (x_i - x_j, y_i - y_j), i < j."""
    D, dy = [], []
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        for i, j in itertools.combinations(rows, 2):
            D.append(X[i] - X[j])
            dy.append(y[i] - y[j])
    return np.array(D).reshape(-1, X.shape[1]), np.array(dy)


def rankrls(X, y, qid, lam):
    """RankRLS by definition: ridge on all within-query pair differences."""
    D, dy = pairs(X, y, qid)
    return np.linalg.solve(D.T @ D + lam * np.eye(X.shape[1]), D.T @ dy)


def leave_query_out(X, y, qid, lam):
    """Sum over queries Q of Q's pairwise squared loss for RankRLS trained without Q."""
    total = 0.0
    for q in np.unique(qid):
        out = qid == q
        w = rankrls(X[~out], y[~out], qid[~out], lam)
        D, dy = pairs(X[out], y[out], qid[out])
        total += float(np.sum((dy - D @ w) ** 2))
    return total


@pytest.mark.parametrize("sizes,d", [([4, 3, 5, 1, 4, 3], 6), ([3, 2, 4, 3], 12)])
def test_greedy_rankrls_equals_bruteforce_leave_query_out(sizes, d):
    X, y, qid = make_queries(sizes, d, seed=len(sizes) + d)
    lam, budget = 0.8, 3
    est = GreedyRankRLS(budget=budget, lam=lam, standardize=False).fit(X, y, groups=qid)
    sel, sse = greedy_by_criterion(lambda s: leave_query_out(X[:, s], y, qid, lam), d, budget)
    assert est.selected_.tolist() == sel
    np.testing.assert_allclose(est.loo_path_, sse / len(y), rtol=1e-9)
    np.testing.assert_allclose(est.coef_[:, 0], rankrls(X[:, sel], y, qid, lam), rtol=1e-9)
    np.testing.assert_array_equal(est.intercept_, 0.0)
    assert est.n_queries_ == len(sizes) and est.criterion_ == "leave-group-out"


def test_standardize_scales_the_transformed_columns():
    X, y, qid = make_queries([5, 4, 6, 3], 7, seed=2)
    Xq, _ = query_laplacian_transform(X, y[:, None], qid)
    scale = np.sqrt(np.mean(Xq ** 2, axis=0))
    est = GreedyRankRLS(budget=3, lam=0.5).fit(X, y, groups=qid)
    Xs = X / scale
    sel, _ = greedy_by_criterion(lambda s: leave_query_out(Xs[:, s], y, qid, 0.5), 7, 3)
    assert est.selected_.tolist() == sel


def test_scores_rank_within_queries_and_ignore_query_offsets():
    X, y, qid = make_queries([30, 25, 35, 30], 10, seed=4)
    est = GreedyRankRLS(budget=4).fit(X, y, groups=qid)
    assert pairwise_ranking_error(y, est.predict(X), qid) < 0.15


def test_pairwise_measures_by_definition():
    y = np.array([3.0, 1.0, 2.0, 2.0, 0.0, 5.0, 1.0])
    s = np.array([0.5, 0.1, 0.1, 0.9, 0.0, 1.0, 1.0])
    qid = np.array([1, 1, 1, 1, 2, 2, 2])
    per_query = []
    for q in (1, 2):
        rows = np.flatnonzero(qid == q)
        wrong = total = 0.0
        for i, j in itertools.permutations(rows, 2):
            if y[i] > y[j]:
                total += 1
                wrong += 1.0 if s[i] < s[j] else 0.5 if s[i] == s[j] else 0.0
        per_query.append((wrong, total))
    assert pairwise_ranking_error(y, s, qid) == pytest.approx(
        np.mean([w / t for w, t in per_query]))
    assert pairwise_ranking_error(y, s, qid, average="pairs") == pytest.approx(
        sum(w for w, _ in per_query) / sum(t for _, t in per_query))
    D, dy = pairs(np.c_[s], y, qid)
    assert pairwise_squared_error(y, s, qid) == pytest.approx(np.sum((dy - D[:, 0]) ** 2) / 7)
    assert set(ranking_scores(y, s, qid)) == {"pairwise_error", "pairwise_sq_error"}


def test_evaluation_method_fits_per_budget():
    from sensorbudget.trainer.evaluation.protocol import Setup, parse_budgets

    X, y, qid = make_queries([6, 5, 7, 6], 8, seed=5)
    models = GreedyRankMethod().fit_predict(X, y[:, None], parse_budgets("2,4"),
                                            Setup(task="ranking"), groups=qid)
    assert [len(m.features) for m in models] == [2, 4]
    assert models[0].predict(X).shape == (len(y), 1)


@parametrize_with_checks([GreedyRankRLS(budget=2)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_evaluate_ranking_scores_each_fold_against_a_direct_refit():
    """evaluate(task="ranking"): folds keep queries whole, and every greedy-rank record equals
    GreedyRankRLS fitted on that fold's training rows (with their query ids) and scored by the
    pairwise ranking error of the held-out queries."""
    from sensorbudget.trainer.evaluation.protocol import EvalData, evaluate, make_folds

    X, y, qid = make_queries([6, 5, 7, 6, 8, 5], 8, seed=9)
    data = EvalData(X, y[:, None], task="ranking", groups=qid)
    result = evaluate(data, ["greedy-rank", "greedy-joint"], "2,4", folds=3)
    assert result.measures == ["pairwise_error", "pairwise_sq_error"]
    for i, (train, test) in enumerate(make_folds(len(y), 3, 0, qid)):
        assert not set(qid[train]) & set(qid[test])
        for k in (2, 4):
            est = GreedyRankRLS(budget=k).fit(X[train], y[train], groups=qid[train])
            s = est.predict(X[test])
            rec = next(r for r in result.records if r["fold"] == i and r["budget"] == str(k)
                       and r["method"] == "greedy-rank")
            assert rec["pairwise_error"] == pytest.approx(
                pairwise_ranking_error(y[test], s, qid[test]))
            assert rec["pairwise_sq_error"] == pytest.approx(
                pairwise_squared_error(y[test], s, qid[test]))
    mean = {m: result.values(m, "4", "pairwise_error").mean() for m in result.methods}
    assert mean["greedy-rank"] < 0.25


@pytest.mark.parametrize("task,groups,methods,match", [
    ("ranking", None, ["greedy-rank"], "needs query ids"),
    ("regression", "q", ["greedy-rank"], "needs task 'ranking'"),
    ("ranking", "few", ["greedy-joint"], "has 2 queries; folds=3"),
])
def test_evaluate_ranking_refuses(task, groups, methods, match):
    from sensorbudget.trainer.errors import TrainerError
    from sensorbudget.trainer.evaluation.protocol import EvalData, evaluate

    X, y, qid = make_queries([6, 5, 7, 6], 8, seed=2)
    g = {"q": qid, "few": qid % 2, None: None}[groups]
    with pytest.raises(TrainerError, match=match):
        evaluate(EvalData(X, y[:, None], task=task, groups=g), methods, "2", folds=3)


def test_no_heldout_predictions_in_transformed_units():
    """The closed form holds out queries of the transformed targets sqrt(m) (y - mean_q y):
    not the units of predict, so the attribute is absent rather than wrong."""
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(24, 5)), rng.normal(size=24)
    est = GreedyRankRLS(budget=2, lam=1.0).fit(X, y, np.repeat(np.arange(6), 4))
    assert not hasattr(est, "heldout_predictions_")
