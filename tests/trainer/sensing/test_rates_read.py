"""A sensor with ``rates_hz`` is priced at the rate the device reads it, inside the greedy.

Features at 5 and 2 Hz of a 10 Hz sensor need it read at 10 Hz (no plain decimation makes 2 Hz
of 5 Hz), so a design holding both pays the 10 Hz cost. Checked against a brute-force greedy
(every candidate refitted, LOO by n refits) whose cost is written from the definition: each
sensor run at the slowest listed rate that every chosen rate of it divides (a loop over the
listed rates), a set no listed rate can make left out. The same brute force with the old
pricing (each sensor at its highest chosen rate) shows designs that exceed their budget as
read."""

import math

import numpy as np
import pytest

from sensorbudget.trainer.sensing.feature_set import build_feature_set
from sensorbudget.trainer.sensing.recordings import Recording, RecordingSet
from sensorbudget.trainer.sensing.sensors import parse_sensor_spec

#: recorded rate -> (accelerometer rates, currents (A); gyroscope energy per reading (J))
LADDERS = {10: ([2, 5, 10], [2.5e-6, 3.5e-6, 5e-6], [1e-6, 1.2e-6, 1.5e-6]),
           12: ([3, 4, 12], [2e-6, 2.4e-6, 4e-6], [1e-6, 0.9e-6, 0.6e-6]),
           24: ([4, 6, 8], [2e-6, 2.6e-6, 3e-6], [1e-6, 0.8e-6, 0.7e-6])}


def spec_dict(recorded: int) -> dict:
    rates, currents, per_reading = LADDERS[recorded]
    return {
        "targets": ["y"],
        "window": {"length_s": 2.0, "hop_s": 1.0},
        "sensors": [
            {"name": "acc", "channels": ["ax", "ay"], "unit_price": 1.0,
             "sample_rate_hz": recorded, "rates_hz": rates, "current_a_by_rate": currents,
             "supply_v": 2.5},
            {"name": "gyro", "channels": ["g"], "unit_price": 2.0, "sample_rate_hz": recorded,
             "rates_hz": rates, "energy_per_reading_j_by_rate": per_reading}],
        "features": [{"channels": ["acc", "gyro"], "extractors": ["mean", "std", "max"]}]}


def recording(recorded: int, seed: int, seconds: int = 40) -> Recording:
    """Every channel at every row (``recorded`` Hz); a target near the end of each second that
    mixes the channels' means over that second with noise."""
    rng = np.random.default_rng(seed)
    n = seconds * recorded
    time = np.arange(n) / recorded
    columns = {c: np.cumsum(rng.normal(size=n)).round(3) for c in ("ax", "ay", "g")}
    y = np.full(n, np.nan)
    for j in range(seconds):
        rows = slice(j * recorded, (j + 1) * recorded)
        y[(j + 1) * recorded - 1] = round(float(
            columns["ax"][rows][::2].mean() - 0.5 * columns["g"][rows].std()
            + rng.normal()), 3)
    columns["y"] = y
    return Recording("r.csv", time, columns)


def feature_set(recorded: int, seed: int):
    return build_feature_set(RecordingSet([recording(recorded, seed)]),
                             parse_sensor_spec(spec_dict(recorded)))


def energy_by_definition(fs, ids, *, as_read: bool = True) -> float:
    """J per prediction of the features ``ids``: each sensor once, at the slowest listed rate
    q with q / p whole for every chosen rate p of it (``as_read``; inf when no listed rate
    is), or at the highest chosen rate (the pricing before the read rate: ``as_read=False``);
    q x min(window_s, hop_s) readings at that rate's energy per reading."""
    sensors = {s["name"]: s for s in fs.sensors}
    seconds = min(fs.window, fs.hop) / fs.sample_rate
    chosen = {}
    for i in ids:
        chosen.setdefault(fs.feature_sensors[i], set()).add(fs.feature_rates[i])
    total = 0.0
    for name, rates in chosen.items():
        entry = sensors[name]
        listed = dict(zip(entry["rates_hz"], entry["energy_per_reading_j_by_rate"]))
        if as_read:
            fits = [q for q in sorted(listed)
                    if all(abs(q / p - round(q / p)) < 1e-9 for p in rates)]
            if not fits:
                return math.inf
            rate = fits[0]
        else:
            rate = max(rates)
        total += listed[rate] * round(rate * seconds)
    return total


def greedy_by_definition(fs, budget, max_energy, *, as_read=True, units=None,
                         strategy="error"):
    """The greedy by definition over ``units`` (lists of feature ids; default one per
    feature): each step refits every unit whose set stays within ``max_energy`` (None: any
    finite energy) by LOO with n refits; ``cost-ratio`` divides the error decrease by the
    budget fractions the unit uses (1 / budget + added energy / max_energy)."""
    from tests.trainer.reference import convention_transform
    from tests.trainer.selection.test_group_math import loo_sse_bruteforce
    X = np.asarray(fs.X, dtype=np.float64)
    Xt, Yt = convention_transform(X, fs.Y, True, True)
    units = units or [[j] for j in range(X.shape[1])]
    chosen = []
    sse_now = loo_sse_bruteforce(Xt[:, []], Yt, 1.0, True)

    def energy(ids):
        return energy_by_definition(fs, ids, as_read=as_read)

    def fits(ids):
        e = energy(ids)
        return math.isfinite(e) and (max_energy is None or e <= max_energy * (1 + 1e-9))

    for _ in range(budget):
        cands = [(loo_sse_bruteforce(Xt[:, chosen + ids], Yt, 1.0, True), k, ids,
                  1 / budget + (energy(chosen + ids) - energy(chosen)) / (max_energy or 1))
                 for k, ids in enumerate(units) if ids[0] not in chosen and fits(chosen + ids)]
        if not cands:
            break
        better = [c for c in cands if c[0] < sse_now]
        if strategy == "error" or not better or np.ptp([c[3] for c in better]) < 1e-12:
            sse_now, _, ids, _ = min(cands, key=lambda c: c[:2])
        else:
            sse_now, _, ids, _ = max(better, key=lambda c: ((sse_now - c[0]) / c[3], -c[1]))
        chosen += ids
    return chosen


def _fit(fs, budget, max_energy, unit="feature", strategy="error"):
    from sensorbudget.trainer import GreedyRLS
    from sensorbudget.trainer.sensing.sensor_budget import cost_kwargs_from_feature_set
    return GreedyRLS(budget=budget, lam=1.0, strategy=strategy, max_energy=max_energy,
                     **cost_kwargs_from_feature_set(fs, unit=unit)).fit(
        np.asarray(fs.X, dtype=np.float64), fs.Y)


CASES = [(10, 0, 1.3e-5), (10, 1, 1.3e-5), (10, 2, 2.2e-5), (10, 3, 3e-5), (10, 4, None),
         (12, 0, 1.4e-5), (12, 1, 2.2e-5), (12, 2, None), (24, 0, 1.9e-5), (24, 1, None)]


@pytest.mark.parametrize("recorded, seed, max_energy", CASES)
def test_the_greedy_prices_each_sensor_at_its_read_rate(recorded, seed, max_energy):
    """Seeded non-chain candidate lists (2, 5, 10 of 10 Hz; 3, 4, 12 of 12 Hz; 4, 6, 8 of
    24 Hz, where 4 + 6 and 6 + 8 Hz need 12 and 24 Hz, neither listed): the picks, the energy
    total of every step and of the design equal the brute force's read-rate pricing."""
    fs = feature_set(recorded, seed)
    est = _fit(fs, 6, max_energy)
    chosen = greedy_by_definition(fs, 6, max_energy)
    assert est.selected_.tolist() == chosen
    picked = []
    for step in est.path_:
        picked += [int(j) for j in step["added"]]
        assert step["costs"]["energy"] == pytest.approx(energy_by_definition(fs, picked))
    assert est.costs_["energy"] == pytest.approx(energy_by_definition(fs, chosen))
    assert math.isfinite(est.costs_["energy"])


@pytest.mark.parametrize("recorded, seed, max_energy", [(10, 0, 1.3e-5), (12, 1, 2.2e-5)])
def test_cost_ratio_prices_each_sensor_at_its_read_rate(recorded, seed, max_energy):
    fs = feature_set(recorded, seed)
    est = _fit(fs, 6, max_energy, strategy="cost-ratio")
    assert est.selected_.tolist() == greedy_by_definition(fs, 6, max_energy,
                                                          strategy="cost-ratio")


def test_the_old_pricing_exceeded_the_budget_as_read_and_the_new_one_does_not():
    """Over the seeded cases, the greedy priced by each sensor's highest chosen rate (the plan
    before) picks designs whose read-rate energy exceeds the budget; GreedyRLS's never do."""
    over = []
    for recorded, seed, max_energy in CASES:
        if max_energy is None:
            continue
        fs = feature_set(recorded, seed)
        old = greedy_by_definition(fs, 6, max_energy, as_read=False)
        if energy_by_definition(fs, old) > max_energy * (1 + 1e-9):
            over.append((recorded, seed))
        new = _fit(fs, 6, max_energy).selected_.tolist()
        assert energy_by_definition(fs, new) <= max_energy * (1 + 1e-9)
    assert len(over) >= 2, over


@pytest.mark.parametrize("unit", ["sensor", "channel"])
@pytest.mark.parametrize("recorded, seed, max_energy", [(10, 5, 1.3e-5), (10, 6, 2.2e-5),
                                                        (12, 5, 1.4e-5), (24, 5, None)])
def test_units_at_rates_are_priced_at_the_read_rate(unit, recorded, seed, max_energy):
    """``--unit sensor`` (one unit per sensor and rate) and ``channel`` (per channel and
    rate): the brute force over those units, priced as read."""
    fs = feature_set(recorded, seed)
    est = _fit(fs, 4, max_energy, unit=unit)
    units = {}
    for j, (name, sensor, rate) in enumerate(zip(fs.feature_names, fs.feature_sensors,
                                                 fs.feature_rates)):
        units.setdefault(name.split(".")[0] if unit == "channel" else f"{sensor}@{rate:g}",
                         []).append(j)
    assert est.selected_.tolist() == greedy_by_definition(fs, 4, max_energy,
                                                          units=list(units.values()))
    assert est.costs_["energy"] == pytest.approx(energy_by_definition(fs, est.selected_))


@pytest.mark.parametrize("seed", range(3))
def test_paid_rate_equals_a_loop_over_the_listed_rates(seed):
    """``rates.paid_rate`` (the bundle's ``sensor_rates_hz``) against the definition: the
    slowest listed rate every chosen rate divides (the fastest listed when none does)."""
    from sensorbudget.trainer.sensing.rates import paid_rate

    rng = np.random.default_rng(seed)
    for _ in range(80):
        r = int(rng.choice([8, 10, 12, 24, 30, 60]))
        divisors = [r // k for k in range(1, r + 1) if r % k == 0]
        listed = sorted(rng.choice(divisors, size=int(rng.integers(1, 5)), replace=False))
        rates = rng.choice(listed, size=int(rng.integers(1, 4)))
        fits = [q for q in listed if all(q % p == 0 for p in rates)]
        assert paid_rate(r, listed, rates) == (fits[0] if fits else max(listed))


def test_the_rate_keys_survive_clone_and_get_params():
    """The rates reach the plan through ``sensor_costs`` (scikit-learn's estimator contract:
    a clone has equal parameters and makes the same picks at the same read-rate energy)."""
    from sklearn.base import clone

    fs = feature_set(10, 1)
    est = _fit(fs, 6, 1.3e-5)
    again = clone(est)
    assert again.get_params() == est.get_params()
    assert est.sensor_costs["acc@5"]["rate_hz"] == 5.0 and est.sensor_costs["acc"][
        "sample_rate_hz"] == 10.0
    again.fit(np.asarray(fs.X, dtype=np.float64), fs.Y)
    assert again.selected_.tolist() == est.selected_.tolist()
    assert again.costs_ == est.costs_
