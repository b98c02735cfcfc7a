"""--groups COLUMN|recording: option parsing, group ids aligned with the loaded rows, errors."""

from functools import partial
from types import SimpleNamespace

import click
import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget._errors import CliError, handle_errors
from sensorbudget.cli_groups import groups_ignore, groups_option, resolve_groups
from trainer import GreedyRLS
from trainer.data import load_table


@click.command()
@click.argument("data")
@click.option("--ignore", multiple=True)
@click.option("--drop-missing", is_flag=True)
@groups_option
@handle_errors
def mini_train(data, ignore, drop_missing, groups):
    """The wiring ``train`` uses: ignore the column, load, resolve, fit with groups."""
    table = load_table(data, targets=["y"], ignore=groups_ignore(groups, ignore, data),
                       drop_missing=drop_missing)
    ids = resolve_groups(groups, table, data)
    est = GreedyRLS(budget=2, lam=1.0).fit(table.X, table.Y, groups=ids)
    click.echo(f"{est.criterion_} {est.n_groups_} {len(table.X)} {table.feature_names}")


@pytest.fixture
def invoke():
    return partial(CliRunner().invoke, mini_train, catch_exceptions=False)


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=12)
    subjects = np.repeat(["s1", "s2", "s3", "s4"], 3)
    lines = ["a,subject,b,c,y"] + [f"{r[0]:.5f},{s},{r[1]:.5f},{r[2]:.5f},{v:.5f}"
                                   for r, s, v in zip(X, subjects, y)]
    lines[5] = lines[5].replace(lines[5].split(",")[2], "")          # a missing value, row 5
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_option_parses_and_documents_itself():
    ctx = mini_train.make_context("mini", ["x.csv", "--groups", "subject"])
    assert ctx.params["groups"] == "subject"
    assert "COLUMN|recording" in mini_train.get_help(ctx)


def test_column_groups_end_to_end(invoke, table):
    result = invoke([str(table), "--groups", "subject", "--drop-missing"])
    assert result.exit_code == 0, result.output
    assert result.output.split()[:3] == ["leave-group-out", "4", "11"]
    assert "subject" not in result.output.split(" ", 3)[3]


def test_dropped_rows_are_dropped_from_the_groups(table):
    t = load_table(table, targets=["y"], ignore=("subject",), drop_missing=True)
    ids = resolve_groups("subject", t, table)
    expected = np.repeat(["s1", "s2", "s3", "s4"], 3)
    np.testing.assert_array_equal(ids, np.delete(expected, 3))


def test_no_groups_and_recordings():
    assert resolve_groups(None, None, "x.csv") is None
    fs = SimpleNamespace(X=np.zeros((4, 2)), feature_names=["a", "b"], target_names=["y"],
                         groups=np.array([0, 0, 1, 1]), window_start=np.zeros(4))
    np.testing.assert_array_equal(resolve_groups("recording", fs, "recs"), [0, 0, 1, 1])
    d = {"fs": fs, "X": fs.X, "features": ["a", "b"], "targets": ["y"]}
    np.testing.assert_array_equal(resolve_groups("recording", d, "recs"), [0, 0, 1, 1])
    assert groups_ignore("recording", ("x",)) == ("x",)
    assert groups_ignore("subject", ("x",), "t.csv") == ("x", "subject")
    assert groups_ignore("subject", (), "t.npz") == ()


def test_npz_array_groups(tmp_path):
    path = tmp_path / "t.npz"
    X = np.arange(12.0).reshape(6, 2)
    np.savez(path, X=X, Y=X[:, :1], day=np.array([1, 1, 2, 2, 3, 3]))
    t = load_table(path)
    np.testing.assert_array_equal(resolve_groups("day", t, path), [1, 1, 2, 2, 3, 3])
    with pytest.raises(CliError, match="not an array"):
        resolve_groups("subject", t, path)


@pytest.mark.parametrize("value,match", [("recording", "needs recordings"),
                                         ("nope", "not a column"),
                                         ("a", "feature or target")])
def test_errors(table, value, match):
    t = load_table(table, targets=["y"], ignore=("subject",), drop_missing=True)
    with pytest.raises(CliError, match=match):
        resolve_groups(value, t, table)


def test_usage_error_exit_code(table):
    result = CliRunner().invoke(mini_train, [str(table), "--groups", "recording",
                                             "--ignore", "subject", "--drop-missing"])
    assert result.exit_code == 2 and "needs recordings" in result.output
