"""Greedy RLS with the rows on Dask workers: the one selection loop over partitioned rows.

Every cache of greedy RLS is row-local (``docs/method.md``, "Row-partitioned view"),
and a step needs only sums over rows of size O(d t). So the rows are split into *partitions*
that stay in Dask worker processes for the whole fit (:mod:`sensorbudget.trainer.distributed.partition`), and the
driver runs the same :func:`sensorbudget.trainer.selection.loop.greedy_select` loop: its
:class:`sensorbudget.trainer.selection.caches.CacheBlock` s reach the rows through :class:`DaskRowStore`, whose
``map`` runs one :class:`sensorbudget.trainer.selection.caches.RowBlock` method on every partition and returns
the results in partition order; the driver adds them in that order. Per step the driver sends the
global terms (P^T, sigma: O(d t)) and receives partial scores, R^T x_b and SSEs (O(d + t)) from
each partition; X is never sent again after the partitions are built.

Exactness: the row-local functions are those of the single-machine trainer, so with one
partition the computation is the same; with several, the sums over rows are added in another
order and agree to round-off (about 1e-15 relative in float64; the tests require 1e-10), and
the picks are identical unless two candidates tie to that precision.

Groups (leave-group-out) must not be split: arrays are partitioned by whole groups, a Dask
array is rechunked at group boundaries (groups must then be contiguous runs of rows), shards
must each hold whole groups; otherwise :class:`TrainerError` names the group.

Faults: the driver checks that the workers holding partitions are alive while it waits, and
every partition counts the calls it served. A lost worker (or a restarted one, or a partition
out of step) stops the fit with :class:`WorkerLostError`, which names the worker, the
partitions and the step; no partial or different selection is returned. Rerun the fit (the
data are reloaded from their source).
"""

from __future__ import annotations

import contextlib
import pickle
import time
import uuid
from dataclasses import dataclass, field

import numpy as np

from ..errors import TrainerError
from ..selection.caches import CacheBlock, intercept_offset
from ..selection.loop import Preprocessing, combine_sums
from ..selection.validation import check_groups
from . import partition
from .dask_data import ShardTable, array_specs, dask_specs, open_client
from .store_fits import heldout_on_store, ridge_on_store

#: Seconds between checks that the workers holding partitions are alive, while waiting.
POLL_SECONDS = 1.0


class WorkerLostError(TrainerError):
    """A Dask worker holding row partitions was lost (or restarted) during a fit."""


@dataclass
class Traffic:
    """Per round (one call on every partition): the method, bytes of the arguments sent to
    all partitions, bytes of the results received, and wall seconds."""

    rounds: list = field(default_factory=list)

    def add(self, method: str, down: int, up: int, seconds: float = 0.0) -> None:
        self.rounds.append((method, down, up, seconds))

    def per_step(self) -> dict:
        """Means per greedy step (the rounds after one "add" round up to the next): bytes
        down and up, rounds, and wall seconds per kind of round."""
        steps = [i for i, r in enumerate(self.rounds) if r[0] == "add"]
        if len(steps) < 2:
            return {"down": 0.0, "up": 0.0, "rounds": 0.0, "seconds": {}}
        window = [r for r in self.rounds[steps[0] + 1:steps[-1] + 1] if r[0] in STEP_ROUNDS]
        k = len(steps) - 1
        seconds = {}
        for method, _, _, sec in window:
            seconds[method] = seconds.get(method, 0.0) + sec / k
        return {"down": sum(r[1] for r in window) / k, "up": sum(r[2] for r in window) / k,
                "rounds": len(window) / k, "seconds": seconds}


#: The rounds of a greedy step (the others build caches or read statistics).
STEP_ROUNDS = ("score", "gram", "products", "add")
#: What each round does, for messages.
ROUNDS = {"stats": "reading the partitions' statistics", "start": "building the caches",
          "score": "scoring the candidates", "gram": "computing the Grams of candidate groups",
          "products": "adding the chosen feature", "add": "adding the chosen feature",
          "ridge_sums": "fitting the weights", "heldout": "computing the held-out predictions",
          "release": "releasing the caches"}


def _killed(exc) -> bool:
    """True for Dask's errors of a task whose worker died (KilledWorker, cancellations)."""
    return type(exc).__name__ in ("KilledWorker", "CancelledError", "FutureCancelledError")


def _nbytes(obj) -> int:
    return len(pickle.dumps(obj, protocol=5))


class DaskRowStore:
    """Row partitions resident on Dask workers for one fit (a context manager).

    ``specs`` say how each partition loads its rows on a worker; partition p goes to the p-th
    worker (sorted addresses, round robin). ``map(method, *args)`` calls
    ``RowPartition.method(*args)`` on every partition (tasks pinned to its worker) and returns
    the results in partition order; :attr:`traffic` records the bytes of every round.
    """

    def __init__(self, client, specs, *, poll=POLL_SECONDS):
        self.client, self.poll = client, poll
        self.session = uuid.uuid4().hex
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise TrainerError("the Dask cluster has no workers")
        self.labels = [s.label for s in specs]
        self.row_index = [s.rows for s in specs]
        self.keys = [(self.session, p) for p in range(len(specs))]
        self.workers = [workers[p % len(workers)] for p in range(len(specs))]
        self.calls = [0] * len(specs)
        self.runs, self.steps = 0, 0
        self.traffic = Traffic()
        sent, futures = 0, []
        for key, s, w in zip(self.keys, specs, self.workers):
            raw = s.args() if callable(s.args) else s.args
            args = [self._place(a, w) for a in raw]
            sent += sum(a.nbytes if isinstance(a, np.ndarray) else 0 for a in raw)
            sent += _nbytes([a for a in raw if not isinstance(a, np.ndarray)
                             and not hasattr(a, "__dask_graph__")])
            futures.append(client.submit(partition.build_partition, key, s.label, s.loader, *args,
                                         workers=[w], allow_other_workers=False, pure=False))
            del raw, args
        built = self._gather(futures, "loading the partitions")
        self.rows = [r for r, _ in built]
        self.nbytes = [b for _, b in built]
        self.traffic.add("build", sent, _nbytes(built))

    def _place(self, arg, worker):
        """An argument of a loader on ``worker``: arrays are scattered straight to it, Dask
        collections computed there; anything else travels with the task."""
        if isinstance(arg, np.ndarray):
            return self.client.scatter(arg, workers=[worker], hash=False)
        if hasattr(arg, "__dask_graph__"):
            return self.client.compute(arg, workers=[worker])
        return arg

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        """Drop the partitions from the workers (best effort: dead workers hold nothing)."""
        with contextlib.suppress(Exception):
            alive = set(self.client.scheduler_info()["workers"])
            self.client.run(partition.drop_session, self.session,
                            workers=sorted(set(self.workers) & alive))

    def map(self, method: str, *args) -> list:
        """``RowPartition.method(*args)`` on every partition, results in partition order."""
        start = time.perf_counter()
        futures = [self.client.submit(partition.call_partition, key, self.calls[p], method, args,
                                      workers=[self.workers[p]], allow_other_workers=False,
                                      pure=False)
                   for p, key in enumerate(self.keys)]
        name = args[1] if method == "block" else method
        out = self._gather(futures, ROUNDS.get(name, name))
        seconds = time.perf_counter() - start
        self.calls = [c + 1 for c in self.calls]
        if method == "start":
            self.runs, self.steps = self.runs + 1, 0
        self.steps += name == "add"
        self.traffic.add(name, _nbytes(args) * len(self.keys), _nbytes(out), seconds)
        return out

    def _gather(self, futures, what: str) -> list:
        """Results of ``futures``; :class:`WorkerLostError` when a partition's worker is gone
        or a partition is out of step (checked every ``poll`` seconds while waiting)."""
        from distributed import wait

        while True:
            try:
                wait(futures, timeout=self.poll)
                break
            except TimeoutError:
                lost = self._lost_workers()
                if lost:
                    for f in futures:
                        f.cancel()
                    raise self._lost_error(lost, what) from None
        for p, f in enumerate(futures):
            if f.status == "error":
                exc = f.exception()
                lost = self._lost_workers()
                if isinstance(exc, partition.PartitionLostError) or lost or _killed(exc):
                    raise self._lost_error(lost or {self.workers[p]}, what, str(exc)) from None
                if isinstance(exc, TrainerError):
                    raise exc
                raise TrainerError(f"partition {self.labels[p]!r} failed in {what}: "
                                   f"{type(exc).__name__}: {exc}") from exc
            if f.status == "cancelled":
                raise self._lost_error(self._lost_workers() or {self.workers[p]}, what)
        return self.client.gather(futures)

    def _lost_workers(self) -> set:
        alive = set(self.client.scheduler_info()["workers"])
        return {w for w in self.workers if w not in alive}

    def _lost_error(self, lost, what, detail="") -> WorkerLostError:
        parts = [self.labels[p] for p, w in enumerate(self.workers) if w in lost]
        rows = sum(self.rows[p] for p, w in enumerate(self.workers) if w in lost) if hasattr(
            self, "rows") else None
        held = f" ({rows} rows)" if rows is not None else ""
        where = (f" of greedy step {self.steps + 1} (run {self.runs}: one run per lambda "
                 f"and choice rule)" if self.runs else "")
        return WorkerLostError(
            f"Dask worker(s) {', '.join(sorted(lost))} holding row partition(s) "
            f"{', '.join(parts)}{held} lost while {what}{where}; the fit stops without a "
            f"result: the partitions' caches cannot be recovered. Rerun the fit (the rows are "
            f"read again from their source){' [' + detail + ']' if detail else ''}")

    # -- what the selection loop sees ------------------------------------------------------
    def summary(self) -> dict:
        """The partitions' statistics added up (sums for :class:`Preprocessing`, checks)."""
        stats = self.map("stats")
        (_, d), t = stats[0]["shape"]
        for p, s in enumerate(stats):
            if s["shape"][0][1] != d or s["shape"][1] != t:
                raise TrainerError(f"partition {self.labels[p]!r} has {s['shape'][0][1]} "
                                   f"features and {s['shape'][1]} targets; partition "
                                   f"{self.labels[0]!r} has {d} and {t}")
            for key, what in (("x_nonfinite", "X holds NaN or inf"),
                              ("y_inf", "y holds inf"),
                              ("y_nan", "y holds NaN (missing targets are not supported by "
                                        "the Dask backend)")):
                if s[key]:
                    raise TrainerError(f"partition {self.labels[p]!r}: {what} ({s[key]} "
                                       f"value(s))")
            if s["meta"] != stats[0]["meta"]:
                key = next(k for k in s["meta"] if s["meta"][k] != stats[0]["meta"].get(k))
                raise TrainerError(f"partition {self.labels[p]!r} differs from "
                                   f"{self.labels[0]!r} in its {key}: every shard must have the "
                                   f"same columns")
        sums = combine_sums(stats)
        return {"sums": sums, "shape": (int(sums["n"]), d), "n_targets": t,
                "groups": self._check_groups([s["group_ids"] for s in stats]),
                "group_max": max(s.get("group_max", 0) for s in stats),
                "y_min": np.min([s["y_min"] for s in stats], axis=0),
                "y_max": np.max([s["y_max"] for s in stats], axis=0)}

    def _check_groups(self, ids) -> int | None:
        """Number of groups over all partitions; raises when a group spans two partitions
        or there are fewer than 2 groups."""
        if ids[0] is None:
            return None
        seen = {}
        for p, g in enumerate(ids):
            for value in g.tolist():
                if value in seen:
                    raise TrainerError(
                        f"group {value!r} has rows in partitions {self.labels[seen[value]]!r} "
                        f"and {self.labels[p]!r}: all rows of a group must be in one partition "
                        f"(leave-group-out holds whole groups out)")
                seen[value] = p
        if len(seen) < 2:
            raise TrainerError(f"groups has {len(seen)} distinct value(s); leave-group-out "
                               f"needs at least 2")
        return len(seen)


class _BlockRows:
    """The row store of block ``i`` of the current run: ``RowBlock`` methods on every
    partition of a :class:`DaskRowStore`."""

    def __init__(self, store: DaskRowStore, i: int):
        self.store, self.i = store, i

    def map(self, method: str, *args) -> list:
        return self.store.map("block", self.i, method, *args)


class RunSource:
    """What :func:`sensorbudget.trainer.selection.loop.greedy_select` sees for the target columns ``targets``:
    a row source (``shape``, ``criterion``, ``make_blocks``) over a :class:`DaskRowStore`."""

    def __init__(self, store: DaskRowStore, summary: dict, targets):
        self.store, self.targets = store, np.asarray(targets, dtype=np.intp)
        self.shape = summary["shape"]
        self.criterion = "loo" if summary["groups"] is None else "leave-group-out"

    def make_blocks(self, prep, dtype) -> list:
        parts = self.store.map("start", prep, dtype, self.targets)
        return [CacheBlock(rows_store=_BlockRows(self.store, 0),
                           targets=np.arange(self.targets.size), n_rows=self.shape[0],
                           sums=[p[0] for p in parts], sse=[p[1] for p in parts])]


def preprocessing(summary: dict, fit_intercept: bool, standardize: bool) -> Preprocessing:
    """The :class:`Preprocessing` of all rows, from the partitions' sums."""
    return Preprocessing.from_sums(summary["sums"], fit_intercept, standardize)


class ClusterRows:
    """The rows of one fit on Dask workers, as the estimators fit through them (a context
    manager around the client and the :class:`DaskRowStore`).

    ``X`` is a NumPy array (split into ``n_partitions`` partitions, default one per worker), a
    Dask array (one partition per row chunk) or a :class:`sensorbudget.trainer.distributed.dask_data.ShardTable`
    (one partition per file; ``Y`` None). ``Y`` (n x t, no NaN) is NumPy or Dask; ``groups``
    (n,) NumPy or Dask. What a fit needs: :attr:`shape`, :attr:`n_targets`, :attr:`n_groups`,
    :meth:`preprocessing`, :meth:`source` (the row source of
    :func:`sensorbudget.trainer.selection.loop.select_with_lambda`), :meth:`ridge`; afterwards
    :meth:`selected_range` and :meth:`info`.
    """

    def __init__(self, X, Y, groups=None, *, client=None, n_partitions=None):
        if groups is not None and hasattr(groups, "__dask_graph__"):
            groups = groups.compute()
        if groups is not None and not isinstance(X, ShardTable):
            groups = check_groups(groups, X.shape[0])
        self._stack = contextlib.ExitStack()
        try:
            client = self._stack.enter_context(open_client(client))
            if isinstance(X, ShardTable):
                specs = X.partition_specs()
            elif hasattr(X, "__dask_graph__"):
                specs = dask_specs(X, Y, groups)
            else:
                n_parts = n_partitions or len(client.scheduler_info()["workers"])
                specs = array_specs(X, Y, groups, n_parts)
            self.store = self._stack.enter_context(DaskRowStore(client, specs))
            self.summary = self.store.summary()
        except BaseException:
            self._stack.close()
            raise
        self.shape = tuple(self.summary["shape"])
        self.n_targets = self.summary["n_targets"]
        self.n_groups = self.summary["groups"]
        self._ranges = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._stack.close()

    def preprocessing(self, fit_intercept: bool, standardize: bool) -> Preprocessing:
        return preprocessing(self.summary, fit_intercept, standardize)

    def source(self, targets) -> RunSource:
        return RunSource(self.store, self.summary, targets)

    def ridge(self, features, targets, prep, lam) -> list:
        """[(all of ``targets``, ``prep``, W)]: ridge weights on the partitions' sums (one
        observation mask: no NaN targets here); records the features' ranges."""
        W, lo, hi = ridge_on_store(self.store, features, targets, prep, lam)
        self._ranges.append((features, lo, hi))
        return [(np.arange(len(targets)), prep, W)]

    def heldout(self, features, targets, prep, lam) -> list:
        """[(None: all rows, all of ``targets``, held-out predictions)] (:func:`heldout_on_store`,
        the intercept refitted per fold when ``prep`` fits one)."""
        offset = intercept_offset(prep, self.shape[0])
        return [(None, np.arange(len(targets)),
                 heldout_on_store(self.store, features, targets, prep, lam, offset))]

    def target_range(self) -> tuple:
        """(min, max) of each target over all rows (for the constant-target check)."""
        return self.summary["y_min"], self.summary["y_max"]

    def fold_rows(self) -> int:
        """Training rows of the smallest fold: n - 1 (LOO) or n minus the largest group."""
        n = self.shape[0]
        return n - (max(self.summary["group_max"], 1) if self.n_groups else 1)

    def selected_range(self, selected) -> tuple:
        """(min, max) over all rows of each column of ``selected`` (from :meth:`ridge` calls)."""
        lo, hi = np.zeros(len(selected)), np.zeros(len(selected))
        position = {int(f): i for i, f in enumerate(selected)}
        for f, a, b in self._ranges:
            at = [position[int(i)] for i in f]
            lo[at], hi[at] = a, b
        return lo, hi

    def info(self) -> dict:
        """Partitions (labels, workers, rows), bytes per step and the greedy runs made."""
        store = self.store
        return {"partitions": list(store.labels), "workers": list(store.workers),
                "rows": list(store.rows), "bytes_per_step": store.traffic.per_step(),
                "runs": store.runs}
