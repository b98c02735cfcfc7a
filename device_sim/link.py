"""The host side of the framed protocol (v2): requests with timeouts, retries and accounting.

A :class:`Link` talks to one device over any pyserial-like ``port`` (``write(bytes)``,
``read(n)`` that returns after at most ``port.timeout`` seconds, optional ``in_waiting``).
Every request gets the next 16-bit sequence number; when no valid response with that number
arrives within ``timeout`` seconds, the *same* frame (same seq, same CRC) is sent again, at most
``retries`` times. The device executes each seq at most once (see :mod:`sensorbudget.device_sim.protocol`):
it answers a repeat from its cache and refuses an older seq, so neither a retry nor a late
duplicate or reordered copy of an earlier request is executed twice. A request that stays
unanswered raises :class:`~sensorbudget.device_sim.errors.DeviceTimeout`; the total time of one request is
bounded by ``(retries + 1) * timeout`` plus one poll interval, so the host never hangs. Frames
begin and end with a delimiter, so line noise before a frame cannot swallow it.

Handshake: the first HELLO of a link may meet a device that executed higher seqs for an earlier
host; the device refuses it as ``STALE`` with its last seq, and the link continues after it
(only for HELLO; a STALE answer to anything else means another host is talking to the device).

Accounting (:class:`LinkStats`): each request ends as ``delivered`` (answered at the first
attempt), ``retried`` (answered after one or more retransmissions), ``lost``, or (pipelined
requests only, :meth:`Link.pipeline`) ``abandoned``: sent after a request that failed, or still
in flight when the caller stopped, its answer never used. Frames that fail
the COBS, length or CRC checks are counted in ``dropped_frames``, valid frames with another seq
(late duplicates of earlier answers) in ``stale_frames``.

Time comes from the injected ``clock`` (``time.monotonic`` by default), so tests drive it with a
fake clock and never depend on wall-clock time.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import asdict, dataclass

from .errors import DeviceError, DeviceTimeout
from .protocol import (
    SEQ_MOD,
    Cmd,
    Err,
    FrameDecoder,
    ProtocolError,
    encode_frame,
    find_v1_frame,
    v1_hello_probe,
)

RESPONSE = 0x80
RAW_TAIL = 4096           # received bytes kept to recognise a protocol v1 device


class Overtaken(DeviceTimeout):
    """A pipelined request refused as ``STALE`` because a later request of the same link ran
    first: its frame was lost or garbled on the way (not executed), or its answer was (executed,
    and the retry meets a device that caches only its last answer); the device may have run
    the later ones without it. Not a sign of a dead device: the caller resynchronises."""


@dataclass
class LinkStats:
    """Request outcomes and frame-level counters of one :class:`Link`."""

    requests: int = 0
    delivered: int = 0
    retried: int = 0
    lost: int = 0
    retransmissions: int = 0
    abandoned: int = 0          # pipelined requests sent after one that failed (never used)
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
    first_seq : int
        Sequence number of the first request (modulo 2^16).
    """

    def __init__(self, port, *, timeout: float = 0.5, retries: int = 4, clock=time.monotonic,
                 poll: float = 0.01, first_seq: int = 0):
        if timeout <= 0 or retries < 0:
            raise DeviceError(f"timeout={timeout} must be > 0 and retries={retries} >= 0")
        self.port = port
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.clock = clock
        self.decoder = FrameDecoder()
        self.stats = LinkStats()
        self._seq = first_seq % SEQ_MOD
        self._raw = bytearray()
        if hasattr(port, "timeout"):
            port.timeout = poll

    def _next_seq(self) -> int:
        seq = self._seq
        self._seq = (self._seq + 1) % SEQ_MOD
        return seq

    def _read_some(self) -> bytes:
        waiting = getattr(self.port, "in_waiting", 0) or 0
        data = self.port.read(max(1, waiting))
        self.stats.bytes_received += len(data)
        self._raw += data
        del self._raw[:-RAW_TAIL]
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

    def request(self, cmd: int, payload: bytes = b"") -> Reply:
        """Send ``cmd`` with ``payload`` and return the device's :class:`Reply`.

        Raises :class:`DeviceTimeout` when every attempt goes unanswered and
        :class:`ProtocolError` when the device answers with an ERROR frame.
        """
        self.stats.requests += 1
        seq = self._next_seq()
        answer = self._exchange(seq, cmd, payload)
        if answer is not None and cmd == Cmd.HELLO and answer[1] == Cmd.ERROR \
                and _stale_last(answer[2]) is not None:
            self._seq = (_stale_last(answer[2]) + 1) % SEQ_MOD     # continue after a former host
            seq = self._next_seq()
            answer = self._exchange(seq, cmd, payload)
        if answer is None:
            self.stats.lost += 1
            raise DeviceTimeout(f"no answer to {_command_name(cmd)} (seq {seq}) after "
                                f"{self.retries + 1} attempt(s) of {self.timeout:g} s each")
        attempts, fcmd, data = answer
        if attempts == 1:
            self.stats.delivered += 1
        else:
            self.stats.retried += 1
        if fcmd == Cmd.ERROR:
            raise ProtocolError(_error_text(cmd, seq, data))
        return Reply(data, attempts)

    def _exchange(self, seq: int, cmd: int, payload: bytes):
        """(attempts, cmd, payload) of the answer to ``seq``, or None after every attempt."""
        frame = encode_frame(seq, cmd, payload)
        for attempt in range(1, self.retries + 2):
            if attempt > 1:
                self.stats.retransmissions += 1
            self.port.write(frame)
            self.stats.bytes_sent += len(frame)
            answer = self._await(seq, cmd, self.clock() + self.timeout)
            if answer is not None:
                return (attempt, *answer)
        return None

    def pipeline(self, requests, depth: int = 1):
        """Yield the :class:`Reply` of each ``(cmd, payload)`` of ``requests``, in order, with
        up to ``depth`` requests in flight (sent in one ``write``, topped up to ``depth`` once
        half of them are answered, so a write carries several frames; answers read in chunks).

        Only the oldest unanswered request is retransmitted (same frame) when its answer does
        not come within ``timeout`` of its sending (or of the answer before it, if later). The
        device executes a seq only if it is newer than the last it executed, so a request whose
        frame was lost while later ones ran is refused as ``STALE``, never executed late: that
        request and every later one count as failed. The iteration then raises
        :class:`DeviceTimeout` (lost, or refused as stale after a later request of this link
        ran) or :class:`ProtocolError` (an ERROR answer), and the answers of the requests after
        it are never yielded: they may come from a device that missed a request, so the caller
        RESETs it (a newer seq than all of them) before it trusts the device state again.
        """
        if depth < 1:
            raise DeviceError(f"depth={depth} must be >= 1")
        pending = deque()           # [seq, cmd, frame, attempts, deadline], oldest first
        try:
            yield from self._pipeline(iter(requests), depth, pending)
        finally:
            self.stats.abandoned += len(pending)    # after a failure, or the caller stopped

    def _pipeline(self, requests, depth: int, pending: deque):
        answers = {}                # seq -> (cmd, payload) of answered pending requests
        more = True
        low = depth // 2            # top up to depth once no more than this are in flight
        while True:
            batch = []
            while more and len(pending) < depth and (batch or len(pending) <= low):
                try:
                    cmd, payload = next(requests)
                except StopIteration:
                    more = False
                    break
                seq = self._next_seq()
                self.stats.requests += 1
                frame = encode_frame(seq, cmd, payload)
                pending.append([seq, cmd, frame, 1, self.clock() + self.timeout])
                batch.append(frame)
            if batch:
                self._write(b"".join(batch))
            if not pending:
                return
            head = pending[0]
            if head[0] not in answers:
                self._collect(pending, answers)
            if head[0] not in answers:
                if self.clock() < head[4]:
                    continue
                if head[3] > self.retries:
                    self.stats.lost += 1
                    pending.popleft()
                    raise DeviceTimeout(f"no answer to {_command_name(head[1])} (seq {head[0]}) "
                                        f"after {head[3]} attempt(s) of {self.timeout:g} s each")
                head[3] += 1
                head[4] = self.clock() + self.timeout
                self.stats.retransmissions += 1
                self._write(head[2])
                continue
            seq, cmd, _, attempts, _ = pending.popleft()
            fcmd, data = answers.pop(seq)
            if pending:
                pending[0][4] = max(pending[0][4], self.clock() + self.timeout)
            if fcmd == Cmd.ERROR:
                last = _stale_last(data)
                if last is not None and any(p[0] == last for p in pending):
                    self.stats.lost += 1    # a later request of ours ran first
                    raise Overtaken(f"{_command_name(cmd)} (seq {seq}) was refused as "
                                        f"stale: the device ran seq {last} before it")
                self.stats.delivered += 1
                raise ProtocolError(_error_text(cmd, seq, data))
            if attempts == 1:
                self.stats.delivered += 1
            else:
                self.stats.retried += 1
            yield Reply(data, attempts)

    def _write(self, data: bytes) -> None:
        self.port.write(data)
        self.stats.bytes_sent += len(data)

    def _collect(self, pending, answers) -> None:
        """Read what has arrived (one poll at most) and keep the answers of ``pending``."""
        wanted = {p[0]: p[1] for p in pending}
        before = self.decoder.dropped
        frames = self.decoder.feed(self._read_some())
        self.stats.dropped_frames += self.decoder.dropped - before
        for fseq, fcmd, payload in frames:
            cmd = wanted.get(fseq)
            if cmd is not None and fcmd in (cmd | RESPONSE, Cmd.ERROR) and fseq not in answers:
                answers[fseq] = (fcmd, payload)
            else:
                self.stats.stale_frames += 1

    def probe_v1(self) -> bool:
        """Whether the device answers a protocol v1 HELLO (old firmware); waits one timeout."""
        self.port.write(v1_hello_probe())
        deadline = self.clock() + self.timeout
        while find_v1_frame(bytes(self._raw)) is None and self.clock() < deadline:
            self._read_some()
        return find_v1_frame(bytes(self._raw)) is not None

    def close(self) -> None:
        close = getattr(self.port, "close", None)
        if close is not None:
            close()


def _stale_last(data: bytes):
    """The device's last executed seq in a STALE error payload, else None."""
    if len(data) >= 4 and data[1] == Err.STALE:
        return int.from_bytes(data[2:4], "little")
    return None


def _error_text(cmd: int, seq: int, data: bytes) -> str:
    if len(data) >= 2:
        try:
            code = Err(data[1]).name
        except ValueError:
            code = f"code {data[1]}"
        last = _stale_last(data)
        if last is not None:
            return (f"device refused {_command_name(cmd)} (seq {seq}) as stale: it has executed "
                    f"seq {last}; is another host talking to it?")
        return f"device rejected {_command_name(cmd)}: {code}"
    return f"device rejected {_command_name(cmd)} (malformed ERROR payload {data.hex()})"
