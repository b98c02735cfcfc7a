"""Recordings: sensor streams as they come off a prototype, before windowing.

``RECORDINGS`` is a file or a directory:

- **CSV stream** (one recording): comma-separated with a header row; a ``time`` column in
  seconds (strictly increasing) and one column per sensor channel or per-sample target.
  Empty cells and ``nan``, ``NaN``, ``NA``, ``?`` are missing samples. Lines starting with
  ``#`` are comments. A :class:`~sensorbudget.trainer.sensing.streams.StreamFormat` reads other streams:
  another time column, in ms/us/ns since an epoch or ISO 8601 text; a file without a header
  (its column names given; ``.txt`` files separated by blanks, as Daphnet's); one long stream
  cut into recordings at time gaps or where a recording column changes.
- **NPZ stream** (one recording): 1-D arrays ``time`` and one per column, all the same length
  (read with ``allow_pickle=False``).
- **Directory with** ``index.csv``: header ``file,<label>,...``, one row per recording file
  (a CSV or NPZ stream, path relative to the directory) with its per-recording labels:
  numbers (regression targets) or text (class names).
- **Directory without index**: all ``*.ts`` files, else all ``*.csv``/``*.npz`` streams, in
  sorted name order.
- **.ts** (sktime/aeon, e.g. UEA BasicMotions): every case is a recording labelled by its class
  (label column ``class``, classes in ``@classLabel`` order). The files carry no time stamps:
  sample ``i`` is at ``i / sample_rate_hz``. BasicMotions' ``dim0..dim5`` are named ``acc_x,
  acc_y, acc_z, gyro_x, gyro_y, gyro_z`` (UEA documentation order); other problems ``dim<i>``.
- **Air Quality UCI** ``AirQualityUCI.csv`` (recognised by its ``Date;Time;CO(GT)`` header):
  ``;`` separated, decimal comma, ``-200`` = missing; the columns are renamed per
  :data:`AIR_QUALITY_COLUMNS` and ``time`` is seconds since the first record (Date + Time).

Missing samples are NaN; nothing is interpolated. :func:`~.streams.time_gaps` (also importable
from here) checks time stamps.
"""

from __future__ import annotations

import csv
import math
import zipfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from ..bulk_parse import check_utf8_text
from ..errors import DataError
from .streams import (StreamFormat, parse_times, resolve_unit, split_points,  # noqa: F401
                      time_gaps)

MISSING_TOKENS = {"", "nan", "NaN", "NA", "na", "?"}
PLAIN = StreamFormat()
INDEX_FILE = "index.csv"
BASIC_MOTIONS_CHANNELS = ("acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z")
AIR_QUALITY_MISSING = -200.0
AIR_QUALITY_COLUMNS = {
    "CO(GT)": "co_gt", "PT08.S1(CO)": "s1_co", "NMHC(GT)": "nmhc_gt", "C6H6(GT)": "c6h6_gt",
    "PT08.S2(NMHC)": "s2_nmhc", "NOx(GT)": "nox_gt", "PT08.S3(NOx)": "s3_nox",
    "NO2(GT)": "no2_gt", "PT08.S4(NO2)": "s4_no2", "PT08.S5(O3)": "s5_o3", "T": "t",
    "RH": "rh", "AH": "ah",
}


@dataclass
class Recording:
    """One recording: time stamps, columns (NaN = missing) and per-recording labels."""

    name: str
    time: np.ndarray
    columns: dict
    labels: dict = field(default_factory=dict)

    @property
    def n_samples(self) -> int:
        return int(self.time.shape[0])


@dataclass
class RecordingSet:
    """Recordings in order, plus the class names (in order) of each categorical label."""

    recordings: list
    classes: dict = field(default_factory=dict)


def _number(cell: str, where: str, decimal: str = ".") -> float:
    cell = cell.strip()
    if cell in MISSING_TOKENS:
        return math.nan
    try:
        return float(cell.replace(decimal, ".") if decimal != "." else cell)
    except ValueError:
        raise DataError(f"{where}: {cell!r} is not a number") from None


def _check_header(header: list, where: str, fmt: StreamFormat = PLAIN) -> None:
    duplicate = next((h for i, h in enumerate(header) if h in header[:i]), None)
    if duplicate is not None:
        raise DataError(f"{where}: duplicate column name {duplicate!r}")
    for role, name in (("time", fmt.time_column), ("recording", fmt.recording_column)):
        if name is not None and name not in header:
            hint = " (--time-column names another)" if role == "time" else ""
            raise DataError(f"{where}: no {name!r} column{hint} among its {len(header)} "
                            f"column(s)")


def _rows(fh) -> list:
    """Rows of a comma-separated file, or of a blank-separated one (no comma on its first
    line: Daphnet's text files); comment lines (``#``) left out."""
    lines = [line for line in fh.read().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    if lines and "," not in lines[0] and len(lines[0].split()) > 1:
        return [line.split() for line in lines]
    return list(csv.reader(lines))


def read_csv_stream(path, fmt: StreamFormat = PLAIN) -> Recording:
    """One recording from a comma- (or blank-) separated file with a time column."""
    path = Path(path)
    check_utf8_text(path)
    with open(path, newline="", encoding="utf-8") as fh:
        first = fh.readline()
        if first.startswith("Date;Time;"):
            return read_air_quality(path)
        fh.seek(0)
        rows = _rows(fh)
    if not rows:
        raise DataError(f"recording {str(path)!r} is empty")
    header = list(fmt.columns) if fmt.columns is not None else [h.strip() for h in rows[0]]
    body, first_line = (rows, 1) if fmt.columns is not None else (rows[1:], 2)
    _check_header(header, f"recording {str(path)!r}", fmt)
    t = header.index(fmt.time_column)
    data = np.empty((len(body), len(header)))
    for i, row in enumerate(body):
        where = f"{path.name} line {i + first_line}"
        if len(row) != len(header):
            raise DataError(f"{where}: {len(row)} fields, the header has {len(header)}")
        data[i] = [math.nan if j == t else _number(c, f"{where}, column {h!r}")
                   for j, (c, h) in enumerate(zip(row, header))]
    cols = {h: data[:, j] for j, h in enumerate(header) if j != t}
    cells = [row[t] for row in body]
    unit = resolve_unit(cells, path.name) if fmt.time_unit == "auto" else fmt.time_unit
    if unit == "s":                           # seconds as given (the documented format)
        time = np.array([_number(c, f"{path.name} line {i + first_line}, column "
                                    f"{fmt.time_column!r}") for i, c in enumerate(cells)])
    else:
        time = parse_times(cells, unit, path.name)
    return Recording(name=path.name, time=time, columns=cols)


def read_npz_stream(path, fmt: StreamFormat = PLAIN) -> Recording:
    """One recording from an NPZ of equal-length 1-D arrays, one of them the time column."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: np.asarray(npz[k]) for k in npz.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, MemoryError) as exc:
        raise DataError(f"recording {str(path)!r} is not a readable NPZ: {exc}") from None
    _check_header(list(arrays), f"recording {str(path)!r}", fmt)
    n = arrays[fmt.time_column].shape
    for key, arr in arrays.items():
        if arr.ndim != 1 or arr.shape != n or arr.dtype.kind not in "biuf":
            raise DataError(f"recording {str(path)!r}: array {key!r} has shape {arr.shape} and "
                            f"dtype {arr.dtype}; expected numeric of shape {n}")
    cols = {k: v.astype(np.float64) for k, v in arrays.items() if k != fmt.time_column}
    stamps = arrays[fmt.time_column]
    unit = (resolve_unit(stamps[:1].tolist(), path.name) if fmt.time_unit == "auto"
            else fmt.time_unit)
    if unit == "s":
        time = stamps.astype(np.float64)
    elif unit == "iso":
        raise DataError(f"recording {str(path)!r}: an NPZ time array is numeric; use "
                        f"--time-unit s, ms, us or ns")
    else:
        time = parse_times(stamps.tolist(), unit, path.name)
    return Recording(name=path.name, time=time, columns=cols)


def _parse_air_quality_time(date: str, clock: str, where: str) -> datetime:
    try:
        day, month, year = (int(v) for v in date.split("/"))
        hour, minute, second = (int(v) for v in clock.split("."))
        return datetime(year, month, day, hour, minute, second)
    except ValueError:
        raise DataError(f"{where}: bad date/time {date!r} {clock!r}") from None


def read_air_quality(path) -> Recording:
    """The UCI Air Quality stream: renamed columns, -200 as NaN, time from Date + Time."""
    path = Path(path)
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh, delimiter=";"))
    header = [h.strip() for h in rows[0]]
    if header[:2] != ["Date", "Time"]:
        raise DataError(f"{str(path)!r} does not start with the Air Quality header Date;Time")
    keep = [j for j, h in enumerate(header) if h]
    unknown = [header[j] for j in keep[2:] if header[j] not in AIR_QUALITY_COLUMNS]
    if unknown:
        raise DataError(f"{str(path)!r}: unexpected Air Quality column {unknown[0]!r}")
    rows = [r for r in rows[1:] if any(c.strip() for c in r)]
    stamps, values = [], np.empty((len(rows), len(keep) - 2))
    for i, row in enumerate(rows):
        where = f"{path.name} line {i + 2}"
        if len(row) <= keep[-1]:
            raise DataError(f"{where}: {len(row)} fields, the header has {len(header)}")
        stamps.append(_parse_air_quality_time(row[0], row[1], where))
        values[i] = [_number(row[j], f"{where}, column {header[j]!r}", decimal=",")
                     for j in keep[2:]]
    values[values == AIR_QUALITY_MISSING] = np.nan
    time = np.array([(s - stamps[0]).total_seconds() for s in stamps])
    cols = {AIR_QUALITY_COLUMNS[header[j]]: values[:, k] for k, j in enumerate(keep[2:])}
    return Recording(name=path.name, time=time, columns=cols)


def _ts_header(lines: list, where: str) -> tuple:
    """(problem name, class names, index of the first data line) of a .ts file."""
    problem, classes = "", ()
    for i, line in enumerate(lines):
        low = line.lower()
        if low.startswith("@problemname"):
            problem = line.split(None, 1)[1].strip() if len(line.split()) > 1 else ""
        elif low.startswith("@timestamps") and low.split()[-1] == "true":
            raise DataError(f"{where}: .ts files with time stamps are not supported")
        elif low.startswith("@classlabel"):
            parts = line.split()
            if len(parts) < 3 or parts[1].lower() != "true":
                raise DataError(f"{where}: needs '@classLabel true <classes>' (labelled cases)")
            classes = tuple(parts[2:])
        elif low.startswith("@data"):
            return problem, classes, i + 1
    raise DataError(f"{where}: no @data line")


def read_ts(path, sample_rate_hz: float) -> RecordingSet:
    """Every case of an sktime/aeon ``.ts`` file as a recording labelled with its class."""
    path = Path(path)
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")]
    problem, classes, first = _ts_header(lines, str(path))
    if not classes:
        raise DataError(f"{str(path)!r}: no @classLabel line; cases must be labelled")
    recordings = []
    for case, line in enumerate(lines[first:]):
        where = f"{path.name} case {case}"
        *dims, label = line.split(":")
        if not dims:
            raise DataError(f"{where}: expected '<dim 0>:...:<class>'")
        if label not in classes:
            raise DataError(f"{where}: class {label!r} is not in @classLabel {classes}")
        series = [[_number(v, where) for v in dim.split(",")] for dim in dims]
        if len({len(s) for s in series}) != 1:
            raise DataError(f"{where}: dimensions have different lengths")
        names = (BASIC_MOTIONS_CHANNELS if problem == "BasicMotions" and len(dims) == 6
                 else tuple(f"dim{j}" for j in range(len(dims))))
        cols = {n: np.array(s) for n, s in zip(names, series)}
        time = np.arange(len(series[0])) / sample_rate_hz
        recordings.append(Recording(f"{path.name}:{case}", time, cols, {"class": label}))
    if not recordings:
        raise DataError(f"{str(path)!r}: no cases after the @data line")
    return RecordingSet(recordings, {"class": classes})


def read_indexed_directory(directory, fmt: StreamFormat = PLAIN) -> RecordingSet:
    """Recordings listed in ``index.csv`` (``file`` column + per-recording labels)."""
    directory = Path(directory)
    where = str(inside(directory, directory / INDEX_FILE, "index"))
    check_utf8_text(directory / INDEX_FILE)
    with open(directory / INDEX_FILE, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.reader(fh) if r and not r[0].lstrip().startswith("#")]
    if not rows or rows[0][0].strip() != "file":
        raise DataError(f"{where}: the header must start with 'file'")
    header = [h.strip() for h in rows[0]]
    if len(set(header)) != len(header):
        raise DataError(f"{where}: duplicate column names in {header}")
    entries = [[c.strip() for c in r] for r in rows[1:]]
    for i, row in enumerate(entries):
        if len(row) != len(header) or "" in row:
            raise DataError(f"{where} line {i + 2}: expected {len(header)} non-empty fields")
    files = [r[0] for r in entries]
    outside = next((f for f in files if Path(f).is_absolute() or ".." in Path(f).parts), None)
    if outside is not None:
        raise DataError(f"{where}: recording {outside!r} is not a path inside {str(directory)!r}")
    duplicate = next((f for i, f in enumerate(files) if f in files[:i]), None)
    if duplicate is not None:
        raise DataError(f"{where}: recording {duplicate!r} is listed twice")
    labels, classes = {}, {}
    for j, name in enumerate(header[1:], start=1):
        raw = [r[j] for r in entries]
        try:
            labels[name] = [float(v) for v in raw]
        except ValueError:
            labels[name] = raw
            classes[name] = tuple(sorted(set(raw)))
    recordings = []
    for i, file in enumerate(files):
        for rec in read_stream(inside(directory, directory / file, "recording"), fmt):
            rec.labels = {**rec.labels, **{name: values[i] for name, values in labels.items()}}
            recordings.append(rec)
    if not recordings:
        raise DataError(f"{where} lists no recordings")
    return RecordingSet(recordings, classes)


def read_stream(path, fmt: StreamFormat = PLAIN) -> list:
    """The recordings of one CSV or NPZ stream file: one, or its pieces when ``fmt`` cuts it
    (``split_gaps``, ``recording_column``; pieces are named ``<file>#<k>``)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"recording {str(path)!r} does not exist")
    if path.suffix.lower() == ".npz":
        rec = read_npz_stream(path, fmt)
    elif path.suffix.lower() in (".csv", ".txt"):
        rec = read_csv_stream(path, fmt)
    else:
        raise DataError(f"recording {str(path)!r}: unknown suffix {path.suffix!r} (.csv, .txt "
                        f"or .npz)")
    return split_recording(rec, fmt)


def split_recording(rec: Recording, fmt: StreamFormat) -> list:
    """``rec`` cut where ``fmt`` says (see :func:`~sensorbudget.trainer.sensing.streams.split_points`); the
    recording column becomes the pieces' label of that name."""
    labels = rec.columns.pop(fmt.recording_column, None) if fmt.recording_column else None
    starts = split_points(rec.time, labels, fmt)
    if len(starts) == 1 and labels is None:
        return [rec]
    out = []
    for k, (a, b) in enumerate(zip(starts, [*starts[1:], rec.n_samples])):
        extra = {} if labels is None else {fmt.recording_column: float(labels[a])}
        out.append(Recording(f"{rec.name}#{k}", rec.time[a:b],
                             {c: v[a:b] for c, v in rec.columns.items()},
                             {**rec.labels, **extra}))
    return out


def load_recordings(path, sample_rate_hz: float, fmt: StreamFormat = PLAIN) -> RecordingSet:
    """Load a recording file or directory (see the module docstring for the formats).

    ``sample_rate_hz`` gives the time stamps of ``.ts`` cases (which carry none); ``fmt``
    says how CSV/NPZ streams are read and cut (:class:`~sensorbudget.trainer.sensing.streams.StreamFormat`).
    """
    path = Path(path)
    try:
        rset = _load(path, sample_rate_hz, fmt)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"recordings {str(path)!r} are not readable text: {exc}") from None
    for rec in rset.recordings:
        check_finite(rec)
    return rset


def check_finite(rec: Recording) -> None:
    """Refuse an infinite sample (a column holding ``inf`` or a number beyond float64, such
    as ``1e999``): a sample is a finite number or missing (NaN), nothing else."""
    for j, (name, values) in enumerate(rec.columns.items()):
        bad = np.flatnonzero(np.isinf(values))
        if bad.size:
            i = int(bad[0])
            raise DataError(f"recording {rec.name!r}: column {name!r} holds {values[i]:g} at "
                            f"sample {i} (t={rec.time[i]:g} s); samples must be finite numbers "
                            f"(an empty cell or nan marks a missing sample)")


def inside(directory: Path, file: Path, what: str) -> Path:
    """``file`` when it, after following every link, is inside ``directory``; otherwise a
    :class:`DataError` naming it (a link in a recordings folder must not lead out of it)."""
    try:
        resolved = file.resolve()
    except (RuntimeError, OSError) as exc:           # a link loop (Python < 3.13: RuntimeError)
        raise DataError(f"{what} {str(file)!r} cannot be resolved: {exc.__class__.__name__} "
                        f"(a link loop?)") from None
    if not resolved.is_relative_to(directory.resolve()):
        raise DataError(f"{what} {str(file)!r} leads outside {str(directory)!r} (a link "
                        f"out of the folder); copy the file into the folder instead")
    return file


def _load(path: Path, sample_rate_hz: float, fmt: StreamFormat) -> RecordingSet:
    if path.is_dir():
        if (path / INDEX_FILE).is_file():
            return read_indexed_directory(path, fmt)
        ts = [inside(path, p, "recording") for p in sorted(path.glob("*.ts"))]
        if ts:
            sets = [read_ts(p, sample_rate_hz) for p in ts]
            if len({tuple(s.classes["class"]) for s in sets}) != 1:
                raise DataError(f"the .ts files in {str(path)!r} declare different classes")
            return RecordingSet([r for s in sets for r in s.recordings], sets[0].classes)
        suffixes = (".csv", ".npz") + ((".txt",) if fmt.columns is not None else ())
        streams = [inside(path, p, "recording") for p in sorted(path.iterdir())
                   if p.suffix.lower() in suffixes]
        if not streams:
            raise DataError(f"directory {str(path)!r} holds no {INDEX_FILE}, .ts, "
                            f"{', '.join(suffixes)}")
        return RecordingSet([r for p in streams for r in read_stream(p, fmt)])
    if not path.exists():
        raise DataError(f"recordings {str(path)!r} do not exist")
    if path.suffix.lower() == ".ts":
        return read_ts(path, sample_rate_hz)
    return RecordingSet(read_stream(path, fmt))
