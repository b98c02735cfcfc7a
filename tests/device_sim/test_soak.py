"""Link soak (protocol v2): 10^5 predictions over a channel with bit flips, byte drops, late
duplicates, reordering and garbage bursts; small and >= 44-value frames.

Every prediction goes through :class:`~sensorbudget.device_sim.link.Link` (retries, timeouts
on a fake clock) and :class:`~sensorbudget.device_sim.client.DeviceClient` to the Python device,
and ends as exactly one of: correct (window index and scores bit for bit equal to the reference
model's) or reported lost (its request raised DeviceTimeout / ProtocolError); never silently
wrong. The 10^6 run is ``benchmarks/soak_link.py`` (depths 8 and 1: about 10 min on a busy
2-core machine, most of it at depth 8, whose resends repeat much of the traffic); figures in
SECURITY.md.
"""

import numpy as np

from sensorbudget.device_sim.client import DeviceClient
from sensorbudget.device_sim.fake import FakeDevice
from sensorbudget.device_sim.link import Link
from sensorbudget.device_sim.protocol import HEADER, Cmd, cobs_decode, cobs_encode, crc32
from sensorbudget.device_sim import soak
from sensorbudget.device_sim.soak import run_soak
from sensorbudget.device_sim.transports import FakeClock, MemoryTransport

from .conftest import model_of

FAULTS = {"corrupt": 0.002, "drop": 0.001, "duplicate": 0.02, "reorder": 0.02, "garbage": 0.02}


def check(res, n):
    assert res.wrong == 0, res.as_dict()                          # nothing silently wrong
    assert res.predictions >= n and res.correct + res.lost == res.predictions
    link = res.link
    assert link["requests"] == res.requests == link["delivered"] + link["retried"] + link["lost"]
    assert res.requests_lost == link["lost"] and res.requests_refused == 0
    f = res.faults                       # every kind of fault really happened, many times
    assert min(f["duplicated"], f["reordered"], f["garbage"]) > 100, f
    assert f["corrupted_bytes"] > 1000 and f["dropped_bytes"] > 500, f
    assert link["stale_frames"] > 0 and link["dropped_frames"] > 0
    assert res.correct > 0.95 * res.predictions


def test_60000_float32_predictions_in_small_and_large_frames(tiny):
    model = model_of(tiny[0])
    res = run_soak(model, 60_000, seed=11, faults=FAULTS)
    check(res, 60_000)
    # large pushes carry >= 44 values (10 windows x 4 samples x 2 channels float32)
    assert 10 * model.hop * len(model.channels) >= 44


def test_40000_q15_predictions(tiny):
    model = model_of(tiny[0], "q15", full_scale={"*": 64.0})
    check(run_soak(model, 40_000, seed=12, faults=FAULTS), 40_000)


def test_40000_predictions_with_8_requests_in_flight(tiny):
    """The replay's pipelined link (issue 29) under the same faults: a request overtaken by a
    later one is refused, never run late, so nothing is silently wrong; every request sent is
    delivered, retried, lost or abandoned (sent after a failed one, its answer unused)."""
    model = model_of(tiny[0], "q15", full_scale={"*": 64.0})
    res = run_soak(model, 40_000, seed=13, faults=FAULTS, depth=8)
    link = res.link
    assert res.wrong == 0, res.as_dict()
    assert res.predictions >= 40_000 and res.correct + res.lost == res.predictions
    assert link["requests"] == (link["delivered"] + link["retried"] + link["lost"]
                                + link["abandoned"])
    assert link["abandoned"] > 0 and res.overtaken > 0         # overtaken requests happened
    assert res.requests_lost == link["lost"] and res.resyncs >= res.overtaken
    # an overtaken request is sent again after a RESET (the requests in flight after it too):
    # only requests unanswered after every retry lose their windows, as one at a time does
    depth1 = run_soak(model, 40_000, seed=13, faults=FAULTS)
    assert res.requests_refused == 0 and res.correct > 0.95 * res.predictions
    assert res.lost <= 2 * depth1.lost + 0.01 * res.predictions, (res.lost, depth1.lost)


class _DropSeq:
    """Drop the request frame with sequence number ``seq`` the first time it is written."""

    def __init__(self, inner, seq: int):
        self.inner, self.seq, self.done = inner, seq, False

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def write(self, data):
        kept = []
        for piece in bytes(data).split(b"\x00"):
            body = cobs_decode(piece) if piece else None
            if not self.done and body is not None and HEADER.unpack_from(body)[1] == self.seq:
                self.done = True
                continue
            kept.append(piece)
        return self.inner.write(b"\x00".join(kept))


def test_resync_after_an_overtaken_request_resends_from_the_unresolved_window(tiny):
    """The third request frame of a segment (a small push) is dropped once while 8 are in
    flight: the device runs the later ones and refuses its retry as stale; the soak RESETs,
    pushes the samples from the first unresolved window's start (completing none) and goes on
    with the device's window j = the segment's window m0 + j: every window correct against the
    reference model's scores, none lost, one resynchronisation."""
    model = model_of(tiny[0], "q15", full_scale={"*": 64.0})
    [(wire, expected, x0)] = soak._streams(model, 1, model.window + 60 * model.hop, seed=5)
    plan = soak._plan(model, soak._schedule(model, 10, len(wire)), wire, x0, 8)
    windows = sum(len(want) for _, _, want, _ in plan)
    for drop in (None, 2):
        device, clock = FakeDevice(model), FakeClock()
        port = MemoryTransport(device, sleep=clock.advance)
        link = Link(port if drop is None else _DropSeq(port, drop), timeout=0.05, retries=3,
                    clock=clock)
        client = DeviceClient(link)
        client.info = device.info
        res = soak.SoakResult()
        soak._segment(res, client, model, plan, wire, expected, 8, 10 ** 9, 10 * model.hop)
        assert res.wrong == 0 and res.lost == 0
        assert res.correct == res.predictions == windows
        assert (res.overtaken, res.resyncs) == ((0, 0) if drop is None else (1, 1))
    assert plan[2][0] == "push" and plan[2][3] > model.window      # resumed mid-segment
    assert link.stats.abandoned > 0


def test_late_duplicates_alone_never_shift_the_window_stream(tiny):
    """The v1 failure (463/499 wrong windows at 1 % late duplicates) cannot happen."""
    res = run_soak(model_of(tiny[0]), 5_000, seed=3,
                   faults={"duplicate": 0.2, "reorder": 0.2})
    assert res.wrong == 0 and res.lost == 0 and res.correct == res.predictions


class _FlipOnce:
    """XOR ``mask`` into the payload tail of the first PREDICT body, keeping its CRC field."""

    def __init__(self, inner, mask: bytes):
        self.inner, self.mask, self.done = inner, mask, False

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def write(self, data):
        body = cobs_decode(bytes(data).strip(b"\x00"))
        if not self.done and body is not None and body[HEADER.size - 1] == Cmd.PREDICT:
            body = bytearray(body)
            for i, m in enumerate(self.mask):
                body[len(body) - 4 - len(self.mask) + i] ^= m
            data = b"\x00" + cobs_encode(bytes(body)) + b"\x00"
            self.done = True
        return self.inner.write(data)


def test_the_error_pattern_crc16_missed_is_caught(tiny):
    """v1's CRC-16 passed x^16 + x^12 + x^5 + 1 (4 flips within 3 bytes); CRC-32 does not."""
    model = model_of(tiny[0])
    mask = bytes([0x01, 0x10, 0x21])
    x = np.random.default_rng(0).normal(size=model.k).astype(np.float32)
    body = bytes(8) + x.tobytes()
    flipped = body[:-3] + bytes(a ^ b for a, b in zip(body[-3:], mask))
    assert crc32(flipped) != crc32(body)

    device, clock = FakeDevice(model), FakeClock()
    port = _FlipOnce(MemoryTransport(device, sleep=clock.advance), mask)
    client = DeviceClient(Link(port, timeout=0.05, retries=3, clock=clock))
    client.info = device.info
    got = client.predict(x)
    want = model.scores_of_inputs(x[None, :])[0]
    assert port.done and device.decoder.dropped == 1                  # caught, then retried
    assert got.tobytes() == np.asarray(want, dtype=got.dtype).tobytes()
