"""Feature tables from CSV, ARFF (dense and sparse, Mulan style) and NPZ files.

Every loader returns a :class:`Table`: ``X`` (n x d float64), ``Y`` (n x t float64),
``feature_names``, ``target_names`` and the ``task`` the targets suggest ("multilabel" for Mulan
label columns, which must be 0/1; "regression" otherwise). Missing values (empty cells, ``?``,
NaN, a user-given sentinel such as -200, or inf) are an error unless ``drop_missing`` (True, or
the largest fraction of rows that may go), which drops every row with a missing value in a used
column and reports the rows, the fraction and the count per column (``Table.missing``,
:mod:`sensorbudget.trainer.missing`); dropping more than that fraction (default one half) is refused.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import zipfile
from pathlib import Path

import numpy as np

from . import bulk_parse, class_table
from .errors import DataError
from .table import Table, finish_table

MISSING_TOKENS = {"", "?", "na", "nan", "NA", "NaN", "null"}


def file_info(path: Path) -> dict:
    """{'file': name, 'sha256': digest} of a data file (recorded in the bundle)."""
    return {"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def _check_file(path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file {str(path)!r} does not exist")
    if path.stat().st_size == 0:
        raise DataError(f"data file {str(path)!r} is empty")
    return path


def _targets_last(labels, targets, targets_last):
    """``labels`` selecting the last ``targets_last`` columns (regression targets)."""
    if targets_last is not None and (labels or targets or targets_last < 1):
        raise DataError(f"--targets-last {targets_last}: give at least 1, and name the targets "
                        f"one way (--targets-last N, --labels L or --target NAME)")
    return targets_last or labels


def split_columns(names, targets=None, labels=None, ignore=()):
    """Indices of (feature, target) columns: targets by name, or the last ``labels`` columns."""
    names = list(names)
    ignore = set(ignore)
    for name in ignore:
        if name not in names:
            raise DataError(f"ignored column {name!r} is not in the data (columns: "
                            f"{', '.join(names[:8])}{', ...' if len(names) > 8 else ''})")
    if targets:
        for name in targets:
            if name not in names:
                raise DataError(f"unknown target {name!r}; the data has columns "
                                f"{', '.join(names[:8])}{', ...' if len(names) > 8 else ''}")
        tidx = [names.index(t) for t in targets]
    elif labels:
        if labels >= len(names):
            raise DataError(f"labels={labels} leaves no feature columns ({len(names)} columns)")
        tidx = list(range(len(names) - labels, len(names)))
    else:
        raise DataError("no targets given: name them with --target NAME or use --labels L")
    fidx = [i for i in range(len(names)) if i not in tidx and names[i] not in ignore]
    return fidx, tidx


def _parse_number(text: str, decimal: str):
    text = text.strip()
    if text in MISSING_TOKENS:
        return math.nan
    if decimal != ".":
        text = text.replace(decimal, ".")
    return float(text)


def load_csv(path, *, targets=None, labels=None, sep=",", decimal=".", ignore=(),
             drop_missing=False, na_value=None, task="regression", groups=None,
             keep_missing_targets=False, targets_last=None) -> Table:
    """Load a CSV table with a header row. Columns with an empty name that are empty in every
    row (trailing separators) and rows that are entirely empty are ignored. ``groups`` names a
    column of sample-group ids (any text; not a feature)."""
    path = _check_file(path)
    bulk_parse.check_utf8_text(path)
    labels = _targets_last(labels, targets, targets_last)
    if labels and task == "regression" and not targets_last:
        task = "multilabel"            # the last L columns are 0/1 labels, as in ARFF
    if len(sep) != 1 or len(decimal) != 1 or sep == decimal:
        raise DataError(f"separator {sep!r} and decimal mark {decimal!r} must be two different "
                        f"single characters")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"{str(path)!r} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    bulk = None if groups is not None else _csv_bulk(text, sep, decimal, targets, labels, ignore)
    if bulk is not None:
        names, fidx, tidx, values = bulk
        return finish_table(values[:, :len(fidx)], values[:, len(fidx):],
                            [names[i] for i in fidx], [names[i] for i in tidx], task=task,
                            source=file_info(path), drop_missing=drop_missing,
                            na_value=na_value, keep_missing_targets=keep_missing_targets)
    rows = [r for r in csv.reader(io.StringIO(text), delimiter=sep)
            if any(cell.strip() for cell in r)]
    if len(rows) < 2:
        raise DataError(f"{str(path)!r} has a header but no data rows")
    header = [h.strip() for h in rows[0]]
    keep = [i for i, h in enumerate(header)
            if h or any(i < len(r) and r[i].strip() for r in rows[1:])]
    names = [header[i] or f"column{i + 1}" for i in keep]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise DataError(f"duplicate column name {dup!r} in {str(path)!r}")
    fidx, tidx = split_columns(names, targets, labels, _with_group(ignore, groups, names))
    used = [keep[i] for i in fidx + tidx]
    ids = None
    if groups is not None:
        g = keep[names.index(groups)]
        ids = np.array([row[g].strip() if g < len(row) else "" for row in rows[1:]])
    classes = class_table.encode(rows, [keep[i] for i in tidx], decimal, MISSING_TOKENS)
    values = _parse_rows(path, rows, header, used, decimal)
    k = len(fidx)
    return class_table.attach(classes, finish_table(
        values[:, :k], values[:, k:], [names[i] for i in fidx], [names[i] for i in tidx],
        task=task, source=file_info(path), drop_missing=drop_missing, na_value=na_value,
        groups=ids, keep_missing_targets=keep_missing_targets))


def _csv_bulk(text, sep, decimal, targets, labels, ignore):
    """(names, feature columns, target columns, values) of a plain numeric CSV parsed in bulk
    (:func:`sensorbudget.trainer.bulk_parse.csv_values`: header names all given and distinct), else None:
    the row-by-row reader then handles (or reports) everything else."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    names = [h.strip() for h in next(csv.reader([lines[0]], delimiter=sep))]
    if not all(names) or len(set(names)) != len(names):
        return None
    try:
        fidx, tidx = split_columns(names, targets, labels, tuple(ignore))
    except DataError:
        return None
    values = bulk_parse.csv_values(lines[1:], sep, decimal, len(names), fidx + tidx)
    return None if values is None else (names, fidx, tidx, values)


def _parse_rows(path, rows, header, used, decimal) -> np.ndarray:
    """The ``used`` columns of the CSV rows (header first) as floats, cell by cell, with the
    strict errors (short rows, cells that are not numbers)."""
    values = np.empty((len(rows) - 1, len(used)))
    for r, row in enumerate(rows[1:], start=2):
        if len(row) < len(header) and len(row) <= max(used):
            raise DataError(f"{path.name} line {r}: {len(row)} fields, expected {len(header)}")
        for c, i in enumerate(used):
            try:
                values[r - 2, c] = _parse_number(row[i], decimal)
            except ValueError:
                raise DataError(f"{path.name} line {r}, column {header[i]!r}: {row[i].strip()!r} "
                                f"is not a number") from None
    return values


def _with_group(ignore, groups, names) -> tuple:
    """The ignore list plus the group column (checked to exist), which is never a feature."""
    if groups is None:
        return tuple(ignore)
    if groups not in names:
        raise DataError(f"group column {groups!r} is not in the data (columns: "
                        f"{', '.join(names[:8])}{', ...' if len(names) > 8 else ''})")
    return tuple(ignore) + ((groups,) if groups not in ignore else ())


def load_arff(path, *, targets=None, labels=None, xml=None, ignore=(), drop_missing=False,
              na_value=None, groups=None, keep_missing_targets=False,
              targets_last=None) -> Table:
    """Load a dense or sparse ARFF file (Mulan style: 0/1 labels by ``labels`` or ``xml``, or
    the last ``targets_last`` columns as regression targets). Nominal {0,1} attributes are read
    as numbers; one target attribute of text classes (nominal or string) makes a multi-class
    table (:mod:`.class_table`); other text attributes are an error unless ignored."""
    import arff

    path = _check_file(path)
    bulk_parse.check_utf8_text(path)
    labels = _targets_last(labels, targets, targets_last)
    if xml is not None and not targets:
        targets = bulk_parse.mulan_labels(_check_file(xml))
    task = "multilabel" if (labels or xml) and not targets_last else "regression"
    try:
        text = path.read_text(encoding="utf-8")
        bulk_parse.check_arff_nominals(text, path)
        bulk = None if groups is not None else bulk_parse.arff_values(text)
        data = None if bulk is not None else arff.loads(text, return_type=arff.DENSE)
    except (arff.ArffException, UnicodeDecodeError, ValueError, IndexError, KeyError,
            TypeError) as exc:  # liac-arff fails with these on some malformed headers
        raise DataError(f"{str(path)!r} is not a readable ARFF file: {_exc_text(exc)}") from None
    if bulk is not None:
        return _arff_table(path, bulk, targets, labels, ignore, task, drop_missing, na_value,
                           keep_missing_targets)
    attrs = data["attributes"]
    names = [a[0] for a in attrs]
    fidx, tidx = split_columns(names, targets, labels, _with_group(ignore, groups, names))
    rows = data["data"]
    if not rows:
        raise DataError(f"{str(path)!r} has no data rows")
    ids = None
    if groups is not None:
        g = names.index(groups)
        ids = np.array(["" if row[g] is None else str(row[g]) for row in rows])
    values = np.empty((len(rows), len(fidx) + len(tidx)))
    classes = None
    for c, i in enumerate(fidx + tidx):
        kind = attrs[i][1]
        column = [row[i] for row in rows]
        try:
            values[:, c] = [math.nan if v is None else float(v) for v in column]
        except (TypeError, ValueError):
            if tidx == [i] and not labels:             # one target of text classes
                classes, values[:, c] = class_table.encode_values(column, MISSING_TOKENS)
                continue
            raise DataError(f"ARFF attribute {names[i]!r} ({kind if isinstance(kind, str) else 'nominal'}) "
                            f"is not numeric; ignore it with --ignore") from None
    k = len(fidx)
    return class_table.attach(classes, finish_table(
        values[:, :k], values[:, k:], [names[i] for i in fidx], [names[i] for i in tidx],
        task=task, source=file_info(path), drop_missing=drop_missing, na_value=na_value,
        groups=ids, keep_missing_targets=keep_missing_targets))


def _arff_table(path, bulk, targets, labels, ignore, task, drop_missing, na_value,
                keep_missing_targets) -> Table:
    """The Table of an ARFF file parsed in bulk (:func:`sensorbudget.trainer.bulk_parse.arff_values`)."""
    attrs, take = bulk
    names = [a[0] for a in attrs]
    fidx, tidx = split_columns(names, targets, labels, tuple(ignore))
    return finish_table(take(fidx), take(tidx), [names[i] for i in fidx],
                        [names[i] for i in tidx], task=task, source=file_info(path),
                        drop_missing=drop_missing, na_value=na_value,
                        keep_missing_targets=keep_missing_targets)


def _exc_text(exc) -> str:
    """``str(exc)``, or the type name when the exception cannot format itself (liac-arff's
    ``ArffException.__str__`` applies ``%`` to a message that can hold the offending line)."""
    try:
        return " ".join(str(exc).split())
    except Exception:  # noqa: BLE001 - any failure to format is replaced by the type name
        return type(exc).__name__


def load_npz(path, *, targets=None, drop_missing=False, na_value=None, task=None, groups=None,
             keep_missing_targets=False) -> Table:
    """Load ``X``, ``Y`` and optional ``feature_names``, ``target_names``, ``task`` from an NPZ
    (``allow_pickle=False``: object arrays are refused); ``groups`` names an array of group ids.
    A ``Y`` of text (one column) holds class names: a multi-class table (:mod:`.class_table`)."""
    path = _check_file(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError, MemoryError, TypeError) as exc:
        raise DataError(f"{str(path)!r} is not a readable NPZ without pickles (an NPZ archive of "
                        f"arrays): {exc}") from None
    for key in ("X", "Y"):
        if key not in arrays:
            raise DataError(f"{str(path)!r} has no array {key!r} (found {sorted(arrays)})")
    X, Y = arrays["X"], arrays["Y"]
    classes = None
    if Y.dtype.kind in "US" and Y.size and (Y.ndim == 1 or Y.shape[1:] == (1,)):
        classes, Y = class_table.encode_values(Y.reshape(-1).tolist(), MISSING_TOKENS)
    if X.dtype.kind not in "biuf" or Y.dtype.kind not in "biuf":
        raise DataError(f"X and Y in {str(path)!r} must be numeric (got {X.dtype}, {Y.dtype})")
    Y = Y[:, None] if Y.ndim == 1 else Y
    if X.ndim != 2 or Y.ndim != 2 or any(arrays[k].ndim != 1 for k in (
            "feature_names", "target_names") if k in arrays):
        raise DataError(f"{str(path)!r}: X must be 2-D, Y 1-D or 2-D and the name arrays 1-D "
                        f"(got X {X.shape}, Y {Y.shape})")
    if X.size == 0 or Y.size == 0:
        raise DataError(f"{str(path)!r}: X {X.shape} or Y {Y.shape} holds no values")
    for key in ("feature_names", "target_names", "task"):
        if key in arrays and arrays[key].dtype.kind == "U" and arrays[key].size and (
                np.ascontiguousarray(arrays[key]).reshape(-1).view(np.uint32) > 0x10FFFF).any():
            raise DataError(f"{str(path)!r}: unreadable names or task ({key!r} holds code "
                            f"points beyond U+10FFFF)")
    try:    # numpy turns a unicode array with invalid code points into a SystemError
        features = [str(s) for s in arrays.get("feature_names",
                                               [f"x{i}" for i in range(X.shape[1])])]
        names = [str(s) for s in arrays.get("target_names", [f"y{j}" for j in range(Y.shape[1])])]
        file_task = str(arrays["task"]) if "task" in arrays else "regression"
    except (SystemError, UnicodeError, ValueError) as exc:
        raise DataError(f"{str(path)!r}: unreadable names or task ({_exc_text(exc)})") from None
    if len(features) != X.shape[1] or len(names) != Y.shape[1] or len(X) != len(Y):
        raise DataError(f"{str(path)!r}: X {X.shape}, Y {Y.shape}, {len(features)} feature "
                        f"names and {len(names)} target names do not agree")
    if targets:
        _, tidx = split_columns(names, targets)
        Y, names = Y[:, tidx], [names[j] for j in tidx]
    task = task or file_task
    if task not in ("regression", "multilabel", "multiclass"):
        raise DataError(f"{str(path)!r}: task={task[:40]!r} is not regression, multilabel or "
                        f"multiclass")
    ids = None
    if groups is not None:
        if groups not in arrays:
            raise DataError(f"group array {groups!r} is not in {str(path)!r} (arrays: "
                            f"{', '.join(sorted(arrays))})")
        ids = arrays[groups]
        if ids.shape != (X.shape[0],):
            raise DataError(f"group array {groups!r} has shape {ids.shape}; expected ({X.shape[0]},)")
    return class_table.attach(classes, finish_table(
        X, Y, features, names, task=task, source=file_info(path), drop_missing=drop_missing,
        na_value=na_value, groups=ids, keep_missing_targets=keep_missing_targets))


def load_table(path, *, fmt=None, **options) -> Table:
    """Dispatch on the file suffix (or ``fmt`` in {"csv", "arff", "npz"})."""
    path = _check_file(path)
    fmt = fmt or path.suffix.lower().lstrip(".")
    loaders = {"csv": load_csv, "txt": load_csv, "arff": load_arff, "npz": load_npz}
    if fmt not in loaders:
        raise DataError(f"cannot tell the format of {str(path)!r} (suffix {path.suffix!r}); "
                        f"expected one of .csv, .arff, .npz")
    loader = loaders[fmt]
    accepted = loader.__code__.co_varnames[1:loader.__code__.co_argcount + loader.__code__.co_kwonlyargcount]
    unused = [k for k, v in options.items() if v not in (None, False, (), []) and k not in accepted]
    if unused:
        raise DataError(f"option {unused[0]!r} does not apply to {fmt.upper()} files")
    try:
        return loader(path, **{k: v for k, v in options.items() if k in accepted and v is not None})
    except csv.Error as exc:                   # e.g. a field over csv's 131072-character limit
        raise DataError(f"{str(path)!r} is not a readable table: {exc}") from None
