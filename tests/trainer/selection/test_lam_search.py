"""The lambda search ("path", the default) against explicit ridge refits and the exhaustive grid."""

from pathlib import Path

import numpy as np
import pytest

from tests.trainer.reference import (
    convention_transform,
    greedy_bruteforce,
    lgo_sse_bruteforce,
    loo_sse_bruteforce,
)
from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier
from sensorbudget.trainer.errors import TrainerError
from sensorbudget.trainer.selection import lam_search, rls_math
from sensorbudget.trainer.selection.caches import make_blocks
from sensorbudget.trainer.selection.loop import LAMBDA_GRID, Preprocessing, greedy_select, rebuild_blocks

SHARED = Path(__file__).resolve().parents[4] / "shared" / "data"


def make_data(n, d, t, seed, noise=1.0):
    """A few informative columns and noise of scale ``noise``: the best lambda varies."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=d) + rng.normal(size=d)
    W = np.zeros((d, t))
    W[rng.choice(d, size=min(4, d), replace=False)] = rng.normal(size=(min(4, d), t))
    X[:, 1] = X[:, 0] + 0.05 * rng.normal(size=n)               # near-collinear pair
    Y = X @ W + noise * rng.normal(size=(n, t)) + rng.normal(size=t)
    return X, Y


@pytest.mark.parametrize("n,s,t", [(15, 4, 3), (12, 12, 2), (20, 5, 9), (9, 14, 2), (10, 0, 2)])
def test_curve_equals_loo_refits_at_every_grid_lambda(n, s, t):
    rng = np.random.default_rng(n + s + t)
    XS, Y = rng.normal(size=(n, s)), rng.normal(size=(n, t))
    curve = rls_math.loo_sse_lambda_curve(XS, Y, LAMBDA_GRID)
    ref = [loo_sse_bruteforce(XS, Y, lam) for lam in LAMBDA_GRID]
    np.testing.assert_allclose(curve, ref, rtol=1e-8)


def test_criterion_curve_with_groups_and_missing_targets():
    X, Y = make_data(18, 7, 2, seed=3)
    groups = np.repeat(np.arange(6), 3)
    prep = Preprocessing.fit(X, Y, False, False)
    sel = [2, 5, 0]
    got = lam_search.criterion_curve(X, Y, prep, sel, LAMBDA_GRID, groups)
    ref = [lgo_sse_bruteforce(X[:, sel], Y, groups, lam) for lam in LAMBDA_GRID]
    np.testing.assert_allclose(got, ref, rtol=1e-8)
    Yn = Y.copy()
    Yn[[1, 4, 9], 1] = np.nan
    got = lam_search.criterion_curve(X, Yn, prep, sel, LAMBDA_GRID)
    rows = ~np.isnan(Yn[:, 1])
    for i, lam in enumerate(LAMBDA_GRID):
        ref = (loo_sse_bruteforce(X[:, sel], Y[:, :1], lam)
               + loo_sse_bruteforce(X[rows][:, sel], Y[rows, 1:], lam))
        assert got[i] == pytest.approx(ref, rel=1e-8)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("noise", [0.3, 3.0])
def test_default_search_reports_the_exact_criterion_of_every_lambda(seed, noise):
    X, Y = make_data(16, 9, 2, seed=seed, noise=noise)
    est = GreedyRLS(budget=4).fit(X, Y)
    Xt, Yt = convention_transform(X, Y, True, True)
    sel = est.selected_.tolist()
    ref = [loo_sse_bruteforce(Xt[:, sel], Yt, lam, True) / Y.size for lam in LAMBDA_GRID]
    np.testing.assert_allclose(est.lam_loo_, ref, rtol=1e-8)
    assert est.lam_search_["method"] == "path" and est.lam_search_["runs"] in (1, 2)
    # the result is the greedy path of one grid lambda: refit-per-candidate picks and errors
    assert est.lam_ in LAMBDA_GRID
    picks, sse = greedy_bruteforce(Xt, Yt, est.lam_, 4, intercept=True)
    assert sel == picks
    np.testing.assert_allclose(est.loo_path_, sse / Y.size, rtol=1e-8)
    assert est.loo_path_[-1] == pytest.approx(est.lam_loo_[LAMBDA_GRID.index(est.lam_)])


@pytest.mark.parametrize("seed", range(6))
def test_default_search_within_one_percent_of_the_exhaustive_grid(seed):
    X, Y = make_data(40, 12, 3, seed=seed, noise=[0.2, 1.0, 4.0][seed % 3])
    grid = GreedyRLS(budget=5, lam_search="grid").fit(X, Y)
    path = GreedyRLS(budget=5).fit(X, Y)
    assert path.loo_path_[-1] <= 1.01 * grid.loo_path_[-1]
    if path.lam_ == grid.lam_:
        assert path.selected_.tolist() == grid.selected_.tolist()


def test_grid_option_is_the_exhaustive_grid():
    X, Y = make_data(20, 8, 2, seed=9, noise=2.0)
    est = GreedyRLS(budget=3, lam_search="grid").fit(X, Y)
    fixed = [GreedyRLS(budget=3, lam=lam).fit(X, Y) for lam in LAMBDA_GRID]
    finals = [f.loo_path_[-1] for f in fixed]
    np.testing.assert_allclose(est.lam_loo_, finals, rtol=1e-12)
    best = fixed[int(np.argmin(finals))]
    assert est.lam_ == best.lam_ and est.selected_.tolist() == best.selected_.tolist()
    assert est.lam_search_ == {"method": "grid", "runs": 31}
    assert GreedyRLS(budget=3, lam=0.5).fit(X, Y).lam_search_ == {"method": "fixed", "runs": 1}


def test_steered_run_continues_exactly_after_a_lambda_move():
    X, Y = make_data(14, 7, 2, seed=4)
    prep = Preprocessing.fit(X, Y, False, False)
    path = greedy_select(X, Y, 4, 0.01, prep,
                         steer=lambda sel, lam: 50.0 if len(sel) == 2 else None)
    assert path.lam_moves == [(2, 50.0)] and path.lam == 50.0
    first, sse = greedy_bruteforce(X, Y, 0.01, 2)
    assert path.selected[:2] == first
    np.testing.assert_allclose(path.loo_sse[:2], sse, rtol=1e-9)
    chosen = list(first)
    for step in range(2, 4):          # the rest: refit-per-candidate greedy at the new lambda
        scores = [np.inf if i in chosen else loo_sse_bruteforce(X[:, chosen + [i]], Y, 50.0)
                  for i in range(7)]
        chosen.append(int(np.argmin(scores)))
        assert path.loo_sse[step] == pytest.approx(min(scores), rel=1e-9)
    assert path.selected == chosen


def test_rebuild_equals_one_feature_at_a_time():
    X, Y = make_data(30, 10, 3, seed=2)
    prep = Preprocessing.fit(X, Y, True, True)
    sel, lam = [3, 7, 0, 5], 2.5
    step = make_blocks(X, Y, prep, np.float64)
    for j in sel:
        step[0].add(np.array([j]), lam, X)
    block = rebuild_blocks(X, Y, prep, np.float64, None, sel, lam)[0]
    for name in ("R", "E", "h", "P", "sigma"):
        np.testing.assert_allclose(getattr(block, name), getattr(step[0], name), atol=1e-10)


def test_checkpoints_are_geometric():
    assert lam_search.checkpoints(49) == {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48}
    assert lam_search.checkpoints(0) == set()


def test_separate_mode_and_cost_strategies_search_each_target():
    X, Y = make_data(24, 6, 2, seed=5)
    costs = {f"x{i}": 1.0 + i for i in range(6)}
    est = GreedyRLS(budget=None, max_cost=7, extractor_costs=costs, mode="separate").fit(X, Y)
    assert isinstance(est.lam_search_, list) and len(est.lam_search_) == 2
    assert est.lam_loo_.shape == (2, 31)
    Xt, Yt = convention_transform(X, Y, True, True)
    for q, feats in enumerate(est.target_selected_):
        i = LAMBDA_GRID.index(est.lam_[q])
        ref = loo_sse_bruteforce(Xt[:, feats.tolist()], Yt[:, [q]], est.lam_[q], True) / len(Y)
        assert est.lam_loo_[q, i] == pytest.approx(ref, rel=1e-8)


def test_invalid_lam_search_is_one_clear_error():
    X, Y = make_data(10, 4, 1, seed=0)
    with pytest.raises(TrainerError, match="lam_search='fast' must be one of"):
        GreedyRLS(budget=2, lam_search="fast").fit(X, Y)


@pytest.mark.skipif(not (SHARED / "emotions" / "emotions.arff").exists(),
                    reason="shared emotions data not available")
def test_emotions_same_lambda_and_picks_as_the_grid():
    from sensorbudget.trainer.data import load_table

    tab = load_table(SHARED / "emotions" / "emotions.arff", xml=SHARED / "emotions" /
                     "emotions.xml")
    grid = GreedyRLSClassifier(budget=20, lam_search="grid").fit(tab.X, tab.Y)
    path = GreedyRLSClassifier(budget=20).fit(tab.X, tab.Y)
    assert path.lam_ == grid.lam_
    assert path.selected_.tolist() == grid.selected_.tolist()
    assert path.loo_path_[-1] == pytest.approx(grid.loo_path_[-1], rel=1e-9)
