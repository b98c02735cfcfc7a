"""``sensorbudget features``: recordings + sensors.toml -> NPZ, and its error reporting."""

from functools import partial

import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.cli import main
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


def _one_error_line(result, needle):
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("Error: ") and needle in result.stderr, result.stderr


@pytest.mark.parametrize("value, needle", [
    ("1e300", "holds 1e+300 at sample 5 (t=0.5 s), beyond the float32 range"),
    ("inf", "column 'ax' holds inf at sample 5 (t=0.5 s); samples must be finite"),
    ("1e20", "feature 'acc.mag_mean' of the window at sample 2 is inf"),
])
def test_samples_out_of_range_are_one_line_and_no_file(files, value, needle):
    """One 1e300 sample used to give RuntimeWarnings, a feature file with inf and exit 0
    (then a traceback in train); issue 33."""
    lines = (files / "rec.csv").read_text().splitlines()
    cells = lines[6].split(",")
    lines[6] = ",".join([cells[0], value, *cells[2:]])
    (files / "rec.csv").write_text("\n".join(lines) + "\n")
    out = files / "f.npz"
    result = CliRunner().invoke(main, ["features", str(files / "rec.csv"), "--sensors",
                                       str(files / "sensors.toml"), "-o", str(out)])
    _one_error_line(result, needle)
    assert not out.exists()
    result = CliRunner().invoke(main, ["train", str(files / "rec.csv"), "--sensors",
                                       str(files / "sensors.toml"), "--budget", "2",
                                       "-o", str(files / "B")])
    _one_error_line(result, needle)
    assert not (files / "B").exists()


def test_a_link_out_of_a_recordings_folder_is_one_line(files, tmp_path_factory):
    secret = tmp_path_factory.mktemp("elsewhere") / "shadow.csv"
    secret.write_text("s3cr3t:*:19000:0:99999:7:::\n")
    folder = files / "idx3"
    folder.mkdir()
    (folder / "a.csv").write_text((files / "rec.csv").read_text())
    (folder / "b.csv").symlink_to(secret)
    result = CliRunner().invoke(main, ["features", str(folder), "--sensors",
                                       str(files / "sensors.toml"), "-o", str(files / "f.npz")])
    _one_error_line(result, "b.csv' leads outside")
    assert "s3cr3t" not in result.output


def test_infinite_energy_is_refused_at_features(files):
    spec = SPEC.replace("energy_per_reading_j = 1e-6", "power_w = 1e308\nread_time_s = 1e308")
    (files / "big.toml").write_text(spec)
    result = CliRunner().invoke(main, ["features", str(files / "rec.csv"), "--sensors",
                                       str(files / "big.toml"), "-o", str(files / "f.npz")])
    _one_error_line(result, "sensor 'accel': power_w=1e+308 exceeds 1e+100")
    assert not (files / "f.npz").exists()
