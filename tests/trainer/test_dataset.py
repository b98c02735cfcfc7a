"""Dataset.load, the one loader: each kind of file against an independent reading of it."""

import csv

import numpy as np
import pytest

from sensorbudget.trainer.dataset import Dataset, as_dataset
from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.tasks import Task
from tests.fixtures import write_sensors_toml, write_stream


@pytest.fixture
def table(tmp_path):
    """A seeded CSV: a text column, 4 features, a target and a group column."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 4))
    y = X @ [1.0, -2.0, 0.0, 0.5] + 0.1 * rng.normal(size=30)
    path = tmp_path / "t.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["note", "a", "b", "c", "d", "y", "subject"])
        for i in range(30):
            w.writerow([f"n{i}", *(f"{v:.6f}" for v in X[i]), f"{y[i]:.6f}", f"s{i % 5}"])
    return path


def test_a_csv_table_as_numpy_reads_it(table):
    data = Dataset.load(table, targets=["y"], ignore=["note"], groups="subject")
    raw = np.genfromtxt(table, delimiter=",", skip_header=1, usecols=range(1, 6))
    np.testing.assert_array_equal(data.X, raw[:, :4])
    np.testing.assert_array_equal(data.Y[:, 0], raw[:, 4])
    assert data.feature_names == ["a", "b", "c", "d"] and data.target_names == ["y"]
    assert data.group_ids("subject").tolist() == [f"s{i % 5}" for i in range(30)]
    assert data.task == "regression" and data.feature_set is None
    assert data.structure() == (None, None, {})


def test_recordings_and_their_feature_file_are_the_same_dataset(tmp_path):
    for i in range(2):
        write_stream(tmp_path / "rec" / f"r{i}.csv", n=120, seed=i)
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    windows = Dataset.load(tmp_path / "rec", sensors=toml)
    windows.save(tmp_path / "f.npz")
    again = Dataset.load(tmp_path / "f.npz")
    with np.load(tmp_path / "f.npz", allow_pickle=False) as npz:     # the file itself
        np.testing.assert_array_equal(again.X, npz["X"].astype(np.float64))
        assert again.feature_names == npz["feature_names"].tolist()
        assert again.group_ids("recording").tolist() == npz["groups"].tolist()
    np.testing.assert_array_equal(windows.X, again.X)
    np.testing.assert_array_equal(windows.Y, again.Y)
    assert windows.structure() == again.structure()
    assert windows.source["recordings"] == "rec" and again.source["file"] == "f.npz"
    with pytest.raises(DataError, match="--groups 'subject': windows of recordings"):
        again.group_ids("subject")


def test_recording_options_reach_the_stream_reader(tmp_path):
    """``time_column=`` (one option of StreamFormat) reads a stream whose time column is named
    otherwise; without it the file is refused."""
    path = write_stream(tmp_path / "r.csv", n=120)
    path.write_text(path.read_text().replace("time,", "stamp,", 1))
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    with pytest.raises(DataError):
        Dataset.load(path, sensors=toml)
    renamed = Dataset.load(path, sensors=toml, time_column="stamp")
    path.write_text(path.read_text().replace("stamp,", "time,", 1))
    np.testing.assert_array_equal(renamed.X, Dataset.load(path, sensors=toml).X)


@pytest.mark.parametrize("stamp", ["iso", "epoch_ms", "epoch_us"])
def test_time_stamps_are_recognised_by_value(tmp_path, stamp):
    """ISO 8601 text and epoch milli-/microseconds read without --time-unit: the same windows
    and features as the stream in seconds; a stamp that is neither is one error naming it."""
    from datetime import datetime, timedelta, timezone

    path = write_stream(tmp_path / "r.csv", n=120)
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    reference = Dataset.load(path, sensors=toml)
    start = datetime(2024, 5, 1, 12, tzinfo=timezone.utc)
    lines = path.read_text().splitlines()
    rows = [lines[0]]
    for line in lines[1:]:
        seconds, rest = line.split(",", 1)
        when = start + timedelta(seconds=float(seconds))
        cell = {"iso": when.isoformat(),
                "epoch_ms": str(round(when.timestamp() * 1000)),
                "epoch_us": str(round(when.timestamp() * 1_000_000))}[stamp]
        rows.append(f"{cell},{rest}")
    path.write_text("\n".join(rows) + "\n")
    data = Dataset.load(path, sensors=toml)
    np.testing.assert_array_equal(data.X, reference.X)
    np.testing.assert_array_equal(data.feature_set.window_start,
                                  reference.feature_set.window_start)
    path.write_text(path.read_text().replace(rows[1].split(",")[0], "noon", 1))
    with pytest.raises(DataError, match="'noon' is neither a number nor an ISO 8601 time"):
        Dataset.load(path, sensors=toml)


@pytest.mark.parametrize("kwargs, message", [
    ({"groups": "recording", "targets": ["y"], "ignore": ["note", "subject"]},
     "--groups recording needs recordings"),
    ({"window": 4, "targets": ["y"]}, "apply to recordings given with --sensors"),
    ({"colour": "red"}, "unknown data option 'colour'"),
])
def test_misuse_is_one_data_error(table, kwargs, message):
    with pytest.raises(DataError, match=message):
        Dataset.load(table, **kwargs)


def test_shards_are_named_from_the_first_one(tmp_path, table):
    folder = tmp_path / "shards"
    folder.mkdir()
    lines = table.read_text().splitlines()
    for k in range(3):
        (folder / f"p{k}.csv").write_text("\n".join([lines[0], *lines[1 + 10 * k:11 + 10 * k]])
                                          + "\n")
    data = Dataset.load(str(folder / "*.csv"), shards=True, targets=["y"],
                        ignore=["note", "subject"])
    assert data.feature_names == ["a", "b", "c", "d"] and data.Y is None
    assert data.source["shards"] == ["p0.csv", "p1.csv", "p2.csv"]


def test_a_loaded_dataset_takes_no_file_options(table):
    data = Dataset.load(table, targets=["y"], ignore=["note", "subject"])
    with pytest.raises(DataError, match="loaded without its group column"):
        data.group_ids("subject")
    assert as_dataset(data, groups=None, sep=None) is data
    with pytest.raises(DataError, match="'sep' applies to a file"):
        as_dataset(data, sep=";")


def test_task_names():
    assert Task.of("multiclass", 2) is Task.BINARY and Task.BINARY.stored == "multiclass"
    assert [str(t) for t in Task] == ["regression", "binary", "multiclass", "multilabel"]
    with pytest.raises(DataError, match="is not one of"):
        Task.of("ranking-ish")


def test_text_classes_in_arff_and_npz_read_as_in_csv(tmp_path):
    """One column of class names in a CSV (the existing reading), an ARFF nominal attribute
    and an NPZ text array: the same one-hot targets, class names and bundle."""
    from sensorbudget.trainer import api

    rng = np.random.default_rng(4)
    X = np.round(rng.normal(size=(36, 3)), 5)
    names = np.array(["run", "sit", "walk"])[np.argmax(X + 0.3 * rng.normal(size=X.shape), 1)]
    names[5] = "?"                                              # a missing class
    body = [",".join(f"{v:.5f}" for v in X[i]) + f",{names[i]}" for i in range(36)]
    (tmp_path / "t.csv").write_text("\n".join(["a,b,c,act", *body]) + "\n")
    (tmp_path / "t.arff").write_text("\n".join(
        ["@relation t", *(f"@attribute {c} numeric" for c in "abc"),
         "@attribute act {walk,run,sit}", "@data", *body]) + "\n")
    np.savez(tmp_path / "t.npz", X=X, Y=names, feature_names=np.array(list("abc")),
             target_names=np.array(["act"]))
    loaded = {s: Dataset.load(tmp_path / f"t.{s}", targets=["act"], drop_missing=True)
              for s in ("csv", "arff", "npz")}
    keep = names != "?"
    one_hot = (names[keep, None] == np.array(["run", "sit", "walk"])).astype(float)
    bundles = {}
    for suffix, data in loaded.items():
        assert data.task == "multiclass" and data.target_names == ["run", "sit", "walk"]
        np.testing.assert_array_equal(data.Y, one_hot)
        np.testing.assert_array_equal(data.X, X[keep])
        assert data.class_column == "act" and data.class_values.tolist() == names[keep].tolist()
        bundles[suffix] = api.train(data, budget=2, lam=1.0)
    for suffix in ("arff", "npz"):
        assert bundles[suffix].arrays["W"].tolist() == bundles["csv"].arrays["W"].tolist()
        assert bundles[suffix].classes == bundles["csv"].classes == ["run", "sit", "walk"]
