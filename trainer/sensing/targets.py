"""The targets of a feature table (:mod:`.feature_set`): per-recording labels (numbers, or
classes as one-hot columns) or per-sample target columns of streams."""

from __future__ import annotations

import numpy as np

from ..errors import DataError


def label_targets(rset, spec) -> tuple:
    """(target names, per-recording target rows, default task) for labelled recordings."""
    available = list(rset.recordings[0].labels)
    chosen = list(spec.targets) if spec.targets is not None else available
    for t in chosen:
        if t not in available:
            raise DataError(f"unknown target {t!r}; the recordings' labels are "
                            f"{', '.join(available)}")
    categorical = [t for t in chosen if t in rset.classes]
    single = len(chosen) == 1 and len(categorical) == 1
    names = []
    for t in chosen:
        if t in rset.classes:
            names += [c if single else f"{t}={c}" for c in rset.classes[t]]
        else:
            names.append(t)
    rows = []
    for rec in rset.recordings:
        row = []
        for t in chosen:
            value = rec.labels[t]
            row += ([float(value == c) for c in rset.classes[t]] if t in rset.classes
                    else [float(value)])
        rows.append(np.array(row))
    if categorical and len(categorical) != len(chosen) and spec.task is None:
        raise DataError("targets mix class labels and numbers; set task in sensors.toml")
    task = "multiclass" if single else ("multilabel" if categorical else "regression")
    return names, rows, task


def stream_targets(rset, spec) -> list:
    """Target columns of streams: ``spec.targets``, or every column present in every
    recording that is not a sensor channel."""
    channels = set(spec.channel_sensor)
    common = [c for c in rset.recordings[0].columns
              if all(c in r.columns for r in rset.recordings)]
    if spec.targets is None:
        return [c for c in common if c not in channels]
    for t in spec.targets:
        if t in channels:
            raise DataError(f"target {t!r} is also a sensor channel in {spec.source}")
        if t not in common:
            raise DataError(f"unknown target {t!r}: not among the {len(common)} column(s) "
                            f"present in every recording")
    return list(spec.targets)

