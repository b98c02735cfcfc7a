"""Worker side of the distributed backend: row partitions kept in a Dask worker process.

A :class:`RowPartition` holds some rows of the data (X, Y, group ids) in its worker process,
across greedy steps and lambda runs, and the :class:`sensorbudget.trainer.selection.caches.RowBlock` s of the
current run built from them. Partitions are kept in a per-process registry (``_REGISTRY``, keyed by
session and partition number) and reached through the task functions below, which the driver
(:mod:`sensorbudget.trainer.distributed.row_store`) submits pinned to the worker holding the partition. Only
small arguments and results travel: the O(d t) global terms and the partial sums.

Every call names the number of calls the partition has served (``expected``): a partition that
was lost and rebuilt, or a call that ran twice, fails loudly (:class:`PartitionLostError`)
instead of silently computing on stale caches.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..errors import TrainerError
from ..selection import rls_math
from ..selection.caches import RowBlock, target_columns
from ..selection.heldout import heldout_residuals
from ..selection.lam_curve import centred_products
from ..selection.loop import row_sums

_REGISTRY: dict = {}


@dataclass
class PartitionSpec:
    """How one partition gets its rows on a worker: ``loader(*args)`` -> (X, Y, groups[,
    meta]). ``args`` may be a function returning them (called when the partition is sent).
    NumPy arrays among them are scattered to the worker, Dask collections computed there."""

    label: str
    loader: object
    args: tuple = ()
    #: The partition's rows in the input (a slice or indices); None: the rows after the
    #: previous partition's (partitions in input order), e.g. shards and Dask chunks.
    rows: object = None


_LOCK = threading.Lock()


class PartitionLostError(TrainerError):
    """A row partition is missing from its worker or out of step with the driver."""


class RowPartition:
    """Rows of the data held by one worker, and the row caches of the current greedy run."""

    def __init__(self, X, Y, groups=None, meta=None, label=""):
        self.meta = meta
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        Y = np.asarray(Y, dtype=np.float64)
        self.Y = Y[:, None] if Y.ndim == 1 else Y
        self.groups = None if groups is None else np.asarray(groups)
        self.label = label
        self.blocks = []
        self.calls = 0
        if self.X.ndim != 2 or self.Y.shape[0] != self.X.shape[0]:
            raise TrainerError(f"{label}: X {self.X.shape} and Y {self.Y.shape} do not agree")
        if self.groups is not None and self.groups.shape != (self.X.shape[0],):
            raise TrainerError(f"{label}: groups has shape {self.groups.shape}; expected "
                               f"({self.X.shape[0]},)")

    def stats(self) -> dict:
        """Sums over the rows (:func:`sensorbudget.trainer.selection.loop.row_sums`), value checks, group ids."""
        out = row_sums(self.X, self.Y)
        out["x_nonfinite"] = int(np.size(self.X) - np.isfinite(self.X).sum())
        out["y_nan"] = int(np.isnan(self.Y).sum())
        out["y_inf"] = int(np.isinf(self.Y).sum())
        out["shape"] = self.X.shape, self.Y.shape[1]
        out["group_ids"] = None if self.groups is None else np.unique(self.groups)
        out["group_max"] = (0 if self.groups is None or not self.groups.size
                            else int(np.unique(self.groups, return_counts=True)[1].max()))
        seen = ~np.isnan(self.Y)
        out["y_min"] = np.min(self.Y, axis=0, initial=np.inf, where=seen)
        out["y_max"] = np.max(self.Y, axis=0, initial=-np.inf, where=seen)
        out["meta"] = self.meta
        return out

    def start(self, prep, dtype, targets) -> tuple:
        """Build the run's caches for the target columns ``targets`` (one block: no NaN
        targets); returns the block's partial ((P, sigma), (SSE, SSE per target))."""
        self.blocks = []                          # release the previous run's caches first
        block = RowBlock(self.X, self.Y, prep, dtype, targets=np.asarray(targets),
                         groups=self.groups, check_groups=False)
        self.blocks = [block]
        return block.initial_sums(), block.sse_parts()

    def block(self, i: int, method: str, *args):
        """Call ``RowBlock.method(*args)`` of the run's block ``i``."""
        return getattr(self.blocks[i], method)(*args)

    def ridge_sums(self, features, targets, prep) -> tuple:
        """(Xs^T Xs, Xs^T Yc, min, max of the raw columns) over the rows, for the selected
        ``features`` (transformed by ``prep``) and the centred ``targets``."""
        raw = self.X[:, features]
        Xs = (raw - prep.x_mean[features]) / prep.x_scale[features]
        XtYc = centred_products(Xs, target_columns(self.Y, targets), prep.y_mean)
        return Xs.T @ Xs, XtYc, raw.min(axis=0), raw.max(axis=0)

    def heldout(self, features, targets, prep, L, W, offset) -> np.ndarray:
        """Held-out predictions of these rows (whole groups) for the global ridge terms
        (L, W) of the selected ``features`` (:func:`sensorbudget.trainer.selection.heldout.heldout_residuals`)."""
        Xs = (self.X[:, features] - prep.x_mean[features]) / prep.x_scale[features]
        Y = target_columns(self.Y, targets)
        F = heldout_residuals(Xs, Y, L, W, self.groups, offset, y_mean=prep.y_mean)
        return np.subtract(Y, F, out=F)

    def release(self) -> None:
        self.blocks = []


def build_partition(key, label, loader, *args) -> tuple:
    """Task: load rows with ``loader(*args)`` -> (X, Y, groups[, meta]) and register the
    partition (``meta``: a dict the driver compares over partitions, e.g. column names).
    Returns (rows, nbytes) of the partition."""
    part = RowPartition(*loader(*args), label=label)
    _match_worker_threads()
    with _LOCK:
        _REGISTRY[key] = part
    return part.X.shape[0], part.X.nbytes + part.Y.nbytes


def _match_worker_threads() -> None:
    """Row-block threads of the trainer = this Dask worker's threads (1 per process in a
    LocalCluster of single-threaded workers), instead of the machine's core count."""
    try:
        from distributed import get_worker

        rls_math.set_threads(get_worker().state.nthreads)
    except (ImportError, ValueError, AttributeError):
        pass                                   # not in a Dask worker (tests, local calls)


def call_partition(key, expected: int, method: str, args: tuple):
    """Task: ``RowPartition.method(*args)`` on the registered partition ``key``, which must
    have served exactly ``expected`` calls before."""
    part = _REGISTRY.get(key)
    if part is None:
        raise PartitionLostError(f"row partition {key!r} is not on this worker (the worker "
                                 f"was restarted or the session closed)")
    with _LOCK:
        if part.calls != expected:
            raise PartitionLostError(f"row partition {key!r} has served {part.calls} calls; "
                                     f"the driver expected {expected}")
        part.calls += 1
    return getattr(part, method)(*args)


def drop_session(session: str) -> int:
    """Remove every partition of ``session`` from this worker's registry; returns how many."""
    with _LOCK:
        keys = [k for k in _REGISTRY if k[0] == session]
        for k in keys:
            del _REGISTRY[k]
    return len(keys)


def arrays_loader(X, Y, groups=None):
    """Loader of rows sent from the driver (or computed by Dask): the arrays themselves."""
    return np.asarray(X), np.asarray(Y), None if groups is None else np.asarray(groups)
