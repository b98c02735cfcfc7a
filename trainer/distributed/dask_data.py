"""Data for the Dask backend: row partitions of arrays, Dask arrays and files; the client.

A partition is described by a :class:`sensorbudget.trainer.distributed.partition.PartitionSpec`: a loader that
runs on the worker that will hold the rows, and its arguments. For in-memory arrays the arguments
are the partition's rows (scattered straight to that worker); for a Dask array they are the
array's row blocks (computed on that worker); for files (:class:`ShardTable`) they are a path
and the reading options, so only file names travel and each worker reads its own shards.

With groups (leave-group-out) whole groups go to one partition: arrays are split at group
boundaries, Dask arrays are rechunked there (a group must then be a contiguous run of rows),
and every shard must hold whole groups (checked when the fit starts).
"""

from __future__ import annotations

import contextlib
import functools
import glob
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..data import load_table, split_columns
from ..errors import DataError, TrainerError
from ..sensing.feature_set import FeatureSet
from . import partition

SHARD_SUFFIXES = (".npz", ".csv")
_LOCAL = re.compile(r"^local(?::(\d+))?$")


@contextlib.contextmanager
def open_client(client=None):
    """A ``distributed.Client`` for a fit: the one given, a new one for a scheduler address
    (or a scheduler ``.json`` file), a new ``LocalCluster`` of N single-threaded worker
    processes for ``"local"`` (N = 2) / ``"local:N"``, or the current default client for None.
    Clients and clusters created here are closed on exit."""
    try:
        from distributed import Client, LocalCluster, get_client
    except ImportError:
        raise TrainerError("the Dask backend needs dask and distributed: pip install "
                           "'sensorbudget[dask]'") from None
    if client is not None and not isinstance(client, str):
        yield client
        return
    if client is None:
        try:
            yield get_client()
        except ValueError:
            raise TrainerError("backend='dask' needs a Dask client: create one "
                               "(distributed.Client(address)) or pass client='ADDRESS' or "
                               "client='local:N'") from None
        return
    match = _LOCAL.match(client.strip())
    if match:
        n = int(match.group(1) or 2)
        if n < 1:
            raise TrainerError(f"client={client!r}: a local cluster needs at least 1 worker")
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as c:
            yield c
        return
    spec = {"scheduler_file": client} if client.endswith(".json") else {"address": client}
    with Client(**spec) as c:
        yield c


# -- in-memory arrays --------------------------------------------------------------------------
def row_split(n: int, n_parts: int, groups=None) -> list:
    """Rows of each partition: contiguous slices of about n / n_parts rows, or, with
    ``groups``, whole groups (in order of first appearance) cut at about n / n_parts rows."""
    n_parts = max(1, min(int(n_parts), n))
    if groups is None:
        bounds = np.linspace(0, n, n_parts + 1).round().astype(int)
        return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    _, first, inverse, counts = np.unique(groups, return_index=True, return_inverse=True,
                                          return_counts=True)
    order = np.argsort(first, kind="stable")
    ends = np.cumsum(counts[order])
    part = np.minimum((ends - counts[order]) * n_parts // n, n_parts - 1)
    owner = np.empty(counts.size, dtype=np.intp)
    owner[order] = part
    row_owner = owner[inverse.ravel()]
    return [rows for rows in (np.flatnonzero(row_owner == p) for p in range(n_parts))
            if rows.size]


def array_specs(X, Y, groups, n_parts) -> list:
    """Partition specs of in-memory arrays X (n x d), Y (n x t) and group ids. The rows of a
    partition are taken when it is sent (a copy for group partitions, one at a time)."""
    out = []
    for rows in row_split(X.shape[0], n_parts, groups):
        label = (f"rows {rows.start}..{rows.stop - 1}" if isinstance(rows, slice)
                 else f"{rows.size} rows from {rows[0]}")
        out.append(partition.PartitionSpec(label, partition.arrays_loader,
                                 functools.partial(_take_rows, X, Y, groups, rows), rows=rows))
    return out


def _take_rows(X, Y, groups, rows) -> tuple:
    return X[rows], Y[rows], None if groups is None else np.asarray(groups)[rows]


# -- Dask arrays -------------------------------------------------------------------------------
def group_bounds(bounds, groups) -> np.ndarray:
    """Chunk boundaries moved forward to the next group boundary (groups must be contiguous
    runs of rows); raises :class:`TrainerError` naming a group that is not."""
    groups = np.asarray(groups)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    run_ids = groups[starts]
    uniq, counts = np.unique(run_ids, return_counts=True)
    if (counts > 1).any():
        bad = uniq[np.argmax(counts > 1)]
        raise TrainerError(f"group {bad.item()!r} is split into several runs of rows; with a "
                           f"Dask array each group must be one contiguous run of rows (sort "
                           f"the rows by group) so that it fits in one partition")
    allowed = np.r_[starts, groups.size]
    moved = allowed[np.searchsorted(allowed, np.asarray(bounds))]
    return np.unique(moved)


def dask_specs(X, Y, groups) -> list:
    """Partition specs of a Dask array X (one partition per row chunk; columns in one chunk),
    targets Y (NumPy or Dask) and group ids (chunks then aligned with group boundaries)."""
    if X.ndim != 2:
        raise TrainerError(f"X must be 2-D; got a Dask array of shape {X.shape}")
    if np.isnan(X.shape[0]):
        X = X.compute_chunk_sizes()
    if Y is None or Y.shape[0] != X.shape[0]:
        raise TrainerError(f"y has {None if Y is None else Y.shape[0]} rows; X has "
                           f"{X.shape[0]}")
    bounds = np.cumsum((0,) + tuple(X.chunks[0]))
    if groups is not None:
        bounds = group_bounds(bounds, groups)
    sizes = tuple(int(s) for s in np.diff(bounds) if s > 0)
    X = X.rechunk({0: sizes, 1: -1})
    if hasattr(Y, "__dask_graph__"):
        Y = (Y if Y.ndim == 2 else Y[:, None]).rechunk({0: sizes, 1: -1})
    bounds = np.cumsum((0,) + sizes)
    out = []
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        y = Y.blocks[i] if hasattr(Y, "__dask_graph__") else Y[a:b]
        g = None if groups is None else np.asarray(groups)[a:b]
        out.append(partition.PartitionSpec(f"rows {a}..{b - 1}", partition.arrays_loader,
                                           (X.blocks[i], y, g)))
    return out


# -- files -------------------------------------------------------------------------------------
@dataclass
class ShardTable:
    """A feature table stored as many files ("shards") with the same columns, read by the
    workers: NPZ (arrays ``X``, ``Y``, optional ``feature_names``, ``target_names`` and a
    group-id array; the NPZ of ``sensorbudget features`` qualifies) or CSV (header row).

    ``options`` are those of :func:`sensorbudget.trainer.data.load_table` (``targets``, ``groups``, ``sep``,
    ``decimal``, ``ignore``, ``na_value``, ``drop_missing``). ``target_map`` = (scale, shift)
    maps the targets on the workers (e.g. (2, -1): 0/1 labels as +1/-1) after ``check``:
    None, "binary" (every target 0/1) or "onehot" (0/1 rows with one 1: classes as columns).
    Each shard is one partition; with ``groups`` no group may span two shards, and
    ``shard_groups=True`` makes ids that are only unique within a shard (recording numbers)
    global by prefixing the shard's file name.
    """

    paths: list
    options: dict = field(default_factory=dict)
    target_map: tuple | None = None
    shard_groups: bool = False
    check: str | None = None

    def partition_specs(self) -> list:
        return [partition.PartitionSpec(Path(p).name, load_shard,
                                        (str(p), self.options, self.target_map, self.shard_groups,
                                         self.check))
                for p in self.paths]


def shard_paths(pattern) -> list:
    """Sorted shard files from a glob pattern, a directory (its .npz and .csv files) or a
    list of paths; raises :class:`DataError` when there are none."""
    if isinstance(pattern, (list, tuple)):
        paths = [Path(p) for p in pattern]
    elif Path(pattern).is_dir():
        paths = sorted(p for p in Path(pattern).iterdir() if p.suffix.lower() in SHARD_SUFFIXES)
    else:
        paths = sorted(Path(p) for p in glob.glob(str(pattern)))
    if not paths:
        raise DataError(f"no shard files match {str(pattern)!r} (expected .npz or .csv files)")
    bad = [p for p in paths if p.suffix.lower() not in SHARD_SUFFIXES]
    if bad:
        raise DataError(f"shard {str(bad[0])!r} is not an .npz or .csv file")
    return paths


def load_shard(path, options, target_map=None, shard_groups=False, check=None):
    """Loader run on a worker: one shard -> (X, Y, groups, column names) with
    :func:`sensorbudget.trainer.data.load_table`. NPZ targets are read as plain numbers (a label column
    need not hold both classes in every shard)."""
    opts = dict(options)
    if Path(path).suffix.lower() == ".npz":
        opts.setdefault("task", "regression")
    try:
        table = load_table(path, **opts)
    except DataError as exc:
        raise DataError(f"shard {Path(path).name}: {exc}") from None
    Y = table.Y
    if check is not None:
        check_labels(Y, check, Path(path).name)
    if target_map is not None:
        Y = target_map[0] * Y + target_map[1]
    groups = table.groups
    if groups is not None and shard_groups:
        groups = np.char.add(f"{Path(path).name}:", groups.astype(str))
    meta = {"features": list(table.feature_names), "targets": list(table.target_names)}
    return table.X, Y, groups, meta


def check_labels(Y, check: str, where: str) -> None:
    """Raise :class:`DataError` unless Y holds 0/1 values ("binary") with exactly one 1 per
    row ("onehot")."""
    bad = ~np.isin(Y, (0.0, 1.0))
    if check == "onehot":
        bad |= (Y.sum(axis=1) != 1)[:, None]
    if bad.any():
        row = int(np.flatnonzero(bad.any(axis=1))[0])
        what = "0/1 labels" if check == "binary" else "one-hot 0/1 rows (one class per row)"
        raise DataError(f"shard {where}: row {row + 1} of the targets is {Y[row].tolist()}; "
                        f"expected {what}")


def shard_header(path, options) -> dict:
    """Column names, task and feature structure of a shard, read on this machine.

    NPZ: only the small arrays are read (names, task; a ``sensorbudget features`` NPZ also
    yields its :class:`sensorbudget.trainer.sensing.feature_set.FeatureSet` structure with empty X and Y, under
    ``feature_set``); CSV: the shard is parsed with the loader's options.
    """
    path = Path(path)
    if path.suffix.lower() != ".npz":
        table = load_table(path, **options)
        return {"features": table.feature_names, "targets": table.target_names,
                "task": table.task, "feature_set": None}
    with np.load(path, allow_pickle=False) as npz:
        small = {k: npz[k] for k in npz.files if k not in ("X", "Y")}
        if "X" not in npz.files or "Y" not in npz.files:
            raise DataError(f"shard {path.name} has no array 'X' or 'Y' (found "
                            f"{sorted(npz.files)})")
    X, Y = (np.zeros((0,) + tuple(_npy_shape(path, k)[1:])) for k in ("X", "Y"))
    Y = Y.reshape(0, 1) if Y.ndim == 1 else Y
    features = [str(s) for s in small.get("feature_names", [f"x{i}" for i in range(X.shape[1])])]
    targets = [str(s) for s in small.get("target_names", [f"y{j}" for j in range(Y.shape[1])])]
    if options.get("targets"):
        _, tidx = split_columns(targets, options["targets"])
        targets = [targets[j] for j in tidx]
    fs = None
    if "feature_extractors" in small:
        fs = FeatureSet.from_arrays({**small, "X": X, "Y": Y}, source=repr(str(path)),
                                    check=False)             # the structure only: no rows
    task = str(small["task"]) if "task" in small else "regression"
    return {"features": features, "targets": targets, "task": task, "feature_set": fs}


def _npy_shape(path, key) -> tuple:
    """Shape of the array ``key`` of an NPZ file, from its header only (no data read)."""
    import zipfile

    with zipfile.ZipFile(path) as zf, zf.open(f"{key}.npy") as fh:
        version = np.lib.format.read_magic(fh)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        return read(fh)[0]
