"""The one cost model (issue 27, item 5): a streaming device reads min(window, hop) samples of
each sensor per prediction, and the greedy budgets, model.json and the device simulation all
use that definition."""

import numpy as np
import pytest

from tests.fixtures import write_sensors_toml, write_stream
from tests.trainer.reference import convention_transform
from tests.trainer.selection.test_group_math import group_greedy_bruteforce
from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.sensing.feature_set import load_feature_set
from sensorbudget.trainer.sensing.sensor_budget import (
    cost_kwargs_from_feature_set,
    per_prediction,
    readings_per_prediction,
)

#: the tiny device of tests/fixtures.py, written out by hand: acc 2e-6 J per reading, no read
#: time; temp 0.001 W x 0.01 s = 1e-5 J and 0.01 s per reading; window 8, hop 4
PER_READING = {"acc": (2e-6, 0.0, 1.0), "temp": (1e-5, 0.01, 0.5)}


@pytest.mark.parametrize("window,hop,readings", [(8, 4, 4), (8, 8, 8), (8, 20, 8), (1, 1, 1),
                                                 (64, 12, 12)])
def test_readings_are_the_new_samples_of_a_sliding_window(window, hop, readings):
    assert readings_per_prediction(window, hop) == readings
    cost = per_prediction({"unit_price": 3.0, "energy_per_reading_j": 0.5,
                           "read_time_s": 0.25}, window, hop)
    assert cost == {"readings": readings, "price": 3.0, "energy": 0.5 * readings,
                    "time": 0.25 * readings}


def _feature_set(tmp_path):
    stream = write_stream(tmp_path / "rec.csv", n=200)
    return load_feature_set(stream, write_sensors_toml(tmp_path / "sensors.toml"))


def _by_definition(fs):
    """{sensor: {price, energy, time}} per prediction, computed here from the numbers above."""
    readings = min(fs.window, fs.hop)
    return {name: {"price": price, "energy": e * readings, "time": t * readings}
            for name, (e, t, price) in PER_READING.items()}


@pytest.mark.parametrize("limit", [{"energy": 5e-5}, {"energy": 3e-5}, {"time": 0.05},
                                   {"energy": 5e-5, "time": 0.03}])
def test_greedy_under_energy_and_time_budgets_equals_bruteforce(tmp_path, limit):
    fs = _feature_set(tmp_path)
    assert (fs.window, fs.hop) == (8, 4)
    kwargs = cost_kwargs_from_feature_set(fs)
    definition = _by_definition(fs)
    assert set(kwargs["sensor_costs"]) == set(definition)
    for name, cost in definition.items():
        assert kwargs["sensor_costs"][name] == pytest.approx(cost)
    est = GreedyRLS(budget=6, lam=1.0, strategy="error",
                    max_energy=limit.get("energy"), max_time=limit.get("time"), **kwargs)
    X, Y = np.asarray(fs.X, dtype=np.float64), fs.Y
    est.fit(X, Y)
    Xt, Yt = convention_transform(X, Y, True, True)
    ext_sensors = {e: s.split("+") for e, s in zip(fs.feature_extractors, fs.feature_sensors)}
    ext_costs = {e: {"price": 0.0, "energy": 0.0, "time": 0.0} for e in fs.feature_extractors}
    selected, _ = group_greedy_bruteforce(Xt, Yt, 1.0, list(fs.feature_extractors),
                                          limits={**limit, "extractors": 6},
                                          ext_costs=ext_costs,
                                          ext_sensors=ext_sensors, sensor_costs=definition,
                                          rule="error", intercept=True)
    assert est.selected_.tolist() == selected
    used = est.required_sensors_
    for kind, value in limit.items():
        total = sum(definition[s][kind] for s in used)
        assert est.costs_[kind] == pytest.approx(total) and total <= value * (1 + 1e-9)


def test_an_energy_budget_between_the_two_old_definitions_keeps_the_thermometer(tmp_path):
    """temp costs 4e-5 J per prediction (4 new readings), not 8e-5 J (a whole window): a
    budget of 5e-5 J fits it with the accelerometer (4.8e-5 J), which the window x reading
    definition refused (issue 27: a sensor dropped whose real cost was within the budget)."""
    fs = _feature_set(tmp_path)
    est = GreedyRLS(budget=None, lam=1.0, strategy="error", max_energy=5e-5,
                    **cost_kwargs_from_feature_set(fs)).fit(np.asarray(fs.X, np.float64), fs.Y)
    assert set(est.required_sensors_) == {"acc", "temp"}
    assert est.costs_["energy"] == pytest.approx(4.8e-5)


def test_bundle_sensors_state_the_same_energy(tmp_path):
    fs = _feature_set(tmp_path)
    _, sensors, _ = fs.bundle_structure()
    definition = _by_definition(fs)
    for s in sensors:
        assert s["readings_per_prediction"] == 4
        assert s["energy_per_prediction_j"] == pytest.approx(definition[s["name"]]["energy"])
