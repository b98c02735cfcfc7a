"""The framed serial protocol between a host and a sensorbudget firmware (Python side).

Frame (all integers little-endian)::

    0xA5 0x5A | len:u16 | seq:u8 | cmd:u8 | payload: len-2 bytes | crc:u16

``len`` counts ``seq``, ``cmd`` and the payload (2 <= len <= MAX_BODY). ``crc`` is
CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, xorout 0) over the bytes from
``len`` through the end of the payload. A receiver hunts for the sync pair, drops frames whose
length is out of range or whose CRC fails (counting them), and resynchronises on the next sync.

A response echoes the request's ``seq`` and has ``cmd | 0x80``; an error response has cmd
``ERROR`` (0x7F) and payload ``[request cmd, error code]``. The device remembers the last
``seq`` it executed and its response: a request repeating that ``seq`` (a host retry after a
lost response) gets the cached response again without being executed twice, so retries never
push the same samples twice. Commands and payloads: see :class:`Cmd` and ``firmware_gen``'s
PROTOCOL.md. Values are float32 for float32 firmware, int16 (Q15) or int32 (Q31) inputs and
int32 (Q15) or int64 (Q31) scores for fixed-point firmware.
"""

from __future__ import annotations

import enum
import struct

from .errors import DeviceError

SYNC = b"\xA5\x5A"
MAX_BODY = 2 + 1024          # seq + cmd + payload
HEADER = struct.Struct("<2sHBB")


class Cmd(enum.IntEnum):
    """Command codes (responses add 0x80)."""

    HELLO = 0x01          # -> version u8, numeric u8, k u16, t u16, channels u16, window u16, hop u16, name
    PUSH_SAMPLES = 0x02   # count u16, count x channels values -> count u16, per prediction: window u32, t scores
    PREDICT = 0x03        # k feature values -> t scores
    BENCH = 0x04          # reps u32, part u8 (0 model, 1 extractors) -> unit u8, total u64
    STATS = 0x05          # -> unit u8, extractors u32, model u32 (cost of the last window / prediction)
    RESET = 0x06          # clear the streaming extractor state (new recording) -> empty
    QUIT = 0x7E           # exit code u8 -> empty response, then the device exits with that code
    ERROR = 0x7F          # payload: request cmd u8, error code u8


class Err(enum.IntEnum):
    """Error codes in an ERROR response."""

    UNKNOWN_COMMAND = 1
    BAD_LENGTH = 2
    BAD_VALUE = 3


class Unit(enum.IntEnum):
    """Units of BENCH/STATS figures."""

    NANOSECONDS = 0       # host: a monotonic clock
    CYCLES = 1            # AVR Timer1 at clk/1
    INSTRUCTIONS = 2      # Cortex-M on QEMU -icount shift=0 (SysTick ticks x 40)


class ProtocolError(DeviceError):
    """A malformed frame or an unexpected response."""


def crc16(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (check value of b"123456789" is 0x29B1)."""
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def encode_frame(seq: int, cmd: int, payload: bytes = b"") -> bytes:
    """One frame carrying ``payload`` (raises ProtocolError if it is too long)."""
    body_len = 2 + len(payload)
    if body_len > MAX_BODY:
        raise ProtocolError(f"payload of {len(payload)} bytes exceeds {MAX_BODY - 2}")
    head = HEADER.pack(SYNC, body_len, seq & 0xFF, cmd & 0xFF)
    crc = crc16(head[2:] + payload)
    return head + payload + struct.pack("<H", crc)


class FrameDecoder:
    """Incremental decoder: ``feed(bytes)`` returns the complete valid frames as
    ``(seq, cmd, payload)`` tuples; bad frames are counted in ``dropped`` and skipped."""

    def __init__(self):
        self.buffer = bytearray()
        self.dropped = 0

    def feed(self, data: bytes) -> list:
        self.buffer += data
        frames = []
        while True:
            start = self.buffer.find(SYNC)
            if start < 0:
                # keep a trailing 0xA5 that may begin the next sync pair
                del self.buffer[:max(0, len(self.buffer) - 1)]
                return frames
            del self.buffer[:start]
            if len(self.buffer) < HEADER.size:
                return frames
            _, body_len, seq, cmd = HEADER.unpack_from(self.buffer)
            if not 2 <= body_len <= MAX_BODY:
                self.dropped += 1
                del self.buffer[:1]
                continue
            total = 4 + body_len + 2
            if len(self.buffer) < total:
                return frames
            (crc,) = struct.unpack_from("<H", self.buffer, 4 + body_len)
            if crc16(bytes(self.buffer[2:4 + body_len])) != crc:
                self.dropped += 1
                del self.buffer[:1]
                continue
            frames.append((seq, cmd, bytes(self.buffer[6:4 + body_len])))
            del self.buffer[:total]
