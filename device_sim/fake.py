"""A pure-Python device: the firmware's protocol with the reference pipeline inside.

:class:`FakeDevice` consumes request bytes and produces response bytes exactly as the generated
firmware does (framing, exactly-once execution by seq, streaming windows, RESET, STATS, BENCH,
QUIT). It backs the
``python`` backend and the link tests; :mod:`sensorbudget.device_sim.transports` puts it behind a
pyserial-like object (in memory, or on a pty for the real pyserial code path).

Costs: the device has no clock of its own, so STATS/BENCH answer with the op-count estimate of
:func:`sensorbudget.device_sim.costs.estimate_costs` (in the cost profile's unit); the python
backend labels them as estimated. STATS's pushes are those of the last ready window: the first
after a RESET stores a whole window, a later one its new samples
(:func:`~sensorbudget.device_sim.costs.estimate_pushes`).
"""

from __future__ import annotations

import struct

import numpy as np

from sensorbudget.export.cgen import DEFAULT_NAME

from .client import (
    INPUT_DTYPES,
    SCORE_DTYPES,
    DeviceInfo,
    encode_hello,
    encode_predictions,
    encode_stats,
)
from .protocol import VERSION, Cmd, Err, FrameDecoder, Unit, encode_frame, seq_is_newer
from .reference import ReferenceModel

PROTOCOL_VERSION = VERSION


class FakeDevice:
    """The firmware's behaviour in Python.

    Parameters
    ----------
    model : ReferenceModel
        Extractors and model (with its numeric format).
    costs : tuple of 2 or 4 ints, optional
        (extractors, model, pushes, first pushes) figures STATS/BENCH report per
        window/prediction, in ``unit`` (pushes: of a window after the first since RESET,
        first pushes: of that first one); (extractors, model) alone answers STATS as an image
        built before the pushes were measured (9 bytes).
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
        self._last = None          # (seq, request crc, (response frame, cmd)) of the last one
        self._reset_stream()

    @property
    def info(self) -> DeviceInfo:
        m = self.model
        return DeviceInfo(PROTOCOL_VERSION, m.numeric, m.k, m.t, len(m.channels), m.window,
                          m.hop, self.name)

    def _reset_stream(self):
        m = self.model
        # the samples from the start of the next window on (absolute index tail_start, a
        # multiple of hop): windows are computed together, vectorised, as they complete
        self.tail = np.zeros((0, len(m.channels)), dtype=m.sample_dtype)
        self.tail_start = 0
        self.count = 0
        self.last_inputs = np.zeros(m.k, dtype=INPUT_DTYPES[m.numeric])
        self.last_first = False    # the last ready window is the first since RESET

    def feed(self, data: bytes) -> bytes:
        """Bytes received on the UART -> bytes the device sends back."""
        out = []
        dec = self.decoder
        for seq, cmd, payload, crc in dec.feed_crc(data):
            if self._stopped():
                continue
            out.append(self._answer(seq, cmd, payload, crc))
            if cmd == Cmd.QUIT and self._last[2][1] == Cmd.QUIT | 0x80 and self._last[0] == seq:
                self.exit_code = payload[0]
        for seq, cmd, _ in dec.foreign:          # valid frames of another protocol version
            if not self._stopped():
                out.append(encode_frame(seq, Cmd.ERROR, bytes([cmd & 0xFF, Err.BAD_VERSION])))
        dec.foreign.clear()
        return b"".join(out)

    def _stopped(self) -> bool:
        return self.exit_code is not None or (self.stop_after is not None
                                              and self.executed >= self.stop_after)

    def _answer(self, seq: int, cmd: int, payload: bytes, crc: int) -> bytes:
        """Execute a request at most once: the cached answer for a repeat of the last one, STALE
        for a seq that is not newer than the last executed one (PROTOCOL.md, *Sequence*)."""
        if self._last is not None:
            last_seq, last_crc, (frame, _) = self._last
            if seq == last_seq and crc == last_crc:
                return frame                       # a retry or a duplicate: answer again
            if not seq_is_newer(seq, last_seq):
                return encode_frame(seq, Cmd.ERROR, bytes([cmd & 0xFF, Err.STALE])
                                    + last_seq.to_bytes(2, "little"))
        if len(payload) > self.max_request:
            rcmd, rpayload = Cmd.ERROR, bytes([cmd & 0xFF, Err.BAD_LENGTH])
        else:
            rcmd, rpayload = self._execute(cmd, payload)
        frame = encode_frame(seq, rcmd, rpayload)
        self._last = (seq, crc, (frame, rcmd))
        self.executed += 1
        return frame

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
        n_tail = len(self.tail) + count
        done = (n_tail - m.window) // m.hop + 1 if n_tail >= m.window else 0
        if 2 + done * (4 + m.t * np.dtype(SCORE_DTYPES[m.numeric]).itemsize) > self.max_response:
            return Err.BAD_LENGTH
        samples = np.frombuffer(payload, dtype, count * n_ch, 2).reshape(count, n_ch)
        self.tail = np.concatenate([self.tail, samples])
        self.count += count
        first = self.tail_start // m.hop
        windows, scores = list(range(first, first + done)), []
        if done:
            inputs = m.inputs(m.features_of(self.tail[:(done - 1) * m.hop + m.window]))
            scores = m.scores_of_inputs(inputs)
            self.last_inputs = inputs[-1]
            self.last_first = first + done == 1
            self.tail = self.tail[done * m.hop:]
            self.tail_start += done * m.hop
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
        ext, model, *pushes = self.costs
        if not pushes:
            return encode_stats(self.unit, ext, model, None)
        return encode_stats(self.unit, ext, model, pushes[1] if self.last_first else pushes[0])

