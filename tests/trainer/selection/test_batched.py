"""Batched small-matrix helpers against numpy's own linear algebra."""

import numpy as np
import pytest

from sensorbudget.trainer.selection import batched


@pytest.mark.parametrize("k", [1, 2, 5])
def test_bmm_equals_matmul(k):
    rng = np.random.default_rng(k)
    A, B = rng.normal(size=(7, 3, k)), rng.normal(size=(7, k, 4))
    np.testing.assert_allclose(batched.bmm(A, B), A @ B, rtol=1e-13)
    out = np.empty((7, 3, 4))
    assert batched.bmm(A, B, out=out) is out
    np.testing.assert_allclose(out, A @ B, rtol=1e-13)


def test_buffers_are_reused_per_tag_and_distinct_across_tags():
    a1, b1 = batched.buffers("test-a", np.float64, (3, 4), (5,))
    a2 = batched.buffers("test-a", np.float64, (2, 2), (5,))[0]
    c = batched.buffers("test-c", np.float64, (3, 4))[0]
    assert a1.shape == (3, 4) and b1.shape == (5,) and a2.shape == (2, 2)
    assert np.shares_memory(a1, a2) and not np.shares_memory(a1, c)
    assert not np.shares_memory(a1, b1)


def test_spd_inverse_matches_numpy():
    rng = np.random.default_rng(0)
    for k in (1, 2, 3, 8, 9):
        A = rng.normal(size=(5, 4, k, k))
        M = A @ np.swapaxes(A, -1, -2) + 0.5 * np.eye(k)
        got = batched.spd_inverse(np.moveaxis(M, (-2, -1), (0, 1)), 0.5)
        np.testing.assert_allclose(np.moveaxis(got, (0, 1), (-2, -1)), np.linalg.inv(M),
                                   rtol=1e-9, atol=1e-12)


def test_spd_inverse_clips_pivots_at_the_floor():
    """A pivot that round-off pushed below the floor (or below zero) is inverted as if it were
    at the floor, instead of giving a huge or NaN inverse."""
    floor = 0.5
    for low in (floor - 0.1, -1e-3):
        M = np.array([[low, 0.0], [0.0, 2.0]])[:, :, None]
        np.testing.assert_allclose(batched.spd_inverse(M, floor)[:, :, 0], np.diag([1 / floor, 0.5]),
                                   rtol=1e-12)
        big = np.diag([low] + [2.0] * 8)[:, :, None]                   # eigh path, k > 8
        np.testing.assert_allclose(batched.spd_inverse(big, floor)[:, :, 0],
                                   np.diag([1 / floor] + [0.5] * 8), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("k", [3, 9])
def test_spd_inverse_writes_into_out(k):
    rng = np.random.default_rng(k)
    A = rng.normal(size=(k, k, 6))
    M = np.einsum("ipn,jpn->ijn", A, A) + np.eye(k)[:, :, None]
    out = np.empty_like(M)
    assert batched.spd_inverse(M, 1.0, out=out) is out
    np.testing.assert_allclose(out, batched.spd_inverse(M, 1.0), rtol=1e-12)
    np.testing.assert_allclose(np.einsum("ijn,jkn->ikn", M, out),
                               np.broadcast_to(np.eye(k)[:, :, None], M.shape), atol=1e-9)
