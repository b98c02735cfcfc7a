"""``sensorbudget evaluate``: happy paths, report files, cost budgets and bad inputs."""

import json
from functools import partial

import click
import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.cli_evaluate import evaluate_command
from tests.fixtures import ACCEL, sensor_spec, sensors_toml, write_stream
from tests.paths import SHARED

SPEC = sensors_toml(sensor_spec(
    [{**ACCEL, "channels": ["ax"]},
     {"name": "gyro", "channels": ["gx"], "unit_price": 3.0, "energy_per_reading_j": 1e-5}],
    [{"channels": ["accel", "gyro"], "extractors": ["mean", "std"]}],
    window=4, hop=2, rate_hz=10))


@pytest.fixture
def invoke():
    return partial(CliRunner().invoke, evaluate_command)


@pytest.fixture
def labels_csv(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(45, 6))
    Y = (X[:, :3] + 0.5 * rng.normal(size=(45, 3)) > 0).astype(int)
    lines = [",".join([f"f{i}" for i in range(6)] + ["a", "b", "c"])]
    lines += [",".join([f"{v:.6f}" for v in x] + [str(v) for v in y]) for x, y in zip(X, Y)]
    path = tmp_path / "ml.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_evaluate_prints_and_writes_the_report(invoke, labels_csv, tmp_path):
    report = tmp_path / "report"
    result = invoke([str(labels_csv), "--labels", "3", "--budgets", "2,4", "--folds", "3",
                     "--methods", "greedy-joint,greedy-separate,mtlasso", "--report",
                     str(report)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "macro-AUC" in result.output and "wilcoxon macro_auc" in result.output
    assert f"wrote {report}" in result.output
    text = (report / "report.md").read_text()
    cells = [c.strip() for line in result.output.splitlines() for c in line.split("  ")
             if "±" in c]
    assert len(cells) == 9 * 2 * 3
    assert all(cell in text for cell in cells)
    for name in ("curves.png", "summary.csv", "wilcoxon.csv", "results.json"):
        assert (report / name).stat().st_size > 0
    records = json.loads((report / "results.json").read_text())["records"]
    assert {r["method"] for r in records} == {"greedy-joint", "greedy-separate", "mtlasso"}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_single_fold_with_cache_and_label_options(invoke, labels_csv, tmp_path):
    args = [str(labels_csv), "--labels", "3", "--budgets", "low,high", "--folds", "3",
            "--methods", "greedy-joint", "--fold", "1", "--cache", str(tmp_path / "c"),
            "--compress-labels", "1.0", "--label-subset", "2"]
    first = invoke(args, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    assert len(list((tmp_path / "c").rglob("fold1-greedy-joint.json"))) == 1
    again = invoke(args, catch_exceptions=False)
    assert again.exit_code == 0 and again.output == first.output


def test_cost_budgets_with_sensors(invoke, tmp_path):
    write_stream(tmp_path / "rec.csv", rate_hz=10, channels=("ax", "gx"))
    (tmp_path / "sensors.toml").write_text(SPEC)
    result = invoke([str(tmp_path / "rec.csv"), "--sensors", str(tmp_path / "sensors.toml"),
                     "--budgets", "price:1,price:4,1", "--folds", "3", "--methods",
                     "greedy-joint", "--unit", "sensor", "--report", str(tmp_path / "r")],
                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "MSE" in result.output and "price:1" in result.output
    records = json.loads((tmp_path / "r" / "results.json").read_text())["records"]
    assert all(r["cost_price"] <= 1.0 for r in records if r["budget"] == "price:1")
    assert all(r["cost_sensors"] == 1 for r in records if r["budget"] == "1")
    column = invoke([str(tmp_path / "rec.csv"), "--sensors", str(tmp_path / "sensors.toml"),
                     "--groups", "gx", "--folds", "3"])
    assert column.exit_code == 2 and "grouped with --groups recording" in column.output


@pytest.mark.parametrize("args, message", [
    (["--methods", "ridge"], "'ridge' is not a method"),
    (["--budgets", "1.5"], "must be a positive integer count"),
    (["--budgets", "price:3"], "cost budgets need sensor information"),
    (["--fold", "5"], "--fold 5 is outside 0..2"),
    (["--methods", "mtlasso", "--budgets", "9"], None),
    (["--unit", "sensor"], "needs sensor information"),
    (["--standardize-targets"], "applies to regression targets, not task multilabel"),
])
def test_bad_inputs(invoke, labels_csv, args, message):
    result = invoke([str(labels_csv), "--labels", "3", "--folds", "3", *args])
    if message is None:                                        # a budget above d is clipped
        assert result.exit_code == 0, result.output
        return
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_option_parsing_without_running():
    with pytest.raises(click.BadParameter):
        evaluate_command.make_context("evaluate", [__file__, "--methods", "greedy-joint,x"])
    ctx = evaluate_command.make_context("evaluate", [__file__, "--budgets", "3,low",
                                                     "--methods", "mtlasso,mtlasso"])
    assert [b.label for b in ctx.params["budgets"]] == ["3", "low"]
    assert ctx.params["methods"] == ["mtlasso"]


@pytest.mark.skipif(not (SHARED / "emotions" / "emotions.arff").is_file(),
                    reason="shared emotions data not available")
def test_emotions_two_folds(invoke):
    result = invoke([str(SHARED / "emotions" / "emotions.arff"), "--xml",
                     str(SHARED / "emotions" / "emotions.xml"), "--budgets", "3", "--folds", "2",
                     "--methods", "greedy-joint"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    auc = [line for line in result.output.splitlines() if line.startswith("macro-AUC")][0]
    assert 0.7 < float(auc.split()[2]) < 0.9


@pytest.fixture
def ranking_csv(tmp_path):
    rng = np.random.default_rng(3)
    qid = np.repeat(np.arange(8), 6)
    X = rng.normal(size=(qid.size, 5))
    rel = X[:, 0] - X[:, 2] + 0.2 * rng.normal(size=qid.size) + qid          # query offsets
    lines = ["f0,f1,f2,f3,f4,rel,query"]
    lines += [",".join([f"{v:.6f}" for v in x] + [f"{r:.6f}", f"q{q}"])
              for x, r, q in zip(X, rel, qid)]
    path = tmp_path / "rank.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_ranking_task(invoke, ranking_csv, tmp_path):
    result = invoke([str(ranking_csv), "--target", "rel", "--groups", "query", "--task",
                     "ranking", "--budgets", "1,2", "--folds", "4", "--report",
                     str(tmp_path / "r")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "pairwise_error" in result.output and "greedy-rank" in result.output
    records = json.loads((tmp_path / "r" / "results.json").read_text())["records"]
    rank = [r["pairwise_error"] for r in records
            if r["method"] == "greedy-rank" and r["budget"] == "2"]
    assert len(rank) == 4 and max(rank) < 0.2              # the two relevant features found


@pytest.mark.parametrize("args, message", [
    (["--task", "ranking"], "--task ranking needs --groups COLUMN"),
    (["--groups", "query", "--methods", "greedy-rank"], "needs task 'ranking'"),
    (["--groups", "recording", "--task", "ranking"], "--groups recording needs recordings"),
    (["--groups", "nope", "--task", "ranking"], "nope"),
])
def test_ranking_bad_inputs(invoke, ranking_csv, args, message):
    result = invoke([str(ranking_csv), "--target", "rel", "--folds", "3", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def _wide_csv(tmp_path, n=40, d=44):
    """About as many features as rows (the case where the old default 'high' failed)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(n, d))
    Y = np.column_stack([X[:, 0] - X[:, 1], X[:, 2] + 0.1 * rng.normal(size=n)])
    lines = [",".join([f"f{i}" for i in range(d)] + ["y0", "y1"])]
    lines += [",".join(f"{v:.6f}" for v in row) for row in np.column_stack([X, Y])]
    path = tmp_path / "wide.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_default_budgets_and_methods_run_on_a_wide_table(invoke, tmp_path):
    from sklearn.model_selection import KFold

    path = _wide_csv(tmp_path)
    args = [str(path), "--target", "y0", "--target", "y1", "--folds", "4", "--lam", "1"]
    old = invoke(args + ["--budgets", "low,med,high"])           # the former default
    assert old.exit_code == 2 and "exceeds the 30 rows" in old.output
    result = invoke(args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    # independent reference: sklearn's folds, then 1, 2, 4, ... up to min(d, rows // 2)
    rows = min(len(tr) for tr, _ in KFold(4, shuffle=True, random_state=0).split(np.zeros(40)))
    cap, expected = min(44, rows // 2), []
    while not expected or expected[-1] < cap:
        expected.append(min(2 ** len(expected), cap))
    line = next(ln for ln in result.output.splitlines() if ln.startswith("evaluating "))
    assert f"budgets {','.join(map(str, expected))} (default" in line
    assert "methods greedy-joint,greedy-separate,mtlasso (default)" in line
    assert f"half the {rows} rows" in line
    used = [ln.split() for ln in result.output.splitlines() if ln.startswith("features used")]
    assert [(int(u[2]), float(u[3])) for u in used] == [(k, float(k)) for k in expected]


def test_default_methods_leave_mtlasso_out_for_cost_budgets(invoke, tmp_path):
    write_stream(tmp_path / "rec.csv", rate_hz=10, channels=("ax", "gx"))
    (tmp_path / "sensors.toml").write_text(SPEC)
    result = invoke([str(tmp_path / "rec.csv"), "--sensors", str(tmp_path / "sensors.toml"),
                     "--budgets", "price:4", "--folds", "3"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.output.splitlines() if ln.startswith("evaluating "))
    assert "methods greedy-joint,greedy-separate (default)" in line
    assert "mtlasso left out of the default methods: it does not support cost budget " \
           "'price:4'" in line
    explicit = invoke([str(tmp_path / "rec.csv"), "--sensors", str(tmp_path / "sensors.toml"),
                       "--budgets", "price:4", "--folds", "3", "--methods", "mtlasso"])
    assert explicit.exit_code == 2 and "mtlasso supports count/fraction budgets only" \
        in explicit.output


def test_standardize_targets_evaluate_equals_explicit_fold_fits(invoke, tmp_path):
    """evaluate --standardize-targets: every fold's greedy-joint MSE equals a
    GreedyRLS(standardize_targets=True) fitted on that training fold (sklearn's KFold) and
    scored on its test rows in target units; the scale warning appears only without it."""
    from sklearn.model_selection import KFold

    rng = np.random.default_rng(8)
    X = rng.normal(size=(60, 6))
    Y = np.column_stack([X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=60),
                         400 * (X[:, 2] - X[:, 3] + 0.3 * rng.normal(size=60))])
    lines = [",".join([f"f{i}" for i in range(6)] + ["small", "big"])]
    lines += [",".join(f"{v:.6f}" for v in row) for row in np.column_stack([X, Y])]
    path = tmp_path / "s.csv"
    path.write_text("\n".join(lines) + "\n")
    X, Y = np.round(X, 6), np.round(Y, 6)
    args = [str(path), "--target", "small", "--target", "big", "--budgets", "2", "--folds",
            "3", "--lam", "1", "--methods", "greedy-joint"]
    plain = invoke(args)
    assert plain.exit_code == 0 and plain.output.count("Warning: target standard") == 1
    result = invoke(args + ["--standardize-targets", "--report", str(tmp_path / "r")],
                    catch_exceptions=False)
    assert result.exit_code == 0 and "Warning" not in result.output
    records = json.loads((tmp_path / "r" / "results.json").read_text())["records"]
    from sensorbudget.trainer import GreedyRLS

    for i, (train, test) in enumerate(KFold(3, shuffle=True, random_state=0).split(X)):
        est = GreedyRLS(budget=2, lam=1.0, standardize_targets=True).fit(X[train], Y[train])
        mse = np.mean((est.predict(X[test]) - Y[test]) ** 2, axis=0).mean()
        (rec,) = [r for r in records if r["fold"] == i]
        assert rec["mse"] == pytest.approx(mse, rel=1e-9)
