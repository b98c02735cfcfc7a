"""Outer folds that respect time and recordings; checks before the first fit; the text table."""

import warnings

import numpy as np
import pytest

from sensorbudget.trainer.errors import TrainerError, TrainerWarning
from sensorbudget.trainer.evaluation.folds import (blocked_folds, choose_split, fold_classes,
                                                   make_split, outer_folds)
from sensorbudget.trainer.evaluation.methods import Model
from sensorbudget.trainer.evaluation.protocol import EvalData, evaluate, make_folds
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


def _interleaved(n_rec=12, classes=3, rows=5):
    """Recordings of ``rows`` windows each, one class per recording, listed in class order
    (0, 1, 2, 0, 1, 2, ...) as an archive may list them: (groups, class per row)."""
    groups = np.repeat(np.arange(n_rec), rows)
    return groups, groups % classes


def test_group_folds_of_interleaved_classes_keep_every_class_in_training():
    """GroupKFold (balanced sizes only) holds out every recording of one class in a fold of
    this set; the stratified group folds keep each recording whole and deal each class's
    recordings evenly: 6 recordings per class into 3 folds is two per fold (brute-force count
    of the ideal)."""
    from sklearn.model_selection import GroupKFold

    groups, y = _interleaved(18)
    plain = list(GroupKFold(n_splits=3).split(np.zeros(len(y)), groups=groups))
    assert any(np.unique(y[train]).size < 3 for train, _ in plain)   # the defect it fixes
    splits, stratified = outer_folds("group", len(y), 3, 0, groups, classes=y)
    assert stratified
    assert np.sort(np.concatenate([te for _, te in splits])).tolist() == list(range(len(y)))
    for train, test in splits:
        assert not set(groups[train]) & set(groups[test])
        assert sorted(train.tolist() + test.tolist()) == list(range(len(y)))
        assert np.unique(y[train]).size == 3
        recordings = np.unique(groups[test])
        per_class = [np.sum(recordings % 3 == c) for c in range(3)]
        assert per_class == [18 // 3 // 3] * 3, per_class


def test_group_folds_are_deterministic_and_unstratified_without_classes():
    """Same folds on every call and for any seed (no shuffling); no classes (regression,
    multi-label) is GroupKFold's folds exactly."""
    from sklearn.model_selection import GroupKFold

    groups, y = _interleaved(15, 3, 3)
    a = make_split("group", len(y), 5, 0, groups, classes=y)
    b = make_split("group", len(y), 5, 123, groups, classes=y)
    assert [(tr.tolist(), te.tolist()) for tr, te in a] == [(tr.tolist(), te.tolist())
                                                            for tr, te in b]
    plain = list(GroupKFold(n_splits=5).split(np.zeros(len(y)), groups=groups))
    for (tr, te), (tr2, te2) in zip(make_split("group", len(y), 5, 0, groups), plain):
        assert tr.tolist() == tr2.tolist() and te.tolist() == te2.tolist()
    assert outer_folds("group", len(y), 5, 0, groups)[1] is False


def test_fold_classes_of_values_and_of_one_hot_columns_are_the_same_partition():
    values = np.array(["sit", "walk", "run", "walk", "sit", "run", "run"])[:, None]
    names = sorted(set(values[:, 0]))
    one_hot = (values == np.array(names)[None, :]).astype(float)
    a, b = fold_classes(values, "multiclass"), fold_classes(one_hot, "multiclass")
    assert a.tolist() == b.tolist() == [names.index(v) for v in values[:, 0]]
    for task in ("regression", "multilabel", "ranking"):
        assert fold_classes(one_hot, task) is None


@pytest.mark.parametrize("groups,y,folds", [
    # StratifiedGroupKFold leaves fold 6 of these 7 groups empty
    ([0, 0, 0, 0, 1, 2, 2, 3, 4, 5, 5, 6, 6], [0, 2, 2, 2, 1, 0, 2, 2, 1, 0, 2, 2, 0], 7),
    # every class has fewer rows than folds: StratifiedGroupKFold refuses
    ([0, 1, 2, 3, 4, 5], [0, 0, 0, 1, 1, 1], 4)])
def test_group_folds_fall_back_to_group_k_fold_when_stratifying_fails(groups, y, folds):
    from sklearn.model_selection import GroupKFold

    groups, y = np.array(groups), np.array(y)
    splits, stratified = outer_folds("group", len(y), folds, 0, groups, classes=y)
    assert not stratified and all(te.size for _, te in splits)
    plain = list(GroupKFold(n_splits=folds).split(np.zeros(len(y)), groups=groups))
    assert [te.tolist() for _, te in splits] == [te.tolist() for _, te in plain]


class ClassRecorder(Recorder):
    """A Recorder that keeps the classes present in each training fold."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def fit_predict(self, X, Y, budgets, setup):
        self.seen.append(int((Y.max(axis=0) > 0).sum()))          # +-1 encoded one-hot
        return super().fit_predict(X, Y, budgets, setup)


def test_evaluate_stratifies_group_folds_of_classes_and_says_so():
    """evaluate's folds of a multi-class set are make_folds' with the classes, every
    training fold holds every class, results.json's config and the report say stratified;
    the same rows as regression targets get GroupKFold's folds."""
    from sensorbudget.trainer.evaluation.defaults import smallest_training_fold
    from sensorbudget.trainer.evaluation.report import markdown_report

    groups, y = _interleaved(12, 3, 4)
    X = np.random.default_rng(0).normal(size=(len(y), 4)) + y[:, None]
    data = EvalData(X, np.eye(3)[y], "multiclass", ["a", "b", "c"], groups=groups)
    method = ClassRecorder()
    result = evaluate(data, [method], "2", folds=3)
    assert result.config["split"] == "group" and result.config["stratified"] is True
    assert method.seen == [3, 3, 3]
    splits = make_folds(len(y), 3, 0, groups, classes=fold_classes(data.Y, "multiclass"))
    assert [r["n_test"] for r in sorted(result.records, key=lambda r: r["fold"])] == [
        len(te) for _, te in splits]
    assert smallest_training_fold(data, 3, "auto", 0) == min(len(tr) for tr, _ in splits)
    assert "stratified group K-fold" in markdown_report(result)
    reg = evaluate(EvalData(X, y[:, None].astype(float), "regression", ["y"], groups=groups),
                   [Recorder()], "2", folds=3)
    assert reg.config["stratified"] is False
    assert "stratified" not in markdown_report(reg)
