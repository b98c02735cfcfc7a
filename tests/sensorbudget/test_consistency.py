"""One truth per task (issue 27): on recordings, the CLI (train, predict), the Python estimator,
ONNX (onnxruntime), the C header (gcc on the host) and ``simulate --backend python`` and
``--backend host`` (the generated firmware, built with gcc) give the same decisions and the
same metrics; ``train``'s energy per prediction equals ``simulate``'s.

Metrics are checked against scikit-learn's (the independent reference); float64 surfaces
(predict, the estimator, ONNX float64) agree exactly, float32 surfaces (the C header, the
simulated device) with numpy's float32 reference in the bundle's summation order.
"""

import csv
import json

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    f1_score,
    hamming_loss,
    mean_squared_error,
)

from sensorbudget.export import OnnxModel, bundle_to_onnx, c_header
from sensorbudget.cli import main
from tests.export.helpers import CModel, float32_sequential, need_gcc
from tests.export.test_export_decisions import _run_decide
from tests.fixtures import write_sensors_toml, write_stream
from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier
from sensorbudget.trainer.bundle.decision import describe
from sensorbudget.trainer.bundle.model import load_bundle
from sensorbudget.trainer.sensing.feature_set import load_feature_set

ACTS = ("walk", "run", "sit")


def _recordings(root, task):
    """Labelled recordings of the tiny device (tests/fixtures.py) in a folder with index.csv:
    ``activity`` (binary: walk/sit; multiclass: walk/run/sit) and, for multilabel, ``place``."""
    rng = np.random.default_rng(5)
    root.mkdir()
    header = ["file", "activity"] + (["place"] if task == "multilabel" else [])
    rows = [",".join(header)]
    n_rec = 6 if task == "binary" else 9
    for i in range(n_rec):
        act = ("walk", "sit")[i // 3] if task == "binary" else ACTS[i // 3]
        n = 100 + 9 * i
        t = np.arange(n) / 20
        amp = {"walk": 1.0, "run": 2.0, "sit": 0.2}[act]
        ax = amp * np.sin(t * (3 + i % 3)) + 0.3 * rng.normal(size=n)
        ay = amp * np.cos(t * 2) + 0.3 * rng.normal(size=n)
        tt = 20 + {"walk": 0.5, "run": 1.0, "sit": 0.0}[act] + 0.3 * rng.normal(size=n)
        lines = ["time,ax,ay,t"] + [f"{t[k]:.2f},{ax[k]:.6f},{ay[k]:.6f},{tt[k]:.4f}"
                                    for k in range(n)]
        (root / f"r{i}.csv").write_text("\n".join(lines) + "\n")
        rows.append(f"r{i}.csv,{act}" + (f",{('in', 'out')[i % 2]}" if task == "multilabel"
                                          else ""))
    (root / "index.csv").write_text("\n".join(rows) + "\n")
    return root


def _run(args):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _printed(output, label):
    line = next(x for x in output.splitlines() if x.strip().startswith(label + " "))
    return float(line.split()[-1])


@pytest.fixture(params=["regression", "binary", "multiclass", "multilabel"])
def trained(request, tmp_path):
    task = request.param
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    recs = (write_stream(tmp_path / "stream.csv", n=300) if task == "regression"
            else _recordings(tmp_path / "recs", task))
    out = _run(["train", recs, "--sensors", toml, "--budget", 3, "-o", tmp_path / "b"])
    return task, recs, toml, tmp_path, out


def _estimator(task, fs, meta):
    if task == "regression":
        return GreedyRLS(budget=3).fit(fs.X.astype(np.float64), fs.Y)
    if task == "multilabel":
        return GreedyRLSClassifier(budget=3).fit(fs.X.astype(np.float64), fs.Y.astype(int))
    names = np.asarray(fs.target_names)
    return GreedyRLSClassifier(budget=3).fit(fs.X.astype(np.float64), names[fs.Y.argmax(1)])


def test_every_surface_gives_the_same_decisions_and_metrics(trained):
    task, recs, toml, tmp, train_out = trained
    bundle = load_bundle(tmp / "b")
    meta = bundle.meta
    assert meta["task"] == ("multiclass" if task == "binary" else task)
    fs = load_feature_set(recs, toml)
    Xs = fs.X.astype(np.float64)[:, bundle.selected_index]
    decided = bundle.predict(Xs, selected=True)                  # the one rule, float64

    # CLI predict: CSV decisions and printed metrics
    out = _run(["predict", tmp / "b", recs, "-o", tmp / "p.csv"])
    rows = _csv(tmp / "p.csv")
    assert len(rows) == len(fs.X)
    targets, classes = meta["targets"], meta.get("classes") or meta["targets"]
    if task == "regression":
        got = np.array([[float(r[t]) for t in targets] for r in rows])
        np.testing.assert_array_equal(got, decided)
        assert _printed(out, "MSE") == pytest.approx(mean_squared_error(fs.Y, decided),
                                                     rel=1e-5)
    elif task == "multilabel":
        got = np.array([[int(r[t]) for t in targets] for r in rows])
        np.testing.assert_array_equal(got, decided)
        assert "calibrated threshold" in out
        assert _printed(out, "Hamming loss") == pytest.approx(hamming_loss(fs.Y, decided),
                                                              rel=1e-5)
        assert _printed(out, "macro-F1") == pytest.approx(
            f1_score(fs.Y, decided, average="macro", zero_division=0), rel=1e-5)
    else:
        truth = fs.Y.argmax(1)
        assert [r["class"] for r in rows] == [classes[i] for i in decided]
        assert "class of the largest score" in out
        for label, ref in (("accuracy", accuracy_score(truth, decided)),
                           ("balanced accuracy", balanced_accuracy_score(truth, decided)),
                           ("macro-F1", f1_score(truth, decided, average="macro"))):
            assert _printed(out, label) == pytest.approx(ref, rel=1e-5)
        M = confusion_matrix(truth, decided, labels=range(len(classes)))
        lines = out.splitlines()
        top = next(i for i, x in enumerate(lines) if "true / decided" in x)
        assert lines[top].split()[3:] == list(classes)
        printed = [[int(v) for v in x.split()[1:]] for x in lines[top + 1:top + 1 + len(M)]]
        assert printed == M.tolist()

    # the Python estimator, fitted on the same features with the CLI's defaults
    est = _estimator(task, fs, meta)
    assert [fs.feature_names[i] for i in est.selected_] == meta["selected"]
    predicted = est.predict(fs.X.astype(np.float64))
    if task in ("binary", "multiclass"):
        np.testing.assert_array_equal(predicted, np.asarray(classes)[decided])
    elif task == "multilabel":
        np.testing.assert_array_equal(est.thresholds_, meta["decision"]["thresholds"])
        np.testing.assert_array_equal(predicted, decided)
    else:
        np.testing.assert_allclose(predicted.reshape(decided.shape), decided, rtol=1e-9)

    # ONNX through onnxruntime: its first output is the decision, and info says so
    onnx_out = OnnxModel(bundle_to_onnx(bundle, inputs="selected", dtype="float64")).run(Xs)
    np.testing.assert_array_equal(next(iter(onnx_out.values())), decided)
    _run(["export", "onnx", tmp / "b", "-o", tmp / "m.onnx", "--dtype", "float64"])
    first = {"regression": "scores", "multilabel": "decisions"}.get(task, "label")
    assert f"decision: output '{first}': {describe(meta)}" in _run(["info", tmp / "m.onnx"])
    cli_onnx = OnnxModel(tmp / "m.onnx").run(fs.X.astype(np.float64))
    assert list(cli_onnx)[0] == first
    np.testing.assert_array_equal(cli_onnx[first], decided)

    # the C header compiled with gcc: float32 decisions equal numpy's float32 reference
    X32 = fs.X[:, bundle.selected_index].astype(np.float32)
    s32 = float32_sequential(bundle.W, bundle.b, X32)
    header = c_header(bundle)
    cm = CModel(tmp, header, meta["task"])
    if task == "multilabel":
        ref32 = (s32 > np.asarray(meta["decision"]["thresholds"], np.float32)).astype(int)
        np.testing.assert_array_equal(_run_decide(tmp, header, X32), ref32)
    elif task == "regression":
        ref32 = s32
        np.testing.assert_array_equal(cm.predict(X32), ref32)
    else:
        ref32 = np.argmax(s32, axis=1)
        np.testing.assert_array_equal(cm.labels(X32), ref32)
    if task != "regression":
        np.testing.assert_array_equal(ref32, decided)      # no decision sits on a tie here

    # simulate --backend python: the device's decisions, metrics and sensor energy
    sim_out = _run(["simulate", tmp / "b", "--recordings", recs, "--backend", "python",
                    "--report", tmp / "sim"])
    report = json.loads((tmp / "sim" / "report.json").read_text())
    device = report["accuracy"]["device"]
    assert device["n"] == len(fs.X)
    said = next(x for x in sim_out.splitlines() if x.startswith("device vs the recordings'"))
    assert "in-sample" in said and (task == "regression" or describe(meta) in said)
    if task == "regression":
        rmse = np.sqrt(np.mean((s32 - fs.Y) ** 2, axis=0))
        assert device["rmse"] == pytest.approx(float(rmse.mean()), rel=1e-6)
    elif task == "multilabel":
        assert device["hamming_loss"] == pytest.approx(hamming_loss(fs.Y, decided))
        assert device["macro_f1"] == pytest.approx(_printed(out, "macro-F1"), rel=1e-5)
    else:
        assert device["confusion"] == M.tolist()
        assert device["accuracy"] == pytest.approx(_printed(out, "accuracy"), rel=1e-5)
        assert device["macro_f1"] == pytest.approx(_printed(out, "macro-F1"), rel=1e-5)
    series = report["series"]["device"]
    if task != "regression":
        got = np.array(series, dtype=float).T.reshape(len(fs.X), -1)
        np.testing.assert_array_equal(np.sort(got, axis=0),
                                      np.sort(np.asarray(decided, float).reshape(got.shape),
                                              axis=0))

    # the firmware built for the host and replayed through the framed protocol decides alike
    need_gcc()
    _run(["simulate", tmp / "b", "--recordings", recs, "--backend", "host",
          "--report", tmp / "sim_host"])
    host = json.loads((tmp / "sim_host" / "report.json").read_text())
    assert host["mismatches"] == 0
    assert host["accuracy"]["device"] == device
    assert host["series"]["device"] == report["series"]["device"]
    assert host["energy"]["energy_per_prediction_j"]["sensors"] == \
        report["energy"]["energy_per_prediction_j"]["sensors"]

    # one cost model: train's sensor energy per prediction is simulate's
    energy = report["energy"]["energy_per_prediction_j"]["sensors"]
    assert meta["costs"]["total"]["energy"] == pytest.approx(energy, rel=1e-12)
    assert f"energy {energy:.4g} J" in train_out                    # what train prints
    per_sensor = {s["name"]: s for s in meta["sensors"]}
    assert energy == pytest.approx(sum(per_sensor[s]["energy_per_prediction_j"]
                                       for s in meta["required_sensors"]), rel=1e-12)
