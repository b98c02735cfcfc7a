"""Thresholds and Platt scaling against brute force and scikit-learn; held-out predictions
against explicit refits that fit the intercept inside each fold."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score, precision_score

from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.errors import TrainerError
from sensorbudget.trainer.evaluation.calibration import (
    candidate_thresholds,
    choose_thresholds,
    decision_entry,
    f1_threshold,
    heldout_predictions,
    parse_rule,
    platt_fit,
    precision_threshold,
    ridge_heldout,
)


def _labels(seed, n=60, ties=False):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.35
    s = rng.normal(size=n) + 1.2 * y - 0.4
    if ties:
        s = np.round(s, 1)
    return s, y.astype(int)


def _brute(scores, y, measure, better):
    """The first candidate (descending) whose measure is best by ``better``."""
    best, chosen = None, None
    for c in sorted(set(candidate_thresholds(scores)), reverse=True):
        value = measure(y, (scores > c).astype(int))
        if best is None or better(value, best):
            best, chosen = value, c
    return chosen, best


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("ties", [False, True])
def test_f1_threshold_is_the_brute_force_maximum(seed, ties):
    s, y = _labels(seed, ties=ties)
    chosen, best = _brute(s, y, lambda a, b: f1_score(a, b, zero_division=0.0),
                          lambda v, b: v > b)
    assert f1_threshold(s, y) == chosen
    assert f1_score(y, (s > f1_threshold(s, y)).astype(int)) == pytest.approx(best)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("target", [0.5, 0.8, 0.95, 1.0])
def test_precision_threshold_is_the_lowest_reaching_the_target(seed, target):
    s, y = _labels(seed)
    cands = sorted(set(candidate_thresholds(s)), reverse=True)
    ok = [c for c in cands if (s > c).any()
          and precision_score(y, (s > c).astype(int), zero_division=0.0) >= target]
    theta = precision_threshold(s, y, target)
    if ok:
        assert theta == min(ok)
    else:
        best = max(precision_score(y, (s > c).astype(int), zero_division=0.0) for c in cands)
        assert precision_score(y, (s > theta).astype(int), zero_division=0.0) == best


def test_candidates_give_every_decision_vector_once():
    s = np.array([0.3, -1.0, 0.3, 2.0])
    c = candidate_thresholds(s)
    decisions = {tuple(s > v) for v in c}
    assert len(decisions) == len(c) == 4          # 3 distinct scores + 1


def test_platt_without_smoothing_equals_unpenalized_logistic_regression():
    s, y = _labels(5, n=200)
    a, b = platt_fit(s, y, smooth=False)
    ref = LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000).fit(s[:, None], y)
    assert a == pytest.approx(ref.coef_[0, 0], rel=1e-5)
    assert b == pytest.approx(ref.intercept_[0], rel=1e-5, abs=1e-7)


def test_platt_smoothed_targets_zero_the_gradient():
    s, y = _labels(6, n=150)
    a, b = platt_fit(s, y)
    t = np.where(y == 1, (y.sum() + 1) / (y.sum() + 2), 1 / ((1 - y).sum() + 2))
    p = 1 / (1 + np.exp(-(a * s + b)))
    assert np.abs([np.sum((p - t) * s), np.sum(p - t)]).max() < 1e-8


@pytest.mark.parametrize("text,expected", [("f1", ("f1", None)), ("zero", ("zero", None)),
                                           ("precision:0.9", ("precision", 0.9))])
def test_parse_rule(text, expected):
    assert parse_rule(text) == expected


@pytest.mark.parametrize("text", ["precision:0", "precision:1.5", "precision:x", "f2", ""])
def test_bad_rules_name_the_value(text):
    with pytest.raises(TrainerError, match="precision:P"):
        parse_rule(text)


def _explicit_heldout(X, Y, features, lam, scale, groups, fit_intercept=True):
    """Refit ridge without each group, the intercept fitted inside the fold."""
    out = np.empty_like(Y)
    Xs = X[:, features] / scale[features]
    ids = np.arange(len(X)) if groups is None else groups
    for g in np.unique(ids):
        test = ids == g
        Xtr, Ytr = Xs[~test], Y[~test]
        xm = Xtr.mean(0) if fit_intercept else np.zeros(Xs.shape[1])
        ym = Ytr.mean(0) if fit_intercept else np.zeros(Y.shape[1])
        W = np.linalg.solve((Xtr - xm).T @ (Xtr - xm) + lam * np.eye(len(features)),
                            (Xtr - xm).T @ (Ytr - ym))
        out[test] = (Xs[test] - xm) @ W + ym
    return out


@pytest.mark.parametrize("group_size", [None, 1, 3, 7])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_ridge_heldout_equals_explicit_refits(group_size, fit_intercept):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(42, 9)) * 3 + 2
    Y = X[:, :2] @ rng.normal(size=(2, 3)) + rng.normal(size=(42, 3)) + 5
    groups = None if group_size is None else np.arange(42) // group_size
    feats = [4, 0, 7]
    scale = X.std(0)
    x_mean = X.mean(0) if fit_intercept else np.zeros(9)     # the estimators' convention
    got = ridge_heldout(X, Y, feats, 0.7, x_mean, scale, fit_intercept, groups)
    np.testing.assert_allclose(got, _explicit_heldout(X, Y, feats, 0.7, scale, groups,
                                                      fit_intercept), rtol=1e-9, atol=1e-9)


def test_estimator_heldout_predictions_are_held_out():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 12))
    Y = np.sign(X[:, :3] @ rng.normal(size=(3, 2)) + 0.5 * rng.normal(size=(50, 2)))
    est = GreedyRLS(budget=4, lam=2.0).fit(X, Y)
    got = heldout_predictions(est, X, Y)
    ref = _explicit_heldout(X, Y, est.selected_, 2.0, est.x_scale_, None)
    np.testing.assert_allclose(got, ref, rtol=1e-8, atol=1e-10)
    assert not np.allclose(got, est.predict(X))       # not the training scores


def test_decision_entry_reports_its_heldout_measures():
    s1, y1 = _labels(0)
    s2, y2 = _labels(1)
    S, Y = np.column_stack([s1, s2]), np.column_stack([y1, y2])
    entry = decision_entry(S, Y, "f1", platt=True)
    assert entry["thresholds"] == list(choose_thresholds(S, Y, "f1"))
    for j in range(2):
        pred = (S[:, j] > entry["thresholds"][j]).astype(int)
        assert entry["heldout_f1"][j] == pytest.approx(f1_score(Y[:, j], pred))
    assert len(entry["platt"]) == 2 and choose_thresholds(S, Y, "zero").tolist() == [0, 0]


@pytest.mark.parametrize("groups", [None, np.arange(48) // 4])
def test_closed_form_fallback_equals_the_estimators_heldout_predictions(groups):
    rng = np.random.default_rng(8)
    X = rng.normal(size=(48, 10)) * 2 + 1
    Y = X[:, :2] @ rng.normal(size=(2, 3)) + rng.normal(size=(48, 3))
    est = GreedyRLS(budget=3, lam=0.5).fit(X, Y, groups=groups)
    if getattr(est, "heldout_predictions_", None) is None:
        pytest.skip("the estimator has no heldout_predictions_")
    ref = ridge_heldout(X, Y, est.selected_, est.lam_, est.x_mean_, est.x_scale_, True, groups)
    np.testing.assert_allclose(est.heldout_predictions_, ref, rtol=1e-8, atol=1e-10)
