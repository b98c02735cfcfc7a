"""Typed commands of the protocol on top of a :class:`~sensorbudget.device_sim.link.Link`.

Payload layouts (little-endian) follow :class:`~sensorbudget.device_sim.protocol.Cmd`:

- ``HELLO`` -> version u8 (the protocol version, 2), numeric u8 (0 float32, 1 q15, 2 q31),
  k u16, t u16, channels u16, window u16, hop u16, model name (ASCII, rest of the payload).
- ``PUSH_SAMPLES``: count u16, then count x channels samples (float32, or Q15 int16 for q15/q31
  firmware; sample-major: all channels of sample 0, then sample 1, ...) -> count u16
  predictions, each window u32 (index since the last RESET) followed by t scores (float32, or
  int32/int64 for Q15/Q31).
- ``PREDICT``: k inputs (float32, or int16/int32 for Q15/Q31) -> t scores.
- ``BENCH``: reps u32, part u8 (0 model, 1 extractors) -> unit u8, total u64.
- ``STATS`` -> unit u8, extractors u32, model u32, pushes u32 (the last window / prediction;
  each saturated at 2^32 - 1); an image built before the pushes were measured answers the
  first three only (9 bytes: pushes unknown, None).
- ``RESET`` -> empty; ``QUIT``: exit code u8 -> empty.
- multi-rate devices (HELLO's window = hop = 0): ``SENSORS`` -> n u8, per sensor channels u8,
  window u16, hop u16, rate f32; ``PUSH_EVENTS``: count u16, then count x (sensor u8, that
  sensor's values), in time order -> as ``PUSH_SAMPLES``.
"""

from __future__ import annotations

import dataclasses
import struct
from collections import deque
from dataclasses import dataclass

import numpy as np

from .errors import DeviceError, DeviceTimeout
from .protocol import MAX_PAYLOAD, VERSION, Cmd, ProtocolError, Unit

NUMERIC_CODES = {0: "float32", 1: "q15", 2: "q31"}
INPUT_DTYPES = {"float32": "<f4", "q15": "<i2", "q31": "<i4"}
SCORE_DTYPES = {"float32": "<f4", "q15": "<i4", "q31": "<i8"}
SAMPLE_DTYPES = {"float32": "<f4", "q15": "<i2", "q31": "<i2"}
_HELLO = struct.Struct("<BBHHHHH")
_SENSOR = struct.Struct("<BHHf")
MULTIRATE_VERSION = 1     # of the multi-rate extension (SENSORS' first byte, PUSH_EVENTS)


@dataclass(frozen=True)
class DeviceInfo:
    """What a device reports in its HELLO answer."""

    version: int
    numeric: str
    k: int
    t: int
    channels: int
    window: int
    hop: int
    name: str
    sensors: tuple = ()      # multi-rate: SensorInfo per sensor (SENSORS); window = hop = 0

    @property
    def multi_rate(self) -> bool:
        """The device takes PUSH_EVENTS (its HELLO says window = hop = 0; SENSORS lists them)."""
        return self.window == 0 and self.hop == 0

    @property
    def score_dtype(self) -> np.dtype:
        return np.dtype(SCORE_DTYPES[self.numeric])

    @property
    def sample_dtype(self) -> np.dtype:
        return np.dtype(SAMPLE_DTYPES[self.numeric])

    def max_push(self, max_request: int = MAX_PAYLOAD) -> int:
        """Most samples one PUSH_SAMPLES request of at most ``max_request`` bytes can carry (of
        a multi-rate device: events of its widest sensor in one PUSH_EVENTS request)."""
        if self.sensors:
            widest = 1 + self.sample_dtype.itemsize * max(s.channels for s in self.sensors)
            return max(1, (max_request - 2) // widest)
        return max(1, (max_request - 2) // (self.sample_dtype.itemsize * max(1, self.channels)))


@dataclass(frozen=True)
class SensorInfo:
    """One sensor of a multi-rate device (its SENSORS answer): channels, window and hop in its
    own samples, the rate (Hz) it is pushed at."""

    channels: int
    window: int
    hop: int
    rate_hz: float


def parse_sensors(data: bytes) -> tuple:
    """The SensorInfo of each sensor of a SENSORS answer (extension version u8, n u8, n x
    (channels u8, window u16, hop u16, rate_hz f32)); a ProtocolError for another version."""
    if len(data) >= 1 and data[0] != MULTIRATE_VERSION:
        raise ProtocolError(f"the device speaks multi-rate extension v{data[0]}; this host "
                            f"speaks v{MULTIRATE_VERSION}: use matching sensorbudget and "
                            f"firmware versions")
    if len(data) < 2 or len(data) != 2 + data[1] * _SENSOR.size:
        raise ProtocolError(f"SENSORS answer of {len(data)} bytes does not hold "
                            f"{data[1] if len(data) > 1 else 0} sensor(s) of {_SENSOR.size} "
                            f"bytes")
    return tuple(SensorInfo(*_SENSOR.unpack_from(data, 2 + i * _SENSOR.size))
                 for i in range(data[1]))


def encode_sensors(sensors) -> bytes:
    """The SENSORS answer of ``sensors`` (SensorInfo, in sensor index order)."""
    return bytes([MULTIRATE_VERSION, len(sensors)]) + b"".join(
        _SENSOR.pack(s.channels, s.window, s.hop, s.rate_hz) for s in sensors)


def parse_hello(data: bytes) -> DeviceInfo:
    if len(data) < _HELLO.size:
        raise ProtocolError(f"HELLO answer has {len(data)} bytes; expected >= {_HELLO.size}")
    version, numeric, k, t, channels, window, hop = _HELLO.unpack_from(data)
    if numeric not in NUMERIC_CODES:
        raise ProtocolError(f"HELLO reports numeric code {numeric}; known: {NUMERIC_CODES}")
    name = data[_HELLO.size:].decode("ascii", errors="replace")
    return DeviceInfo(version, NUMERIC_CODES[numeric], k, t, channels, window, hop, name)


def encode_hello(info: DeviceInfo) -> bytes:
    code = {v: k for k, v in NUMERIC_CODES.items()}[info.numeric]
    return _HELLO.pack(info.version, code, info.k, info.t, info.channels, info.window,
                       info.hop) + info.name.encode("ascii")


def encode_predictions(windows, scores, dtype) -> bytes:
    """PUSH_SAMPLES answer: count u16, then (window u32, t scores) per prediction."""
    out = [struct.pack("<H", len(windows))]
    for w, s in zip(windows, scores):
        out.append(struct.pack("<I", w) + np.asarray(s).astype(dtype).tobytes())
    return b"".join(out)


def decode_predictions(data: bytes, t: int, dtype) -> list:
    """[(window index, scores array)] of a PUSH_SAMPLES answer."""
    dtype = np.dtype(dtype)
    if len(data) < 2:
        raise ProtocolError(f"PUSH_SAMPLES answer of {len(data)} bytes has no count")
    (count,) = struct.unpack_from("<H", data)
    size = 4 + t * dtype.itemsize
    if len(data) != 2 + count * size:
        raise ProtocolError(f"PUSH_SAMPLES answer of {len(data)} bytes does not hold {count} "
                            f"prediction(s) of {size} bytes")
    out = []
    for i in range(count):
        off = 2 + i * size
        (window,) = struct.unpack_from("<I", data, off)
        out.append((window, np.frombuffer(data, dtype, t, off + 4).copy()))
    return out


class DeviceClient:
    """The protocol commands of one device, over a :class:`~sensorbudget.device_sim.link.Link`.

    ``max_request`` is the device's largest request payload (PROTOCOL.md, *Limits*).
    """

    def __init__(self, link, *, max_request: int = MAX_PAYLOAD):
        self.link = link
        self.max_request = int(max_request)
        self.info = None
        self.last_retried = False

    def _call(self, cmd, payload=b"") -> bytes:
        reply = self.link.request(cmd, payload)
        self.last_retried = reply.retried
        return reply.payload

    def hello(self) -> DeviceInfo:
        """The version handshake: the device's :class:`DeviceInfo`; a ProtocolError when it
        speaks another protocol version (a v1 device is recognised by a v1 HELLO probe)."""
        try:
            data = self._call(Cmd.HELLO)
        except DeviceTimeout:
            if self.link.probe_v1():
                raise ProtocolError(f"the device speaks protocol v1 (firmware from an older "
                                    f"sensorbudget); this host speaks v{VERSION}: regenerate "
                                    f"and flash the firmware (sensorbudget firmware)") from None
            raise
        info = parse_hello(data)
        if info.version != VERSION:
            raise ProtocolError(f"the device speaks protocol v{info.version}; this host speaks "
                                f"v{VERSION}: use matching sensorbudget and firmware versions")
        if info.multi_rate:
            info = dataclasses.replace(info, sensors=parse_sensors(self._call(Cmd.SENSORS)))
        self.info = info
        return self.info

    def reset(self) -> None:
        self._call(Cmd.RESET)

    def push_payload(self, samples) -> bytes:
        """The PUSH_SAMPLES payload of ``samples`` (n x channels), packed with numpy."""
        info = self._need_info()
        samples = np.ascontiguousarray(samples, dtype=info.sample_dtype)
        if samples.ndim != 2 or samples.shape[1] != info.channels:
            raise DeviceError(f"samples have shape {samples.shape}; the device takes "
                              f"{info.channels} channel(s)")
        if len(samples) > info.max_push(self.max_request):
            raise DeviceError(f"{len(samples)} samples exceed one request "
                              f"({info.max_push(self.max_request)})")
        return struct.pack("<H", len(samples)) + samples.tobytes()

    def events_payload(self, events) -> bytes:
        """The PUSH_EVENTS payload of ``events`` = (count, the events' bytes: per event its
        sensor index u8 and that sensor's values in the wire format, in time order)."""
        count, body = events
        if 2 + len(body) > self.max_request:
            raise DeviceError(f"{count} events ({2 + len(body)} bytes) exceed one request "
                              f"({self.max_request} bytes)")
        return struct.pack("<H", count) + bytes(body)

    def decode_push(self, data: bytes) -> list:
        """[(window, scores)] of a PUSH_SAMPLES answer."""
        info = self._need_info()
        return decode_predictions(data, info.t, info.score_dtype)

    def push(self, samples) -> list:
        """Push ``samples`` (n x channels); returns [(window, scores)] of completed windows."""
        return self.decode_push(self._call(Cmd.PUSH_SAMPLES, self.push_payload(samples)))

    def exchange(self, requests, depth: int = 1):
        """Pipelined PUSH_SAMPLES, STATS and PREDICT: ``requests`` yields ``("push", samples)``,
        ``("stats", None)`` or ``("predict", inputs)``; yields, in the same order, [(window,
        scores)] of a push, (unit, extractors, model, pushes) of a STATS and the scores of a
        PREDICT, with up to ``depth`` requests in flight
        (:meth:`~sensorbudget.device_sim.link.Link.pipeline`; its errors end the iteration).
        ``last_retried`` tells whether the answer just yielded needed retransmissions."""
        kinds = deque()
        encode = {"push": lambda x: (Cmd.PUSH_SAMPLES, self.push_payload(x)),
                  "events": lambda x: (Cmd.PUSH_EVENTS, self.events_payload(x)),
                  "stats": lambda x: (Cmd.STATS, b""),
                  "predict": lambda x: (Cmd.PREDICT, self.predict_payload(x))}
        decode = {"push": self.decode_push, "events": self.decode_push, "stats": decode_stats,
                  "predict": self.decode_scores}

        def frames():
            for kind, data in requests:
                kinds.append(kind)
                yield encode[kind](data)

        for reply in self.link.pipeline(frames(), depth):
            self.last_retried = reply.retried
            yield decode[kinds.popleft()](reply.payload)

    def predict_payload(self, inputs) -> bytes:
        info = self._need_info()
        x = np.ascontiguousarray(inputs, dtype=INPUT_DTYPES[info.numeric]).reshape(-1)
        if x.size != info.k:
            raise DeviceError(f"{x.size} inputs given; the model takes {info.k}")
        return x.tobytes()

    def decode_scores(self, data: bytes) -> np.ndarray:
        """The t scores of a PREDICT answer."""
        info = self._need_info()
        if len(data) != info.t * info.score_dtype.itemsize:
            raise ProtocolError(f"PREDICT answer of {len(data)} bytes; expected {info.t} scores")
        return np.frombuffer(data, info.score_dtype).copy()

    def predict(self, inputs) -> np.ndarray:
        return self.decode_scores(self._call(Cmd.PREDICT, self.predict_payload(inputs)))

    def bench(self, reps: int, part: str) -> tuple:
        """(unit name, total) of ``reps`` runs of the model or the extractors on the device."""
        code = {"model": 0, "extractors": 1}[part]
        data = self._call(Cmd.BENCH, struct.pack("<IB", reps, code))
        if len(data) != 9:
            raise ProtocolError(f"BENCH answer of {len(data)} bytes; expected 9")
        unit, total = struct.unpack("<BQ", data)
        return _unit_name(unit), total

    def stats(self) -> tuple:
        """(unit name, extractors, model, pushes) cost of the last window on the device
        (:func:`decode_stats`)."""
        return decode_stats(self._call(Cmd.STATS))

    def quit(self, code: int = 0) -> None:
        self._call(Cmd.QUIT, bytes([code & 0xFF]))

    def _need_info(self) -> DeviceInfo:
        if self.info is None:
            self.hello()
        return self.info


_STATS = struct.Struct("<BIII")
_STATS_BEFORE_PUSHES = struct.Struct("<BII")


def decode_stats(data: bytes) -> tuple:
    """(unit name, extractors, model, pushes) of a STATS answer: the window pass of the last
    ready window, its model evaluation and the pushes that stored its new rows (PROTOCOL.md);
    pushes is None in the 9-byte answer of an image built before it was measured."""
    if len(data) == _STATS.size:
        unit, ext, model, pushes = _STATS.unpack(data)
    elif len(data) == _STATS_BEFORE_PUSHES.size:
        (unit, ext, model), pushes = _STATS_BEFORE_PUSHES.unpack(data), None
    else:
        raise ProtocolError(f"STATS answer of {len(data)} bytes; expected {_STATS.size} "
                            f"(or {_STATS_BEFORE_PUSHES.size} from an image built before the "
                            f"pushes were measured)")
    return _unit_name(unit), ext, model, pushes


def encode_stats(unit: int, extractors: int, model: int, pushes: int | None) -> bytes:
    """The STATS answer (each figure saturated at 2^32 - 1); ``pushes=None``: the 9-byte
    answer of an image built before the pushes were measured."""
    top = (1 << 32) - 1
    figures = [min(top, max(0, int(v))) for v in (extractors, model)]
    if pushes is None:
        return _STATS_BEFORE_PUSHES.pack(int(unit), *figures)
    return _STATS.pack(int(unit), *figures, min(top, max(0, int(pushes))))


def _unit_name(code: int) -> str:
    try:
        return Unit(code).name.lower()
    except ValueError:
        raise ProtocolError(f"unknown cost unit code {code}") from None
