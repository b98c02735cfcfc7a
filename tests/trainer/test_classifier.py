"""GreedyRLSClassifier's decisions (issue 27, item 4): the CLI's threshold choices, one decision
rule, Platt probabilities; checked against brute force and scikit-learn."""

import numpy as np
import pytest
from sklearn.metrics import f1_score, precision_score

from sensorbudget.trainer import GreedyRLSClassifier, TrainerError


def _data(seed=0, n=90):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    Y = (X[:, :3] + 0.8 * rng.normal(size=(n, 3)) > np.array([0.5, 0.0, -0.4])).astype(int)
    return X, Y


def _candidates(s):
    u = np.unique(s)
    return np.concatenate([[u[0] - 1.0], 0.5 * (u[:-1] + u[1:]), [u[-1] + 1.0]])


def test_f1_thresholds_maximise_heldout_f1_by_brute_force():
    X, Y = _data()
    est = GreedyRLSClassifier(budget=3, lam=1.0).fit(X, Y)          # default: "f1"
    H = est.heldout_predictions_
    for j in range(Y.shape[1]):
        best = max(f1_score(Y[:, j], H[:, j] > c, zero_division=0) for c in _candidates(H[:, j]))
        got = f1_score(Y[:, j], H[:, j] > est.thresholds_[j], zero_division=0)
        assert got == pytest.approx(best, abs=1e-12)
    np.testing.assert_array_equal(est.predict(X),
                                  (est.decision_function(X) > est.thresholds_).astype(int))
    assert est.decision_["rule"] == "f1" and est.decision_["heldout"] == "loo"


def test_precision_rule_reaches_the_precision_with_most_recall():
    X, Y = _data(1)
    est = GreedyRLSClassifier(budget=3, lam=1.0, threshold="precision:0.8").fit(X, Y)
    H = est.heldout_predictions_
    for j in range(Y.shape[1]):
        ok = [c for c in _candidates(H[:, j])
              if (H[:, j] > c).any() and precision_score(Y[:, j], H[:, j] > c) >= 0.8]
        if ok:
            assert est.thresholds_[j] == pytest.approx(min(ok))


@pytest.mark.parametrize("threshold,value", [(0.0, 0.0), ("zero", 0.0), (0.3, 0.3)])
def test_fixed_thresholds(threshold, value):
    X, Y = _data(2)
    est = GreedyRLSClassifier(budget=3, lam=1.0, threshold=threshold).fit(X, Y)
    np.testing.assert_array_equal(est.thresholds_, np.full(3, value))
    np.testing.assert_array_equal(est.predict(X), (est.decision_function(X) > value).astype(int))
    assert not hasattr(est, "predict_proba")


def test_platt_probabilities_are_a_logistic_fit_of_the_heldout_scores():
    X, Y = _data(3)
    est = GreedyRLSClassifier(budget=3, lam=1.0, platt=True).fit(X, Y)
    S, H = est.decision_function(X), est.heldout_predictions_
    P = est.predict_proba(X)
    for j, (a, b) in enumerate(est.decision_["platt"]):
        np.testing.assert_allclose(P[:, j], 1 / (1 + np.exp(-(a * S[:, j] + b))), rtol=1e-12)
        # the fitted (a, b) is the likelihood optimum: the gradient of the smoothed Platt
        # log-likelihood vanishes there (computed here, independently of the fitter)
        pos, neg = Y[:, j].sum(), (1 - Y[:, j]).sum()
        t = np.where(Y[:, j] == 1, (pos + 1) / (pos + 2), 1 / (neg + 2))
        p = 1 / (1 + np.exp(-(a * H[:, j] + b)))
        assert np.abs([np.sum((p - t) * H[:, j]), np.sum(p - t)]).max() < 1e-6


def test_multiclass_ignores_the_threshold_and_decides_by_argmax():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 5))
    y = np.array(["walk", "run", "sit"])[np.argmax(X[:, :3] + 0.3 * rng.normal(size=(80, 3)), 1)]
    est = GreedyRLSClassifier(budget=3, lam=1.0, threshold="precision:0.9").fit(X, y)
    scores = est.decision_function(X)
    np.testing.assert_array_equal(est.predict(X), est.classes_[np.argmax(scores, axis=1)])
    assert not hasattr(est, "thresholds_")


@pytest.mark.parametrize("bad", ["f2", "precision:2", float("nan"), True, [0.1]])
def test_bad_thresholds_are_named(bad):
    X, Y = _data()
    with pytest.raises(TrainerError, match="threshold"):
        GreedyRLSClassifier(budget=2, threshold=bad).fit(X, Y)


def test_a_fixed_threshold_with_platt_keeps_only_what_holds_for_it(tmp_path):
    from sensorbudget.trainer.bundle.model import bundle_contents, load_bundle, save_bundle

    X, Y = _data(5)
    est = GreedyRLSClassifier(budget=3, lam=1.0, threshold=0.25, platt=True).fit(X, Y)
    assert set(est.decision_) == {"rule", "heldout", "thresholds", "platt"}
    assert est.decision_["rule"] == "0.25" and est.decision_["thresholds"] == [0.25] * 3
    meta, arrays = bundle_contents(est, X, [f"f{i}" for i in range(6)], ["a", "b", "c"],
                                   task="multilabel")
    save_bundle(tmp_path / "b", meta, arrays)
    bundle = load_bundle(tmp_path / "b")
    np.testing.assert_array_equal(bundle.predict(X), est.predict(X))
    np.testing.assert_allclose(bundle.predict_proba(X), est.predict_proba(X), rtol=1e-12)
