"""The learning tasks, typed: :class:`Task`."""

from __future__ import annotations

import enum

from .errors import DataError


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
