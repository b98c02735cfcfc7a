"""``predict`` on a table whose one target column holds class values (issue 27: it said "DATA
holds no targets"): the bundle remembers the column (``class_column``) and the printed
measures equal scikit-learn's on the CSV's decisions."""

import csv

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.metrics import accuracy_score, balanced_accuracy_score, confusion_matrix, f1_score

from sensorbudget.cli import main


def _table(path, seed=0, n=120, extra_class=False, names=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    c = np.argmax(X[:, :3] + 0.5 * rng.normal(size=(n, 3)), axis=1) * 2 + 1   # classes 1, 3, 5
    if extra_class:
        c[7] = 9
    if names is not None:
        c = np.asarray(names)[c // 2]
    path.write_text("a,b,c,d,activity\n" + "".join(
        f"{X[i, 0]:.4f},{X[i, 1]:.4f},{X[i, 2]:.4f},{X[i, 3]:.4f},{c[i]}\n" for i in range(n)))
    return c


def _printed(output, label):
    line = next(x for x in output.splitlines() if x.strip().startswith(label + " "))
    return float(line.split()[-1])


def test_predict_scores_a_class_value_column(tmp_path):
    runner = CliRunner()
    _table(tmp_path / "train.csv")
    truth = _table(tmp_path / "test.csv", seed=1)
    r = runner.invoke(main, ["train", str(tmp_path / "train.csv"), "--target", "activity",
                             "--task", "multiclass", "--budget", "2", "-o", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["predict", str(tmp_path / "b"), str(tmp_path / "test.csv"),
                             "-o", str(tmp_path / "p.csv")])
    assert r.exit_code == 0, r.output
    with open(tmp_path / "p.csv", newline="") as fh:
        decided = np.array([int(row["class"]) for row in csv.DictReader(fh)])
    assert "not the bundle's training" in r.output          # a test split, said so
    assert _printed(r.output, "accuracy") == pytest.approx(accuracy_score(truth, decided),
                                                           rel=1e-5)
    assert _printed(r.output, "balanced accuracy") == pytest.approx(
        balanced_accuracy_score(truth, decided), rel=1e-5)
    assert _printed(r.output, "macro-F1") == pytest.approx(
        f1_score(truth, decided, average="macro"), rel=1e-5)
    lines = r.output.splitlines()
    top = next(i for i, x in enumerate(lines) if "true / decided" in x)
    assert lines[top].split()[3:] == ["1", "3", "5"]
    M = confusion_matrix(truth, decided, labels=[1, 3, 5])
    assert [[int(v) for v in x.split()[1:]] for x in lines[top + 1:top + 4]] == M.tolist()


def test_a_class_the_bundle_does_not_know_is_one_error_line(tmp_path):
    runner = CliRunner()
    _table(tmp_path / "train.csv")
    _table(tmp_path / "test.csv", seed=1, extra_class=True)
    runner.invoke(main, ["train", str(tmp_path / "train.csv"), "--target", "activity",
                         "--task", "multiclass", "--budget", "2", "-o", str(tmp_path / "b")])
    r = runner.invoke(main, ["predict", str(tmp_path / "b"), str(tmp_path / "test.csv"),
                             "-o", str(tmp_path / "p.csv")])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.output.startswith("Error: column 'activity': class '9' (row 7) is not one of")
    assert not (tmp_path / "p.csv").exists()


def test_text_class_names_train_predict_and_evaluate(tmp_path):
    """A target column of text (walk, run, sit) is a class column: task multiclass without
    --task, the classes named by their text, scored like scikit-learn on the CSV's classes."""
    runner = CliRunner()
    names = ["sit", "walk", "run"]
    _table(tmp_path / "train.csv", names=names)
    truth = _table(tmp_path / "test.csv", seed=1, names=names)
    r = runner.invoke(main, ["train", str(tmp_path / "train.csv"), "--target", "activity",
                             "--budget", "2", "-o", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    assert "task=multiclass" in r.output
    assert ("classes (column 'activity'): run, sit, walk; decisions: the class of the largest "
            "score") in r.output
    r = runner.invoke(main, ["predict", str(tmp_path / "b"), str(tmp_path / "test.csv"),
                             "-o", str(tmp_path / "p.csv")])
    assert r.exit_code == 0, r.output
    with open(tmp_path / "p.csv", newline="") as fh:
        decided = np.array([row["class"] for row in csv.DictReader(fh)])
    assert set(decided) <= set(names)
    assert _printed(r.output, "accuracy") == pytest.approx(accuracy_score(truth, decided),
                                                           rel=1e-5)
    assert _printed(r.output, "macro-F1") == pytest.approx(
        f1_score(truth, decided, average="macro"), rel=1e-5)
    r = runner.invoke(main, ["evaluate", str(tmp_path / "train.csv"), "--target", "activity",
                             "--budgets", "2", "--folds", "3", "--methods", "greedy-joint"])
    assert r.exit_code == 0, r.output
    assert "balanced accuracy" in r.output and "summed over the held-out outer folds" in r.output


def test_text_classes_with_missing_cells_are_missing_targets(tmp_path):
    from sensorbudget.trainer.data import load_table

    path = tmp_path / "t.csv"
    path.write_text("a,b,activity\n1,2,walk\n3,4,\n5,6,run\n7,8,walk\n")
    table = load_table(path, targets=["activity"], drop_missing=0.5)
    assert table.task == "multiclass" and table.target_names == ["run", "walk"]
    column, values = table.class_target
    assert column == "activity" and values.tolist() == ["walk", "run", "walk"]
    np.testing.assert_array_equal(table.Y, [[0, 1], [1, 0], [0, 1]])
    np.testing.assert_array_equal(table.X, [[1, 2], [5, 6], [7, 8]])
