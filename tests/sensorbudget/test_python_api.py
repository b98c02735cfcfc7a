"""The README pipeline run twice, through the command line and through the Python API
(``import sensorbudget as sb``), on the same seeded recordings: every file either writes is
byte-identical (feature NPZ, bundle folder, evaluation report, predictions CSV, simulation
report with its wall-clock round trips aside, HTML report); the predictions equal numpy's
X[:, selected] @ W + b of the feature table (the reference)."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

import sensorbudget as sb
from sensorbudget.cli import main
from tests.fixtures import write_sensors_toml, write_stream


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Three seeded recordings of the tiny device and its sensors.toml."""
    root = tmp_path_factory.mktemp("api")
    for i in range(3):
        write_stream(root / "rec" / f"r{i}.csv", n=160 + 20 * i, seed=i)
    return root / "rec", write_sensors_toml(root / "sensors.toml")


def _files(folder) -> dict:
    """{relative path: bytes} of every file under ``folder``."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _cli(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def both(inputs, tmp_path_factory):
    """(cli folder, python folder), each holding feats.npz, bundle/, report/, pred.csv, sim/
    and page.html. Both runs write into the same folder, renamed after each, so that the
    paths the files record (a simulation names its bundle's) are the same."""
    rec, toml = inputs
    root = tmp_path_factory.mktemp("runs")
    run = root / "run"
    run.mkdir()
    _cli("features", rec, "--sensors", toml, "-o", run / "feats.npz")
    _cli("train", run / "feats.npz", "--budget", 3, "--max-cost", 30, "--groups", "recording",
         "-o", run / "bundle")
    _cli("evaluate", run / "feats.npz", "--budgets", "1,2", "--folds", 3, "--report",
         run / "report")
    _cli("predict", run / "bundle", rec, "-o", run / "pred.csv")
    _cli("simulate", run / "bundle", "--recordings", rec, "--backend", "python", "--report",
         run / "sim")
    _cli("report", run / "bundle", run / "sim", run / "report", "-o", run / "page.html")
    run.rename(root / "cli")

    run.mkdir()
    sb.features(rec, sensors=toml).save(run / "feats.npz")
    data = sb.Dataset.load(run / "feats.npz")
    sb.train(data, budget=3, max_cost=30, groups="recording").save(run / "bundle")
    sb.evaluate(run / "feats.npz", budgets="1,2", folds=3).save(run / "report")
    sb.predict(sb.Bundle.load(run / "bundle"), rec).save(run / "pred.csv")
    sb.simulate(run / "bundle", rec, backend="python").save(run / "sim")
    sb.report([run / "bundle", run / "sim", run / "report"]).save(run / "page.html")
    run.rename(root / "py")
    return root / "cli", root / "py"


#: wall-clock fields of report.json (the link's measured round trips), set aside
WALL_CLOCK = ("round_trip_s",)


def _comparable(name, files) -> dict:
    """``files`` with the wall-clock fields of a simulation's report.json set aside (and its
    manifest, which holds that file's sha256)."""
    if name != "sim":
        return files
    report = json.loads(files.pop("report.json"))
    files.pop("sensorbudget-manifest.json")
    return {**files, "report.json": {k: v for k, v in report.items() if k not in WALL_CLOCK}}


@pytest.mark.parametrize("name", ["feats.npz", "bundle", "report", "pred.csv", "sim",
                                  "page.html"])
def test_cli_and_python_write_the_same_bytes(both, name):
    cli, py = both
    if (cli / name).is_dir():
        ours, theirs = (_comparable(name, _files(d / name)) for d in (cli, py))
        assert sorted(ours) == sorted(theirs) and ours
        different = [f for f in ours if ours[f] != theirs[f]]
        assert different == []
    else:
        assert (cli / name).read_bytes() == (py / name).read_bytes()


def test_predictions_equal_numpy_on_the_feature_table(both):
    cli, _ = both
    fs = sb.Dataset.load(cli / "feats.npz")
    model = json.loads((cli / "bundle" / "model.json").read_text())
    with np.load(cli / "bundle" / "weights.npz", allow_pickle=False) as npz:
        W, b = npz["W"], npz["b"]
    X = fs.X[:, model["selected_index"]]
    expected = X @ W + b
    got = sb.Predictions.load(cli / "pred.csv")
    np.testing.assert_allclose(got.columns["y"], expected[:, 0], rtol=1e-9, atol=1e-12)
    assert got.ids["window_start"].tolist() == fs.feature_set.window_start.tolist()


def test_loaded_objects_read_back_what_was_saved(both, tmp_path):
    cli, _ = both
    bundle = sb.Bundle.load(cli / "bundle")
    bundle.save(tmp_path / "again")
    assert _files(tmp_path / "again") == _files(cli / "bundle")
    evaluation = sb.Evaluation.load(cli / "report")
    assert evaluation.to_dict() == json.loads((cli / "report" / "results.json").read_text())
    data = sb.Dataset.load(cli / "feats.npz")
    data.save(tmp_path / "feats.npz")
    assert (tmp_path / "feats.npz").read_bytes() == (cli / "feats.npz").read_bytes()


def test_the_api_loads_on_first_use():
    """``import sensorbudget`` loads no library package (the console entry point imports it
    before its signal handlers); each API name then resolves in its package's api module."""
    import subprocess
    import sys

    code = ("import json, sys, sensorbudget as sb\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'click') "
            "or m.startswith('sensorbudget.'))\n"
            "names = {n: getattr(sb, n).__module__ for n in sb._API}\n"
            "print(json.dumps([heavy, names, sorted(sb.__all__)]))")
    heavy, names, every = json.loads(subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert heavy == [] and sorted(["__version__", *names]) == every
    assert {"sensorbudget.trainer.api", "sensorbudget.firmware_gen.api",
            "sensorbudget.device_sim.api"} <= set(names.values())
    assert all(m.startswith(("sensorbudget.trainer.", "sensorbudget.firmware_gen.api",
                             "sensorbudget.device_sim.api", "sensorbudget.export.numeric",
                             "sensorbudget.firmware_gen.boards")) for m in names.values())


def test_simulate_reads_recordings_as_features_did(tmp_path):
    """Streams with a time column named 'stamp': the option given to features travels in the
    bundle, so simulate (python backend) replays the same recordings without it and the
    device's predictions equal predict's."""
    for i in range(2):
        path = write_stream(tmp_path / "rec" / f"r{i}.csv", n=120, seed=i)
        path.write_text(path.read_text().replace("time,", "stamp,", 1))
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    bundle = sb.train(sb.features(tmp_path / "rec", toml, time_column="stamp"), budget=2,
                      lam=1.0)
    bundle.save(tmp_path / "bundle")
    sim = sb.simulate(tmp_path / "bundle", tmp_path / "rec", backend="python")
    predicted = sb.predict(bundle, tmp_path / "rec").columns["y"]
    device = np.array([r.scores[0] for r in sim.result.records])
    assert sim.mismatches == 0 and len(device) == len(predicted) > 0
    np.testing.assert_allclose(device, predicted, rtol=1e-5, atol=1e-6)   # float32 device


def test_every_typed_object_prints_as_one_short_line_of_its_own_facts(both, tmp_path):
    """A user who types the object's name at the prompt sees what it is, not its arrays, its
    C files or its report (a Simulation printed 147 KB, a Firmware 111 KB): one line, its
    counts and names, each equal to what the saved files hold."""
    _, py = both
    bundle = sb.load(py / "bundle")
    report = json.loads((py / "sim" / "report.json").read_text())
    records = json.loads((py / "report" / "results.json").read_text())["records"]
    rows = len((py / "pred.csv").read_text().splitlines()) - 1
    firmware = sb.firmware(bundle, target="host")
    library = sb.library(bundle, numeric="q15")
    library.save(tmp_path / "lib")
    saved = [p for p in (tmp_path / "lib").rglob("*") if p.is_file()]
    data = sb.load(py / "feats.npz")
    expected = [
        (bundle, [f"task={bundle.meta['task']!r}", f"targets={len(bundle.targets)}",
                  f"lam={bundle.lam!r}", repr(bundle.selected[0])]),
        (data, [f"rows={data.X.shape[0]}", f"features={len(data.feature_names)}"]),
        (sb.load(py / "sim"), [f"predictions={report['predictions']}",
                               f"mismatches={report['mismatches']}", f"lost={report['lost']}",
                               f"backend={report['backend']!r}"]),
        (sb.load(py / "report"), [f"records={len(records)}"]),
        (sb.load(py / "pred.csv"), [f"rows={rows}"]),
        (firmware, ["target='host'", "numeric='float32'", f"{len(firmware.files)} in all"]),
        (library, ["numeric='q15'", f"{len(saved) - 1} in all"]),    # + the manifest it saves
        (sb.load(py / "page.html"), [f"bytes={(py / 'page.html').stat().st_size}"]),
        (sb.onnx_model(bundle), [f"width={len(bundle.features)}"]),
        (sb.c_header(bundle), [f"n_features={len(bundle.selected)}"]),
        (sb.compare(py / "sim", py / "sim"), ["rows="]),
    ]
    for obj, facts in expected:
        text = repr(obj)
        assert text.startswith(type(obj).__name__ + "(") and "\n" not in text, text
        assert len(text) < 300, (type(obj).__name__, len(text))
        assert all(fact in text for fact in facts), (text, facts)
