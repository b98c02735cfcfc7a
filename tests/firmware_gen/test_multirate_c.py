"""Multi-rate generated C (issue 30 item 3) on real BasicMotions recordings: the Python reference
equals the trainer's feature matrix (float32, bit for bit), and the C compiled on the host
(gcc -Werror) equals the reference in every numeric, pushed in time order or not."""

from __future__ import annotations

import numpy as np
import pytest

from sensorbudget.export import cgen
from sensorbudget.firmware_gen import multirate_reference as mr
from sensorbudget.firmware_gen.errors import FirmwareGenError
from sensorbudget.firmware_gen.multirate import make_multirate_plan
from sensorbudget.firmware_gen.multirate_c import multirate_sources
from sensorbudget.trainer.sensing import rates
from tests.firmware_gen import multirate_harness as H
from tests.firmware_gen.conftest import BASIC_MOTIONS, train

#: BasicMotions (10 Hz) with candidates at 2, 5 and 10 Hz, spectral and shape kinds included
SENSORS_TOML = """
[window]
length_s = 2.0
hop_s = 1.0
on_missing = "skip"

[[sensors]]
name = "Accel_LIS3DH"
channels = ["acc_x", "acc_y", "acc_z"]
unit_price = 1.0
sample_rate_hz = 10
rates_hz = [5, 10]
energy_per_reading_j_by_rate = [1e-6, 2e-6]

[[sensors]]
name = "gyro"
channels = ["gyro_x", "gyro_y", "gyro_z"]
unit_price = 1.0
sample_rate_hz = 10
rates_hz = [2, 5, 10]
energy_per_reading_j_by_rate = [1e-6, 1e-6, 1e-6]

[[features]]
channels = ["acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"]
extractors = ["mean", "std", "ptp", "min", "bandpower:0-2", "domfreq", "skew"]

[[features]]
group = "gyr"
channels = ["gyro_x", "gyro_y", "gyro_z"]
extractors = ["mag_mean", "mag_max"]
"""
#: one design over four (sensor, rate) groups, a group reading some of its sensor's channels
COLUMNS = ["acc_x@10.std", "acc_y@5.domfreq", "acc_z@5.ptp", "gyro_x@2.mean",
           "gyro_y@2.skew", "gyr@10.mag_mean", "acc_x@10.bandpower_0to2", "gyr@2.mag_max",
           "acc_y@10.min"]
N_RECORDINGS = 6


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    from sensorbudget.trainer.sensing.sensors import load_sensor_spec

    if not BASIC_MOTIONS.is_dir():
        pytest.skip(f"{BASIC_MOTIONS} is missing (shared data not available)")
    path = tmp_path_factory.mktemp("mr") / "rates.sensors.toml"
    path.write_text(SENSORS_TOML, encoding="utf-8")
    return load_sensor_spec(path)


@pytest.fixture(scope="module")
def bundle(spec, tmp_path_factory):
    from sensorbudget.trainer.sensing.feature_set import build_feature_set
    from sensorbudget.trainer.sensing.recordings import load_recordings

    rset = load_recordings(BASIC_MOTIONS, spec.sample_rate_hz)
    fs = build_feature_set(rset, spec)
    return train(fs, tmp_path_factory.mktemp("mr") / "bundle", len(COLUMNS), COLUMNS)


@pytest.fixture(scope="module")
def recordings(spec, bundle):
    """(aligned sensors, trainer feature matrix of the bundle's inputs) of a few recordings."""
    from sensorbudget.trainer.sensing.recordings import load_recordings

    rset = load_recordings(BASIC_MOTIONS, spec.sample_rate_hz)
    names, selected = [f.name for f in spec.features], bundle.meta["selected"]
    assert sorted(selected) == sorted(COLUMNS)
    out = []
    for rec in rset.recordings[::len(rset.recordings) // N_RECORDINGS][:N_RECORDINGS]:
        k, _, aligned = rates.usable_windows(rec, spec, "skip")
        assert np.array_equal(k, np.arange(len(k)))        # no gaps: the device's windows
        out.append((aligned, rates.features(aligned, k, spec)[:, [names.index(c)
                                                                   for c in selected]]))
    return out


def _streams(mplan, aligned):
    streams = mr.trainer_streams(mplan, aligned)
    return mr.quantize_streams(mplan, streams) if mplan.fixed else streams


def test_the_plan_has_a_group_per_sensor_and_rate(bundle):
    mplan = make_multirate_plan(bundle, name="sbmodel", numeric="float32")
    by_name = {s.name: s for s in mplan.sensors}
    assert [s.name for s in mplan.sensors] == ["Accel_LIS3DH", "gyro"]
    groups = {(mplan.sensors[g.sensor].name, g.rate_hz): g for g in mplan.groups}
    assert set(groups) == {("Accel_LIS3DH", 10.0), ("Accel_LIS3DH", 5.0), ("gyro", 2.0),
                           ("gyro", 10.0)}
    for (sensor, rate), g in groups.items():
        assert g.factor == round(by_name[sensor].rate_hz / rate)
        assert g.plan.window == round(2.0 * rate) and g.plan.hop == round(1.0 * rate)
        assert all(f.split("@")[1].split(".")[0] == f"{rate:g}" for f in g.plan.features)
        assert [bundle.meta["selected"][s] for s in g.slots] == list(g.plan.features)
    assert sorted(s for g in mplan.groups for s in g.slots) == list(range(len(COLUMNS)))


def test_reference_equals_the_trainers_features_bit_for_bit(bundle, recordings):
    mplan = make_multirate_plan(bundle, name="sbmodel", numeric="float32")
    for aligned, expected in recordings:
        X, _, _ = mr.stream(mplan, bundle, mr.trainer_streams(mplan, aligned))
        assert X.shape == expected.shape
        assert np.array_equal(X.view(np.uint32), expected.astype(np.float32).view(np.uint32))


@pytest.mark.parametrize("numeric", ["float32", "q15", "q31"])
def test_host_c_equals_the_reference(bundle, recordings, numeric, tmp_path):
    H.need_cc()
    mplan = make_multirate_plan(bundle, name="sbmodel", numeric=numeric)
    exe = H.build(mplan, bundle, tmp_path)
    total = 0
    for aligned, _ in recordings:
        streams = _streams(mplan, aligned)
        order = mr.push_order(mplan, {s: len(x) for s, x in streams.items()})
        X, inputs, scores = mr.stream(mplan, bundle, streams, order)
        windows, Xc, inc, scc, (n, lost) = H.parse(mplan, H.run(exe, H.pushes(mplan, streams,
                                                                              order)))
        assert windows == list(range(len(X))) and (n, lost) == (len(X), 0)
        assert np.array_equal(Xc.view(np.uint32), X.view(np.uint32))
        assert np.array_equal(inc.view(inc.dtype), np.asarray(inputs).astype(inc.dtype))
        if mplan.fixed:
            assert np.array_equal(scc, np.asarray(scores).astype(scc.dtype))
        else:
            assert np.array_equal(scc.view(np.uint32), scores.view(np.uint32))
        total += len(X)
    assert total >= 5 * len(recordings)


def test_pushes_out_of_time_order_lose_the_windows_the_reference_says(bundle, recordings,
                                                                       tmp_path):
    H.need_cc()
    mplan = make_multirate_plan(bundle, name="sbmodel", numeric="float32")
    exe = H.build(mplan, bundle, tmp_path)
    streams = _streams(mplan, recordings[0][0])
    lengths = {s: len(x) for s, x in streams.items()}
    gyro = mplan.sensors[1].name
    orders = [sorted(mr.push_order(mplan, lengths), key=lambda p: p[0]),   # accel, then gyro
              mr.push_order(mplan, lengths, {gyro: 1.5 * mplan.sensors[1].rate_hz}),  # 1.5 s late
              mr.push_order(mplan, lengths, {gyro: 0.5})]     # half a period late: in step
    for order in orders:
        ready, lost = mr.ready_windows(mplan, order)
        X, _, scores = mr.stream(mplan, bundle, streams, order)
        windows, Xc, _, scc, end = H.parse(mplan, H.run(exe, H.pushes(mplan, streams, order)))
        assert windows == ready and end == (len(ready) + len(lost), len(lost))
        assert np.array_equal(Xc.view(np.uint32), X.view(np.uint32))
        assert np.array_equal(scc.view(np.uint32), scores.view(np.uint32))
    assert [len(mr.ready_windows(mplan, o)[1]) > 0 for o in orders] == [True, True, False]
    with pytest.raises(FirmwareGenError, match="sample 1 of sensor 'gyro' is pushed before"):
        mr.stream(mplan, bundle, streams, [(1, 1), (1, 0)])


def test_an_unknown_sensor_index_is_refused_by_the_c(bundle, tmp_path):
    H.need_cc()
    mplan = make_multirate_plan(bundle, name="sbmodel", numeric="float32")
    exe = H.build(mplan, bundle, tmp_path)
    import subprocess

    done = subprocess.run([str(exe)], input=bytes([len(mplan.sensors)]) + bytes(16),
                          capture_output=True, timeout=30)
    assert done.returncode == 4          # the harness's exit code for a push answering -1


def test_sources_are_deterministic_short_and_name_sensors_safely(bundle):
    name = "m" * (cgen.MAX_NAME - 3)
    for numeric in ("float32", "q15"):
        mplan = make_multirate_plan(bundle, name=name, numeric=numeric)
        files = multirate_sources(mplan, bundle)
        assert files == multirate_sources(make_multirate_plan(bundle, name=name,
                                                              numeric=numeric), bundle)
        for fname, text in files.items():
            long = [line for line in text.splitlines() if len(line) > cgen.MAX_LINE]
            assert not long, (fname, long[:2])
        header = files[f"{name}_multirate.h"]
        assert f"#define {name.upper()}_S_ACCEL_LIS3DH 0u" in header
        assert f"int {name}_mr_push(" in header.replace("\n", "").replace("    ", "")


def test_a_too_long_name_and_a_single_rate_bundle_are_refused(bundle, bm_bundle):
    with pytest.raises(FirmwareGenError, match="group prefix .* the limit is 40"):
        make_multirate_plan(bundle, name="m" * (cgen.MAX_NAME - 1), numeric="float32")
    with pytest.raises(FirmwareGenError, match="single-rate"):
        make_multirate_plan(bm_bundle, name="sbmodel", numeric="float32")


def test_the_c_header_of_a_multi_rate_bundle_is_the_model_of_the_c(bundle, tmp_path):
    """``export c-header`` writes the multi-rate bundle's model (features in, scores out; the
    header has no stream), the same text the multi-rate sources include as ``<p>.h``."""
    from click.testing import CliRunner

    from sensorbudget.cli import main

    done = CliRunner().invoke(main, ["export", "c-header", str(bundle.path), "-o",
                                     str(tmp_path / "m.h"), "--numeric", "q15"])
    assert done.exit_code == 0, done.output
    mplan = make_multirate_plan(bundle, name="sbmodel", numeric="q15")
    assert (tmp_path / "m.h").read_text() == multirate_sources(mplan, bundle)["sbmodel.h"]


def test_a_recording_with_a_gap_is_refused_and_phases_order_the_pushes(bundle, recordings):
    """A device counts samples: a missing grid point is one clear error naming the sensor and
    the time; a sensor whose grid starts half a period late is pushed after the others."""
    import dataclasses

    mplan = make_multirate_plan(bundle, name="sbmodel", numeric="float32")
    aligned = dict(recordings[0][0])
    gyro = aligned["gyro"]
    present = gyro.present.copy()
    present[37] = False
    aligned["gyro"] = dataclasses.replace(gyro, present=present, phase=0.5)
    aligned["Accel_LIS3DH"] = dataclasses.replace(aligned["Accel_LIS3DH"], phase=0.0)
    with pytest.raises(FirmwareGenError, match=r"sensor 'gyro' has no sample at t=3.75 s"):
        mr.trainer_streams(mplan, aligned)
    phases = mr.trainer_phases(mplan, aligned)
    assert phases == {"Accel_LIS3DH": 0.0, "gyro": 0.5}
    order = mr.push_order(mplan, {"Accel_LIS3DH": 3, "gyro": 3}, phases)
    assert order == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]
    assert mr.push_order(mplan, {"Accel_LIS3DH": 2, "gyro": 2}, {"gyro": -0.5})[0] == (1, 0)


def test_make_plan_names_the_multi_rate_plan(bundle):
    from sensorbudget.firmware_gen.plan import make_plan

    with pytest.raises(FirmwareGenError, match="make_multirate_plan"):
        make_plan(bundle, name="sbmodel", numeric="float32")
