"""Simulation of a multi-label bundle with calibrated thresholds: the device's scores turned
into decisions with the bundle's thresholds agree with the reference's (report.json
``decision_mismatches``, summary.md), on the python and host backends."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.device_sim.backends import PythonBackend, available_backends
from sensorbudget.device_sim.replay import decision_agreement, decision_thresholds, replay
from sensorbudget.cli_simulate import simulate_command
from tests.fixtures import TINY_SENSORS, write_stream
from sensorbudget.trainer.bundle.model import load_bundle
from sensorbudget.trainer.sensing.feature_set import load_feature_set

from .conftest import model_of, recordings_of, train


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """(bundle dir with thresholds chosen by F1, the stream, sensors.toml): labels "hi" (the
    target in its top 30 %) and "pos" (ax > 0.3) on the tiny device."""
    base = tmp_path_factory.mktemp("labelled")
    stream = write_stream(base / "stream.csv", n=400, seed=3)
    lines = stream.read_text().splitlines()
    head = lines[0].split(",")
    rows = [line.split(",") for line in lines[1:]]
    y = np.array([float(r[head.index("y")]) for r in rows])
    ax = np.array([float(r[head.index("ax")]) for r in rows])
    hi, pos = (y > np.quantile(y, 0.7)).astype(int), (ax > 0.3).astype(int)
    stream.write_text("\n".join([",".join(head + ["hi", "pos"])] + [
        ",".join(r + [str(a), str(b)]) for r, a, b in zip(rows, hi, pos)]) + "\n")
    sensors = base / "sensors.toml"
    sensors.write_text('targets = ["hi", "pos"]\ntask = "multilabel"\n' + TINY_SENSORS)
    bundle = train(stream, sensors, base / "bundle", 3, "--threshold", "f1")
    assert load_bundle(bundle).meta["decision"]["rule"] == "f1"
    return bundle, stream, sensors


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_python_backend_decisions_agree(labelled, numeric):
    bundle_dir, stream, sensors = labelled
    model = model_of(bundle_dir, numeric, full_scale={"*": 64.0} if numeric != "float32" else None)
    res = replay(PythonBackend(model), model, recordings_of(stream, model))
    d = decision_agreement(res, model)
    assert d == {"rule": "f1", "windows": len(res.records), "mismatches": 0,
                 "label_mismatches": 0}
    # independent: the float32 device decisions are the bundle's float64 decisions of the
    # trainer's feature table, except within float32 rounding of a threshold
    if numeric == "float32":
        bundle = load_bundle(bundle_dir)
        fs = load_feature_set(stream, sensors)
        assert len(fs.X) == len(res.records)
        device = np.array([r.scores for r in res.records]) > decision_thresholds(model)
        clear = np.abs(bundle.decision_scores(fs.X) - bundle.meta["decision"]["thresholds"]) > 1e-4
        np.testing.assert_array_equal(device[clear], bundle.predict(fs.X)[clear] > 0)
        assert clear.mean() > 0.95


def test_a_flipped_decision_is_counted(labelled):
    bundle_dir, stream, _ = labelled
    model = model_of(bundle_dir)
    res = replay(PythonBackend(model), model, recordings_of(stream, model))
    th = decision_thresholds(model)
    rec = res.records[3]
    rec.scores = np.array(rec.reference, dtype=np.float32)
    rec.scores[0] = th[0] + (-1.0 if rec.reference[0] > th[0] else 1.0)
    d = decision_agreement(res, model)
    assert d["mismatches"] == 1 and d["label_mismatches"] == 1


def test_regression_bundles_have_no_decision_entry(tiny):
    model = model_of(tiny[0])
    res = replay(PythonBackend(model), model, recordings_of(tiny[1], model))
    assert decision_thresholds(model) is None and decision_agreement(res, model) is None


@pytest.mark.parametrize("backend", ["python", "host"])
def test_simulate_reports_decision_mismatches(labelled, tmp_path, backend):
    if available_backends()[backend] is not None:
        pytest.skip(available_backends()[backend])
    bundle_dir, stream, _ = labelled
    out = tmp_path / "rep"
    result = CliRunner().invoke(simulate_command, [
        str(bundle_dir), "--recordings", str(stream), "--report", str(out), "--backend",
        backend, "--numeric", "q15", "--full-scale", "64"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["backend"] == backend and report["mismatches"] == 0
    assert report["decision_mismatches"] == 0
    assert report["decisions"]["windows"] == report["predictions"] > 50
    summary = (out / "summary.md").read_text()
    assert (f"Label decisions (thresholds f1): 0 of {report['predictions']} windows differ "
            f"from the reference's (0 labels).") in summary
