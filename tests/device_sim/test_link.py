"""Link: retries with the same seq, bounded time, accounting, errors, the version handshake;
all on a fake clock."""

import struct

import pytest

from sensorbudget.device_sim.client import DeviceClient, DeviceInfo, encode_hello
from sensorbudget.device_sim.errors import DeviceTimeout
from sensorbudget.device_sim.link import Link
from sensorbudget.device_sim.protocol import Cmd, Err, FrameDecoder, ProtocolError, encode_frame
from sensorbudget.device_sim.transports import FakeClock, FaultyTransport, MemoryTransport


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
    link, _, _ = make(dev, first_seq=65534)
    for _ in range(4):
        link.request(Cmd.STATS)
    assert [k[0] for k in dev.executed] == [65534, 65535, 0, 1]


def test_stale_answers_are_ignored():
    dev = EchoDevice()
    link, _, port = make(dev)
    port.rx += encode_frame(99, Cmd.HELLO | 0x80, b"old")     # a late duplicate
    assert link.request(Cmd.HELLO, b"new").payload == b"new"
    assert link.stats.stale_frames == 1


def test_line_noise_before_a_frame_does_not_swallow_it():
    link, _, _ = make(EchoDevice(), timeout=0.1, retries=2)
    # a v1-style header promising 1000 bytes, and noise without a delimiter: the frame's
    # leading 0x00 ends them, so the request is answered at the first attempt
    link.port.write(b"\xA5\x5A\xE8\x03\x00\x01\x42\x17")
    reply = link.request(Cmd.HELLO, b"x")
    assert reply.payload == b"x" and reply.attempts == 1


class StaleDevice:
    """A v2 device that executed seq 700 for an earlier host: older seqs are STALE."""

    def __init__(self, info):
        self.decoder, self.info, self.seen = FrameDecoder(), info, []

    def feed(self, data):
        out = b""
        for seq, cmd, _ in self.decoder.feed(data):
            self.seen.append(seq)
            if 0 < (seq - 700) % 65536 < 32768:
                out += encode_frame(seq, cmd | 0x80, encode_hello(self.info))
            else:
                out += encode_frame(seq, Cmd.ERROR, bytes([cmd, Err.STALE]) + b"\xbc\x02")
        return out


INFO = DeviceInfo(2, "float32", 3, 1, 2, 8, 4, "dev")


def test_hello_continues_after_the_seq_of_a_former_host():
    dev = StaleDevice(INFO)
    link, _, _ = make(dev)
    assert DeviceClient(link).hello() == INFO
    assert dev.seen == [0, 701] and link._seq == 702
    with pytest.raises(ProtocolError, match=r"refused STATS \(seq 0\) as stale: .* seq 700; "
                       r"is another host"):
        make(dev)[0].request(Cmd.STATS)


class V1Device:
    """Protocol v1 firmware: answers a v1 HELLO (0xA5 0x5A framing, CRC-16), ignores the rest."""

    def __init__(self):
        self.buffer = b""

    def feed(self, data):
        from sensorbudget.device_sim.protocol import _crc16

        self.buffer += data
        if b"\xA5\x5A\x02\x00\x00\x01" not in self.buffer:
            return b""
        self.buffer = b""
        body = struct.pack("<HBB", 2 + 12, 0, 0x81) + struct.pack("<BBHHHHH", 1, 0, 3, 1, 2, 8, 4)
        return b"\xA5\x5A" + body + struct.pack("<H", _crc16(body))


def test_a_v1_device_is_refused_with_one_clear_line():
    link, _, _ = make(V1Device(), timeout=0.1, retries=1)
    with pytest.raises(ProtocolError) as exc:
        DeviceClient(link).hello()
    text = str(exc.value)
    assert "protocol v1" in text and "v2" in text and "\n" not in text


def test_a_device_of_another_version_is_refused():
    link, _, _ = make(StaleDevice(DeviceInfo(3, "float32", 3, 1, 2, 8, 4, "dev")))
    with pytest.raises(ProtocolError, match="device speaks protocol v3; this host speaks v2"):
        DeviceClient(link).hello()


def test_a_silent_device_still_times_out():
    link, _, _ = make(EchoDevice(deaf=10 ** 6), timeout=0.1, retries=1)
    with pytest.raises(DeviceTimeout):
        DeviceClient(link).hello()


def test_faulty_transport_is_reproducible():
    a = FaultyTransport(MemoryTransport(EchoDevice()), seed=3, corrupt=0.1, drop=0.1)
    b = FaultyTransport(MemoryTransport(EchoDevice()), seed=3, corrupt=0.1, drop=0.1)
    data = bytes(range(200))
    assert a._mangle(data) == b._mangle(data) != data
    assert a.corrupted > 0 and a.dropped > 0


@pytest.mark.parametrize("depth", [1, 2, 3, 8])
def test_pipeline_tops_up_once_half_is_answered(depth):
    """Every write after the first carries the requests answered since (at least half of
    ``depth``, the last one perhaps fewer): counted as frames on the wire by a decoder of its
    own; the answers are the one-at-a-time link's, in order, each request executed once."""
    dev = EchoDevice()
    link, _, port = make(dev)
    frames_per_write = []
    write = port.write
    port.write = lambda data: frames_per_write.append(len(FrameDecoder().feed(data))) or \
        write(data)
    requests = [(Cmd.STATS, bytes([i])) for i in range(41)]
    replies = [r.payload for r in link.pipeline(iter(requests), depth=depth)]
    one_at_a_time = [make(EchoDevice())[0].request(c, p).payload for c, p in requests]
    assert replies == one_at_a_time == [bytes([i]) for i in range(41)]
    assert [p for _, _, p in dev.executed] == [bytes([i]) for i in range(41)]
    assert frames_per_write[0] == depth and sum(frames_per_write) == 41
    assert all(n == depth - depth // 2 for n in frames_per_write[1:-1])
    assert 1 <= frames_per_write[-1] <= depth - depth // 2
