"""The learning tasks, typed (:class:`Task`), and the one +1/-1 label encoding
(:func:`encode_labels`)."""

from __future__ import annotations

import enum

import numpy as np

from .errors import DataError

#: the task names model.json stores (a binary task is multi-class with two classes)
STORED_TASKS = ("regression", "multilabel", "multiclass")
#: the task names a user may give (sensors.toml ``task``, ``--task``, the Python API): the stored
#: ones and ``binary`` (stored as ``multiclass``; :func:`check_binary` checks the classes)
TASK_NAMES = (*STORED_TASKS, "binary")
#: the +1/-1 label encoding as (scale, shift): y = 2 Y - 1 (Dask shards apply it per worker)
LABEL_MAP = (2.0, -1.0)


class Task(str, enum.Enum):
    """A learning task. ``model.json`` stores ``regression``, ``multilabel`` or ``multiclass``;
    a binary task is a multi-class one with two classes (:meth:`of`)."""

    REGRESSION = "regression"
    BINARY = "binary"
    MULTICLASS = "multiclass"
    MULTILABEL = "multilabel"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def of(cls, task: str, n_classes: int | None = None) -> "Task":
        """The task of a stored task name (``binary`` for ``multiclass`` with 2 classes)."""
        if task == "multiclass" and n_classes == 2:
            return cls.BINARY
        try:
            return cls(task)
        except ValueError:
            raise DataError(f"task {str(task)[:40]!r} is not one of "
                            f"{', '.join(t.value for t in cls)}") from None

    @property
    def stored(self) -> str:
        """The name ``model.json`` and the estimators use (binary is ``multiclass``)."""
        return "multiclass" if self is Task.BINARY else self.value


def classes_of(Y, target_names, class_values=None) -> list:
    """The distinct classes of classification targets, as text: the non-missing values of
    ``class_values`` (a table's text classes) or of a single target column ``Y`` (n x 1, NaN =
    missing), else the names of one-hot columns (``target_names``; also when ``Y`` is None).

    >>> classes_of([[1.0], [0.0], [float("nan")], [1.0]], ["walking"])
    ['0', '1']
    >>> classes_of(None, ["sit", "walk", "run"])
    ['sit', 'walk', 'run']
    """
    if class_values is not None:
        values = [v for v in np.asarray(class_values, dtype=object).ravel().tolist()
                  if v is not None and v == v and str(v) != ""]
        return sorted({str(v) for v in values})
    if Y is not None and np.asarray(Y).ndim == 2 and np.asarray(Y).shape[1] == 1:
        column = np.asarray(Y, dtype=np.float64)[:, 0]
        return [f"{v:g}" for v in np.unique(column[~np.isnan(column)])]
    return [str(t) for t in target_names]


def check_binary(task, Y, target_names, class_values=None, where: str = "") -> None:
    """DataError unless ``task`` is not binary or the targets hold at most 2 classes
    (:func:`classes_of`); ``where`` prefixes the message (e.g. the sensors.toml)."""
    if task is None or str(task) != Task.BINARY.value:
        return
    classes = classes_of(Y, target_names, class_values)
    if len(classes) > 2:
        shown = ", ".join(classes[:8]) + (", ..." if len(classes) > 8 else "")
        raise DataError(f"{where + ': ' if where else ''}task 'binary' but {len(classes)} "
                        f"classes: {shown} (binary takes at most 2; use task multiclass)")


def encode_labels(Y) -> np.ndarray:
    """0/1 labels as the +1/-1 scores every label model regresses on: y = 2 Y - 1 (so a score
    > 0 means "on"; NaN, a missing label, stays NaN).

    >>> encode_labels([[0, 1], [1, 0]]).tolist()
    [[-1.0, 1.0], [1.0, -1.0]]
    """
    scale, shift = LABEL_MAP
    return scale * np.asarray(Y, dtype=np.float64) + shift


def stored_task(task, Y, target_names, where: str = "") -> str | None:
    """The stored name of a declared ``task`` (sensors.toml's; None stays None), ``binary``
    after :func:`check_binary` of the targets ``Y`` (``multiclass``)."""
    if task is None:
        return None
    check_binary(task, Y, target_names, where=where)
    return Task.of(str(task)).stored
