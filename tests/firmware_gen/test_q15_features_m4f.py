"""Q15/Q31 features computed by the Cortex-M4F firmware (its SIMD window pass, FPU integer root
and magnitude cache) read from the device's memory on unicorn and compared bit for bit with
:func:`sensorbudget.firmware_gen.reference.window_features`, every window of four recordings, each window
computed twice (as BENCH does)."""

from __future__ import annotations

import numpy as np
import pytest

from sensorbudget.firmware_gen import reference
from tests.firmware_gen.conftest import bm_full_scale
from tests.firmware_gen.helpers import device_samples, same_bits


@pytest.mark.parametrize("numeric", ["q15", "q31"])
def test_m4f_fixed_point_features_bit_for_bit(tmp_path, kinds_bundle, bm_recordings, numeric):
    from sensorbudget.device_sim.backends import available_backends

    reason = available_backends().get("unicorn-m4f")
    if reason is not None:
        pytest.skip(f"backend unicorn-m4f: {reason}")
    from sensorbudget.device_sim.backends.unicorn import SCRATCH, UnicornBackend
    from sensorbudget.device_sim.reference import ReferenceModel

    model = ReferenceModel(kinds_bundle, numeric, full_scale=bm_full_scale(bm_recordings))
    plan = model.plan
    assert {e.kind for e in plan.extractors if e.fixed} >= {"rms", "mag_mean", "mag_max"}
    be = UnicornBackend(model=model, workdir=tmp_path)
    be.open()
    be.reset()
    samples = np.concatenate([device_samples(plan, bm_recordings.recordings[r].columns)
                              for r in (2, 11, 27, 39)])
    got = []
    for row in samples:
        be.uc.mem_write(SCRATCH, np.ascontiguousarray(row).tobytes())
        done, _ = be._call(be.fn["add"], be.stream, SCRATCH)
        if not done:
            continue
        twice = []
        for _ in range(2):
            be._call(be.fn["compute"], be.stream)
            twice.append(np.frombuffer(bytes(be.uc.mem_read(be.features, 4 * plan.k)), "<f4"))
        assert same_bits(twice[0], twice[1])
        got.append(twice[0])
    expected = reference.window_features(plan, samples)
    assert len(got) == len(expected) > 20
    assert same_bits(np.array(got), expected)
