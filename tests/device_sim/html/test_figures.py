"""Figure specifications that need no browser: units, the cost histogram, the criterion names."""

from __future__ import annotations

import pytest

from sensorbudget.device_sim.html.figures import histogram, si
from sensorbudget.device_sim.html.runs import criterion_label


@pytest.mark.parametrize("value, unit, text", [
    (6.285714e-07, "J", "629 nJ"), (900.0, "J", "900 J"), (3060.0, "J", "3.06 kJ"),
    (0.0, "J", "0 J"), (4.76e-06, "s", "4.76 µs"), (None, "J", "-"), (12.0, "", "12"),
])
def test_si_prefixes(value, unit, text):
    assert si(value, unit) == text


def _sim(costs):
    return {"series": {"cost": costs}, "unit": "instructions",
            "total": {"median": 800.0}}


def test_histogram_when_every_prediction_costs_the_same():
    fig = histogram(_sim([800.0] * 50 + [None]), 0)
    assert fig["layout"]["title"]["text"] == "all 50 predictions cost 800 instructions"
    (bar,) = fig["data"]
    assert bar["type"] == "bar" and bar["x"] == ["800"] and bar["y"] == [50]


def test_histogram_of_a_few_distinct_costs_counts_each():
    fig = histogram(_sim([760.0, 800.0, 800.0, 840.0]), 0)
    (bar,) = fig["data"]
    assert bar["x"] == ["760", "800", "840"] and bar["y"] == [1, 2, 1]


def test_histogram_of_many_costs_bins_the_values():
    values = [float(v) for v in range(100)]
    (trace,) = histogram(_sim(values), 0)["data"]
    assert trace["type"] == "histogram" and trace["x"] == values


def test_histogram_without_measurements_says_so():
    fig = histogram({"series": None, "unit": "cycles", "total": {"median": 1200.0}}, 0)
    assert fig["data"] == [] and "no per-prediction measurements" in \
        fig["layout"]["title"]["text"]


@pytest.mark.parametrize("name, folds, text", [
    ("loo", None, "LOO (leave-one-out, closed form)"),
    ("leave-group-out", None, "leave-group-out (closed form, one group at a time)"),
    ("held-out", 5, "held-out folds (5-fold nested cross-validation)"),
])
def test_criteria_are_named(name, folds, text):
    assert criterion_label(name, folds) == text
