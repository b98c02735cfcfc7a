"""Generated multi-rate designs (issue 30 item 3): seeded random sensors.toml files (2-4
sensors at 8, 16 or 32 Hz, or for every third seed at 10, 20 or 40 Hz, each with 1-3 of its
divisor rates of at least 4 Hz as candidates: 4 and 10 Hz of a 20 Hz sensor push it at
20 Hz), random window statistics, shape, spectral and magnitude extractors, windows of 1 or
2 s, hops of 0.5 to 2.5 s (below, at and above the window; whole samples at every rate), a
synthetic recording per case aligned by the trainer, a random selection of 3-9 features, and
the generated C built with -Werror on the host (gcc for even seeds, clang for odd ones).
Every case: the Python reference equals the trainer's feature matrix (float32, bit for bit)
and the C equals the reference (features, inputs and scores bit for bit, every numeric); in
Q15/Q31 the real scores are within the stated stream bound of the float64 model."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from sensorbudget.firmware_gen import multirate_reference as mr
from sensorbudget.firmware_gen.multirate import make_multirate_plan
from sensorbudget.firmware_gen.multirate_c import model_header
from sensorbudget.trainer.sensing import rates
from sensorbudget.trainer.sensing.feature_set import build_feature_set
from sensorbudget.trainer.sensing.recordings import Recording, RecordingSet
from sensorbudget.trainer.sensing.sensors import parse_sensor_spec
from tests.firmware_gen import multirate_harness as H
from tests.firmware_gen.conftest import train
from tests.firmware_gen.generative import _fits, _pick

SEEDS = range(10)
NUMERICS = ("float32", "q15", "float32", "q31")
STATS = ("mean", "std", "min", "max", "ptp", "rms", "mad", "zcr", "energy", "last")
SHAPE_SPECTRAL = ("skew", "kurtosis", "slope", "percentile:90", "bandpower:0-2", "domfreq",
                  "centroid", "entropy", "bandratio:0-1/1-2")
SECONDS = 40


def _design(seed: int) -> tuple:
    """(sensors.toml as a dict, {sensor: (channels, rate)}) of ``seed``."""
    rng = np.random.default_rng(seed)
    window_s = float(rng.choice([1.0, 2.0]))
    family = (8, 16, 32) if seed % 3 else (10, 20, 40)     # powers of two, or decimal rates
    sensors, blocks, layout = [], [], {}
    for i in range(int(rng.integers(2, 5))):
        rate = int(rng.choice(family))
        divisors = [q for q in (40, 32, 20, 16, 10, 8, 5, 4) if q <= rate and rate % q == 0]
        chosen = sorted(int(q) for q in rng.choice(divisors, int(rng.integers(
            1, min(3, len(divisors)) + 1)), replace=False))
        channels = [f"s{i}c{j}" for j in range(int(rng.integers(1, 4)))]
        layout[f"sensor{i}"] = (channels, rate)
        sensors.append({"name": f"sensor{i}", "channels": channels, "unit_price": 1.0,
                        "sample_rate_hz": rate, "rates_hz": chosen,
                        "energy_per_reading_j_by_rate": [1e-6] * len(chosen)})
        shortest = round(window_s * min(chosen))
        blocks.append({"channels": channels, "extractors": _pick(rng, STATS, 1, 4)})
        if rng.random() < 0.7:
            blocks.append({"channels": _pick(rng, channels, 1, 2),
                           "extractors": _pick(rng, _fits(SHAPE_SPECTRAL, shortest), 1, 3)})
        if len(channels) >= 2 and rng.random() < 0.5:
            blocks.append({"group": f"g{i}", "channels": channels,
                           "extractors": _pick(rng, ("mag_mean", "mag_std", "mag_max"), 1, 2)})
    rates = [q for sensor in sensors for q in sensor["rates_hz"]]
    hop_s = float(rng.choice([h for h in (0.5, 1.0, 1.5, 2.5)
                              if all(float(h * q).is_integer() for q in rates)]))
    spec = {"targets": ["y"], "window": {"length_s": window_s, "hop_s": hop_s,
                                         "on_missing": "skip"},
            "sensors": sensors, "features": [b for b in blocks if b["extractors"]]}
    return spec, layout


def _recording(seed: int, layout: dict) -> Recording:
    """A table with one row per time stamp of any sensor (a sensor's cells empty where it did
    not sample): sines plus noise per channel, and the target y at the first sensor's rows."""
    rng = np.random.default_rng(1000 + seed)
    rows = {}
    for channels, rate in layout.values():
        t = np.arange(SECONDS * rate) / rate    # i / r: one float for one instant at any rate
        for c in channels:
            values = (rng.uniform(0.5, 4) * np.sin(2 * np.pi * rng.uniform(0.2, 3) * t)
                      + rng.normal(scale=0.5, size=t.size)).round(4)
            for ti, v in zip(t, values):
                rows.setdefault(float(ti), {})[c] = v
    first = next(iter(layout.values()))
    for ti in np.arange(SECONDS * first[1]) / first[1]:
        rows[float(ti)]["y"] = round(float(np.sin(ti)), 3)
    time = np.array(sorted(rows))
    names = [c for chans, _ in layout.values() for c in chans] + ["y"]
    columns = {c: np.array([rows[ti].get(c, np.nan) for ti in time]) for c in names}
    return Recording(f"case{seed}.csv", time, columns)


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_multi_rate_design(seed, tmp_path):
    H.need_cc()
    data, layout = _design(seed)
    spec = parse_sensor_spec(data, f"case {seed}")
    rec = _recording(seed, layout)
    fs = build_feature_set(RecordingSet([rec]), spec)
    rng = np.random.default_rng(2000 + seed)
    columns = _pick(rng, list(fs.feature_names), 3, 9)
    bundle = train(fs, tmp_path / "bundle", len(columns), columns)
    numeric = NUMERICS[seed % len(NUMERICS)]
    mplan = make_multirate_plan(bundle, name=f"c{seed}", numeric=numeric)
    assert {(mplan.sensors[g.sensor].name, g.rate_hz) for g in mplan.groups} == {
        (f.split("@")[0], float(f.split("@")[1].split(".")[0])) for f in
        [_sensor_feature(fs, c) for c in bundle.meta["selected"]]}

    k, _, aligned = rates.usable_windows(rec, spec, "skip")
    names = list(fs.feature_names)
    expected = rates.features(aligned, k, spec)[:, [names.index(c)
                                                     for c in bundle.meta["selected"]]]
    real = mr.trainer_streams(mplan, aligned)
    X32, _, _ = mr.stream(make_multirate_plan(bundle, name="f", numeric="float32"), bundle,
                          real)
    assert np.array_equal(X32.view(np.uint32), expected.view(np.uint32))

    streams = mr.quantize_streams(mplan, real) if mplan.fixed else real
    order = mr.push_order(mplan, {s: len(x) for s, x in streams.items()})
    X, inputs, scores = mr.stream(mplan, bundle, streams, order)
    cc = ("gcc", "clang")[seed % 2] if shutil.which("clang") else "gcc"
    exe = H.build(mplan, bundle, tmp_path / "c", cc=cc)
    windows, Xc, inc, scc, end = H.parse(mplan, H.run(exe, H.pushes(mplan, streams, order)))
    assert windows == list(range(len(expected))) and end == (len(expected), 0)
    assert len(expected) == (SECONDS - data["window"]["length_s"]) // data["window"]["hop_s"] + 1
    assert np.array_equal(Xc.view(np.uint32), X.view(np.uint32))
    assert np.array_equal(inc, np.asarray(inputs).astype(inc.dtype))
    if not mplan.fixed:
        assert np.array_equal(scc.view(np.uint32), scores.view(np.uint32))
        return
    assert np.array_equal(scc, np.asarray(scores).astype(scc.dtype))
    header = model_header(bundle, mplan)
    W, b = np.asarray(bundle.W, dtype=np.float64), np.asarray(bundle.b, dtype=np.float64)
    model = expected.astype(np.float64) @ W.reshape(mplan.k, -1) + b
    real_scores = scc.astype(np.float64) * 2.0 ** -header.fixed.score_frac_bits
    bound = mr.stream_error_bounds(mplan, header.fixed, W)
    assert (np.abs(real_scores - model) <= bound).all(), (np.abs(real_scores - model).max(0),
                                                          bound)


def _sensor_feature(fs, column: str) -> str:
    """``<sensor>@<rate>.<kind>`` of a feature column (its sensor instead of its channel)."""
    j = list(fs.feature_names).index(column)
    return f"{fs.feature_sensors[j]}@{column.split('@')[1]}"
