"""``sensorbudget features``: recordings + sensors.toml -> NPZ, and its error reporting."""

from functools import partial

import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.cli_features import features_command
from tests.fixtures import ACCEL, sensor_spec, sensors_toml, write_stream
from tests.paths import REPO, SHARED

AIR_QUALITY = REPO / "data" / "air_quality_uci" / "AirQualityUCI.csv"
BASIC_MOTIONS = SHARED / "basic_motions"

SPEC = sensors_toml(sensor_spec(
    [ACCEL],
    [{"channels": ["accel"], "extractors": ["mean", "std", "zcr"]},
     {"group": "acc", "channels": ["ax", "ay"], "extractors": ["mag_mean"]}],
    window=4, hop=2, rate_hz=10))


@pytest.fixture
def invoke():
    return partial(CliRunner().invoke, features_command)


@pytest.fixture
def files(tmp_path):
    write_stream(tmp_path / "rec.csv", n=20, rate_hz=10, channels=("ax", "ay"))
    (tmp_path / "sensors.toml").write_text(SPEC)
    return tmp_path


def test_writes_feature_npz(invoke, files):
    out = files / "out" / "features.npz"
    result = invoke([str(files / "rec.csv"), "--sensors", str(files / "sensors.toml"),
                     "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "9 windows x 7 features, 1 target(s) (regression)" in result.output
    with np.load(out, allow_pickle=False) as npz:
        assert npz["X"].shape == (9, 7) and int(npz["window"]) == 4 and int(npz["hop"]) == 2
        assert list(npz["feature_names"])[-1] == "acc.mag_mean"
        assert list(npz["target_names"]) == ["y"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["features.npz"]   # no temp left


def test_window_and_hop_override(invoke, files):
    out = files / "f.npz"
    result = invoke([str(files / "rec.csv"), "--sensors", str(files / "sensors.toml"),
                     "--window", "10", "--hop", "5", "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    with np.load(out, allow_pickle=False) as npz:
        assert npz["X"].shape[0] == 3 and int(npz["window"]) == 10


@pytest.mark.parametrize("args,message", [
    (["--window", "50"], "Error: window=50 samples is longer than recording 'rec.csv' (20 samples)"),
    (["--window", "1"], "Error: feature 'ax.zcr': extractor 'zcr' needs window >= 2 samples"),
])
def test_data_errors_are_one_line(invoke, files, args, message):
    out = files / "f.npz"
    result = invoke([str(files / "rec.csv"), "--sensors", str(files / "sensors.toml"),
                     "-o", str(out), *args])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    assert not out.exists()


def test_bad_toml_and_missing_samples(invoke, files):
    (files / "bad.toml").write_text(SPEC.replace('"std"', '"median"'))
    result = invoke([str(files / "rec.csv"), "--sensors", str(files / "bad.toml"),
                     "-o", str(files / "f.npz")])
    assert result.exit_code == 2 and "unknown extractor 'median'" in result.output
    text = (files / "rec.csv").read_text().splitlines()
    text[3] = text[3].replace(text[3].split(",")[1], "", 1)
    (files / "rec.csv").write_text("\n".join(text) + "\n")
    ok = invoke([str(files / "rec.csv"), "--sensors", str(files / "sensors.toml"),
                 "-o", str(files / "f.npz")], catch_exceptions=False)
    assert ok.exit_code == 0 and "skipped windows: 2 missing samples" in ok.output
    strict = invoke([str(files / "rec.csv"), "--sensors", str(files / "sensors.toml"),
                     "--on-missing", "error", "-o", str(files / "g.npz")])
    assert strict.exit_code == 2 and "missing sample in channel 'ax'" in strict.output


def test_usage_errors(invoke, files):
    result = invoke([str(files / "rec.csv"), "-o", str(files / "f.npz")])
    assert result.exit_code == 2 and "Missing option '--sensors'" in result.output
    result = invoke([str(files / "rec.csv"), "--sensors", str(files / "sensors.toml"),
                     "--window", "0", "-o", str(files / "f.npz")])
    assert result.exit_code == 2 and "Usage:" in result.output


def test_registered_in_main_cli():
    from sensorbudget.cli import main

    assert main.get_command(None, "features") is features_command


@pytest.mark.skipif(not AIR_QUALITY.is_file(), reason="Air Quality CSV not present")
def test_air_quality_example(invoke, tmp_path):
    out = tmp_path / "aq.npz"
    result = invoke([str(AIR_QUALITY), "--sensors",
                     str(REPO / "examples" / "air_quality.sensors.toml"), "-o", str(out)],
                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "x 61 features, 4 target(s) (regression)" in result.output
    assert "skipped windows:" in result.output


@pytest.mark.skipif(not BASIC_MOTIONS.is_dir(), reason="BasicMotions not present")
def test_basic_motions_example(invoke, tmp_path):
    out = tmp_path / "bm.npz"
    result = invoke([str(BASIC_MOTIONS), "--sensors",
                     str(REPO / "examples" / "basic_motions.sensors.toml"), "-o", str(out)],
                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "720 windows x 69 features, 4 target(s) (multiclass) from 80 recording(s)" in \
        result.output
