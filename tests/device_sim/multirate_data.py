"""A real multi-rate recording set for the multi-rate replay and firmware tests: UEA
BasicMotions (a smart watch's accelerometer and gyroscope at 10 Hz, ../shared/data), with the
gyroscope kept at 5 Hz and stamped half an accelerometer period later (t = 0.05 + 0.2 i s), so
the two sensors' samples interleave at distinct times in one table with empty cells."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.paths import SHARED

BASIC_MOTIONS = SHARED / "basic_motions"
ACC = ("acc_x", "acc_y", "acc_z")
GYRO = ("gyro_x", "gyro_y", "gyro_z")

SENSORS_TOML = """\
currency = "USD"
task = "multiclass"

[window]
length_s = 2.0
hop_s = 0.8
on_missing = "skip"

[[sensors]]
name = "accel"
channels = ["acc_x", "acc_y", "acc_z"]
unit_price = 1.0
sample_rate_hz = 10
rates_hz = [2.5, 10]
current_a_by_rate = [2.7e-6, 5e-6]
supply_v = 2.5

[[sensors]]
name = "gyro"
channels = ["gyro_x", "gyro_y", "gyro_z"]
unit_price = 2.5
sample_rate_hz = 5
energy_per_reading_j = 1.05e-3

[[features]]
channels = ["acc_x", "acc_y", "acc_z"]
extractors = ["mean", "min", "zcr"]

[[features]]
channels = ["gyro"]
extractors = ["std", "ptp", "rms", "energy", "mad"]
"""


def need_basic_motions() -> Path:
    train = BASIC_MOTIONS / "BasicMotions_TRAIN.ts"
    if not train.is_file():
        pytest.skip(f"{BASIC_MOTIONS} is missing (shared data not available)")
    return train


def write_multirate_set(out: Path, split: str = "TRAIN", per_class: int | None = None,
                        missing_at=None) -> Path:
    """Write the recordings of ``split`` as a folder (index.csv + one CSV per recording):
    accelerometer rows at t = 0.1 i, gyroscope rows at t = 0.05 + 0.2 i (its samples 2 i);
    ``per_class`` keeps the first recordings of each class; ``missing_at`` (recording,
    accelerometer sample) empties one accelerometer cell (a missing sample)."""
    from sensorbudget.trainer.sensing.recordings import load_recordings

    need_basic_motions()
    rset = load_recordings(BASIC_MOTIONS / f"BasicMotions_{split}.ts", 10.0)
    out.mkdir(parents=True, exist_ok=True)
    kept, seen = [], {}
    for rec in rset.recordings:
        label = rec.labels["class"]
        seen[label] = seen.get(label, 0) + 1
        if per_class is None or seen[label] <= per_class:
            kept.append(rec)
    index = ["file,class"]
    for r, rec in enumerate(kept):
        n = len(rec.time)
        acc = np.column_stack([rec.columns[c] for c in ACC])
        gyro = np.column_stack([rec.columns[c] for c in GYRO])[::2]
        lines = ["time," + ",".join(ACC + GYRO)]
        for j in range(2 * n):                 # rows every 0.05 s
            row = [""] * 6
            if j % 2 == 0:
                row[:3] = [repr(float(v)) for v in acc[j // 2]]
                if missing_at == (r, j // 2):
                    row[0] = ""
            elif j % 4 == 1 and (j - 1) // 4 < len(gyro):
                row[3:] = [repr(float(v)) for v in gyro[(j - 1) // 4]]
            else:
                continue
            lines.append(f"{j * 0.05:.2f}," + ",".join(row))
        name = f"rec{r:02d}.csv"
        (out / name).write_text("\n".join(lines) + "\n")
        index.append(f"{name},{rec.labels['class']}")
    (out / "index.csv").write_text("\n".join(index) + "\n")
    return out


def train_multirate(base: Path, budget: int = 8) -> tuple:
    """(bundle dir, TRAIN set folder, TEST set folder) trained through the CLI."""
    from tests.device_sim.conftest import train

    base.mkdir(parents=True, exist_ok=True)
    toml = base / "watch.sensors.toml"
    toml.write_text(SENSORS_TOML)
    rec = write_multirate_set(base / "train")
    bundle = train(rec, toml, base / "bundle", budget)
    return bundle, rec, write_multirate_set(base / "test", "TEST", per_class=2)
