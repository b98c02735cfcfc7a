"""The host side of the framed protocol: requests with timeouts, retries and accounting.

A :class:`Link` talks to one device over any pyserial-like ``port`` (``write(bytes)``,
``read(n)`` that returns after at most ``port.timeout`` seconds, optional ``in_waiting``).
Every request gets the next sequence number; when no valid response with that number arrives
within ``timeout`` seconds, the *same* frame (same seq) is sent again, at most ``retries`` times.
The device answers a repeated seq from its cache without executing it twice (see
:mod:`device_sim.protocol`), so a retry after a lost response is safe. A request that stays
unanswered raises :class:`~device_sim.errors.DeviceTimeout`; the total time of one request is
bounded by ``(retries + 1) * timeout`` plus one poll interval, so the host never hangs.
Before a retransmission the link sends ``flush`` zero bytes, which complete any phantom frame a
corrupted length field left the device waiting for.

Accounting (:class:`LinkStats`): each request ends as ``delivered`` (answered at the first
attempt), ``retried`` (answered after one or more retransmissions) or ``lost``. Frames that fail
the CRC or length checks are counted in ``dropped_frames``, valid frames with another seq (late
duplicates of earlier answers) in ``stale_frames``.

Time comes from the injected ``clock`` (``time.monotonic`` by default), so tests drive it with a
fake clock and never depend on wall-clock time.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from .errors import DeviceError, DeviceTimeout
from .protocol import MAX_BODY, Cmd, Err, FrameDecoder, ProtocolError, encode_frame

RESPONSE = 0x80
FLUSH = MAX_BODY + 6      # longest frame: sync 2 + len 2 + body + crc 2


@dataclass
class LinkStats:
    """Request outcomes and frame-level counters of one :class:`Link`."""

    requests: int = 0
    delivered: int = 0
    retried: int = 0
    lost: int = 0
    retransmissions: int = 0
    dropped_frames: int = 0
    stale_frames: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Reply:
    """A response: its payload and how many times the request was sent (1 = no retry)."""

    payload: bytes
    attempts: int

    @property
    def retried(self) -> bool:
        return self.attempts > 1


def _command_name(cmd: int) -> str:
    try:
        return Cmd(cmd).name
    except ValueError:
        return f"0x{cmd:02X}"


class Link:
    """Request/response over ``port`` with per-attempt ``timeout`` (s) and ``retries``.

    Parameters
    ----------
    port : pyserial-like
        Needs ``write`` and ``read``; ``timeout`` is set to ``poll`` when the attribute exists.
    timeout : float
        Seconds to wait for the answer of one attempt.
    retries : int
        Retransmissions of an unanswered request (same seq) before it is declared lost.
    clock : callable
        Monotonic seconds; injected so tests can use a fake clock.
    poll : float
        Read timeout of the port (upper bound of one ``read`` call).
    flush : int
        Zero bytes sent before each retransmission (see :meth:`_resync`); 0 disables.
    """

    def __init__(self, port, *, timeout: float = 0.5, retries: int = 4, clock=time.monotonic,
                 poll: float = 0.01, first_seq: int = 0, flush: int = FLUSH):
        if timeout <= 0 or retries < 0:
            raise DeviceError(f"timeout={timeout} must be > 0 and retries={retries} >= 0")
        self.port = port
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.clock = clock
        self.flush = int(flush)
        self.decoder = FrameDecoder()
        self.stats = LinkStats()
        self._seq = first_seq & 0xFF
        if hasattr(port, "timeout"):
            port.timeout = poll

    def _next_seq(self) -> int:
        seq = self._seq
        self._seq = (self._seq + 1) & 0xFF
        return seq

    def _read_some(self) -> bytes:
        waiting = getattr(self.port, "in_waiting", 0) or 0
        data = self.port.read(max(1, waiting))
        self.stats.bytes_received += len(data)
        return data

    def _await(self, seq: int, cmd: int, deadline: float):
        """The (cmd, payload) answering ``seq``, or None when ``deadline`` passes."""
        while True:
            before = self.decoder.dropped
            frames = self.decoder.feed(self._read_some())
            self.stats.dropped_frames += self.decoder.dropped - before
            for fseq, fcmd, payload in frames:
                if fseq == seq and fcmd in (cmd | RESPONSE, Cmd.ERROR):
                    return fcmd, payload
                self.stats.stale_frames += 1
            if self.clock() >= deadline:
                return None

    def _resync(self) -> None:
        """Before a retransmission: forget partial input, and flush the device's decoder.

        A corrupted length field makes a receiver wait for up to MAX_BODY bytes before its CRC
        check fails; ``flush`` zero bytes (which hold no sync pair) complete such a phantom
        frame so the retransmitted one is seen at once.
        """
        self.decoder.buffer.clear()
        if self.flush:
            self.port.write(bytes(self.flush))
            self.stats.bytes_sent += self.flush

    def request(self, cmd: int, payload: bytes = b"") -> Reply:
        """Send ``cmd`` with ``payload`` and return the device's :class:`Reply`.

        Raises :class:`DeviceTimeout` when every attempt goes unanswered and
        :class:`ProtocolError` when the device answers with an ERROR frame.
        """
        seq = self._next_seq()
        frame = encode_frame(seq, cmd, payload)
        self.stats.requests += 1
        for attempt in range(1, self.retries + 2):
            if attempt > 1:
                self.stats.retransmissions += 1
                self._resync()
            self.port.write(frame)
            self.stats.bytes_sent += len(frame)
            answer = self._await(seq, cmd, self.clock() + self.timeout)
            if answer is None:
                continue
            if attempt == 1:
                self.stats.delivered += 1
            else:
                self.stats.retried += 1
            fcmd, data = answer
            if fcmd == Cmd.ERROR:
                raise ProtocolError(_error_text(cmd, data))
            return Reply(data, attempt)
        self.stats.lost += 1
        raise DeviceTimeout(f"no answer to {_command_name(cmd)} (seq {seq}) after "
                            f"{self.retries + 1} attempt(s) of {self.timeout:g} s each")

    def close(self) -> None:
        close = getattr(self.port, "close", None)
        if close is not None:
            close()


def _error_text(cmd: int, data: bytes) -> str:
    if len(data) >= 2:
        try:
            code = Err(data[1]).name
        except ValueError:
            code = f"code {data[1]}"
        return f"device rejected {_command_name(cmd)}: {code}"
    return f"device rejected {_command_name(cmd)} (malformed ERROR payload {data.hex()})"
