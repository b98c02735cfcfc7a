"""``--dask SCHEDULER|local[:N]``: run the selection of ``train`` on a Dask cluster.

With ``--dask``, DATA may be one feature table or many files with the same columns ("shards":
a glob such as ``'feats/*.npz'``, a directory, or one file): NPZ (``X``, ``Y`` and names, e.g.
written by ``sensorbudget features``, one per recording file) or CSV. Each shard becomes one
row partition and is read by the worker that keeps it; only file names travel. Recordings are
windowed first: ``sensorbudget features`` per recording file, then ``train --dask`` on the NPZ
files with ``--groups recording``. See ``docs/distributed.md``. The option's value reaches
:func:`sensorbudget.trainer.api.train` as ``dask``; the shards are read by
:meth:`sensorbudget.trainer.dataset.Dataset.load` with ``shards=True``
(:mod:`sensorbudget.trainer.dataset_shards`).
"""

from __future__ import annotations

import re

import click


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
