"""Cortex-M firmware booted in QEMU (mps2-an386 / mps2-an385, -icount shift=0): protocol,
parity with the Python reference on a real recording, costs in instructions, exit codes."""

import struct

import numpy as np
import pytest

from sensorbudget.device_sim.protocol import Cmd, Err, Unit, encode_frame
from sensorbudget.firmware_gen import reference
from tests.firmware_gen.conftest import bm_full_scale, need_tools
from tests.firmware_gen.helpers import (
    check_replay,
    device_samples,
    expect_error,
    predict,
    push_samples,
)


@pytest.fixture(autouse=True)
def _qemu():
    need_tools("qemu-system-arm", "arm-none-eabi-gcc")


@pytest.mark.parametrize("target,numeric", [("cortex-m4f", "float32"), ("cortex-m3", "q15"),
                                            ("cortex-m4f", "q31")])
def test_boots_and_matches_the_reference(firmware, kinds_bundle, bm_recordings, target,
                                         numeric):
    built = firmware(kinds_bundle, target, numeric, full_scale=bm_full_scale(bm_recordings))
    plan = built.plan
    with built.start() as dev:
        hello = dev.call(Cmd.HELLO)
        assert struct.unpack_from("<BBHHHHH", hello)[:4] == (2, ["float32", "q15", "q31"].index(
            numeric), plan.k, plan.t)
        check_replay(dev, plan, kinds_bundle, bm_recordings.recordings[12].columns)
        unit, total = dev.bench(2000, 0)
        assert unit == Unit.INSTRUCTIONS and 20 * 2000 < total < 5000 * 2000
        # malformed input does not crash it
        dev.write(b"\xa5\x5a\x00\x00" + b"\x13" * 9)
        expect_error(dev, 0x33, b"", Err.UNKNOWN_COMMAND)
        assert dev.quit(7) == 7                    # semihosting exit code


def test_m4f_float32_model_costs_at_most_3_2_instructions_per_mac(firmware, bm_bundle):
    built = firmware(bm_bundle, "cortex-m4f", "float32")
    with built.start() as dev:
        dev.call(Cmd.PREDICT, np.linspace(-1, 1, built.plan.k).astype("<f4").tobytes())
        _, total = dev.bench(20000, 0)
        dev.quit(0)
    # exact counts (-icount shift=8): the repetitions plus a few instructions of the timer's
    # own not calibrated away
    per_mac = (total - 10) / 20000 / (built.plan.k * built.plan.t)
    assert per_mac <= 3.2, per_mac


def test_m3_ignores_a_frame_with_a_bad_crc(firmware, bm_bundle):
    built = firmware(bm_bundle, "cortex-m3", "float32")
    with built.start() as dev:
        frame = bytearray(encode_frame(3, Cmd.HELLO))
        frame[-2] ^= 0x40
        dev.write(bytes(frame))                                     # bad CRC: no answer
        assert dev.frames(0.5) == []
        assert dev.call(Cmd.HELLO)[12:] == b"sbmodel"
        assert dev.quit(0) == 0


@pytest.fixture(scope="module")
def odd_bundle(bm_features, tmp_path_factory):
    """BasicMotions, 5 features (an odd k: the dual-MAC kernel's single tail input)."""
    from tests.firmware_gen.conftest import train

    return train(bm_features, tmp_path_factory.mktemp("bundles") / "odd", 5)


@pytest.mark.parametrize("which", ["kinds", "odd"])
def test_m4f_q15_dual_mac_kernel_is_exact(firmware, kinds_bundle, odd_bundle, bm_recordings,
                                          which):
    """SMLAD pairs, LDRD weight loads and the SSAT rescale against the integer model: a real
    stream, random inputs and the extremes (rounding both ways, saturation)."""
    from sensorbudget.firmware_gen.plan import make_plan

    bundle = kinds_bundle if which == "kinds" else odd_bundle
    channels = make_plan(bundle, name="sbmodel", numeric="float32").channels
    scales = {c: v for c, v in bm_full_scale(bm_recordings).items() if c in channels}
    built = firmware(bundle, "cortex-m4f", "q15", full_scale=scales)
    plan = built.plan
    assert "smlad" in built.firmware.files["sbmodel_kernel.h"]
    samples = device_samples(plan, bm_recordings.recordings[21].columns)
    _, _, expected = reference.stream(plan, bundle, samples)
    fixed = reference.fixed_model(plan, bundle)
    rng = np.random.default_rng(0)
    inputs = np.concatenate([rng.integers(-32768, 32768, size=(40, plan.k)),
                             np.full((1, plan.k), 32767), np.full((1, plan.k), -32768),
                             np.zeros((1, plan.k)), np.where(rng.random((8, plan.k)) < 0.5,
                                                              32767, -32768)]).astype("<i2")
    with built.start() as dev:
        windows, scores = push_samples(dev, plan, samples, 33)
        assert windows == list(range(len(expected)))
        assert np.array_equal(scores.astype(np.int64), expected)
        for row in inputs:
            got = predict(dev, plan, row).astype(np.int64)
            assert np.array_equal(got, reference.scores(plan, bundle, fixed, row[None, :])[0])
        dev.quit(0)


def test_m4f_q15_model_costs_at_most_1_5_instructions_per_mac(firmware, bm_bundle,
                                                              bm_recordings):
    built = firmware(bm_bundle, "cortex-m4f", "q15", full_scale=bm_full_scale(bm_recordings))
    with built.start() as dev:
        dev.call(Cmd.PREDICT, np.arange(built.plan.k, dtype="<i2").tobytes())
        _, total = dev.bench(20000, 0)
        dev.quit(0)
    # exact counts (-icount shift=8): the repetitions plus a few instructions of the timer's
    # own not calibrated away
    per_mac = (total - 10) / 20000 / (built.plan.k * built.plan.t)
    assert per_mac <= 1.5, per_mac
