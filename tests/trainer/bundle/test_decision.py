"""The bundle's ``decision`` key: checks, predictions with its thresholds, Platt probabilities;
a bundle's features computed from recordings equal the feature pipeline's."""

import numpy as np
import pytest

from tests.fixtures import write_sensors_toml, write_stream
from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier
from sensorbudget.trainer.bundle.model import bundle_contents, load_bundle, save_bundle
from sensorbudget.trainer.bundle.recordings import features_from_recordings
from sensorbudget.trainer.errors import BundleError
from sensorbudget.trainer.sensing.feature_set import load_feature_set


def _multilabel(tmp_path, decision):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 6))
    Y = (X[:, :3] + rng.normal(size=(80, 3)) > 0).astype(int)
    est = GreedyRLSClassifier(budget=3, lam=1.0, threshold=0.0).fit(X, Y)
    meta, arrays = bundle_contents(est, X, [f"f{i}" for i in range(6)], ["a", "b", "c"],
                                   task="multilabel", decision=decision)
    save_bundle(tmp_path / "b", meta, arrays)
    return load_bundle(tmp_path / "b"), est, X


DECISION = {"rule": "f1", "heldout": "loo", "thresholds": [0.25, -0.5, 0.0],
            "platt": [[2.0, 0.1], [1.0, -0.3], [0.5, 0.0]]}


def test_predict_applies_the_thresholds_and_platt(tmp_path):
    bundle, est, X = _multilabel(tmp_path, DECISION)
    scores = est.decision_function(X)
    np.testing.assert_array_equal(bundle.predict(X),
                                  (scores > np.array([0.25, -0.5, 0.0])).astype(int))
    ab = np.array(DECISION["platt"])
    np.testing.assert_allclose(bundle.predict_proba(X),
                               1 / (1 + np.exp(-(scores * ab[:, 0] + ab[:, 1]))), rtol=1e-12)
    Xs = X[:, bundle.selected_index]
    np.testing.assert_array_equal(bundle.predict(Xs, selected=True), bundle.predict(X))


def test_without_decision_the_sign_decides(tmp_path):
    bundle, est, X = _multilabel(tmp_path, None)
    np.testing.assert_array_equal(bundle.predict(X), est.predict(X))
    assert bundle.predict_proba(X) is None


@pytest.mark.parametrize("change,needle", [
    ({"thresholds": [0.0, 1.0]}, "decision.thresholds"),
    ({"thresholds": [0.0, "x", 1.0]}, "decision.thresholds"),
    ({"rule": 3}, "decision.rule"),
    ({"platt": [[1.0, 0.0]]}, "decision.platt"),
    ({"heldout_f1": [1.0]}, "decision.heldout_f1")])
def test_malformed_decisions_are_refused(tmp_path, change, needle):
    with pytest.raises(BundleError, match=needle):
        _multilabel(tmp_path, {**DECISION, **change})


def test_decision_only_for_multilabel(tmp_path):
    X = np.random.default_rng(1).normal(size=(30, 4))
    est = GreedyRLS(budget=2, lam=1.0).fit(X, X[:, 0])
    meta, arrays = bundle_contents(est, X, list("abcd"), ["y"], task="regression",
                                   decision={"rule": "f1", "thresholds": [0.0]})
    with pytest.raises(BundleError, match="applies to task multilabel"):
        save_bundle(tmp_path / "r", meta, arrays)


def test_recording_features_equal_the_feature_pipeline(tmp_path):
    stream = write_stream(tmp_path / "s.csv", n=300, channels=("ax", "ay", "t"))
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    fs = load_feature_set(stream, toml)
    est = GreedyRLS(budget=3, lam=1.0).fit(fs.X.astype(float), fs.Y)
    extractors, sensors, extra = fs.bundle_structure()
    meta, arrays = bundle_contents(est, fs.X, fs.feature_names, fs.target_names,
                                   task="regression", extractors=extractors, sensors=sensors,
                                   extra=extra)
    save_bundle(tmp_path / "b", meta, arrays)
    bundle = load_bundle(tmp_path / "b")
    got = features_from_recordings(bundle, stream)
    np.testing.assert_array_equal(got.X, fs.X[:, bundle.selected_index])
    np.testing.assert_array_equal(got.Y, fs.Y)
    np.testing.assert_array_equal(got.window_start, fs.window_start)
    np.testing.assert_allclose(bundle.predict(got.X, selected=True), est.predict(fs.X),
                               rtol=1e-12, atol=1e-12)


def test_recordings_need_a_bundle_from_recordings(tmp_path):
    bundle, _, _ = _multilabel(tmp_path, None)
    stream = write_stream(tmp_path / "s.csv")
    with pytest.raises(BundleError, match="not trained from recordings"):
        features_from_recordings(bundle, stream)
