"""A bundle trained with --standardize-targets selects on standardised targets (issue 32); every
surface shows its in-sample LOO errors in the targets' own units, per target and overall: the
HTML report (summary card, design data, the plotted path), info's table, simulate's report.json
and compare. The reference is independent of the closed form: explicit LOO refits (sklearn
Ridge, intercept refitted without the row) of each path prefix on the raw targets."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.fixtures import TINY_SENSORS, write_stream
from tests.trainer.reference import heldout_intercept_bruteforce

from .conftest import invoke
from .test_summary import cards


@pytest.fixture(scope="module")
def scaled(tmp_path_factory):
    """(bundle, feature table, recordings) of a stream with two targets 300x apart in scale,
    trained with --standardize-targets on the table that 'features' wrote."""
    base = tmp_path_factory.mktemp("scaled")
    (base / "sensors.toml").write_text(TINY_SENSORS)
    rec = write_stream(base / "rec" / "stream.csv", n=240, seed=3)
    lines = rec.read_text().splitlines()
    rng = np.random.default_rng(1)
    z = [300 * float(line.split(",")[2]) + 40 * rng.normal() for line in lines[1:]]
    rec.write_text("\n".join([lines[0] + ",z"] + [f"{line},{v:.4f}" for line, v
                                                   in zip(lines[1:], z)]) + "\n")
    invoke("features", rec, "--sensors", base / "sensors.toml", "-o", base / "f.npz")
    invoke("train", base / "f.npz", "--budget", "3", "--lam", "2", "--standardize-targets",
           "-o", base / "bundle")
    return base / "bundle", base / "f.npz", rec


def reference(bundle, table) -> list:
    """Per path step: (overall, per-target) LOO MSE of that prefix's model in target units, by
    one sklearn refit per left-out row on the raw targets (columns scaled by their std)."""
    meta = json.loads((bundle / "model.json").read_text(encoding="utf-8"))
    with np.load(table, allow_pickle=False) as f:
        X, Y, names = f["X"], f["Y"].reshape(len(f["X"]), -1), list(f["feature_names"])
    assert Y.std(0).max() / Y.std(0).min() > 100          # the scales the option is for
    out, cols = [], []
    for entry in meta["path"]:
        cols += [names.index(a) for a in entry["added"]]
        Xs = X[:, cols] / X[:, cols].std(0)
        per = ((heldout_intercept_bruteforce(Xs, Y, None, meta["lam"]) - Y) ** 2).mean(0)
        out.append((float(per.mean()), per))
    return out


def _page_json(page: str, block: str):
    found = re.search(rf'<script type="application/json" id="{block}">(.*?)</script>', page,
                      re.DOTALL)
    return json.loads(found.group(1))


def test_the_report_shows_the_path_in_target_units(scaled, tmp_path):
    bundle, table, _ = scaled
    ref = reference(bundle, table)
    invoke("report", bundle, "-o", tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    designs = [d for d in _page_json(page, "sb-data")["designs"] if d["kind"] == "path"]
    assert len(designs) == len(ref) == 3
    for d, (mse, per) in zip(designs, ref):
        np.testing.assert_allclose(d["error"], mse, rtol=1e-5)
        np.testing.assert_allclose(d["per_target"], per, rtol=1e-5)
    plotted = [t for f in _page_json(page, "sb-figures") for t in f["data"]
               if t.get("legendgroup") == "loo"]
    assert plotted
    for trace in plotted:
        np.testing.assert_allclose(trace["y"], [m for m, _ in ref], rtol=1e-5)
    (card,) = cards(tmp_path / "r.html")
    error = card["rows"]["error"]
    np.testing.assert_allclose(float(error["value"]), ref[-1][0], rtol=1e-5)
    assert "in-sample LOO" in error["kind"] and "targets' units" in error["kind"]


def test_info_simulate_compare_and_the_report_agree(scaled, tmp_path):
    bundle, table, rec = scaled
    ref = reference(bundle, table)
    printed = [line.split() for line in invoke("info", bundle).splitlines()
               if re.match(r"\s+\d+\s", line)]
    np.testing.assert_allclose([float(p[-3]) for p in printed], [m for m, _ in ref],
                               rtol=1e-5)                                  # %.6g
    invoke("simulate", bundle, "--recordings", rec, "--backend", "python", "--report",
           tmp_path / "sim")
    report = json.loads((tmp_path / "sim" / "report.json").read_text(encoding="utf-8"))
    np.testing.assert_allclose(report["loo_mse"], ref[-1][0], rtol=1e-5)
    row = next(line for line in invoke("compare", tmp_path / "sim", bundle).splitlines()
               if line.startswith("LOO MSE"))
    a, b = (float(v) for v in row.split(")")[1].split()[:2])
    np.testing.assert_allclose([a, b], ref[-1][0], rtol=1e-3)              # %.4g


def test_the_nested_cv_beside_it_is_of_the_same_fitting(scaled, tmp_path):
    """The summary's "nested CV of this design" comes from an evaluation that also
    standardised the targets, never from one of the same data without it (another model)."""
    bundle, table, _ = scaled
    for name, extra in (("raw", ()), ("std", ("--standardize-targets",))):
        invoke("evaluate", table, "--budgets", "3", "--folds", "3", "--methods", "greedy-joint",
               "--lam", "2", *extra, "--report", tmp_path / name)
    invoke("report", bundle, tmp_path / "raw", tmp_path / "std", "-o", tmp_path / "r.html")
    (card,) = cards(tmp_path / "r.html")
    std = json.loads((tmp_path / "std" / "results.json").read_text(encoding="utf-8"))
    row = card["rows"]["nested_cv"]
    np.testing.assert_allclose(float(row["value"]), np.mean([r["mse"] for r in std["records"]]),
                               rtol=1e-12)
    assert "std: greedy-joint at budget 3" in row["kind"]
    assert (tmp_path / "r.html").read_text(encoding="utf-8").count('data-key="nested_cv"') == 1
