"""Recordings kept as one file per sensor, each with its own time stamps (a multi-rate
``sensors.toml``, :mod:`.rates`).

A folder is such a recording when each of its CSV/NPZ streams is named after a declared sensor
(``accel.csv``, ``baro.npz``) or holds no sensor channel (``targets.csv``: target columns);
a folder whose sub-folders are all such recordings holds one recording per sub-folder (in
sorted name order). The files' time columns must be seconds on one clock (the documented
``time`` column, ``--time-unit s``): :func:`merge` joins them on their exact time stamps into
one table with empty cells where a file has no row, which :func:`.rates.align` then aligns
per sensor as if it had been recorded that way.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import DataError
from .recordings import Recording, RecordingSet, inside, read_stream
from .streams import StreamFormat

SUFFIXES = (".csv", ".npz")


def _streams(folder: Path) -> list:
    return [inside(folder, p, "recording") for p in sorted(folder.iterdir())
            if p.is_file() and p.suffix.lower() in SUFFIXES]


def is_sensor_folder(folder: Path, spec) -> bool:
    """``folder`` holds one stream per sensor (module notes) and no index file."""
    names = {s.name for s in spec.sensors}
    streams = _streams(folder)
    return (folder.is_dir() and not (folder / "index.csv").exists()
            and any(p.stem in names for p in streams)
            and all(p.stem in names or p.stem == "targets" for p in streams))


def merge(folder: Path, spec, fmt: StreamFormat) -> Recording:
    """One recording of the per-sensor streams of ``folder``, joined on exact time stamps."""
    if fmt.time_unit not in ("s", "auto") or fmt.split_gaps is not None or fmt.recording_column:
        raise DataError(f"recording folder {str(folder)!r}: files per sensor are joined on "
                        f"their time stamps in seconds; --time-unit, --split-gaps and "
                        f"--recording-column are not supported for them")
    parts = []
    for path in _streams(folder):
        pieces = read_stream(path, fmt)
        rec = pieces[0]
        if not np.isfinite(rec.time).all() or (np.diff(rec.time) <= 0).any():
            raise DataError(f"{path.name}: time stamps must be present and strictly increasing")
        parts.append((path.name, rec))
    time = np.unique(np.concatenate([rec.time for _, rec in parts]))
    columns, owner = {}, {}
    for name, rec in parts:
        rows = np.searchsorted(time, rec.time)
        for column, values in rec.columns.items():
            if column in owner:
                raise DataError(f"recording folder {str(folder)!r}: column {column!r} is in "
                                f"{owner[column]} and in {name}")
            owner[column] = name
            full = np.full(time.shape, np.nan)
            full[rows] = values
            columns[column] = full
    return Recording(folder.name, time, columns)


def load_sensor_folders(path: Path, spec, fmt: StreamFormat) -> RecordingSet | None:
    """The recordings at ``path`` when it is a folder of per-sensor streams or of such
    folders; None otherwise (then :func:`.recordings.load_recordings` reads it)."""
    path = Path(path)
    if not spec.multi_rate or not path.is_dir():
        return None
    if is_sensor_folder(path, spec):
        return RecordingSet([merge(path, spec, fmt)])
    subs = [inside(path, p, "recording") for p in sorted(path.iterdir()) if p.is_dir()]
    if subs and all(is_sensor_folder(p, spec) for p in subs) and not _streams(path):
        return RecordingSet([merge(p, spec, fmt) for p in subs])
    return None
