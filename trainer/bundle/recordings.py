"""A bundle's selected features computed from recordings, through its own extractors.

:func:`features_from_recordings` rebuilds the part of ``sensors.toml`` the bundle needs (its
sensors and, for every selected feature, the extractor kind and channels stored in
``model.json``) and runs the public feature pipeline
(:func:`sensorbudget.trainer.sensing.feature_set.build_feature_set`) with the bundle's window and hop, window
by window as training did. Windows are formed as there: ``[k*hop, k*hop + window)``, skipped when
a channel the *selected* features use has a missing sample or a time gap. Targets are read when
the recordings hold them: a stream's target columns (the value at each window's last sample, NaN
when missing there; a multi-class bundle's class column, also beside ``--recording-column``), a
labelled recording's labels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import BundleError
from ..sensing.feature_set import build_feature_set
from ..sensing.rates import stream_targets
from ..sensing.recordings import load_recordings
from ..sensing.sensor_files import load_sensor_folders
from ..sensing.sensors import FeatureDef, Sensor, SensorSpec
from ..sensing.streams import StreamFormat


@dataclass
class RecordingFeatures:
    """Selected features (n x k, float32, selection order), targets (n x t, NaN = missing) or
    None, and each window's recording index and first sample."""

    X: np.ndarray
    Y: np.ndarray | None
    groups: np.ndarray
    window_start: np.ndarray
    recording_names: list
    target_names: list = None    # the columns of Y: the bundle's targets, or its class column


def _spec(meta: dict, labelled: bool) -> SensorSpec:
    if not meta.get("window") or not meta.get("sample_rate_hz"):
        raise BundleError("the bundle was not trained from recordings (model.json has no "
                          "window/sample_rate_hz): give a feature table instead")
    owner = {f: e for e in meta["extractors"] for f in e.get("features", [])}
    sensors = tuple(Sensor(name=s["name"], channels=tuple(s.get("channels", [])),
                           unit_price=float(s.get("unit_price", 0.0)),
                           energy_per_reading_j=float(s.get("energy_per_reading_j", 0.0)),
                           sample_rate_hz=float(s.get("sample_rate_hz", meta["sample_rate_hz"])),
                           rates=tuple(zip(s.get("rates_hz", ()),
                                           s.get("energy_per_reading_j_by_rate", ()))))
                    for s in meta["sensors"])
    rated = {s.name for s in sensors if s.rates}
    features = []
    for name in meta["selected"]:
        params = owner.get(name, {}).get("params", {})
        if "kind" not in params or "channels" not in params:
            raise BundleError(f"model.json does not say how feature {name!r} is computed "
                              f"(its extractor has no kind/channels)")
        features.append(FeatureDef(name=name, kind=params["kind"],
                                   channels=tuple(params["channels"]),
                                   sensors=tuple(owner[name].get("sensors", [])),
                                   rate=(float(params["sample_rate_hz"]) if rated & set(
                                       owner[name].get("sensors", [])) else None)))
    if meta.get("multi_rate"):             # windows in seconds, sensors at their own rates
        return SensorSpec(sensors=sensors, features=tuple(features),
                          sample_rate_hz=float(meta["sample_rate_hz"]), window_s=meta["window_s"],
                          hop_s=meta["hop_s"], targets=None if labelled else (),
                          source="model.json")
    return SensorSpec(sensors=sensors, features=tuple(features),
                      sample_rate_hz=float(meta["sample_rate_hz"]), window=int(meta["window"]),
                      hop=int(meta.get("hop") or meta["window"]),
                      targets=None if labelled else (), source="model.json")


def _stream_targets(rset, fs, targets, window) -> np.ndarray | None:
    if not all(t in rec.columns for rec in rset.recordings for t in targets):
        return None
    Y = np.empty((len(fs.X), len(targets)))
    for g, rec in enumerate(rset.recordings):
        rows = np.flatnonzero(fs.groups == g)
        last = fs.window_start[rows] + window - 1
        Y[rows] = np.column_stack([rec.columns[t][last] for t in targets])
    return Y


def _multi_rate_targets(rset, fs, targets, spec) -> np.ndarray | None:
    """Targets of a multi-rate stream: each column's last value in the window
    (:func:`sensorbudget.trainer.sensing.rates.stream_targets`)."""
    if not all(t in rec.columns for rec in rset.recordings for t in targets):
        return None
    Y = np.empty((len(fs.X), len(targets)))
    for g, rec in enumerate(rset.recordings):
        rows = np.flatnonzero(fs.groups == g)
        Y[rows] = stream_targets(rec, fs.window_start[rows] // fs.hop, targets, spec)
    return Y


def _label_targets(fs, targets, task) -> np.ndarray | None:
    names = list(fs.target_names)
    if all(t in names for t in targets):
        return np.asarray(fs.Y, dtype=np.float64)[:, [names.index(t) for t in targets]]
    if task == "multiclass" and names and all(n in targets for n in names):
        Y = np.zeros((len(fs.X), len(targets)))          # classes absent here are all 0
        for j, n in enumerate(names):
            Y[:, targets.index(n)] = fs.Y[:, j]
        return Y
    return None


def features_from_recordings(bundle, path, stream_format=None) -> RecordingFeatures:
    """The bundle's selected features (and targets, when present) of the recordings at
    ``path`` (a file or folder as :func:`sensorbudget.trainer.sensing.recordings.load_recordings`
    reads), read with the bundle's ``recording_options`` (time column, time unit, ...: those
    the features were made with) and the fields ``stream_format`` sets over them."""
    meta = bundle.meta
    fmt = StreamFormat.from_options(meta.get("recording_options"), stream_format)
    folders = (load_sensor_folders(path, _spec(meta, False), fmt)
               if meta.get("multi_rate") else None)      # one stream file per sensor
    rset = folders or load_recordings(path, float(meta.get("sample_rate_hz") or 1.0), fmt)
    targets = list(meta["targets"])
    # per-sample target columns, as `features` reads them (a multi-class bundle's targets are
    # its classes: the stream holds the class column), also beside --recording-column
    per_sample = [meta["class_column"]] if meta.get("class_column") else targets
    labelled = any(r.labels for r in rset.recordings) and not all(
        t in rec.columns for rec in rset.recordings for t in per_sample)
    spec = _spec(meta, labelled)
    multi = spec.window_s is not None
    fs = build_feature_set(rset, spec, window=None if multi else spec.window,
                           hop=None if multi else spec.hop)
    names = targets if labelled else per_sample
    Y = (_label_targets(fs, targets, meta["task"]) if labelled
         else _multi_rate_targets(rset, fs, per_sample, spec) if multi
         else _stream_targets(rset, fs, per_sample, spec.window))
    return RecordingFeatures(X=np.asarray(fs.X), Y=Y, groups=np.asarray(fs.groups),
                             window_start=np.asarray(fs.window_start),
                             recording_names=list(fs.recording_names), target_names=names)
