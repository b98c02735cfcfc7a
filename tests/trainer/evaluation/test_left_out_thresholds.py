"""Thresholds chosen without each row (trainer.evaluation.calibration.left_out_thresholds)
against a slow loop that calls the rule on the other rows, and the honest F1 they give."""

import numpy as np
import pytest
from sklearn.metrics import f1_score

from sensorbudget.trainer.evaluation.calibration import (
    choose_thresholds,
    decision_entry,
    f1_threshold,
    left_out_thresholds,
    precision_threshold,
)


def _slow(scores, y, rule):
    out = []
    for i in range(scores.size):
        s, t = np.delete(scores, i), np.delete(y, i)
        if rule == "f1":
            out.append(f1_threshold(s, t))
        elif rule == "zero":
            out.append(0.0)
        else:
            out.append(precision_threshold(s, t, float(rule.split(":")[1])))
    return np.array(out)


def _labels(seed, n, ties, rate=0.35):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < rate
    s = rng.normal(size=n) + 1.2 * y - 0.4
    if ties:
        s = np.round(s, 1)
    return s, y.astype(int)


@pytest.mark.parametrize("rule", ["f1", "precision:0.8", "precision:0.99", "zero"])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_left_out_thresholds_equal_a_slow_loop(seed, ties, rule):
    n = [2, 3, 7, 40, 80, 150][seed]
    s, y = _labels(seed, n, ties, rate=[0.5, 0.3, 0.1, 0.35, 0.05, 0.6][seed])
    np.testing.assert_array_equal(left_out_thresholds(s, y, rule), _slow(s, y, rule))


@pytest.mark.parametrize("case", ["one positive", "all positive", "no positive", "constant"])
def test_left_out_thresholds_edge_cases(case):
    s = np.array([0.3, -1.0, 2.0, 0.5, 0.5, -0.2])
    y = {"one positive": [0, 0, 1, 0, 0, 0], "all positive": [1] * 6,
         "no positive": [0] * 6, "constant": [1, 0, 1, 0, 1, 0]}[case]
    if case == "constant":
        s = np.full(6, 0.7)
    y = np.array(y)
    for rule in ("f1", "precision:0.9"):
        np.testing.assert_array_equal(left_out_thresholds(s, y, rule), _slow(s, y, rule))


def test_decision_entry_reports_tuned_and_rechosen_f1():
    """The tuned F1 is the F1 at thresholds chosen on all rows; the rechosen F1 decides each
    row by the other rows' threshold (sklearn's f1_score on those decisions), and is not
    above the tuned one on average."""
    rng = np.random.default_rng(7)
    Y = (rng.random((120, 4)) < 0.3).astype(int)
    S = rng.normal(size=Y.shape) + 0.8 * Y
    entry = decision_entry(S, Y, "f1")
    th = choose_thresholds(S, Y, "f1")
    for j in range(4):
        assert entry["heldout_f1"][j] == pytest.approx(f1_score(Y[:, j], S[:, j] > th[j]))
        own = _slow(S[:, j], Y[:, j], "f1")
        assert entry["rechosen_f1"][j] == pytest.approx(f1_score(Y[:, j], S[:, j] > own))
    assert np.mean(entry["rechosen_f1"]) < np.mean(entry["heldout_f1"])
