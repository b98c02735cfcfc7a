"""Sensors at their own rates: aligning a multi-rate recording, windows in seconds, decimation.

A multi-rate ``sensors.toml`` (sensors at different ``sample_rate_hz``, or one with ``rates_hz``;
:attr:`~.sensors.SensorSpec.multi_rate`) gives the window and hop in seconds. A recording is
one table whose rows are time stamps; a sensor did not sample at a row where all its channels
are empty.

Alignment (:func:`align`). Let ``T0`` be the table's first time stamp and ``r`` a sensor's
recorded rate. The sensor's rows lie on its grid ``T0 + (i + p) / r``: ``i`` its sample index,
``p`` its phase (a sensor may start later, or between the others' samples): that of its first
row, moved to the middle of the rows' offsets from that grid (the grid whose largest offset
is smallest). Each row's offset from the grid must be within :data:`JITTER_TOLERANCE` of a
period, two rows must not fall on one grid point, and the rate the rows show must be the
declared one (:func:`~.streams.check_declared_rate`): each is a :class:`DataError` naming the
sensor, the time and the limit. Grid points without a row are gaps; a row with one of the
sensor's channels empty is a missing sample. Nothing is interpolated.

Windows (:func:`window_counts`). Window ``k`` covers the instants ``[T0 + k hop_s, T0 + k hop_s
+ window_s)`` for every sensor, so all windows end at the same instant: the samples
``[k hop_s r, k hop_s r + window_s r)`` of each sensor's grid. A window is formed when every
sensor a feature uses has that many grid points; it is skipped when one of them is a gap or a
missing sample of a used channel.

Decimation. A feature at ``q`` Hz of a sensor recorded at ``r`` Hz (``m = r / q`` a whole
number) reads every ``m``-th sample of the sensor's grid from index 0: plain decimation, no
anti-alias filter (the same in Python and C: keep sample ``i`` when ``i % m == 0``). Its
window is ``x[k hop_s r :][: window_s r : m]``, ``window_s q`` samples (``hop_s q`` whole, so
the window starts on a kept sample).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from .extractors import window_view
from .specs import parse_spec
from .streams import check_declared_rate

#: Largest distance of a sensor's time stamp from its grid, in sample periods.
JITTER_TOLERANCE = 0.1


@dataclass(frozen=True)
class Aligned:
    """One sensor of one recording on its grid: channels (NaN where absent), the grid points
    that have a row (``present``), the rate and the phase (in periods)."""

    sensor: str
    rate: float
    phase: float
    columns: dict
    present: np.ndarray

    @property
    def n(self) -> int:
        return int(self.present.shape[0])


def align(rec, sensor, channels=None) -> Aligned:
    """``sensor`` (a :class:`~.sensors.Sensor`) of recording ``rec`` on its grid (module notes);
    ``channels``: the ones to keep (default all of the sensor's)."""
    channels = list(sensor.channels if channels is None else channels)
    absent = [c for c in sensor.channels if c not in rec.columns]
    if absent:
        raise DataError(f"channel {absent[0]!r} of sensor {sensor.name!r} is not a column of "
                        f"recording {rec.name!r}")
    t = rec.time
    if not np.isfinite(t).all() or (t.size > 1 and not (np.diff(t) > 0).all()):
        raise DataError(f"recording {rec.name!r}: time stamps must be present and strictly "
                        f"increasing")
    rows = np.flatnonzero(np.any([~np.isnan(rec.columns[c]) for c in sensor.channels], axis=0))
    where = f"recording {rec.name!r}, sensor {sensor.name!r}"
    if rows.size == 0:
        raise DataError(f"{where}: the sensor never samples (every cell of its channels is "
                        f"empty)")
    r = sensor.sample_rate_hz
    check_declared_rate(where, np.diff(t[rows]), r)
    pos = (t[rows] - t[0]) * r
    phase = pos[0] - np.floor(pos[0])
    if phase > 1 - JITTER_TOLERANCE:
        phase -= 1.0
    off = pos - phase - np.rint(pos - phase)
    phase += float(off.max() + off.min()) / 2        # the grid nearest to every row
    index = np.rint(pos - phase).astype(np.int64)
    off = np.abs(pos - phase - index)
    bad = np.flatnonzero(off > JITTER_TOLERANCE)
    if bad.size:
        i = rows[bad[0]]
        raise DataError(f"{where}: time stamp t={t[i] - t[0]:.9g} s is {off[bad[0]]:.3g} "
                        f"periods off the sensor's {r:g} Hz grid (jitter tolerance "
                        f"{JITTER_TOLERANCE:g} period)")
    twice = np.flatnonzero(np.diff(index) == 0)
    if twice.size:
        i = rows[twice[0] + 1]
        raise DataError(f"{where}: two samples on one {r:g} Hz grid point (t={t[i] - t[0]:.9g} s"
                        f" and the row before it)")
    n = int(index[-1]) + 1
    present = np.zeros(n, dtype=bool)
    present[index] = True
    columns = {}
    for c in channels:
        col = np.full(n, np.nan)
        col[index] = rec.columns[c][rows]
        columns[c] = col
    return Aligned(sensor.name, r, float(phase), columns, present)


def window_counts(spec) -> dict:
    """{sensor: (window, hop) in samples at its recorded rate} of a multi-rate ``spec``."""
    return {s.name: (round(spec.window_s * s.sample_rate_hz), round(spec.hop_s * s.sample_rate_hz))
            for s in spec.sensors}


def feature_rate(spec, feature) -> float:
    """The rate (Hz) a feature of ``spec`` is computed at: its decimated rate, or its sensor's."""
    by_name = {s.name: s for s in spec.sensors}
    return feature.rate or by_name[feature.sensors[0]].sample_rate_hz


def used_sensors(spec) -> list:
    """The sensors some feature of ``spec`` needs, in declaration order."""
    used = {s for f in spec.features for s in f.sensors}
    return [s for s in spec.sensors if s.name in used]


def usable_windows(rec, spec, on_missing: str) -> tuple:
    """(window indices k, skip counts, {sensor: Aligned}) of one recording (module notes)."""
    counts = window_counts(spec)
    used = set(spec.used_channels)
    aligned = {s.name: align(rec, s, [c for c in s.channels if c in used])
               for s in used_sensors(spec)}
    n_windows = min((a.n - counts[a.sensor][0]) // counts[a.sensor][1] + 1
                    for a in aligned.values())
    if n_windows < 1:
        raise DataError(f"window of {spec.window_s:g} s is longer than recording {rec.name!r}")
    k = np.arange(n_windows)
    gap = np.zeros(n_windows, dtype=bool)
    missing = np.zeros(n_windows, dtype=bool)
    for a in aligned.values():
        w, h = counts[a.sensor]
        absent = np.concatenate([[0], np.cumsum(~a.present)])
        nan = np.concatenate([[0], np.cumsum(np.any(
            [np.isnan(v) & a.present for v in a.columns.values()], axis=0))])
        gap |= absent[k * h + w] > absent[k * h]
        missing |= nan[k * h + w] > nan[k * h]
        if on_missing == "error" and (gap | missing).any():
            j = int(np.flatnonzero(gap | missing)[0])
            raise DataError(f"recording {rec.name!r}: sensor {a.sensor!r} has a "
                            f"{'gap' if gap[j] else 'missing sample'} in the window from "
                            f"t={j * spec.hop_s:g} s; on_missing='error'")
    skipped = {"missing_samples": int(missing.sum()), "gaps": int((gap & ~missing).sum())}
    return k[~(gap | missing)], skipped, aligned


def decimated_windows(aligned: Aligned, channel: str, k, window: int, hop: int,
                      factor: int) -> np.ndarray:
    """Float32 windows (window / factor, len(k)) of ``channel`` at 1/``factor`` of its rate:
    every ``factor``-th sample of the grid from index 0 (plain decimation)."""
    kept = aligned.columns[channel][::factor]
    return window_view(kept, np.asarray(k) * (hop // factor), window // factor)


def features(aligned: dict, k, spec) -> np.ndarray:
    """Float32 matrix (windows x features) of one recording's aligned sensors."""
    counts = window_counts(spec)
    X = np.empty((len(k), len(spec.features)), dtype=np.float32)
    cache = {}
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for j, f in enumerate(spec.features):
            a = aligned[f.sensors[0]]
            rate = feature_rate(spec, f)
            factor = round(a.rate / rate)
            fs = parse_spec(f.kind)
            for c in f.channels:
                if (c, factor) not in cache:
                    cache[c, factor] = decimated_windows(a, c, k, *counts[a.sensor], factor)
            ws = [cache[c, factor] for c in f.channels]
            X[:, j] = fs.compute(ws[0] if fs.entry.per_channel else ws, rate)
    return X


def stream_targets(rec, k, targets: list, spec) -> np.ndarray:
    """(len(k), targets): each target column's last present value at a time in window k
    (NaN when it has none there)."""
    t = rec.time - rec.time[0]
    Y = np.full((len(k), len(targets)), np.nan)
    start = np.asarray(k) * spec.hop_s
    end = start + spec.window_s
    for j, name in enumerate(targets):
        col = rec.columns[name]
        rows = np.flatnonzero(~np.isnan(col))
        last = np.searchsorted(t[rows], end - 1e-9 * spec.window_s, side="left") - 1
        ok = last >= 0
        ok[ok] = t[rows[last[ok]]] >= start[ok] - 1e-9 * spec.window_s
        Y[ok, j] = col[rows[last[ok]]]
    return Y


def recording_rows(rec, spec, on_missing, targets, hop, skipped, label_row) -> tuple:
    """(window starts at the highest rate, Y, X) of one recording of a multi-rate spec; the
    skip counts add to ``skipped``; ``label_row``: the recording's targets, or None for the
    target columns ``targets`` of a stream (:func:`stream_targets`)."""
    k, counts, aligned = usable_windows(rec, spec, on_missing)
    for name, v in counts.items():
        skipped[name] += v
    if label_row is not None:
        y = np.tile(label_row, (len(k), 1)).reshape(len(k), len(targets))
    else:
        y = stream_targets(rec, k, targets, spec)
        ok = ~np.isnan(y).any(axis=1)
        skipped["missing_targets"] += int((~ok).sum())
        k, y = k[ok], y[ok]
    x = features(aligned, k, spec)
    bad = np.argwhere(~np.isfinite(x))
    if bad.size:
        r, j = bad[0]
        raise DataError(f"recording {rec.name!r}: feature {spec.features[j].name!r} of window "
                        f"{int(k[r])} is {x[r, j]} in the device's float32 arithmetic")
    return (k * hop).astype(np.int64), y, x



def read_rate(recorded_hz: float, rates) -> float:
    """The slowest rate a device can read a sensor recorded at ``r`` Hz at and still make
    each of ``rates`` (each a whole fraction ``r / m_i`` of it) by plain decimation: ``r /
    gcd(m_i)``. The fastest of ``rates`` when the others divide it; 10 Hz for 5 and 2 Hz of a
    10 Hz recording (neither 5 nor 2 Hz yields the other by keeping every m-th sample).

    >>> read_rate(10, [5, 2.5]), read_rate(10, [5, 2])
    (5.0, 10.0)
    """
    r = float(recorded_hz)
    return r / math.gcd(*(max(1, round(r / float(q))) for q in rates))


def paid_rate(recorded_hz: float, listed, rates) -> float:
    """The rate a sensor recorded at ``r`` Hz is run and paid at to make each of ``rates``:
    the slowest of its ``listed`` rates (``rates_hz``) that is a whole multiple of
    :func:`read_rate` (``q / read`` whole: each of ``rates`` is then a plain decimation of
    it); ``read_rate`` itself for a sensor without listed rates. When no listed rate is such
    a multiple (5 and 2 Hz of ``[2, 5]``), the fastest listed rate: below the read rate, which
    :func:`read_above_paid` flags (the selection never forms such a set;
    :mod:`sensorbudget.trainer.selection.rate_closure`).

    >>> paid_rate(10, [2, 5, 10], [5, 2]), paid_rate(12, [2, 3, 12], [2, 3])
    (10.0, 12.0)
    """
    read = read_rate(recorded_hz, rates)
    if not listed:
        return read
    multiples = [float(q) for q in listed
                 if round(q / read) >= 1 and abs(q / read - round(q / read)) <= 1e-9 * q / read]
    return min(multiples) if multiples else float(max(listed))


def read_above_paid(meta: dict) -> dict:
    """{sensor: the rate a device reads it at} for each sensor of a multi-rate bundle read
    faster than the selection priced it (``sensor_rates_hz``): a bundle written before the
    selection priced each sensor at its read rate (features at 5 and 2 Hz of a 10 Hz sensor
    were paid at 5 Hz, read at 10 Hz), or one whose read rate no listed rate is a multiple of
    (:func:`paid_rate`); empty for a bundle priced as read."""
    recorded = {s["name"]: s["sample_rate_hz"] for s in meta.get("sensors") or []
                if isinstance(s, dict) and "sample_rate_hz" in s}
    used = {}
    for e in meta.get("extractors") or []:
        if set(e.get("features") or ()) & set(meta.get("selected") or ()):
            for s in e.get("sensors") or ():
                used.setdefault(s, set()).add(float(e["params"]["sample_rate_hz"]))
    paid = meta.get("sensor_rates_hz") or {}
    out = {}
    for s, rates in used.items():
        if s in paid and s in recorded and read_rate(recorded[s], rates) > paid[s] * (1 + 1e-9):
            out[s] = read_rate(recorded[s], rates)
    return out


def with_chosen_rates(meta: dict) -> dict:
    """A multi-rate bundle's ``model.json`` dict with the rate each sensor runs at and is paid
    at: every ``path`` step gets ``rates_hz`` {sensor: :func:`paid_rate` of its features
    chosen so far} (the highest of their rates when the others divide it), the top level
    ``sensor_rates_hz`` (the final design), and each required sensor's entry
    ``chosen_rate_hz`` with ``readings_per_prediction`` and ``energy_per_prediction_j`` at
    that rate (:func:`~.sensor_budget.per_prediction`; for ``rates_hz`` its cost there)."""
    from .sensor_budget import per_prediction
    need = {}
    for e in meta["extractors"]:
        for f in e["features"]:
            need[f] = (e["sensors"], float(e["params"]["sample_rate_hz"]))
    by_name = {s["name"]: s for s in meta["sensors"]}
    used, rates = {}, {}
    path = []
    for step in meta["path"]:
        for f in step["added"]:
            sensors, rate = need[f]
            for s in sensors:
                used.setdefault(s, set()).add(rate)
                rates[s] = paid_rate(by_name[s]["sample_rate_hz"], by_name[s].get("rates_hz"),
                                     used[s])
        path.append({**step, "rates_hz": dict(rates)})
    seconds = (meta["window_s"], meta["hop_s"])
    final = {s: rates[s] for s in meta["required_sensors"] if s in rates}
    sensors = []
    for s in meta["sensors"]:
        s = dict(s)
        if s["name"] in final:
            rate = final[s["name"]]
            energy = (dict(zip(s["rates_hz"], s["energy_per_reading_j_by_rate"]))[rate]
                      if s.get("rates_hz") else s["energy_per_reading_j"])
            cost = per_prediction({**s, "energy_per_reading_j": energy},
                                  round(seconds[0] * rate), round(seconds[1] * rate))
            s.update(chosen_rate_hz=rate, readings_per_prediction=cost["readings"],
                     energy_per_prediction_j=cost["energy"])
        sensors.append(s)
    return {**meta, "path": path, "sensor_rates_hz": final, "sensors": sensors}
