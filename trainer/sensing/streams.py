"""How CSV/NPZ streams are read: the time column and its unit, header-less files, and cutting
one long stream into recordings.

:class:`StreamFormat` holds the options (``--time-column``, ``--time-unit``, ``--columns``,
``--split-gaps``, ``--recording-column``). Time stamps become seconds since the stream's first
sample, from seconds, milliseconds, microseconds or nanoseconds since any epoch (integers are
subtracted exactly before scaling, so epoch nanoseconds keep their precision) or from ISO 8601
text (``2024-05-01T12:00:00.125Z``; a zone-less stamp is taken as is, and a stream must not mix
zoned and zone-less stamps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ..errors import DataError

TIME_UNITS = {"s": 1, "ms": 10 ** 3, "us": 10 ** 6, "ns": 10 ** 9}
#: Largest relative difference between a declared sample rate and the rate the time stamps
#: show (:func:`measured_rate`) before the declaration is refused as contradicted.
RATE_TOLERANCE = 0.02


@dataclass(frozen=True)
class StreamFormat:
    """Reading options of CSV/NPZ streams (the defaults read the documented format).

    time_column : the column of time stamps; time_unit : "s", "ms", "us", "ns" (numbers) or
    "iso" (ISO 8601 text); columns : the names of a file without a header row (its fields may
    then be separated by blanks, as in Daphnet's text files); split_gaps : cut a recording where
    consecutive time stamps are more than this many seconds apart; recording_column : cut a
    recording where this column's value changes (the column is then a label, not a channel).
    """

    time_column: str = "time"
    time_unit: str = "auto"
    columns: tuple | None = None
    split_gaps: float | None = None
    recording_column: str | None = None

    def __post_init__(self):
        if self.time_unit not in (*TIME_UNITS, "iso", "auto"):
            raise DataError(f"time unit {self.time_unit!r} is not one of "
                            f"{', '.join((*TIME_UNITS, 'iso', 'auto'))}")
        if self.split_gaps is not None and not (math.isfinite(self.split_gaps)
                                                and self.split_gaps > 0):
            raise DataError(f"split gap {self.split_gaps!r} s must be a number > 0")
        if self.columns is not None:
            names = list(self.columns)
            twice = next((c for i, c in enumerate(names) if c in names[:i]), None)
            if twice is not None or not names:
                raise DataError(f"--columns names {twice!r} twice" if twice else
                                "--columns names no column")
        if self.recording_column is not None and self.recording_column == self.time_column:
            raise DataError("the recording column cannot be the time column")

    def options(self) -> dict:
        """The fields that differ from the defaults, as JSON values (what a feature file and a
        bundle store as ``recording_options``, so that later reads of recordings reuse them)."""
        out = {}
        for name, spec in self.__dataclass_fields__.items():
            value = getattr(self, name)
            if value != spec.default:
                out[name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_options(cls, options: dict | None, given: "StreamFormat | None" = None
                     ) -> "StreamFormat":
        """A StreamFormat of stored ``options`` (:meth:`options`), with the fields that
        ``given`` sets (not the defaults) over them; a DataError for an unknown field."""
        merged = {**(options or {}), **(given.options() if given is not None else {})}
        unknown = [k for k in merged if k not in cls.__dataclass_fields__]
        if unknown:
            raise DataError(f"recording option {unknown[0]!r} is not one of "
                            f"{', '.join(cls.__dataclass_fields__)}")
        if merged.get("columns") is not None:
            merged["columns"] = tuple(merged["columns"])
        return cls(**merged)


#: Epoch time stamps told apart by their size (``time_unit="auto"``): the smallest value of
#: each unit for a date after 2001-09-09 (10^9 s since 1970) and the largest before 2286.
EPOCH_RANGES = (("s", 1e9, 1e10), ("ms", 1e12, 1e13), ("us", 1e15, 1e16), ("ns", 1e18, 1e19))


def resolve_unit(cells, where: str) -> str:
    """The unit of ``time_unit="auto"`` time stamps, told by their values: ISO 8601 text
    (``iso``); numbers since an epoch after 2001 in s, ms, us or ns (by the size of the first
    one, :data:`EPOCH_RANGES`); any other numbers are seconds as given (``s``).

    >>> resolve_unit(["2024-05-01T12:00:00Z"], "r"), resolve_unit(["1714564800123"], "r")
    ('iso', 'ms')
    >>> resolve_unit(["0.05", "0.10"], "r")
    's'
    """
    first = next((str(c).strip() for c in cells
                  if str(c).strip() not in ("", "nan", "NaN", "NA", "na", "?")), None)
    if first is None:
        return "s"
    try:
        value = abs(float(first))
    except ValueError:
        try:
            datetime.fromisoformat(first)
        except ValueError:
            raise DataError(f"{where}: time stamp {first!r} is neither a number nor an ISO "
                            f"8601 time (e.g. 2024-05-01T12:00:00.125Z); give --time-unit "
                            f"(s, ms, us, ns, iso)") from None
        return "iso"
    return next((unit for unit, low, high in EPOCH_RANGES if low <= value < high), "s")


def parse_times(cells, unit: str, where: str) -> np.ndarray:
    """Seconds since the first stamp of ``cells`` (strings or numbers); NaN where missing."""
    if unit == "iso":
        return _iso_seconds(cells, where)
    values = []
    for i, cell in enumerate(cells):
        text = str(cell).strip()
        if text in ("", "nan", "NaN", "NA", "na", "?"):
            values.append(None)
            continue
        try:
            values.append(int(text))
        except ValueError:
            try:
                values.append(float(text))
            except ValueError:
                raise DataError(f"{where}, sample {i}: time stamp {text!r} is not a number "
                                f"(an ISO 8601 time column needs --time-unit iso)") from None
    first = next((v for v in values if v is not None), 0)
    scale = TIME_UNITS[unit]
    return np.array([math.nan if v is None else (v - first) / scale for v in values])


def _iso_seconds(cells, where: str) -> np.ndarray:
    stamps = []
    for i, cell in enumerate(cells):
        text = str(cell).strip()
        if text in ("", "nan", "NaN", "NA", "na", "?"):
            stamps.append(None)
            continue
        try:
            stamps.append(datetime.fromisoformat(text))
        except ValueError:
            raise DataError(f"{where}, sample {i}: {text!r} is not an ISO 8601 time stamp "
                            f"(e.g. 2024-05-01T12:00:00.125Z)") from None
    present = [s for s in stamps if s is not None]
    if len({s.tzinfo is None for s in present}) > 1:
        raise DataError(f"{where}: time stamps mix ones with and without a time zone")
    first = present[0] if present else None
    return np.array([math.nan if s is None else (s - first).total_seconds() for s in stamps])


def split_points(time: np.ndarray, labels, fmt: StreamFormat) -> list:
    """Start indices of the pieces of one recording (always begins with 0): where the time
    step exceeds ``split_gaps`` or the value of the recording column changes."""
    cuts = {0}
    if fmt.split_gaps is not None and time.size > 1:
        cuts |= set((np.flatnonzero(np.diff(time) > fmt.split_gaps) + 1).tolist())
    if labels is not None and len(labels) > 1:
        values = np.asarray(labels)
        same = (values[1:] == values[:-1]) | (np.isnan(values[1:]) & np.isnan(values[:-1]))
        cuts |= set((np.flatnonzero(~same) + 1).tolist())
    return sorted(cuts)


def time_gaps(rec, sample_rate_hz: float) -> np.ndarray:
    """Boolean array (n-1,): True where the step from sample i to i+1 of the recording ``rec``
    (its ``time`` and ``name``: a :class:`~sensorbudget.trainer.sensing.recordings.Recording`) is a gap.

    A gap is a step longer than 1.5 sample periods. Steps that are not positive (time going
    backwards or repeated) or shorter than half a period are errors: the recording is not on
    the sensors' sample clock and must be fixed or resampled first, and so is a declared
    rate that the steps contradict (:func:`check_declared_rate`).
    """
    t = rec.time
    if not np.isfinite(t).all():
        i = int(np.flatnonzero(~np.isfinite(t))[0])
        raise DataError(f"recording {rec.name!r}: missing time stamp at sample {i}")
    dt = np.diff(t)
    back = np.flatnonzero(dt <= 0)
    if back.size:
        i = int(back[0])
        raise DataError(f"recording {rec.name!r}: time stamps are not strictly increasing "
                        f"(t={t[i + 1]:g} s at sample {i + 1} follows t={t[i]:g} s)")
    check_declared_rate(f"recording {rec.name!r}", dt, sample_rate_hz)
    period = 1.0 / sample_rate_hz
    short = np.flatnonzero(dt < 0.5 * period)
    if short.size:
        i = int(short[0])
        raise DataError(f"recording {rec.name!r}: time step {dt[i]:g} s at sample {i + 1} is "
                        f"shorter than half the sample period {period:g} s "
                        f"(sample_rate_hz={sample_rate_hz:g})")
    return dt > 1.5 * period


def measured_rate(dt: np.ndarray) -> float | None:
    """The sample rate the time steps ``dt`` show: 1 / the mean of the steps within half a
    median step of the median step (gaps and their neighbours left out; integer millisecond
    stamps of a 64 Hz stream, steps of 15 and 16 ms, give 64 Hz); None without a step."""
    if dt.size == 0:
        return None
    median = float(np.median(dt))
    regular = dt[np.abs(dt - median) <= 0.5 * median]
    return 1.0 / float(regular.mean())


def check_declared_rate(where: str, dt: np.ndarray, sample_rate_hz: float) -> None:
    """A :class:`DataError` naming both rates when the time steps ``dt`` (of ``where``: the
    recording, or a sensor of it)
    show a rate more than :data:`RATE_TOLERANCE` away from the declared ``sample_rate_hz``
    (a 40 Hz declaration on 64 Hz data)."""
    rate = measured_rate(dt)
    if rate is not None and abs(rate - sample_rate_hz) > RATE_TOLERANCE * sample_rate_hz:
        raise DataError(f"{where}: its time stamps show {rate:.6g} Hz (mean regular "
                        f"step {1 / rate:.6g} s) but sample_rate_hz={sample_rate_hz:g} is "
                        f"declared (tolerance {RATE_TOLERANCE:.0%}); fix the declared rate or "
                        f"the time column")
