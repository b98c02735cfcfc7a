"""One truth per task (issue 27): on recordings, the CLI (train, predict), the Python API
(``sb.predict``, ``sb.simulate``), the Python estimator, ONNX (onnxruntime), the C header (gcc on
the host), the C library (``export c-library``, built with gcc, each recording pushed through
``<name>_push_sample``) and ``simulate --backend python`` and ``--backend host`` (the generated
firmware, built with gcc) give the same decisions and the same metrics; ``train``'s energy and
time per prediction equal ``simulate``'s on the same registry board.

Metrics are checked against scikit-learn's (the independent reference); float64 surfaces
(predict, the estimator, ONNX float64) agree exactly, float32 surfaces (the C header, the
simulated device) with numpy's float32 reference in the bundle's summation order.
"""

import csv
import json
import subprocess

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

import sensorbudget as sb
from sensorbudget.export import OnnxModel, bundle_to_onnx, c_header
from sensorbudget.cli import main
from sensorbudget.firmware_gen.targets import WARNINGS
from tests.export.helpers import CModel, float32_sequential, need_gcc
from tests.export.test_export_decisions import _run_decide
from tests.firmware_gen.library_helpers import expected, replay_values, write_tree
from tests.fixtures import write_sensors_toml, write_stream
from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier
from sensorbudget.trainer.bundle.decision import describe
from sensorbudget.trainer.bundle.model import load_bundle
from sensorbudget.trainer.sensing.feature_set import load_feature_set
from sensorbudget.trainer.sensing.recordings import load_recordings

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


#: replays recordings through the C library's push API: a fresh model (``init``) at each
#: recording's first sample, one line per completed window: the float32 scores' bits in hex, then
#: (multi-label) the decisions of ``<name>_decide``
LIBRARY_MAIN = r"""
#include <stdio.h>
#include <string.h>
#include "@n@.h"
#include "data.h"

int main(void)
{
    static @n@_t m;
    @n@_score_t scores[@N@_N_TARGETS];
    @n@_sample_t sample[@N@_N_CHANNELS];
    unsigned r, i, j, c;
    for (r = 0u; r < DATA_R; ++r) {
        @n@_init(&m);
        for (i = data_start[r]; i < data_start[r + 1u]; ++i) {
            for (c = 0u; c < @N@_N_CHANNELS; ++c) {
                sample[c] = data[i][c];
            }
            if (!@n@_push_sample(&m, sample)) {
                continue;
            }
            if (@n@_predict(&m, scores) != @N@_OK) {
                return 3;
            }
            for (j = 0u; j < @N@_N_TARGETS; ++j) {
                unsigned long bits = 0u;
                float f = (float)scores[j];
                memcpy(&bits, &f, sizeof f);
                printf("%s%08lx", j ? " " : "", bits & 0xffffffffUL);
            }
#if @DECIDE@
            {
                unsigned char decisions[@N@_N_TARGETS];
                if (@n@_decide(scores, decisions) != @N@_OK) {
                    return 4;
                }
                for (j = 0u; j < @N@_N_TARGETS; ++j) {
                    printf(" %d", decisions[j] ? 1 : 0);
                }
            }
#endif
            putchar('\n');
        }
    }
    return 0;
}
"""


def _library_replay(lib, segments, work):
    """(float32 scores, decisions or None) of the float32 C library ``lib`` (the API's
    ``CLibrary``) fed the float32 sample rows ``segments`` (one array per recording) through
    ``<name>_push_sample``, built with gcc -Werror on the host."""
    name = lib.name
    values = np.concatenate(segments)
    starts = np.cumsum([0] + [len(x) for x in segments])
    rows = ",\n".join("{" + ", ".join(f"{float(v)!r}f" for v in row) + "}" for row in values)
    data = (f"#define DATA_R {len(segments)}u\nstatic const unsigned data_start[] = "
            f"{{{', '.join(str(int(v)) for v in starts)}}};\nstatic const float data"
            f"[{len(values)}][{values.shape[1]}] = {{\n{rows}\n}};\n")
    decide = lib.task == "multilabel"
    files = dict(lib.files)
    files["main.c"] = (LIBRARY_MAIN.replace("@n@", name).replace("@N@", name.upper())
                       .replace("@DECIDE@", "1" if decide else "0"))
    files["data.h"] = data
    write_tree(files, work)
    exe = work / "replay"
    proc = subprocess.run(["gcc", *WARNINGS, "-O2", "-I", str(work / "src"), "-I", str(work),
                           *(str(work / f) for f in files if f.endswith(".c")), "-lm",
                           "-o", str(exe)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    lines = [line.split() for line in run.stdout.splitlines()]
    t = len(lines[0]) // 2 if decide else len(lines[0])
    bits = np.array([[int(v, 16) for v in line[:t]] for line in lines], dtype=np.uint32)
    decisions = np.array([[int(v) for v in line[t:]] for line in lines]) if decide else None
    return bits.view(np.float32), decisions


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

    # the Python API: sb.predict on the bundle it loads writes the CLI's CSV byte for byte and
    # says the same lines (what was predicted, the metrics and which decisions they score)
    api_bundle = sb.Bundle.load(tmp / "b")
    api = sb.predict(api_bundle, recs)
    assert api.to_csv() == (tmp / "p.csv").read_text()
    assert api.lines and all(line in out.splitlines() for line in api.lines)
    api_scores = api_bundle.selected_scores(Xs)
    np.testing.assert_array_equal(api_bundle.decide(api_scores), decided)
    if task in ("binary", "multiclass"):
        assert list(api.columns["class"]) == [classes[i] for i in decided]
    elif task == "multilabel":
        np.testing.assert_array_equal(np.column_stack([api.columns[t] for t in targets]),
                                      decided)

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

    # the Python API's simulate: the same report as the command's (wall-clock fields aside)
    api_sim = sb.simulate(tmp / "b", recs, backend="python")
    for key in ("accuracy", "series", "energy", "predictions", "mismatches", "profile"):
        assert api_sim.report[key] == report[key], key
    said_lines = api_sim.accuracy_lines()
    assert said_lines and all(x in sim_out.splitlines() for x in said_lines)

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

    # the C library (export c-library, read back with sb.load) built with gcc on the host:
    # each recording pushed sample by sample from a fresh model; float32 scores bit for bit the
    # firmware reference's and the host firmware's, decisions the bundle's
    _run(["export", "c-library", tmp / "b", "-o", tmp / "lib", "--name", "cons"])
    lib = sb.load(tmp / "lib")
    assert type(lib).__name__ == "CLibrary" and lib.name == "cons"
    rset = load_recordings(recs, float(meta["sample_rate_hz"]))
    plan = sb.library(tmp / "b", name="cons").plan
    segments = [replay_values(plan, r.columns) for r in rset.recordings]
    lib_scores, lib_decisions = _library_replay(lib, segments, tmp / "libbuild")
    ref_scores = np.concatenate([np.asarray(expected(plan, bundle, seg)[2], np.float32)
                                 for seg in segments])
    assert lib_scores.shape == (len(fs.X), len(targets if task != "multiclass"
                                               and task != "binary" else classes))
    np.testing.assert_array_equal(lib_scores.view(np.uint32), ref_scores.view(np.uint32))
    host_device = np.array(host["series"]["device"], dtype=float).T
    if task == "regression":
        # report.json keeps each float32 score to 9 significant digits: the same float32
        np.testing.assert_array_equal(lib_scores, host_device.astype(np.float32))
        np.testing.assert_allclose(lib_scores, decided, rtol=1e-5, atol=1e-5)
    elif task == "multilabel":
        np.testing.assert_array_equal(lib_decisions, decided)
        np.testing.assert_array_equal(lib_decisions, host_device)
    else:
        np.testing.assert_array_equal(lib_scores.argmax(1), decided)
        np.testing.assert_array_equal(lib_scores.argmax(1), host_device[:, 0])

    # one cost model: train's sensor energy per prediction is simulate's
    energy = report["energy"]["energy_per_prediction_j"]["sensors"]
    assert meta["costs"]["total"]["energy"] == pytest.approx(energy, rel=1e-12)
    assert f"energy {energy:.4g} J" in train_out                    # what train prints
    per_sensor = {s["name"]: s for s in meta["sensors"]}
    assert energy == pytest.approx(sum(per_sensor[s]["energy_per_prediction_j"]
                                       for s in meta["required_sensors"]), rel=1e-12)


@pytest.mark.parametrize("backend", ["python", "unicorn-m4f"])
def test_train_energy_and_time_per_prediction_equal_simulate_on_the_board(tmp_path, backend):
    """``train``'s energy and time per prediction (model.json ``costs.total``, as train and info
    print them) are ``simulate --board nucleo-f4``'s on the same bundle: the sensors' min(window,
    hop) readings plus the extractors' compute priced on the board (its clock, CPI and active
    power), once ``calibrate`` has fed the simulated per-extractor costs into sensors.toml: the
    python backend's op-count estimate, and unicorn-m4f's instructions measured on the
    mps2-an386 image and priced as the nucleo-f4. Both take the median prediction's compute
    (simulate's energy: the median of pushes + extractors + model; train: the median pushes
    and window pass, without the model kernel, which no selection budget counts). Equal within
    float rounding
    (rel 1e-12): both sides sum the same products in another order."""
    if backend != "python":
        from sensorbudget.device_sim.backends import available_backends

        reason = available_backends().get(backend)
        if reason is not None:
            pytest.skip(f"backend {backend}: {reason}")
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    recs = _recordings(tmp_path / "recs", "multiclass")
    _run(["train", recs, "--sensors", toml, "--budget", 3, "-o", tmp_path / "b"])
    _run(["simulate", tmp_path / "b", "--recordings", recs, "--backend", backend,
          "--board", "nucleo-f4", "--report", tmp_path / "sim"])
    cal = tmp_path / "calibrated.sensors.toml"
    cal.write_bytes(toml.read_bytes())
    _run(["calibrate", tmp_path / "sim", "--sensors", cal,
          *(["--allow-estimated"] if backend == "python" else [])])
    train_out = _run(["train", recs, "--sensors", cal, "--budget", 3, "-o", tmp_path / "b2"])
    first, meta = load_bundle(tmp_path / "b").meta, load_bundle(tmp_path / "b2").meta
    assert meta["selected"] == first["selected"]
    sim_out = _run(["simulate", tmp_path / "b2", "--recordings", recs, "--backend", backend,
                    "--board", "nucleo-f4", "--report", tmp_path / "sim2"])
    report = json.loads((tmp_path / "sim2" / "report.json").read_text())
    api = sb.simulate(tmp_path / "b2", recs, backend=backend, board="nucleo-f4")
    assert api.board == report["profile"]["name"] == "nucleo-f4"
    assert api.cost["total"] == report["cost"]["total"]      # deterministic counts
    assert api.energy["energy_per_prediction_j"] == report["energy"]["energy_per_prediction_j"]
    assert "costed on nucleo-f4" in sim_out

    profile, cost, energy = report["profile"], report["cost"], report["energy"]
    seconds_per_unit = profile["cpi"] / profile["clock_hz"]
    # simulate prices the median prediction: compute energy = median(extractors + model)
    # units x CPI / clock x active power (device_sim.costs.energy_budget)
    assert energy["energy_per_prediction_j"]["compute"] == pytest.approx(
        cost["total"]["median"] * seconds_per_unit * profile["active_power_w"], rel=1e-12)
    # ... and calibrate splits the median extractor compute (window pass) and the median
    # pushes (storing the new samples) over the extractors
    assert sum(cost["per_extractor"].values()) == pytest.approx(cost["extractors"]["median"],
                                                                rel=1e-12)
    assert sum(cost["per_extractor_push"].values()) == pytest.approx(
        cost["pushes"]["median"], rel=1e-12)
    extractors_s = (cost["extractors"]["median"] + cost["pushes"]["median"]) * seconds_per_unit
    total = meta["costs"]["total"]
    # energy: the sensors' (the same readings) plus the extractors' compute (pushes + window
    # pass) on the board
    assert energy["energy_per_prediction_j"]["sensors"] == pytest.approx(
        first["costs"]["total"]["energy"], rel=1e-12)
    assert total["energy"] == pytest.approx(energy["energy_per_prediction_j"]["sensors"]
                                            + extractors_s * profile["active_power_w"],
                                            rel=1e-12)
    assert total["energy"] > first["costs"]["total"]["energy"]        # the compute is counted
    # time: the sensors' read time plus the extractors' compute time on the board's clock
    assert total["time"] == pytest.approx(energy["sensor_time_per_prediction_s"] + extractors_s,
                                          rel=1e-12)
    assert f"energy {total['energy']:.4g} J, time {total['time']:.4g} s" in train_out
    info = _run(["info", tmp_path / "b2"])
    assert f"energy {total['energy']:.4g} J, time {total['time']:.4g} s" in info
