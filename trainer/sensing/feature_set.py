"""Recordings + ``sensors.toml`` -> the candidate feature table the trainer selects from.

Windows
-------
Window ``k`` of a recording covers samples ``[k*hop, k*hop + window)``; windows whose samples
would run past the end are not formed. A window is skipped (and counted) when one of its
samples is missing (NaN) in a channel some feature uses, or when it spans a time gap (a step
longer than 1.5 sample periods); with ``on_missing = "error"`` either is an error instead.
Nothing is ever interpolated. A recording shorter than one window is an error.

Targets
-------
- Labelled recordings (an index file, ``.ts`` classes): every window of a recording gets the
  recording's labels. A single categorical label becomes one-hot 0/1 columns named by class
  (task ``multiclass``); several categorical labels give ``<label>=<class>`` columns
  (``multilabel``); numeric labels are regression targets.
- Streams: the target of a window is the target column's value at the window's last sample;
  windows where any target is missing there are skipped. Target columns are
  ``sensors.toml``'s ``targets``, or every column that is not a declared sensor channel.

NPZ layout (``allow_pickle=False``; strings are unicode arrays)
---------------------------------------------------------------
``X`` (windows x features, float32: exactly the device's float32 values; rows in recording
order, windows in time order), ``Y`` (windows x targets, float64), ``feature_names``,
``target_names``, ``feature_extractors`` (the extractor each feature needs; today every
extractor yields one feature and carries its name), ``feature_sensors`` (the sensors a feature
needs, joined with ``+``, e.g. ``"accel+gyro"``), ``feature_kinds``, ``feature_channels``
(``+``-joined), ``window``, ``hop`` (samples), ``sample_rate`` (Hz), ``groups`` (recording
index of each window), ``window_start`` (first sample of each window in its recording),
``recording_names``, ``task``, ``currency``, ``sensors_json`` (the sensors as in the bundle),
``format`` and ``format_version``.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..bundle.files import npz_bytes
from ..errors import DataError
from ..tasks import stored_task
from . import rates
from .channel_bounds import bounds_json, parse_bounds, recording_bounds
from .extractors import window_view
from .feature_checks import check_arrays, check_structure
from .members import names as _names
from .members import scalar as _scalar
from .recordings import RecordingSet, load_recordings, time_gaps
from .sensor_budget import per_prediction
from .sensor_files import load_sensor_folders
from .sensors import ON_MISSING, SensorSpec, load_sensor_spec
from .specs import parse_spec, transforms_of
from .streams import StreamFormat
from .targets import label_targets as _label_targets
from .targets import stream_targets as _stream_targets

FORMAT = "sensorbudget-features"
F32_MAX = float(np.finfo(np.float32).max)
FORMAT_VERSION = 1
ARITHMETIC = "float32-sequential-v1"
_STRINGS = ("feature_names", "target_names", "feature_extractors", "feature_sensors",
            "feature_kinds", "feature_channels", "recording_names")


@dataclass
class FeatureSet:
    """Candidate features per window, their targets, and what each feature needs."""

    X: np.ndarray
    Y: np.ndarray
    feature_names: list
    target_names: list
    feature_extractors: list
    feature_sensors: list
    feature_kinds: list
    feature_channels: list
    window: int
    hop: int
    sample_rate: float
    groups: np.ndarray
    window_start: np.ndarray
    recording_names: list
    task: str = "regression"
    sensors: list = field(default_factory=list)
    currency: str = "USD"
    skipped: dict = field(default_factory=dict)
    compute_costs: dict = field(default_factory=dict)
    channel_bounds: dict = field(default_factory=dict)    # {channel: max |sample|} (Q15)
    feature_rates: list = field(default_factory=list)     # Hz per feature (multi-rate only)
    recording_options: dict = field(default_factory=dict)  # StreamFormat.options() of the reads

    def to_arrays(self) -> dict:
        """The NPZ members (see the module docstring); no object arrays."""
        arrays = {k: np.array(getattr(self, k), dtype=str) for k in _STRINGS}
        arrays.update(
            X=np.asarray(self.X, dtype=np.float32), Y=np.asarray(self.Y, dtype=np.float64),
            window=np.int64(self.window), hop=np.int64(self.hop),
            sample_rate=np.float64(self.sample_rate),
            groups=np.asarray(self.groups, dtype=np.int64),
            window_start=np.asarray(self.window_start, dtype=np.int64),
            task=np.array(self.task), currency=np.array(self.currency),
            sensors_json=np.array(json.dumps(self.sensors, sort_keys=True)),
            compute_costs_json=np.array(json.dumps(self.compute_costs, sort_keys=True)),
            channel_bounds_json=np.array(bounds_json(self.channel_bounds)),
            format=np.array(FORMAT), format_version=np.int64(FORMAT_VERSION))
        if self.feature_rates:
            arrays["feature_rates"] = np.asarray(self.feature_rates, dtype=np.float64)
        if self.recording_options:      # only when not the defaults: default files keep bytes
            arrays["recording_options_json"] = np.array(json.dumps(self.recording_options,
                                                                   sort_keys=True))
        return arrays

    def save_npz(self) -> bytes:
        """The NPZ file contents (byte-reproducible); writing it is the caller's job."""
        return npz_bytes(self.to_arrays())

    @classmethod
    def from_arrays(cls, arrays: dict, source: str = "<arrays>",
                    check: bool = True) -> "FeatureSet":
        """Rebuild from NPZ members; raises :class:`DataError` if any is missing or (with
        ``check``; off for the structure alone, X and Y empty) they disagree (:meth:`check`)."""
        if str(_scalar(arrays.get("format", ""))) != FORMAT:
            raise DataError(f"{source} is not a {FORMAT} file (no matching 'format' member)")
        if int(_scalar(arrays.get("format_version", -1))) != FORMAT_VERSION:
            raise DataError(f"{source}: format_version={arrays.get('format_version')} is not "
                            f"supported (expected {FORMAT_VERSION})")
        names = [*_STRINGS, "X", "Y", "window", "hop", "sample_rate", "groups",
                 "window_start", "task", "currency", "sensors_json"]
        missing = [k for k in names if k not in arrays]
        if missing:
            raise DataError(f"{source} lacks the array {missing[0]!r}")
        limit = 1024 + sum(np.shape(arrays["X"])) + sum(np.shape(arrays["Y"])) + np.size(
            arrays["groups"])                   # names per column or recording: far fewer
        kwargs = {k: _names(arrays[k], k, source, limit) for k in _STRINGS}
        scalar = {k: _scalar(arrays[k]) for k in ("window", "hop", "sample_rate", "task",
                                                   "currency", "sensors_json")}
        out = cls(X=arrays["X"], Y=arrays["Y"], window=int(scalar["window"]),
                  hop=int(scalar["hop"]), sample_rate=float(scalar["sample_rate"]),
                  groups=arrays["groups"], window_start=arrays["window_start"],
                  task=str(scalar["task"]), currency=str(scalar["currency"]),
                  sensors=json.loads(str(scalar["sensors_json"])),
                  compute_costs=json.loads(str(_scalar(arrays.get("compute_costs_json", "{}")))),
                  channel_bounds=parse_bounds(_scalar(arrays.get("channel_bounds_json", "{}")),
                                              source),
                  feature_rates=np.asarray(arrays.get("feature_rates", []),
                                           dtype=np.float64).tolist(),
                  recording_options=_options(arrays.get("recording_options_json"), source),
                  **kwargs)
        if check:
            out.check(source)
        return out

    def check(self, source: str) -> None:
        """The members agree and are usable (:func:`~.feature_checks.check_arrays`,
        :func:`~.feature_checks.check_structure`); raises :class:`DataError` naming the
        member."""
        check_arrays(self, source)
        check_structure(self, source)

    @classmethod
    def load(cls, path) -> "FeatureSet":
        """Read a feature NPZ written by :meth:`save_npz` (``allow_pickle=False``)."""
        where = "<bytes>" if isinstance(path, bytes) else repr(str(path))
        try:
            data = path if isinstance(path, bytes) else Path(path).read_bytes()
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
            return cls.from_arrays(arrays, source=where)
        except DataError:
            raise
        except (ValueError, TypeError, IndexError, KeyError, OSError, EOFError, MemoryError,
                SystemError, RecursionError, OverflowError, zipfile.BadZipFile) as exc:
            # members of the wrong kind (dtype, rank, shape claims, JSON) in a damaged file
            raise DataError(f"{where} is not a readable feature NPZ: "
                            f"{type(exc).__name__}: {exc}"[:300]) from None

    def samples_at(self, rate: float) -> tuple:
        """(window, hop) in samples at ``rate`` Hz: ``window`` and ``hop`` of a single-rate
        table; of a multi-rate one (``feature_rates``) its seconds x ``rate``."""
        if not self.feature_rates or rate == self.sample_rate:
            return self.window, self.hop
        return (round(self.window * rate / self.sample_rate),
                round(self.hop * rate / self.sample_rate))

    def bundle_structure(self, sensor_spec: SensorSpec | None = None) -> tuple:
        """(extractors, sensors, extra_meta) in the bundle's formats.

        Each extractor is ``{"name", "features", "sensors", "cost", "params"}`` with
        ``cost = 0.0``: extractors are computation only, and prices live on the sensors
        (``unit_price``, ``energy_per_reading_j``), which the cost models add per sensor.
        ``params`` holds ``kind``, ``channels``, ``window``, ``hop`` (samples),
        ``sample_rate_hz``, ``fixed_point`` and ``arithmetic``. ``sensors`` come from
        ``sensor_spec`` when given, else from the ones stored with the features; each also
        gets ``readings_per_prediction = min(window, hop)`` (the new readings a sliding window
        needs per prediction) and ``energy_per_prediction_j`` = that x energy per reading.
        """
        sensors = ([s.to_dict() for s in sensor_spec.sensors] if sensor_spec is not None
                   else [dict(s) for s in self.sensors])
        for s in sensors:                     # the one cost model: sensor_budget.per_prediction
            cost = per_prediction(s, *self.samples_at(s["sample_rate_hz"]))
            s.update(readings_per_prediction=cost["readings"],
                     energy_per_prediction_j=cost["energy"])
        known = {s["name"] for s in sensors}
        extractors = []
        for name, ext, sens, kind, chans in zip(self.feature_names, self.feature_extractors,
                                                self.feature_sensors, self.feature_kinds,
                                                self.feature_channels):
            needed = sens.split("+")
            unknown = [s for s in needed if s not in known]
            if unknown:
                raise DataError(f"feature {name!r} needs sensor {unknown[0]!r}, which the "
                                f"sensor description does not declare")
            spec = parse_spec(kind)
            rate = self.feature_rates[len(extractors)] if self.feature_rates else self.sample_rate
            window, hop = self.samples_at(rate)
            params = {"kind": spec.kind, **spec.params(), "channels": chans.split("+"),
                      "window": window, "hop": hop, "sample_rate_hz": rate,
                      "fixed_point": spec.entry.fixed_point and not spec.pre,
                      "arithmetic": ARITHMETIC}
            entry = {"name": ext, "features": [name], "sensors": needed, "cost": 0.0,
                     "params": params}
            entry.update(("transforms", t) for t in [transforms_of(kind, chans.split("+"))] if t)
            if ext in self.compute_costs:
                entry["compute"] = dict(self.compute_costs[ext])
            extractors.append(entry)
        extra = {"window": self.window, "hop": self.hop, "sample_rate_hz": self.sample_rate,
                 "window_s": self.window / self.sample_rate, "hop_s": self.hop / self.sample_rate,
                 "feature_format": f"{FORMAT}/{FORMAT_VERSION}", "arithmetic": ARITHMETIC,
                 "currency": self.currency}
        if self.channel_bounds:
            extra["channel_bounds"] = dict(sorted(self.channel_bounds.items()))
        if self.feature_rates:
            extra["multi_rate"] = True        # train adds the chosen rates (rates.py)
        if self.recording_options:
            extra["recording_options"] = dict(self.recording_options)
        return extractors, sensors, extra


def _usable_starts(rec, channels: list, window: int, hop: int, rate: float,
                   on_missing: str) -> tuple:
    """Starts of the windows without missing samples or gaps, and the skip counts."""
    n = rec.n_samples
    if n < window:
        raise DataError(f"window={window} samples is longer than recording {rec.name!r} "
                        f"({n} samples)")
    absent = [c for c in channels if c not in rec.columns]
    if absent:
        raise DataError(f"channel {absent[0]!r} is not a column of recording {rec.name!r} "
                        f"(it has {len(rec.columns)} besides the time)")
    gaps = time_gaps(rec, rate)
    missing = np.zeros(n, dtype=bool)
    for c in channels:
        missing |= np.isnan(rec.columns[c])
        big = np.flatnonzero(np.abs(rec.columns[c]) > F32_MAX)
        if big.size:
            i = int(big[0])
            raise DataError(f"recording {rec.name!r}: channel {c!r} holds {rec.columns[c][i]:g} "
                            f"at sample {i} (t={rec.time[i]:g} s), beyond the float32 range "
                            f"+-{F32_MAX:.6g} that the device computes in")
    starts = np.arange(0, n - window + 1, hop)
    cum_missing = np.concatenate([[0], np.cumsum(missing)])
    cum_gaps = np.concatenate([[0], np.cumsum(gaps)])
    has_missing = cum_missing[starts + window] > cum_missing[starts]
    has_gap = cum_gaps[starts + window - 1] > cum_gaps[starts]
    if on_missing == "error" and (has_missing.any() or has_gap.any()):
        if missing.any():
            i = int(np.flatnonzero(missing)[0])
            col = next(c for c in channels if np.isnan(rec.columns[c][i]))
            raise DataError(f"recording {rec.name!r}: missing sample in channel {col!r} at "
                            f"sample {i} (t={rec.time[i]:g} s); on_missing='error'")
        i = int(np.flatnonzero(gaps)[0])
        raise DataError(f"recording {rec.name!r}: gap of {rec.time[i + 1] - rec.time[i]:g} s "
                        f"after t={rec.time[i]:g} s (sample period {1 / rate:g} s); "
                        f"on_missing='error'")
    counts = {"missing_samples": int(has_missing.sum()),
              "gaps": int((has_gap & ~has_missing).sum())}
    return starts[~(has_missing | has_gap)], counts


def _features_of(rec, starts, spec: SensorSpec, window: int) -> np.ndarray:
    """Float32 matrix (windows x features) of one recording; a feature that overflows float32
    (say the energy of samples near 1e20) is a :class:`DataError` naming it and the window."""
    cache = {c: window_view(rec.columns[c], starts, window) for c in spec.used_channels}
    X = np.empty((len(starts), len(spec.features)), dtype=np.float32)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):   # checked below
        for j, f in enumerate(spec.features):
            fs, ws = parse_spec(f.kind), [cache[c] for c in f.channels]
            X[:, j] = fs.compute(ws[0] if fs.entry.per_channel else ws, spec.sample_rate_hz)
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        r, j = bad[0]
        raise DataError(f"recording {rec.name!r}: feature {spec.features[j].name!r} of the "
                        f"window at sample {int(starts[r])} is {X[r, j]} in the device's float32 "
                        f"arithmetic (its samples are too large: scale the channel)")
    return X


def _stream_rows(rec, starts, targets: list, window: int, skipped: dict) -> tuple:
    """Windows whose targets (value at the last sample) are present, and those targets."""
    if not targets:
        return starts, np.empty((len(starts), 0))
    Y = np.column_stack([rec.columns[t][starts + window - 1] for t in targets])
    ok = ~np.isnan(Y).any(axis=1)
    skipped["missing_targets"] += int((~ok).sum())
    return starts[ok], Y[ok]


def build_feature_set(rset: RecordingSet, spec: SensorSpec, window=None, hop=None,
                      on_missing=None, compute_target=None, progress=None) -> FeatureSet:
    """Window every recording, compute every feature of ``spec``, attach the targets (and the
    calibrated per-extractor compute costs of ``compute_target``, if the spec has any);
    ``progress(done, total)`` is called after each recording."""
    window, hop = spec.resolve_window(window, hop)
    on_missing = on_missing or spec.on_missing
    if on_missing not in ON_MISSING:
        raise DataError(f"on_missing={on_missing!r} must be one of {ON_MISSING}")
    labelled = any(r.labels for r in rset.recordings)
    if labelled and spec.targets is not None and all(
            t in r.columns for t in spec.targets for r in rset.recordings):
        labelled = False        # per-sample target columns (e.g. beside --recording-column)
    if labelled:
        targets, label_rows, task = _label_targets(rset, spec)
    else:
        targets, task = _stream_targets(rset, spec), "regression"
    skipped = {"missing_samples": 0, "gaps": 0, "missing_targets": 0}
    starts, X, Y, groups = [], [], [], []
    for g, rec in enumerate(rset.recordings):
        if spec.multi_rate:
            s, y, x = rates.recording_rows(rec, spec, on_missing, targets, hop, skipped,
                                       label_rows[g] if labelled else None)
            starts.append(s)
            X.append(x)
            Y.append(y)
            groups.append(np.full(len(s), g, dtype=np.int64))
            continue
        s, counts = _usable_starts(rec, spec.used_channels, window, hop, spec.sample_rate_hz,
                                   on_missing)
        for k, v in counts.items():
            skipped[k] += v
        if labelled:
            y = np.tile(label_rows[g], (len(s), 1)).reshape(len(s), len(targets))
        else:
            s, y = _stream_rows(rec, s, targets, window, skipped)
        starts.append(s)
        X.append(_features_of(rec, s, spec, window))
        Y.append(y)
        groups.append(np.full(len(s), g, dtype=np.int64))
        if progress is not None:
            progress(g + 1, len(rset.recordings))
    if sum(map(len, starts)) == 0:
        raise DataError(f"no usable windows in {len(rset.recordings)} recording(s) "
                        f"(window={window}, hop={hop}); skipped: "
                        + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in skipped.items()))
    fs = spec.features
    return FeatureSet(
        X=np.concatenate(X), Y=np.concatenate(Y),
        feature_names=[f.name for f in fs], target_names=targets,
        feature_extractors=[f.name for f in fs], feature_sensors=["+".join(f.sensors) for f in fs],
        feature_kinds=[f.kind for f in fs], feature_channels=["+".join(f.channels) for f in fs],
        window=window, hop=hop, sample_rate=spec.sample_rate_hz, groups=np.concatenate(groups),
        window_start=np.concatenate(starts).astype(np.int64),
        recording_names=[r.name for r in rset.recordings],
        task=stored_task(spec.task, np.concatenate(Y), targets, spec.source) or task,
        sensors=[s.to_dict() for s in spec.sensors], currency=spec.currency, skipped=skipped,
        compute_costs=spec.compute_costs(compute_target),
        channel_bounds=recording_bounds(rset.recordings, spec.used_channels),
        feature_rates=[rates.feature_rate(spec, f) for f in fs] if spec.multi_rate else [])


def _options(member, source: str) -> dict:
    """The stored recording options (a JSON object of StreamFormat fields), {} without."""
    if member is None:
        return {}
    value = json.loads(str(_scalar(member)))
    try:
        StreamFormat.from_options(value)
    except (DataError, TypeError, AttributeError) as exc:
        raise DataError(f"{source}: recording_options_json is not a set of recording "
                        f"options: {exc}"[:300]) from None
    return value


def is_feature_file(path) -> bool:
    """True when ``path`` is an NPZ written by :meth:`FeatureSet.save_npz` (it carries the
    feature -> extractor -> sensor structure), False for any other file."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
    except (OSError, zipfile.BadZipFile):
        return False
    return {"format.npy", "feature_extractors.npy"} <= names


def load_feature_set(recordings_path, sensors_toml_path, window=None, hop=None,
                     on_missing=None, compute_target=None, stream_format=None,
                     progress=None) -> FeatureSet:
    """Read ``sensors.toml`` and the recordings, and build their :class:`FeatureSet`.

    ``window``/``hop`` (samples) and ``on_missing`` ("skip" or "error") override the file;
    ``compute_target`` picks the ``[[calibration]]`` entries to use as extractor costs;
    ``stream_format`` (:class:`~sensorbudget.trainer.sensing.streams.StreamFormat`) reads other streams;
    ``progress(done, total)`` is called after each recording.
    """
    spec = load_sensor_spec(sensors_toml_path)
    fmt = stream_format or StreamFormat()
    rset = (load_sensor_folders(recordings_path, spec, fmt)
            or load_recordings(recordings_path, spec.sample_rate_hz, fmt))
    fs = build_feature_set(rset, spec, window=window, hop=hop, on_missing=on_missing,
                           compute_target=compute_target, progress=progress)
    fs.recording_options = fmt.options()
    return fs
