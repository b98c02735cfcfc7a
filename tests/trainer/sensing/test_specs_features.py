"""Extractor arguments and preprocessing in sensors.toml, through the feature table and the
bundle: names, values (recomputed window by window), params, the firmware plan of these kinds, and
the per-recording progress callback (issue 18; issue 19's progress)."""

import numpy as np
import pytest
from click.testing import CliRunner

from tests.fixtures import ACCEL, sensor_spec, sensors_toml, write_stream
from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.sensing.extractors import window_view
from sensorbudget.trainer.sensing.feature_set import build_feature_set, load_feature_set
from sensorbudget.trainer.sensing.recordings import load_recordings
from sensorbudget.trainer.sensing.sensors import parse_sensor_spec
from sensorbudget.trainer.sensing.specs import parse_spec

FEATURES = [{"channels": ["accel"], "extractors": ["skew", "kurtosis", "slope", "percentile:90",
                                                    "peaks:0.5"]},
            {"channels": ["ax"], "preprocess": "jerk", "extractors": ["rms", "percentile:50"]},
            {"channels": ["ay"], "preprocess": "highpass:0.9", "extractors": ["std"]},
            {"group": "acc", "channels": ["ax", "ay"], "preprocess": "jerk",
             "extractors": ["mag_mean"]}]


def _spec(features=FEATURES):
    return sensor_spec([ACCEL], features, window=8, hop=4, rate_hz=10)


def test_feature_names_follow_the_specs():
    spec = parse_sensor_spec(_spec())
    names = [f.name for f in spec.features]
    assert names[:5] == ["ax.skew", "ax.kurtosis", "ax.slope", "ax.percentile_90",
                         "ax.peaks_0_5"]
    assert names[10:] == ["ax.jerk.rms", "ax.jerk.percentile_50", "ay.highpass_0_9.std",
                          "acc.jerk.mag_mean"]
    assert [f.kind for f in spec.features][10:] == ["jerk>rms", "jerk>percentile:50",
                                                    "highpass:0.9>std", "jerk>mag_mean"]


@pytest.mark.parametrize("block,message", [
    ({"channels": ["ax"], "extractors": ["percentile"]}, "takes an argument"),
    ({"channels": ["ax"], "extractors": ["percentile:200"]}, r"p='200' must be a number in"),
    ({"channels": ["ax"], "extractors": ["rms"], "preprocess": "smooth"},
     "unknown preprocessing 'smooth'"),
    ({"channels": ["ax"], "extractors": ["rms"], "preprocess": "jerk>jerk"},
     "must be one step"),
    ({"channels": ["ax"], "extractors": ["percentile:90", "percentile:90.0"]},
     "lists 'percentile:90' twice"),
])
def test_bad_blocks_are_one_line_errors(block, message):
    with pytest.raises(DataError, match=message):
        parse_sensor_spec(_spec([block]))


def test_window_too_short_for_a_preprocessed_kind():
    spec = parse_sensor_spec(_spec([{"channels": ["ax"], "preprocess": "jerk",
                                     "extractors": ["peaks:1"]}]))
    with pytest.raises(DataError, match=r"needs window >= 4 samples \(window=3\)"):
        spec.resolve_window(3, 1)


def test_values_bundle_params_and_progress(tmp_path):
    for i in range(3):
        write_stream(tmp_path / "rec" / f"r{i}.csv", n=40, rate_hz=10, seed=i,
                     channels=("ax", "ay"))
    (tmp_path / "sensors.toml").write_text(sensors_toml(_spec()))
    calls = []
    fs = load_feature_set(tmp_path / "rec", tmp_path / "sensors.toml",
                          progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 3), (2, 3), (3, 3)]
    rset = load_recordings(tmp_path / "rec", 10)
    rec = rset.recordings[0]
    starts = fs.window_start[fs.groups == 0]
    for j, (kind, chans) in enumerate(zip(fs.feature_kinds, fs.feature_channels)):
        spec = parse_spec(kind)
        ws = [window_view(rec.columns[c], starts, 8) for c in chans.split("+")]
        want = spec.compute(ws[0] if spec.entry.per_channel else ws)
        np.testing.assert_array_equal(fs.X[fs.groups == 0, j], want)
    extractors, _, _ = fs.bundle_structure()
    by_name = {e["name"]: e["params"] for e in extractors}
    assert by_name["ax.percentile_90"]["kind"] == "percentile"
    assert by_name["ax.percentile_90"]["arg"] == 90.0
    assert by_name["ax.jerk.rms"]["preprocess"] == "jerk"
    assert by_name["ay.highpass_0_9.std"]["preprocess_arg"] == 0.9
    assert "arg" not in by_name["ax.skew"] and by_name["ax.skew"]["kind"] == "skew"
    # the NPZ keeps the specs
    path = tmp_path / "f.npz"
    path.write_bytes(fs.save_npz())
    assert type(fs).load(path).feature_kinds == fs.feature_kinds


def test_firmware_plans_preprocessing_and_shape_kinds(tmp_path):
    """Issue 18: the firmware now generates these (tests/firmware_gen/test_spectral_c.py runs
    them); the plan carries each extractor's spec."""
    from sensorbudget.firmware_gen.plan import make_plan
    from sensorbudget.trainer import GreedyRLS
    from sensorbudget.trainer.bundle.model import bundle_contents, load_bundle, save_bundle

    write_stream(tmp_path / "rec.csv", n=80, rate_hz=10, channels=("ax", "ay"))
    rset = load_recordings(tmp_path / "rec.csv", 10)
    for block in (FEATURES[1], {"channels": ["ax"], "extractors": ["skew"]}):
        fs = build_feature_set(rset, parse_sensor_spec(_spec([block])))
        extractors, sensors, extra = fs.bundle_structure()
        X = np.asarray(fs.X, dtype=np.float64)
        est = GreedyRLS(budget=1, lam=1.0).fit(X, fs.Y[:, 0])
        meta, arrays = bundle_contents(est, X, list(fs.feature_names), ["y"],
                                       task="regression", extractors=extractors,
                                       sensors=sensors, extra=extra)
        save_bundle(tmp_path / "b", meta, arrays)
        plan = make_plan(load_bundle(tmp_path / "b"), name="m", numeric="float32")
        (e,) = plan.extractors
        assert e.on_series and e.full_spec.text in block.get("extractors", []) + [
            f"{block.get('preprocess')}>{k}" for k in block["extractors"]]


def test_features_command_progress_flag(tmp_path):
    from sensorbudget.cli_features import features_command

    write_stream(tmp_path / "rec.csv", n=40, rate_hz=10, channels=("ax", "ay"))
    (tmp_path / "sensors.toml").write_text(sensors_toml(_spec()))
    args = [str(tmp_path / "rec.csv"), "--sensors", str(tmp_path / "sensors.toml"), "-o"]
    result = CliRunner().invoke(features_command, [*args, str(tmp_path / "a.npz"), "--progress"],
                                catch_exceptions=False)
    assert result.exit_code == 0 and "features [" in result.stderr and "1/1" in result.stderr
    quiet = CliRunner().invoke(features_command, [*args, str(tmp_path / "b.npz")],
                               catch_exceptions=False)
    assert quiet.exit_code == 0 and "ETA" not in quiet.stderr
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()


def test_transforms_are_a_cost_level_from_sensors_toml_to_onnx(tmp_path):
    """sensors.toml (a calibrated transform) -> train --max-energy -> bundle required_transforms
    and per-extractor transforms -> ONNX metadata."""
    from sensorbudget.cli import main
    from sensorbudget.trainer.bundle.model import load_bundle
    from sensorbudget.trainer.sensing.sensor_budget import cost_kwargs_from_feature_set

    write_stream(tmp_path / "rec.csv", n=200, rate_hz=10, channels=("ax", "ay"))
    text = sensors_toml(_spec([{"channels": ["ax", "ay"], "preprocess": "jerk",
                                "extractors": ["rms", "percentile:50", "std"]},
                               {"channels": ["ax"], "extractors": ["mean"]}]))
    text += ('\n[[calibration]]\nextractor = "ax.jerk"\ntarget = "cortex-m4f"\n'
             'compute_energy_j = 0.5\ncompute_time_s = 0.001\n')
    (tmp_path / "sensors.toml").write_text(text)
    fs = load_feature_set(tmp_path / "rec.csv", tmp_path / "sensors.toml")
    kw = cost_kwargs_from_feature_set(fs)
    assert kw["sensor_costs"]["ax.jerk"] == {"price": 0.0, "energy": 0.5, "time": 0.001,
                                             "level": "transform"}
    assert kw["sensor_costs"]["ay.jerk"]["energy"] == 0.0
    assert kw["extractor_sensors"]["ax.jerk.rms"] == ["accel", "ax.jerk"]
    result = CliRunner().invoke(main, ["train", str(tmp_path / "rec.csv"), "--sensors",
                                       str(tmp_path / "sensors.toml"), "--budget", "4",
                                       "--max-energy", "1", "-o", str(tmp_path / "b")],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    meta = load_bundle(tmp_path / "b").meta
    chosen = set(meta["required_extractors"])
    reads = {t for e in meta["extractors"] if e["name"] in chosen for t in e.get("transforms", [])}
    assert sorted(meta["required_transforms"]) == sorted(reads) and reads
    energy = meta["path"][-1]["costs"]["energy"]
    assert energy <= 1.0
    # the transform's 0.5 J is in the total at most once; the sensor reads min(window, hop) = 4
    # samples per prediction on a streaming device (docs/device_costs.md), 1e-6 J each
    expect = min(8, 4) * 1e-6 + (0.5 if "ax.jerk" in reads else 0.0)
    assert energy == pytest.approx(expect)
    onnx = pytest.importorskip("onnx")
    from sensorbudget.export.onnx_bundle import bundle_to_onnx, read_metadata

    model = bundle_to_onnx(load_bundle(tmp_path / "b"))
    assert read_metadata(model).get("required_transforms") == meta["required_transforms"]
    assert onnx is not None
