"""``--lam-search`` and ``--progress``: what the bundle records, and the progress bar's ETA."""

import io
import json

import numpy as np
import pytest

from sensorbudget.progress import ProgressBar, clock_text
from sensorbudget.trainer.selection.loop import LAMBDA_GRID


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 6))
    y = X[:, 1] - 2 * X[:, 3] + 1.5 * rng.normal(size=40)
    lines = ["a,b,c,d,e,f,y"] + [",".join(f"{v:.6f}" for v in row)
                                  for row in np.column_stack([X, y])]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("args,method,runs", [([], "path", (1, 2)),
                                              (["--lam-search", "grid"], "grid", (31,)),
                                              (["--lam", "0.5"], "fixed", (1,))])
def test_bundle_records_how_lambda_was_chosen(invoke, table, tmp_path, args, method, runs):
    out = tmp_path / "b"
    result = invoke(["train", str(table), "--target", "y", "--budget", "3", *args, "-o",
                     str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "model.json").read_text())
    choice = meta["lam_choice"]
    assert choice["method"] == method and choice["runs"] in runs
    if method != "fixed":
        assert choice["grid"] == list(LAMBDA_GRID) and len(choice["criterion_mse"]) == 31
        best = LAMBDA_GRID[int(np.argmin(choice["criterion_mse"]))]
        assert meta["lam"] == best or method == "path"


def test_bad_lam_search_is_a_usage_error(invoke, table, tmp_path):
    result = invoke(["train", str(table), "--target", "y", "--budget", "2", "--lam-search",
                     "fast", "-o", str(tmp_path / "b")])
    assert result.exit_code == 2 and "'fast' is not one of" in result.output


def test_progress_flag_draws_elapsed_and_eta_on_stderr(invoke, table, tmp_path):
    result = invoke(["train", str(table), "--target", "y", "--budget", "3", "--progress", "-o",
                     str(tmp_path / "b")], catch_exceptions=False)
    assert result.exit_code == 0
    assert "selecting [" in result.stderr and "ETA" in result.stderr
    quiet = invoke(["train", str(table), "--target", "y", "--budget", "3", "-o",
                    str(tmp_path / "c")], catch_exceptions=False)
    assert "ETA" not in quiet.stderr               # stderr is not a terminal: quiet


def test_progress_bar_estimates_time_left_from_the_rate_so_far():
    now = [100.0]
    stream = io.StringIO()
    bar = ProgressBar("work", enabled=True, stream=stream, clock=lambda: now[0],
                      min_interval=0.0)
    bar(0, 4)
    now[0] += 10.0
    bar(1, 4)
    assert "1/4" in stream.getvalue() and "elapsed 0:10 ETA 0:30" in stream.getvalue()
    now[0] += 30.0
    bar(4, 4)
    assert stream.getvalue().endswith("elapsed 0:40 ETA 0:00\n")
    bar(4, 4)                                       # closed: nothing more
    assert stream.getvalue().count("\n") == 1


def test_progress_bar_is_quiet_off_a_terminal_and_rate_limited():
    stream = io.StringIO()
    ProgressBar("x", stream=stream)(1, 2)
    assert stream.getvalue() == ""
    now = [0.0]
    bar = ProgressBar("x", enabled=True, stream=stream, clock=lambda: now[0], min_interval=1.0)
    bar(1, 10)
    bar(2, 10)                                      # within min_interval: not redrawn
    assert stream.getvalue().count("\r") == 1
    bar.close()
    assert stream.getvalue().endswith("\n")
    assert clock_text(3725) == "1:02:05" and clock_text(59.6) == "1:00"
