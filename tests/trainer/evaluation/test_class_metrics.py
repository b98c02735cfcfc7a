"""Class decision measures (binary and multi-class) against scikit-learn's, on seeded random
decisions, including classes that never occur in the truth or in the decisions."""

import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

from sensorbudget.trainer.evaluation.metrics import (
    class_scores,
    confusion_lines,
    confusion_matrix,
    one_hot_classes,
    task_scores,
)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_class_scores_equal_scikit_learn(seed, n_classes):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    truth = rng.integers(0, n_classes - (seed % 2), size=n)     # odd seeds: one class unseen
    decided = np.where(rng.random(n) < 0.6, truth, rng.integers(0, n_classes, size=n))
    got = class_scores(truth, decided, n_classes)
    assert got["accuracy"] == pytest.approx(skm.accuracy_score(truth, decided))
    with warnings.catch_warnings():            # "y_pred contains classes not in y_true"
        warnings.simplefilter("ignore")
        balanced = skm.balanced_accuracy_score(truth, decided)
    assert got["balanced_accuracy"] == pytest.approx(balanced)
    assert got["macro_f1"] == pytest.approx(skm.f1_score(truth, decided, average="macro",
                                                         zero_division=0))
    np.testing.assert_array_equal(confusion_matrix(truth, decided, n_classes),
                                  skm.confusion_matrix(truth, decided,
                                                       labels=range(n_classes)))


def test_task_scores_multiclass_reads_one_hot_truth_and_scores_the_decisions():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 3, size=40)
    Y = np.eye(3)[truth]
    scores = rng.normal(size=(40, 3))
    decided = scores.argmax(axis=1)
    got = task_scores("multiclass", Y, scores, decided)
    assert got["confusion"] == skm.confusion_matrix(truth, decided).tolist()
    assert got["macro_f1"] == pytest.approx(skm.f1_score(truth, decided, average="macro"))


def test_task_scores_multilabel_scores_the_given_decisions_not_the_sign():
    rng = np.random.default_rng(4)
    Y = rng.integers(0, 2, size=(50, 4))
    scores = rng.normal(size=(50, 4))
    D = (scores > np.array([0.5, -0.5, 0.0, 1.0])).astype(int)
    got = task_scores("multilabel", Y, scores, D)
    assert got["hamming_loss"] == pytest.approx(skm.hamming_loss(Y, D))
    assert got["zero_one_loss"] == pytest.approx(skm.zero_one_loss(Y, D))
    assert got["micro_f1"] == pytest.approx(skm.f1_score(Y, D, average="micro"))
    assert got["accuracy"] == pytest.approx(skm.jaccard_score(Y, D, average="samples",
                                                              zero_division=1))
    assert got["macro_auc"] == pytest.approx(skm.roc_auc_score(Y, scores, average="macro"))
    assert got["hamming_loss"] != pytest.approx(skm.hamming_loss(Y, scores > 0))


def test_one_hot_classes_of_numbers_and_strings():
    names, Y = one_hot_classes(np.array([2.0, 1.0, 2.0, 3.0]))
    assert names == ["1", "2", "3"]
    np.testing.assert_array_equal(Y.argmax(1), [1, 0, 1, 2])
    names, Y = one_hot_classes(np.array(["walk", "sit", "walk"]))
    assert names == ["sit", "walk"] and Y.sum() == 3


def test_confusion_lines_name_rows_and_columns():
    lines = confusion_lines([[3, 1], [0, 2]], ["a", "b"])
    assert lines[0].split()[3:] == ["a", "b"]
    assert [line.split() for line in lines[1:]] == [["a", "3", "1"], ["b", "0", "2"]]
