"""Costs and budgets: shared sensors paid once, hard budgets, cost-ratio greedy, clear errors."""

import numpy as np
import pytest

from tests.trainer.selection.test_group_math import (
    check_against_bruteforce,
    make_data,
    totals_by_definition,
)
from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier, TrainerError
from sensorbudget.trainer.selection.costs import build_plan
from sensorbudget.trainer.sensing.sensor_budget import cost_kwargs

EXTRACTORS = [f"acc.e{i // 2}" for i in range(6)] + ["gyro.e0", "gyro.e0", "gyro.e1", "mic.e0",
                                                     "mic.e0", "mic.e0"]
SENSORS = {"acc.e0": ["acc"], "acc.e1": ["acc"], "acc.e2": ["acc"], "gyro.e0": ["gyro"],
           "gyro.e1": ["gyro", "acc"], "mic.e0": ["mic"]}
SENSOR_COSTS = {"acc": {"price": 2.0, "energy": 1.0, "time": 0.5},
                "gyro": {"price": 5.0, "energy": 4.0, "time": 0.1},
                "mic": {"price": 1.0, "energy": 0.2, "time": 2.0}}
EXT_COSTS = {e: {"price": 0.1 * i, "energy": 0.05, "time": 0.0}
             for i, e in enumerate(dict.fromkeys(EXTRACTORS))}


def fit(budget=None, **kwargs):
    X, Y = make_data(24, len(EXTRACTORS), 2, seed=21)
    # Signal in every sensor, strongest in the dearest (gyro), so the two rules disagree.
    Y += X[:, [6, 0, 9, 4]] @ [[1.5, 1.0], [0.8, 0.6], [0.9, -0.6], [0.4, 0.5]]
    params = dict(lam=0.8, extractors=EXTRACTORS, extractor_sensors=SENSORS,
                  sensor_costs=SENSOR_COSTS, extractor_costs=EXT_COSTS)
    params.update(kwargs)
    return GreedyRLS(budget=budget, **params).fit(X, Y), X, Y


def test_shared_sensor_is_paid_once_and_path_costs_are_totals():
    est, _, _ = fit(budget=None, strategy="error")
    for entry in est.path_:
        chosen = set(e for step in est.path_[:entry["step"]] for e in step["added_extractors"])
        expect = totals_by_definition(chosen, EXT_COSTS, SENSORS, SENSOR_COSTS)
        assert entry["costs"] == pytest.approx(expect)
    assert est.path_[-1]["costs"]["sensors"] == 3
    assert est.path_[-1]["costs"]["price"] == pytest.approx(8.0 + sum(
        c["price"] for c in EXT_COSTS.values()))
    assert sorted(est.required_sensors_) == ["acc", "gyro", "mic"]


BUDGETS = [dict(max_cost=4.0), dict(max_sensors=1), dict(max_energy=2.5, max_time=1.0),
           dict(budget=2, max_cost=9.0), dict(max_cost=7.5, max_energy=5.5, max_sensors=2)]


@pytest.mark.parametrize("limits", BUDGETS)
@pytest.mark.parametrize("strategy", ["error", "cost-ratio", "auto"])
def test_budgets_are_never_exceeded(limits, strategy):
    limits = dict(limits)
    est, _, _ = fit(strategy=strategy, **limits)
    names = {"budget": "extractors", "max_sensors": "sensors", "max_cost": "price",
             "max_energy": "energy", "max_time": "time"}
    for entry in est.path_:
        for param, value in limits.items():
            assert entry["costs"][names[param]] <= value * (1 + 1e-12)


@pytest.mark.parametrize("limits", BUDGETS)
@pytest.mark.parametrize("rule", ["error", "cost-ratio"])
def test_budgeted_greedy_equals_bruteforce(limits, rule):
    est, X, Y = fit(strategy=rule, **limits)
    names = {"budget": "extractors", "max_sensors": "sensors", "max_cost": "price",
             "max_energy": "energy", "max_time": "time"}
    check_against_bruteforce(est, X, Y, 0.8, EXTRACTORS,
                             limits={names[k]: v for k, v in limits.items()},
                             ext_costs=EXT_COSTS, ext_sensors=SENSORS,
                             sensor_costs=SENSOR_COSTS, rule=rule)


def test_auto_keeps_the_better_of_the_two_rules():
    for limits in BUDGETS:
        auto, _, _ = fit(strategy="auto", **limits)
        err, _, _ = fit(strategy="error", **limits)
        ratio, _, _ = fit(strategy="cost-ratio", **limits)
        best = min(err.path_[-1]["loo_mse"], ratio.path_[-1]["loo_mse"])
        assert auto.path_[-1]["loo_mse"] == pytest.approx(best, rel=1e-12)
        assert auto.strategy_ in ("error", "cost-ratio")


def test_cost_ratio_prefers_cheap_informative_extractors():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = 0.6 * X[:, 0] + X[:, 1] + 0.1 * rng.normal(size=60)
    kw = dict(lam=1.0, extractors=["cheap", "dear"], extractor_costs={"cheap": 1, "dear": 50},
              max_cost=60, budget=None)
    assert GreedyRLS(strategy="cost-ratio", **kw).fit(X, y).selected_extractors_[0] == "cheap"
    assert GreedyRLS(strategy="error", **kw).fit(X, y).selected_extractors_[0] == "dear"


def test_infeasible_budget_names_the_cheapest_option():
    with pytest.raises(TrainerError, match=r"max_cost=1\.2.*cheapest option is extractor "
                                           r"'mic.e0' \(sensors: mic\).*max_cost to at least 1\.5"):
        fit(max_cost=1.2)
    with pytest.raises(TrainerError, match="max_sensors=0"):
        fit(max_sensors=0)


@pytest.mark.parametrize("params,match", [
    (dict(extractor_costs={"acc.e0": -1.0}), "must be a finite number >= 0"),
    (dict(extractor_costs={"acc.e0": 1.0}), "extractor_costs has no entry for extractor"),
    (dict(extractor_costs=dict(EXT_COSTS, bogus=1.0)), "'bogus', which is not an extractor"),
    (dict(extractor_costs={e: {"price": 1, "watts": 2} for e in EXT_COSTS}),
     "unknown cost kind 'watts'"),
    (dict(sensor_costs={"acc": 1.0, "gyro": 1.0}), "sensor_costs has no entry for sensor 'mic'"),
    (dict(sensor_costs=dict(SENSOR_COSTS, lidar=3.0)), "'lidar', which no extractor uses"),
    (dict(sensor_costs={"acc": float("nan"), "gyro": 1, "mic": 1}), "finite number >= 0"),
    (dict(extractor_sensors={"nope": ["acc"]}), "'nope', which is not an extractor"),
    (dict(extractor_sensors=None), "sensor_costs is given but extractor_sensors is not"),
    (dict(max_cost=-1.0), r"max_cost=-1.0 must be a finite number >= 0"),
    (dict(extractors=EXTRACTORS[:-1]), "extractors has 11 entries; X has 12"),
    (dict(extractors=["a"] * 11 + [()]), r"extractors\[11\]=\(\) must be a name"),
    (dict(budget=7), r"budget=7 is outside 1..6 \(n_extractors=6\)"),
    (dict(mode="both"), "mode='both' must be one of"),
    (dict(strategy="greedy"), "strategy='greedy' must be one of"),
])
def test_bad_cost_parameters_are_clear_errors(params, match):
    with pytest.raises(TrainerError, match=match):
        fit(**params)


def test_default_costs_unit_price_without_sensors_and_zero_with():
    plan = build_plan(3, extractors=["a", "a", "b"])
    assert plan.extractor_cost[:, 0].tolist() == [1.0, 1.0]
    plan = build_plan(3, extractors=["a", "a", "b"], extractor_sensors={"a": ["s"]},
                      sensor_costs={"s": 2.0})
    assert plan.extractor_cost[:, 0].tolist() == [0.0, 0.0]
    assert plan.totals_of([0, 1]).tolist() == [2, 1, 2.0, 0.0, 0.0, 0.0, 0.0]  # ram, flash


def test_sensor_units_from_sensor_description():
    sensors = [{"name": "acc", "unit_price": 2.0, "energy_per_reading_j": 1e-3,
                "sample_rate_hz": 10},
               {"name": "gyro", "unit_price": 6.0, "energy_per_reading_j": 5e-3,
                "sample_rate_hz": 10, "power_w": 0.05, "read_time_s": 0.1}]
    names = ["acc_x.mean", "acc_x.std", "gyro_x.mean", "fuse.corr"]
    feature_sensors = ["acc", "acc", "gyro", "acc+gyro"]
    kw = cost_kwargs(names, feature_sensors, sensors, window=20, unit="sensor")
    assert kw["extractors"] == ["acc", "acc", "gyro", ("acc", "gyro")]
    assert kw["sensor_costs"]["gyro"] == pytest.approx({"price": 6.0, "energy": 0.1,
                                                         "time": 2.0})
    kw = cost_kwargs(names, feature_sensors, sensors, window=20, unit="channel")
    assert kw["extractors"] == ["acc_x", "acc_x", "gyro_x", "fuse"]
    assert kw["extractor_sensors"]["fuse"] == ["acc", "gyro"]
    X, Y = make_data(30, 4, 1, seed=1)
    est = GreedyRLS(budget=None, lam=1.0, max_cost=3.0,
                    **cost_kwargs(names, feature_sensors, sensors, 20)).fit(X, Y)
    assert est.required_sensors_ == ["acc"] and est.costs_["price"] == 2.0


def test_classifier_with_costs():
    X, Y = make_data(40, len(EXTRACTORS), 1, seed=4)
    y = (Y[:, 0] > np.median(Y[:, 0])).astype(int)
    est = GreedyRLSClassifier(budget=None, lam=1.0, extractors=EXTRACTORS,
                              extractor_sensors=SENSORS, sensor_costs=SENSOR_COSTS,
                              max_cost=5.0).fit(X, y)
    assert est.costs_["price"] <= 5.0
    assert est.predict(X).shape == (40,)


def test_bundle_path_carries_costs_and_sensors(tmp_path):
    from sensorbudget.trainer.bundle.model import bundle_contents, load_bundle, save_bundle
    from sensorbudget.trainer.plots import pareto_png

    est, X, _ = fit(max_cost=7.5, max_energy=5.5)
    features = [f"f{i}" for i in range(X.shape[1])]
    meta, arrays = bundle_contents(est, X, features, ["y0", "y1"], task="regression")
    save_bundle(tmp_path / "b", meta, arrays)
    meta = load_bundle(tmp_path / "b").meta
    assert meta["required_extractors"] == est.selected_extractors_
    assert meta["required_sensors"] == est.required_sensors_
    for entry, mine in zip(meta["path"], est.path_, strict=True):
        assert entry["added"] == [features[i] for i in mine["added"]]
        assert entry["cost"] == entry["costs"]["price"] == mine["costs"]["price"]
        assert len(entry["loo_mse_per_target"]) == 2
    assert meta["costs"]["total"] == est.costs_
    assert set(meta["costs"]["sensors"]) == set(est.required_sensors_)
    assert meta["costs"]["budgets"]["max_cost"] == 7.5
    png = pareto_png(meta["path"])
    assert png.startswith(b"\x89PNG")
    pareto_png(meta["path"], tmp_path / "p.png", cost_kind="energy")
    assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")


def test_cli_cost_options_build_estimator_kwargs():
    import click

    from sensorbudget.cli_costs import cost_options
    from sensorbudget.trainer.errors import TrainerError
    from sensorbudget.trainer.training import COST_BUDGETS, cost_kwargs

    @click.command()
    @cost_options
    def cmd(**kwargs):
        pass

    def kwargs_of(params):
        return cost_kwargs(None, **{k: params[k] for k in (*COST_BUDGETS, "mode", "strategy",
                                                            "unit")})

    ctx = cmd.make_context("cmd", ["--max-cost", "3", "--mode", "separate",
                                   "--strategy", "error"])
    kw = kwargs_of(ctx.params)
    assert kw == {"max_sensors": None, "max_cost": 3.0, "max_energy": None, "max_time": None,
                  "mode": "separate", "strategy": "error"}
    ctx = cmd.make_context("cmd", ["--max-sensors", "2"])
    with pytest.raises(TrainerError, match="--max-sensors needs sensor information"):
        kwargs_of(ctx.params)
    with pytest.raises(click.BadParameter):
        cmd.make_context("cmd", ["--max-cost", "-1"])


def test_bundle_with_sensor_units_lists_device_extractors():
    from sensorbudget.trainer.bundle.model import bundle_contents

    sensors = [{"name": "acc", "unit_price": 1.0, "energy_per_reading_j": 1e-6},
               {"name": "gyro", "unit_price": 3.0, "energy_per_reading_j": 1e-3}]
    names = ["acc_x.mean", "acc_x.std", "gyro_x.mean", "gyro_x.std"]
    kw = cost_kwargs(names, ["acc", "acc", "gyro", "gyro"], sensors, window=10, unit="sensor")
    X, Y = make_data(30, 4, 1, seed=6)
    est = GreedyRLS(budget=1, lam=1.0, **kw).fit(X, Y)
    device = [{"name": f, "features": [f], "sensors": [f.split("_")[0]], "cost": 0.0,
               "params": {}} for f in names]
    meta, _ = bundle_contents(est, X, names, ["y"], task="regression", extractors=device)
    assert meta["selection_units"] == est.selected_extractors_
    assert meta["required_extractors"] == [names[i] for i in est.selected_]
    assert meta["extractors"] == device


def test_subnormal_budget_is_a_clear_error_without_warnings():
    import warnings

    X = np.random.default_rng(0).normal(size=(20, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no overflow warning on the way
        with pytest.raises(TrainerError, match="max_cost"):
            GreedyRLS(budget=None, lam=1.0, max_cost=5e-324).fit(X, X[:, 0])
