"""``sensorbudget evaluate --threshold``: multi-label decisions as a trained bundle makes them."""

import json
from functools import partial

import pytest
from click.testing import CliRunner

from sensorbudget.cli_evaluate import evaluate_command
from tests.sensorbudget.test_cli_evaluate import labels_csv  # noqa: F401 (fixture)


@pytest.fixture
def invoke():
    return partial(CliRunner().invoke, evaluate_command)


def test_threshold_rule_is_reported_and_zero_gives_the_sign(invoke, labels_csv, tmp_path):  # noqa: F811
    base = [str(labels_csv), "--labels", "3", "--budgets", "2", "--folds", "3",
            "--methods", "greedy-joint,mtlasso", "--lam", "1"]
    f1 = invoke(base + ["--report", str(tmp_path / "f1")], catch_exceptions=False)
    assert f1.exit_code == 0, f1.output
    assert "decisions: per-label thresholds (f1) chosen on each training fold" in f1.output
    assert "at 0 for mtlasso" in f1.output and "micro-F1" in f1.output
    assert "per-label thresholds (f1)" in (tmp_path / "f1" / "report.md").read_text()
    zero = invoke(base + ["--threshold", "zero", "--report", str(tmp_path / "zero")],
                  catch_exceptions=False)
    assert zero.exit_code == 0, zero.output
    assert "decisions: a label is on when its score is > 0 (--threshold zero)" in zero.output
    records = json.loads((tmp_path / "zero" / "results.json").read_text())["records"]
    assert {r["decision"] for r in records} == {"zero"}


@pytest.mark.parametrize("args, message", [
    (["--labels", "3", "--threshold", "precision:2"], "precision:P with 0 < P <= 1"),
    (["--target", "a", "--threshold", "f1"], "applies to multi-label targets, not task"),
])
def test_bad_threshold(invoke, labels_csv, args, message):  # noqa: F811
    result = invoke([str(labels_csv), "--folds", "3", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
