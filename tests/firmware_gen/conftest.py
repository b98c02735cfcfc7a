"""Session fixtures: bundles trained on the real recordings, and firmware built once per
(bundle, target, numeric, kernel) so every test reuses the binaries."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tests.firmware_gen.helpers import Session
from tests.paths import REPO, SHARED

DATA = SHARED
BASIC_MOTIONS = DATA / "basic_motions"
AIR_QUALITY = REPO / "data" / "air_quality_uci" / "AirQualityUCI.csv"
#: one feature of every extractor kind, spread over the channels
KIND_FEATURES = ["acc_x.mean", "acc_y.std", "acc_z.min", "gyro_x.max", "gyro_y.ptp",
                 "gyro_z.rms", "acc_x.mad", "acc_y.zcr", "acc_z.energy", "gyro_x.last",
                 "acc.mag_mean", "gyr.mag_std", "acc.mag_max", "accy_gyry.corr"]


#: BasicMotions' two sensors at 10 Hz with datasheet-order energies (:func:`bm_sensors_toml`)
BM_SENSORS = """\
[[sensors]]
name = "accel"
channels = ["acc_x", "acc_y", "acc_z"]
unit_price = 1.0
energy_per_reading_j = 1.5e-6
sample_rate_hz = 10

[[sensors]]
name = "gyro"
channels = ["gyro_x", "gyro_y", "gyro_z"]
unit_price = 2.5
energy_per_reading_j = 1.5e-3
sample_rate_hz = 10
"""


def bm_sensors_toml(features: str, window: int = 16, hop: int = 8) -> str:
    """A sensors.toml for BasicMotions: ``window`` / ``hop`` samples (windows with missing
    samples skipped), :data:`BM_SENSORS`, then ``features`` (its ``[[features]]`` tables)."""
    return (f'[window]\nlength = {window}\nhop = {hop}\non_missing = "skip"\n\n'
            f"{BM_SENSORS}\n{features}")


def train(fs, out, budget, columns=None):
    """A bundle like ``sensorbudget train RECORDINGS --sensors``, optionally on a subset."""
    from sensorbudget.trainer.training import estimator_for_task
    from sensorbudget.trainer.bundle.model import bundle_contents, load_bundle, save_bundle

    X = np.asarray(fs.X, dtype=np.float64)
    names = list(fs.feature_names)
    extractors, sensors, structure = fs.bundle_structure()
    if columns is not None:
        idx = [names.index(c) for c in columns]
        X, names = X[:, idx], [names[i] for i in idx]
        extractors = [e for e in extractors if e["features"][0] in names]
    est, y, targets, extra = estimator_for_task(fs.task, np.asarray(fs.Y), list(fs.target_names))
    est.set_params(budget=budget, lam=1.0)
    est.fit(X, y)
    if fs.task == "multiclass":
        targets = [str(c) for c in est.classes_.tolist()]
        extra = {"classes": targets}
    meta, arrays = bundle_contents(est, X, names, targets, task=fs.task, extractors=extractors,
                                   sensors=sensors, extra={**structure, **extra})
    save_bundle(out, meta, arrays)
    bundle = load_bundle(out)
    bundle.path = Path(out)
    return bundle


@pytest.fixture(scope="session")
def bm_features():
    if not BASIC_MOTIONS.is_dir():
        pytest.skip(f"{BASIC_MOTIONS} is missing (shared data not available)")
    from sensorbudget.trainer.sensing.feature_set import load_feature_set

    return load_feature_set(BASIC_MOTIONS, REPO / "examples" / "basic_motions.sensors.toml")


@pytest.fixture(scope="session")
def bm_recordings(bm_features):
    from sensorbudget.trainer.sensing.recordings import load_recordings

    return load_recordings(BASIC_MOTIONS, bm_features.sample_rate)


@pytest.fixture(scope="session")
def bm_bundle(bm_features, tmp_path_factory):
    """BasicMotions, 12 features greedily selected (4 classes)."""
    return train(bm_features, tmp_path_factory.mktemp("bundles") / "bm", 12)


@pytest.fixture(scope="session")
def kinds_bundle(bm_features, tmp_path_factory):
    """BasicMotions restricted to one feature of every extractor kind (14 features)."""
    return train(bm_features, tmp_path_factory.mktemp("bundles") / "kinds", len(KIND_FEATURES),
                 KIND_FEATURES)


@pytest.fixture(scope="session")
def aq_features():
    if not AIR_QUALITY.is_file():
        pytest.skip(f"{AIR_QUALITY} is missing")
    from sensorbudget.trainer.sensing.feature_set import load_feature_set

    return load_feature_set(AIR_QUALITY, REPO / "examples" / "air_quality.sensors.toml")


@pytest.fixture(scope="session")
def aq_bundle(aq_features, tmp_path_factory):
    """Air Quality, 6 extractors for the 4 pollutant targets (regression)."""
    return train(aq_features, tmp_path_factory.mktemp("bundles") / "aq", 6)


def bm_full_scale(recordings) -> dict:
    """Power-of-two full scale above the largest |sample| of each BasicMotions channel."""
    from sensorbudget.firmware_gen.plan import power_of_two_above

    channels = recordings.recordings[0].columns
    return {c: power_of_two_above(max(float(np.nanmax(np.abs(r.columns[c])))
                                      for r in recordings.recordings))
            for c in channels}


@dataclass
class Built:
    out: Path
    firmware: object
    bundle: object
    harness: Path | None = None

    def start(self):
        return Session(self.out, harness=self.harness)

    @property
    def plan(self):
        return self.firmware.plan


def need_tools(*tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{missing[0]} is not installed (make deps-embedded)")


@pytest.fixture(scope="session")
def firmware(tmp_path_factory):
    """``firmware(bundle, target, numeric, **options)`` -> :class:`Built`, built once."""
    from sensorbudget.firmware_gen import generate_firmware
    from sensorbudget.firmware_gen.build import build, build_simavr_harness, write_firmware

    cache = {}
    root = tmp_path_factory.mktemp("firmware")

    def get(bundle, target, numeric="float32", *, kernel="auto", full_scale=None,
            make_vars=None, name="sbmodel"):
        key = (bundle.bundle_sha256(), target, numeric, kernel, name,
                   tuple(sorted((make_vars or {}).items())),
               tuple(sorted((full_scale or {}).items())))
        if key not in cache:
            tools = {"host": ["gcc"], "avr": ["avr-gcc"],
                     "hifive1": ["riscv64-unknown-elf-gcc"]}.get(target, ["arm-none-eabi-gcc"])
            need_tools("make", *tools)
            fw = generate_firmware(bundle, target=target, numeric=numeric, name=name,
                                   full_scale=full_scale, kernel=kernel)
            out = write_firmware(fw, root / f"fw{len(cache)}")
            build(out, make_vars=make_vars)
            harness = None
            if target == "avr":
                if "harness" not in cache:
                    need_tools("gcc")
                    if not Path("/usr/include/simavr/sim_avr.h").is_file():
                        pytest.skip("libsimavr-dev is not installed")
                    cache["harness"] = build_simavr_harness(root / "simavr")
                harness = cache["harness"]
            cache[key] = Built(out, fw, bundle, harness)
        return cache[key]

    return get


@pytest.fixture(scope="session")
def odd_targets_bundle(bm_features, tmp_path_factory):
    """Regression with an odd number of targets (3 gyroscope means from 5 accelerometer
    features): the Q15 kernels' single-target and tail paths."""
    from sensorbudget.trainer import GreedyRLS
    from sensorbudget.trainer.bundle.model import bundle_contents, load_bundle, save_bundle

    X = np.asarray(bm_features.X, dtype=np.float64)
    names = list(bm_features.feature_names)
    extractors, sensors, structure = bm_features.bundle_structure()
    targets = ["gyro_x.mean", "gyro_y.mean", "gyro_z.mean"]
    acc = [i for i, s in enumerate(bm_features.feature_sensors) if s == "accel"]
    acc_names = [names[i] for i in acc]
    est = GreedyRLS(budget=5, lam=1.0).fit(X[:, acc], X[:, [names.index(t) for t in targets]])
    meta, arrays = bundle_contents(est, X[:, acc], acc_names, targets, task="regression",
                                   extractors=[e for e in extractors
                                               if e["features"][0] in acc_names],
                                   sensors=sensors, extra=structure)
    out = tmp_path_factory.mktemp("bundles") / "odd_targets"
    save_bundle(out, meta, arrays)
    return load_bundle(out)
