"""Calibrated label decisions in ONNX (onnxruntime) and in the compiled C header equal numpy's."""

import numpy as np
import pytest

from sensorbudget.export import c_header
from sensorbudget.export.c_decisions import integer_thresholds
from sensorbudget.export.fixed_point import dequantize_scores, predict_int, quantize_inputs
from tests.export.helpers import CModel, compile_c, float32_sequential, mulan, synthetic
from sensorbudget.trainer import GreedyRLSClassifier
from sensorbudget.trainer.bundle.model import bundle_contents, load_bundle, save_bundle
from sensorbudget.trainer.evaluation.calibration import decision_entry, heldout_predictions


def calibrated_bundle(tmp_path, rule="f1", platt=True, data="synthetic"):
    """A multi-label bundle whose thresholds come from held-out scores; and its X."""
    X, Y01, est, meta, arrays = _fit(data)
    scores = heldout_predictions(est, X, 2.0 * Y01 - 1.0)
    meta["decision"] = decision_entry(scores, Y01, rule, platt=platt)
    save_bundle(tmp_path / "cal", meta, arrays)
    return load_bundle(tmp_path / "cal"), X


def _fit(data):
    if data == "synthetic":
        rng = np.random.default_rng(7)
        X = rng.normal(size=(160, 10)) * 2 + 1
        Y01 = (X[:, :3] @ rng.normal(size=(3, 4)) + rng.normal(size=(160, 4))
               > np.array([1.5, 0.5, -0.5, 2.0])).astype(int)
        names = [f"f{i}" for i in range(10)]
    else:
        X, Y01, names, _ = mulan(data)
    est = GreedyRLSClassifier(budget=5, lam=1.0).fit(X, Y01)
    meta, arrays = bundle_contents(est, X, names, [f"l{j}" for j in range(Y01.shape[1])],
                                   task="multilabel")
    return X, Y01, est, meta, arrays


def _selected(bundle, X):
    return np.asarray(X, np.float64)[:, bundle.selected_index]


def _numpy_float32_decisions(bundle, X):
    s32 = float32_sequential(bundle.W, bundle.b, _selected(bundle, X))
    return (s32 > np.asarray(bundle.meta["decision"]["thresholds"], np.float32)).astype(int)


@pytest.mark.parametrize("rule", ["f1", "precision:0.8"])
def test_onnx_decisions_equal_numpy(tmp_path, rule):
    from sensorbudget.export import OnnxModel, bundle_to_onnx

    bundle, X = calibrated_bundle(tmp_path, rule)
    assert not np.array_equal(bundle.predict(X), (bundle.decision_scores(X) > 0).astype(int))
    out64 = OnnxModel(bundle_to_onnx(bundle, dtype="float64")).run(X.astype(np.float64))
    np.testing.assert_array_equal(out64["decisions"], bundle.predict(X))
    np.testing.assert_allclose(out64["probabilities"], bundle.predict_proba(X), rtol=1e-9,
                               atol=1e-15)
    out32 = OnnxModel(bundle_to_onnx(bundle, dtype="float32")).run(X.astype(np.float32))
    np.testing.assert_array_equal(out32["decisions"], _numpy_float32_decisions(bundle, X))
    np.testing.assert_allclose(out32["probabilities"], bundle.predict_proba(X), rtol=1e-4,
                               atol=1e-6)
    assert list(out32)[:2] == ["decisions", "scores"]         # the decision is the first output


def test_onnx_without_calibration_decides_by_the_sign(tmp_path):
    from sensorbudget.export import OnnxModel, bundle_to_onnx, read_metadata
    from sensorbudget.export.onnx_bundle import output_names

    _, X, meta, arrays = synthetic("multilabel")
    meta.pop("decision")                      # the estimator's thresholds: a bundle without
    save_bundle(tmp_path / "b", meta, arrays)
    bundle = load_bundle(tmp_path / "b")
    model = bundle_to_onnx(bundle, dtype="float64")
    assert [o.name for o in model.graph.output] == output_names("multilabel") == \
        ["decisions", "scores"]
    out = OnnxModel(model).run(X.astype(np.float64))
    np.testing.assert_array_equal(out["decisions"], bundle.predict(X))
    np.testing.assert_array_equal(out["decisions"], (out["scores"] > 0).astype(int))
    assert "score > 0" in read_metadata(model)["decision"]


def test_c_float32_decide_equals_numpy(tmp_path):
    bundle, X = calibrated_bundle(tmp_path)
    header = c_header(bundle)
    assert "sbmodel_decide(const float *features, unsigned char *decisions)" in header.text
    assert "sbmodel_platt_a" in header.text
    cm = CModel(tmp_path, header, "multilabel")
    Xs = _selected(bundle, X).astype(np.float32)
    decided = _run_decide(tmp_path, header, Xs)
    np.testing.assert_array_equal(decided, _numpy_float32_decisions(bundle, X))
    np.testing.assert_array_equal(cm.labels(Xs), (cm.predict(Xs) > 0).astype(np.uint8))


@pytest.mark.parametrize("numeric", ["q15", "q31"])
def test_c_fixed_point_decide_equals_integer_reference(tmp_path, numeric):
    bundle, X = calibrated_bundle(tmp_path, platt=False)
    header = c_header(bundle, numeric=numeric)
    Xq = quantize_inputs(header.fixed, _selected(bundle, X))
    scores = dequantize_scores(header.fixed, predict_int(header.fixed, Xq))
    expected = (scores > np.asarray(bundle.meta["decision"]["thresholds"])).astype(int)
    np.testing.assert_array_equal(_run_decide(tmp_path, header, Xq), expected)
    assert (expected != (scores > 0)).any()


def test_integer_thresholds_decide_as_the_real_threshold():
    from types import SimpleNamespace

    from sensorbudget.export.fixed_point import FORMATS

    fixed = SimpleNamespace(fmt=FORMATS["q15"], score_frac_bits=10)
    th = np.array([0.0, -0.3, 0.2501, 1e9, -1e9, 2.0 ** -10, -2.0 ** -10])
    q = np.array(integer_thresholds(th, fixed))
    scores_q = np.arange(-32768, 32768)
    for j in range(th.size):
        np.testing.assert_array_equal(scores_q > q[j], scores_q * 2.0 ** -10 > th[j])


def test_uncalibrated_header_decides_by_sign(tmp_path):
    _, X, meta, arrays = synthetic("multilabel")
    meta.pop("decision")                      # the estimator's thresholds: a bundle without
    save_bundle(tmp_path / "b", meta, arrays)
    bundle = load_bundle(tmp_path / "b")
    header = c_header(bundle)
    Xs = _selected(bundle, X).astype(np.float32)
    s32 = float32_sequential(bundle.W, bundle.b, Xs)
    np.testing.assert_array_equal(_run_decide(tmp_path, header, Xs), (s32 > 0).astype(int))


def test_decisions_on_emotions(tmp_path):
    bundle, X = calibrated_bundle(tmp_path, data="emotions")
    header = c_header(bundle)
    Xs = _selected(bundle, X).astype(np.float32)
    np.testing.assert_array_equal(_run_decide(tmp_path, header, Xs),
                                  _numpy_float32_decisions(bundle, X))


def _run_decide(tmp_path, header, Xin):
    """Compile a harness calling <name>_decide[_q] on each row of Xin; 0/1 matrix back."""
    import subprocess

    name, up, numeric = header.name, header.name.upper(), header.numeric
    it = {"float32": "float", "q15": "int16_t", "q31": "int32_t"}[numeric]
    sfx = "" if numeric == "float32" else f"_{numeric}"
    main = ("#include <stdio.h>\n#include \"model.h\"\n\nint main(void)\n{\n"
            f"    static {it} x[{up}_N_FEATURES];\n    static unsigned char d[{up}_N_TARGETS];\n"
            f"    while (fread(x, sizeof x[0], {up}_N_FEATURES, stdin) == {up}_N_FEATURES) {{\n"
            f"        {name}_decide{sfx}(x, d);\n"
            f"        fwrite(d, 1, {up}_N_TARGETS, stdout);\n    }}\n    return 0;\n}}\n")
    sub = tmp_path / f"decide_{numeric}"
    sub.mkdir(exist_ok=True)
    exe = compile_c(sub, {"model.h": header.text, "main.c": main})
    dtype = {"float32": np.float32, "q15": np.int16, "q31": np.int32}[numeric]
    proc = subprocess.run([str(exe)], input=np.ascontiguousarray(Xin, dtype).tobytes(),
                          capture_output=True, check=True)
    t = int(header.text.split(f"#define {up}_N_TARGETS ")[1].split()[0])
    return np.frombuffer(proc.stdout, np.uint8).reshape(len(Xin), t).astype(int)
