"""The replay benchmark's device (issue 29): a 9-channel 100 Hz stream and a 6-feature bundle with
one FFT, window 256 / hop 128.

Three 3-axis sensors (``a``, ``b``, ``g``: channels ``a_x`` .. ``g_z``) at 100 Hz; the
candidates are exactly the six features the bundle keeps (``--budget 6`` takes them all):
``a`` magnitude mean, ``g`` magnitude std, ``b_x`` mean, ``b_y`` std, ``b_z`` band power
5-20 Hz (one 256-point FFT) and ``b_x`` rms, so every sample carries all nine channels. The
target mixes them; the signals are seeded, so the bundle and the stream are the same on every run.
The Arduino Uno (simavr) cannot hold a 256 x 9 window in its 2 KiB of RAM; it replays the same
stream through a smaller device (:data:`UNO_SENSORS_TOML`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RATE = 100.0
CHANNELS = [f"{s}_{a}" for s in "abg" for a in "xyz"]
SENSORS_TOML = """\
# issue 29's replay device: three 3-axis sensors at 100 Hz, six features (one FFT)
[window]
length = 256
hop = 128

[[sensors]]
name = "a"
channels = ["a_x", "a_y", "a_z"]
unit_price = 1.0
energy_per_reading_j = 1e-6
sample_rate_hz = 100

[[sensors]]
name = "b"
channels = ["b_x", "b_y", "b_z"]
unit_price = 1.0
energy_per_reading_j = 1e-6
sample_rate_hz = 100

[[sensors]]
name = "g"
channels = ["g_x", "g_y", "g_z"]
unit_price = 2.0
energy_per_reading_j = 1e-5
sample_rate_hz = 100

[[features]]
group = "a"
channels = ["a_x", "a_y", "a_z"]
extractors = ["mag_mean"]

[[features]]
group = "g"
channels = ["g_x", "g_y", "g_z"]
extractors = ["mag_std"]

[[features]]
channels = ["b_x"]
extractors = ["mean", "rms"]

[[features]]
channels = ["b_y"]
extractors = ["std"]

[[features]]
channels = ["b_z"]
extractors = ["bandpower:5-20"]
"""
#: the same stream on a device small enough for the Arduino Uno's 2 KiB of RAM (simavr): the
#: ``b`` sensor only, window 64 / hop 32, four features with one 64-point FFT
UNO_SENSORS_TOML = """\
# issue 29's replay device for the Uno: one 3-axis sensor at 100 Hz, four features (one FFT)
[window]
length = 64
hop = 32

[[sensors]]
name = "b"
channels = ["b_x", "b_y", "b_z"]
unit_price = 1.0
energy_per_reading_j = 1e-6
sample_rate_hz = 100

[[features]]
channels = ["b_x"]
extractors = ["mean", "rms"]

[[features]]
channels = ["b_y"]
extractors = ["std"]

[[features]]
channels = ["b_z"]
extractors = ["bandpower:5-20"]
"""


def stream(seconds: float, seed: int = 29) -> dict:
    """{time, the nine channels, y} of ``seconds`` of the stream (float64 arrays)."""
    rng = np.random.default_rng(seed)
    n = int(round(seconds * RATE))
    t = np.arange(n) / RATE
    slow = np.cumsum(rng.normal(size=n)) / np.sqrt(n)          # drifts that the target follows
    cols = {"time": t}
    for i, ch in enumerate(CHANNELS):
        f = 0.5 + 1.7 * i
        cols[ch] = (np.sin(2 * np.pi * f * t + i) * (1 + 0.3 * np.sin(2 * np.pi * t / 97 + i))
                    + 0.3 * rng.normal(size=n) + (0.5 if i % 3 == 0 else 0.1) * slow)
    cols["y"] = cols["b_x"] + cols["b_z"] ** 2 + np.hypot(cols["a_x"], cols["a_y"]) \
        + 0.1 * rng.normal(size=n)
    return cols


def write_stream_npz(path: Path, seconds: float, seed: int = 29) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **stream(seconds, seed))
    return path


def make_bundle(work: Path, train_seconds: float = 600.0, uno: bool = False) -> Path:
    """Train the six-feature bundle (``uno``: the Uno's four-feature one) on ``train_seconds``
    of the stream (another seed)."""
    work.mkdir(parents=True, exist_ok=True)
    name = "uno" if uno else "replay"
    sensors = work / f"{name}.sensors.toml"
    sensors.write_text(UNO_SENSORS_TOML if uno else SENSORS_TOML)
    rec = write_stream_npz(work / "train.npz", train_seconds, seed=7)
    out = work / f"{name}-bundle"
    cmd = [sys.executable, "-m", "sensorbudget", "train", str(rec), "--sensors", str(sensors),
           "--budget", "4" if uno else "6", "-o", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"training the replay bundle failed:\n{done.stdout}{done.stderr}")
    return out
