"""``binary`` is accepted wherever a task is named (issue 27: sensors.toml refused it and
``train``/``evaluate --task`` did not offer it): sensors.toml ``task``, ``train --task``,
``evaluate --task`` and the Python API (:func:`sensorbudget.features`, :func:`sensorbudget.train`,
:func:`sensorbudget.evaluate`). Binary is multi-class with at most 2 classes: on 2-class data
every surface writes the same bytes as ``multiclass``, and the CLI and the Python API agree; on
3 classes each surface refuses with one line naming the classes and writes nothing."""

import numpy as np
import pytest
from click.testing import CliRunner

import sensorbudget as sb
from sensorbudget.cli import main
from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.tasks import TASK_NAMES, Task, check_binary, classes_of

RATE = 10


def _stream(path, seed, n_classes=2, seconds=60):
    """time,ax,ay,walking at 10 Hz: ``walking`` (a per-sample class, runs of 3 s, n_classes
    values) sets the spread of ax and ay."""
    rng = np.random.default_rng(seed)
    n = seconds * RATE
    labels = np.repeat(np.arange(60) % n_classes, 30)[:n]
    rng.shuffle(labels.reshape(-1, 30))
    ax = rng.normal(size=n) * (0.3 + labels)
    ay = rng.normal(size=n) * (0.5 + 0.5 * labels) - 1.0
    path.write_text("time,ax,ay,walking\n" + "".join(
        f"{i / RATE:.1f},{ax[i]:.4f},{ay[i]:.4f},{labels[i]}\n" for i in range(n)))
    return path


def _toml(path, task):
    path.write_text(f'targets = ["walking"]\ntask = "{task}"\n[window]\nlength_s = 2.0\n'
                    'hop_s = 1.0\n[[sensors]]\nname = "acc"\nchannels = ["ax", "ay"]\n'
                    'unit_price = 2.0\nenergy_per_reading_j = 1e-6\nsample_rate_hz = 10\n'
                    '[[features]]\nchannels = ["acc"]\nextractors = ["mean", "std", "max"]\n')
    return path


def _cli(*args, code=0):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result.output


def _files(folder) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _error_line(output) -> str:
    lines = [x for x in output.splitlines() if x.startswith("Error: ")]
    assert len(lines) == 1 and "Traceback" not in output, output
    return lines[0]


@pytest.mark.parametrize("seed", range(6))
def test_check_binary_refuses_exactly_more_than_two_classes(seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, rng.integers(1, 5), size=40).astype(float)
    labels[rng.random(40) < 0.1] = np.nan                      # missing labels are no class
    present = sorted({f"{v:g}" for v in labels.tolist() if v == v}, key=float)  # slow loop
    assert classes_of(labels[:, None], ["walking"]) == present
    text = np.array([None if v != v else f"c{v:g}" for v in labels.tolist()], dtype=object)
    assert classes_of(None, ["walking"], text) == sorted(f"c{v}" for v in present)
    for task in ("multiclass", "regression", Task.MULTICLASS):
        check_binary(task, labels[:, None], ["walking"])       # other tasks: never checked
    if len(present) <= 2:
        check_binary("binary", labels[:, None], ["walking"])
        check_binary(Task.BINARY, None, ["sit", "walk"][:len(present)])
        return
    with pytest.raises(DataError, match=f"task 'binary' but {len(present)} classes: "
                                        f"{', '.join(present)}"):
        check_binary(Task.BINARY, labels[:, None], ["walking"])
    with pytest.raises(DataError, match="task 'binary' but 3 classes: sit, walk, run"):
        check_binary("binary", None, ["sit", "walk", "run"])    # one-hot columns


def test_binary_is_a_task_name_of_every_surface():
    from sensorbudget.trainer.results import TASKS as EVALUATE_TASKS
    from sensorbudget.trainer.training import TASKS as TRAIN_TASKS

    assert set(TASK_NAMES) == {t.value for t in Task}
    assert "binary" in TRAIN_TASKS and "binary" in EVALUATE_TASKS
    for command in ("train", "evaluate"):
        assert "binary" in _cli(command, "--help")


@pytest.fixture(scope="module")
def two_class(tmp_path_factory):
    """A 2-class stream, featurised through the CLI with task binary and with multiclass."""
    root = tmp_path_factory.mktemp("binary")
    stream = _stream(root / "s.csv", seed=0)
    for task in ("binary", "multiclass"):
        _cli("features", stream, "--sensors", _toml(root / f"{task}.toml", task),
             "-o", root / f"{task}.npz")
    return root


def test_sensors_toml_binary_writes_the_multiclass_features(two_class):
    binary, multi = two_class / "binary.npz", two_class / "multiclass.npz"
    got = sb.Dataset.load(binary)
    assert got.task == "multiclass"                              # stored name
    ref = sb.Dataset.load(multi)
    np.testing.assert_array_equal(got.X, ref.X)
    np.testing.assert_array_equal(got.Y, ref.Y)
    assert sorted(np.unique(got.Y).tolist()) == [0.0, 1.0]
    # the Python API on the same files writes the same bytes as the CLI
    sb.features(two_class / "s.csv", sensors=two_class / "binary.toml").save(
        two_class / "api.npz")
    assert (two_class / "api.npz").read_bytes() == binary.read_bytes()


def test_train_binary_equals_multiclass_on_two_classes(two_class):
    for task in ("binary", "multiclass"):
        _cli("train", two_class / "binary.npz", "--task", task, "-k", 2,
             "-o", two_class / f"b_{task}")
    assert _files(two_class / "b_binary") == _files(two_class / "b_multiclass")
    bundle = sb.train(sb.Dataset.load(two_class / "binary.npz"), budget=2, task="binary",
                      created_by=sb.Bundle.load(two_class / "b_binary").meta["created_by"])
    bundle.save(two_class / "b_api")
    assert _files(two_class / "b_api") == _files(two_class / "b_binary")
    assert bundle.meta["task"] == "multiclass" and bundle.meta["classes"] == ["0", "1"]


def test_evaluate_binary_equals_multiclass_on_two_classes(two_class):
    printed = {}
    for task in ("binary", "multiclass"):
        printed[task] = _cli("evaluate", two_class / "binary.npz", "--task", task,
                             "--budgets", "1,2", "--folds", 3, "--report",
                             two_class / f"e_{task}")
    assert printed["binary"] == printed["multiclass"].replace("e_multiclass", "e_binary")
    assert "balanced accuracy" in printed["binary"]
    assert ((two_class / "e_binary" / "summary.csv").read_bytes()
            == (two_class / "e_multiclass" / "summary.csv").read_bytes())
    sb.evaluate(two_class / "binary.npz", task="binary", budgets="1,2", folds=3).save(
        two_class / "e_api")
    assert ((two_class / "e_api" / "summary.csv").read_bytes()
            == (two_class / "e_binary" / "summary.csv").read_bytes())


def test_three_classes_under_binary_are_one_error_line_everywhere(tmp_path):
    stream = _stream(tmp_path / "s3.csv", seed=1, n_classes=3)
    expected = "task 'binary' but 3 classes: 0, 1, 2"
    binary_toml = _toml(tmp_path / "binary.toml", "binary")
    line = _error_line(_cli("features", stream, "--sensors", binary_toml,
                            "-o", tmp_path / "f.npz", code=2))
    assert expected in line and str(binary_toml) in line
    assert not (tmp_path / "f.npz").exists()
    with pytest.raises(DataError, match=expected):
        sb.features(stream, sensors=binary_toml)
    # a 3-class features file (task multiclass) given --task binary / task="binary"
    _cli("features", stream, "--sensors", _toml(tmp_path / "m.toml", "multiclass"),
         "-o", tmp_path / "m.npz")
    line = _error_line(_cli("train", tmp_path / "m.npz", "--task", "binary", "-k", 1,
                            "-o", tmp_path / "b", code=2))
    assert expected in line and not (tmp_path / "b").exists()
    line = _error_line(_cli("evaluate", tmp_path / "m.npz", "--task", "binary", "--folds", 3,
                            "--budgets", 1, "--report", tmp_path / "e", code=2))
    assert expected in line and not (tmp_path / "e").exists()
    data = sb.Dataset.load(tmp_path / "m.npz")
    with pytest.raises(DataError, match=expected):
        sb.train(data, budget=1, task="binary")
    with pytest.raises(DataError, match=expected):
        sb.evaluate(data, task=Task.BINARY, budgets="1", folds=3)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_table_of_text_classes_under_binary(tmp_path, n_classes):
    rng = np.random.default_rng(n_classes)
    X = rng.normal(size=(90, 3))
    names = np.array(["sit", "walk", "run"])[:n_classes]
    classes = names[np.argmax(X[:, :n_classes] + 0.3 * rng.normal(size=(90, n_classes)), 1)]
    table = tmp_path / "t.csv"
    table.write_text("a,b,c,act\n" + "".join(f"{x[0]:.3f},{x[1]:.3f},{x[2]:.3f},{k}\n"
                                             for x, k in zip(X, classes)))
    if n_classes == 3:
        expected = "task 'binary' but 3 classes: run, sit, walk"
        for command in (["train", "-k", 1, "-o", tmp_path / "b"],
                        ["evaluate", "--folds", 3, "--budgets", 1]):
            line = _error_line(_cli(command[0], table, "--target", "act", "--task", "binary",
                                    *command[1:], code=2))
            assert expected in line
        assert not (tmp_path / "b").exists()
        with pytest.raises(DataError, match=expected):
            sb.train(sb.Dataset.load(table, targets=["act"]), budget=1, task="binary")
        return
    for task in ("binary", "multiclass"):
        _cli("train", table, "--target", "act", "--task", task, "-k", 1, "-o", tmp_path / task)
    assert _files(tmp_path / "binary") == _files(tmp_path / "multiclass")
    assert sb.Bundle.load(tmp_path / "binary").meta["classes"] == sorted(set(classes))
