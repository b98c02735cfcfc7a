"""Bulk (numpy) parsing of the common, well-formed tables behind :mod:`sensorbudget.trainer.data`.

Each function returns the parsed values, or None when the text needs the general, strict
decoder (quotes, missing-value tokens, non-numeric values, ragged rows, anything unusual);
:mod:`sensorbudget.trainer.data` then decodes it the general way, with the same values and the same error
messages. A bulk parse must therefore never accept a file the general decoder rejects, nor read
a value differently: every condition below exists for that.

- Dense ARFF and CSV: ``numpy.loadtxt`` (C tokenizer, ~100 MB/s) on the data lines.
- Sparse ARFF: liac-arff's own COO decoding (no per-cell Python lists) scattered into a dense
  array; absent entries are 0, or a nominal attribute's first value (liac-arff's rule).
"""

from __future__ import annotations

import operator
import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from .errors import DataError

#: Characters that send a data section to the general decoder (quoting, missing values,
#: sparse braces, comments, line separators str.splitlines knows but the csv module does not).
_ARFF_SPECIAL = re.compile(r"""['"?{}%\x0b\x0c\x1c-\x1e\x85\u2028\u2029]""")
_CSV_SPECIAL = re.compile(r"""["\x0b\x0c\x1c-\x1e\x85\u2028\u2029]""")
CSV_SEPARATORS = ",;\t|"
_DIGITS = re.compile(r"[0-9 ]*")


_ARFF_VALUE = r"""(?:[^\s,{}"']+|"[^"]*"|'[^']*')"""
_ARFF_NOMINAL = re.compile(rf"\{{\s*{_ARFF_VALUE}(?:\s*,\s*{_ARFF_VALUE})*\s*\}}")


def check_arff_nominals(text: str, path: Path) -> None:
    """Reject a malformed nominal declaration ``{a, b, ...}`` before liac-arff parses it: its
    nominal regex backtracks exponentially when it fails (``{0,,,,,,,,,,,,,,,,,,,,,,,,`` takes
    seconds, a few more commas hours). This check is linear and accepts a subset of what
    liac-arff accepts (no empty values)."""
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.strip().split(None, 1)
        if not words or words[0].lower() == "@data":
            return
        if words[0].lower() != "@attribute" or len(words) < 2:
            continue
        rest = words[1]
        if rest[:1] in "\"'" and rest[1:].find(rest[0]) >= 0:
            type_ = rest[rest[1:].find(rest[0]) + 2:].strip()
        else:
            type_ = rest.split(None, 1)[1].strip() if len(rest.split(None, 1)) > 1 else ""
        if type_.startswith("{") and not _ARFF_NOMINAL.fullmatch(type_):
            raise DataError(f"{path.name} line {number}: malformed nominal values "
                            f"{type_[:40]!r}; expected {{value, value, ...}}")


def _float_or_none(text):
    try:
        return float(text)
    except ValueError:
        return None


def split_arff(text: str):
    """(header through the @data line, data rows) as liac-arff reads them: rows stripped,
    blank and ``%`` comment rows left out; None without an @data line."""
    lines = text.split("\n")
    for k, line in enumerate(lines):
        if line.strip().upper().startswith("@DATA"):
            break
    else:
        return None
    rows = [r for r in (line.strip() for line in lines[k + 1:]) if r and r[0] != "%"]
    return "\n".join(lines[:k + 1]) + "\n", rows


def arff_values(text: str):
    """(liac-arff attributes, ``take``) or None (see the module docstring); ``take(columns)``
    returns the n x len(columns) float64 values of those attributes."""
    import arff

    parts = split_arff(text)
    if parts is None or not parts[1]:
        return None
    header, rows = parts
    try:
        attrs = arff.loads(header)["attributes"]
        if rows[0].startswith("{"):
            coo = _sparse_triplets(rows, attrs)
            if coo is None:                  # liac-arff's COO reader for anything unusual
                coo = arff.loads(text, return_type=arff.COO)["data"]
            take = _sparse_values(coo, attrs, len(rows))
        else:
            take = _dense_values(rows, attrs)
    except Exception:  # noqa: BLE001 - the general decoder reports every failure
        return None
    return None if take is None else (attrs, take)


def _sparse_triplets(rows, attrs):
    """(values, rows, columns) of plain sparse rows ``{i v, j w, ...}`` (numbers only, keys
    increasing, nominal values literally declared), or None. Equals liac-arff's COO output."""
    if any(kind == "STRING" for _, kind in attrs) or not all(
            r[0] == "{" and r[-1] == "}" for r in rows):
        return None
    inner = [r[1:-1] for r in rows]
    if any(_ARFF_SPECIAL.search(r) for r in inner):
        return None
    counts = np.array([r.count(",") + 1 if r.strip() else 0 for r in inner], dtype=np.intp)
    tokens = ",".join(r for r in inner if r.strip()).replace(",", " , ").split()
    pairs = int(counts.sum())
    if len(tokens) != 3 * pairs - 1 or set(tokens[2::3]) - {","}:
        return None
    keys, text = " ".join(tokens[0::3]), tokens[1::3]
    if not _DIGITS.fullmatch(keys):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cols = np.fromstring(keys, dtype=np.intp, sep=" ")
        values = np.fromstring(" ".join(text), dtype=np.float64, sep=" ")
    if cols.size != pairs or values.size != pairs:
        return None
    row_of = np.repeat(np.arange(len(rows)), counts)
    same = row_of[1:] == row_of[:-1]
    if (cols >= len(attrs)).any() or (np.diff(cols)[same] <= 0).any():
        return None
    declared, integer = {}, np.zeros(len(attrs), dtype=bool)
    for c, (_, kind) in enumerate(attrs):
        if isinstance(kind, (list, tuple)):
            declared.setdefault(tuple(kind), []).append(c)
        integer[c] = kind == "INTEGER"
    if integer.any():
        ints = integer[cols]
        if not np.isfinite(values[ints]).all():
            return None
        values = np.where(ints, np.trunc(values), values)
    for kind, columns in declared.items():
        mask = np.zeros(len(attrs), dtype=bool)
        mask[columns] = True
        where = np.flatnonzero(mask[cols])
        if where.size and not set(operator.itemgetter(*where)(text) if where.size > 1
                                  else [text[where[0]]]) <= set(kind):
            return None
    return values, row_of, cols


def _sparse_values(coo, attrs, n):
    """``take`` scattering liac-arff's COO triplets; None for a value that is not a number or
    a nominal attribute whose first value (the implicit one) is not a number."""
    data, rows, cols = coo
    try:
        values = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    rows = np.asarray(rows, dtype=np.intp)
    cols = np.asarray(cols, dtype=np.intp)
    implicit = np.zeros(len(attrs))
    for c, (_, kind) in enumerate(attrs):
        if isinstance(kind, (list, tuple)):
            first = _float_or_none(kind[0])
            if first is None:
                return None
            implicit[c] = first

    def take(columns):
        columns = np.asarray(columns, dtype=np.intp)
        where = np.full(len(attrs), -1, dtype=np.intp)
        where[columns] = np.arange(columns.size)
        out = np.empty((n, columns.size))
        out[:] = implicit[columns]      # absent entries: 0, or a nominal's first value
        pos = where[cols]
        keep = pos >= 0
        out.ravel()[rows[keep] * columns.size + pos[keep]] = values[keep]
        return out

    return take


def _dense_values(rows, attrs):
    """n x m by ``numpy.loadtxt``; None unless every value is a plain number, every nominal
    token is literally one of its declared values and INTEGER values are finite."""
    m = len(attrs)
    nominal = [c for c, (_, kind) in enumerate(attrs) if isinstance(kind, (list, tuple))]
    declared = {v for c in nominal for v in attrs[c][1]}     # Mulan: one shared declaration
    if any(kind == "STRING" for _, kind in attrs) or any(
            _float_or_none(v) is None for v in declared):
        return None
    if _ARFF_SPECIAL.search("\n".join(rows)):
        return None
    out = np.loadtxt(rows, delimiter=",", comments=None, dtype=np.float64, ndmin=2)
    if out.shape != (len(rows), m):
        return None
    for c, (_, kind) in enumerate(attrs):
        if kind == "INTEGER":
            if not np.isfinite(out[:, c]).all():
                return None
            out[:, c] = np.trunc(out[:, c])
    if nominal and not _nominals_declared(rows, attrs, nominal, m):
        return None
    return lambda columns: out[:, columns]


def _nominals_declared(rows, attrs, nominal, m) -> bool:
    """Whether every token of the ``nominal`` columns (rows of exactly m plain fields) is
    literally one of its column's declared values.

    Mulan labels (one declaration shared by the last or first k columns): the set of the
    tokens of that block of every row, from one split. Otherwise the columns' text by
    ``loadtxt``, checked column by column.
    """
    k = len(nominal)
    shared = {tuple(attrs[c][1]) for c in nominal}
    if len(shared) == 1 and nominal in (list(range(m - k, m)), list(range(k))):
        block = ([r.rsplit(",", k)[1:] for r in rows] if nominal[0] else
                 [r.split(",", k)[:k] for r in rows])
        tokens = ",".join(",".join(b) for b in block).split(",")
        return set(tokens) <= set(shared.pop())
    tokens = np.loadtxt(rows, delimiter=",", comments=None, dtype=str, ndmin=2,
                        usecols=nominal)
    return all(np.isin(tokens[:, j], list(attrs[c][1])).all() for j, c in enumerate(nominal))


def csv_values(lines: list, sep: str, decimal: str, header_len: int, used: list):
    """The CSV data ``lines`` (not blank, header left out) as n x len(used) float64, or None.

    Only for a "." decimal mark, a separator in ``CSV_SEPARATORS``, no quoting and rows that
    are not blank; a row shorter than the header, an empty cell or a missing-value token makes
    ``loadtxt`` fail and the general reader take over (it reports or handles them).
    """
    if decimal != "." or sep not in CSV_SEPARATORS or any(map(_CSV_SPECIAL.search, lines)):
        return None
    try:
        out = np.loadtxt(lines, delimiter=sep, comments=None, dtype=np.float64, ndmin=2,
                         usecols=list(range(header_len)))
    except Exception:  # noqa: BLE001 - the general reader reports every failure
        return None
    if out.shape[0] != len(lines):
        return None
    return out[:, used]


def check_utf8_text(path) -> None:
    """Refuse a file whose start holds NUL bytes: not UTF-8 text (UTF-16 or UTF-32 without a
    byte-order mark decodes as UTF-8 with a NUL after every character, and would give
    column names such as 't i m e')."""
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if b"\x00" in head:
        encoding = ("UTF-16" if head[1::2].count(0) > len(head) // 4 or
                    head[0::2].count(0) > len(head) // 4 else "binary")
        raise DataError(f"{str(path)!r} is not UTF-8 text (it holds NUL bytes; {encoding}?); "
                        f"save it as UTF-8")


def mulan_labels(xml_path) -> list:
    """Label names from a Mulan XML label file (``<label name="...">`` elements, nested too)."""
    try:
        root = ET.fromstring(xml_path.read_bytes())
    except ET.ParseError as exc:
        raise DataError(f"{str(xml_path)!r} is not valid XML: {exc}") from None
    names = [el.get("name") for el in root.iter() if el.tag.split("}")[-1] == "label"]
    if not names or any(n is None for n in names):
        raise DataError(f"{str(xml_path)!r} names no labels (<label name=...> elements)")
    return names
