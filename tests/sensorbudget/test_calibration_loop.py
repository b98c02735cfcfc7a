"""Feedback loop: simulate -> calibrate writes [[calibration]] -> features/train budget with it."""

import json
import shutil
import tomllib
from functools import partial

import pytest
from click.testing import CliRunner

from sensorbudget.cli import main
from tests.paths import REPO
from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.sensing.sensors import load_sensor_spec

AIR = REPO / "data" / "air_quality_uci" / "AirQualityUCI.csv"


@pytest.fixture
def invoke():
    return partial(CliRunner().invoke, main, catch_exceptions=False)


def test_measured_costs_flow_back_into_training(invoke, tmp_path):
    toml = tmp_path / "s.toml"
    shutil.copy(REPO / "examples" / "air_quality.sensors.toml", toml)
    original = toml.read_text()
    assert invoke(["features", str(AIR), "--sensors", str(toml), "-o", str(tmp_path / "f.npz")]).exit_code == 0
    assert invoke(["train", str(tmp_path / "f.npz"), "--budget", "3", "--lam", "1",
                   "-o", str(tmp_path / "b")]).exit_code == 0
    r = invoke(["simulate", str(tmp_path / "b"), "--recordings", str(AIR), "--backend", "python",
                "--report", str(tmp_path / "sim")])
    assert r.exit_code == 0, r.output
    r = invoke(["calibrate", str(tmp_path / "sim"), "--sensors", str(toml), "--allow-estimated"])
    assert r.exit_code == 0, r.output
    assert toml.read_text().startswith(original)          # the user's file is kept as it was
    entries = tomllib.loads(toml.read_text())["calibration"]
    spec = load_sensor_spec(toml)                          # the schema accepts the block
    measured = spec.compute_costs()
    assert set(measured) == {e["extractor"] for e in entries} == {f.name for f in spec.features}
    assert {e["extractor"] for e in entries if e.get("measured", True)} == set(
        json.loads((tmp_path / "b" / "model.json").read_text())["required_extractors"])
    assert "not measured" in r.output                      # the others are listed
    # Train again from recordings with the calibrated file: the extractors carry their compute
    # cost and the path's energy adds it to the sensors' energy.
    r = invoke(["train", str(AIR), "--sensors", str(toml), "--budget", "3", "--lam", "1",
                "--max-energy", "1e6", "-o", str(tmp_path / "b2")])
    assert r.exit_code == 0, r.output
    meta = json.loads((tmp_path / "b2" / "model.json").read_text())
    by_name = {e["name"]: e for e in meta["extractors"]}
    for name, cost in measured.items():
        assert by_name[name]["compute"] == cost
    readings = min(meta["window"], meta["hop"])        # a streaming device's new samples
    sensors = {s["name"]: s for s in meta["sensors"]}
    expected = sum(sensors[s]["energy_per_reading_j"] * readings
                   for s in meta["required_sensors"])
    expected += sum(measured.get(e, {}).get("energy", 0.0) for e in meta["required_extractors"])
    assert meta["path"][-1]["costs"]["energy"] == pytest.approx(expected, rel=1e-9)


def test_bad_calibration_entries_are_errors(tmp_path):
    base = (REPO / "examples" / "air_quality.sensors.toml").read_text()
    cases = [
        ('[[calibration]]\nextractor = "nope.mean"\ntarget = "avr"\n', "extractor='nope.mean'"),
        ('[[calibration]]\nextractor = "t.mean"\ntarget = "avr"\ncompute_energy_j = -1.0\n',
         "compute_energy_j=-1.0 must be >= 0"),
        ('[[calibration]]\nextractor = "t.mean"\ntarget = "avr"\nbogus = 1\n', "unknown key 'bogus'"),
    ]
    for i, (block, needle) in enumerate(cases):
        path = tmp_path / f"c{i}.toml"
        path.write_text(base + "\n" + block)
        with pytest.raises(DataError, match=needle.replace("(", r"\(").replace(")", r"\)")):
            load_sensor_spec(path)
    two = tmp_path / "two.toml"
    two.write_text(base + '\n[[calibration]]\nextractor = "t.mean"\ntarget = "avr"\n'
                   '[[calibration]]\nextractor = "t.mean"\ntarget = "cortex-m4f"\n')
    with pytest.raises(DataError, match="choose one with --compute-target"):
        load_sensor_spec(two).compute_costs()
    assert load_sensor_spec(two).compute_costs("avr") == {"t.mean": {"energy": 0.0, "time": 0.0}}
