"""Feature NPZ members that disagree are refused with one DataError naming the member."""

import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.cli import main
from tests.fixtures import write_sensors_toml, write_stream
from trainer.bundle import npz_bytes
from trainer.errors import DataError
from trainer.sensing.feature_set import FeatureSet, load_feature_set


@pytest.fixture(scope="module")
def arrays(tmp_path_factory):
    d = tmp_path_factory.mktemp("fs")
    fs = load_feature_set(write_stream(d / "rec" / "s.csv"), write_sensors_toml(d / "s.toml"))
    return fs.to_arrays()


def at(a, index, value):
    a = np.array(a, dtype=np.float64 if np.asarray(a).dtype.kind == "f" else None)
    a[index] = value
    return a


CASES = {
    "nan-X": (lambda a: a.update(X=at(a["X"], (0, 3), np.nan)), "X holds nan at window 0"),
    "inf-X": (lambda a: a.update(X=at(a["X"], (2, 0), -np.inf)), "X holds -inf at window 2"),
    "inf-Y": (lambda a: a.update(Y=at(a["Y"], (1, 0), np.inf)), "Y holds an infinite"),
    "rows": (lambda a: a.update(Y=a["Y"][:-1]), "Y has"),
    "groups": (lambda a: a.update(groups=a["groups"][:-2]), "groups has"),
    "names": (lambda a: a.update(feature_names=a["feature_names"][:-1]), "feature_names has"),
    "duplicate": (lambda a: a.update(feature_names=np.array(
        [a["feature_names"][0]] * len(a["feature_names"]))), "holds 'ax.mean' twice"),
    "sensors-json": (lambda a: a.update(sensors_json=np.array("[1, 2]")),
                     "sensors_json must be a list"),
    "costs-json": (lambda a: a.update(compute_costs_json=np.array("[]")),
                   "compute_costs_json must be"),
    "bad-json": (lambda a: a.update(sensors_json=np.array("{not json")), "JSONDecodeError"),
    "deep-json": (lambda a: a.update(sensors_json=np.array("[" * 50000 + "]" * 50000)),
                  "RecursionError"),
    "kind": (lambda a: a.update(feature_kinds=np.array(["nope"] * len(a["feature_kinds"]))),
             "unknown feature kind 'nope'"),
    "task": (lambda a: a.update(task=np.array("ranking")), "task='ranking'"),
    "no-targets": (lambda a: a.update(Y=a["Y"][:, :0], target_names=a["target_names"][:0]),
                   "Y has no columns"),
}


def test_the_unchanged_file_loads(arrays):
    fs = FeatureSet.load(npz_bytes(arrays))
    np.testing.assert_array_equal(fs.X, arrays["X"])
    assert fs.feature_names == list(arrays["feature_names"])


@pytest.mark.parametrize("case", sorted(CASES))
def test_inconsistent_members_are_refused(arrays, case):
    change, message = CASES[case]
    bad = {k: np.array(v) for k, v in arrays.items()}
    change(bad)
    with pytest.raises(DataError, match=message):
        FeatureSet.load(npz_bytes(bad))


def test_missing_targets_stay_allowed(arrays):
    ok = {k: np.array(v) for k, v in arrays.items()}
    ok["Y"] = at(ok["Y"], (0, 0), np.nan)
    assert np.isnan(FeatureSet.load(npz_bytes(ok)).Y[0, 0])


def test_the_cli_says_it_in_one_line(arrays, tmp_path):
    bad = {k: np.array(v) for k, v in arrays.items()}
    CASES["inf-X"][0](bad)
    (tmp_path / "f.npz").write_bytes(npz_bytes(bad))
    result = CliRunner().invoke(main, ["train", str(tmp_path / "f.npz"), "--budget", "2",
                                       "-o", str(tmp_path / "B")])
    assert result.exit_code == 2 and "X holds -inf" in result.output
    assert not (tmp_path / "B").exists()
