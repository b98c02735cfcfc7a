"""Files as they come, through the CLI: time stamps in other units, one long stream cut into
recordings, header-less blank-separated files; clear words when --sensors is missing."""

import json

import numpy as np
import pytest

from tests.fixtures import write_sensors_toml
from sensorbudget.trainer.sensing.feature_set import FeatureSet


def long_stream(path, epoch_ms=1_700_000_000_000, gap_at=120, n=240):
    """One 20 Hz stream with a 30 s gap after sample ``gap_at`` (two sessions), time in epoch
    milliseconds, a subject column that changes at the gap."""
    rng = np.random.default_rng(0)
    t = np.arange(n) * 50 + np.where(np.arange(n) >= gap_at, 30_000, 0) + epoch_ms
    ax, ay = np.sin(np.arange(n) / 3), np.cos(np.arange(n) / 5) + 0.1 * rng.normal(size=n)
    temp = 20 + np.cumsum(0.05 * rng.normal(size=n))
    y = ax ** 2 + 0.5 * temp
    subject = np.where(np.arange(n) >= gap_at, 2, 1)
    rows = ["stamp,subject,ax,ay,t,y"] + [f"{a},{s},{b:.5f},{c:.5f},{d:.4f},{e:.5f}" for
                                          a, s, b, c, d, e in zip(t, subject, ax, ay, temp, y)]
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("cut", [["--split-gaps", "1"], ["--recording-column", "subject"]])
def test_one_long_stream_becomes_two_recordings(invoke, tmp_path, cut):
    stream = long_stream(tmp_path / "s.csv")
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    out = tmp_path / "f.npz"
    result = invoke(["features", str(stream), "--sensors", str(toml), "--time-column", "stamp",
                     "--time-unit", "ms", *cut, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "from 2 recording(s)" in result.output
    fs = FeatureSet.load(out)
    assert sorted(set(fs.recording_names)) == ["s.csv#0", "s.csv#1"]
    # windows never straddle the cut: 120 samples per recording, window 8, hop 4 -> 29 each
    assert np.bincount(fs.groups).tolist() == [29, 29]
    result = invoke(["train", str(out), "--budget", "2", "--lam", "1", "--groups", "recording",
                     "-o", str(tmp_path / "B")])
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "B" / "model.json").read_text())
    assert meta["criterion"] == "leave-group-out"


def test_without_cutting_the_gap_only_skips_windows(invoke, tmp_path):
    stream = long_stream(tmp_path / "s.csv")
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    result = invoke(["features", str(stream), "--sensors", str(toml), "--time-column", "stamp",
                     "--time-unit", "ms", "-o", str(tmp_path / "f.npz")])
    assert result.exit_code == 0, result.output
    assert "from 1 recording(s)" in result.output and "skipped windows" in result.output


def test_header_less_blank_separated_text(invoke, tmp_path):
    rng = np.random.default_rng(1)
    rows = [f"{i * 50} {np.sin(i / 3):.5f} {np.cos(i / 4):.5f} {20 + 0.01 * i:.3f} "
            f"{rng.normal():.5f}" for i in range(80)]
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / "S01R01.txt").write_text("\n".join(rows) + "\n")
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    result = invoke(["features", str(tmp_path / "rec"), "--sensors", str(toml), "--time-unit",
                     "ms", "--columns", "time,ax,ay,t,y", "-o", str(tmp_path / "f.npz")])
    assert result.exit_code == 0, result.output
    fs = FeatureSet.load(tmp_path / "f.npz")
    assert fs.X.shape[0] == (80 - 8) // 4 + 1 and fs.recording_names == ["S01R01.txt"]


def test_a_folder_without_sensors_and_a_time_feature_are_named(invoke, tmp_path):
    (tmp_path / "rec").mkdir()
    long_stream(tmp_path / "rec" / "s.csv")
    result = invoke(["train", str(tmp_path / "rec"), "--budget", "2", "-o", str(tmp_path / "B")])
    assert result.exit_code == 2 and "is a folder: recordings need --sensors" in result.output
    table = tmp_path / "t.csv"
    table.write_text("time,a,y\n" + "".join(f"{i},{i % 3},{i % 5}\n" for i in range(30)))
    result = invoke(["train", str(table), "--target", "y", "--budget", "1", "--lam", "1",
                     "-o", str(tmp_path / "B")])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("Warning:")]
    assert warnings == ["Warning: t.csv: the column 'time' is used as a feature; for a "
                        "recording give --sensors sensors.toml (or --ignore time)"]
    result = invoke(["train", str(table), "--target", "y", "--budget", "1", "--split-gaps",
                     "2", "-o", str(tmp_path / "B2")])
    assert result.exit_code == 2 and "apply to recordings given with --sensors" in result.output


def test_rounded_full_scales_are_reported(invoke, tmp_path):
    from tests.fixtures import write_stream

    stream = write_stream(tmp_path / "rec" / "s.csv")
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    bundle = tmp_path / "B"
    assert invoke(["train", str(stream), "--sensors", str(toml), "--budget", "2", "--lam", "1",
                   "-o", str(bundle)]).exit_code == 0
    result = invoke(["firmware", str(bundle), "--target", "host", "--numeric", "q15",
                     "--full-scale", "8000", "-o", str(tmp_path / "fw")])
    assert result.exit_code == 0, result.output
    assert ("--full-scale 8000 for every channel is used as 8192 (full scales are powers of "
            "two)") in result.output
    manifest = json.loads((tmp_path / "fw" / "firmware.json").read_text())
    assert set(np.ravel(list(manifest["full_scale"].values()) if isinstance(
        manifest["full_scale"], dict) else manifest["full_scale"])) == {8192.0}
    result = invoke(["firmware", str(bundle), "--target", "host", "--numeric", "q15",
                     "--full-scale", "64", "-o", str(tmp_path / "fw2")])
    assert result.exit_code == 0 and "is used as" not in result.output


def test_multi_target_arff_by_targets_last(invoke, tmp_path):
    """Mulan-style multi-target regression: --targets-last N equals naming the N targets (names
    with '+' and spaces included), for train and evaluate."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    Y = X[:, :2] @ np.array([[1.0, 2.0], [3.0, -1.0]]) + 0.1 * rng.normal(size=(50, 2))
    head = ("@relation mt\n" + "".join(f"@attribute f{i} numeric\n" for i in range(4))
            + "@attribute 'NO2 +' numeric\n@attribute 'load level' numeric\n@data\n")
    rows = "".join(",".join(f"{v:.6f}" for v in (*x, *y)) + "\n" for x, y in zip(X, Y))
    (tmp_path / "mt.arff").write_text(head + rows)
    common = ["--budget", "2", "--lam", "1"]
    a = invoke(["train", str(tmp_path / "mt.arff"), "--targets-last", "2", *common,
                "-o", str(tmp_path / "A")])
    b = invoke(["train", str(tmp_path / "mt.arff"), "--target", "NO2 +", "--target",
                "load level", *common, "-o", str(tmp_path / "B")])
    assert a.exit_code == 0 and b.exit_code == 0, a.output + b.output
    meta_a, meta_b = (json.loads((tmp_path / d / "model.json").read_text()) for d in "AB")
    assert meta_a["targets"] == meta_b["targets"] == ["NO2 +", "load level"]
    assert meta_a["task"] == "regression" and meta_a["selected"] == meta_b["selected"]
    with np.load(tmp_path / "A" / "weights.npz") as wa:
        with np.load(tmp_path / "B" / "weights.npz") as wb:
            np.testing.assert_array_equal(wa["W"], wb["W"])
    result = invoke(["evaluate", str(tmp_path / "mt.arff"), "--targets-last", "2", "--budgets",
                     "1,2", "--folds", "3", "--methods", "greedy-joint"])
    assert result.exit_code == 0, result.output
    result = invoke(["train", str(tmp_path / "mt.arff"), "--targets-last", "2", "--labels", "2",
                     *common, "-o", str(tmp_path / "C")])
    assert result.exit_code == 2 and "name the targets one way" in result.output
