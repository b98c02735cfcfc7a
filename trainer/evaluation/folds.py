"""Outer folds that respect recordings and time, and the overlapping-windows warning.

Windows cut from a recording share samples when the hop is shorter than the window, and
neighbouring windows are alike even when they do not: shuffled K-fold then puts near-copies of
every test window into the training rows, and the scores are optimistic. The splits:

- ``group``: :class:`sklearn.model_selection.GroupKFold` on the group ids (recordings, subjects,
  queries): every group is tested on as a whole by a model that never saw it. For a
  classification task (binary or multi-class: one class per row, :func:`fold_classes`) the
  groups are dealt by :class:`sklearn.model_selection.StratifiedGroupKFold` (``shuffle=False``:
  the same folds on every run) instead, which keeps each fold's class proportions near the
  whole set's: GroupKFold balances only the folds' sizes, and recordings listed in class order
  (walk, run, sit, walk, ...) can then put every recording of one class into one test fold,
  leaving none of it to train on. Should the stratified dealing be impossible (every class has
  fewer rows than folds) or leave a fold empty, GroupKFold's folds are used;
- ``blocked``: K contiguous blocks of rows in recording and time order (block sizes differ by at
  most one row), each the test set once; the training rows are the other blocks minus every
  window of the same recording that starts less than one window length before or after a test
  window (a gap of one window length: no training window shares a sample with a test window);
  A plain table (no windows) is one sequence of rows in file order, without a gap: a time
  series table, such as hourly readings, tested on blocks later or earlier than its training
  rows (shuffled folds put each test hour between two training hours);
- ``shuffled``: shuffled K-fold (independent rows, e.g. a table without time or groups).

``auto`` takes ``group`` when there are at least as many groups as folds, else ``blocked`` for
windows of recordings (one recording, or fewer recordings than folds), else ``shuffled``.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import TrainerError, TrainerWarning

SPLITS = ("auto", "group", "blocked", "shuffled")


def overlap_warning(window, hop, command: str) -> None:
    """Warn (once per call site) that windows overlap and no grouping keeps them apart."""
    warnings.warn(
        f"{command}: windows overlap (window={window}, hop={hop} samples) and no grouping is in "
        f"force: windows sharing samples fall on both sides of a held-out split, so the "
        f"held-out error is optimistic; use --groups recording (cut one stream into recordings "
        f"with --split-gaps or --recording-column)", TrainerWarning, stacklevel=2)


def blocked_folds(n_folds: int, window_start, window: int, groups=None) -> list:
    """[(train, test)]: contiguous blocks of rows with a gap of one window length (module
    notes). Rows are taken in their given order (recording, then time)."""
    n = len(window_start)
    if not 2 <= n_folds <= n:
        raise TrainerError(f"folds={n_folds} must be in 2..{n} (the number of windows)")
    start = np.asarray(window_start, dtype=np.int64)
    rec = np.zeros(n, dtype=np.int64) if groups is None else np.unique(groups,
                                                                       return_inverse=True)[1]
    out = []
    for test in np.array_split(np.arange(n), n_folds):
        near = np.zeros(n, dtype=bool)
        for r in np.unique(rec[test]):
            mine = rec == r
            lo, hi = start[test][rec[test] == r].min(), start[test][rec[test] == r].max()
            near |= mine & (start > lo - window) & (start < hi + window)
        near[test] = True
        out.append((np.flatnonzero(~near), test))
    empty = [i for i, (tr, _) in enumerate(out) if tr.size == 0]
    if empty:
        raise TrainerError(f"fold {empty[0]} has no training window outside the gap of one "
                           f"window length; use fewer folds than {n_folds}")
    return out


def choose_split(split: str, n_folds: int, groups, window_start) -> str:
    """The split ``auto`` resolves to (module notes); checks an explicit one is possible."""
    if split not in SPLITS:
        raise TrainerError(f"split={split!r} is not one of {SPLITS}")
    n_groups = 0 if groups is None else np.unique(groups).size
    if split == "auto":
        if n_groups >= n_folds:
            return "group"
        return "blocked" if window_start is not None else "shuffled"
    if split == "group" and n_groups < n_folds:
        raise TrainerError(f"split 'group' has {n_groups} group(s); folds={n_folds} needs at "
                           f"least {n_folds} (use --split blocked or fewer --folds)")
    return split


def fold_classes(Y, task: str):
    """The class index of each row for stratified folds, or None when the task has no classes
    (regression, multi-label, ranking). ``Y`` is one column of class values, or one-hot 0/1
    columns: class of row i = argmax_j Y[i, j]; a column of values: the index of its value
    among the sorted distinct values."""
    if task != "multiclass":
        return None
    Y = np.asarray(Y)
    Y = Y.reshape(len(Y), -1)
    if Y.shape[1] == 1:
        return np.unique(Y[:, 0], return_inverse=True)[1].astype(np.int64)
    return np.argmax(Y, axis=1).astype(np.int64)


def group_folds(n: int, n_folds: int, groups, classes=None) -> tuple:
    """([(train, test)], stratified): folds keeping groups whole, stratified by ``classes``
    when given and possible (module notes: StratifiedGroupKFold without shuffling, else
    GroupKFold; ``stratified`` says which)."""
    from sklearn.model_selection import GroupKFold, StratifiedGroupKFold

    if classes is not None and np.unique(classes).size > 1:
        try:
            with warnings.catch_warnings():     # "least populated class ... < n_splits"
                warnings.simplefilter("ignore", UserWarning)
                out = list(StratifiedGroupKFold(n_splits=n_folds, shuffle=False)
                           .split(np.zeros(n), np.asarray(classes), groups=groups))
            if all(test.size for _, test in out):
                return out, True
        except ValueError:                      # every class has fewer rows than folds
            pass
    return list(GroupKFold(n_splits=n_folds).split(np.zeros(n), groups=groups)), False


def outer_folds(split, n: int, n_folds: int, seed: int, groups=None, window_start=None,
                window=None, classes=None) -> tuple:
    """([(train_idx, test_idx)], stratified) of the resolved ``split`` (group, blocked or
    shuffled); ``classes`` (:func:`fold_classes`) stratifies a group split by class."""
    from sklearn.model_selection import KFold

    if not 2 <= n_folds <= n:
        raise TrainerError(f"folds={n_folds} must be in 2..{n} (the number of rows)")
    if split == "group":
        return group_folds(n, n_folds, groups, classes)
    if split == "blocked" and window_start is None:      # a table: its rows in file order
        return blocked_folds(n_folds, np.arange(n), 1, groups), False
    if split == "blocked":
        return blocked_folds(n_folds, window_start, int(window or 1), groups), False
    return list(KFold(n_folds, shuffle=True, random_state=seed).split(np.zeros(n))), False


def make_split(split, n: int, n_folds: int, seed: int, groups=None, window_start=None,
               window=None, classes=None) -> list:
    """[(train_idx, test_idx)] of :func:`outer_folds`."""
    return outer_folds(split, n, n_folds, seed, groups, window_start, window, classes)[0]


def describe_split(split: str, n_folds: int, window=None, stratified=False) -> str:
    """One sentence for the report on how the outer folds were made."""
    if split == "group":
        return (f"{n_folds} grouped folds: the rows of a group (recording, subject or query) "
                f"stay in one fold" + (", groups dealt so that each fold's class proportions "
                                       "stay near the whole set's (stratified group K-fold)"
                                       if stratified else ""))
    if split == "blocked" and window is None:
        return (f"{n_folds} contiguous blocks of rows in file order (not shuffled rows; no "
                f"gap between training and test rows)")
    if split == "blocked":
        return (f"{n_folds} contiguous blocks in time order (not shuffled rows), with a gap of "
                f"one window length ({window} samples) between training and test windows of "
                f"a recording")
    return (f"{n_folds} shuffled folds (rows treated as independent; rows in time order: "
            f"--split blocked)")
