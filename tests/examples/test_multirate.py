"""examples/multirate/run.py on a reduced setting (3 folds, 2 budgets, at most 4 features),
its table checked against independent recomputations: the nested-CV error of every design by
sklearn's StratifiedGroupKFold and GreedyRLS fitted directly on each training fold; the sensor
energy per prediction from sensors.toml by hand; the test-split accuracy from the bundle's
weights in numpy. Skips without ../shared/data/basic_motions."""

import dataclasses
import json
import tomllib

import numpy as np
import pytest

import sensorbudget as sb
from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.sensing.sensor_budget import cost_kwargs_from_feature_set
from tests.examples.run_module import load_run
from tests.paths import SHARED

DATA = SHARED / "basic_motions"
pytestmark = pytest.mark.skipif(not (DATA / "BasicMotions_TRAIN.ts").is_file(),
                                reason="../shared/data/basic_motions is not available")
BUDGETS = ((1e-5, "10 uW"), (6e-3, "6 mW"))
FOLDS, CAP = 3, 4


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    ex = load_run("multirate")
    rows = ex.run(DATA, tmp_path_factory.mktemp("multirate"), folds=FOLDS, budgets=BUDGETS,
                  cap=CAP, devices=False)
    return ex, rows


def designs(rows):
    for multi, _, singles in rows:
        yield multi
        yield from singles.values()


def test_single_rate_files_are_the_multi_rate_file_at_one_rate():
    ex = load_run("multirate")
    multi = tomllib.loads(ex.MULTI.read_text())
    for q in ex.RATES:
        single = tomllib.loads(ex.single_rate_file(q).read_text())
        assert {k: v for k, v in single.items() if k != "sensors"} == \
            {k: v for k, v in multi.items() if k != "sensors"}
        for s, m in zip(single["sensors"], multi["sensors"], strict=True):
            i = m["rates_hz"].index(q)
            expect = {k: ([v[i]] if k.endswith("_by_rate") or k == "rates_hz" else v)
                      for k, v in m.items()}
            assert s == expect


def test_nested_cv_errors_equal_greedy_rls_on_each_training_fold(example):
    """The script's per-fold error rates, recomputed: the folds by sklearn (recordings whole,
    stratified by class, classes in sorted name order as evaluate keeps them) and on each
    training fold GreedyRLS with both limits, its argmax on the held-out fold."""
    from sklearn.model_selection import StratifiedGroupKFold

    ex, rows = example
    files = {"10/5/2 Hz": ex.MULTI, **{f"{q} Hz": ex.single_rate_file(q) for q in ex.RATES}}
    checked = 0
    for d in designs(rows):
        data = sb.features(DATA / "BasicMotions_TRAIN.ts", sensors=files[d.candidates])
        fs = data.feature_set
        X = np.asarray(data.X, dtype=np.float64)
        Y = np.asarray(data.Y, dtype=np.float64)[:, np.argsort(data.target_names)]
        cls = np.argmax(Y, axis=1)
        kwargs = cost_kwargs_from_feature_set(fs)
        cheapest = min(c["energy"] for c in kwargs["sensor_costs"].values())
        assert d.fits == (cheapest <= d.budget_j)
        if not d.fits:
            assert "fits the budget" in d.note and not d.cv_error
            continue
        errors = []
        for train, test in StratifiedGroupKFold(n_splits=FOLDS).split(X, cls, fs.groups):
            est = GreedyRLS(budget=CAP, max_energy=d.budget_j, **kwargs).fit(X[train], Y[train])
            errors.append(np.mean(np.argmax(est.predict(X[test]), axis=1) != cls[test]))
        assert d.cv_error == pytest.approx(errors, abs=1e-12)
        checked += 1
    assert checked >= 4


def test_design_energy_and_price_from_sensors_toml(example):
    """Each sensor at its chosen rate q: energy per reading at q x q x min(window_s, hop_s)
    readings; the price of every sensor once."""
    ex, rows = example
    spec = tomllib.loads(ex.MULTI.read_text())
    seconds = min(spec["window"]["length_s"], spec["window"]["hop_s"])
    sensors = {s["name"]: s for s in spec["sensors"]}
    for d in designs(rows):
        if not d.fits:
            continue
        energy = 0.0
        for name, q in d.rates.items():
            s = sensors[name]
            i = s["rates_hz"].index(q)
            per_reading = (s["current_a_by_rate"][i] * s["supply_v"] / q
                           if "current_a_by_rate" in s else s["energy_per_reading_j_by_rate"][i])
            energy += per_reading * q * seconds
        assert d.energy_j == pytest.approx(energy, rel=1e-12) and d.energy_j <= d.budget_j
        assert d.price == sum(sensors[n]["unit_price"] for n in d.rates)
        assert len(d.features) <= CAP
        assert all(f.split("@")[1].split(".")[0] == f"{d.rates[_sensor(f)]:g}"
                   for f in d.features)


def _sensor(feature):
    return "accel" if feature.startswith("acc") else "gyro"


def test_test_split_accuracy_from_the_bundle_weights(example):
    ex, rows = example
    for d in designs(rows):
        if not d.fits:
            continue
        bundle = sb.Bundle.load(d.bundle)
        sensors = ex.MULTI if d.candidates == "10/5/2 Hz" else \
            ex.single_rate_file(int(d.candidates.split()[0]))
        test = sb.features(DATA / "BasicMotions_TEST.ts", sensors=sensors)
        X = np.asarray(test.X, dtype=np.float64)[:, bundle.selected_index]
        decided = np.asarray(bundle.classes)[np.argmax(X @ bundle.W + bundle.b, axis=1)]
        truth = np.asarray(test.target_names)[np.argmax(test.Y, axis=1)]
        assert d.test_accuracy == pytest.approx(np.mean(decided == truth), abs=1e-12)


def test_table_states_every_number(example):
    ex, rows = example
    lines = ex.table(rows, budgets=BUDGETS, folds=FOLDS, cap=CAP)
    text = "\n".join(lines)
    for words in ("nested CV", f"{FOLDS} outer folds", "test split", "J per prediction",
                  "price (USD)"):
        assert words in text
    multi, best, _ = rows[0]
    assert f"{multi.cv_mean:.3f} ± {multi.cv_std:.3f}" in text
    assert best is None or best.candidates in text


def test_without_the_data_the_script_says_why(tmp_path, capsys):
    ex = load_run("multirate")
    assert ex.main(["--data", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    assert "skipped: BasicMotions not found" in capsys.readouterr().out
    assert not (tmp_path / "out").exists()


def test_the_readme_command_gives_the_scripts_nested_cv(example, tmp_path):
    """The README's ``sensorbudget evaluate`` line on the same recordings and budgets: the same
    error per fold as the script's Python API run."""
    from click.testing import CliRunner

    from sensorbudget.cli import main

    ex, rows = example
    spec = ",".join(ex.budget_spec(b, CAP) for b, _ in BUDGETS)
    result = CliRunner().invoke(main, [
        "evaluate", str(DATA / "BasicMotions_TRAIN.ts"), "--sensors", str(ex.MULTI),
        "--budgets", spec, "--folds", str(FOLDS), "--methods", "greedy-joint",
        "--report", str(tmp_path / "eval")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    records = json.loads((tmp_path / "eval" / "results.json").read_text())["records"]
    for (budget_j, _), (multi, _, _) in zip(BUDGETS, rows, strict=True):
        mine = sorted((r for r in records if r["budget"] == ex.budget_spec(budget_j, CAP)),
                      key=lambda r: r["fold"])
        assert [1 - r["accuracy"] for r in mine] == pytest.approx(multi.cv_error, abs=1e-12)


def test_a_foreign_out_folder_is_refused_untouched(tmp_path, capsys):
    ex = load_run("multirate")
    (tmp_path / "notes.txt").write_text("mine")
    assert ex.main(["--out", str(tmp_path), "--no-simulate"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: --out") and "'notes.txt'" in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("device", ["nucleo-f4", "arduino-uno"])
def test_device_replay_equals_the_python_design(example, tmp_path, device):
    """The multi-rate design as float32 firmware replaying TEST: every prediction equals the
    Python reference's and the device's accuracy is the table's test-split accuracy. Skips
    when the device's tools are missing (CI has them)."""
    ex, rows = example
    design = dataclasses.replace(rows[0][0], simulations={})
    ex.simulate(design, DATA / "BasicMotions_TEST.ts", tmp_path,
                devices={device: ex.DEVICES[device]})
    got = design.simulations[device]
    if "skipped" in got:
        pytest.skip(got["skipped"])
    assert got["predictions"] == 360 and got["lost"] == 0 and got["mismatches"] == 0
    assert got["accuracy"] == pytest.approx(design.test_accuracy, abs=1e-12)
    assert got["energy_j"]["sensors"] == pytest.approx(design.energy_j, rel=1e-12)
    assert got["cost_median"] > 0


def test_the_same_run_writes_the_same_bytes(example, tmp_path):
    """A second run (another --out) writes byte-identical results.json, table.md and bundles."""
    ex, rows = example
    first = tmp_path / "a"
    again = ex.run(DATA, first, folds=FOLDS, budgets=BUDGETS, cap=CAP, devices=False)
    (first / "table.md").write_text("\n".join(ex.table(again, BUDGETS, FOLDS, CAP)))
    second = tmp_path / "b"
    rows2 = ex.run(DATA, second, folds=FOLDS, budgets=BUDGETS, cap=CAP, devices=False)
    (second / "table.md").write_text("\n".join(ex.table(rows2, BUDGETS, FOLDS, CAP)))
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert any(f.name == "model.json" for f in files)
    for f in files:
        assert (first / f).read_bytes() == (second / f).read_bytes(), f
    assert "\n".join(ex.table(rows, BUDGETS, FOLDS, CAP)) == (first / "table.md").read_text()
