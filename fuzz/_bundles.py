"""Small real bundles for the fuzz targets, trained through the CLI on synthetic recordings.

:func:`make_bundles` writes two recordings sets and trains a regression bundle (a stream with a
target column, every extractor kind selected) and a multi-class bundle (labelled recordings)
into ``directory``; they are the base the bundle and ONNX targets mutate and the model the C
targets generate firmware for.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SENSORS = """\
[window]
length = 8
hop = 3

[[sensors]]
name = "acc"
channels = ["ax", "ay", "az"]
unit_price = 1.0
energy_per_reading_j = 2e-6
sample_rate_hz = 20

[[sensors]]
name = "temp"
channels = ["t"]
unit_price = 0.5
power_w = 0.001
read_time_s = 0.01
sample_rate_hz = 20

[[features]]
channels = ["acc", "temp"]
extractors = ["mean", "std", "min", "max", "ptp", "rms", "mad", "zcr", "energy", "last"]

[[features]]
group = "a"
channels = ["ax", "ay", "az"]
extractors = ["mag_mean", "mag_std", "mag_max"]

[[features]]
group = "xt"
channels = ["ax", "t"]
extractors = ["corr"]
"""
N_FEATURES = 44


def _stream(path: Path, n: int, seed: int, target: bool, n_targets: int = 1) -> None:
    rng = np.random.default_rng(seed)
    time = np.arange(n) / 20.0
    ax = np.sin(time * (3 + seed)) + 0.1 * rng.normal(size=n)
    ay = np.cos(time * 2) + 0.1 * rng.normal(size=n)
    az = rng.normal(size=n)
    t = 20 + np.cumsum(0.05 * rng.normal(size=n))
    cols = {"time": time, "ax": ax, "ay": ay, "az": az, "t": t}
    if target and n_targets == 1:
        cols["y"] = ax ** 2 + 0.5 * t + 0.05 * rng.normal(size=n)
    elif target:
        for j in range(n_targets):
            cols[f"y{j}"] = (j + 1) * ax + 0.1 * t + 0.05 * rng.normal(size=n)
    lines = [",".join(cols)] + [",".join(f"{v[i]:.6g}" for v in cols.values()) for i in range(n)]
    path.write_text("\n".join(lines) + "\n")


def make_bundles(directory, wide: bool = False) -> dict:
    """{"regression": bundle dir, "multiclass": bundle dir} trained in ``directory``; with
    ``wide``, also "wide": a 24-target regression with 3 selected features."""
    from click.testing import CliRunner

    from sensorbudget.cli import main

    base = Path(directory)
    base.mkdir(parents=True, exist_ok=True)
    (base / "sensors.toml").write_text(SENSORS)
    _stream(base / "stream.csv", 300, 0, True)
    labelled = base / "labelled"
    labelled.mkdir(exist_ok=True)
    rows = ["file,activity"]
    for i, label in enumerate(["rest", "walk", "run", "rest", "walk", "run"]):
        _stream(labelled / f"r{i}.csv", 60, i, False)
        rows.append(f"r{i}.csv,{label}")
    (labelled / "index.csv").write_text("\n".join(rows) + "\n")
    runs = [("regression", base / "stream.csv", N_FEATURES), ("multiclass", labelled, 5)]
    if wide:
        _stream(base / "wide.csv", 200, 7, True, n_targets=24)
        runs.append(("wide", base / "wide.csv", 3))
    out = {}
    for task, data, budget in runs:
        result = CliRunner().invoke(main, ["train", str(data), "--sensors",
                                           str(base / "sensors.toml"), "--budget", str(budget),
                                           "-o", str(base / task)], catch_exceptions=False)
        if result.exit_code != 0:
            raise RuntimeError(f"training the {task} fuzz bundle failed: {result.output}")
        out[task] = base / task
    return out
