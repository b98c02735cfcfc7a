"""Link soak (protocol v2): 10^5 predictions over a channel with bit flips, byte drops, late
duplicates, reordering and garbage bursts; small and >= 44-value frames.

Every prediction goes through :class:`~sensorbudget.device_sim.link.Link` (retries, timeouts on a fake
clock) and :class:`~sensorbudget.device_sim.client.DeviceClient` to the Python device, and ends as exactly one
of: correct (window index and scores bit for bit equal to the reference model's) or reported
lost (its request raised DeviceTimeout / ProtocolError); never silently wrong. The 10^6 run is
``benchmarks/soak_link.py`` (about 2 min); figures in SECURITY.md.
"""

import numpy as np

from sensorbudget.device_sim.client import DeviceClient
from sensorbudget.device_sim.fake import FakeDevice
from sensorbudget.device_sim.link import Link
from sensorbudget.device_sim.protocol import HEADER, Cmd, cobs_decode, cobs_encode, crc32
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
    assert link["abandoned"] > 0 and res.requests_lost > 0     # overtaken requests happened
    # a lost frame costs the rest of its segment here (about half the predictions at these
    # fault rates, 50 times a real link's); the replay resends them after a RESET instead
    assert res.requests_refused == 0 and res.correct > 0.3 * res.predictions


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
