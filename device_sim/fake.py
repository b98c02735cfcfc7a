"""A pure-Python device: the firmware's protocol with the reference pipeline inside.

:class:`FakeDevice` consumes request bytes and produces response bytes exactly as the generated
firmware does (framing, seq cache, streaming windows, RESET, STATS, BENCH, QUIT). It backs the
``python`` backend and the link tests; :mod:`device_sim.transports` puts it behind a
pyserial-like object (in memory, or on a pty for the real pyserial code path).

Costs: the device has no clock of its own, so STATS/BENCH answer with the op-count estimate of
:func:`device_sim.costs.estimate_costs` (in the cost profile's unit); the python backend labels
them as estimated.
"""

from __future__ import annotations

import struct

import numpy as np

from export.cgen import DEFAULT_NAME

from .client import INPUT_DTYPES, SCORE_DTYPES, DeviceInfo, encode_hello, encode_predictions
from .protocol import Cmd, Err, FrameDecoder, Unit, encode_frame
from .reference import ReferenceModel

PROTOCOL_VERSION = 1


class FakeDevice:
    """The firmware's behaviour in Python.

    Parameters
    ----------
    model : ReferenceModel
        Extractors and model (with its numeric format).
    costs : tuple of (int, int), optional
        (extractors, model) figures STATS/BENCH report per window/prediction, in ``unit``.
    stop_after : int, optional
        Stop answering after this many executed requests (a hung device, for tests).
    name : str
        Model name reported by HELLO.
    """

    def __init__(self, model: ReferenceModel, *, costs=(0, 0), unit=Unit.INSTRUCTIONS,
                 stop_after=None, name: str = DEFAULT_NAME, max_request: int = 1024,
                 max_response: int = 1024):
        self.model = model
        self.costs = tuple(int(c) for c in costs)
        self.unit = Unit(unit)
        self.stop_after = stop_after
        self.name = name
        self.max_request, self.max_response = max_request, max_response
        self.decoder = FrameDecoder()
        self.executed = 0
        self.exit_code = None
        self._last = None          # (seq, request crc, response frame) of the last execution
        self._reset_stream()

    @property
    def info(self) -> DeviceInfo:
        m = self.model
        return DeviceInfo(PROTOCOL_VERSION, m.numeric, m.k, m.t, len(m.channels), m.window,
                          m.hop, self.name)

    def _reset_stream(self):
        m = self.model
        self.buffer = np.zeros((m.window, len(m.channels)), dtype=m.sample_dtype)
        self.count = 0
        self.last_inputs = np.zeros(m.k, dtype=INPUT_DTYPES[m.numeric])

    def feed(self, data: bytes) -> bytes:
        """Bytes received on the UART -> bytes the device sends back."""
        out = []
        for seq, cmd, payload in self.decoder.feed(data):
            if self.exit_code is not None or (self.stop_after is not None
                                              and self.executed >= self.stop_after):
                continue
            crc = encode_frame(seq, cmd, payload)[-2:]
            if self._last is not None and self._last[:2] == (seq, crc):
                out.append(self._last[2])          # a retry: answer again, do not re-execute
                continue
            if len(payload) > self.max_request:
                rcmd, rpayload = Cmd.ERROR, bytes([cmd & 0xFF, Err.BAD_LENGTH])
            else:
                rcmd, rpayload = self._execute(cmd, payload)
            frame = encode_frame(seq, rcmd, rpayload)
            self._last = (seq, crc, frame)
            self.executed += 1
            out.append(frame)
            if cmd == Cmd.QUIT and rcmd != Cmd.ERROR:
                self.exit_code = payload[0]
        return b"".join(out)

    def _execute(self, cmd: int, payload: bytes) -> tuple:
        handler = {Cmd.HELLO: self._hello, Cmd.PUSH_SAMPLES: self._push,
                   Cmd.PREDICT: self._predict, Cmd.BENCH: self._bench, Cmd.STATS: self._stats,
                   Cmd.RESET: self._reset, Cmd.QUIT: self._quit}.get(cmd)
        if handler is None:
            return Cmd.ERROR, bytes([cmd & 0xFF, Err.UNKNOWN_COMMAND])
        result = handler(payload)
        if isinstance(result, Err):
            return Cmd.ERROR, bytes([cmd, result])
        return cmd | 0x80, result

    def _hello(self, payload):
        return Err.BAD_LENGTH if payload else encode_hello(self.info)

    def _reset(self, payload):
        if payload:
            return Err.BAD_LENGTH
        self._reset_stream()
        return b""

    def _quit(self, payload):
        return Err.BAD_LENGTH if len(payload) != 1 else b""

    def _push(self, payload):
        m = self.model
        n_ch, dtype = len(m.channels), m.sample_dtype
        if len(payload) < 2:
            return Err.BAD_LENGTH
        (count,) = struct.unpack_from("<H", payload)
        if len(payload) != 2 + dtype.itemsize * count * n_ch:
            return Err.BAD_LENGTH
        ends = (self.count + np.arange(1, count + 1)) - m.window
        done = int(np.count_nonzero((ends >= 0) & (ends % m.hop == 0)))
        if 2 + done * (4 + m.t * np.dtype(SCORE_DTYPES[m.numeric]).itemsize) > self.max_response:
            return Err.BAD_LENGTH
        samples = np.frombuffer(payload, dtype, count * n_ch, 2).reshape(count, n_ch)
        windows, scores = [], []
        for row in samples:
            self.buffer[:-1] = self.buffer[1:]
            self.buffer[-1] = row
            self.count += 1
            end = self.count - m.window
            if end >= 0 and end % m.hop == 0:
                self.last_inputs = m.inputs(m.features_of(self.buffer))[0]
                windows.append(end // m.hop)
                scores.append(m.scores_of_inputs(self.last_inputs)[0])
        return encode_predictions(windows, scores, SCORE_DTYPES[m.numeric])

    def _predict(self, payload):
        m = self.model
        dtype = np.dtype(INPUT_DTYPES[m.numeric])
        if len(payload) != m.k * dtype.itemsize:
            return Err.BAD_LENGTH
        self.last_inputs = np.frombuffer(payload, dtype).copy()
        s = m.scores_of_inputs(self.last_inputs)[0]
        return np.asarray(s).astype(SCORE_DTYPES[m.numeric]).tobytes()

    def _bench(self, payload):
        if len(payload) != 5:
            return Err.BAD_LENGTH
        reps, part = struct.unpack("<IB", payload)
        if part not in (0, 1) or reps == 0:
            return Err.BAD_VALUE
        per = self.costs[1] if part == 0 else self.costs[0]
        return struct.pack("<BQ", self.unit, reps * per)

    def _stats(self, payload):
        if payload:
            return Err.BAD_LENGTH
        return struct.pack("<BII", self.unit, *self.costs)

