"""report.json ``series``: per prediction, the device's output and the recordings' ground truth
(what the HTML report plots), checked against the CSV and the report's own accuracy."""

from __future__ import annotations

import csv
import math
import statistics

import pytest

from .conftest import Runs


def _rows(path) -> list:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("which", ["sim", "sim_small"])
def test_series_hold_the_ground_truth_of_the_recordings(runs: Runs, which):
    report = runs.json(getattr(runs, which), "report.json")
    s = report["series"]
    rows = _rows(runs.recordings)
    n = report["predictions"]
    assert s["outputs"] == report["bundle"]["targets"] == ["y"]
    assert len(s["time_s"]) == len(s["device"][0]) == len(s["truth"][0]) == n
    rate = report["bundle"]["sample_rate_hz"]
    for t, y in zip(s["time_s"], s["truth"][0]):
        row = rows[round(t * rate)]
        assert float(row["time"]) == pytest.approx(t)        # the window's last sample
        assert y == float(row["y"])


@pytest.mark.parametrize("which", ["sim", "sim_small"])
def test_series_device_output_gives_the_reported_accuracy(runs: Runs, which):
    report = runs.json(getattr(runs, which), "report.json")
    s = report["series"]
    pairs = [(d, y) for d, y in zip(s["device"][0], s["truth"][0])
             if d is not None and y is not None]
    rmse = math.sqrt(sum((d - y) ** 2 for d, y in pairs) / len(pairs))
    assert len(pairs) == report["accuracy"]["device"]["n"]
    assert rmse == pytest.approx(report["accuracy"]["device"]["rmse"], rel=1e-6)


def test_series_costs_are_the_measured_ones(runs: Runs):
    """Each prediction's cost in the series is what it paid (pushes + window pass + model):
    the report's total statistics are those of the predictions after each segment's first."""
    measured = runs.json(runs.sim, "report.json")
    s, c = measured["series"], measured["cost"]
    costs = [v for v, first in zip(s["cost"], s["first"]) if v is not None and not first]
    assert len(costs) == c["total"]["n"] and 0 < len(costs) < len(s["cost"])
    assert statistics.median(costs) == pytest.approx(c["total"]["median"])
    assert min(costs) == pytest.approx(measured["cost"]["total"]["min"])
    assert max(costs) == pytest.approx(measured["cost"]["total"]["max"])
    estimated = runs.json(runs.sim_small, "report.json")
    assert not estimated["cost"]["measured"]
