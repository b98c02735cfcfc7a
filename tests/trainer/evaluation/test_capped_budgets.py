"""``COUNT@KIND:VALUE`` budgets of evaluate: at most COUNT units under a cost limit (train's
``--budget COUNT --max-KIND VALUE``). Checked against GreedyRLS with both limits (what train
runs) and with the cost limit alone, on a multi-rate feature set."""

import numpy as np
import pytest

import sensorbudget as sb
from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.errors import TrainerError
from sensorbudget.trainer.evaluation.methods import Budget, GreedyJoint, Setup, parse_budgets
from sensorbudget.trainer.sensing.feature_set import build_feature_set
from sensorbudget.trainer.sensing.recordings import RecordingSet
from sensorbudget.trainer.sensing.sensor_budget import cost_kwargs_from_feature_set
from sensorbudget.trainer.sensing.sensors import parse_sensor_spec
from tests.trainer.sensing.test_rates import generate, spec_dict


def test_parse_capped_budgets():
    capped, plain = parse_budgets("3@energy:2e-5, price:2.5")
    assert capped == Budget("energy", 2e-5, "3@energy:2e-5", cap=3)
    assert capped.count(10) is None and plain.cap is None
    for bad in ("0@energy:1", "x@energy:1", "3@4", "3@energy:", "3@2@energy:1", "3@volts:1",
                "1.5@price:2"):
        with pytest.raises(TrainerError, match="must be COUNT@KIND:VALUE"):
            parse_budgets(bad)


@pytest.fixture(scope="module")
def rated():
    fs = build_feature_set(RecordingSet([generate(5, seconds=60, holes=(0, 0))[0]]),
                           parse_sensor_spec(spec_dict()))
    return fs, np.asarray(fs.X, dtype=np.float64), np.asarray(fs.Y, dtype=np.float64)


@pytest.mark.parametrize("cap, max_energy", [(1, 3e-5), (2, 3e-5), (3, 5e-5)])
def test_capped_budget_is_trains_budget_and_limit(rated, cap, max_energy):
    """The capped budget selects what ``train --budget CAP --max-energy E`` selects (GreedyRLS
    with both limits); the cap, not the energy, ends it (the uncapped run goes further)."""
    fs, X, Y = rated
    kwargs = cost_kwargs_from_feature_set(fs)
    setup = Setup(task="regression", lam=1.0, cost_kwargs=dict(
        kwargs, feature_names=list(fs.feature_names)))
    both = GreedyRLS(budget=cap, lam=1.0, max_energy=max_energy, **kwargs).fit(X, Y)
    alone = GreedyRLS(budget=None, lam=1.0, max_energy=max_energy, **kwargs).fit(X, Y)
    assert len(both.selected_) == cap < len(alone.selected_)
    capped, uncapped = GreedyJoint().fit_predict(
        X, Y, parse_budgets(f"{cap}@energy:{max_energy},energy:{max_energy}"), setup)
    assert sorted(capped.features) == sorted(both.selected_.tolist())
    assert sorted(uncapped.features) == sorted(alone.selected_.tolist())


def test_evaluate_takes_methods_as_the_command_does(rated):
    fs, _, _ = rated
    data = sb.Dataset.from_feature_set(fs)
    one = sb.evaluate(data, budgets="2@energy:3e-5", folds=3, lam=1.0, methods="greedy-joint")
    two = sb.evaluate(data, budgets="2@energy:3e-5", folds=3, lam=1.0, methods=["greedy-joint"])
    assert one.records == two.records and {r["method"] for r in one.records} == {"greedy-joint"}
    assert all(r["n_features"] <= 2 and r["cost_energy"] <= 3e-5 * (1 + 1e-9)
               for r in one.records)
