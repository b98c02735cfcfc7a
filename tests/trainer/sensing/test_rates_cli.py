"""A multi-rate design end to end through the command line: features, train (the path and info
show each sensor's rate; the bundle's sensor energy is that of the chosen rate), predict on the
recordings equals predict on the feature table and onnxruntime; the parts not built yet
(C header, C library, firmware, simulate) refuse with one Error line and exit 2."""

import csv
import json
import re
import subprocess
import sys

import numpy as np
import pytest
import tomli_w

from sensorbudget.export import OnnxModel
from tests.trainer.sensing.test_rates import _energy_by_definition, generate, spec_dict
from sensorbudget.trainer.sensing.feature_set import FeatureSet


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "sensorbudget", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rates")
    rec = generate(11, seconds=60, holes=(0.01, 0.0))[0]
    names = list(rec.columns)
    rows = [["time", *names]] + [
        [f"{t:.6f}", *("" if np.isnan(rec.columns[c][i]) else f"{rec.columns[c][i]:g}"
                       for c in names)] for i, t in enumerate(rec.time)]
    with open(tmp / "r.csv", "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    (tmp / "s.toml").write_bytes(tomli_w.dumps(spec_dict()).encode())
    for args in (("features", "r.csv", "--sensors", "s.toml", "-o", "f.npz"),
                 ("train", "f.npz", "--budget", "4", "--max-energy", "2.6e-5", "--lam", "1",
                  "-o", "b")):
        done = _cli(*args, cwd=tmp)
        assert done.returncode == 0, done.stderr
        if args[0] == "features":
            assert ("window 2 s, hop 1 s; sensors at acc 8 Hz (candidates at 2, 4, 8 Hz), "
                    "baro 2 Hz, temp 1 Hz") in done.stdout
    return tmp, done.stdout


def test_the_path_and_info_show_each_sensors_rate(run):
    tmp, printed = run
    meta = json.loads((tmp / "b" / "model.json").read_text())
    fs = FeatureSet.load(tmp / "f.npz")
    rate = dict(zip(fs.feature_names, fs.feature_rates))
    sensor = dict(zip(fs.feature_names, fs.feature_sensors))
    chosen = []
    for step in meta["path"]:
        chosen += step["added"]
        expect = {}
        for f in chosen:
            expect[sensor[f]] = max(expect.get(sensor[f], 0.0), rate[f])
        assert step["rates_hz"] == expect
    assert meta["sensor_rates_hz"] == expect
    energy = sum(s["energy_per_prediction_j"] for s in meta["sensors"]
                 if s["name"] in meta["required_sensors"])
    assert energy == pytest.approx(_energy_by_definition(fs, chosen))
    assert meta["costs"]["total"]["energy"] == pytest.approx(energy)
    info = _cli("info", "b", cwd=tmp).stdout
    listing = ", ".join(f"{s} at {r:g} Hz" for s, r in expect.items())
    assert f"required sensors: {listing}" in info and f"required sensors: {listing}" in printed


def test_predict_on_recordings_equals_the_table_and_onnx(run):
    tmp, _ = run
    for source, out in (("r.csv", "p1.csv"), ("f.npz", "p2.csv")):
        assert _cli("predict", "b", source, "-o", out, cwd=tmp).returncode == 0
    assert (tmp / "p1.csv").read_bytes() == (tmp / "p2.csv").read_bytes()
    assert _cli("export", "onnx", "b", "-o", "m.onnx", "--dtype", "float64",
                cwd=tmp).returncode == 0
    fs = FeatureSet.load(tmp / "f.npz")
    scores = next(iter(OnnxModel(tmp / "m.onnx").run(fs.X.astype(np.float64)).values()))
    with open(tmp / "p2.csv") as fh:
        predicted = [float(r["y"]) for r in csv.DictReader(fh)]
    np.testing.assert_allclose(np.ravel(scores), predicted, rtol=1e-12)


@pytest.mark.parametrize("args", [("firmware", "b", "--target", "host", "-o", "fw"),
                                  ("simulate", "b", "--recordings", "r.csv", "--backend",
                                   "python", "--report", "sim")])
def test_firmware_and_simulate_take_sensors_at_several_rates(run, args):
    """Issue 30 item 3: firmware is generated and simulate replays the interleaved streams,
    every prediction equal to the reference (tests/device_sim/test_multirate_replay.py)."""
    tmp, _ = run
    done = _cli(*args, cwd=tmp)
    assert done.returncode == 0, done.stderr
    if args[0] == "firmware":
        assert "PUSH_EVENTS" in (tmp / "fw" / "main.c").read_text()
    else:
        report = json.loads((tmp / "sim" / "report.json").read_text())
        assert report["predictions"] == report["delivered"] > 0 and report["mismatches"] == 0
        assert {s["name"] for s in report["rates"]["sensors"]} == set(
            report["bundle"]["required_sensors"])


def _write(path, time, columns):
    with open(path, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["time", *columns])
        for i, t in enumerate(time):
            out.writerow([f"{t:.6f}", *(f"{v[i]:g}" for v in columns.values())])


def test_one_file_per_sensor_gives_the_same_features_as_one_table(run, tmp_path):
    """Each sensor's rows of the table as its own file (its own time stamps): the same feature
    table, and predict reads the folder as it reads the table."""
    tmp, _ = run
    with open(tmp / "r.csv") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    folder = tmp_path / "rec"
    folder.mkdir()
    for name, channels in (("acc", ["ax", "ay"]), ("baro", ["p"]), ("temp", ["t"]),
                           ("targets", ["y"])):
        idx = [header.index(c) for c in channels]
        mine = [r for r in body if any(r[j] for j in idx)]
        _write(folder / f"{name}.csv", [float(r[0]) for r in mine],
               {c: [float(r[j]) if r[j] else np.nan for r in mine] for c, j in zip(channels, idx)})
    done = _cli("features", folder, "--sensors", tmp / "s.toml", "-o", tmp_path / "g.npz",
                cwd=tmp)
    assert done.returncode == 0, done.stderr
    a, b = FeatureSet.load(tmp / "f.npz"), FeatureSet.load(tmp_path / "g.npz")
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.Y, b.Y)
    assert (a.window_start.tolist(), a.feature_names) == (b.window_start.tolist(), b.feature_names)
    assert _cli("predict", "b", folder, "-o", tmp_path / "p.csv", cwd=tmp).returncode == 0
    assert _cli("predict", "b", "r.csv", "-o", tmp_path / "t.csv", cwd=tmp).returncode == 0
    with open(tmp_path / "t.csv") as one, open(tmp_path / "p.csv") as two:
        first = [r[1:] for r in csv.reader(one)]
        assert first == [r[1:] for r in csv.reader(two)] and len(first) > 10


@pytest.mark.parametrize("change, message", [
    (lambda m: m.update(sensor_rates_hz=["acc"]), "sensor_rates_hz"),
    (lambda m: m["path"][0].update(rates_hz={"acc": "fast"}), r"path\[0\].rates_hz"),
    (lambda m: m["sensors"][0].update(rates_hz=[2, -4]), r"sensors\[0\].rates_hz"),
    (lambda m: m.pop("window_s"), "window_s"),
])
def test_a_vouched_multi_rate_bundle_with_wrong_types_is_one_error(run, tmp_path, change,
                                                                     message):
    """``upgrade`` hashes a bundle as it is; the schema still checks the rate fields' types."""
    import shutil
    tmp, _ = run
    shutil.copytree(tmp / "b", tmp_path / "b")
    meta = json.loads((tmp_path / "b" / "model.json").read_text())
    meta.pop("content_sha256")
    change(meta)
    (tmp_path / "b" / "model.json").write_text(json.dumps(meta))
    done = _cli("upgrade", tmp_path / "b", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("Error: model.json ") and re.search(message, done.stderr)
