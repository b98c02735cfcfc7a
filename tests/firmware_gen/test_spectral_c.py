"""The shape, spectral and preprocessed extractors of ``<name>_stream.c`` (issue 18): compiled
with gcc on the host and run on BasicMotions recordings at windows of several lengths (powers of
two and not; hop below, equal to and above the window), against :mod:`sensorbudget.firmware_gen.reference`
(numpy float32, :mod:`sensorbudget.trainer.sensing.shape` / :mod:`~sensorbudget.trainer.sensing.spectral`) bit for bit;
and the structure: one spectrum per channel and window, one preprocessing per channel, the
tables ``SB_CONST``."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from sensorbudget.firmware_gen import generate_firmware, reference
from sensorbudget.firmware_gen.plan import make_plan
from tests.firmware_gen.conftest import BASIC_MOTIONS, bm_full_scale, bm_sensors_toml, train
from tests.firmware_gen.helpers import device_samples, same_bits
from tests.firmware_gen.test_passes import float_inputs, run_stream

SENSORS = bm_sensors_toml("""\
[[features]]
channels = ["acc_x", "gyro_y"]
extractors = ["skew", "kurtosis", "slope", "peaks:0.5", "percentile:90", "percentile:10",
              "bandpower:1-3", "bandratio:0.5-2/2-5", "domfreq", "centroid", "entropy",
              "autocorr:3", "cadence:2-5", "mean", "std"]

[[features]]
channels = ["acc_y"]
preprocess = "jerk"
extractors = ["rms", "std", "mean", "min", "max", "ptp", "mad", "zcr", "energy", "last",
              "percentile:50", "skew", "centroid", "bandpower:0-5"]

[[features]]
channels = ["gyro_z"]
preprocess = "highpass:0.9"
extractors = ["std", "rms", "slope", "peaks:1", "entropy", "domfreq"]

[[features]]
channels = ["acc_z"]
spectrum_window = "rect"
extractors = ["bandpower:1-3", "centroid", "entropy", "domfreq"]
""")
#: (window, hop): powers of two and not, hop below / equal to / above the window
WINDOWS = [(8, 3), (12, 5), (16, 16), (9, 13), (33, 7)]


@pytest.fixture(scope="session")
def series_features(tmp_path_factory):
    if not BASIC_MOTIONS.is_dir():
        pytest.skip(f"{BASIC_MOTIONS} is missing (shared data not available)")
    from sensorbudget.trainer.sensing.feature_set import load_feature_set

    path = tmp_path_factory.mktemp("series") / "series.sensors.toml"
    path.write_text(SENSORS)
    return load_feature_set(BASIC_MOTIONS, path)


@pytest.fixture(scope="session")
def series_bundle(series_features, tmp_path_factory):
    """Every shape / spectral kind and both preprocessing steps, all features selected."""
    n = len(series_features.feature_names)
    return train(series_features, tmp_path_factory.mktemp("bundles") / "series", n)


def _samples(plan, recordings):
    return np.concatenate([device_samples(plan, recordings.recordings[r].columns)
                           for r in (3, 17, 29, 44)])


@pytest.mark.parametrize("numeric", ["float32", "q15"])
@pytest.mark.parametrize("window,hop", WINDOWS)
def test_series_kinds_bit_for_bit_on_host(tmp_path, series_bundle, bm_recordings, numeric,
                                          window, hop):
    scales = None if numeric == "float32" else {
        c: v for c, v in bm_full_scale(bm_recordings).items() if c != "gyro_x"}
    plan = make_plan(series_bundle, name="sbmodel", numeric=numeric, full_scale=scales)
    assert len(plan.extractors) == len(series_bundle.meta["selected"]) > 40
    plan = dataclasses.replace(plan, window=window, hop=hop)
    fw = generate_firmware(series_bundle, target="host", numeric=numeric, plan=plan)
    samples = _samples(plan, bm_recordings)
    got, inputs = run_stream(tmp_path, fw, samples, with_inputs=True)
    expected = reference.window_features(plan, samples)
    assert got.shape == expected.shape and len(got) > 20
    bad = [plan.features[j] for j in float_inputs(fw) if not same_bits(got[:, j], expected[:, j])]
    assert not bad, bad
    if numeric == "q15":
        assert np.array_equal(inputs, reference.model_inputs(plan, fw.header.fixed, expected))
    if numeric == "q15":     # raw percentiles are the integer definition, after jerk float32
        fixed = {e.name for e in plan.extractors if e.fixed}
        assert {"acc_x.percentile_90", "gyro_y.percentile_10"} <= fixed
        assert "acc_y.jerk.percentile_50" not in fixed and "acc_y.jerk.mean" not in fixed


def test_one_spectrum_and_one_preprocessing_per_channel(series_bundle):
    fw = generate_firmware(series_bundle, target="host", numeric="float32")
    source = fw.files["sbmodel_stream.c"]
    body = source[source.index("void sbmodel_stream_compute"):]
    body = body[:body.index("\n}\n")]
    # one function per (channel, preprocessing), each called once per window
    groups = re.findall(r"^    (sbmodel_series_\w+)\(s, start\);", body, re.M)
    assert sorted(groups) == ["sbmodel_series_acc_x", "sbmodel_series_acc_y_jerk",
                              "sbmodel_series_acc_z", "sbmodel_series_gyro_y",
                              "sbmodel_series_gyro_z_highpass"]
    for name in groups:
        fn = source[source.index(f"static void {name}("):]
        fn = fn[:fn.index("\n}\n")]
        assert len(re.findall(r"sbmodel_series_(copy|jerk|highpass)\(", fn)) == 1
        assert fn.count("sbmodel_power_spectrum(") == 1
    # tables in flash on AVR; no allocation
    for table in ("rev_16", "twr_16", "twi_16", "hann_16", "hann_15", "freq_16"):
        assert re.search(rf"^static const SB_CONST \w+ sbmodel_{table}\[", source, re.M), table
    assert "malloc" not in source


def test_plan_refuses_magnitudes_after_preprocessing(bm_features):
    from sensorbudget.firmware_gen.errors import FirmwareGenError
    from sensorbudget.firmware_gen.plan import _extractor_entries

    meta = {"required_extractors": ["acc.jerk.mag_mean"],
            "extractors": [{"name": "acc.jerk.mag_mean", "features": ["acc.jerk.mag_mean"],
                            "params": {"kind": "mag_mean", "channels": ["acc_x", "acc_y"],
                                       "preprocess": "jerk"}}]}
    with pytest.raises(FirmwareGenError, match="'mag_mean' with preprocessing"):
        _extractor_entries(meta)


@pytest.mark.parametrize("backend,numeric,window,hop", [
    ("qemu-m4f", "float32", 8, 3), ("qemu-m4f", "q15", 12, 5), ("qemu-m4f", "float32", 9, 13),
    ("qemu-m3", "float32", 33, 7), ("simavr", "float32", 12, 5), ("simavr", "q15", 10, 10)])
def test_series_kinds_bit_for_bit_on_emulators(tmp_path, series_bundle, bm_recordings, backend,
                                               numeric, window, hop):
    """The same extractors built for Cortex-M4F / Cortex-M3 (QEMU) and the ATmega328P (simavr,
    tables in flash): every prediction of four recordings equals the reference bit for bit."""
    import copy

    from sensorbudget.device_sim.backends import available_backends, make_backend
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.device_sim.replay import replay

    reason = available_backends().get(backend)
    if reason is not None:
        pytest.skip(f"backend {backend}: {reason}")
    scales = None if numeric == "float32" else {
        c: v for c, v in bm_full_scale(bm_recordings).items() if c != "gyro_x"}
    model = ReferenceModel(series_bundle, numeric, full_scale=scales)
    model.plan = dataclasses.replace(model.plan, window=window, hop=hop)
    model.window, model.hop = window, hop
    rset = copy.copy(bm_recordings)
    rset.recordings = [bm_recordings.recordings[r] for r in (3, 17, 29, 44)]
    be = make_backend(backend, model=model, workdir=tmp_path)
    try:
        res = replay(be, model, rset)
        be.quit()
    finally:
        be.close()
    assert len(res.records) > 20 and res.count("delivered") == len(res.records)
    assert res.mismatches == 0 and res.unexpected == 0


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_no_long_lines_under_a_long_name(series_bundle, numeric):
    """The series and spectrum code stays within MAX_LINE under a 24-character model name."""
    from sensorbudget.export.cgen import MAX_LINE

    scales = None if numeric == "float32" else {"*": 64.0}
    fw = generate_firmware(series_bundle, target="arduino-uno", numeric=numeric,
                           name="a_rather_long_model_name", full_scale=scales)
    text = fw.files["a_rather_long_model_name_stream.c"]
    part = text[text.index("Scratch of the series"):text.index("void a_rather_long_model_name_"
                                                                  "stream_compute")]
    assert part.count("\n") > 300
    assert [line for line in part.splitlines() if len(line) > MAX_LINE] == []
