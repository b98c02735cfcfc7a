"""Every number in an evaluation's files says what it is (issue 32): summary.csv and
wilcoxon.csv carry a kind column naming nested CV's held-out outer folds, results.json names
it under ``scores``; summary.csv's means and standard deviations equal those recomputed from
results.json's per-fold records with numpy."""

import csv
import io
import json

import numpy as np

from sensorbudget.trainer.evaluation.protocol import EvalData, evaluate
from sensorbudget.trainer.evaluation.report import write_report


def _data(n=40, d=7, t=2, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = X[:, :3] @ rng.normal(size=(3, t)) + 0.3 * rng.normal(size=(n, t))
    return EvalData(X, Y, "regression", [f"y{j}" for j in range(t)])


def _rows(path):
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_report_files_name_their_numbers_nested_cv(tmp_path):
    result = evaluate(_data(), ["greedy-joint", "greedy-separate"], "1,2", folds=3)
    out = write_report(result, tmp_path / "rep")
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert "nested CV" in saved["scores"] and "held-out" in saved["scores"]
    summary = _rows(out / "summary.csv")
    assert len(summary) == 2 * 2 * len(saved["measures"])
    for row in summary:
        assert row["kind"] == saved["scores"]
        values = np.array([r[row["measure"]] for r in saved["records"]
                           if r["method"] == row["method"] and str(r["budget"]) == row["budget"]],
                          dtype=float)
        assert values.size == 3                                   # one per outer fold
        np.testing.assert_allclose(float(row["mean"]), values.mean(), rtol=1e-12)
        np.testing.assert_allclose(float(row["std"]), values.std(ddof=1), rtol=1e-12)
    tests = _rows(out / "wilcoxon.csv")
    assert tests and all(t["kind"].startswith(saved["scores"]) for t in tests)
