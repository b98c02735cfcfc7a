"""What the multi-rate C computes, in numpy, bit for bit (the oracle of ``<name>_multirate.c``).

A device gets each sensor's samples (that sensor's channels of :class:`~.multirate.SensorPlan`,
float32, or Q15 int16 for q15/q31: :func:`quantize_streams`) one push at a time, in the order
of :func:`push_order` (time order). Group ``g`` keeps its sensor's sample ``i`` when
``i % factor == 0`` and is a single-rate stream: its window features are
:func:`.reference.window_features` of its plan on the kept samples. After each push, ``w`` =
the fewest windows any group has completed; when ``w`` grows, window ``w - 1`` of the model is
ready if every group has completed exactly ``w`` windows (each group's newest features are then
those of window ``w - 1``), else it is lost (pushes out of time order). A ready window's
features are gathered into model-input order; in Q15 each group has quantised its own inputs
as a single-rate Q15 stream does (:func:`group_fixed`: integer features straight to their
inputs, whose float features stay 0, the others by the header's arithmetic), in Q31 the
header's quantiser takes them all (:func:`sensorbudget.export.fixed_point.quantize_inputs`);
then they are scored (:func:`.reference.scores`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sensorbudget.export.fixed_point import quantize_inputs

from . import reference
from .errors import FirmwareGenError
from .q15_c import int_inputs

F32 = np.float32


def push_order(mplan, lengths: dict, phases: dict | None = None) -> list:
    """[(sensor index, sample index)] of every sample in time order: sample ``i`` of sensor
    ``s`` at ``(i + phase_s) / rate_s`` (``phases`` {sensor name: phase in periods}, default
    0), ties to the lower sensor index."""
    phases = phases or {}
    keys = []
    for s, sensor in enumerate(mplan.sensors):
        n = int(lengths.get(sensor.name, 0))
        t = (np.arange(n) + float(phases.get(sensor.name, 0.0))) / sensor.rate_hz
        keys.append((t, np.full(n, s), np.arange(n)))
    t, s, i = (np.concatenate(parts) for parts in zip(*keys))
    order = np.lexsort((i, s, t))
    return list(zip(s[order].tolist(), i[order].tolist()))


def quantize_streams(mplan, streams: dict) -> dict:
    """{sensor: Q15 int16 samples} of real-valued ``streams`` (each sensor's full scales)."""
    out = {}
    for sensor in mplan.sensors:
        x = np.asarray(streams[sensor.name], dtype=np.float64)
        scale = 32768.0 / np.asarray(sensor.full_scale, dtype=np.float64)
        v = np.nan_to_num(x * scale, nan=0.0, posinf=32767.0, neginf=-32768.0)
        q = np.sign(v) * np.floor(np.abs(v) + 0.5)
        out[sensor.name] = np.clip(q, -32768, 32767).astype(np.int16)
    return out


def _check(mplan, streams: dict) -> dict:
    out = {}
    for sensor in mplan.sensors:
        if sensor.name not in streams:
            raise FirmwareGenError(f"no samples of sensor {sensor.name!r}")
        x = np.asarray(streams[sensor.name])
        if x.ndim != 2 or x.shape[1] != len(sensor.channels):
            raise FirmwareGenError(f"samples of sensor {sensor.name!r} have shape {x.shape}; "
                                   f"expected (n, {len(sensor.channels)}): channels "
                                   f"{', '.join(sensor.channels)}")
        out[sensor.name] = x
    return out


def group_fixed(fixed, g):
    """The header's FixedPointModel restricted to group ``g``'s model inputs (its quantiser
    parameters in the group's input order), for a Q15 plan; None otherwise. The group's stream
    quantises its own inputs with it, as a single-rate Q15 stream does (integer inputs of
    :func:`.q15_c.int_inputs` straight from their integer features, the others by the
    header's arithmetic): per input, so equal to the whole model's quantiser on those inputs."""
    if fixed is None or fixed.fmt.name != "q15":
        return None
    rows = list(g.slots)
    return dataclasses.replace(fixed, input_offset=fixed.input_offset[rows],
                               input_inv_scale=fixed.input_inv_scale[rows],
                               x_lo=fixed.x_lo[rows], x_hi=fixed.x_hi[rows],
                               weights=fixed.weights[rows])


def group_features(mplan, streams: dict) -> list:
    """Per group: float32 features (its complete windows x its features) of its kept samples."""
    out = []
    for g in mplan.groups:
        x = streams[mplan.sensors[g.sensor].name]
        out.append(reference.window_features(g.plan, x[::g.factor][:, list(g.channels)]))
    return out


def ready_windows(mplan, order) -> tuple:
    """(windows the device makes ready, windows it loses) for the pushes ``order``: the
    transcription of ``<name>_mr_push``'s bookkeeping (module notes)."""
    ready, lost, _ = _bookkeeping(mplan, order)
    return ready, lost


def ready_pushes(mplan, order) -> list:
    """The positions in ``order`` of the pushes that make a window ready (``<name>_mr_push``
    returns 1 there)."""
    return _bookkeeping(mplan, order)[2]


def _bookkeeping(mplan, order) -> tuple:
    """(ready windows, lost windows, positions of the ready pushes) of ``order``."""
    seen = [0] * len(mplan.sensors)
    done = [0] * len(mplan.groups)
    of_sensor = [[j for j, g in enumerate(mplan.groups) if g.sensor == s]
                 for s in range(len(mplan.sensors))]
    windows, ready, lost, at = 0, [], [], []
    for position, (s, index) in enumerate(order):
        i, seen[s] = seen[s], seen[s] + 1
        if index != i:
            raise FirmwareGenError(f"sample {index} of sensor {mplan.sensors[s].name!r} is "
                                   f"pushed before its sample {i}: a sensor's samples go in order")
        for j in of_sensor[s]:
            g = mplan.groups[j]
            if i % g.factor == 0:
                kept = i // g.factor + 1 - g.plan.window
                if kept >= 0 and kept % g.plan.hop == 0:
                    done[j] += 1
        w = min(done)
        if w > windows:
            if all(d == w for d in done):
                ready.append(w - 1)
                at.append(position)
            else:
                lost.append(w - 1)
            windows = w
    return ready, lost, at


def stream(mplan, bundle, streams: dict, order=None):
    """(features, model inputs, scores) of every window the device makes ready, in order, for
    per-sensor ``streams`` ({sensor: samples (n x its channels)}, float32, or Q15 int16 for
    q15/q31) pushed in ``order`` (default :func:`push_order`)."""
    streams = _check(mplan, streams)
    if order is None:
        order = push_order(mplan, {s: len(x) for s, x in streams.items()})
    ready, _ = ready_windows(mplan, order)
    per_group = group_features(mplan, streams)
    fixed = reference.fixed_model(mplan, bundle)
    X = np.zeros((len(ready), mplan.k), dtype=F32)
    for g, Xg in zip(mplan.groups, per_group):
        X[:, list(g.slots)] = Xg[ready]
    inputs = X if fixed is None else quantize_inputs(fixed, X)
    for g, Xg in zip(mplan.groups, per_group):
        fg = group_fixed(fixed, g)
        if fg is None:
            continue
        inputs[:, list(g.slots)] = reference.model_inputs(g.plan, fg, Xg[ready])
        for slot in int_inputs(g.plan, fg):       # the C does not compute these features
            X[:, g.slots[slot]] = 0.0
    return X, inputs, reference.scores(mplan, bundle, fixed, inputs)


def trainer_streams(mplan, aligned: dict) -> dict:
    """{sensor: samples} a device pushes for one recording's aligned sensors
    (:func:`sensorbudget.trainer.sensing.rates.align`): the grid from index 0 on, every
    ``decimation``-th sample (the sensor's rate on the device). A device counts samples, so
    a grid point without a sample (a gap, or an empty cell of a pushed channel) is refused
    with its sensor and time: the trainer skips the windows around it, a device cannot."""
    out = {}
    for s in mplan.sensors:
        a = aligned[s.name]
        x = np.column_stack([a.columns[c] for c in s.channels])
        bad = np.flatnonzero(~a.present | np.isnan(x).any(axis=1))
        if bad.size:
            raise FirmwareGenError(
                f"sensor {s.name!r} has no sample at t={(bad[0] + a.phase) / a.rate:.9g} s (grid "
                f"point {int(bad[0])} at {a.rate:g} Hz): a device stream has no gaps; cut the "
                f"recording there (--split-gaps)")
        out[s.name] = x[::s.decimation]
    return out


def trainer_phases(mplan, aligned: dict) -> dict:
    """{sensor: phase in its pushed periods} of aligned sensors: where its grid index 0 lies
    after the recording's first time stamp (``push_order``'s ``phases``)."""
    return {s.name: aligned[s.name].phase / s.decimation for s in mplan.sensors}


def stream_error_bounds(mplan, fixed, W) -> np.ndarray:
    """Per target, how far a fixed-point multi-rate firmware's real scores may be from the
    float64 model on the float32 features of the same samples (samples within the full
    scales, features in the training ranges): :func:`.bounds.stream_error_bounds` with each
    group's extractor errors (:func:`.bounds.feature_error` of the group's plan: its window and
    full scales) put on the model inputs they feed; every input goes through the header's
    quantiser (the model's bound)."""
    from .bounds import feature_error, input_bounds

    errors = [(g.slots[slot], feature_error(g.plan, ext))
              for g in mplan.groups for ext in g.plan.extractors for slot in ext.slots]
    return input_bounds(mplan.k, fixed, W, errors)


def stated_stream_bound(mplan, header, W) -> float | None:
    """The largest per-target bound of :func:`stream_error_bounds`, rounded up to two digits
    as the header states its own (None for float32)."""
    from .bounds import stated_stream_bound as stated

    return stated(mplan, header, W, stream_error_bounds)
