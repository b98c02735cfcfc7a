"""Many targets: Q = E P^T kept by rank-2 updates, against E P^T recomputed, the per-step GEMM
path and explicit ridge refits."""

import numpy as np
import pytest

from tests.trainer.reference import (
    convention_transform,
    greedy_bruteforce,
    loo_sse_bruteforce,
)
from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.selection import blas_rows, caches, rls_math, wide_rows
from sensorbudget.trainer.selection.costs import singleton_plan
from sensorbudget.trainer.selection.loop import Preprocessing


def make_data(n, d, t, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, 1::2] += 0.8 * X[:, 0:d - 1:2]               # correlated columns
    Y = X[:, :4] @ rng.normal(size=(4, t)) + 0.5 * rng.normal(size=(n, t))
    return X, Y


def run_steps(X, Y, steps, dtype=np.float64, lam=0.7):
    """A greedy run driven by hand on one cache block; returns (block, selected columns)."""
    prep = Preprocessing.fit(X, Y, True, True)
    block = caches.make_blocks(X, Y, prep, dtype)[0]
    plan = singleton_plan(X.shape[1])
    state = plan.start()
    selected = []
    for _ in range(steps):
        moves = plan.moves(state)
        k = int(np.argmin(block.score(moves, lam)))
        block.add(moves.features(k), lam)
        selected += [int(j) for j in moves.features(k)]
        plan.take(state, moves.extractors[k], moves.features(k))
    return block, selected


@pytest.fixture
def keep_q(monkeypatch):
    """Keep Q from two targets on (the default threshold is for speed, not correctness)."""
    monkeypatch.setattr(wide_rows, "TRACK_TARGETS", 2)


def test_target_products_is_the_gemm():
    rng = np.random.default_rng(1)
    E, P = rng.normal(size=(2100, 7)), rng.normal(size=(13, 7))
    np.testing.assert_allclose(wide_rows.target_products(E, P), E @ P.T, rtol=1e-12, atol=1e-12)


def test_rank_k_update_in_place_matches_numpy():
    rng = np.random.default_rng(2)
    A, U, V = rng.normal(size=(50, 30)), rng.normal(size=(50, 2)), rng.normal(size=(30, 2))
    want = A + U @ V.T
    B = A.copy()
    blas_rows.rank_k_update(B, U, V)
    np.testing.assert_allclose(B, want, rtol=1e-13, atol=1e-13)
    C = np.asfortranarray(A)                          # the row-block fallback
    blas_rows.rank_k_update(C, U, V)
    np.testing.assert_allclose(C, want, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("dtype,rtol,sse_rtol", [(np.float64, 1e-9, 1e-9),
                                                 (np.float32, 2e-3, 1e-5)])
def test_kept_q_equals_recomputed_products(keep_q, dtype, rtol, sse_rtol):
    X, Y = make_data(400, 40, 6)
    block, selected = run_steps(X, Y, 25, dtype)
    local = block.local
    assert local.Q is not None                          # the kept path was taken
    want = local.E.astype(np.float64) @ block.P.T
    np.testing.assert_allclose(local.Q, want, rtol=0, atol=rtol * np.abs(want).max())
    # the criterion per target after the kept-Q steps is that of n explicit LOO refits
    # (standardized columns, intercept refitted in every fold)
    Xs, _ = convention_transform(X, Y, True, True)
    brute = [loo_sse_bruteforce(Xs[:, selected], Y[:, q], 0.7, intercept=True)
             for q in range(Y.shape[1])]
    np.testing.assert_allclose(block.sse_per_target(), brute, rtol=sse_rtol)


def test_threshold_keeps_q_only_with_many_targets():
    X, Y = make_data(200, 20, wide_rows.TRACK_TARGETS - 1)
    assert run_steps(X, Y, 2)[0].local.Q is None
    X, Y = make_data(200, 20, wide_rows.TRACK_TARGETS)
    assert run_steps(X, Y, 2)[0].local.Q is not None


@pytest.mark.parametrize("lam", [0.05, 3.0])
def test_kept_q_picks_equal_ridge_refits(keep_q, lam):
    X, Y = make_data(14, 9, 3, seed=5)
    est = GreedyRLS(budget=5, lam=lam, fit_intercept=False, standardize=False).fit(X, Y)
    sel, sse = greedy_bruteforce(X, Y, lam, 5)
    assert est.selected_.tolist() == sel
    np.testing.assert_allclose(est.loo_path_, sse / Y.size, rtol=1e-9)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_kept_q_path_equals_gemm_path(monkeypatch, dtype):
    X, Y = make_data(600, 60, 70, seed=3)
    runs = []
    for threshold in (2, 10 ** 9):
        monkeypatch.setattr(wide_rows, "TRACK_TARGETS", threshold)
        runs.append(GreedyRLS(budget=30, lam=1.0, dtype=dtype).fit(X, Y))
    kept, gemm = runs
    assert kept.selected_.tolist() == gemm.selected_.tolist()
    np.testing.assert_allclose(kept.loo_path_, gemm.loo_path_,
                               rtol=1e-12 if dtype == "float64" else 1e-5)


def test_group_moves_drop_q_and_recompute(keep_q):
    """A block move (Woodbury) drops Q; the next single-column scoring rebuilds it exactly."""
    X, Y = make_data(300, 12, 4, seed=7)
    prep = Preprocessing.fit(X, Y, True, True)
    block = caches.make_blocks(X, Y, prep, np.float64)[0]
    plan = singleton_plan(12)
    block.score(plan.moves(plan.start()), 1.0)
    assert block.local.Q is not None
    block.add(np.array([0, 3]), 1.0)
    assert block.local.Q is None
    moves = plan.moves(plan.start())
    scores = block.score(moves, 1.0)
    np.testing.assert_allclose(block.local.Q, block.local.E @ block.P.T, rtol=1e-12, atol=1e-12)
    fresh = rls_math.candidate_loo_sse(block.local.R, block.local.E, block.local.h, block.P,
                                       block.sigma, 1.0)
    np.testing.assert_allclose(scores, fresh, rtol=1e-12)
