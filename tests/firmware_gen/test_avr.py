"""AVR firmware (ATmega328P at 16 MHz) in simavr through the sbfw_simavr harness: protocol,
parity with the Python reference, cycle counts from Timer1, exit code through GPIOR0."""

import struct

import numpy as np
import pytest

from sensorbudget.device_sim.protocol import Cmd, Err, Unit
from sensorbudget.firmware_gen import reference
from tests.firmware_gen.conftest import bm_full_scale, need_tools
from tests.firmware_gen.helpers import (
    device_samples,
    expect_error,
    predict,
    push_samples,
    same_bits,
)


@pytest.fixture(autouse=True)
def _avr():
    need_tools("avr-gcc", "gcc")


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_simavr_matches_the_reference(firmware, kinds_bundle, bm_recordings, numeric):
    """Every extractor kind (avr-libc soft float included) and the model, bit for bit."""
    built = firmware(kinds_bundle, "avr", numeric, full_scale=bm_full_scale(bm_recordings))
    plan = built.plan
    samples = device_samples(plan, bm_recordings.recordings[25].columns)[:60]
    _, inputs, expected = reference.stream(plan, kinds_bundle, samples)
    with built.start() as dev:
        assert dev.call(Cmd.HELLO)[12:] == b"sbmodel"
        windows, scores = push_samples(dev, plan, samples, 10)
        assert windows == list(range(len(expected))) == [0, 1, 2, 3, 4]
        assert same_bits(scores, np.asarray(expected).astype(scores.dtype))
        assert same_bits(predict(dev, plan, inputs[1]), scores[1])
        unit, extract, model, pushes = struct.unpack("<BIII", dev.call(Cmd.STATS))
        assert unit == Unit.CYCLES and extract > model > 0 and pushes > 0
        expect_error(dev, Cmd.PUSH_SAMPLES, b"\x01\x00", Err.BAD_LENGTH)
        expect_error(dev, Cmd.PREDICT, b"\x00" * 300, Err.BAD_LENGTH)   # > 256-byte buffer
        assert dev.quit(9) == 9


def test_q15_model_costs_at_most_50_cycles_per_mac(firmware, bm_bundle, bm_recordings):
    built = firmware(bm_bundle, "avr", "q15", full_scale=bm_full_scale(bm_recordings))
    plan = built.plan
    rng = np.random.default_rng(1)
    x = rng.integers(-32767, 32768, size=plan.k)
    fx = built.firmware.header.fixed
    with built.start() as dev:
        assert same_bits(predict(dev, plan, x),
                         reference.scores(plan, built.bundle, fx, x[None, :])[0].astype("<i4"))
        unit, total = dev.bench(200, 0)
        _, _, model, _ = struct.unpack("<BIII", dev.call(Cmd.STATS))
        dev.quit(0)
    assert unit == Unit.CYCLES
    assert abs(total / 200 - model) < 20      # one timed call ~ the mean of 200
    assert total / 200 / (plan.k * plan.t) <= 50


@pytest.mark.parametrize("which", ["kinds", "odd_targets"])
def test_q15_kernel_is_exact_at_the_extremes(firmware, kinds_bundle, odd_targets_bundle,
                                             bm_recordings, which):
    """Two targets per multiplier pass (and a single last target) with the shift-based
    rescale, against the integer model: random inputs, both signs' rounding, saturation."""
    from sensorbudget.firmware_gen.plan import make_plan

    bundle = kinds_bundle if which == "kinds" else odd_targets_bundle
    channels = make_plan(bundle, name="sbmodel", numeric="float32").channels
    scales = {c: v for c, v in bm_full_scale(bm_recordings).items() if c in channels}
    built = firmware(bundle, "avr", "q15", full_scale=scales)
    plan, fx = built.plan, built.firmware.header.fixed
    assert plan.t == (4 if which == "kinds" else 3)
    rng = np.random.default_rng(2)
    inputs = np.concatenate([rng.integers(-32768, 32768, size=(12, plan.k)),
                             np.full((1, plan.k), 32767), np.full((1, plan.k), -32768),
                             np.where(rng.random((4, plan.k)) < 0.5, 32767, -32768)])
    with built.start() as dev:
        for row in inputs:
            assert same_bits(predict(dev, plan, row),
                             reference.scores(plan, bundle, fx, row[None, :])[0].astype("<i4"))
        dev.quit(0)
