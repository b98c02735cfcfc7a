"""The report of classification runs (issue 32): a multi-label evaluation alone opens on its
best design by nested-CV Hamming loss (an evaluation without MSE had no designs and the page
opened on none), plotted on its own axis, never beside a bundle's MSE; a multi-label bundle's
summary shows the mean F1 over labels as train prints it (thresholds re-chosen without each
row, and the tuned one marked optimistic) and, from an evaluation of the same data, the
nested-CV macro-F1 of its design. References: the results.json records and train's output."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from .conftest import invoke
from .test_summary import cards
from .test_target_units import _page_json


@pytest.fixture(scope="module")
def multilabel(tmp_path_factory):
    base = tmp_path_factory.mktemp("multilabel")
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 8))
    Y = (X[:, :3] @ rng.normal(size=(3, 3)) + 0.7 * rng.normal(size=(60, 3)) > 0).astype(int)
    lines = [",".join([f"f{j}" for j in range(8)] + ["la", "lb", "lc"])]
    lines += [",".join([f"{v:.6f}" for v in x] + [str(v) for v in y]) for x, y in zip(X, Y)]
    (base / "data.csv").write_text("\n".join(lines) + "\n")
    printed = invoke("train", base / "data.csv", "--labels", "3", "--budget", "3", "--lam", "1",
                     "-o", base / "bundle")
    invoke("evaluate", base / "data.csv", "--labels", "3", "--budgets", "1,3", "--folds", "3",
           "--methods", "greedy-joint,greedy-separate", "--lam", "1", "--report", base / "ev")
    return base, printed


def test_a_multilabel_evaluation_opens_on_its_best_hamming_loss(multilabel, tmp_path):
    base, _ = multilabel
    results = json.loads((base / "ev" / "results.json").read_text(encoding="utf-8"))
    assert "mse" not in results["measures"]
    means = {}
    for r in results["records"]:
        means.setdefault((r["method"], str(r["budget"])), []).append(r["hamming_loss"])
    means = {k: float(np.mean(v)) for k, v in means.items()}
    best = min(means, key=lambda k: (means[k], list(means).index(k)))
    invoke("report", base / "ev", "-o", tmp_path / "r.html")
    (card,) = cards(tmp_path / "r.html")
    assert card["title"] == f"ev: {best[0]} at budget {best[1]}"
    assert card["rows"]["error"]["text"].startswith(f"{means[best]:.4g}")
    np.testing.assert_allclose(float(card["rows"]["error"]["value"]), means[best], rtol=1e-12)
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    (fig,) = [f for f in _page_json(page, "sb-figures") if f.get("pareto")]
    assert "Hamming loss" in json.dumps(fig["layout"])
    plotted = sorted(y for t in fig["data"] if t.get("legendgroup") == "cv" for y in t["y"])
    np.testing.assert_allclose(plotted, sorted(means.values()), rtol=1e-12)


def test_a_multilabel_bundle_shows_its_f1_as_train_prints_it(multilabel, tmp_path):
    base, printed = multilabel
    honest, tuned = (float(v) for v in re.search(
        r"mean LOO F1 over labels: ([0-9.]+) with thresholds re-chosen without each row, "
        r"([0-9.]+) with thresholds tuned", printed).groups())
    invoke("report", base / "bundle", base / "ev", "-o", tmp_path / "r.html")
    (card,) = cards(tmp_path / "r.html")
    f1 = card["rows"]["f1"]
    assert abs(float(f1["value"]) - honest) <= 5e-4
    assert f1["text"] == (f"{honest:.3f} with each row's thresholds re-chosen without it; "
                          f"{tuned:.3f} with the thresholds tuned on the same scores "
                          f"(optimistic)")
    assert "in-sample" in f1["kind"]
    results = json.loads((base / "ev" / "results.json").read_text(encoding="utf-8"))
    cv = [r["macro_f1"] for r in results["records"]
          if r["method"] == "greedy-joint" and str(r["budget"]) == "3"]
    row = card["rows"]["nested_cv_macro_f1"]
    np.testing.assert_allclose(float(row["value"]), np.mean(cv), rtol=1e-12)
    assert "nested CV" in row["kind"]
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    figures = [f for f in _page_json(page, "sb-figures") if f.get("pareto")]
    for f in figures:                               # MSE and Hamming loss never share an axis
        groups = {t.get("legendgroup") for t in f["data"]} - {None}
        assert groups in ({"loo"}, {"cv"}), groups
