"""The integer input quantiser (:class:`sensorbudget.trainer.sensing.q15.IntQuantizer`) against
the exact rational ``u = (r * unit - offset) * inv_scale`` and against the header's float32
quantiser (:func:`sensorbudget.export.fixed_point.quantize_inputs`), for every integer of a
kind's range near the clamp limits and the centre and on a grid elsewhere, on seeded random
training ranges and units."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from sensorbudget.export.fixed_point import QUANT_SLACK, quantize_inputs, quantize_model
from sensorbudget.trainer.sensing.q15 import (
    RAW_RANGE,
    energy_shift,
    int_quantizer,
)

KINDS = ("mean", "ptp", "rms", "mag_mean", "energy")


def _case(seed: int, kind: str):
    """(unit, raw range, training range) of a random feature: a power-of-two unit, a training
    range somewhere inside (or around) the real values the kind can take, sometimes narrow."""
    rng = np.random.default_rng(seed)
    unit = 2.0 ** int(rng.integers(-20, 4))
    lo_r, hi_r = RAW_RANGE[kind]
    if kind == "energy":
        hi_r = (64 << 30) >> energy_shift(64)
    width = (hi_r - lo_r) * 10.0 ** rng.uniform(-4.5, 0.1)
    centre = rng.uniform(lo_r, hi_r)
    return unit, (lo_r, hi_r), (centre - width / 2) * unit, (centre + width / 2) * unit


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(6))
def test_integer_inputs_are_within_half_a_step_and_the_slack(kind, seed):
    unit, (lo_r, hi_r), x_min, x_max = _case(seed * 7 + len(kind), kind)
    fixed = quantize_model(np.ones((1, 1)), np.zeros(1), [x_min], [x_max], "q15")
    offset, inv = fixed.input_offset[0], fixed.input_inv_scale[0]
    quant = int_quantizer(unit, offset, inv, (lo_r, hi_r))
    assert quant is not None
    # every integer around the clamp limits and the centre, a grid of the rest
    near = [np.arange(c - 300, c + 300) for c in (quant.lo, quant.mid, quant.hi)]
    raw = np.unique(np.clip(np.concatenate([np.linspace(lo_r, hi_r, 3000).astype(np.int64),
                                            *near]), lo_r, hi_r))
    got = quant.apply(raw)
    # the exact value, as rationals (every float involved is exact in a Fraction)
    a, oi = Fraction(unit) * Fraction(float(inv)), Fraction(float(offset)) * Fraction(float(inv))
    u = np.array([float(int(r) * a - oi) for r in raw])
    sat = np.clip(u, -32767, 32767)
    assert np.all(np.abs(got - sat) <= 0.5 + 2.0 ** -7 + 1e-9)
    assert np.all(np.abs(got) <= 32767)
    # beside the header's float quantiser on the float32 feature: one step apart at most, and
    # only where u is within the slack of a tie (the float path rounds u +- its own error)
    want = quantize_inputs(fixed, (raw * unit).astype(np.float32)[:, None])[:, 0]
    differ = got != want
    assert np.all(np.abs(got - want) <= 1)
    tie = np.abs(np.abs(u - np.floor(u)) - 0.5) <= QUANT_SLACK
    assert np.all(tie[differ]), u[differ & ~tie][:5]


def test_a_range_below_a_step_has_no_integer_quantiser():
    """A training range of a 1e-9th of a step: the multiplier would not fit 32 bits."""
    fixed = quantize_model(np.ones((1, 1)), np.zeros(1), [1.0], [1.0 + 2.0 ** -30], "q15")
    assert int_quantizer(2.0 ** -4, fixed.input_offset[0], fixed.input_inv_scale[0],
                         RAW_RANGE["mean"]) is None


def test_energy_shift_keeps_float32_exact():
    for n in (1, 2, 7, 64, 257, 32768):
        top = (n << 30) >> energy_shift(n)
        assert top < 2 ** 24
        assert float(np.float32(top)) == top
