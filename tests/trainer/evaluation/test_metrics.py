"""The paper's seven multi-label measures and per-target regression measures: hand-computed
cases, ties and degenerate cases, and scikit-learn where it has the same definition."""

import numpy as np
import pytest
from sklearn import metrics as skm

from sensorbudget.trainer.evaluation import metrics

# Four examples, three labels; worked out by hand in the comments of each test.
Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 0]])
S = np.array([[0.9, 0.2, -0.5],      # predicted {0, 1}
              [-0.3, 0.8, 0.1],      # predicted {1, 2}
              [0.4, -0.2, -0.9],     # predicted {0}
              [-1.0, -1.0, -1.0]])   # predicted {}


def test_bipartition_measures_hand_case():
    assert metrics.zero_one_loss(Y, S) == pytest.approx(3 / 4)       # only the last row is exact
    assert metrics.hamming_loss(Y, S) == pytest.approx(4 / 12)       # 2 + 1 + 1 + 0 wrong entries
    # Jaccard per row: 1/3, 1/2, 1/2 and 0/0 := 1
    assert metrics.accuracy(Y, S) == pytest.approx((1 / 3 + 1 / 2 + 1 / 2 + 1) / 4)


def test_ranking_measures_hand_case():
    # top labels 0, 1, 0 are relevant; the last row's top (a tie, lowest index 0) is not
    assert metrics.one_error(Y, S) == pytest.approx(1 / 4)
    # depth of the lowest relevant label minus 1: 2, 0, 1, and 0 for the empty row
    assert metrics.coverage(Y, S) == pytest.approx(3 / 4)
    # row 0: (-0.5 vs 0.2) reversed of 2 pairs; other rows 0 or no pairs
    assert metrics.ranking_loss(Y, S) == pytest.approx(0.5 / 4)
    # label AUCs 1, 3/4, 2/3
    assert metrics.macro_auc(Y, S) == pytest.approx((1 + 3 / 4 + 2 / 3) / 3)


def test_threshold_is_strict():
    assert metrics.hamming_loss([[1, 0]], [[0.0, 0.0]]) == 0.5       # score 0 means "off"
    assert metrics.hamming_loss([[1, 0]], [[0.5, 0.4]], threshold=0.45) == 0


def test_ties():
    y = np.array([[1, 0, 0]])
    tie = np.array([[0.5, 0.5, 0.1]])
    assert metrics.ranking_loss(y, tie) == pytest.approx(1 / 2)       # a tie counts as reversed
    assert metrics.coverage(y, tie) == 1                              # pessimistic: both tied labels
    assert metrics.one_error(np.array([[0, 1, 0]]), tie) == 1         # tie for the top -> index 0
    auc_y = np.array([[1], [0], [1], [0]])
    assert metrics.macro_auc(auc_y, np.array([[1.0], [1.0], [2.0], [0.0]])) == pytest.approx(
        (1 + 0.5 + 1 + 1) / 4)                                  # the tied pair counts 1/2


def test_macro_auc_skips_one_class_labels():
    y = np.array([[1, 0], [0, 0], [1, 0]])
    s = np.array([[0.3, 1.0], [0.1, 2.0], [0.2, 3.0]])
    value, skipped = metrics.macro_auc(y, s, return_skipped=True)
    assert value == 1.0 and skipped == [1]
    assert np.isnan(metrics.macro_auc(np.zeros((3, 2)), s))
    assert metrics.multilabel_scores(y, s)["auc_skipped_labels"] == [1]


def test_degenerate_rows():
    all_on = np.ones((2, 3))
    s = np.array([[1.0, -1.0, 2.0], [0.1, 0.2, 0.3]])
    assert metrics.ranking_loss(all_on, s) == 0                       # no (relevant, irrelevant) pair
    assert metrics.coverage(all_on, s) == 2
    assert metrics.accuracy(np.zeros((1, 3)), -np.ones((1, 3))) == 1.0
    assert metrics.accuracy(np.zeros((1, 3)), np.ones((1, 3))) == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agree_with_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    y = (rng.random((40, 5)) < 0.4).astype(int)
    y[y.sum(axis=1) == 0, rng.integers(5)] = 1                 # every example has a label
    s = np.round(rng.normal(size=(40, 5)), 1)                  # rounding creates ties
    pred = (s > 0).astype(int)
    assert metrics.hamming_loss(y, s) == pytest.approx(skm.hamming_loss(y, pred))
    assert metrics.zero_one_loss(y, s) == pytest.approx(skm.zero_one_loss(y, pred))
    assert metrics.accuracy(y, s) == pytest.approx(
        skm.jaccard_score(y, pred, average="samples", zero_division=1))
    assert metrics.coverage(y, s) == pytest.approx(skm.coverage_error(y, s) - 1)
    assert metrics.ranking_loss(y, s) == pytest.approx(skm.label_ranking_loss(y, s))
    assert metrics.macro_auc(y, s) == pytest.approx(skm.roc_auc_score(y, s, average="macro"))


def test_regression_against_scikit_learn_and_hand_case():
    y = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])
    p = np.array([[1.0, 1.0], [3.0, -1.0], [2.0, 0.0]])
    per = metrics.regression_per_target(y, p)
    np.testing.assert_allclose(per["mse"], [2 / 3, 2 / 3])
    np.testing.assert_allclose(per["mae"], [2 / 3, 2 / 3])
    assert per["r2"][0] == pytest.approx(1 - 2 / 2)            # SSE 2, SST 2
    assert np.isnan(per["r2"][1])                               # constant target: undefined
    out = metrics.regression_scores(y, p, ["a", "b"])
    assert out["r2"] == pytest.approx(0.0) and np.isnan(out["r2[b]"])
    rng = np.random.default_rng(0)
    y, p = rng.normal(size=(20, 3)), rng.normal(size=(20, 3))
    per = metrics.regression_per_target(y, p)
    np.testing.assert_allclose(per["mse"], skm.mean_squared_error(y, p, multioutput="raw_values"))
    np.testing.assert_allclose(per["mae"], skm.mean_absolute_error(y, p, multioutput="raw_values"))
    np.testing.assert_allclose(per["r2"], skm.r2_score(y, p, multioutput="raw_values"))


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="equal"):
        metrics.hamming_loss(np.zeros((2, 3)), np.zeros((2, 2)))
