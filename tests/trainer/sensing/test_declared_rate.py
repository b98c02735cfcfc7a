"""A declared sample rate that the time stamps contradict is refused, naming both rates (a
40 Hz declaration on 64 Hz data passed silently before); jittered integer-millisecond stamps
of the declared rate pass."""

import subprocess
import sys

import numpy as np
import pytest

from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.sensing.recordings import Recording
from sensorbudget.trainer.sensing.streams import RATE_TOLERANCE, measured_rate, time_gaps


def _rec(time):
    return Recording("r.csv", np.asarray(time, dtype=float), {"ax": np.zeros(len(time))})


def _slow_rate(t):
    """Reference: the mean of the steps within half a median step of the median, by loop."""
    steps = sorted(b - a for a, b in zip(t[:-1], t[1:]))
    mid = len(steps) // 2
    median = steps[mid] if len(steps) % 2 else (steps[mid - 1] + steps[mid]) / 2
    regular = [s for s in (b - a for a, b in zip(t[:-1], t[1:])) if abs(s - median) <= median / 2]
    return len(regular) / sum(regular)


@pytest.mark.parametrize("true_hz, declared_hz", [(64.0, 40.0), (40.0, 64.0), (100.0, 50.0),
                                                 (1 / 3600, 1 / 1800)])
def test_a_contradicted_rate_names_both_rates(true_hz, declared_hz):
    t = np.arange(200) / true_hz
    with pytest.raises(DataError) as info:
        time_gaps(_rec(t), declared_hz)
    text = str(info.value)
    assert f"{true_hz:.6g} Hz" in text and f"sample_rate_hz={declared_hz:g}" in text


@pytest.mark.parametrize("seed", range(4))
def test_millisecond_stamps_with_gaps_match_the_slow_reference(seed):
    rng = np.random.default_rng(seed)
    ms = np.floor(np.arange(500) * 1000 / 64 + rng.uniform(0, 0.9, 500))   # 15/16 ms steps
    ms[300:] += 1000.0 * rng.integers(1, 5)                                 # one gap
    t = ms / 1000
    assert measured_rate(np.diff(t)) == pytest.approx(_slow_rate(list(t)), rel=1e-12)
    assert abs(measured_rate(np.diff(t)) - 64) < RATE_TOLERANCE * 64
    gaps = time_gaps(_rec(t), 64.0)
    assert gaps.sum() == 1 and gaps[299]


def test_the_cli_refuses_a_contradicted_rate_with_one_line(tmp_path):
    rows = "".join(f"{i / 64:.6f},{np.sin(i / 5):.4f},{i % 7}\n" for i in range(256))
    (tmp_path / "r.csv").write_text("time,ax,y\n" + rows)
    (tmp_path / "s.toml").write_text(
        'targets = ["y"]\n[window]\nlength = 8\n[[sensors]]\nname = "acc"\nchannels = ["ax"]\n'
        'unit_price = 1\nenergy_per_reading_j = 1e-6\nsample_rate_hz = 40\n'
        '[[features]]\nchannels = ["ax"]\nextractors = ["mean"]\n')
    out = tmp_path / "f.npz"
    run = subprocess.run([sys.executable, "-m", "sensorbudget", "features", str(tmp_path / "r.csv"),
                          "--sensors", str(tmp_path / "s.toml"), "-o", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ")
    assert "64 Hz" in lines[0] and "sample_rate_hz=40" in lines[0]
    assert not out.exists()
