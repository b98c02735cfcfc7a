"""A task that does not fit the targets is one Error line naming the column (issue 21 item 7):
continuous targets are not labels, whether --task, sensors.toml or a feature table says so."""


import numpy as np
import pytest

from tests.fixtures import sensors_toml, write_stream


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
