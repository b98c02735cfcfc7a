"""A :class:`~sensorbudget.trainer.dataset.Dataset` of Dask shards (``train --dask``).

DATA may be one feature table or many files with the same columns ("shards": a glob such as
``'feats/*.npz'``, a directory, or one file): NPZ (``X``, ``Y`` and names, e.g. written by
``sensorbudget features``, one per recording file) or CSV. Each shard becomes one row partition
and is read by the worker that keeps it; only file names travel (docs/distributed.md).
"""

from __future__ import annotations

from pathlib import Path

from .errors import DataError
from .sensing.streams import StreamFormat


def load_shards(cls, data, *, targets=(), labels=None, xml=None, sep=None, decimal=None,
                ignore=(), na_value=None, drop_missing=False, keep_missing_targets=False,
                groups=None, sensors=None, window=None, hop=None, compute_target=None,
                stream_format=None, targets_last=None):
    """A ``cls`` (Dataset) whose ``X`` is a
    :class:`~sensorbudget.trainer.distributed.dask_data.ShardTable` (read on the workers) and
    ``Y`` None.

    Names and task come from the first shard (for NPZ only its small arrays are read here);
    ``labels=L`` becomes the names of the last L columns, so the workers read labels as plain
    numbers (a shard need not hold both classes of every label). ``groups`` is a column/array
    name, or ``recording`` for feature NPZ files (recording numbers are made unique per shard).
    """
    from .distributed.dask_data import ShardTable, shard_header, shard_paths

    if any(v is not None for v in (sensors, window, hop, compute_target)) or (
            stream_format not in (None, StreamFormat())):
        raise DataError("--dask trains on feature tables: window the recordings first with "
                        "'sensorbudget features' (one NPZ per recording file or batch) and give "
                        "those files as DATA, with --groups recording")
    if targets_last is not None:
        raise DataError("--targets-last does not apply with --dask: name the targets with "
                        "--target")
    if xml is not None:
        raise DataError("--xml does not apply with --dask; name the label columns with "
                        "--labels L or --target")
    if keep_missing_targets:
        raise DataError("--keep-missing-targets does not apply with --dask (missing target "
                        "values need the single-machine trainer)")
    paths = shard_paths(str(data) if isinstance(data, Path) else data)
    recording = groups == "recording"
    options = {"targets": list(targets or ()) or None, "labels": labels, "sep": sep,
               "decimal": decimal, "ignore": tuple(ignore or ()), "na_value": na_value,
               "drop_missing": drop_missing, "groups": "groups" if recording else groups}
    head = shard_header(paths[0], options)
    if recording and head["feature_set"] is None:
        raise DataError("--groups recording needs feature NPZ files written by 'sensorbudget "
                        "features'; for other tables give the name of the group column")
    options.update(targets=list(head["targets"]), labels=None)
    return cls(X=ShardTable(paths, options, shard_groups=recording), Y=None,
               feature_names=list(head["features"]), target_names=list(head["targets"]),
               task=head["task"], feature_set=head["feature_set"],
               source={"shards": [p.name for p in paths],
                       "bytes": int(sum(p.stat().st_size for p in paths))})
