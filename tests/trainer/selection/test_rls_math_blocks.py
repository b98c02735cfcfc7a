"""The blocked and threaded step math against its definitions: candidate scores in sub-blocks
(narrow and wide GEMM paths) against explicit LOO refits and the plain formula on whole arrays,
the threaded sums over row blocks against whole-array sums."""

import numpy as np
import pytest

from tests.trainer.reference import loo_sse_bruteforce
from sensorbudget.trainer.selection import rls_math


def make_data(n, d, t, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=d)
    Y = X[:, :3] @ rng.normal(size=(3, t)) + 0.3 * rng.normal(size=(n, t))
    return X, Y


def caches_after(X, Y, picks, lam):
    R = X.copy()
    E, h, P, sigma = rls_math.initial_caches(R, Y)
    for b in picks:
        rls_math.add_feature(R, E, h, P, sigma, X[:, b], b, lam)
    return R, E, h, P, sigma


def formula_scores(R, E, h, P, sigma, lam):
    """e_i = sum_j ||E_j - w_i R_ji P_i||^2 / (h_j - w_i R_ji^2)^2 on whole arrays, inf where
    an updated 1 - leverage is not positive."""
    w = 1.0 / (lam + sigma)
    out = np.empty(R.shape[1])
    for i in range(R.shape[1]):
        x = w[i] * R[:, i]
        res = E - np.outer(x, P[i])
        den = h - x * R[:, i]
        out[i] = np.inf if den.min() <= 0 else np.sum(np.sum(res * res, axis=1) / den ** 2)
    return out


@pytest.fixture(params=["narrow", "wide"])
def tiny_blocks(request, monkeypatch):
    """Sub-blocks of a few rows (several per task and per column block) on both GEMM paths."""
    monkeypatch.setattr(rls_math, "SUB_ENTRIES", 24)
    monkeypatch.setattr(rls_math, "WIDE_T", 1 if request.param == "wide" else 10 ** 6)
    return request.param


@pytest.mark.parametrize("n,d,t", [(23, 9, 2), (13, 21, 3)])
def test_sub_blocked_scores_equal_explicit_refits(tiny_blocks, n, d, t):
    X, Y = make_data(n, d, t, seed=n + d)
    lam = 0.6
    R, E, h, P, sigma = caches_after(X, Y, [1, 4], lam)
    for kw in ({}, {"row_block": 7, "col_block": 4}):
        scores = rls_math.candidate_loo_sse(R, E, h, P, sigma, lam, **kw)
        for i in set(range(d)) - {1, 4}:
            ref = loo_sse_bruteforce(X[:, [1, 4, i]], Y, lam)
            assert scores[i] == pytest.approx(ref, rel=1e-9)
        np.testing.assert_allclose(scores, formula_scores(R, E, h, P, sigma, lam), rtol=1e-10)


def test_known_row_norms_give_the_same_scores(tiny_blocks):
    X, Y = make_data(30, 12, 4, seed=5)
    R, E, h, P, sigma = caches_after(X, Y, [0], 1.3)
    _, a2 = rls_math.loo_sse_terms(E, h)
    np.testing.assert_allclose(a2, np.sum(E * E, axis=1), rtol=1e-14)
    np.testing.assert_allclose(
        rls_math.candidate_loo_sse(R, E, h, P, sigma, 1.3, col_block=5, a2=a2),
        rls_math.candidate_loo_sse(R, E, h, P, sigma, 1.3, col_block=5), rtol=1e-13)


def test_non_positive_leverage_in_a_later_sub_block_scores_inf(tiny_blocks):
    X, Y = make_data(20, 6, 2, seed=9)
    R, E, h, P, sigma = caches_after(X, Y, [2], 0.5)
    h = h.copy()
    w = 1.0 / (0.5 + sigma)
    h[17] = 0.5 * w[3] * R[17, 3] ** 2          # row 17 (a later sub-block) breaks column 3
    scores = rls_math.candidate_loo_sse(R, E, h, P, sigma, 0.5, col_block=4)
    ref = formula_scores(R, E, h, P, sigma, 0.5)
    assert np.isinf(scores[3]) and np.isinf(ref[3])
    np.testing.assert_allclose(scores, ref, rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_block_sums_equal_whole_array_sums(monkeypatch, dtype):
    X, Y = make_data(70, 11, 5, seed=2)
    R, E, h, P, sigma = caches_after(X.astype(dtype), Y, [3, 6], 0.9)
    whole = rls_math.loo_sse_terms(E, h), rls_math.residual_products(R, R[:, 1].copy())
    monkeypatch.setattr(rls_math, "PARALLEL_ENTRIES", 1)    # row blocks of UPDATE_ROWS on the
    monkeypatch.setattr(rls_math, "UPDATE_ROWS", 16)        # worker threads
    with rls_math.single_threaded_blas():
        (per_target, a2), r = rls_math.loo_sse_terms(E, h), rls_math.residual_products(
            R, R[:, 1].copy())
    tol = 1e-5 if dtype == np.float32 else 1e-12
    ref = R.T.astype(float) @ R[:, 1].astype(float)
    np.testing.assert_allclose(r, ref, rtol=0, atol=tol * np.abs(ref).max())
    np.testing.assert_allclose(whole[1], ref, rtol=0, atol=tol * np.abs(ref).max())
    E64, h64 = E.astype(float), h.astype(float)
    np.testing.assert_allclose(per_target, np.sum((E64 / h64[:, None]) ** 2, axis=0), rtol=tol)
    np.testing.assert_allclose(per_target, whole[0][0], rtol=1e-12)
    np.testing.assert_allclose(a2, np.sum(E64 ** 2, axis=1), rtol=tol)
    np.testing.assert_allclose(rls_math.loo_sse_per_target(E, h), per_target, rtol=1e-12)


def test_scores_are_deterministic():
    X, Y = make_data(600, 40, 3, seed=4)
    R, E, h, P, sigma = caches_after(X, Y, [5, 7], 0.2)
    first = rls_math.candidate_loo_sse(R, E, h, P, sigma, 0.2, row_block=64)
    for _ in range(3):
        np.testing.assert_array_equal(
            rls_math.candidate_loo_sse(R, E, h, P, sigma, 0.2, row_block=64), first)
