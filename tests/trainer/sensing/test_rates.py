"""Sensors at their own rates: one table with empty cells where a sensor did not sample, aligned
on each sensor's grid, windows in seconds, features at decimated rates. Checked against a slow
loop over the generator's own grid indices and numpy on the decimated windows; every bad
multi-rate input is one clear error."""

import subprocess
import sys

import numpy as np
import pytest

from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.sensing.feature_set import build_feature_set
from sensorbudget.trainer.sensing.recordings import Recording, RecordingSet
from sensorbudget.trainer.sensing.sensors import parse_sensor_spec

WINDOW_S, HOP_S = 2.0, 1.0
#: sensor -> (channels, recorded rate, phase in periods)
LAYOUT = {"acc": (("ax", "ay"), 8.0, 0.0), "baro": (("p",), 2.0, 0.25), "temp": (("t",), 1.0, 0.5)}


def spec_dict(**window):
    return {
        "targets": ["y"],
        "window": {"length_s": WINDOW_S, "hop_s": HOP_S, **window},
        "sensors": [
            {"name": "acc", "channels": ["ax", "ay"], "unit_price": 1.0, "sample_rate_hz": 8,
             "rates_hz": [8, 4, 2], "current_a_by_rate": [11e-6, 6e-6, 3e-6], "supply_v": 2.5},
            {"name": "baro", "channels": ["p"], "unit_price": 2.0, "energy_per_reading_j": 5e-6,
             "sample_rate_hz": 2},
            {"name": "temp", "channels": ["t"], "unit_price": 0.5, "energy_per_reading_j": 1e-5,
             "sample_rate_hz": 1}],
        "features": [{"channels": ["acc", "p", "t"], "extractors": ["mean", "std", "max"]}]}


def generate(seed, seconds=30, holes=(0.03, 0.02)):
    """(Recording, truth): truth[sensor] = {channel: values on the grid (NaN = missing)},
    present grid points, and the (time, y) target rows."""
    rng = np.random.default_rng(seed)
    rows, truth = [], {}
    for name, (channels, rate, phase) in LAYOUT.items():
        n = int(seconds * rate)
        present = rng.uniform(size=n) >= holes[0]
        present[0] = True
        values = {c: rng.normal(size=n).round(4) for c in channels}
        for c in channels:
            values[c][rng.uniform(size=n) < holes[1]] = np.nan
        truth[name] = (values, present)
        jitter = rng.uniform(-0.03, 0.03, size=n)
        for i in np.flatnonzero(present):
            rows.append(((i + phase + jitter[i]) / rate, {c: values[c][i] for c in channels}))
            if all(np.isnan(values[c][i]) for c in channels):       # a row must show a sample
                values[channels[0]][i] = 0.0
                rows[-1][1][channels[0]] = 0.0
    targets = [(j + 0.9, round(float(rng.normal()), 3)) for j in range(seconds)]
    rows += [(t, {"y": y}) for t, y in targets]
    rows.sort(key=lambda r: r[0])
    time = np.array([r[0] for r in rows])
    names = [c for chans, _, _ in LAYOUT.values() for c in chans] + ["y"]
    columns = {c: np.array([r[1].get(c, np.nan) for r in rows]) for c in names}
    return Recording("r.csv", time, columns), truth, targets, time[0]


def reference(truth, targets, t0):
    """Usable windows, their features and targets by loops over the generator's grid."""
    rows = {}
    k = 0
    while True:
        windows = {}
        for name, (channels, rate, _) in LAYOUT.items():
            values, present = truth[name]
            a, b = round(k * HOP_S * rate), round((k * HOP_S + WINDOW_S) * rate)
            if b > np.flatnonzero(present)[-1] + 1:
                return rows
            windows[name] = {c: [values[c][i] if present[i] else np.nan for i in range(a, b)]
                             for c in channels}
        ys = [y for t, y in targets if k * HOP_S <= t - t0 < k * HOP_S + WINDOW_S]
        if not any(np.isnan(v).any() for w in windows.values() for v in w.values()) and ys:
            feats = []
            for c in ("ax", "ay"):
                for factor in (4, 2, 1):                               # 2, 4, 8 Hz
                    x = np.array(windows["acc"][c][::factor], dtype=np.float32)
                    feats += [x.mean(), x.std(), x.max()]
            for name, c in (("baro", "p"), ("temp", "t")):
                x = np.array(windows[name][c], dtype=np.float32)
                feats += [x.mean(), x.std(), x.max()]
            rows[k] = (np.array(feats), ys[-1])
        k += 1


@pytest.mark.parametrize("seed", range(3))
def test_alignment_and_decimated_features_equal_a_slow_loop(seed):
    rec, truth, targets, t0 = generate(seed)
    spec = parse_sensor_spec(spec_dict())
    fs = build_feature_set(RecordingSet([rec]), spec)
    ref = reference(truth, targets, t0)
    assert fs.window_start.tolist() == [k * 8 for k in ref]        # hop = 8 samples at 8 Hz
    expected = np.array([ref[k][0] for k in ref])
    np.testing.assert_allclose(fs.X, expected, rtol=2e-6, atol=2e-6)
    assert fs.Y[:, 0].tolist() == [ref[k][1] for k in ref]
    assert fs.feature_names[:3] == ["ax@2.mean", "ax@2.std", "ax@2.max"]
    assert fs.feature_rates == [2.0] * 3 + [4.0] * 3 + [8.0] * 3 + [2.0] * 3 + [4.0] * 3 + [
        8.0] * 3 + [2.0] * 3 + [1.0] * 3
    again = build_feature_set(RecordingSet([generate(seed)[0]]), spec)
    assert again.save_npz() == fs.save_npz()                        # deterministic bytes


def test_the_table_round_trips_through_the_npz(tmp_path):
    from sensorbudget.trainer.sensing.feature_set import FeatureSet
    fs = build_feature_set(RecordingSet([generate(7)[0]]), parse_sensor_spec(spec_dict()))
    back = FeatureSet.load(fs.save_npz())
    assert back.feature_rates == fs.feature_rates
    extractors, sensors, _ = back.bundle_structure()
    by = {e["name"]: e["params"] for e in extractors}
    assert (by["ax@2.mean"]["window"], by["ax@2.mean"]["sample_rate_hz"]) == (4, 2.0)
    assert (by["t.mean"]["window"], by["t.mean"]["hop"]) == (2, 1)
    readings = {s["name"]: s["readings_per_prediction"] for s in sensors}
    assert readings == {"acc": 8, "baro": 2, "temp": 1}              # rate x min(window, hop)


def _with(sensor_changes=None, **top):
    d = spec_dict()
    for i, change in (sensor_changes or {}).items():
        d["sensors"][i] = {k: v for k, v in {**d["sensors"][i], **change}.items()
                           if v is not None}
    d.update(top)
    return d


@pytest.mark.parametrize("data, message", [
    (_with(window={"length": 16, "hop": 8}), r"different sample rates \(acc=8 Hz, baro=2 Hz, "
                                             r"temp=1 Hz\); give \[window\] length_s"),
    (_with({1: {"sample_rate_hz": 8}, 2: {"sample_rate_hz": 8}}, window={"length": 16}),
     "sensors at several rates need length_s and hop_s"),
    (_with({0: {"rates_hz": [8, 3]}}), "rate 3 Hz in rates_hz does not divide the recorded "
                                        "sample_rate_hz=8"),
    (_with({0: {"rates_hz": [8, 8, 4]}}), "lists a rate twice"),
    (_with({0: {"current_a_by_rate": [1e-6]}}), "must list one number per rate"),
    (_with({0: {"supply_v": None}}), "current_a_by_rate needs supply_v"),
    (_with({0: {"energy_per_reading_j": 1e-6}}), "the cost per rate replaces"),
    (_with({0: {"rates_hz": None}}), "current_a_by_rate needs rates_hz"),
    (_with(window={"length_s": 2.25, "hop_s": 1.0}), "length_s=2.25 s is not a whole number of "
                                                    "samples at 2 Hz"),
    (_with(window={"length_s": 2.0, "hop_s": 0.5}), "hop_s=0.5 s is not a whole number of "
                                                    "samples at 1 Hz"),
    (_with(features=[{"group": "m", "channels": ["ax", "p"], "extractors": ["mag_mean"]}]),
     "group 'm' spans sensors acc, baro"),
    (_with({0: {"rates_hz": None, "current_a_by_rate": None, "supply_v": None,
                "energy_per_reading_j": 1e-6}}, window={"length": 4},
           features=[{"group": "m", "channels": ["ax", "p"], "extractors": ["mag_mean"]}]),
     "give .window. length_s and hop_s"),
])
def test_each_bad_multi_rate_description_is_one_clear_error(data, message):
    with pytest.raises(DataError, match=message):
        parse_sensor_spec(data)


def _shift(rec, column, index, dt):
    rows = np.flatnonzero(~np.isnan(rec.columns[column]))
    rec.time[rows[index]] += dt
    return rec


@pytest.mark.parametrize("damage, message", [
    (lambda r: _shift(r, "p", 5, 0.5 * 0.2), r"\d\.\d+ periods off the sensor's 2 Hz grid "
                                             r"\(jitter tolerance 0\.1 period\)"),
    (lambda r: _shift(r, "t", 3, 0.55), "two samples on one 1 Hz grid point|periods off"),
    (lambda r: Recording(r.name, r.time * 1.6, r.columns), r"sensor 'acc': its time stamps "
                                                           r"show 5.00\d* Hz .* but "
                                                           r"sample_rate_hz=8 is declared"),
])
def test_each_bad_multi_rate_recording_is_one_clear_error(damage, message):
    rec = damage(generate(1)[0])
    rec.time.sort()
    with pytest.raises(DataError, match=message):
        build_feature_set(RecordingSet([rec]), parse_sensor_spec(spec_dict()))


def test_gaps_with_on_missing_error_and_overrides_in_samples_are_refused():
    rec = generate(2)[0]
    spec = parse_sensor_spec(spec_dict(on_missing="error"))
    with pytest.raises(DataError, match="has a (gap|missing sample) in the window from t="):
        build_feature_set(RecordingSet([rec]), spec)
    with pytest.raises(DataError, match="not --window/--hop in samples"):
        build_feature_set(RecordingSet([rec]), parse_sensor_spec(spec_dict()), window=16)


def test_the_cli_gives_one_error_line_for_a_sensor_off_its_grid(tmp_path):
    rec = _shift(generate(3)[0], "p", 4, 0.1)
    names = list(rec.columns)
    lines = ["time," + ",".join(names)] + [
        f"{t:.6f}," + ",".join("" if np.isnan(rec.columns[c][i]) else f"{rec.columns[c][i]:g}"
                               for c in names) for i, t in enumerate(rec.time)]
    (tmp_path / "r.csv").write_text("\n".join(lines) + "\n")
    import tomli_w
    (tmp_path / "s.toml").write_bytes(tomli_w.dumps(spec_dict()).encode())
    run = subprocess.run([sys.executable, "-m", "sensorbudget", "features", str(tmp_path / "r.csv"),
                          "--sensors", str(tmp_path / "s.toml"), "-o", str(tmp_path / "f.npz")],
                         capture_output=True, text=True)
    assert run.returncode == 2
    out = run.stderr.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("Error: ") and "sensor 'baro'" in out[0]
    assert not (tmp_path / "f.npz").exists()


def _energy_by_definition(fs, names):
    """J per prediction of the feature set ``names``: each sensor once, at the highest rate a
    feature of it needs (rate x min(window_s, hop_s) readings at that rate's cost)."""
    sensors = {s["name"]: s for s in fs.sensors}
    seconds = min(fs.window, fs.hop) / fs.sample_rate
    top = {}
    for name in names:
        j = fs.feature_names.index(name)
        s = fs.feature_sensors[j]
        top[s] = max(top.get(s, 0.0), fs.feature_rates[j])
    total = 0.0
    for s, rate in top.items():
        entry = sensors[s]
        if entry.get("rates_hz"):
            energy = dict(zip(entry["rates_hz"], entry["energy_per_reading_j_by_rate"]))[rate]
        else:
            energy = entry["energy_per_reading_j"]
        total += energy * round(rate * seconds)
    return total


@pytest.mark.parametrize("strategy", ["error", "cost-ratio"])
@pytest.mark.parametrize("max_energy", [1.2e-5, 2e-5, 3e-5, 5e-5])
def test_greedy_with_rates_equals_a_brute_force_greedy(max_energy, strategy):
    """Each step refits every affordable candidate (LOO by n refits) and prices the set by
    definition (:func:`_energy_by_definition`); cost-ratio divides the error decrease by the
    budget fractions the step uses (1 / budget per extractor + added energy / max_energy)."""
    from tests.trainer.reference import convention_transform
    from tests.trainer.selection.test_group_math import loo_sse_bruteforce
    from sensorbudget.trainer import GreedyRLS
    from sensorbudget.trainer.sensing.sensor_budget import cost_kwargs_from_feature_set
    fs = build_feature_set(RecordingSet([generate(5, seconds=60, holes=(0, 0))[0]]),
                           parse_sensor_spec(spec_dict()))
    X, Y = np.asarray(fs.X, dtype=np.float64), fs.Y
    est = GreedyRLS(budget=5, lam=1.0, strategy=strategy, max_energy=max_energy,
                    **cost_kwargs_from_feature_set(fs)).fit(X, Y)
    Xt, Yt = convention_transform(X, Y, True, True)
    chosen = []
    sse_now = loo_sse_bruteforce(Xt[:, []], Yt, 1.0, True)

    def energy(ids):
        return _energy_by_definition(fs, [fs.feature_names[i] for i in ids])

    while len(chosen) < 5:
        cands = [(loo_sse_bruteforce(Xt[:, chosen + [j]], Yt, 1.0, True), j,
                  1 / 5 + (energy(chosen + [j]) - energy(chosen)) / max_energy)
                 for j in range(X.shape[1])
                 if j not in chosen and energy(chosen + [j]) <= max_energy * (1 + 1e-9)]
        if not cands:
            break
        gains = [(sse_now - sse) / cost for sse, _, cost in cands if sse < sse_now]
        if strategy == "error" or not gains or np.ptp([c for sse, _, c in cands
                                                       if sse < sse_now]) < 1e-12:
            sse_now, j, _ = min(cands)
        else:
            sse_now, j, _ = max((c for c in cands if c[0] < sse_now),
                                key=lambda c: (sse_now - c[0]) / c[2])
        chosen.append(j)
    assert est.selected_.tolist() == chosen
    names = [fs.feature_names[i] for i in chosen]
    assert est.costs_["energy"] == pytest.approx(_energy_by_definition(fs, names))
    steps = cost_kwargs_from_feature_set(fs)["sensor_costs"]
    assert steps["acc"]["energy"] == pytest.approx(3e-6 * 2.5)               # I x V x 1 s
    assert steps["acc@4"]["energy"] == pytest.approx((6e-6 - 3e-6) * 2.5)
    assert steps["acc@8"]["energy"] == pytest.approx((11e-6 - 6e-6) * 2.5)


@pytest.mark.parametrize("damage, message", [
    (lambda a: a.update(feature_rates=a["feature_rates"][:-1]), "feature_rates has 23 entries"),
    (lambda a: a.update(feature_rates=a["feature_rates"] * 3),
     "feature_rates gives 'ax@4.mean' 12.0 Hz"),
    (lambda a: a.update(feature_rates=a["feature_rates"] - 0.5), "must be at most sample_rate"),
    (lambda a: a.update(sensors_json=np.array(str(a["sensors_json"]).replace(
        "[2.0, 4.0, 8.0]", "[8.0, 4.0, 2.0]"))), "must be ascending rates with one energy"),
])
def test_a_damaged_multi_rate_table_is_one_clear_error(damage, message):
    from sensorbudget.trainer.sensing.feature_set import FeatureSet
    arrays = build_feature_set(RecordingSet([generate(4)[0]]),
                               parse_sensor_spec(spec_dict())).to_arrays()
    damage(arrays)
    with pytest.raises(DataError, match=message):
        FeatureSet.from_arrays(arrays)


def test_the_grid_is_centred_on_the_rows_not_on_the_first_one():
    """First row 0.08 period late, the others 0.05 early: every row is within 0.1 period of
    one grid (the others are 0.13 from the first row's grid); the indices follow the rows'
    order and a missing row is a gap. Rows 0.22 apart fit no grid."""
    from sensorbudget.trainer.sensing.rates import align
    from sensorbudget.trainer.sensing.sensors import Sensor
    sensor = Sensor("temp", ("t",), 1.0, 1e-6, 2.0)
    late = np.array([0.08] + [-0.05] * 39)
    grid = np.delete(np.arange(41), 4)
    t = (grid + 0.3 + late) / 2.0
    rec = Recording("r", t, {"t": np.arange(40.0)})
    a = align(rec, sensor)
    assert a.present.tolist() == [True] * 4 + [False] + [True] * 36
    expected = np.full(41, np.nan)
    expected[grid] = np.arange(40.0)
    np.testing.assert_array_equal(a.columns["t"], expected)
    rec.time[0] += 0.09 / 2.0
    with pytest.raises(DataError, match="periods off the sensor's 2 Hz grid"):
        align(rec, sensor)


@pytest.mark.parametrize("unit", ["sensor", "channel"])
@pytest.mark.parametrize("max_energy", [2e-5, 3e-5])
def test_units_of_sensors_with_rates_equal_a_brute_force_greedy(unit, max_energy):
    """``--unit sensor``: one unit per sensor and rate (``acc@4``); ``channel``: per channel
    and rate (``ax@4``). Brute force over those units, priced by definition."""
    from tests.trainer.reference import convention_transform
    from tests.trainer.selection.test_group_math import loo_sse_bruteforce
    from sensorbudget.trainer import GreedyRLS
    from sensorbudget.trainer.sensing.sensor_budget import cost_kwargs_from_feature_set
    fs = build_feature_set(RecordingSet([generate(6, seconds=60, holes=(0, 0))[0]]),
                           parse_sensor_spec(spec_dict()))
    kwargs = cost_kwargs_from_feature_set(fs, unit=unit)
    X, Y = np.asarray(fs.X, dtype=np.float64), fs.Y
    est = GreedyRLS(budget=2, lam=1.0, strategy="error", max_energy=max_energy,
                    **kwargs).fit(X, Y)
    units = {}
    for j, (name, sensor, rate) in enumerate(zip(fs.feature_names, fs.feature_sensors,
                                                 fs.feature_rates)):
        key = (name.split(".")[0] if unit == "channel" else
               sensor + (f"@{rate:g}" if sensor == "acc" else ""))
        units.setdefault(key, []).append(j)
    assert sorted(units) == sorted(set(kwargs["extractors"]))
    Xt, Yt = convention_transform(X, Y, True, True)
    chosen = []
    for _ in range(2):
        cands = [(loo_sse_bruteforce(Xt[:, chosen + ids], Yt, 1.0, True), ids)
                 for ids in units.values() if ids[0] not in chosen
                 and _energy_by_definition(fs, [fs.feature_names[i] for i in chosen + ids])
                 <= max_energy * (1 + 1e-9)]
        if not cands:
            break
        chosen += min(cands)[1]
    assert est.selected_.tolist() == chosen


@pytest.mark.parametrize("seed", range(4))
def test_the_read_rate_is_the_slowest_decimated_rate_every_feature_rate_divides(seed):
    """read_rate against a brute force over every rate plain decimation can make of the
    recorded one (r / k, k whole): the slowest from which each feature rate is again a plain
    decimation."""
    from sensorbudget.trainer.sensing.rates import read_rate

    rng = np.random.default_rng(seed)
    for _ in range(60):
        r = float(rng.choice([8, 10, 12, 30, 64, 100]))
        ks = [k for k in range(1, int(r) + 1) if r % k == 0]
        rates = [r / m for m in rng.choice(ks, size=int(rng.integers(1, 4)))]
        whole = [r / k for k in ks
                 if all(abs((r / k) / q - round((r / k) / q)) < 1e-9 for q in rates)]
        assert read_rate(r, rates) == min(whole), (r, rates)


def test_a_design_is_priced_at_the_rate_the_firmware_reads_it(tmp_path):
    """Features at 5 and 2 Hz of a 10 Hz accelerometer need it read at 10 Hz (no plain
    decimation makes 2 Hz of 5 Hz): examples/basic_motions.rates.sensors.toml, 40 features
    under 1e-5 J (before the read-rate pricing: 5 and 2 Hz features paid at 5 Hz, 8.75e-6 J,
    read at 10 Hz, 1.25e-5 J). Now the rate model.json pays each sensor at is the rate the
    firmware's plan pushes it at, the energy stays within the budget as read, and neither
    train nor info says "a device reads it at"."""
    from tests.paths import EXAMPLES, SHARED

    from sensorbudget.firmware_gen.multirate import make_multirate_plan
    from sensorbudget.trainer.bundle.model import load_bundle
    from sensorbudget.trainer.sensing.rates import read_above_paid

    data = SHARED / "basic_motions" / "BasicMotions_TRAIN.ts"
    if not data.is_file():
        pytest.skip("../shared/data/basic_motions is not here")
    cli = [sys.executable, "-m", "sensorbudget"]
    for args in (["features", data, "--sensors", EXAMPLES / "basic_motions.rates.sensors.toml",
                  "-o", tmp_path / "f.npz"],
                 ["train", tmp_path / "f.npz", "--budget", 40, "--max-energy", 1e-5,
                  "--groups", "recording", "-o", tmp_path / "b"]):
        done = subprocess.run(cli + [str(a) for a in args], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    meta = load_bundle(tmp_path / "b").meta
    pushed = {s.name: s.rate_hz for s in make_multirate_plan(
        load_bundle(tmp_path / "b"), name="m", numeric="float32").sensors}
    assert meta["sensor_rates_hz"] == pushed and read_above_paid(meta) == {}
    energy = sum(s["energy_per_prediction_j"] for s in meta["sensors"]
                 if s["name"] in meta["required_sensors"])
    assert energy == pytest.approx(meta["costs"]["total"]["energy"]) and energy <= 1e-5
    for out in (done.stdout, subprocess.run(cli + ["info", str(tmp_path / "b")],
                                            capture_output=True, text=True).stdout):
        assert "required sensors: " in out and "reads it at" not in out
