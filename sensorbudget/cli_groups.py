"""``--groups COLUMN|recording``: sample groups for the leave-group-out selection criterion.

Usage in a command (``train``)::

    @main.command("train")
    ...
    @groups_option
    def train_command(..., groups, **load_options):
        load_options["ignore"] = groups_ignore(groups, load_options["ignore"], data)
        d = load_training_data(data, **load_options)
        ids = resolve_groups(groups, d, data, **load_options)
        est.fit(d["X"], y, groups=ids, progress=...)

``recording`` takes the recording index of every window (recordings with ``--sensors``, or a
feature table written by ``sensorbudget features``). ``COLUMN`` names a column of a CSV/ARFF
table (numbers or text: a subject, a device, a day), or an array of an NPZ table; the column is
not a feature (:func:`groups_ignore` adds it to the loader's ignore list) and rows the loader
dropped (``--drop-missing``) are dropped here too.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import click
import numpy as np

from ._errors import CliError

RECORDING = "recording"

groups_option = click.option(
    "--groups", "groups", default=None, metavar="COLUMN|recording",
    help="Select by leave-group-out error: rows sharing a group id (a CSV/ARFF column or NPZ "
         "array, or 'recording' for windows of recordings) are held out together.")


def groups_ignore(value, ignore=(), data_path=None) -> tuple:
    """The loader's ``ignore`` list plus the group COLUMN of a CSV/ARFF table (it must not
    become a feature); unchanged for ``recording`` and for NPZ data (groups are an array)."""
    ignore = tuple(ignore or ())
    if (value is None or value == RECORDING or value in ignore
            or (data_path is not None and Path(data_path).suffix.lower() == ".npz")):
        return ignore
    return ignore + (value,)


def _parts(data):
    """(feature set or None, X, feature names, target names) of a FeatureSet, Table or the
    dict of ``cli.load_training_data``."""
    if isinstance(data, dict):
        return data.get("fs"), data["X"], data["features"], data["targets"]
    if hasattr(data, "window_start"):
        return data, data.X, data.feature_names, data.target_names
    return None, data.X, data.feature_names, data.target_names


def resolve_groups(value, data, data_path, *, sep=None, decimal=None, na_value=None,
                   **_ignored):
    """Group ids (n,) for ``--groups value`` (None: no groups), aligned with the loaded rows.

    ``data`` is the loaded FeatureSet, Table, or ``load_training_data`` dict; ``data_path`` the
    DATA argument; ``sep``, ``decimal``, ``na_value`` the loader's options (to find the rows it
    dropped). Raises :class:`CliError` with the reason when the groups cannot be resolved.
    """
    if value is None:
        return None
    fs, X, features, targets = _parts(data)
    n = np.asarray(X).shape[0]
    if value == RECORDING:
        if fs is None:
            raise CliError("--groups recording needs recordings (--sensors sensors.toml) or a "
                           "feature table written by 'sensorbudget features'; for a table, "
                           "give the name of its group column")
        return np.asarray(fs.groups)
    if fs is not None and Path(data_path).suffix.lower() != ".npz":
        raise CliError(f"--groups {value!r}: windows of recordings are grouped with --groups "
                       f"recording")
    if value in features or value in targets:
        raise CliError(f"--groups {value!r} is a feature or target column; it must be left out "
                       f"of the features (add it to --ignore)")
    path = Path(data_path)
    if path.suffix.lower() == ".npz":
        ids, keep = _npz_groups(path, value, targets, na_value)
    else:
        names, rows = _raw_rows(path, sep or ",")
        if value not in names:
            raise CliError(f"--groups {value!r} is not a column of {path.name} (columns: "
                           f"{', '.join(names[:8])}{', ...' if len(names) > 8 else ''})")
        ids = np.array([row[names.index(value)].strip() for row in rows])
        keep = _kept_rows(names, rows, list(features) + list(targets), decimal or ".",
                          na_value)
    ids = ids[keep]
    if ids.shape[0] != n:
        raise CliError(f"--groups {value!r} gives {ids.shape[0]} ids for {n} rows")
    if ids.dtype.kind in "US" and (ids == "").any():
        raise CliError(f"--groups {value!r} is empty in data row {int(np.argmax(ids == '')) + 1}")
    return ids


def _raw_rows(path: Path, sep: str):
    """(column names, rows of text cells) of a CSV (rows with a non-blank cell, as the loader)
    or ARFF file."""
    if path.suffix.lower() == ".arff":
        import arff

        with open(path, encoding="utf-8") as fh:
            data = arff.load(fh, return_type=arff.DENSE)
        names = [a[0] for a in data["attributes"]]
        return names, [["" if v is None else str(v) for v in row] for row in data["data"]]
    text = path.read_text(encoding="utf-8-sig")
    rows = [r for r in csv.reader(io.StringIO(text), delimiter=sep) if any(c.strip() for c in r)]
    if not rows:
        raise CliError(f"{path.name} is empty")
    header = [h.strip() for h in rows[0]]
    width = len(header)
    return header, [r + [""] * (width - len(r)) for r in rows[1:]]


def _kept_rows(names, rows, used, decimal, na_value) -> np.ndarray:
    """Rows whose used columns are all finite numbers (the loader keeps exactly these)."""
    from trainer.data import MISSING_TOKENS

    cols = [names.index(c) for c in used if c in names]
    keep = np.ones(len(rows), dtype=bool)
    for r, row in enumerate(rows):
        for c in cols:
            cell = row[c].strip()
            try:
                value = math.nan if cell in MISSING_TOKENS else float(cell.replace(decimal, "."))
            except ValueError:
                value = math.nan
            if not math.isfinite(value) or (na_value is not None and value == na_value):
                keep[r] = False
                break
    return keep


def _npz_groups(path: Path, value, targets, na_value):
    """(ids, kept rows) from an NPZ array ``value`` (one id per row of X)."""
    with np.load(path, allow_pickle=False) as npz:
        if value not in npz.files:
            raise CliError(f"--groups {value!r} is not an array of {path.name} (arrays: "
                           f"{', '.join(sorted(npz.files))})")
        ids, X, Y = npz[value], npz["X"], npz["Y"]
        names = [str(s) for s in npz["target_names"]] if "target_names" in npz.files else None
    Y = Y.reshape(len(Y), -1)
    if names is not None and targets:
        Y = Y[:, [names.index(t) for t in targets if t in names]]
    if ids.ndim != 1 or ids.shape[0] != X.shape[0]:
        raise CliError(f"--groups {value!r}: array of shape {ids.shape}, expected "
                       f"({X.shape[0]},)")
    both = np.column_stack([X, Y]).astype(np.float64)
    if na_value is not None:
        both[both == na_value] = np.nan
    return ids, np.isfinite(both).all(axis=1)
