"""Feature NPZ members that disagree are refused with one DataError naming the member."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.cli import main
from tests.fixtures import write_sensors_toml, write_stream
from sensorbudget.trainer.bundle import npz_bytes
from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.sensing.feature_set import FeatureSet, load_feature_set


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
                     "sensors_json entry 0 must be an object"),
    "sensors-object": (lambda a: a.update(sensors_json=np.array("{}")),
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
    # issue 33: members later commands use, edited to values they crashed on
    "rate-zero": (lambda a: a.update(sample_rate=np.float64(0)), "sample_rate=0 must be"),
    "rate-subnormal": (lambda a: a.update(sample_rate=np.float64(1e-320)),
                       "sample_rate=9.99989e-321 must be a number of Hz in 1e-100..1e\\+100"),
    "rate-nan": (lambda a: a.update(sample_rate=np.float64(np.nan)), "sample_rate=nan must"),
    "rate-huge": (lambda a: a.update(sample_rate=np.float64(1e300)), "sample_rate=1e.300 must"),
    "window-zero": (lambda a: a.update(window=np.int64(0)), "window=0 must be in 1.."),
    "hop-huge": (lambda a: a.update(hop=np.int64(2 ** 40)), "hop=1099511627776 must be in"),
    "no-energy": (lambda a: a.update(sensors_json=_sensors(a, drop="energy_per_reading_j")),
                  "sensor 'acc': energy_per_reading_j=None must be a number"),
    "text-price": (lambda a: a.update(sensors_json=_sensors(a, unit_price="1")),
                   "unit_price='1' must be a number"),
    "no-channels": (lambda a: a.update(sensors_json=_sensors(a, channels="ax")),
                    "entry 0 must be an object with a name and a list of channel names"),
    "text-compute": (lambda a: a.update(compute_costs_json=np.array(
        json.dumps({"ax.mean": {"energy": "abc", "time": 1e-6}}))),
        "compute_costs_json\\['ax.mean'\\]=.* must be an object of energy and time numbers"),
    "inf-compute": (lambda a: a.update(compute_costs_json=np.array(
        '{"ax.mean": {"energy": 1e999, "time": 0}}')), "compute_costs_json"),
}


def _sensors(arrays, drop=None, **changes):
    """sensors_json with the first sensor's ``drop`` key removed and ``changes`` applied."""
    sensors = json.loads(str(arrays["sensors_json"]))
    sensors[0].pop(drop, None)
    sensors[0].update(changes)
    return np.array(json.dumps(sensors))


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


@pytest.mark.parametrize("case", ["rate-zero", "rate-nan", "no-energy", "text-compute"])
@pytest.mark.parametrize("command", [["train", "--budget", "2", "--lam", "1"],
                                     ["evaluate", "--budgets", "2", "--folds", "2"]])
def test_edited_members_are_one_line_in_every_command(arrays, tmp_path, case, command):
    """These edits gave ZeroDivisionError, ValueError (NaN in model.json), KeyError and
    ValueError tracebacks (exit 1) in train (issue 33)."""
    bad = {k: np.array(v) for k, v in arrays.items()}
    CASES[case][0](bad)
    (tmp_path / "f.npz").write_bytes(npz_bytes(bad))
    out = tmp_path / "OUT"
    argv = [command[0], str(tmp_path / "f.npz"), *command[1:],
            *(["-o", str(out)] if command[0] == "train" else ["--report", str(out)])]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [result.stderr.strip()]
    assert result.stderr.startswith("Error: ") and "f.npz" in result.stderr
    assert not out.exists()
