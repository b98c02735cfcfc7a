"""``--dask SCHEDULER|local[:N]``: run the selection of ``train`` on a Dask cluster.

With ``--dask``, DATA may be one feature table or many files with the same columns ("shards":
a glob such as ``'feats/*.npz'``, a directory, or one file): NPZ (``X``, ``Y`` and names, e.g.
written by ``sensorbudget features``, one per recording file) or CSV. Each shard becomes one
row partition and is read by the worker that keeps it; only file names travel. Recordings are
windowed first: ``sensorbudget features`` per recording file, then ``train --dask`` on the NPZ
files with ``--groups recording``. See ``docs/distributed.md``.

Usage in ``train`` (``cli.py``; see the module functions)::

    @dask_option
    def train_command(..., dask, **load_options):
        if dask is not None:
            d = load_shards(data, **load_options)              # instead of load_training_data
            task = d["task"] if task == "auto" else task
            est, X_fit, targets, extra = dask_estimator_for_task(task, d)
        ...
        est.set_params(...)                                    # budget, lam, costs: unchanged
        if dask is not None:
            X_bundle, n_samples = fit_on_dask(est, X_fit, dask, progress=_progress("selecting"))
        ...
        meta, arrays = bundle_contents(est, X_bundle, ...)     # then meta["n_samples"] = n_samples
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import replace
from pathlib import Path

import click

from sensorbudget.trainer.sensing.streams import StreamFormat

from ._errors import CliError

_ADDRESS = re.compile(r"^([a-z]+://)?[^\s/:]+(:\d+)?$")
_LOCAL = re.compile(r"^local(:\d+)?$")


def _check_dask(ctx, param, value):
    """``local``, ``local:N`` (N >= 1), a scheduler address or a scheduler JSON file."""
    if value is None:
        return None
    value = value.strip()
    if _LOCAL.match(value):
        if value != "local" and int(value.split(":")[1]) < 1:
            raise click.BadParameter(f"{value!r}: a local cluster needs at least 1 worker",
                                     ctx, param)
        return value
    if value.endswith(".json") or _ADDRESS.match(value):
        return value
    raise click.BadParameter(f"{value!r} is not local[:N], a scheduler address such as "
                             f"tcp://host:8786, or a scheduler .json file", ctx, param)


dask_option = click.option(
    "--dask", "dask", default=None, metavar="SCHEDULER|local[:N]", callback=_check_dask,
    help="Run the selection on Dask: a scheduler address (tcp://host:8786), a scheduler "
         "JSON file, or local[:N] for N local worker processes (default 2). DATA may then be "
         "a glob or directory of NPZ/CSV shards with the same columns.")


@contextlib.contextmanager
def dask_client(value):
    """A ``distributed.Client`` for ``--dask value`` (closed on exit if created here)."""
    from sensorbudget.trainer.distributed.dask_data import open_client

    with open_client(value) as client:
        yield client


def load_shards(data, *, targets=(), labels=None, xml=None, sep=None, decimal=None, ignore=(),
                na_value=None, drop_missing=False, keep_missing_targets=False, groups=None,
                sensors_toml=None, window=None, hop=None, compute_target=None,
                stream_format=None, targets_last=None) -> dict:
    """The ``load_training_data`` dict for ``--dask``: ``X`` is a
    :class:`sensorbudget.trainer.distributed.dask_data.ShardTable` (read on the workers), ``Y`` None.

    Names and task come from the first shard (for NPZ only its small arrays are read here);
    ``--labels L`` becomes the names of the last L columns, so the workers read labels as
    plain numbers (a shard need not hold both classes of every label). ``groups`` is the
    ``--groups`` value: a column/array name, or ``recording`` for feature NPZ files (recording
    numbers are made unique per shard).
    """
    from sensorbudget.trainer.distributed.dask_data import ShardTable, shard_header, shard_paths

    if any(v is not None for v in (sensors_toml, window, hop, compute_target)) or (
            stream_format not in (None, StreamFormat())):
        raise CliError("--dask trains on feature tables: window the recordings first with "
                       "'sensorbudget features' (one NPZ per recording file or batch) and give "
                       "those files as DATA, with --groups recording")
    if targets_last is not None:
        raise CliError("--targets-last does not apply with --dask: name the targets with --target")
    if xml is not None:
        raise CliError("--xml does not apply with --dask; name the label columns with "
                       "--labels L or --target")
    if keep_missing_targets:
        raise CliError("--keep-missing-targets does not apply with --dask (missing target "
                       "values need the single-machine trainer)")
    paths = shard_paths(str(data) if isinstance(data, Path) else data)
    recording = groups == "recording"
    options = {"targets": list(targets) or None, "labels": labels, "sep": sep,
               "decimal": decimal, "ignore": tuple(ignore), "na_value": na_value,
               "drop_missing": drop_missing, "groups": "groups" if recording else groups}
    head = shard_header(paths[0], options)
    if recording and head["feature_set"] is None:
        raise CliError("--groups recording needs feature NPZ files written by 'sensorbudget "
                       "features'; for other tables give the name of the group column")
    options.update(targets=list(head["targets"]), labels=None)
    fs = head["feature_set"]
    return {"X": ShardTable(paths, options, shard_groups=recording), "Y": None,
            "features": list(head["features"]), "targets": list(head["targets"]),
            "task": head["task"], "fs": fs,
            "structure": fs.bundle_structure() if fs is not None else (None, None, {}),
            "source": {"shards": [p.name for p in paths],
                       "bytes": int(sum(p.stat().st_size for p in paths))}}


def dask_estimator_for_task(task, d):
    """(unfitted estimator, shard table, target names, extra model.json keys) for ``--dask``.

    Multi-label: 0/1 labels become +1/-1 on the workers, as ``train`` does without ``--dask``.
    Multi-class: the classes must be one-hot 0/1 columns (a ``sensorbudget features`` table
    has them), regressed as +1/-1 like :class:`sensorbudget.trainer.GreedyRLSClassifier` does; the
    bundle's classes are the column names, sorted as the classifier sorts its classes.
    """
    from sensorbudget.trainer import GreedyRLS

    if task == "regression":
        return GreedyRLS(), d["X"], d["targets"], {}
    if task == "multilabel":
        return (GreedyRLS(), replace(d["X"], target_map=(2.0, -1.0), check="binary"),
                d["targets"], {})
    if len(d["targets"]) < 2:
        raise CliError("--dask takes multi-class targets as one-hot 0/1 columns, one per "
                       "class; this table has a single class-value column")
    classes = sorted(d["targets"])           # the order GreedyRLSClassifier gives (np.unique)
    shards = replace(d["X"], options={**d["X"].options, "targets": classes},
                     target_map=(2.0, -1.0), check="onehot")
    return GreedyRLS(), shards, classes, {"classes": classes}


def fit_on_dask(est, X, value, progress=None) -> dict:
    """Fit ``est`` on the shards ``X`` on the cluster ``--dask value``.

    Returns the ``bundle_contents`` keywords that stand in for the training matrix, which is
    never gathered: ``x_range`` (min and max of each selected column over all rows) and
    ``n_samples``.
    """
    with dask_client(value) as client:
        est.set_params(backend="dask", client=client)
        try:
            est.fit(X, None, progress=progress)
        finally:
            est.set_params(client=None)          # do not keep a closed client in the model
    return {"x_range": est.selected_range_, "n_samples": int(sum(est.distributed_["rows"]))}
