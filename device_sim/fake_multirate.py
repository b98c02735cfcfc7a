"""A pure-Python multi-rate device: :class:`~sensorbudget.device_sim.fake.FakeDevice` with one
stream per sensor (PROTOCOL.md: HELLO with window = hop = 0, SENSORS, PUSH_EVENTS).

It keeps each sensor's samples since the start of the next window (dropping, when the hop is
longer than the window, those pushed before it) and, when a request's events
complete windows (``<name>_mr_push``'s rule: every (sensor, rate) group has the last sample of
the window; :func:`sensorbudget.firmware_gen.multirate_reference.ready_windows`), computes them
with the multi-rate reference (:func:`~sensorbudget.firmware_gen.multirate_reference.stream`)
on those samples. Windows are computed on the samples from the newest window's first sample
on: every window starts on a sample each group keeps (module notes of
:mod:`sensorbudget.device_sim.multirate`), so this is what the device computes.
"""

from __future__ import annotations

import struct

import numpy as np

from sensorbudget.firmware_gen.multirate_reference import stream as reference_stream

from .client import INPUT_DTYPES, SCORE_DTYPES, DeviceInfo, encode_predictions, encode_sensors
from .fake import PROTOCOL_VERSION, FakeDevice
from .protocol import Cmd, Err


class FakeMultiRateDevice(FakeDevice):
    """The multi-rate firmware's behaviour in Python; ``model``: a
    :class:`~sensorbudget.device_sim.multirate.MultiRateModel` (other parameters as
    :class:`FakeDevice`)."""

    @property
    def info(self) -> DeviceInfo:
        m = self.model
        return DeviceInfo(PROTOCOL_VERSION, m.numeric, m.k, m.t, len(m.channels), 0, 0,
                          self.name, tuple(m.sensors))

    def _reset_stream(self):
        m = self.model
        self.streams = [np.zeros((0, s.channels), dtype=m.sample_dtype) for s in m.sensors]
        self.skip = [0] * len(m.sensors)     # samples before the next window not yet pushed
        self.windows = 0
        self.count = 0
        self.last_inputs = np.zeros(m.k, dtype=INPUT_DTYPES[m.numeric])
        self.last_first = False    # the last ready window is the first since RESET

    def _execute(self, cmd: int, payload: bytes) -> tuple:
        if cmd == Cmd.PUSH_SAMPLES:         # a multi-rate device takes events only
            return Cmd.ERROR, bytes([cmd, Err.UNKNOWN_COMMAND])
        handler = {Cmd.SENSORS: self._sensors, Cmd.PUSH_EVENTS: self._events}.get(cmd)
        if handler is None:
            return super()._execute(cmd, payload)
        result = handler(payload)
        if isinstance(result, Err):
            return Cmd.ERROR, bytes([cmd, result])
        return cmd | 0x80, result

    def _sensors(self, payload):
        return Err.BAD_LENGTH if payload else encode_sensors(self.model.sensors)

    def _parse(self, payload) -> list | Err:
        """[(sensor, values)] of a PUSH_EVENTS payload, or the error that refuses it whole."""
        m = self.model
        if len(payload) < 2:
            return Err.BAD_LENGTH
        (count,) = struct.unpack_from("<H", payload)
        size = m.sample_dtype.itemsize
        events, pos = [], 2
        for _ in range(count):
            if pos >= len(payload):
                return Err.BAD_LENGTH
            s = payload[pos]
            if s >= len(m.sensors):
                return Err.BAD_VALUE
            n = m.sensors[s].channels
            if pos + 1 + n * size > len(payload):
                return Err.BAD_LENGTH
            events.append((s, np.frombuffer(payload, m.sample_dtype, n, pos + 1)))
            pos += 1 + n * size
        return events if pos == len(payload) else Err.BAD_LENGTH

    def _ready(self, lengths) -> int:
        """Windows every group has completed with ``lengths`` samples since the window start
        ``self.windows`` (a whole count: each window starts on a kept sample)."""
        p = self.model.plan
        done = []
        for g in p.groups:
            kept = -(-lengths[g.sensor] // g.factor)
            done.append(0 if kept < g.plan.window else (kept - g.plan.window) // g.plan.hop + 1)
        return min(done)

    def _events(self, payload):
        m = self.model
        events = self._parse(payload)
        if isinstance(events, Err):
            return events
        added = [[] for _ in m.sensors]
        for s, values in events:
            added[s].append(values)
        skip = list(self.skip)
        grown = []
        for j, (old, new) in enumerate(zip(self.streams, added)):
            cut = min(skip[j], len(new))     # samples between two windows (hop > window)
            skip[j] -= cut
            grown.append(np.concatenate([old, np.stack(new[cut:])]) if new[cut:] else old)
        done = self._ready([len(x) for x in grown])
        answer = 2 + done * (4 + m.t * np.dtype(SCORE_DTYPES[m.numeric]).itemsize)
        if answer > self.max_response:
            return Err.BAD_LENGTH
        self.streams, self.skip = grown, skip
        self.count += len(events)
        scores = []
        if done:
            wire = {s.name: x for s, x in zip(m.plan.sensors, grown)}
            _, inputs, scores = reference_stream(m.plan, m.bundle, wire)
            scores, self.last_inputs = scores[:done], inputs[done - 1]
            self.last_first = self.windows + done == 1
            for j, (x, s) in enumerate(zip(grown, m.sensors)):   # from the next window on
                self.skip[j] = max(0, done * s.hop - len(x))
                self.streams[j] = x[done * s.hop:]
        windows = list(range(self.windows, self.windows + done))
        self.windows += done
        return encode_predictions(windows, scores, SCORE_DTYPES[m.numeric])
