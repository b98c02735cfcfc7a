"""The Pareto PNG: the error axis names the bundle's criterion, point labels do not pile up."""

from __future__ import annotations

import pytest

from sensorbudget.trainer.plots import _clusters, pareto_png


def test_points_on_one_spot_share_one_label():
    points = [(15, 4400), (29, 3350), (65.5, 1800), (65.5, 1795), (65.5, 1790), (40, 2900)]
    assert _clusters(points) == [(0, 0), (1, 1), (2, 4), (5, 5)]


@pytest.mark.parametrize("criterion, label", [(None, "LOO MSE"), ("loo", "LOO MSE"),
                                              ("leave-group-out", "leave-group-out MSE")])
def test_the_error_axis_names_the_criterion(monkeypatch, criterion, label):
    from matplotlib.figure import Figure

    seen = []
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: seen.append(self))
    path = [{"step": k + 1, "added": [f"f{k}"], "cost": float(k), "loo_mse": 1.0 / (k + 1)}
            for k in range(4)]
    pareto_png(path, criterion=criterion)
    (fig,) = seen
    ax = fig.axes[0]
    assert ax.get_ylabel() == label
    assert [t.get_text() for t in ax.texts] == ["1", "2", "3", "4"]
    assert "f3" in fig.texts[0].get_text()       # what each step added, beside the plot
