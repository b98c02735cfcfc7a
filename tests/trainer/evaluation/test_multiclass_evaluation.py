"""Nested CV of a multi-class task (issue 27): one column of class values or one-hot columns;
each fold's decisions are the class of the largest score, scored like scikit-learn does and
equal to a GreedyRLSClassifier fitted on the training fold by hand."""

import numpy as np
import pytest
from sklearn import metrics as skm

from sensorbudget.trainer import GreedyRLSClassifier, TrainerError
from sensorbudget.trainer.evaluation.protocol import EvalData, Setup, evaluate, make_folds
from sensorbudget.trainer.evaluation.report import markdown_report, pooled_confusion, summary_table


def _data(seed=0, n=90):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = np.argmax(X[:, :3] + 0.7 * rng.normal(size=(n, 3)), axis=1) * 10 + 10   # 10, 20, 30
    return X, y


@pytest.mark.parametrize("one_hot", [False, True])
def test_fold_measures_equal_a_hand_fitted_classifier(one_hot):
    X, y = _data()
    Y = (np.eye(3)[y // 10 - 1] if one_hot else y[:, None].astype(float))
    data = EvalData(X, Y, "multiclass", ["10", "20", "30"] if one_hot else ["activity"])
    result = evaluate(data, ["greedy-joint"], "1,3", folds=3,
                      setup=Setup(task="multiclass", lam=1.0))
    assert result.measures == ["accuracy", "balanced_accuracy", "macro_f1"]
    splits = make_folds(len(X), 3, 0)
    pooled = np.zeros((3, 3), dtype=int)
    for r in result.records:
        train, test = splits[r["fold"]]
        clf = GreedyRLSClassifier(budget=int(r["budget"]), lam=1.0).fit(X[train], y[train])
        got = clf.predict(X[test])
        assert r["accuracy"] == pytest.approx(skm.accuracy_score(y[test], got))
        assert r["balanced_accuracy"] == pytest.approx(skm.balanced_accuracy_score(y[test], got))
        assert r["macro_f1"] == pytest.approx(skm.f1_score(y[test], got, average="macro"))
        assert r["classes"] == ["10", "20", "30"] and r["decision"] == "argmax"
        if r["budget"] == "3":
            pooled += skm.confusion_matrix(y[test], got, labels=[10, 20, 30])
    M, classes = pooled_confusion(result, "greedy-joint", "3")
    np.testing.assert_array_equal(M, pooled)
    text = summary_table(result)
    assert "balanced accuracy" in text and "summed over the held-out outer folds" in text
    assert "class of the largest score" in markdown_report(result)


def test_rows_that_are_not_one_hot_are_refused():
    X, _ = _data()
    Y = np.zeros((len(X), 3))
    Y[:, 0] = 1
    Y[0, 1] = 1
    with pytest.raises(TrainerError, match="one-hot"):
        evaluate(EvalData(X, Y, "multiclass"), ["greedy-joint"], "1", folds=3,
                 setup=Setup(task="multiclass", lam=1.0))
