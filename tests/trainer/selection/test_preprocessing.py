"""Standardization is numerically stable and "constant" is relative to a column's magnitude;
row partitions combine to the same map (issue 21 item 8)."""

import numpy as np
import pytest

from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.selection.loop import CONSTANT_RTOL, Preprocessing, combine_sums, row_sums


def columns(n=400, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 5))
    return np.column_stack([1e8 + 0.01 * z[:, 0],        # far from zero: E[x^2]-m^2 fails
                            1e-20 * z[:, 1],              # tiny but varying: not constant
                            np.full(n, 3.0),              # constant
                            1e8 + 1e-9 * z[:, 2],         # varies below float64 resolution
                            z[:, 3]]), z


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_scales_equal_numpy_two_pass(fit_intercept):
    X, _ = columns()
    prep = Preprocessing.fit(X, np.zeros((len(X), 1)), fit_intercept, True)
    ref = X.std(axis=0) if fit_intercept else np.sqrt((X ** 2).mean(axis=0))
    constant = ref <= CONSTANT_RTOL * np.abs(X).max(axis=0)
    assert constant.tolist() == [False, False, True, True, False] or not fit_intercept
    np.testing.assert_allclose(prep.x_scale[~constant], ref[~constant], rtol=1e-9)
    assert (prep.x_scale[constant] == 1.0).all()
    if fit_intercept:
        assert prep.x_scale[0] == pytest.approx(0.01 * columns()[1][:, 0].std(), rel=1e-6)


def test_partitions_combine_to_the_whole():
    X, _ = columns(n=300, seed=1)
    Y = np.arange(300.0)[:, None]
    whole = row_sums(X, Y)
    parts = combine_sums([row_sums(X[a:b], Y[a:b]) for a, b in ((0, 7), (7, 150), (150, 300))])
    for key in ("n", "x", "absmax", "y", "y_count"):
        np.testing.assert_allclose(parts[key], whole[key], rtol=1e-12)
    # float64 resolves 1e8 + 0.01 z to about 1e-6 of its variance, whichever way it is summed
    np.testing.assert_allclose(parts["m2"], whole["m2"], rtol=1e-6, atol=1e-300)


def test_selection_picks_the_informative_far_from_zero_column():
    """y depends on the tiny variation of a column near 1e8; with E[x^2]-m^2 its scale came out
    ~3.16 instead of ~0.01 and a noise column was picked instead."""
    rng = np.random.default_rng(2)
    n = 300
    signal = rng.normal(size=n)
    X = np.column_stack([1e8 + 0.01 * signal, rng.normal(size=(n, 4))])
    y = signal + 0.05 * rng.normal(size=n)
    est = GreedyRLS(budget=1, lam=1.0).fit(X, y)
    assert est.selected_.tolist() == [0]
    np.testing.assert_allclose(est.predict(X), y, atol=0.3)
