"""Outer folds that respect time and recordings; checks before the first fit; the text table."""

import warnings

import numpy as np
import pytest

from sensorbudget.trainer.errors import TrainerError, TrainerWarning
from sensorbudget.trainer.evaluation.folds import blocked_folds, choose_split, make_split
from sensorbudget.trainer.evaluation.methods import Model
from sensorbudget.trainer.evaluation.protocol import EvalData, evaluate
from sensorbudget.trainer.evaluation.report import summary_table


def _windows(lengths, hop):
    """window starts and recording ids of recordings with ``lengths`` windows each."""
    starts = np.concatenate([np.arange(m) * hop for m in lengths])
    groups = np.concatenate([np.full(m, g) for g, m in enumerate(lengths)])
    return starts, groups


@pytest.mark.parametrize("lengths,window,hop,folds", [
    ([50], 6, 1, 5), ([50], 4, 4, 3), ([30, 20], 8, 2, 5), ([17, 9, 12], 5, 3, 4)])
def test_blocked_folds_share_no_sample_between_train_and_test(lengths, window, hop, folds):
    starts, groups = _windows(lengths, hop)
    splits = blocked_folds(folds, starts, window, groups if len(lengths) > 1 else None)
    tested = np.concatenate([te for _, te in splits])
    np.testing.assert_array_equal(tested, np.arange(len(starts)))    # contiguous, in order
    for train, test in splits:
        assert np.all(np.diff(test) == 1)
        for i in train:                  # brute force: no shared sample with any test window
            same = groups[test] == groups[i]
            assert np.all(np.abs(starts[test][same] - starts[i]) >= window)
        # and nothing further away than one window length was dropped
        dropped = np.setdiff1d(np.arange(len(starts)), np.concatenate([train, test]))
        for i in dropped:
            same = groups[test] == groups[i]
            assert np.any(np.abs(starts[test][same] - starts[i]) < window)


def test_blocked_folds_with_too_little_room_name_the_fold():
    with pytest.raises(TrainerError, match="fold 0 has no training window"):
        blocked_folds(2, np.arange(6), 10)


@pytest.mark.parametrize("n_groups,window_start,expected", [
    (10, None, "group"), (3, None, "shuffled"), (3, np.arange(30), "blocked"),
    (None, np.arange(30), "blocked"), (None, None, "shuffled")])
def test_auto_split(n_groups, window_start, expected):
    groups = None if n_groups is None else np.arange(30) % n_groups
    assert choose_split("auto", 5, groups, window_start) == expected


def test_explicit_group_split_needs_enough_groups():
    with pytest.raises(TrainerError, match="split 'group' has 3 group"):
        choose_split("group", 5, np.arange(30) % 3, None)


def test_group_split_keeps_groups_whole():
    groups = np.arange(40) % 8
    for train, test in make_split("group", 40, 4, 0, groups):
        assert not set(groups[train]) & set(groups[test])


class Recorder:
    """A method that records its fits and predicts the training mean."""

    name = "recorder"

    def __init__(self):
        self.fits = 0

    def fit_predict(self, X, Y, budgets, setup):
        self.fits += 1
        return [Model([0], np.zeros((1, Y.shape[1])), Y.mean(axis=0)) for _ in budgets]


def _stream(n=60):
    rng = np.random.default_rng(0)
    X = np.cumsum(rng.normal(size=(n, 5)), axis=0)
    Y = X[:, :1] + rng.normal(size=(n, 1))
    return EvalData(X, Y, "regression", ["y"], groups=np.zeros(n, int),
                    window_start=np.arange(n) * 2, window=6, hop=2)


def test_evaluate_on_one_recording_uses_blocks_and_says_so():
    method = Recorder()
    result = evaluate(_stream(), [method], "2", folds=4)
    assert result.config["split"] == "blocked" and not result.config["grouped"]
    assert method.fits == 4


def test_evaluate_warns_on_shuffled_overlapping_windows():
    with pytest.warns(TrainerWarning, match="windows overlap"):
        evaluate(_stream(), [Recorder()], "2", folds=3, split="shuffled")
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrainerWarning)
        evaluate(_stream(), [Recorder()], "2", folds=3)            # blocked: no warning


def test_budgets_are_checked_before_the_first_fit():
    method = Recorder()
    data = _stream(24)
    data.X = np.random.default_rng(1).normal(size=(24, 30))
    with pytest.raises(TrainerError, match=r"budget '25' \(25 features\) with method "
                                           r"'recorder' exceeds the 1\d rows"):
        evaluate(data, [method], "2,25", folds=3)
    assert method.fits == 0
    with pytest.raises(TrainerError, match="mtlasso supports count/fraction budgets only"):
        evaluate(data, ["mtlasso"], "price:3", folds=3)


def test_summary_table_stays_aligned_for_long_names():
    a, b = Recorder(), Recorder()
    a.name, b.name = "m", "a-method-with-a-very-long-name-indeed"
    result = evaluate(_stream(), [a, b], "1,2", folds=3)
    lines = summary_table(result).splitlines()
    assert len({len(line) for line in lines}) == 1, lines   # right-aligned: all end together
    head = lines[0]
    end_a = head.index(" m ") + 2                            # where the column of "m" ends
    for line in lines[1:]:
        assert line[end_a - 1] != " " and line[end_a] == " ", line
    assert lines[-1].startswith("features used") and lines[-1].split()[-1] == "1.0"


@pytest.mark.parametrize("n,folds", [(30, 5), (31, 4), (7, 7)])
def test_blocked_split_of_a_table_is_contiguous_blocks_in_file_order(n, folds):
    """A plain table (hourly readings, no windows) can be tested on blocks of rows in file
    order: each test set is one run of consecutive rows, the runs cover the rows once in order
    with sizes differing by at most one, and the training rows are all the others."""
    assert choose_split("blocked", folds, None, None) == "blocked"
    splits = make_split("blocked", n, folds, 0)
    tests = [test for _, test in splits]
    assert np.concatenate(tests).tolist() == list(range(n))
    sizes = [len(t) for t in tests]
    assert max(sizes) - min(sizes) <= 1 and len(tests) == folds
    for train, test in splits:
        assert test.tolist() == list(range(test[0], test[-1] + 1))
        assert sorted(train.tolist() + test.tolist()) == list(range(n))


def test_evaluate_on_a_table_runs_blocked_folds_and_says_so():
    from sensorbudget.trainer.evaluation.report import markdown_report

    X = np.arange(40.0)[:, None] + np.random.default_rng(0).normal(size=(40, 2))
    data = EvalData(X, X[:, :1] * 2.0, "regression", ["y"])
    result = evaluate(data, [Recorder()], "1", folds=4, split="blocked")
    assert result.config["split"] == "blocked"
    assert [r["n_test"] for r in result.records] == [10, 10, 10, 10]
    assert "4 contiguous blocks of rows in file order" in markdown_report(result)
