"""Link: retries with the same seq, bounded time, accounting, errors; all on a fake clock."""

import pytest

from device_sim.errors import DeviceTimeout
from device_sim.link import FLUSH, Link
from device_sim.protocol import Cmd, Err, FrameDecoder, ProtocolError, encode_frame
from device_sim.transports import FakeClock, FaultyTransport, MemoryTransport


class EchoDevice:
    """Answers cmd | 0x80 with the request payload; ``mute`` drops the next n answers (after
    executing), ``deaf`` ignores the next n requests; repeats of the last frame are cached."""

    def __init__(self, mute=0, deaf=0):
        self.decoder = FrameDecoder()
        self.mute, self.deaf = mute, deaf
        self.executed = []
        self.last = None

    def feed(self, data):
        out = b""
        for seq, cmd, payload in self.decoder.feed(data):
            if self.deaf:
                self.deaf -= 1
                continue
            key = (seq, cmd, payload)
            if self.last is None or self.last[0] != key:
                if cmd == 0x70:
                    answer = encode_frame(seq, Cmd.ERROR, bytes([cmd, Err.BAD_VALUE]))
                else:
                    answer = encode_frame(seq, cmd | 0x80, payload)
                self.executed.append(key)
                self.last = (key, answer)
            if self.mute:
                self.mute -= 1
                continue
            out += self.last[1]
        return out


def make(device, **kw):
    clock = FakeClock()
    port = MemoryTransport(device, sleep=clock.advance)
    return Link(port, clock=clock, **kw), clock, port


def test_delivered_at_first_attempt():
    dev = EchoDevice()
    link, clock, _ = make(dev)
    reply = link.request(Cmd.HELLO, b"abc")
    assert reply.payload == b"abc" and reply.attempts == 1 and not reply.retried
    assert link.stats.delivered == 1 and link.stats.retried == 0 and clock() == 0.0


def test_lost_answer_is_retried_with_the_same_seq_and_not_executed_twice():
    dev = EchoDevice(mute=2)
    link, clock, _ = make(dev, timeout=0.5, retries=4)
    reply = link.request(Cmd.PUSH_SAMPLES, b"\x01\x00xyz")
    assert reply.attempts == 3 and reply.payload == b"\x01\x00xyz"
    assert len(dev.executed) == 1                       # the device cached the answer
    assert link.stats.as_dict()["retried"] == 1 and link.stats.retransmissions == 2
    assert clock() == pytest.approx(1.0, abs=0.02)      # two timeouts of 0.5 s (fake time)


def test_unanswered_request_times_out_in_bounded_time():
    dev = EchoDevice(deaf=10 ** 6)
    link, clock, _ = make(dev, timeout=0.25, retries=3)
    with pytest.raises(DeviceTimeout, match=r"no answer to HELLO .* after 4 attempt"):
        link.request(Cmd.HELLO)
    assert link.stats.lost == 1 and link.stats.requests == 1
    assert 4 * 0.25 <= clock() <= 4 * 0.25 + 0.05


def test_error_frame_raises_protocol_error():
    link, _, _ = make(EchoDevice())
    with pytest.raises(ProtocolError, match="rejected 0x70: BAD_VALUE"):
        link.request(0x70)


def test_sequence_numbers_advance_and_wrap():
    dev = EchoDevice()
    link, _, _ = make(dev, first_seq=254)
    for _ in range(4):
        link.request(Cmd.STATS)
    assert [k[0] for k in dev.executed] == [254, 255, 0, 1]


def test_stale_answers_are_ignored():
    dev = EchoDevice()
    link, _, port = make(dev)
    port.rx += encode_frame(99, Cmd.HELLO | 0x80, b"old")     # a late duplicate
    assert link.request(Cmd.HELLO, b"new").payload == b"new"
    assert link.stats.stale_frames == 1


def test_retry_flushes_a_phantom_frame_left_by_a_corrupted_length():
    link, _, _ = make(EchoDevice(), timeout=0.1, retries=2)
    # a frame whose length field says 1000 bytes: without the flush the device would wait for
    # them and swallow the retransmission
    link.port.write(b"\xA5\x5A\xE8\x03\x00\x01")
    reply = link.request(Cmd.HELLO, b"x")
    assert reply.payload == b"x" and reply.attempts == 2
    assert link.stats.bytes_sent >= FLUSH


def test_without_flush_the_phantom_frame_swallows_every_retry():
    link, _, _ = make(EchoDevice(), timeout=0.1, retries=2, flush=0)
    link.port.write(b"\xA5\x5A\xE8\x03\x00\x01")
    with pytest.raises(DeviceTimeout):
        link.request(Cmd.HELLO, b"x")


def test_faulty_transport_is_reproducible():
    a = FaultyTransport(MemoryTransport(EchoDevice()), seed=3, corrupt=0.1, drop=0.1)
    b = FaultyTransport(MemoryTransport(EchoDevice()), seed=3, corrupt=0.1, drop=0.1)
    data = bytes(range(200))
    assert a._mangle(data) == b._mangle(data) != data
    assert a.corrupted > 0 and a.dropped > 0
