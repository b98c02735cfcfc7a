"""Transforms as a cost level (sensor -> transform -> extractor, issue 18): a transform shared by
several extractors is paid once, when the first of them is chosen; greedy picks under budgets
equal a brute-force greedy whose totals are computed by definition (every candidate refit)."""

import pytest

from tests.trainer.selection import test_group_math as gm
from sensorbudget.trainer import GreedyRLS, TrainerError
from sensorbudget.trainer.selection.costs import build_plan

#: features -> extractors; extractors -> sensors and transforms (jerk of ax / ay, high-pass gx)
EXTRACTORS = ["ax.mean", "ax.jerk.rms", "ax.jerk.rms", "ax.jerk.p50", "ay.mean", "ay.jerk.rms",
              "gx.hp.std", "gx.hp.rms", "gx.mean", "acc.jerk.mag", "acc.jerk.mag"]
NEEDS = {"ax.mean": ["acc"], "ax.jerk.rms": ["acc", "ax.jerk"], "ax.jerk.p50": ["acc", "ax.jerk"],
         "ay.mean": ["acc"], "ay.jerk.rms": ["acc", "ay.jerk"], "gx.hp.std": ["gyro", "gx.hp"],
         "gx.hp.rms": ["gyro", "gx.hp"], "gx.mean": ["gyro"],
         "acc.jerk.mag": ["acc", "ax.jerk", "ay.jerk"]}
RESOURCES = {"acc": {"price": 1.0, "energy": 1.0, "time": 0.2},
             "gyro": {"price": 3.0, "energy": 2.0, "time": 0.1},
             "ax.jerk": {"energy": 0.9, "time": 0.6, "level": "transform"},
             "ay.jerk": {"energy": 0.7, "time": 0.5, "level": "transform"},
             "gx.hp": {"price": 0.0, "energy": 1.5, "time": 0.3, "level": "transform"}}
EXT_COSTS = {e: {"price": 0.0, "energy": 0.1 * (i % 3), "time": 0.05}
             for i, e in enumerate(dict.fromkeys(EXTRACTORS))}


def totals_with_transforms(chosen, ext_costs, ext_sensors, sensor_costs):
    """Totals by definition: every resource of the union paid once; only sensors counted."""
    used = set().union(*[set(ext_sensors.get(e, ())) for e in chosen]) if chosen else set()
    out = {"extractors": len(chosen),
           "sensors": sum(1 for r in used if sensor_costs[r].get("level") != "transform")}
    for k in gm.KINDS:
        out[k] = (sum(ext_costs[e][k] for e in chosen)
                  + sum(sensor_costs[r].get(k, 0.0) for r in used))
    return out


def fit(**kw):
    X, Y = gm.make_data(26, len(EXTRACTORS), 2, seed=7)
    Y += X[:, [1, 6, 9, 3]] @ [[1.2, 0.4], [0.9, -0.8], [0.7, 0.6], [0.5, 0.5]]
    kw.setdefault("budget", None)
    est = GreedyRLS(lam=0.6, extractors=EXTRACTORS, extractor_sensors=NEEDS,
                    sensor_costs=RESOURCES, extractor_costs=EXT_COSTS, **kw).fit(X, Y)
    return est, X, Y


LIMITS = [dict(max_energy=5.5), dict(max_time=1.8, max_sensors=1),
          dict(max_energy=5.0, max_time=2.0), dict(budget=3, max_energy=6.0),
          dict(max_cost=1.0, max_energy=3.2)]
NAMES = {"budget": "extractors", "max_sensors": "sensors", "max_cost": "price",
         "max_energy": "energy", "max_time": "time"}


@pytest.mark.parametrize("limits", LIMITS)
@pytest.mark.parametrize("rule", ["error", "cost-ratio"])
def test_greedy_with_shared_transforms_equals_bruteforce(monkeypatch, limits, rule):
    monkeypatch.setattr(gm, "totals_by_definition", totals_with_transforms)
    est, X, Y = fit(strategy=rule, **limits)
    assert len(est.path_) >= 2
    gm.check_against_bruteforce(est, X, Y, 0.6, EXTRACTORS,
                                limits={NAMES[k]: v for k, v in limits.items()},
                                ext_costs=EXT_COSTS, ext_sensors=NEEDS, sensor_costs=RESOURCES,
                                rule=rule)


def test_a_transform_is_paid_once_and_is_not_a_sensor():
    est, _, _ = fit(strategy="error")
    for entry in est.path_:
        chosen = {e for step in est.path_[:entry["step"]] for e in step["added_extractors"]}
        want = totals_with_transforms(chosen, EXT_COSTS, NEEDS, RESOURCES)
        assert entry["costs"] == pytest.approx(want)
    assert est.path_[-1]["costs"]["sensors"] == 2
    assert sorted(est.required_sensors_) == ["acc", "gyro"]
    plan = est.cost_plan_
    assert plan.transform_names == ("ax.jerk", "ay.jerk", "gx.hp")
    assert plan.sensor_names == ("acc", "gyro")
    ids = [plan.extractor_names.index(e) for e in ("ax.jerk.rms", "ax.jerk.p50")]
    # two extractors of one transform: its cost once
    both = plan.totals_of(ids)
    assert both[3] == pytest.approx(1.0 + 0.9 + EXT_COSTS["ax.jerk.rms"]["energy"]
                                    + EXT_COSTS["ax.jerk.p50"]["energy"])
    assert plan.transforms_of(ids) == ["ax.jerk"]


def test_second_extractor_of_a_computed_transform_adds_only_its_own_cost():
    plan = build_plan(len(EXTRACTORS), extractors=EXTRACTORS, extractor_sensors=NEEDS,
                      sensor_costs=RESOURCES, extractor_costs=EXT_COSTS)
    state = plan.start()
    moves = plan.moves(state)
    k = moves.extractors.index((plan.extractor_names.index("ax.jerk.rms"),))
    assert moves.added[k, 3] == pytest.approx(1.0 + 0.9 + EXT_COSTS["ax.jerk.rms"]["energy"])
    plan.take(state, moves.extractors[k], moves.features(k))
    moves = plan.moves(state)
    k = moves.extractors.index((plan.extractor_names.index("ax.jerk.p50"),))
    assert moves.added[k, 3] == pytest.approx(EXT_COSTS["ax.jerk.p50"]["energy"])
    k = moves.extractors.index((plan.extractor_names.index("acc.jerk.mag"),))
    assert moves.added[k, 3] == pytest.approx(0.7 + EXT_COSTS["acc.jerk.mag"]["energy"])
    assert moves.added[k, 1] == 0                          # no new sensor


def test_bad_level_is_a_clear_error():
    with pytest.raises(TrainerError, match=r"sensor_costs\['gx.hp'\]: level='filter' must be "
                                           r"one of \('sensor', 'transform'\)"):
        build_plan(len(EXTRACTORS), extractors=EXTRACTORS, extractor_sensors=NEEDS,
                   sensor_costs={**RESOURCES, "gx.hp": {"energy": 1.0, "level": "filter"}})


def test_uniform_costs_see_the_transforms():
    plan = build_plan(len(EXTRACTORS), extractors=EXTRACTORS, extractor_sensors=NEEDS,
                      sensor_costs={r: {**c, "price": 0.0, "energy": 0.0, "time": 0.0}
                                    for r, c in RESOURCES.items()} | {
                          "gx.hp": {"energy": 2.0, "level": "transform"}},
                      extractor_costs={e: 0.0 for e in EXT_COSTS}, max_energy=10.0)
    assert not plan.uniform()
