"""``predict BUNDLE recordings.csv`` scores the recordings' per-sample target column as
``predict BUNDLE features.npz`` does (issue 27: it said "DATA holds no targets" for a
multi-class stream, and with ``--recording-column`` for every stream): both print the same
measures and write the same CSV rows, and the measures equal scikit-learn's on the CSV against
the target read independently at each window's last sample."""

import csv

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, mean_squared_error

RATE, WINDOW_S, HOP_S = 10, 2.0, 1.0


def _stream(path, seed, n_segments=3, seconds=20):
    """time,segment,ax,ay,walking,speed at 10 Hz: ``walking`` (0/1/2 per sample, runs of 3 s)
    changes the spread of ax and ay; ``speed`` is a smooth regression target."""
    rng = np.random.default_rng(seed)
    n = n_segments * seconds * RATE
    t = np.arange(n) / RATE
    activity = np.repeat(rng.integers(0, 3, size=n // 30 + 1), 30)[:n]
    ax = rng.normal(size=n) * (0.3 + activity)
    ay = rng.normal(size=n) * (0.5 + 0.5 * activity) - 1.0
    speed = np.convolve(np.abs(ax), np.ones(10) / 10, mode="same")
    segment = np.arange(n) // (seconds * RATE)
    path.write_text("time,segment,ax,ay,walking,speed\n" + "".join(
        f"{t[i]:.1f},{segment[i]},{ax[i]:.4f},{ay[i]:.4f},{activity[i]},{speed[i]:.4f}\n"
        for i in range(n)))
    return {"walking": activity, "speed": np.round(speed, 4)}    # as written


def _toml(path, target):
    path.write_text(f'targets = ["{target}"]\n[window]\nlength_s = {WINDOW_S}\nhop_s = {HOP_S}\n'
                    '[[sensors]]\nname = "acc"\nchannels = ["ax", "ay"]\nunit_price = 2.0\n'
                    'energy_per_reading_j = 1e-6\nsample_rate_hz = 10\n'
                    '[[features]]\nchannels = ["acc"]\nextractors = ["mean", "std", "max"]\n')
    return path


def _run(invoke, *args):
    result = invoke([str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _metric_values(output):
    """The printed measures: every line after the header ``metrics on N row(s); <what DATA
    is> ...:`` (the header's provenance differs: a recordings file is not the feature file)."""
    lines = output.splitlines()
    top = next(i for i, x in enumerate(lines) if x.startswith("metrics on "))
    return [lines[top].split(";")[0]] + [x for x in lines[top + 1:] if not x.startswith("wrote")]


@pytest.mark.parametrize("split", [False, True], ids=["one-stream", "recording-column"])
@pytest.mark.parametrize("target,task", [("walking", "multiclass"), ("speed", "regression")])
def test_predict_on_recordings_scores_as_on_their_features(invoke, tmp_path, target, task,
                                                          split):
    toml = _toml(tmp_path / "sensors.toml", target)
    _stream(tmp_path / "train.csv", seed=0)
    truth = _stream(tmp_path / "test.csv", seed=1)[target]
    rec = ["--recording-column", "segment"] if split else []
    for name in ("train", "test"):
        _run(invoke, "features", tmp_path / f"{name}.csv", "--sensors", str(toml),
               *rec, "-o", str(tmp_path / f"{name}.npz"))
    _run(invoke, "train", (tmp_path / "train.npz"), "--task", task, "-k", "3",
           "-o", str(tmp_path / "b"))
    on_recordings = _run(invoke, "predict", tmp_path / "b", (tmp_path / "test.csv"),
                           "-o", str(tmp_path / "p_rec.csv"))
    on_features = _run(invoke, "predict", tmp_path / "b", (tmp_path / "test.npz"),
                         "-o", str(tmp_path / "p_feat.csv"))
    assert "no targets" not in on_recordings.output
    assert _metric_values(on_recordings.output) == _metric_values(on_features.output)
    rows = _rows(tmp_path / "p_rec.csv")
    assert rows == _rows(tmp_path / "p_feat.csv")
    assert (tmp_path / "p_rec.csv").read_bytes() == (tmp_path / "p_feat.csv").read_bytes()
    # the reference: the target at each window's last sample of the stream, read here
    starts = np.array([int(r["window_start"]) for r in rows])
    recording = [r["recording"] for r in rows]
    offset = {name: 0 for name in recording}
    if split:                   # each segment's window_start counts from its own first sample
        offset = {name: int(name.rpartition("#")[2]) * 20 * RATE for name in recording}
    last = np.array([offset[g] for g in recording]) + starts + int(WINDOW_S * RATE) - 1
    expected = truth[last]
    printed = {x.split()[0]: float(x.split()[-1]) for x in _metric_values(on_recordings.output)
               if x.startswith("  ") and len(x.split()) == 2}
    if task == "multiclass":
        decided = np.array([int(r["class"]) for r in rows])
        assert printed["accuracy"] == pytest.approx(accuracy_score(expected, decided), rel=1e-5)
    else:
        predicted = np.array([float(r[target]) for r in rows])
        mse = next(v for k, v in printed.items() if k.startswith("MSE"))
        assert mse == pytest.approx(mean_squared_error(expected, predicted), rel=1e-5)
