"""Q15/Q31 features and model inputs computed by the Cortex-M4F firmware (its SIMD window pass,
FPU integer root and magnitude cache) read from the device's memory on unicorn and compared bit for
bit with :func:`sensorbudget.firmware_gen.reference.window_features` and ``model_inputs``, every
window of four recordings, each window computed twice (as BENCH does). In Q15 the inputs of the
integer kinds come straight from their integer values (no float feature on the device)."""

from __future__ import annotations

import numpy as np
import pytest

from sensorbudget.firmware_gen import reference
from sensorbudget.firmware_gen.q15_c import int_inputs
from tests.firmware_gen.conftest import bm_full_scale
from tests.firmware_gen.helpers import device_samples, same_bits


@pytest.mark.parametrize("numeric", ["q15", "q31"])
def test_m4f_fixed_point_features_bit_for_bit(tmp_path, kinds_bundle, bm_recordings, numeric):
    from sensorbudget.device_sim.backends import available_backends

    reason = available_backends().get("unicorn-m4f")
    if reason is not None:
        pytest.skip(f"backend unicorn-m4f: {reason}")
    from sensorbudget.device_sim.backends.unicorn import SCRATCH, STORED, UnicornBackend
    from sensorbudget.device_sim.reference import ReferenceModel

    model = ReferenceModel(kinds_bundle, numeric, full_scale=bm_full_scale(bm_recordings))
    plan = model.plan
    assert {e.kind for e in plan.extractors if e.fixed} >= {"rms", "mag_mean", "mag_max"}
    be = UnicornBackend(model=model, workdir=tmp_path)
    be.open()
    be.reset()
    samples = np.concatenate([device_samples(plan, bm_recordings.recordings[r].columns)
                              for r in (2, 11, 27, 39)])
    got, inputs = [], []
    isz = 2 if numeric == "q15" else 4
    for row in samples:
        be.uc.mem_write(SCRATCH, np.ascontiguousarray(row).tobytes())
        done, _ = be._call(be.fn["add_rows"], be.stream, SCRATCH, 1, SCRATCH + STORED)
        if not done:
            continue
        twice = []
        for _ in range(2):
            be._call(be.fn["compute"], be.stream)
            twice.append(np.frombuffer(bytes(be.uc.mem_read(be.features, 4 * plan.k)), "<f4"))
            twice.append(np.frombuffer(bytes(be.uc.mem_read(be.inputs, isz * plan.k)),
                                       f"<i{isz}"))
        assert same_bits(twice[0], twice[2]) and np.array_equal(twice[1], twice[3])
        got.append(twice[0])
        inputs.append(twice[1])
    expected = reference.window_features(plan, samples)
    assert len(got) == len(expected) > 20
    fixed = reference.fixed_model(plan, kinds_bundle)
    ints = int_inputs(plan, fixed)
    assert bool(ints) == (numeric == "q15")
    cols = [j for j in range(plan.k) if j not in ints]
    assert same_bits(np.array(got)[:, cols], expected[:, cols])
    assert np.array_equal(np.array(inputs), reference.model_inputs(plan, fixed, expected))
