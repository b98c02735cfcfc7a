"""The learning tasks, typed (:class:`Task`), and the one +1/-1 label encoding
(:func:`encode_labels`)."""

from __future__ import annotations

import enum

import numpy as np

from .errors import DataError

#: the task names model.json stores (a binary task is multi-class with two classes)
STORED_TASKS = ("regression", "multilabel", "multiclass")
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


def encode_labels(Y) -> np.ndarray:
    """0/1 labels as the +1/-1 scores every label model regresses on: y = 2 Y - 1 (so a score
    > 0 means "on"; NaN, a missing label, stays NaN).

    >>> encode_labels([[0, 1], [1, 0]]).tolist()
    [[-1.0, 1.0], [1.0, -1.0]]
    """
    scale, shift = LABEL_MAP
    return scale * np.asarray(Y, dtype=np.float64) + shift
