"""The example's multi-rate design on every BasicMotions recording: features computed with
examples/basic_motions.rates.sensors.toml (accelerometer and gyroscope recorded at 10 Hz,
candidates at 10, 5 and 2 Hz), a selection spanning both sensors and every rate, and the
generated C on the host: the multi-rate reference equals the trainer's feature matrix bit for
bit on all 80 recordings, and the C equals the reference (float32 bit for bit; Q15 scores
within the stated stream bound of the float64 model)."""

from __future__ import annotations

import numpy as np
import pytest

from sensorbudget.firmware_gen import multirate_reference as mr
from sensorbudget.firmware_gen.multirate import make_multirate_plan
from sensorbudget.firmware_gen.multirate_c import model_header
from sensorbudget.trainer.sensing import rates
from tests.firmware_gen import multirate_harness as H
from tests.firmware_gen.conftest import BASIC_MOTIONS, train
from tests.paths import REPO

EXAMPLE = REPO / "examples" / "basic_motions.rates.sensors.toml"
#: accel at 10 and 5 Hz, gyro at 5 and 2 Hz: the accelerometer is pushed at 10 Hz; the
#: gyroscope too (2 Hz is no whole fraction of 5 Hz: its groups keep 1 sample in 2 and in 5)
COLUMNS = ["acc_x@10.min", "acc@5.mag_mean", "acc_y@10.zcr", "gyro_y@5.energy",
           "gyr@2.mag_max", "gyro_z@2.std", "acc_z@5.ptp"]


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    from sensorbudget.trainer.sensing.feature_set import build_feature_set
    from sensorbudget.trainer.sensing.recordings import load_recordings
    from sensorbudget.trainer.sensing.sensors import load_sensor_spec

    if not BASIC_MOTIONS.is_dir():
        pytest.skip(f"{BASIC_MOTIONS} is missing (shared data not available)")
    spec = load_sensor_spec(EXAMPLE)
    rset = load_recordings(BASIC_MOTIONS, spec.sample_rate_hz)
    fs = build_feature_set(rset, spec)
    folder = tmp_path_factory.mktemp("bm_rates")
    bundle = train(fs, folder / "bundle", len(COLUMNS), COLUMNS)
    slow = train(fs, folder / "slow", 2, ["gyro_y@5.energy", "acc_x@10.min"])
    names = [f.name for f in spec.features]
    cols = [names.index(c) for c in bundle.meta["selected"]]
    recordings = []
    for rec in rset.recordings:
        k, _, aligned = rates.usable_windows(rec, spec, "skip")
        recordings.append((aligned, rates.features(aligned, k, spec)[:, cols]))
    return bundle, recordings, slow


def test_the_plan_pushes_each_sensor_at_its_fastest_feature(case):
    bundle, _, slow = case
    mplan = make_multirate_plan(bundle, name="bm", numeric="float32")
    assert [(s.name, s.rate_hz, s.decimation) for s in mplan.sensors] == [
        ("accel", 10.0, 1), ("gyro", 10.0, 1)]
    assert sorted((mplan.sensors[g.sensor].name, g.rate_hz, g.factor) for g in mplan.groups) == [
        ("accel", 5.0, 2), ("accel", 10.0, 1), ("gyro", 2.0, 5), ("gyro", 5.0, 2)]
    assert "gyro at 10 Hz (gyro_x, gyro_y, gyro_z) [above its features' 5, 2 Hz" in mplan.summary
    only_slow = make_multirate_plan(slow, name="bm", numeric="float32")
    assert "[above" not in only_slow.summary
    assert [(s.name, s.rate_hz, s.decimation) for s in only_slow.sensors] == [
        ("accel", 10.0, 1), ("gyro", 5.0, 2)]


def test_reference_equals_the_trainer_on_every_recording(case):
    bundle, recordings, _ = case
    mplan = make_multirate_plan(bundle, name="bm", numeric="float32")
    total = 0
    for aligned, expected in recordings:
        X, _, _ = mr.stream(mplan, bundle, mr.trainer_streams(mplan, aligned))
        assert np.array_equal(X.view(np.uint32), expected.view(np.uint32))
        total += len(X)
    assert len(recordings) == 80 and total == 80 * 9


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_host_c_on_every_recording(case, numeric, tmp_path):
    H.need_cc()
    bundle, recordings, _ = case
    mplan = make_multirate_plan(bundle, name="bm", numeric=numeric)
    exe = H.build(mplan, bundle, tmp_path)
    header = model_header(bundle, mplan)
    W, b = np.asarray(bundle.W, dtype=np.float64), np.asarray(bundle.b, dtype=np.float64)
    worst = 0.0
    for aligned, expected in recordings:
        real = mr.trainer_streams(mplan, aligned)
        streams = mr.quantize_streams(mplan, real) if mplan.fixed else real
        order = mr.push_order(mplan, {s: len(x) for s, x in streams.items()})
        X, _, scores = mr.stream(mplan, bundle, streams, order)
        windows, Xc, _, sc, end = H.parse(mplan, H.run(exe, H.pushes(mplan, streams, order)))
        assert windows == list(range(len(expected))) and end == (len(expected), 0)
        assert np.array_equal(Xc.view(np.uint32), X.view(np.uint32))
        if not mplan.fixed:
            assert np.array_equal(sc.view(np.uint32), scores.view(np.uint32))
            continue
        assert np.array_equal(sc, np.asarray(scores).astype(sc.dtype))
        model = expected.astype(np.float64) @ W.reshape(mplan.k, -1) + b
        error = np.abs(sc * 2.0 ** -header.fixed.score_frac_bits - model)
        worst = max(worst, float(error.max()))
    if mplan.fixed:
        assert worst <= mr.stated_stream_bound(mplan, header, W)
