"""The simulation PNGs: linear cost axes in units that read (no log-scale '0 J'), a histogram
that says when every prediction cost the same, ground truth (not the host model) on the
timeline."""

from __future__ import annotations

import json
import math

import matplotlib.pyplot as plt
import pytest

from sensorbudget.device_sim import plots


@pytest.fixture
def figures(monkeypatch):
    seen = []
    monkeypatch.setattr(plt, "close", lambda fig: seen.append(fig))
    return seen


def _report():
    return {"backend": "qemu-m4f", "numeric": "q15", "profile": {"name": "cortex-m4f"},
            "bundle": {"task": "regression", "targets": ["y"]},
            "cost": {"unit": "instructions", "measured": True,
                     "per_extractor": {"a.mean": 300.0, "b.max": 120.0},
                     "model": {"median": 80.0}},
            "sensors": {"per_sensor": {"a": {"energy_j": 540.0}, "b": {"energy_j": 0.002}}},
            "energy": {"energy_per_prediction_j": {"sensors": 540.002, "compute": 6.3e-7}},
            "series": {"outputs": ["y"], "truth": [[1.0, 2.0, None]]}}


class _Rec:
    def __init__(self, cost, scores):
        self.extractors, self.model, self.scores = cost, 0.0, scores
        self.pushes = None                 # an image that does not measure them
        self.match, self.status = True, "delivered"


def test_breakdown_is_linear_with_si_units(figures, tmp_path):
    plots.cost_breakdown(tmp_path / "b.png", _report())
    (fig,) = figures
    left, right = fig.axes
    assert left.get_xscale() == right.get_xscale() == "linear"
    assert [t.get_text().strip() for t in left.texts] == ["540 J", "2 mJ"]
    assert "630 nJ" in right.get_title() and right.get_xlabel().startswith("instructions")
    assert [t.get_text() for t in right.get_yticklabels()] == ["a.mean", "b.max", "model"]


def test_histogram_of_equal_costs_says_so(figures, tmp_path):
    class Result:
        records = (_Rec(800.0, None),) * 7

    plots.cost_histogram(tmp_path / "h.png", _report(), Result())
    (fig,) = figures
    assert "all 7 predictions cost 800 instructions" in fig.axes[0].get_title()


def test_timeline_plots_the_ground_truth(figures, tmp_path):
    class Model:
        def labels(self, S):
            return S[:, 0]

    class Result:
        records = (_Rec(1.0, [1.5]), _Rec(1.0, [2.5]), _Rec(1.0, [0.5]))

    plots.timeline(tmp_path / "t.png", _report(), Result(), Model())
    (fig,) = figures
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert labels == ["ground truth (recordings)", "device (qemu-m4f, q15)"]
    truth = fig.axes[0].get_lines()[0].get_ydata()
    assert json.dumps([float(v) if math.isfinite(v) else None for v in truth]) \
        == "[1.0, 2.0, null]"
