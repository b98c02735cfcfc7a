"""The framed serial protocol between a host and a sensorbudget firmware (Python side), v2.

A frame's *body* is (all integers little-endian)::

    version:u8 (=2) | seq:u16 | cmd:u8 | payload (0..1024 bytes) | crc:u32

``crc`` is CRC-32 (IEEE 802.3, reflected, poly 0xEDB88320, init and xorout 0xFFFFFFFF; the
``zlib.crc32`` of the bytes from ``version`` through the end of the payload). On the wire a body
is COBS-encoded (no 0x00 byte inside) between two 0x00 delimiters::

    0x00 | COBS(body) | 0x00

so a receiver needs no length field: it splits the byte stream at 0x00, ignores empty pieces,
and drops (counting them) pieces that are not valid COBS, are shorter than 8 or longer than
:data:`MAX_BODY` bytes, fail the CRC, or carry another protocol version. A corrupted byte can
therefore never make a receiver wait for a phantom frame, and the next delimiter always
resynchronises it.

A response echoes the request's ``seq`` and has ``cmd | 0x80``; an error response has cmd
``ERROR`` (0x7F) and payload ``[request cmd, error code]`` (``STALE`` adds the device's last
executed seq, u16). Exactly-once execution: the device remembers the seq and CRC of the last
request it executed and its response. A request with that seq and CRC (a retry, or a late
duplicate of it) gets the cached response again; a request whose seq is not newer (serial
number arithmetic modulo 2^16: ``0 < (seq - last) mod 2^16 < 2^15``) is refused with ``STALE``
and not executed; only a newer one is executed. Commands and payloads: :class:`Cmd` and
``firmware_gen``'s PROTOCOL.md.
"""

from __future__ import annotations

import enum
import struct
import zlib

from .errors import DeviceError

VERSION = 2
DELIM = b"\x00"
HEADER = struct.Struct("<BHB")          # version, seq, cmd
CRC = struct.Struct("<I")
OVERHEAD = HEADER.size + CRC.size       # 8 bytes of body besides the payload
MAX_PAYLOAD = 1024
MAX_BODY = OVERHEAD + MAX_PAYLOAD
MAX_FRAME = MAX_BODY + MAX_BODY // 254 + 1 + 2      # COBS codes + two delimiters
SEQ_MOD = 1 << 16


class Cmd(enum.IntEnum):
    """Command codes (responses add 0x80)."""

    HELLO = 0x01          # -> version u8, numeric u8, k u16, t u16, channels u16, window u16, hop u16, name
    PUSH_SAMPLES = 0x02   # count u16, count x channels values -> count u16, per prediction: window u32, t scores
    PREDICT = 0x03        # k feature values -> t scores
    BENCH = 0x04          # reps u32, part u8 (0 model, 1 extractors) -> unit u8, total u64
    STATS = 0x05          # -> unit u8, extractors u32, model u32 (cost of the last window / prediction)
    RESET = 0x06          # clear the streaming extractor state (new recording) -> empty
    PUSH_EVENTS = 0x07    # multi-rate: count u16, count x (sensor u8, values) -> as PUSH_SAMPLES
    SENSORS = 0x08        # multi-rate: -> n u8, n x (channels u8, window u16, hop u16, rate f32)
    QUIT = 0x7E           # exit code u8 -> empty response, then the device exits with that code
    ERROR = 0x7F          # payload: request cmd u8, error code u8 (STALE: + last seq u16)


class Err(enum.IntEnum):
    """Error codes in an ERROR response."""

    UNKNOWN_COMMAND = 1
    BAD_LENGTH = 2
    BAD_VALUE = 3
    BAD_VERSION = 4       # a valid frame of another protocol version (not executed)
    STALE = 5             # seq not newer than the last executed one (not executed)


class Unit(enum.IntEnum):
    """Units of BENCH/STATS figures."""

    NANOSECONDS = 0       # host: a monotonic clock
    CYCLES = 1            # AVR Timer1 at clk/1
    INSTRUCTIONS = 2      # Cortex-M on QEMU -icount shift=0 (SysTick ticks x 40)


class ProtocolError(DeviceError):
    """A malformed frame or an unexpected response."""


def crc32(data: bytes) -> int:
    """CRC-32/ISO-HDLC of ``data`` (check value of b"123456789" is 0xCBF43926)."""
    return zlib.crc32(data) & 0xFFFFFFFF


def cobs_encode(data: bytes) -> bytes:
    """Consistent overhead byte stuffing: ``data`` without any 0x00 byte (canonical form: a run
    of 254 non-zero bytes is followed by a new code byte, also at the end)."""
    out = bytearray()
    for piece in data.split(b"\x00"):
        while len(piece) >= 254:
            out.append(0xFF)
            out += piece[:254]
            piece = piece[254:]
        out.append(len(piece) + 1)
        out += piece
    return bytes(out)


def cobs_decode(data: bytes):
    """Inverse of :func:`cobs_encode`, or None when ``data`` is not a valid COBS block."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        code = data[i]
        end = i + code
        if code == 0 or end > n:
            return None
        out += data[i + 1:end]
        i = end
        if code < 0xFF and i < n:
            out.append(0)
    return bytes(out)


def encode_body(seq: int, cmd: int, payload: bytes = b"", version: int = VERSION) -> bytes:
    """The unstuffed body of a frame (raises ProtocolError if the payload is too long)."""
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    head = HEADER.pack(version & 0xFF, seq % SEQ_MOD, cmd & 0xFF) + payload
    return head + CRC.pack(crc32(head))


def encode_frame(seq: int, cmd: int, payload: bytes = b"", version: int = VERSION) -> bytes:
    """One frame on the wire: 0x00, COBS(body), 0x00."""
    return DELIM + cobs_encode(encode_body(seq, cmd, payload, version)) + DELIM


class FrameDecoder:
    """Incremental decoder: ``feed(bytes)`` returns the complete valid frames as
    ``(seq, cmd, payload)`` tuples. Bad frames are counted in ``dropped`` and skipped; valid
    frames of another protocol version are counted in ``dropped`` and listed (seq, cmd,
    version) in ``foreign``, where a device finds them to refuse with ``BAD_VERSION``.
    :meth:`feed_crc` also returns each frame's CRC (a device's retry key)."""

    def __init__(self):
        self.buffer = bytearray()
        self.dropped = 0
        self.foreign = []
        self._overlong = False

    def feed(self, data: bytes) -> list:
        return [frame[:3] for frame in self.feed_crc(data)]

    def feed_crc(self, data: bytes) -> list:
        frames = []
        self.buffer += data
        while True:
            end = self.buffer.find(0)
            if end < 0:
                if len(self.buffer) > MAX_FRAME:     # no delimiter in sight: drop what we have
                    self._overlong = True
                    self.buffer.clear()
                return frames
            raw = bytes(self.buffer[:end])
            del self.buffer[:end + 1]
            if self._overlong:
                self._overlong = False
                self.dropped += 1
                continue
            if raw:
                frame = self._frame(raw)
                if frame is not None:
                    frames.append(frame)

    def _frame(self, raw: bytes):
        body = cobs_decode(raw) if len(raw) <= MAX_FRAME else None
        if body is None or not OVERHEAD <= len(body) <= MAX_BODY:
            self.dropped += 1
            return None
        (crc,) = CRC.unpack_from(body, len(body) - 4)
        if crc32(body[:-4]) != crc:
            self.dropped += 1
            return None
        version, seq, cmd = HEADER.unpack_from(body)
        if version != VERSION:
            self.dropped += 1
            self.foreign.append((seq, cmd, version))
            return None
        return seq, cmd, body[HEADER.size:-4], crc


def seq_is_newer(seq: int, last: int) -> bool:
    """Serial number arithmetic modulo 2^16: ``seq`` comes after ``last``."""
    return 0 < (seq - last) % SEQ_MOD < SEQ_MOD // 2


def find_v1_frame(data: bytes):
    """(seq, cmd, payload) of the first valid protocol v1 frame in ``data`` (0xA5 0x5A, len u16,
    seq u8, cmd u8, payload, CRC-16/CCITT-FALSE), or None: how a host recognises old firmware."""
    start = data.find(b"\xA5\x5A")
    while start >= 0:
        if start + 8 <= len(data):
            (length,) = struct.unpack_from("<H", data, start + 2)
            end = start + 4 + length
            if 2 <= length <= 1026 and end + 2 <= len(data) and \
                    _crc16(data[start + 2:end]) == struct.unpack_from("<H", data, end)[0]:
                return data[start + 4], data[start + 5], bytes(data[start + 6:end])
        start = data.find(b"\xA5\x5A", start + 1)
    return None


def v1_hello_probe() -> bytes:
    """A protocol v1 HELLO request (seq 0) after 1032 zero bytes (they complete any phantom v1
    frame a stray 0xA5 0x5A began), then a delimiter that ends it for a v2 device."""
    head = struct.pack("<HBB", 2, 0, Cmd.HELLO)
    return bytes(1032) + b"\xA5\x5A" + head + struct.pack("<H", _crc16(head)) + DELIM


def _crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (protocol v1's check), only to recognise v1 firmware."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc
