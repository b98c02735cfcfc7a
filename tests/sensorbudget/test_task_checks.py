"""A task that does not fit the targets is one Error line naming the column (issue 21 item 7):
continuous targets are not labels, whether --task, sensors.toml or a feature table says so."""


import numpy as np
import pytest

from tests.fixtures import sensors_toml, write_sensors_toml, write_stream


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=40)
    labels = (y > 0).astype(int)
    rows = ["a,b,c,y,l"] + [f"{p:.5f},{q:.5f},{r:.5f},{t:.5f},{u}"
                            for (p, q, r), t, u in zip(X, y, labels)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    return tmp_path / "t.csv"


@pytest.mark.parametrize("task, message", [
    ("multilabel", "task multilabel needs 0/1 labels; target column 'y' holds"),
    ("multiclass", "task multiclass needs class values; target column 'y' holds 40 distinct"),
])
def test_continuous_targets_are_not_labels(invoke, table, tmp_path, task, message):
    result = invoke(["train", str(table), "--target", "y", "--budget", "1", "--lam", "1",
                     "--task", task, "-o", str(tmp_path / "B")])
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "B").exists()
    ok = invoke(["train", str(table), "--target", "l", "--budget", "1", "--lam", "1",
                 "--task", task, "-o", str(tmp_path / "L")])
    assert ok.exit_code == 0, ok.output


def test_sensors_toml_task_is_checked_too(invoke, tmp_path):
    stream = write_stream(tmp_path / "rec" / "s.csv")
    toml = tmp_path / "s.toml"
    toml.write_text('task = "multilabel"\n' + sensors_toml())
    result = invoke(["train", str(stream), "--sensors", str(toml), "--budget", "1", "--lam",
                     "1", "-o", str(tmp_path / "B")])
    assert result.exit_code == 2 and "target column 'y' holds" in result.output


def test_duplicate_names_in_an_npz_and_overflowing_targets(invoke, tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 3))
    np.savez(tmp_path / "dup.npz", X=X, Y=X[:, :1], feature_names=np.array(["f", "f", "g"]),
             target_names=np.array(["y"]))
    result = invoke(["train", str(tmp_path / "dup.npz"), "--budget", "1", "-o",
                     str(tmp_path / "B")])
    assert result.exit_code == 2 and "duplicate column name 'f' in 'dup.npz'" in result.output
    rows = ["a,b,y"] + [f"{p:.17g},{q:.17g},{1e156 * p:.17g}" for p, q in X[:, :2]]
    (tmp_path / "huge.csv").write_text("\n".join(rows) + "\n")
    result = invoke(["train", str(tmp_path / "huge.csv"), "--target", "y", "--budget", "1",
                     "-o", str(tmp_path / "B")])
    assert result.exit_code == 2 and "target values reach" in result.output
    assert "overflow float64" in result.output and not (tmp_path / "B").exists()


def test_a_utf16_table_is_named(invoke, tmp_path):
    """UTF-16 without a byte-order mark gave "unknown target 'y'; columns a ,  b"."""
    (tmp_path / "t.csv").write_bytes("a,b,y\n1,2,3\n4,5,6\n7,8,9\n".encode("utf-16-le"))
    result = invoke(["train", str(tmp_path / "t.csv"), "--target", "y", "--budget", "1",
                     "-o", str(tmp_path / "B")])
    assert result.exit_code == 2 and "is not UTF-8 text" in result.output


def test_unreadable_inputs_of_the_issue_give_one_line(invoke, tmp_path):
    """A CSV field over csv's 131072-character limit, a .npy saved as .npz, TOML and
    model.json nested too deeply: each one Error line, exit 2 (all were tracebacks)."""
    (tmp_path / "long.csv").write_text("a,b,y\n1," + "x" * 140_000 + ",2\n3,4,5\n")
    np.save(tmp_path / "arr.npy", np.zeros(3))
    (tmp_path / "arr.npy").rename(tmp_path / "arr.npz")
    cases = [(["train", str(tmp_path / "long.csv"), "--target", "y", "--budget", "1"],
              "field larger than field limit"),
             (["train", str(tmp_path / "arr.npz"), "--budget", "1"], "is not a readable NPZ")]
    stream = write_stream(tmp_path / "rec" / "s.csv")
    (tmp_path / "deep.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n" + sensors_toml())
    cases.append((["train", str(stream), "--sensors", str(tmp_path / "deep.toml"), "--budget",
                   "1"], "is not valid TOML"))
    for argv, message in cases:
        result = invoke([*argv, "-o", str(tmp_path / "B")])
        assert result.exit_code == 2 and message in result.output, (argv, result.output)
        assert result.output.count("Error:") == 1 and not (tmp_path / "B").exists()
    bundle = tmp_path / "B2"
    assert invoke(["train", str(stream), "--sensors", str(write_sensors_toml(tmp_path / "s.toml")),
                   "--budget", "1", "--lam", "1", "-o", str(bundle)]).exit_code == 0
    text = (bundle / "model.json").read_text()
    (bundle / "model.json").write_text(text[:-2] + ', "deep": ' + "[" * 100000 + "]" * 100000
                                       + "}\n")
    result = invoke(["info", str(bundle)])
    assert result.exit_code == 2 and "is not valid JSON" in result.output


def _write(path, X, Y, names):
    rows = [",".join([f"x{i}" for i in range(X.shape[1])] + names)]
    rows += [",".join(f"{v:.10g}" for v in row) for row in np.column_stack([X, Y])]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_degenerate_training_input_of_issue_16(invoke, tmp_path):
    """A constant target and a budget beyond a fold: one Error line naming the value and the
    limit, exit 2, no bundle; lambda at the grid's end: one Warning line suggesting --lam."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 4))
    y = X[:, 0] - 2 * X[:, 1]
    table = _write(tmp_path / "t.csv", X, np.column_stack([y, np.zeros(12)]), ["y", "alarm"])
    cases = [(["--target", "y", "--target", "alarm", "--budget", "2"],
              "target 'alarm' has a single value (0) on every row"),
             (["--target", "y", "--budget", "4"],
              "budget=4 features is more than the smallest training fold supports: 4 training "
              "rows, at most 3 features after the intercept"),
             (["--target", "alarm", "--budget", "1", "--task", "multilabel"],
              "target 'alarm' has a single value")]
    wide = _write(tmp_path / "w.csv", rng.normal(size=(5, 6)), np.arange(5.0), ["y"])
    for argv, message in cases:
        data = wide if "budget=4" in message else table
        result = invoke(["train", str(data), *argv, "-o", str(tmp_path / "B")])
        assert result.exit_code == 2 and message in result.output, (argv, result.output)
        assert result.output.count("Error:") == 1 and "Traceback" not in result.output
        assert not (tmp_path / "B").exists()
    result = invoke(["train", str(table), "--target", "y", "--budget", "2", "--no-standardize",
                     "-o", str(tmp_path / "B")])
    assert result.exit_code == 0, result.output
    assert result.output.count("Warning: lambda=3.05e-05 (2^-15) chosen at the lower end") == 1
    assert "give --lam" in result.output
    quiet = invoke(["train", str(table), "--target", "y", "--budget", "2", "--lam", "1",
                    "-o", str(tmp_path / "C")])
    assert quiet.exit_code == 0 and "Warning" not in quiet.output
