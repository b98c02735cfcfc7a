"""examples/gait_spectral/run.py and its README: the README's first table (sensor energy only,
nested CV) is what a fresh run gives, line for line; the run's per-fold accuracies and energies
recomputed independently (sklearn's StratifiedGroupKFold and GreedyRLS fitted directly on each
training fold; the energy per prediction from sensors.toml by hand); the README's evaluate
command gives the script's numbers; the Uno replay (simavr) gives every TEST prediction of the
Python design. The README's second table (compute priced on the Uno: nested CV over 168
calibrated candidates at seven budgets, ~10 min) is not re-run here: run.py writes it.
Skips without ../shared/data/basic_motions."""

import json
import tomllib

import numpy as np
import pytest

import sensorbudget as sb
from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.sensing.sensor_budget import cost_kwargs_from_feature_set
from tests.examples.run_module import load_run
from tests.paths import EXAMPLES, SHARED

DATA = SHARED / "basic_motions"
README = EXAMPLES / "gait_spectral" / "README.md"
pytestmark = pytest.mark.skipif(not (DATA / "BasicMotions_TRAIN.ts").is_file(),
                                reason="../shared/data/basic_motions is not available")
FOLDS = 5


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    ex = load_run("gait_spectral")
    out = tmp_path_factory.mktemp("gait")
    return ex, ex.run(DATA, out, folds=FOLDS, simulate=False), out


def test_the_readme_sensor_energy_table_is_a_fresh_run(example):
    """Every row of the README's first table, as the script writes it now."""
    ex, result, _ = example
    readme = README.read_text().splitlines()
    lines = ex.table_rows(result["sensor_energy"], ex.SENSOR_BUDGETS, ex.SENSOR_LABELS)
    start = readme.index(lines[0])
    assert readme[start:start + len(lines)] == lines


def test_nested_cv_equals_greedy_rls_on_each_training_fold(example):
    """The time-domain set's per-fold accuracy, energy and feature count, recomputed: folds by
    sklearn (recordings whole, stratified by class in sorted class order) and GreedyRLS on
    each training fold with the budget, its argmax on the held-out fold; the energy of the
    chosen sensors from sensors.toml (energy per reading x min(window, hop) readings)."""
    from sklearn.model_selection import StratifiedGroupKFold

    ex, result, _ = example
    path = ex.sensors_file("time_domain")
    data = sb.features(DATA, sensors=path)
    fs = data.feature_set
    X = np.asarray(data.X, dtype=np.float64)
    Y = np.asarray(data.Y, dtype=np.float64)[:, np.argsort(data.target_names)]
    cls = np.argmax(Y, axis=1)
    kwargs = cost_kwargs_from_feature_set(fs)
    spec = tomllib.loads(path.read_text())
    per_reading = {s["name"]: s.get("energy_per_reading_j", s.get("power_w", 0.0)
                                    * s.get("read_time_s", 0.0)) for s in spec["sensors"]}
    readings = min(spec["window"]["length"], spec["window"]["hop"])
    for budget in ("4", "energy:0.0001"):
        limits = dict(budget=4) if budget == "4" else dict(budget=None, max_energy=1e-4)
        acc, energy = [], []
        for train, test in StratifiedGroupKFold(n_splits=FOLDS).split(X, cls, fs.groups):
            est = GreedyRLS(**limits, **kwargs).fit(X[train], Y[train])
            acc.append(np.mean(np.argmax(est.predict(X[test]), axis=1) == cls[test]))
            sensors = {s for i in est.selected_ for s in fs.feature_sensors[i].split("+")}
            energy.append(sum(per_reading[s] * readings for s in sensors))
        cell = result["sensor_energy"]["time_domain"][budget]
        assert cell.accuracy == pytest.approx(acc, abs=1e-12)
        assert cell.energy == pytest.approx(energy, rel=1e-12)
        assert cell.std == pytest.approx(np.std(acc, ddof=1), abs=1e-12)


def test_the_readme_command_gives_the_scripts_numbers(example, tmp_path):
    """The README's ``sensorbudget evaluate`` line (time-domain set): the same accuracy and
    energy per fold as the script's Python API run."""
    from click.testing import CliRunner

    from sensorbudget.cli import main

    ex, result, _ = example
    readme = README.read_text()
    assert "--budgets " + ",".join(ex.SENSOR_BUDGETS) + " --folds 5" in readme
    got = CliRunner().invoke(main, [
        "evaluate", str(DATA), "--sensors", str(ex.sensors_file("time_domain")),
        "--budgets", ",".join(ex.SENSOR_BUDGETS), "--folds", str(FOLDS),
        "--methods", "greedy-joint", "--report", str(tmp_path / "eval")],
        catch_exceptions=False)
    assert got.exit_code == 0, got.output
    records = json.loads((tmp_path / "eval" / "results.json").read_text())["records"]
    for budget, cell in result["sensor_energy"]["time_domain"].items():
        mine = sorted((r for r in records if r["budget"] == budget), key=lambda r: r["fold"])
        assert [r["accuracy"] for r in mine] == pytest.approx(cell.accuracy, abs=1e-12)
        assert [r["cost_energy"] for r in mine] == pytest.approx(cell.energy, rel=1e-12)


@pytest.fixture(scope="module")
def uno(tmp_path_factory):
    """The README's Uno design replayed on simavr; skips when simavr or avr-gcc is missing
    (CI has them)."""
    from sensorbudget.device_sim.backends import available_backends

    missing = available_backends().get("simavr")
    if missing is not None:
        pytest.skip(f"simavr: {missing}")
    ex = load_run("gait_spectral")
    out = tmp_path_factory.mktemp("uno")
    return ex, out, ex.uno_design(DATA, out)


def test_the_uno_replay_gives_the_python_design(uno):
    """The README's Uno design on simavr (float32): every TEST window predicted, 0 mismatches,
    the device's accuracy that of the bundle's weights in numpy on the TEST features, and the
    sensor energy that of the bundle; the README states the design's features and the run's
    predictions, accuracy, compute cycles and calibrated FFT cycles."""
    ex, out, dev = uno
    assert dev.predictions == 160 and dev.lost == 0 and dev.mismatches == 0
    bundle = sb.Bundle.load(out / "gait8")
    test = sb.features(DATA / "BasicMotions_TEST.ts", sensors=ex.sensors_file("spectral"))
    X = np.asarray(test.X, dtype=np.float64)[:, bundle.selected_index]
    decided = np.asarray(bundle.classes)[np.argmax(X @ bundle.W + bundle.b, axis=1)]
    truth = np.asarray(test.target_names)[np.argmax(test.Y, axis=1)]
    assert dev.test_accuracy == pytest.approx(np.mean(decided == truth), abs=1e-12)
    assert dev.energy["sensors"] == pytest.approx(bundle.meta["costs"]["total"]["energy"],
                                                  rel=1e-12)
    assert dev.cost["total"] == pytest.approx(
        dev.cost["pushes"] + dev.cost["extractors"] + dev.cost["model"], rel=0.05)
    readme = README.read_text()
    assert all(f"`{f}`" in readme for f in dev.selected)
    assert f"{dev.predictions} TEST windows, {dev.mismatches} mismatches" in readme
    assert f"device accuracy\n{dev.test_accuracy:.3f}" in readme
    cycles = {k: _spaced(v) for k, v in dev.cost.items()}
    assert (f"{cycles['pushes']}\ncycles + window pass (the extractors) {cycles['extractors']} + "
            f"model {cycles['model']} = {cycles['total']} cycles") in readme
    assert set(dev.transforms) == set(ex.TRANSFORMS)
    for t in dev.transforms.values():
        assert f"{_spaced(t['compute_cycles'])}\ncycles" in readme


def _spaced(x) -> str:
    return f"{x:,.0f}".replace(",", " ")


def test_the_readme_uno_table_time_domain_column_is_a_fresh_run(uno):
    """The second table's time-domain column (nested CV on the features priced with the
    Uno's calibrated costs), as a fresh run writes it; the spectral column (168 candidates)
    is left to run.py."""
    ex, out, _ = uno
    cells = ex.priced(DATA, out, folds=FOLDS, sets=("time_domain",))["time_domain"]
    readme = README.read_text()
    for b, c in cells.items():
        assert f"| {ex.LABELS[b]} | {c.mean:.3f} ± {c.std:.3f} | {ex.joules(c.energy_mean)} |" \
            in readme


def test_without_the_data_the_script_says_why(tmp_path, capsys):
    ex = load_run("gait_spectral")
    assert ex.main(["--data", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    assert "skipped: BasicMotions not found" in capsys.readouterr().out
    assert not (tmp_path / "out").exists()


def test_a_foreign_out_folder_is_refused_untouched(tmp_path, capsys):
    ex = load_run("gait_spectral")
    (tmp_path / "notes.txt").write_text("mine")
    assert ex.main(["--out", str(tmp_path), "--no-simulate"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: --out") and "'notes.txt'" in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]

