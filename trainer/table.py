"""The loaded feature table (:class:`Table`) and the checks every loader ends with
(:func:`finish_table`): shapes, missing values, 0/1 labels (:mod:`sensorbudget.trainer.data`
reads the files)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .errors import DataError
from .missing import MissingReport, check_drop, missing_report


@dataclass
class Table:
    """A loaded feature table."""

    X: np.ndarray
    Y: np.ndarray
    feature_names: list
    target_names: list
    task: str = "regression"
    source: dict = field(default_factory=dict)
    dropped_rows: int = 0
    groups: np.ndarray | None = None
    missing: MissingReport = field(default_factory=MissingReport)
    class_target: tuple | None = None     # (column, each row's class): trainer.class_table


def finish_table(X, Y, features, targets, *, task, source, drop_missing, na_value=None,
                 groups=None, keep_missing_targets=False) -> Table:
    """Validate shapes and values, handle missing values, check 0/1 labels; build a Table.

    ``groups`` (one id per row) is filtered with the rows. With ``keep_missing_targets`` a
    missing target value stays NaN (each target then trains on its observed rows); only rows
    with a missing feature, or with every target missing, count as missing rows.
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    if X.ndim != 2 or X.shape[1] == 0:
        raise DataError(f"no feature columns found (X has shape {X.shape})")
    if Y.shape[1] == 0:
        raise DataError("no target columns chosen (name them with --target or --labels)")
    names = [*features, *targets]
    twice = next((n for i, n in enumerate(names) if n in names[:i]), 0)
    if twice:
        raise DataError(f"duplicate column name {twice!r} in {source.get('file', source)!r}")
    if na_value is not None:
        X = np.where(X == na_value, np.nan, X)
        Y = np.where(Y == na_value, np.nan, Y)
    if keep_missing_targets:
        if np.isinf(Y).any():
            raise DataError("a target holds inf; only NaN/empty marks a missing target value")
        bad = ~np.isfinite(X).all(axis=1) | np.isnan(Y).all(axis=1)
    else:
        bad = ~np.isfinite(X).all(axis=1) | ~np.isfinite(Y).all(axis=1)
    dropped = int(bad.sum())
    if dropped and not drop_missing:
        row = int(np.flatnonzero(bad)[0])
        col = _first_missing_column(X[row], Y[row], features, targets)
        raise DataError(f"missing or non-finite value in row {row + 1}, column {col!r} "
                        f"({dropped} row(s) affected); use --drop-missing to drop them")
    y_missing = np.isnan(Y[bad]) if keep_missing_targets else ~np.isfinite(Y[bad])
    cells = np.hstack([~np.isfinite(X[bad]), y_missing])
    report = missing_report(cells, bad, [*features, *targets])
    check_drop(report, drop_missing)
    if dropped:
        X, Y = X[~bad], Y[~bad]
    if groups is not None:
        groups = np.asarray(groups)[~bad]
        if groups.dtype.kind in "US" and (groups == "").any():
            raise DataError(f"the group column is empty in kept row {int(np.argmax(groups == '')) + 1}")
    if X.shape[0] < 2:
        raise DataError(f"{X.shape[0]} usable row(s); at least 2 are required")
    if task == "multilabel" and not _labels_ok(Y):
        for j, name in enumerate(targets):
            values = np.unique(Y[:, j][~np.isnan(Y[:, j])])
            if not np.isin(values, (0.0, 1.0)).all():
                bad = float(values[~np.isin(values, (0.0, 1.0))][0])
                raise DataError(f"label column {name!r} holds the value {bad!r}; labels must be 0/1")
            if values.size < 2:
                raise DataError(f"label column {name!r} has only one class ({values[0]:g}) in "
                                f"{len(Y)} rows; every label needs both 0 and 1")
    return Table(X=X, Y=Y, feature_names=list(features), target_names=list(targets), task=task,
                 source=source, dropped_rows=dropped, groups=groups, missing=report)


def _labels_ok(Y) -> bool:
    """Every label column holds only 0, 1 (or NaN) and both 0 and 1 (one vectorised pass; the
    column-by-column check names the first offending column otherwise)."""
    if not Y.size or np.isnan(Y.max()) or Y.min() < 0.0 or Y.max() > 1.0:
        return False                  # NaN, or a value outside [0, 1]: checked column-wise
    return bool(((Y == 0.0) | (Y == 1.0)).all() and (Y.min(axis=0) == 0.0).all()
                and (Y.max(axis=0) == 1.0).all())


def _first_missing_column(xrow, yrow, features, targets):
    for value, name in zip(list(xrow) + list(yrow), list(features) + list(targets)):
        if not math.isfinite(value):
            return name
    return "?"
