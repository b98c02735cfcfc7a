"""Separate mode (one extractor set per target) equals t independent single-target runs."""

import numpy as np
import pytest

from tests.trainer.selection.test_group_math import make_data
from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier
from sensorbudget.trainer.selection.costs import build_plan

EXTRACTORS = [f"e{i // 2}" for i in range(12)]
SENSORS = {"e0": ["a"], "e1": ["a"], "e2": ["b"], "e3": ["b", "c"], "e4": ["c"], "e5": ["d"]}
SENSOR_COSTS = {"a": 1.0, "b": 2.0, "c": {"price": 1.5, "energy": 1.0}, "d": 0.5}


@pytest.mark.parametrize("lam", [0.6, None])
@pytest.mark.parametrize("costs", [False, True])
def test_separate_equals_independent_single_target_runs(lam, costs):
    X, Y = make_data(26, 12, 3, seed=8)
    kw = dict(budget=3, lam=lam, extractors=EXTRACTORS)
    if costs:
        kw.update(budget=None, extractor_sensors=SENSORS, sensor_costs=SENSOR_COSTS, max_cost=4.0)
    est = GreedyRLS(mode="separate", **kw).fit(X, Y)
    singles = [GreedyRLS(**kw).fit(X, Y[:, q]) for q in range(3)]
    pred = est.predict(X)
    for q, single in enumerate(singles):
        np.testing.assert_array_equal(est.target_selected_[q], single.selected_)
        for mine, ref in zip(est.target_paths_[q], single.path_, strict=True):
            for key in ("added", "added_extractors", "added_sensors", "costs"):
                assert mine[key] == ref[key]
            assert mine["loo_mse"] == pytest.approx(ref["loo_mse"], rel=1e-12)
        np.testing.assert_allclose(pred[:, q], single.predict(X), rtol=1e-10, atol=1e-10)
        assert est.lam_[q] == single.lam_
    union = list(dict.fromkeys(e for s in singles for e in s.selected_extractors_))
    assert sorted(est.selected_extractors_) == sorted(union)
    plan = build_plan(12, extractors=EXTRACTORS, extractor_sensors=SENSORS if costs else None,
                      sensor_costs=SENSOR_COSTS if costs else None)
    index = {n: i for i, n in enumerate(plan.extractor_names)}
    assert est.costs_ == plan.cost_dict(plan.totals_of([index[e] for e in union]))
    for kind in ("extractors", "sensors", "price", "energy"):
        mean = np.mean([s.costs_[kind] for s in singles])
        assert est.costs_mean_per_target_[kind] == pytest.approx(mean)
    last = [s.path_[-1]["loo_mse"] for s in singles]
    assert est.path_[-1]["loo_mse"] == pytest.approx(np.mean(last))


def test_separate_classifier_one_set_per_class():
    X, Y = make_data(40, 12, 1, seed=3)
    y = np.digitize(Y[:, 0], np.quantile(Y[:, 0], [0.33, 0.66]))
    est = GreedyRLSClassifier(budget=2, lam=1.0, mode="separate", extractors=EXTRACTORS).fit(X, y)
    assert len(est.target_selected_) == 3
    assert est.predict(X).shape == (40,)
    assert est.coef_.shape == (len(est.selected_), 3)
