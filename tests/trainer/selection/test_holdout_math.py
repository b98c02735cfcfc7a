"""Leave-group-out selection against its definition: one ridge refit per held-out group."""

import numpy as np
import pytest

from tests.trainer.reference import (
    convention_transform,
    greedy_by_criterion,
    lgo_sse_bruteforce,
    ridge,
)
from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier, TrainerError
from sensorbudget.trainer.bundle.model import bundle_contents
from sensorbudget.trainer.selection import holdout_math
from sensorbudget.trainer.selection.caches import CacheBlock
from sensorbudget.trainer.selection.costs import build_plan
from sensorbudget.trainer.selection.loop import Preprocessing


def make_data(n, d, t, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=d) + rng.normal(size=d)
    W = np.zeros((d, t))
    W[rng.choice(d, size=min(3, d), replace=False)] = rng.normal(size=(min(3, d), t))
    return X, X @ W + 0.5 * rng.normal(size=(n, t)) + rng.normal(size=t)


def make_groups(n, kind, seed=0):
    """Group ids in shuffled order: mixed sizes with singletons, equal sizes, or two groups."""
    rng = np.random.default_rng(seed)
    if kind == "mixed":
        sizes = [1, 2, 3, 1, 4, 2, 1, 3]
    elif kind == "equal":
        sizes = [3] * (n // 3 + 1)
    else:
        sizes = [n // 2, n - n // 2]
    ids = np.repeat(np.arange(len(sizes)) * 10 + 7, sizes)[:n]
    ids = np.concatenate([ids, np.arange(n - ids.size) + 1000])
    return rng.permutation(ids)


@pytest.mark.parametrize("kind", ["mixed", "equal", "two"])
@pytest.mark.parametrize("n,d", [(17, 6), (12, 15)])
@pytest.mark.parametrize("t", [1, 3])
def test_candidate_scores_equal_group_refits(kind, n, d, t):
    X, Y = make_data(n, d, t, seed=n + d + t)
    groups = make_groups(n, kind, seed=t)
    lam = 0.7
    prep = Preprocessing.fit(X, Y, False, False)
    block = CacheBlock(X, Y, prep, np.float64, groups=groups)
    plan = build_plan(d)
    selected = []
    for b in (2, 4):
        moves = plan.moves(plan.start())
        scores = block.score(moves, lam, X)
        for k in range(d):
            if k not in selected:
                ref = lgo_sse_bruteforce(X[:, selected + [k]], Y, groups, lam)
                np.testing.assert_allclose(scores[k], ref, rtol=1e-9)
        block.add(np.array([b]), lam, X)
        selected.append(b)
        np.testing.assert_allclose(block.sse(), lgo_sse_bruteforce(X[:, selected], Y, groups, lam),
                                   rtol=1e-10)


@pytest.mark.parametrize("sizes", [[1, 2, 3, 1, 4, 2, 1, 3, 3], [40, 40], [20, 20, 3, 2, 1]])
def test_caches_stay_equal_to_their_definition(sizes):
    """After rank-one and block steps, B_Q = (lam G_QQ)^{-1}, F_Q = B_Q E_Q and, for groups of
    more than SMALL_GROUP rows, the cached U = blockdiag(B) R: refreshed as B R' (groups of 20,
    <= RECOMPUTE_U x 2 rows) or by the rank-mb update (groups of 40); small groups cache no U."""
    assert 20 > holdout_math.SMALL_GROUP and 20 <= holdout_math.RECOMPUTE_U * 2 < 40
    n = sum(sizes)
    X, Y = make_data(n, 8, 2, seed=5)
    groups = np.random.default_rng(1).permutation(np.repeat(np.arange(len(sizes)), sizes))
    lam = 0.3
    block = CacheBlock(X, Y, Preprocessing.fit(X, Y, False, False), np.float64, groups=groups)
    for J in ([1], [3, 5], [0]):
        block.add(np.array(J), lam, X)
    S = [1, 3, 5, 0]
    Xo = X[block.rows]
    H = lam * np.linalg.inv(Xo[:, S] @ Xo[:, S].T + lam * np.eye(n))
    hc, n1 = block.holdout, block.n_single
    assert hc.U.shape[0] == sum(s for s in sizes if s > holdout_math.SMALL_GROUP)
    for (m, a, b), B in zip(hc.layout.buckets, hc.B):
        for g in range((b - a) // m):
            rows = slice(n1 + a + g * m, n1 + a + (g + 1) * m)
            np.testing.assert_allclose(B[g], np.linalg.inv(H[rows, rows]), rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(hc.F[rows.start - n1:rows.stop - n1],
                                       B[g] @ block.E[rows], rtol=1e-9, atol=1e-12)
            if m > holdout_math.SMALL_GROUP:
                u = slice(rows.start - n1 - hc.u_start, rows.stop - n1 - hc.u_start)
                np.testing.assert_allclose(hc.U[u], B[g] @ block.R[rows], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kind", ["mixed", "equal"])
@pytest.mark.parametrize("n,d,t", [(18, 7, 2), (11, 16, 1)])
def test_greedy_equals_bruteforce_lgo_greedy(kind, n, d, t):
    X, Y = make_data(n, d, t, seed=3 * n + d)
    groups = make_groups(n, kind, seed=n)
    lam, budget = 0.5, 4
    est = GreedyRLS(budget=budget, lam=lam, fit_intercept=False, standardize=False)
    est.fit(X, Y, groups=groups)
    sel, sse = greedy_by_criterion(lambda s: lgo_sse_bruteforce(X[:, s], Y, groups, lam), d,
                                   budget)
    assert est.selected_.tolist() == sel
    np.testing.assert_allclose(est.loo_path_, sse / Y.size, rtol=1e-9)
    np.testing.assert_allclose(est.coef_, ridge(X[:, sel], Y, lam), rtol=1e-9, atol=1e-12)
    assert est.criterion_ == "leave-group-out" and est.n_groups_ == np.unique(groups).size


@pytest.mark.parametrize("fit_intercept,standardize", [(True, True), (False, True)])
def test_intercept_and_standardize_convention(fit_intercept, standardize):
    X, Y = make_data(16, 9, 2, seed=11)
    groups = make_groups(16, "equal", seed=2)
    est = GreedyRLS(budget=4, lam=0.4, fit_intercept=fit_intercept, standardize=standardize)
    est.fit(X, Y, groups=groups)
    Xt, Yt = convention_transform(X, Y, fit_intercept, standardize)
    sel, sse = greedy_by_criterion(
        lambda s: lgo_sse_bruteforce(Xt[:, s], Yt, groups, 0.4, fit_intercept), 9, 4)
    assert est.selected_.tolist() == sel
    np.testing.assert_allclose(est.loo_path_, sse / Y.size, rtol=1e-9)


@pytest.mark.parametrize("extractors", [None, ["a", "a", "b", "c", "c", "c", "d", "e"]])
@pytest.mark.parametrize("mode", ["joint", "separate"])
def test_singleton_groups_are_exactly_loo(extractors, mode):
    X, Y = make_data(15, 8, 2, seed=1)
    kw = dict(budget=3, lam=None, extractors=extractors, mode=mode)
    plain = GreedyRLS(**kw).fit(X, Y)
    grouped = GreedyRLS(**kw).fit(X, Y, groups=np.arange(15))
    np.testing.assert_array_equal(grouped.selected_, plain.selected_)
    np.testing.assert_array_equal(grouped.loo_path_, plain.loo_path_)
    # the lambda search's curve comes from an SVD without groups, from block updates with them
    np.testing.assert_allclose(grouped.lam_loo_, plain.lam_loo_, rtol=1e-12)
    np.testing.assert_array_equal(grouped.coef_, plain.coef_)
    assert plain.criterion_ == "loo" and plain.n_groups_ is None


SIDE_BY_SIDE = ["e0", "e0", "e1", "e2", "e2", "e2", "e3", "e3", "e4"]
INTERLEAVED = ["e0", "e2", "e3", "e2", "e1", "e3", "e0", "e4", "e2"]


@pytest.mark.parametrize("names,sizes,t", [
    (SIDE_BY_SIDE, None, 2),              # mixed group sizes; consecutive columns
    (INTERLEAVED, None, 2),               # scattered columns (fancy-index gather)
    (SIDE_BY_SIDE, [2] * 10, 3),          # pairs only: the 2 x 2 row-space form
    (INTERLEAVED, [3] * 6 + [1], 5),      # m < t: target Grams through F F^T
    (SIDE_BY_SIDE, [4, 4, 5, 6], 2),      # m > t: target Grams through Z
])
def test_extractor_groups_equal_bruteforce(names, sizes, t):
    """Group moves (block Woodbury) scored by leave-group-out equal refits, on every path of
    :func:`sensorbudget.trainer.selection.holdout_blocks.group_lgo_sse`."""
    n = 19
    X, Y = make_data(n, 9, t, seed=8)
    if sizes is None:
        groups = make_groups(n, "mixed", seed=4)
    else:
        groups = np.random.default_rng(4).permutation(np.repeat(np.arange(len(sizes)), sizes)[:n])
    cols = {e: [i for i, n in enumerate(names) if n == e] for e in dict.fromkeys(names)}
    units = list(cols)
    lam = 0.6
    est = GreedyRLS(budget=3, lam=lam, fit_intercept=False, standardize=False, extractors=names)
    est.fit(X, Y, groups=groups)

    def crit(s):
        return lgo_sse_bruteforce(X[:, [c for u in s for c in cols[units[u]]]], Y, groups, lam)

    sel, sse = greedy_by_criterion(crit, len(units), 3)
    assert est.selected_extractors_ == [units[u] for u in sel]
    np.testing.assert_allclose([e["loo_mse"] for e in est.path_], sse / Y.size, rtol=1e-9)
    f32 = GreedyRLS(budget=3, lam=lam, fit_intercept=False, standardize=False, extractors=names,
                    dtype="float32").fit(X, Y, groups=groups)
    assert f32.selected_extractors_ == est.selected_extractors_
    np.testing.assert_allclose(f32.loo_path_, est.loo_path_, rtol=1e-4)


@pytest.mark.parametrize("sizes,t", [
    ([1, 2, 3, 1, 4, 2, 1, 3, 2], 2),     # mixed sizes
    ([2] * 10, 3),                        # pairs: the 2 x 2 row-space form
    ([3] * 6 + [1], 5),                   # m < t: target Grams through F F^T
    ([4, 4, 5, 6], 2),                    # m > t: target Grams through Z
])
def test_group_move_scores_equal_group_refits(sizes, t):
    """Every extractor move's score equals the LGO SSE of an explicit refit, before and after
    a block step (each path of :func:`sensorbudget.trainer.selection.holdout_blocks.group_lgo_sse`)."""
    n, lam = 19, 0.6
    X, Y = make_data(n, 9, t, seed=len(sizes) + t)
    groups = np.random.default_rng(t).permutation(np.repeat(np.arange(len(sizes)), sizes)[:n])
    plan = build_plan(9, extractors=INTERLEAVED)
    block = CacheBlock(X, Y, Preprocessing.fit(X, Y, False, False), np.float64, groups=groups)
    state, selected = plan.start(), []
    for step in range(2):
        moves = plan.moves(state)
        scores = block.score(moves, lam, X)
        for k in range(len(moves.sizes)):
            ref = lgo_sse_bruteforce(X[:, selected + moves.features(k).tolist()], Y, groups, lam)
            np.testing.assert_allclose(scores[k], ref, rtol=1e-9)
        k = int(np.argmax(moves.sizes))                # a block move: e2 (3 columns), then 2
        block.add(moves.features(k), lam, X)
        selected += moves.features(k).tolist()
        plan.take(state, moves.extractors[k], moves.features(k))


def test_separate_mode_is_each_target_alone():
    X, Y = make_data(16, 7, 2, seed=2)
    groups = make_groups(16, "equal", seed=3)
    est = GreedyRLS(budget=3, lam=0.5, mode="separate").fit(X, Y, groups=groups)
    for q in range(2):
        alone = GreedyRLS(budget=3, lam=0.5).fit(X, Y[:, q], groups=groups)
        np.testing.assert_array_equal(est.target_selected_[q], alone.selected_)


def test_costs_path_reports_the_criterion_of_its_prefixes():
    X, Y = make_data(18, 6, 2, seed=9)
    groups = make_groups(18, "mixed", seed=5)
    costs = {f"x{i}": c for i, c in enumerate([1.0, 3.0, 1.0, 2.0, 0.5, 1.5])}
    est = GreedyRLS(budget=None, lam=0.8, fit_intercept=False, standardize=False,
                    extractor_costs=costs, max_cost=4.0, strategy="cost-ratio")
    est.fit(X, Y, groups=groups)
    assert est.costs_["price"] <= 4.0
    for k, entry in enumerate(est.path_, start=1):
        ref = lgo_sse_bruteforce(X[:, est.selected_[:k]], Y, groups, 0.8) / Y.size
        np.testing.assert_allclose(entry["loo_mse"], ref, rtol=1e-9)


def test_float32_follows_float64():
    X, Y = make_data(40, 12, 3, seed=4)
    groups = np.repeat(np.arange(10), 4)
    a = GreedyRLS(budget=4, lam=1.0).fit(X, Y, groups=groups)
    b = GreedyRLS(budget=4, lam=1.0, dtype="float32").fit(X, Y, groups=groups)
    np.testing.assert_array_equal(a.selected_, b.selected_)
    np.testing.assert_allclose(a.loo_path_, b.loo_path_, rtol=1e-4)


def test_classifier_and_bundle_record_the_criterion():
    X, _ = make_data(24, 6, 1, seed=6)
    y = np.repeat([0, 1, 2], 8)
    groups = np.repeat(np.arange(6), 4)
    est = GreedyRLSClassifier(budget=2, lam=1.0).fit(X, y, groups=groups)
    meta, _ = bundle_contents(est, X, [f"f{i}" for i in range(6)], ["0", "1", "2"],
                              task="multiclass")
    assert meta["criterion"] == "leave-group-out" and meta["n_groups"] == 6
    assert meta["target_rows"] == [24, 24, 24]


def test_layout_is_stable_and_contiguous():
    layout = holdout_math.group_layout(np.array(["b", "a", "b", "c", "a", "a", "d"]))
    assert layout.n_single == 2 and layout.n_groups == 4
    assert layout.order.tolist() == [3, 6, 0, 2, 1, 4, 5]
    assert layout.buckets == ((2, 0, 2), (3, 2, 5))


@pytest.mark.parametrize("groups,match", [(np.zeros(10), "at least 2"),
                                          (np.arange(9), r"shape \(9,\)"),
                                          (np.r_[np.arange(9), np.nan], "NaN")])
def test_bad_groups(groups, match):
    X, Y = make_data(10, 4, 1)
    with pytest.raises(TrainerError, match=match):
        GreedyRLS(budget=2).fit(X, Y, groups=groups)


@pytest.mark.parametrize("m,t", [(2, 1), (2, 2), (3, 5), (6, 8), (6, 2)])
def test_both_scoring_forms_equal_refits(m, t):
    """Expanded form (m < t) and F^T form (m >= t) both exact."""
    n = 4 * m + 3
    X, Y = make_data(n, 6, t, seed=m * 10 + t)
    groups = np.r_[np.repeat(np.arange(4), m), [10, 11, 12]]
    lam = 0.4
    block = CacheBlock(X, Y, Preprocessing.fit(X, Y, False, False), np.float64, groups=groups)
    block.add(np.array([5]), lam, X)
    scores = block.score(build_plan(6).moves(build_plan(6).start()), lam, X)
    ref = [lgo_sse_bruteforce(X[:, [5, k]], Y, groups, lam) for k in range(5)]
    np.testing.assert_allclose(scores[:5], ref, rtol=1e-9)


def test_wide_extractor_uses_the_eigen_solve():
    """An extractor of 9 columns (block solve above 8) scored and added exactly."""
    X, Y = make_data(30, 13, 2, seed=21)
    groups = np.repeat(np.arange(6), 5)
    names = ["wide"] * 9 + ["a", "b", "c", "d"]
    est = GreedyRLS(budget=2, lam=0.5, fit_intercept=False, standardize=False, extractors=names)
    est.fit(X, Y, groups=groups)
    cols = {"wide": list(range(9)), "a": [9], "b": [10], "c": [11], "d": [12]}
    for k, entry in enumerate(est.path_, start=1):
        feats = [c for e in est.selected_extractors_[:k] for c in cols[e]]
        np.testing.assert_allclose(entry["loo_mse"],
                                   lgo_sse_bruteforce(X[:, feats], Y, groups, 0.5) / Y.size,
                                   rtol=1e-9)
    assert "wide" in est.selected_extractors_
