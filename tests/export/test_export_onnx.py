"""ONNX: the skl2onnx converters and the bundle exporter, checked against numpy, onnxruntime and
the ONNX reference evaluator."""

import json

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator
from skl2onnx import to_onnx
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sensorbudget import export
from sensorbudget.export import ExportError, OnnxModel, bundle_to_onnx, describe_onnx, read_metadata
from tests.export.helpers import mulan, mulan_bundle, synthetic, synthetic_bundle
from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier


def check(model):
    onnx.checker.check_model(model, full_check=True)
    return model


def run_ort(model, X):
    return OnnxModel(model).run(X)


# --- skl2onnx converters -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ydim", [1, 3])
def test_regressor_converter(dtype, ydim):
    est, X, _, _ = synthetic("regression", t=ydim, budget=3)
    model = check(to_onnx(est, X[:1].astype(dtype)))
    scores = run_ort(model, X.astype(dtype))["scores"]
    expected = est.predict(X).reshape(len(X), -1)
    assert scores.shape == (len(X), ydim) and scores.dtype == dtype
    if dtype == np.float64:
        np.testing.assert_allclose(scores, expected, rtol=1e-14, atol=1e-14)
        ref = ReferenceEvaluator(model).run(None, {"X": X})[0]
        np.testing.assert_allclose(ref, expected, rtol=1e-14, atol=1e-14)
    else:
        np.testing.assert_allclose(scores, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("task", ["multilabel", "multiclass"])
def test_classifier_converter(task):
    est, X, _, _ = synthetic(task, t=3, budget=4)
    model = check(to_onnx(est, X[:1]))
    out = run_ort(model, X)
    label_name = "labels" if task == "multilabel" else "label"
    assert list(out) == [label_name, "scores"]       # the decision first: what predict gives
    np.testing.assert_array_equal(out[label_name], est.predict(X))
    np.testing.assert_allclose(out["scores"], est._scores(X), rtol=1e-14, atol=1e-14)


def test_classifier_converter_string_classes_and_pipeline():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 6))
    y = np.array(["walk", "run", "sit"])[np.argmax(X[:, :3], axis=1)]
    pipe = make_pipeline(StandardScaler(), GreedyRLSClassifier(budget=3, lam=1.0)).fit(X, y)
    model = check(to_onnx(pipe, X[:1]))
    out = run_ort(model, X)
    np.testing.assert_array_equal(out["label"], pipe.predict(X))
    reg = make_pipeline(StandardScaler(), GreedyRLS(budget=2, lam=1.0)).fit(X, X[:, 0] * 2 + 1)
    for dtype, tol in ((np.float64, 1e-13), (np.float32, 1e-5)):
        scores = run_ort(check(to_onnx(reg, X[:1].astype(dtype))), X.astype(dtype))["scores"]
        np.testing.assert_allclose(scores[:, 0], reg.predict(X), rtol=tol, atol=tol)


def test_registration_happens_on_import():
    from skl2onnx._supported_operators import sklearn_operator_name_map
    assert sklearn_operator_name_map[GreedyRLS] == export.onnx_convert.REGRESSOR_ALIAS
    assert sklearn_operator_name_map[GreedyRLSClassifier] == export.onnx_convert.CLASSIFIER_ALIAS


# --- bundle exporter ---------------------------------------------------------------------

def _compare(bundle, X, model, inputs, dtype):
    Xin = X if inputs == "all" else X[:, bundle.selected_index]
    out = run_ort(model, Xin.astype(dtype))
    expected = bundle.decision_scores(X)
    names = [o.name for o in model.graph.output]
    ref = ReferenceEvaluator(model).run(None, {"features": Xin.astype(dtype)})
    ref = [ref[names.index("scores")]]
    assert names[0] == {"regression": "scores", "multilabel": "decisions",
                        "multiclass": "label"}[bundle.task]
    if dtype == np.float64:
        # The bundle graph unrolls the sum in the bundle's reference order: bit-identical.
        for got in (out["scores"], ref[0]):
            np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(out["scores"], expected, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(ref[0], expected, rtol=1e-6, atol=1e-6)
    scores = out["scores"]
    if bundle.task == "multilabel":
        th = np.asarray((bundle.meta.get("decision") or {}).get("thresholds", 0.0))
        np.testing.assert_array_equal(out["decisions"], (scores > th).astype(np.int64))
        sure = np.abs(expected - th) > 1e-5
        np.testing.assert_array_equal(out["decisions"][sure], bundle.predict(X)[sure])
    elif bundle.task == "multiclass":
        np.testing.assert_array_equal(out["label"], np.argmax(scores, axis=1))
        np.testing.assert_array_equal(out["label"], bundle.predict(X))


@pytest.mark.parametrize("dataset", ["yeast", "emotions"])
@pytest.mark.parametrize("inputs", ["all", "selected"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bundle_real_data(tmp_path, dataset, inputs, dtype):
    bundle, X = mulan_bundle(tmp_path, dataset)
    model = check(bundle_to_onnx(bundle, inputs=inputs, dtype=dtype))
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    gathered = [int(inits[f"column_{i}_index"][0]) for i in range(len(bundle.selected_index))]
    k = len(bundle.selected_index)
    assert gathered == (bundle.selected_index.tolist() if inputs == "all" else list(range(k)))
    assert model.graph.input[0].type.tensor_type.shape.dim[1].dim_value == (
        X.shape[1] if inputs == "all" else k)
    _compare(bundle, X, model, inputs, np.dtype(dtype).type)


@pytest.mark.parametrize("task,kw", [
    ("regression", dict(t=1, budget=1)),
    ("regression", dict(t=4, budget=1)),
    ("multiclass", dict(t=3, budget=3)),
    ("multiclass", dict(t=2, budget=1)),
    ("multilabel", dict(t=2, budget=1)),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bundle_edge_cases(tmp_path, task, kw, dtype):
    bundle, X = synthetic_bundle(tmp_path, task, **kw)
    for inputs in ("all", "selected"):
        model = check(bundle_to_onnx(bundle, inputs=inputs, dtype=dtype))
        assert [o.name for o in model.graph.output] == export.onnx_bundle.output_names(task)
        _compare(bundle, X, model, inputs, np.dtype(dtype).type)


def test_metadata_round_trip(tmp_path):
    extractors = [{"name": f"mean_{i}", "features": [f"f{i}"], "sensors": ["imu" if i < 4 else "mic"],
                   "cost": 0.5 + i, "params": {"window": 64 * (i + 1), "channels": ["x", "y"]}}
                  for i in range(8)]
    sensors = [{"name": "imu", "cost": 3.0, "rate_hz": 100}, {"name": "mic", "cost": 7.0}]
    _, X, meta, arrays = synthetic("multiclass", t=3, budget=4, extractors=extractors, sensors=sensors)
    from sensorbudget.trainer.bundle.model import load_bundle, save_bundle
    save_bundle(tmp_path / "b", meta, arrays)
    bundle = load_bundle(tmp_path / "b")
    path = tmp_path / "m.onnx"
    path.write_bytes(bundle_to_onnx(bundle, inputs="selected").SerializeToString())
    md = OnnxModel(path).metadata
    assert md == read_metadata(onnx.load(str(path)))
    meta = bundle.meta
    assert md["task"] == "multiclass" and md["inputs"] == "selected"
    assert md["input_features"] == md["selected_features"] == meta["selected"]
    assert [e["name"] for e in md["required_extractors"]] == meta["required_extractors"]
    by_name = {e["name"]: e for e in extractors}
    for e in md["required_extractors"]:
        assert e == by_name[e["name"]]            # window, channels, cost, sensors all there
    assert [s["name"] for s in md["required_sensors"]] == meta["required_sensors"]
    assert md["targets"] == meta["targets"]
    assert md["costs"]["extractors"] == {n: by_name[n]["cost"] for n in meta["required_extractors"]}
    assert md["bundle_sha256"] == bundle.bundle_sha256()
    from sensorbudget import __version__
    assert md["sensorbudget_version"] == __version__
    text = describe_onnx(path)
    for needle in [*meta["selected"], *meta["required_extractors"], '"window": ', "imu",
                   bundle.bundle_sha256(), "label: int64[N]"]:
        assert needle in text


def test_dtype_and_shape_errors_are_clear(tmp_path):
    bundle, X = synthetic_bundle(tmp_path, "regression", t=2)
    model = OnnxModel(bundle_to_onnx(bundle))
    with pytest.raises(ExportError, match=r"dtype float64; this model takes float32"):
        model.run(X)
    with pytest.raises(ExportError, match=r"shape \(120, 3\); this model takes \(n, 8\)"):
        model.run(X[:, :3].astype(np.float32))
    with pytest.raises(ExportError, match="not a readable ONNX"):
        (tmp_path / "junk.onnx").write_bytes(b"\x00\xffnot onnx")
        describe_onnx(tmp_path / "junk.onnx")


def test_weights_beyond_float32_are_refused_not_written_as_inf(tmp_path):
    """Targets near 1e39 give weights beyond float32's 3.4e38: float32 export is an error
    (before, the ONNX file held inf); float64 export keeps them and runs like numpy."""
    bundle, X = synthetic_bundle(tmp_path, "regression", t=2, offset=0.0)
    arrays = dict(bundle.arrays, W=bundle.arrays["W"] * 1e39, b=bundle.arrays["b"] * 1e39)
    big = type(bundle)(meta=bundle.meta, arrays=arrays)
    assert np.abs(big.W).max() > np.finfo(np.float32).max
    with pytest.raises(ExportError,
                       match=r"weight .* is not finite as float32 \(limit 3.4e\+38\)"):
        bundle_to_onnx(big)
    est = GreedyRLS(budget=2, lam=1.0).fit(X, X[:, :2] @ np.array([[1e39, 0], [0, 2e39]]))
    with pytest.raises(ExportError, match="not finite as float32"):
        to_onnx(est, X[:1].astype(np.float32))
    scores = run_ort(check(bundle_to_onnx(big, dtype="float64")), X)["scores"]
    np.testing.assert_allclose(scores, big.decision_scores(X), rtol=1e-12)


def test_options_and_determinism(tmp_path):
    bundle, _ = synthetic_bundle(tmp_path, "multilabel")
    a = bundle_to_onnx(bundle, opset=13).SerializeToString()
    assert a == bundle_to_onnx(bundle, opset=13).SerializeToString()
    m18 = bundle_to_onnx(bundle, opset=18)
    assert 13 <= m18.opset_import[0].version <= 18
    assert bundle_to_onnx(bundle, opset=13).opset_import[0].version == 13
    for bad, match in [(dict(opset=7), "opset=7 is outside 13"), (dict(dtype="int8"), "dtype='int8'"),
                       (dict(inputs="some"), "inputs='some'")]:
        with pytest.raises(ExportError, match=match):
            bundle_to_onnx(bundle, **bad)


def test_real_data_loader_matches_shapes():
    X, Y, features, labels = mulan("emotions")
    assert X.shape == (593, 72) and Y.shape == (593, 6) and len(features) == 72
    assert json.dumps(labels)
