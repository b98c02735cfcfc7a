"""evaluate scores multi-label decisions as a trained bundle makes them: per-label thresholds
chosen on each training fold's held-out scores, checked against an explicit per-fold search."""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score, hamming_loss, jaccard_score

from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.evaluation.protocol import EvalData, Setup, evaluate, make_folds


def labels_data(n=45, d=7, t=3, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = np.zeros((d, t))
    W[:3] = rng.normal(size=(3, t))
    Y = (X @ W + 0.8 * rng.normal(size=(n, t)) > 0.7).astype(float)   # skewed labels
    return EvalData(X, Y, "multilabel", [f"l{j}" for j in range(t)])


def explicit_loo(X, Y, features, lam, x_mean, x_scale):
    """Refit ridge (unpenalized intercept) without each row and predict it."""
    Xs = (X[:, features] - x_mean[features]) / x_scale[features]
    out = np.empty_like(Y)
    for i in range(len(X)):
        keep = np.arange(len(X)) != i
        a_mean, b_mean = Xs[keep].mean(0), Y[keep].mean(0)
        A = Xs[keep] - a_mean
        W = np.linalg.solve(A.T @ A + lam * np.eye(A.shape[1]), A.T @ (Y[keep] - b_mean))
        out[i] = (Xs[i] - a_mean) @ W + b_mean
    return out


def brute_f1_threshold(scores, y):
    """Try every threshold between (and beyond) the sorted scores; best sklearn F1, ties to the
    highest threshold."""
    s = np.sort(np.unique(scores))
    candidates = np.concatenate([[s[0] - 1], (s[:-1] + s[1:]) / 2, [s[-1] + 1]])
    best, best_f1 = None, -1.0
    for c in candidates:
        f1 = f1_score(y, scores > c, zero_division=0)
        if f1 > best_f1 or (f1 == best_f1 and c > best):
            best, best_f1 = c, f1
    return best


def reference_fold(data, train, test, k, lam, mode, rule):
    """Fit on the training fold, thresholds by brute force on explicit LOO scores, decide on
    the test fold; sklearn measures."""
    X, Y = data.X, data.Y
    T = 2 * Y[train] - 1
    cols = [[q] for q in range(Y.shape[1])] if mode == "separate" else [list(range(Y.shape[1]))]
    scores_te, thresholds = np.zeros(Y[test].shape), np.zeros(Y.shape[1])
    for c in cols:
        est = GreedyRLS(budget=k, lam=lam).fit(X[train], T[:, c])
        f = np.asarray(est.selected_)
        scores_te[:, c] = est.predict(X[test]).reshape(len(test), -1)
        held = explicit_loo(X[train], T[:, c], f, lam, est.x_mean_, est.x_scale_)
        if rule == "f1":
            thresholds[c] = [brute_f1_threshold(held[:, j], Y[train][:, q] > 0)
                             for j, q in enumerate(c)]
    D, Yt = scores_te > thresholds, Y[test].astype(bool)
    return {"hamming_loss": hamming_loss(Yt, D), "zero_one_loss": 1 - accuracy_score(Yt, D),
            "accuracy": jaccard_score(Yt, D, average="samples", zero_division=1),
            "micro_f1": f1_score(Yt, D, average="micro", zero_division=0),
            "macro_f1": f1_score(Yt, D, average="macro", zero_division=0)}


@pytest.mark.parametrize("method,mode", [("greedy-joint", "joint"),
                                         ("greedy-separate", "separate")])
@pytest.mark.parametrize("rule", ["f1", "zero"])
def test_fold_decisions_equal_an_explicit_threshold_search(method, mode, rule):
    data, lam, k = labels_data(), 2.0, 3
    result = evaluate(data, [method], str(k), folds=3, setup=Setup(lam=lam, threshold=rule))
    splits = make_folds(len(data.X), 3, 0)
    for row in result.records:
        train, test = splits[row["fold"]]
        ref = reference_fold(data, train, test, k, lam, mode, rule)
        assert row["decision"] == rule
        for key, value in ref.items():
            assert row[key] == pytest.approx(value, abs=1e-12), (key, row["fold"])


def test_calibrated_thresholds_change_the_decisions_not_the_rankings():
    data = labels_data(n=60, seed=5)
    zero = evaluate(data, ["greedy-joint"], "3", folds=3, setup=Setup(lam=1.0, threshold="zero"))
    f1 = evaluate(data, ["greedy-joint"], "3", folds=3, setup=Setup(lam=1.0))
    for a, b in zip(zero.records, f1.records):
        for key in ("macro_auc", "ranking_loss", "coverage", "one_error"):
            assert a[key] == b[key]
    assert [r["hamming_loss"] for r in zero.records] != [r["hamming_loss"] for r in f1.records]
    # the F1 thresholds help F1 on skewed labels (held-out, averaged over the folds)
    assert np.mean([r["macro_f1"] for r in f1.records]) > np.mean(
        [r["macro_f1"] for r in zero.records])
