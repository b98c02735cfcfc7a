"""standardize_targets: selection against a brute-force greedy with explicit LOO refits on
standardised targets; weights, held-out predictions and every export (ONNX through
onnxruntime, the C header compiled and run in float32 and Q15) in the targets' own units
against numpy refits; the scale warning."""

import warnings

import numpy as np
import pytest

from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.bundle.model import bundle_contents, load_bundle, save_bundle
from sensorbudget.trainer.target_scaling import SCALE_RATIO_WARNING, TargetScaleWarning


def _problem(seed, n=45, d=7, scales=(1.0, 300.0, 0.02)):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.linspace(0.5, 3, d) + 1.0
    B = rng.normal(size=(d, len(scales))) * (rng.random((d, len(scales))) < 0.5)
    Y = (X @ B + rng.normal(size=(n, len(scales)))) * np.array(scales) + 10 * np.array(scales)
    return X, Y


def _ridge(Xs, Z, lam):
    """Ridge with an unpenalized intercept on the columns Xs (already scaled)."""
    xm, zm = Xs.mean(0), Z.mean(0)
    W = np.linalg.solve((Xs - xm).T @ (Xs - xm) + lam * np.eye(Xs.shape[1]),
                        (Xs - xm).T @ (Z - zm))
    return W, zm - xm @ W


def _loo_sse(Xs, Z, lam):
    """Squared LOO error by n explicit refits (the intercept refitted without the row)."""
    sse = 0.0
    for i in range(len(Xs)):
        keep = np.arange(len(Xs)) != i
        W, b = _ridge(Xs[keep], Z[keep], lam)
        sse += float(np.sum((Xs[i] @ W + b - Z[i]) ** 2))
    return sse


def _brute_greedy(X, Z, budget, lam):
    Xs = X / X.std(0)
    chosen = []
    for _ in range(budget):
        rest = [j for j in range(X.shape[1]) if j not in chosen]
        chosen.append(min(rest, key=lambda j: (_loo_sse(Xs[:, chosen + [j]], Z, lam), j)))
    return chosen


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_selection_is_a_brute_force_greedy_on_standardised_targets(seed):
    X, Y = _problem(seed)
    Z = (Y - Y.mean(0)) / Y.std(0)
    est = GreedyRLS(budget=3, lam=2.0, standardize_targets=True).fit(X, Y)
    assert est.selected_.tolist() == _brute_greedy(X, Z, 3, 2.0)
    # weights in target units: a numpy ridge on the raw targets with the same features
    sel = est.selected_
    W, b = _ridge(X[:, sel] / X[:, sel].std(0), Y, 2.0)
    np.testing.assert_allclose(est.coef_, W / X[:, sel].std(0)[:, None], rtol=1e-9)
    np.testing.assert_allclose(est.predict(X), (X[:, sel] / X[:, sel].std(0)) @ W + b,
                               rtol=1e-9, atol=1e-9 * np.abs(Y).max())
    np.testing.assert_allclose(est.target_scale_, Y.std(0), rtol=1e-12)
    np.testing.assert_allclose(est.target_mean_, Y.mean(0), rtol=1e-12)
    # held-out predictions in target units, equal to explicit LOO refits
    Xs = X[:, sel] / X[:, sel].std(0)
    for i in (0, 17, len(X) - 1):
        keep = np.arange(len(X)) != i
        Wi, bi = _ridge(Xs[keep], Y[keep], 2.0)
        np.testing.assert_allclose(est.heldout_predictions_[i], Xs[i] @ Wi + bi, rtol=1e-8)
    # and the criterion is on the standardised scale: the mean over targets of MSE_j / var_j
    assert est.loo_path_[-1] == pytest.approx(_loo_sse(Xs, Z, 2.0) / Z.size, rel=1e-9)


def test_without_the_option_the_largest_target_decides_and_a_warning_says_so():
    X, Y = _problem(3)
    with pytest.warns(TargetScaleWarning, match=r"differ [0-9.e+]+x .*limit 10x"):
        raw = GreedyRLS(budget=3, lam=2.0).fit(X, Y)
    assert raw.selected_.tolist() == _brute_greedy(X, Y, 3, 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TargetScaleWarning)
        GreedyRLS(budget=3, lam=2.0, standardize_targets=True).fit(X, Y)   # no warning
        GreedyRLS(budget=2, lam=2.0).fit(X, Y[:, [0, 0]] * [1, SCALE_RATIO_WARNING])  # at 10x
        labels = np.where(Y[:, :2] > Y[:, :2].mean(0), 1.0, -1.0)          # label codes
        labels[:, 1] = np.where(np.arange(len(X)) == 0, 1.0, -1.0)         # std 0.30 vs ~1
        GreedyRLS(budget=2, lam=2.0).fit(X, labels * [1, 1])


def _bundle(tmp_path, seed=4):
    X, Y = _problem(seed, n=80, d=8)
    est = GreedyRLS(budget=3, lam=1.0, standardize_targets=True).fit(X, Y)
    meta, arrays = bundle_contents(est, X, [f"f{i}" for i in range(8)], ["a", "b", "c"],
                                   task="regression")
    save_bundle(tmp_path / "b", meta, arrays)
    bundle = load_bundle(tmp_path / "b")
    sel = est.selected_
    Xs = X[:, sel] / X[:, sel].std(0)
    Z = (Y - Y.mean(0)) / Y.std(0)
    Wz, bz = _ridge(Xs, Z, 1.0)                     # numpy reference on standardised targets
    raw = (Xs @ Wz + bz) * Y.std(0) + Y.mean(0)     # ... unscaled by hand
    return bundle, X, Y, raw


def test_bundle_records_the_scales_and_predicts_in_target_units(tmp_path):
    bundle, X, Y, raw = _bundle(tmp_path)
    entry = bundle.meta["target_scaling"]
    np.testing.assert_allclose(entry["scale"], Y.std(0), rtol=1e-12)
    assert entry["folded"] is True
    np.testing.assert_allclose(bundle.predict(X), raw, rtol=1e-9, atol=1e-9)


def test_onnx_predictions_in_target_units(tmp_path):
    from sensorbudget.export import OnnxModel, bundle_to_onnx

    bundle, X, _, raw = _bundle(tmp_path)
    out = OnnxModel(bundle_to_onnx(bundle, dtype="float64")).run(X.astype(np.float64))
    np.testing.assert_allclose(out["scores"], raw, rtol=1e-9, atol=1e-7)
    out32 = OnnxModel(bundle_to_onnx(bundle)).run(X.astype(np.float32))
    assert (np.abs(out32["scores"] - raw) <= 1e-5 * np.abs(raw).max(0)).all()


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_c_header_predictions_in_target_units(tmp_path, numeric):
    from sensorbudget.export import c_header, dequantize_scores, quantize_inputs
    from tests.export.helpers import CModel

    bundle, X, Y, raw = _bundle(tmp_path)
    header = c_header(bundle, numeric=numeric)
    cm = CModel(tmp_path, header, "regression")
    Xs32 = X[:, bundle.selected_index].astype(np.float32)
    if numeric == "float32":
        assert (np.abs(cm.predict(Xs32) - raw) <= 1e-5 * np.abs(raw).max(0)).all()
        return
    got = dequantize_scores(header.fixed, cm.predict(quantize_inputs(header.fixed, Xs32)))
    assert np.abs(got - raw).max() <= header.error_bound + 1e-6 * np.abs(raw).max()
