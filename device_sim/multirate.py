"""Replaying a multi-rate bundle: its reference model, the recordings' segments and the
interleaved events a device is sent (issue 30).

A multi-rate device (``firmware_gen``'s :class:`~sensorbudget.firmware_gen.multirate.
MultiRatePlan`) takes each sensor's samples at the sensor's own rate, one *event* (sensor index
and that sensor's values) at a time, in time order (PROTOCOL.md, PUSH_EVENTS).

Segments. Each used sensor of a recording is put on its grid
(:func:`sensorbudget.trainer.sensing.rates.align`: exact alignment, errors for jitter, doubled
samples and a declared rate the time stamps contradict). Window ``k`` covers, for a sensor
pushed at ``r`` Hz, its samples ``[k H, k H + W)`` (``W = window_s r``, ``H = hop_s r``); it is
usable when none of them is a gap or a missing value of a used channel (rates.py's rule, so
the same windows as the features the bundle was trained on). A segment is a run of consecutive
usable windows ``k0 .. k1`` whose samples in between are present too; the device is RESET, then
sent each sensor's samples ``[k0 H, k1 H + W)``, so device window ``m`` is window ``k0 + m``.

Events. The samples of a segment go out in the order of their time stamps
(:func:`sensorbudget.firmware_gen.multirate_reference.push_order`): sample ``i`` of sensor
``s`` at ``(i + p_s) / r_s`` on its grid, ``p_s`` the phase :func:`~sensorbudget.trainer.sensing.
rates.align` found (where the grid nearest to the sensor's rows lies; in pushed periods), ties
to the lower sensor index. Window ``k`` is complete at the event of the last sample any (sensor,
rate) group reads (:func:`MultiRateModel.completion_events`; a decimated group's last sample may
precede its sensor's last of the window), and the events from window ``m``'s first sample on
must be a suffix of the order: a resend after a lost request starts there, and since ``m H`` is
a multiple of every group's decimation factor (``hop_s q`` is whole), the device keeps the same
samples after the RESET. With nominal times ``i / r_s`` (all phases 0) this holds always (a
sample of window ``m`` lies before ``m hop_s + window_s``, every later one at or after it);
phases (``-0.1 < p <= 0.9``) can break it, or make a group complete window ``m + 1`` before
another completes ``m`` (the device would drop it) when the hop is a period or two: then a
segment's events go in nominal order (:class:`EventStream` checks both).
"""

from __future__ import annotations

import numpy as np

from sensorbudget.export.cgen import DEFAULT_NAME, NUMERICS
from sensorbudget.export.fixed_point import quantize_inputs
from sensorbudget.firmware_gen.errors import FirmwareGenError
from sensorbudget.firmware_gen.multirate import make_multirate_plan
from sensorbudget.firmware_gen.multirate_reference import (
    push_order,
    quantize_streams,
    ready_windows,
)
from sensorbudget.firmware_gen.multirate_reference import stream as reference_stream
from sensorbudget.firmware_gen.reference import fixed_model
from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.sensing.rates import align
from sensorbudget.trainer.sensing.sensors import Sensor

from .client import SensorInfo
from .errors import DeviceError
from .reference import F32, ReferenceModel
from .replay import PredictionRecord, Replayer, _Pacer


class MultiRateModel(ReferenceModel):
    """Extractors + model of a multi-rate bundle in the device's exact arithmetic: the
    :class:`ReferenceModel` interface (scores, decisions, thresholds) with one stream per
    sensor instead of one sample stream (module notes)."""

    multi_rate = True

    def __init__(self, bundle, numeric: str = "float32", *, full_scale=None,
                 name: str = DEFAULT_NAME):
        if numeric not in NUMERICS:
            raise DeviceError(f"numeric={numeric!r} is not one of {NUMERICS}")
        try:
            self.plan = make_multirate_plan(bundle, name=name, numeric=numeric,
                                            full_scale=full_scale)
        except FirmwareGenError as exc:
            raise DeviceError(f"cannot simulate this bundle: {exc}") from None
        self.bundle, self.meta, self.numeric = bundle, bundle.meta, numeric
        p = self.plan
        # the recordings' highest rate (as 'features' read them: .ts samples at i / rate)
        self.sample_rate = float(bundle.meta.get("sample_rate_hz") or
                                 max(s.recorded_hz for s in p.sensors))
        self.window_s, self.hop_s = p.window_s, p.hop_s
        self.window, self.hop = 0, 0          # as the device's HELLO: no single window
        self.channels = list(p.channels)
        self.features = []
        self.fixed = fixed_model(p, bundle)
        self.sensors = [SensorInfo(len(s.channels), round(p.window_s * s.rate_hz),
                                   round(p.hop_s * s.rate_hz), float(F32(s.rate_hz)))
                        for s in p.sensors]

    @property
    def period_s(self) -> float:
        return self.hop_s

    def window_starts(self, n_samples: int) -> np.ndarray:
        raise DeviceError("a multi-rate bundle has one window per sensor (MultiRateModel)")

    def inputs(self, X) -> np.ndarray:
        """Model inputs of features X: float32, or every input through the header's
        quantiser (the multi-rate stream has no integer shortcut)."""
        X = np.asarray(X, dtype=F32)
        return X if self.fixed is None else quantize_inputs(self.fixed, X)

    def wire_streams(self, streams: dict) -> dict:
        """{sensor: samples as the host sends them}: float32, or Q15 int16 (fixed point)."""
        if self.plan.fixed:
            return quantize_streams(self.plan, streams)
        return {k: np.asarray(v, dtype=F32) for k, v in streams.items()}

    def stream_scores(self, wire: dict) -> np.ndarray:
        """Scores of every window the device makes ready from ``wire`` streams."""
        return reference_stream(self.plan, self.bundle, wire)[2]

    def completion_events(self, lengths: dict, order_pos: dict) -> np.ndarray:
        """Per window of a segment, the position in the push order of the event that
        completes it: the latest over the groups of the last sample each reads
        (``(m hop_g + window_g - 1) factor_g`` of its sensor; module notes). ``order_pos``:
        {sensor index: position of each of its samples}."""
        p = self.plan
        n = None
        for g in p.groups:
            have = lengths[p.sensors[g.sensor].name]
            kept = (have - 1) // g.factor + 1 if have else 0
            w = max(0, (kept - g.plan.window) // g.plan.hop + 1) if kept >= g.plan.window else 0
            n = w if n is None else min(n, w)
        ends = np.zeros(n or 0, dtype=np.int64)
        for g in p.groups:
            last = (np.arange(len(ends)) * g.plan.hop + g.plan.window - 1) * g.factor
            ends = np.maximum(ends, order_pos[g.sensor][last])
        return ends


def make_model(bundle, numeric: str = "float32", *, full_scale=None) -> ReferenceModel:
    """The reference of ``bundle``: a :class:`MultiRateModel` for a multi-rate bundle, else a
    :class:`ReferenceModel`."""
    kind = MultiRateModel if bundle.meta.get("multi_rate") else ReferenceModel
    return kind(bundle, numeric, full_scale=full_scale)


class EventStream:
    """A segment's events in push order, encoded once: ``len()`` events, ``[a:b]`` the
    (count, bytes) of a PUSH_EVENTS request; ``starts[m]`` / ``ends[m]`` the first event of
    window ``m`` and the event completing it."""

    def __init__(self, model: MultiRateModel, wire: dict, phases: dict | None = None):
        p = model.plan
        lengths = {s.name: len(wire[s.name]) for s in p.sensors}
        order = np.asarray(push_order(p, lengths, phases), dtype=np.int64).reshape(-1, 2)
        self.phases = dict(phases or {})
        if phases and not _keeps_windows(model, order, lengths):
            order = np.asarray(push_order(p, lengths), dtype=np.int64).reshape(-1, 2)
            self.phases = {}                            # nominal order (module notes)
        sensor, index = order[:, 0], order[:, 1]
        size = np.array([1 + np.asarray(wire[s.name]).dtype.itemsize * len(s.channels)
                         for s in p.sensors], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(size[sensor])])
        buf = np.zeros(int(self.offsets[-1]), dtype=np.uint8)
        pos = {}
        for s, info in enumerate(p.sensors):
            at = np.flatnonzero(sensor == s)
            pos[s] = np.empty(len(at), dtype=np.int64)
            pos[s][index[at]] = at
            rows = np.ascontiguousarray(wire[info.name]).view(np.uint8).reshape(len(at), -1)
            rows = np.concatenate([np.full((len(at), 1), s, dtype=np.uint8), rows], axis=1)
            buf[self.offsets[at][:, None] + np.arange(size[s])] = rows
        self.data = buf.tobytes()
        self.ends = model.completion_events(lengths, pos)
        rate = np.array([s.rate_hz for s in p.sensors])
        phase = np.array([self.phases.get(s.name, 0.0) for s in p.sensors])
        self.times = (index + phase[sensor]) / rate[sensor]     # s from the segment's grid 0
        hop = [round(p.hop_s * s.rate_hz) for s in p.sensors]
        first = [pos[s][np.minimum(np.arange(len(self.ends)) * hop[s], len(pos[s]) - 1)]
                 for s in range(len(p.sensors))]
        self.starts = np.min(first, axis=0) if len(self.ends) else np.zeros(0, np.int64)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, rows: slice) -> tuple:
        a, b, _ = rows.indices(len(self))
        return b - a, self.data[self.offsets[a]:self.offsets[b]]


def _keeps_windows(model, order, lengths) -> bool:
    """The push ``order`` loses no window on the device (``ready_windows``, the transcription
    of ``<name>_mr_push``) and the events of every window ``m`` from its first sample on are a
    suffix of it (every sensor's sample ``m H - 1`` before any sensor's ``m H``)."""
    p = model.plan
    if ready_windows(p, [tuple(e) for e in order.tolist()])[1]:
        return False
    pos = [np.empty(lengths[s.name], dtype=np.int64) for s in p.sensors]
    for s in range(len(p.sensors)):
        at = np.flatnonzero(order[:, 0] == s)
        pos[s][order[at, 1]] = at
    hops = [info.hop for info in model.sensors]
    m = 1
    while all(m * h < len(x) for h, x in zip(hops, pos)):
        if max(x[m * h - 1] for h, x in zip(hops, pos)) > min(x[m * h] for h, x in zip(hops,
                                                                                      pos)):
            return False
        m += 1
    return True


def _sensor(meta: dict, name: str) -> Sensor:
    s = next(x for x in meta["sensors"] if isinstance(x, dict) and x["name"] == name)
    return Sensor(s["name"], tuple(s["channels"]), 0.0, 0.0, float(s["sample_rate_hz"]))


def multirate_segments(rec, model: MultiRateModel) -> list:
    """[(first window k0, {sensor: real samples of the segment at its pushed rate}, rows, end
    times, {sensor: phase})] of one recording (module notes): per window of the segment, the
    last row (time stamp) of the recording before the window's end, that end in seconds from
    its first time stamp, and each sensor's grid phase in its pushed periods. Usable windows
    are the trainer's: no gap or missing value among the window's samples at the recorded
    rate; a sensor pushed at 1/d of its recorded rate gets every d-th recorded sample (from
    grid index 0, as the trainer decimates)."""
    p = model.plan
    try:
        aligned = [align(rec, _sensor(model.meta, s.name), list(s.channels)) for s in p.sensors]
    except DataError as exc:
        raise DeviceError(str(exc)) from None
    sizes = [(round(p.window_s * a.rate), round(p.hop_s * a.rate)) for a in aligned]
    n_win = min((a.n - w) // h + 1 for a, (w, h) in zip(aligned, sizes))
    bad = []
    for a in aligned:
        missing = ~a.present | np.any([np.isnan(v) for v in a.columns.values()], axis=0)
        bad.append(np.concatenate([[0], np.cumsum(missing)]))

    def clean(k0: int, k1: int) -> bool:
        """No gap or missing value in the samples of windows k0..k1 (and between them)."""
        return all(b[k1 * h + w] == b[k0 * h] for b, (w, h) in zip(bad, sizes))

    out, k = [], 0
    t = rec.time - rec.time[0]
    phases = {s.name: a.phase / s.decimation for s, a in zip(p.sensors, aligned)}
    while k < n_win:
        if not clean(k, k):
            k += 1
            continue
        k1 = k
        while k1 + 1 < n_win and clean(k, k1 + 1):
            k1 += 1
        streams = {s.name: np.column_stack([a.columns[c] for c in s.channels])
                   [k * h:k1 * h + w:s.decimation]
                   for s, a, (w, h) in zip(p.sensors, aligned, sizes)}
        end_t = np.arange(k, k1 + 1) * p.hop_s + p.window_s
        rows = np.searchsorted(t, end_t - 1e-9 * p.window_s, side="left") - 1
        out.append((k, streams, rows, end_t, phases))
        k = k1 + 1
    return out


class MultiRateReplayer(Replayer):
    """:class:`~sensorbudget.device_sim.replay.Replayer` of a multi-rate bundle: segments of
    windows, events in time order (PUSH_EVENTS), the reference of each segment from the same
    wire streams (module notes)."""

    push_kind = "events"

    def __init__(self, backend, model, *, rate=None, **options):
        """``rate``: None (as fast as possible), events per second, or ``"recorded"``: each
        event at its sample's time stamp on its grid ``(i + phase) / rate`` (the push order's;
        segments one after the other)."""
        self.recorded = rate == "recorded"
        super().__init__(backend, model, rate=max(s.rate_hz for s in model.sensors)
                         if self.recorded else rate, **options)

    def _check_device(self, info) -> None:
        m = self.model
        got = (info.k, info.t, info.numeric, tuple(info.sensors))
        if not info.multi_rate or got != (m.k, m.t, m.numeric, tuple(m.sensors)):
            raise DeviceError(f"the device runs another model: k={info.k} t={info.t} "
                              f"{info.numeric} sensors={_listing(info.sensors)}; the bundle "
                              f"needs k={m.k} t={m.t} {m.numeric} sensors="
                              f"{_listing(m.sensors)}")

    def _segments(self, recordings) -> list:
        m, out = self.model, []
        for rec in recordings.recordings:
            for k0, streams, rows, end_t, phases in multirate_segments(rec, m):
                wire = m.wire_streams(streams)
                out.append((rec.name, k0, rows, end_t, wire, EventStream(m, wire, phases)))
        if self.recorded:
            self.pacer = _TimedPacer(self.pacer, [seg[-1] for seg in out])
        return out

    def _segment(self, name, k0, rows, end_t, wire, events) -> None:
        m, res = self.model, self.result
        seg = res.segments
        res.segments += 1
        reference = self._pool.submit(m.stream_scores, wire)
        recs = [PredictionRecord(name, seg, i, int(r), None, end_time_s=float(e))
                for i, (r, e) in enumerate(zip(rows, end_t))]
        res.records.extend(recs)
        try:
            self._replay_segment(0, events, events.starts, events.ends, recs)
        finally:
            scores = reference.result()
            if len(scores) != len(recs):
                raise DeviceError(f"recording {name!r}: the reference makes {len(scores)} "
                                  f"windows of segment {seg} ready, the segment has {len(recs)}")
            for rec, s in zip(recs, scores):
                rec.reference = s


class _TimedPacer(_Pacer):
    """Sends event ``g`` (counted over the replay) at its time stamp: its time in its segment
    after the segments before it, each lasting to its last event plus the shortest period."""

    def __init__(self, pacer, streams):
        super().__init__(pacer.rate, pacer.clock, pacer.sleep)
        start, times = 0.0, []
        for events in streams:
            times.append(start + events.times)
            start += (float(events.times[-1]) if len(events) else 0.0) + 1.0 / self.rate
        self.times = np.concatenate(times) if times else np.zeros(0)

    def offset(self, g: int) -> float:
        return float(self.times[min(g, len(self.times) - 1)])


def _listing(sensors) -> str:
    return "[" + ", ".join(f"{s.channels} ch {s.rate_hz:g} Hz w{s.window}/h{s.hop}"
                           for s in sensors) + "]"


def rates_section(model: MultiRateModel, sensors: dict) -> dict:
    """report.json's ``rates`` of a multi-rate replay: the window and hop in seconds and per
    sensor the rate it was pushed at (with its window and hop in those samples), the rates its
    features are computed at (decimated in the device), the rate it is paid at and its
    readings and energy per prediction there (``sensors``: :func:`~.costs.sensor_costs`);
    ``pushed_above_paid`` when the device reads it faster than that (its feature rates have
    no common multiple below: e.g. 5 and 2 Hz of a 10 Hz recording are pushed at 10 Hz), so
    the energy the cost model pays is below what the device would draw."""
    p, out = model.plan, []
    for i, (s, info) in enumerate(zip(p.sensors, model.sensors)):
        cost = sensors["per_sensor"].get(s.name, {})
        out.append({"name": s.name, "channels": list(s.channels), "pushed_hz": s.rate_hz,
                    "window": info.window, "hop": info.hop,
                    "feature_rates_hz": sorted({g.rate_hz for g in p.groups if g.sensor == i},
                                               reverse=True),
                    "rate_hz": cost.get("rate_hz"), "readings": cost.get("readings"),
                    "energy_j": cost.get("energy_j"),
                    "pushed_above_paid": bool(cost.get("rate_hz") is not None
                                              and s.rate_hz > cost["rate_hz"])})
    return {"window_s": p.window_s, "hop_s": p.hop_s, "sensors": out}
