"""New-user QA of the typed Python API and the board registry (issue 27): what a stranger hit
following the README on data nobody prepared (BasicMotions, the Air Quality stream, own
sensors.toml), each written down as a test on the tiny fixtures.

- a wrong kind of argument to an API function is one exception of a package's base error
  naming what was given, never a TypeError from deep inside pathlib;
- ``sb.load`` reads back every file the pipeline writes, predictions.csv included;
- ``Bundle.decide`` refuses scores of another width instead of deciding on them;
- every surface names a multi-class model's classes in one order (evaluate's tables and
  confusion matrices against train, predict and simulate);
- a board name that is not in the registry is refused naming the option that was given;
- compute measured on the host (nanoseconds of a PC) is not silently priced as a
  microcontroller's time.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import sensorbudget as sb
from sensorbudget.cli import main
from sensorbudget.device_sim.errors import DeviceError
from sensorbudget.export.errors import ExportError
from sensorbudget.firmware_gen.errors import FirmwareGenError
from sensorbudget.trainer.errors import TrainerError
from tests.fixtures import sensor_spec, write_sensors_toml, write_stream

#: the base errors of the four library packages: what an API call may raise on bad input
BASE_ERRORS = (TrainerError, ExportError, FirmwareGenError, DeviceError)
#: the .ts classes in the file's own order, which is not sorted
TS_CLASSES = ("walk", "run", "sit")


def _cli(args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _ok(args):
    result = _cli(args)
    assert result.exit_code == 0, result.output
    return result.output


def _write_ts(path, n_cases=12, length=40, seed=3):
    """A two-dimensional sktime .ts file whose @classLabel order is not sorted."""
    rng = np.random.default_rng(seed)
    lines = ["@problemName Tiny", "@timeStamps false", "@univariate false", "@dimensions 2",
             "@equalLength true", f"@seriesLength {length}",
             "@classLabel true " + " ".join(TS_CLASSES), "@data"]
    t = np.arange(length) / 10
    for case in range(n_cases):
        label = TS_CLASSES[case % 3]
        amp = {"walk": 1.0, "run": 2.5, "sit": 0.1}[label]
        dims = [amp * np.sin(t * (2 + case % 2)) + 0.2 * rng.normal(size=length),
                amp * np.cos(t) + 0.2 * rng.normal(size=length)]
        lines.append(":".join(",".join(f"{v:.5f}" for v in d) for d in dims) + f":{label}")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """The tiny stream through the README's Python steps, in a folder outside the repository:
    {name: path} of every file written, plus the loaded Dataset and Bundle."""
    root = tmp_path_factory.mktemp("newuser")
    toml = write_sensors_toml(root / "sensors.toml")
    stream = write_stream(root / "stream.csv", n=200)
    data = sb.features(stream, sensors=toml)
    data.save(root / "feats.npz")
    bundle = sb.train(data, budget=3)
    bundle.save(root / "bundle")
    predictions = sb.predict(bundle, stream)
    predictions.save(root / "predictions.csv")
    sim = sb.simulate(root / "bundle", stream, backend="python")
    sim.save(root / "sim")
    return {"root": root, "toml": toml, "stream": stream, "data": data, "bundle": bundle,
            "sim": sim, "predictions": predictions}


def test_load_reads_back_the_predictions_file(pipeline):
    """README: ``sb.load(path)`` reads any saved output back as its typed object; predict's CSV
    is one (``Predictions.load`` exists, but ``sb.load`` said it is not a file it reads)."""
    path = pipeline["root"] / "predictions.csv"
    loaded = sb.load(path)
    assert isinstance(loaded, sb.Predictions)
    direct = sb.Predictions.load(path)
    assert list(loaded.columns) == list(direct.columns) == list(pipeline["predictions"].columns)
    for name, values in pipeline["predictions"].columns.items():
        np.testing.assert_array_equal(loaded.columns[name], np.asarray(values, dtype=float))


def _wrong_kinds(p):
    """(call description, what was passed, the call) of API calls given the wrong kind."""
    bundle, data, sim, stream = p["bundle"], p["data"], p["sim"], p["stream"]
    return [
        ("train(a Bundle)", "Bundle", lambda: sb.train(bundle, budget=2)),
        ("train(an int)", "int", lambda: sb.train(42, budget=2)),
        ("evaluate(a Bundle)", "Bundle", lambda: sb.evaluate(bundle, budgets="2", folds=2)),
        ("predict(a Simulation, ...)", "Simulation", lambda: sb.predict(sim, stream)),
        ("predict(bundle, an int)", "int", lambda: sb.predict(bundle, 42)),
        ("features(sensors=a Bundle)", "Bundle", lambda: sb.features(stream, sensors=bundle)),
        ("simulate(bundle, a Dataset)", "Dataset",
         lambda: sb.simulate(bundle, data, backend="python")),
        ("simulate(a Dataset, ...)", "Dataset", lambda: sb.simulate(data, stream)),
        ("firmware(a Simulation)", "Simulation", lambda: sb.firmware(sim, target="host")),
        ("load(None)", "None", lambda: sb.load(None)),
    ]


@pytest.mark.parametrize("case", range(10))
def test_a_wrong_kind_is_one_package_error_naming_it(pipeline, case):
    what, given, call = _wrong_kinds(pipeline)[case]
    try:
        call()
    except BASE_ERRORS as exc:
        message = str(exc)
        assert "\n" not in message and given in message, (what, message)
    except Exception as exc:                                    # noqa: BLE001 - the defect
        pytest.fail(f"{what}: {type(exc).__name__} ({exc}) instead of a package error "
                    f"naming the {given} given")
    else:
        pytest.fail(f"{what}: accepted")


def test_decide_refuses_scores_of_another_width(pipeline, tmp_path):
    """``Bundle.decide`` (the one decision rule) on scores with the wrong number of columns
    is an error naming both widths, not an argmax or threshold over whatever came in."""
    classes = _ts_bundle(tmp_path)[1]
    bundle = sb.Bundle.load(tmp_path / "tsb")
    assert len(classes) == 3
    good = np.array([[0.1, 0.9, -0.2], [0.5, -0.1, 0.0]])
    assert bundle.decide(good).tolist() == [1, 0]
    for bad in (good[:, :2], np.hstack([good, good])):
        with pytest.raises(BASE_ERRORS, match=rf"{bad.shape[1]}.*3|3.*{bad.shape[1]}"):
            bundle.decide(bad)


def _ts_bundle(tmp_path):
    ts = _write_ts(tmp_path / "tiny.ts")
    spec = sensor_spec(sensors=({"name": "imu", "channels": ["dim0", "dim1"],
                                 "unit_price": 1.0, "energy_per_reading_j": 1e-6},),
                       features=[{"channels": ["imu"], "extractors": ["mean", "std", "max"]}],
                       window=10, hop=10, rate_hz=10)
    toml = write_sensors_toml(tmp_path / "ts.sensors.toml", spec)
    _ok(["train", ts, "--sensors", toml, "--budget", 2, "-o", tmp_path / "tsb"])
    return ts, sb.Bundle.load(tmp_path / "tsb").classes, toml


def test_every_surface_names_the_classes_in_one_order(tmp_path):
    """A .ts file lists its classes unsorted (BasicMotions: Standing Running Walking
    Badminton). train, predict and simulate order them as the bundle does; evaluate's tables
    and confusion matrices (results.json ``classes``) must use the same order, or the HTML
    report shows an evaluation's matrix and a simulation's with rows in different orders."""
    ts, classes, toml = _ts_bundle(tmp_path)
    assert sorted(classes) == sorted(TS_CLASSES)
    out = _ok(["predict", tmp_path / "tsb", ts, "-o", tmp_path / "p.csv"])
    header = next(x for x in out.splitlines() if "true / decided" in x)
    assert header.split()[3:] == list(classes)
    _ok(["simulate", tmp_path / "tsb", "--recordings", ts, "--backend", "python",
         "--report", tmp_path / "sim"])
    report = json.loads((tmp_path / "sim" / "report.json").read_text())
    assert report["series"]["outputs"] == ["class"]
    _ok(["evaluate", ts, "--sensors", toml, "--budgets", "2", "--folds", "2",
         "--methods", "greedy-joint", "--report", tmp_path / "ev"])
    results = json.loads((tmp_path / "ev" / "results.json").read_text())
    said = {tuple(r["classes"]) for r in results["records"] if "classes" in r}
    assert said == {tuple(classes)}, (said, classes)


def test_an_unknown_board_is_refused_naming_the_option(tmp_path):
    """``train --board uno`` said "target='uno' is not one of ...": the value is right, the
    name is that of another option (--target is firmware's)."""
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    stream = write_stream(tmp_path / "stream.csv", n=120)
    result = _cli(["train", stream, "--sensors", toml, "--budget", 2, "--board", "uno",
                   "-o", tmp_path / "b"])
    assert result.exit_code == 2
    line = result.output.strip()
    assert line.startswith("Error: ") and "\n" not in line and "'uno'" in line
    assert "board" in line.split("'uno'")[0], line
    assert not (tmp_path / "b").exists()


def test_host_time_is_not_priced_as_a_microcontroller(pipeline, tmp_path):
    """``simulate --backend host --board nucleo-f4`` took the PC's nanoseconds per prediction
    as the STM32F401's time (compute 3.7e-10 J on BasicMotions, where the nucleo-f4 image
    measures 3.7e-07 J): refuse it, or at least warn that the host's time is not the board's."""
    from tests.export.helpers import need_gcc

    need_gcc()
    result = _cli(["simulate", pipeline["root"] / "bundle", "--recordings", pipeline["stream"],
                   "--backend", "host", "--board", "nucleo-f4", "--report", tmp_path / "sim"])
    refused = result.exit_code == 2 and result.output.startswith("Error: ")
    warned = result.exit_code == 0 and any(x.startswith("Warning: ") and "host" in x
                                           for x in result.output.splitlines())
    assert refused or warned, result.output
    assert not (tmp_path / "sim").exists() or warned
    # the host priced as the host, and a counting backend priced as another board, still run
    _ok(["simulate", pipeline["root"] / "bundle", "--recordings", pipeline["stream"],
         "--backend", "host", "--board", "host", "--report", tmp_path / "sim_host"])
    _ok(["simulate", pipeline["root"] / "bundle", "--recordings", pipeline["stream"],
         "--backend", "python", "--board", "nucleo-f4", "--report", tmp_path / "sim_py"])


def test_simulating_a_firmware_on_another_core_is_refused(pipeline):
    """``sb.simulate(fw, ...)`` replays "a Firmware with its own numeric, full scales and
    board"; with ``backend="simavr"`` it replayed the Uno's AVR image and priced its cycles as
    the nucleo-f4 firmware's (BasicMotions q15: 53 385 cycles against 1 044 instructions on
    qemu-nucleo-f4). A backend whose image has another core is refused before anything runs;
    the same core (unicorn-m4f's mps2-an386 image for a nucleo-f4) and python are not."""
    fw = sb.firmware(pipeline["root"] / "bundle", target="nucleo-f4")
    for backend in ("host", "simavr", "qemu-hifive1"):
        with pytest.raises(DeviceError, match=rf"backend='{backend}' runs the .* not this "
                                              r"nucleo-f4 firmware's core"):
            sb.simulate(fw, pipeline["stream"], backend=backend)
    sim = sb.simulate(fw, pipeline["stream"], backend="python")
    assert sim.board == "nucleo-f4" and sim.mismatches == 0


def test_recording_folds_keep_every_class_in_training(tmp_path):
    """Nested CV of a multi-class set of recordings: 12 equal recordings, 4 of each class
    (cases interleaved walk, run, sit, ... as an archive may list them). ``--folds 3`` was
    refused ("target 'sit' has a single value in the training rows of fold 0"): the folds are
    GroupKFold's, which balances sizes and here puts a class's recordings together; folds
    stratified by class (sklearn's StratifiedGroupKFold) keep every class in every training
    part. Reference: each outer fold's training recordings hold all three classes."""
    ts, _, toml = _ts_bundle(tmp_path)
    _ok(["evaluate", ts, "--sensors", toml, "--budgets", "2", "--folds", "3",
         "--methods", "greedy-joint", "--report", tmp_path / "ev"])
    results = json.loads((tmp_path / "ev" / "results.json").read_text())
    confusions = [np.asarray(r["confusion"]) for r in results["records"] if "confusion" in r]
    assert len(confusions) == 3
    assert sum(c.sum() for c in confusions) == 12 * 4          # every window held out once
