"""Shared fixtures: bundles trained (through the CLI) from real and tiny recordings."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fixtures import TINY_SENSORS, write_stream
from tests.paths import REPO, SHARED

AIR_QUALITY = REPO / "data" / "air_quality_uci" / "AirQualityUCI.csv"
AIR_SENSORS = REPO / "examples" / "air_quality.sensors.toml"
BASIC_MOTIONS = SHARED / "basic_motions"
MOTIONS_SENSORS = REPO / "examples" / "basic_motions.sensors.toml"


def train(data, sensors, out, budget, *extra):
    from sensorbudget.cli import main

    result = CliRunner().invoke(main, ["train", str(data), "--sensors", str(sensors),
                                       "--budget", str(budget), "-o", str(out), *extra],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


def write_tiny(directory: Path, n: int = 240, seed: int = 0, nan_at=()) -> Path:
    """A 20 Hz CSV stream with channels ax, ay, t and a target y; NaN rows at ``nan_at``."""
    return write_stream(directory / "stream.csv", n=n, seed=seed, nan_at=nan_at)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """(bundle dir, recordings, sensors.toml) of a small synthetic device (fast)."""
    base = tmp_path_factory.mktemp("tiny")
    (base / "sensors.toml").write_text(TINY_SENSORS)
    rec = write_tiny(base / "rec", nan_at=(100,))
    bundle = train(rec, base / "sensors.toml", base / "bundle", 4)
    return bundle, rec, base / "sensors.toml"


@pytest.fixture(scope="session")
def motions(tmp_path_factory):
    """(bundle dir trained on BasicMotions TRAIN, TEST recordings) or skip."""
    if not (BASIC_MOTIONS / "BasicMotions_TRAIN.ts").is_file():
        pytest.skip(f"{BASIC_MOTIONS} is missing (shared data not available)")
    base = tmp_path_factory.mktemp("motions")
    bundle = train(BASIC_MOTIONS / "BasicMotions_TRAIN.ts", MOTIONS_SENSORS, base / "bundle", 5)
    return bundle, BASIC_MOTIONS / "BasicMotions_TEST.ts"


@pytest.fixture(scope="session")
def air(tmp_path_factory):
    """(bundle dir trained on the Air Quality stream, the stream)."""
    base = tmp_path_factory.mktemp("air")
    bundle = train(AIR_QUALITY, AIR_SENSORS, base / "bundle", 4)
    return bundle, AIR_QUALITY


def model_of(bundle_dir, numeric="float32", **kw):
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.trainer.bundle.model import load_bundle

    return ReferenceModel(load_bundle(bundle_dir), numeric, **kw)


def recordings_of(path, model):
    from sensorbudget.trainer.sensing.recordings import load_recordings

    return load_recordings(path, model.sample_rate)


@pytest.fixture(scope="session")
def unicorn_sim(tiny, tmp_path_factory):
    """``simulate --backend unicorn-m4f`` of the tiny bundle through the command line: (report
    folder, what the command printed, the firmware folder it built); skips without unicorn."""
    from sensorbudget.cli import main
    from sensorbudget.device_sim.backends import available_backends

    reason = available_backends().get("unicorn-m4f")
    if reason is not None:
        pytest.skip(f"backend unicorn-m4f: {reason}")
    bundle, rec, _ = tiny
    base = tmp_path_factory.mktemp("unicorn-sim")
    result = CliRunner().invoke(main, ["simulate", str(bundle), "--recordings", str(rec),
                                       "--backend", "unicorn-m4f", "--report",
                                       str(base / "sim"), "--workdir", str(base / "work")],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (fw,) = (base / "work").glob("fw-*")
    return base / "sim", result.output, fw
