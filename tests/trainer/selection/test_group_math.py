"""Group (extractor) selection against its slow definition: a ridge refit for every candidate."""

import numpy as np
import pytest

from tests.trainer.reference import convention_transform, loo_sse_bruteforce, ridge
from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.selection import group_math, rls_math

KINDS = ("price", "energy", "time")


def make_data(n, d, t, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=d) + rng.normal(size=d)
    W = np.zeros((d, t))
    W[rng.choice(d, size=min(4, d), replace=False)] = rng.normal(size=(min(4, d), t))
    return X, X @ W + 0.5 * rng.normal(size=(n, t)) + rng.normal(size=t)


def as_sets(extractors):
    return [frozenset([e]) if isinstance(e, str) else frozenset(e) for e in extractors]


def moves_by_definition(needs, chosen):
    """Single extractors unlocking a feature; if none, the smallest sets unlocking one."""
    untaken = [i for i, need in enumerate(needs) if not need <= chosen]
    names = sorted(set().union(*needs) - chosen)
    moves = {}
    for e in names:
        feats = [i for i in untaken if needs[i] <= chosen | {e}]
        if feats:
            moves[frozenset([e])] = feats
    if not moves:
        size = min(len(needs[i] - chosen) for i in untaken)
        for i in untaken:
            K = needs[i] - chosen
            if len(K) == size:
                moves[K] = [j for j in untaken if needs[j] <= chosen | K]
    return sorted(moves.items(), key=lambda kv: kv[1][0])


def totals_by_definition(chosen, ext_costs, ext_sensors, sensor_costs):
    sensors = set().union(*[set(ext_sensors.get(e, ())) for e in chosen]) if chosen else set()
    out = {"extractors": len(chosen), "sensors": len(sensors)}
    for k in KINDS:
        out[k] = (sum(ext_costs[e][k] for e in chosen)
                  + sum(sensor_costs[s][k] for s in sensors))
    return out


def group_greedy_bruteforce(X, Y, lam, extractors, *, limits=None, ext_costs=None,
                            ext_sensors=None, sensor_costs=None, rule="error", intercept=False):
    """Budgeted greedy over extractors by definition: every candidate refit n times (LOO)."""
    needs = as_sets(extractors)
    names = set().union(*needs)
    ext_sensors = ext_sensors or {}
    sensor_costs = sensor_costs or {}
    if ext_costs is None:
        price = 0.0 if sensor_costs else 1.0
        ext_costs = {e: {"price": price, "energy": 0.0, "time": 0.0} for e in names}
    limits = {k: v for k, v in (limits or {}).items() if v is not None}
    weights = {k: 1.0 / v for k, v in limits.items() if v > 0} or {"price": 1.0}
    chosen, selected, steps = set(), [], []
    sse_now = loo_sse_bruteforce(X[:, []], Y, lam, intercept)
    while True:
        base = totals_by_definition(chosen, ext_costs, ext_sensors, sensor_costs)
        cands = []
        for K, feats in moves_by_definition(needs, chosen):
            after = totals_by_definition(chosen | K, ext_costs, ext_sensors, sensor_costs)
            if all(after[k] <= v * (1 + 1e-9) for k, v in limits.items()):
                cost = sum(w * (after[k] - base[k]) for k, w in weights.items())
                cands.append((K, feats, loo_sse_bruteforce(X[:, selected + feats], Y, lam, intercept),
                              cost))
        if not cands:
            return selected, steps
        scores = np.array([c[2] for c in cands])
        costs = np.array([c[3] for c in cands])
        dec = sse_now - scores
        if rule == "error" or not (dec > 0).any() or np.ptp(costs[dec > 0]) < 1e-12:
            k = int(np.argmin(scores))
        else:
            ratio = np.where(dec > 0, np.where(costs > 0, dec / np.maximum(costs, 1e-300),
                                               np.inf), -np.inf)
            k = int(np.argmax(ratio))
            if np.isinf(ratio[k]):
                k = int(np.argmin(np.where(np.isposinf(ratio), scores, np.inf)))
        K, feats, sse_now, _ = cands[k]
        chosen |= K
        selected += feats
        steps.append((K, feats, sse_now))


def check_against_bruteforce(est, X, Y, lam, extractors, **kwargs):
    Xt, Yt = convention_transform(X, Y, est.fit_intercept, est.standardize)
    sel, steps = group_greedy_bruteforce(Xt, Yt, lam, extractors, intercept=est.fit_intercept,
                                         **kwargs)
    assert est.selected_.tolist() == sel
    assert [set(e["added_extractors"]) for e in est.path_] == [set(s[0]) for s in steps]
    np.testing.assert_allclose([e["loo_mse"] for e in est.path_],
                               [s[2] / Y.size for s in steps], rtol=1e-9)
    W = ridge(Xt[:, sel], Yt, lam) / est.x_scale_[sel][:, None]
    np.testing.assert_allclose(est.coef_, W, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("n,m,groups", [(16, 3, 5), (10, 4, 4)])
@pytest.mark.parametrize("lam", [0.3, 4.0])
@pytest.mark.parametrize("fit_intercept,standardize", [(False, False), (True, True)])
def test_group_selection_equals_refit_bruteforce(n, m, groups, lam, fit_intercept, standardize):
    X, Y = make_data(n, m * groups, 2, seed=n + m)
    extractors = [f"e{i // m}" for i in range(m * groups)]
    est = GreedyRLS(budget=3, lam=lam, extractors=extractors, fit_intercept=fit_intercept,
                    standardize=standardize).fit(X, Y)
    assert len(est.path_) == 3 and len(est.selected_) == 3 * m
    check_against_bruteforce(est, X, Y, lam, extractors, limits={"extractors": 3})


def test_mixed_group_sizes_and_many_to_many():
    X, Y = make_data(18, 11, 3, seed=5)
    extractors = ["a", "a", "b", "c", "c", "c", ("a", "d"), "d", ("b", "c"), "e", "e"]
    est = GreedyRLS(budget=4, lam=0.7, extractors=extractors).fit(X, Y)
    check_against_bruteforce(est, X, Y, 0.7, extractors, limits={"extractors": 4})


def test_one_feature_per_extractor_with_unit_costs_equals_plain_selection():
    X, Y = make_data(30, 9, 2, seed=11)
    plain = GreedyRLS(budget=5).fit(X, Y)
    named = GreedyRLS(budget=5, extractors=[f"f{i}" for i in range(9)],
                      extractor_costs={f"f{i}": 1.0 for i in range(9)}, max_cost=5.0).fit(X, Y)
    np.testing.assert_array_equal(named.selected_, plain.selected_)
    np.testing.assert_array_equal(named.loo_path_, plain.loo_path_)
    np.testing.assert_array_equal(named.coef_, plain.coef_)
    assert named.lam_ == plain.lam_ and named.strategy_ == "error"
    assert named.selected_extractors_ == [f"f{i}" for i in plain.selected_]


@pytest.mark.parametrize("sizes", [(3, 3, 3, 3), (2, 5, 1, 4)])
def test_group_scores_and_block_update_equal_recomputation(sizes):
    rng = np.random.default_rng(sum(sizes))
    n, t, lam = 14, 2, 0.9
    d = 3 + sum(sizes)
    X, Y = rng.normal(size=(n, d)), rng.normal(size=(n, t))
    R = X.copy()
    E, h, P, sigma = rls_math.initial_caches(R, Y)
    first = np.array([0, 1, 2])
    group_math.add_group(R, E, h, P, sigma, X[:, first], first, lam)
    Ginv = X[:, first] @ X[:, first].T + lam * np.eye(n)
    G = np.linalg.inv(Ginv)
    np.testing.assert_allclose(R, lam * G @ X, atol=1e-10)
    np.testing.assert_allclose(E, lam * G @ Y, atol=1e-10)
    np.testing.assert_allclose(h, lam * np.diag(G), atol=1e-12)
    np.testing.assert_allclose(P, X.T @ E, atol=1e-10)
    np.testing.assert_allclose(sigma, np.einsum("ij,ij->j", X, R), atol=1e-10)
    start = np.cumsum((3,) + sizes)[:-1]
    for s, m in zip(start, sizes):
        idx = np.arange(s, s + m)[None]
        S = group_math.block_gram(X[:, idx.ravel()], R, idx)
        score = group_math.group_loo_sse(R, E, h, P, idx, S, lam)[0]
        cols = np.concatenate([first, idx[0]])
        assert score == pytest.approx(loo_sse_bruteforce(X[:, cols], Y, lam), rel=1e-10)


def test_downdated_grams_equal_recomputed_grams():
    rng = np.random.default_rng(2)
    X, Y, lam = rng.normal(size=(12, 10)), rng.normal(size=(12, 1)), 0.5
    R = X.copy()
    E, h, P, sigma = rls_math.initial_caches(R, Y)
    idx = np.array([[4, 5], [6, 7], [8, 9]])
    S = group_math.block_gram(X[:, idx.ravel()], R, idx)
    for J in (np.array([0, 1, 2]), np.array([3])):
        group_math.downdate_grams(S, idx, *group_math.add_group(R, E, h, P, sigma, X[:, J], J, lam))
        np.testing.assert_allclose(S, group_math.block_gram(X[:, idx.ravel()], R, idx), atol=1e-12)


def test_budget_none_selects_every_extractor_and_path_is_consistent():
    X, Y = make_data(20, 8, 1, seed=3)
    est = GreedyRLS(budget=None, lam=1.0, extractors=[f"e{i // 2}" for i in range(8)]).fit(X, Y)
    assert sorted(est.selected_.tolist()) == list(range(8))
    assert [e["costs"]["extractors"] for e in est.path_] == [1, 2, 3, 4]
    assert est.loo_path_.shape == (8,)
    np.testing.assert_allclose(est.predict(X), X @ est.coef_[np.argsort(est.selected_)]
                               + est.intercept_)


def test_group_scores_do_not_depend_on_blocking():
    rng = np.random.default_rng(9)
    n, t, lam = 23, 3, 0.4
    X, Y = rng.normal(size=(n, 24)), rng.normal(size=(n, t))
    R = X.copy()
    E, h, P, sigma = rls_math.initial_caches(R, Y)
    group_math.add_group(R, E, h, P, sigma, X[:, :2], np.array([0, 1]), lam)
    idx = np.arange(2, 23).reshape(7, 3)
    S = group_math.block_gram(X[:, idx.ravel()], R, idx, row_block=5)
    whole = group_math.group_loo_sse(R, E, h, P, idx, S, lam)
    blocked = group_math.group_loo_sse(R, E, h, P, idx, S, lam, row_block=4, col_block=6)
    np.testing.assert_allclose(blocked, whole, rtol=1e-12)
    for g, cols in enumerate(idx):
        ref = loo_sse_bruteforce(X[:, [0, 1, *cols]], Y, lam)
        assert whole[g] == pytest.approx(ref, rel=1e-10)
