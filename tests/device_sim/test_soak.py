"""Link soak: 10 000 predictions over a link that corrupts 5% and drops 1% of the bytes.

Every PREDICT goes through :class:`~device_sim.link.Link` (retries, timeouts on a fake clock) to
the Python device over a :class:`~device_sim.transports.FaultyTransport`. Each prediction must
end as exactly one of: the correct scores (bit for bit), a reported rejection
(:class:`ProtocolError`) or a reported loss (:class:`DeviceTimeout`); never as wrong scores.

Residual risk (measured, see SECURITY.md): frames carry a CRC-16, so a corrupted request passes
with probability about 2^-16 once it holds 4+ bit errors or a dropped byte. With the tiny
model's 24-byte PREDICT frames this is about one silently wrong prediction per 10^5-10^6
predictions at these error rates (none in 130 000 measured); with 184-byte frames (44 inputs)
one in 10 000 was measured. :func:`test_crc16_misses_a_four_bit_error_pattern` pins the
mechanism down.
"""

import time

import numpy as np
import pytest

from device_sim.client import DeviceClient
from device_sim.errors import DeviceTimeout
from device_sim.fake import FakeDevice
from device_sim.link import Link
from device_sim.protocol import Cmd, ProtocolError, crc16
from device_sim.transports import FakeClock, FaultyTransport, MemoryTransport

from .conftest import model_of

N_PREDICTIONS = 10_000
CORRUPT, DROP = 0.05, 0.01
TIMEOUT, RETRIES = 0.05, 20


def _client(device, port, clock):
    link = Link(port, timeout=TIMEOUT, retries=RETRIES, clock=clock)
    client = DeviceClient(link)
    client.info = device.info          # HELLO is part of other tests; here only PREDICT
    return client, link


def _inputs(model, n, seed=0):
    return np.random.default_rng(seed).normal(size=(n, model.k)).astype(np.float32)


def test_10000_predictions_over_a_lossy_link_are_correct_or_reported(tiny):
    bundle, _, _ = tiny
    model = model_of(bundle)
    device, clock = FakeDevice(model), FakeClock()
    port = FaultyTransport(MemoryTransport(device, sleep=clock.advance), seed=2024,
                           corrupt=CORRUPT, drop=DROP)
    client, link = _client(device, port, clock)
    X = _inputs(model, N_PREDICTIONS)
    expected = model.scores_of_inputs(X)
    outcome = {"correct": 0, "wrong": 0, "rejected": 0, "lost": 0}
    start = time.monotonic()
    for x, want in zip(X, expected):
        try:
            got = client.predict(x)
        except DeviceTimeout:
            outcome["lost"] += 1
            continue
        except ProtocolError:
            outcome["rejected"] += 1
            continue
        same = got.tobytes() == np.asarray(want, dtype=got.dtype).tobytes()
        outcome["correct" if same else "wrong"] += 1
    wall = time.monotonic() - start

    assert outcome["wrong"] == 0, outcome                       # nothing silently wrong
    assert sum(outcome.values()) == N_PREDICTIONS               # every prediction accounted
    s = link.stats
    assert s.requests == N_PREDICTIONS == s.delivered + s.retried + s.lost
    assert s.lost == outcome["lost"]
    assert s.delivered + s.retried == outcome["correct"] + outcome["rejected"]
    # the faults really happened, and retries recovered most of them
    assert port.corrupted > 0.04 * s.bytes_sent and port.dropped > 0.008 * s.bytes_sent
    assert s.retried > s.delivered and s.dropped_frames > 0
    assert outcome["correct"] > 0.8 * N_PREDICTIONS
    # bounded: each request takes at most (retries + 1) attempts of TIMEOUT (+ one poll)
    assert clock() <= N_PREDICTIONS * ((RETRIES + 1) * TIMEOUT + 0.01)
    assert wall < 60


class _FlipOnce:
    """A transport that XORs ``mask`` into the payload tail of the first PREDICT request."""

    def __init__(self, inner, mask: bytes):
        self.inner, self.mask, self.done = inner, mask, False

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def write(self, data):
        data = bytearray(data)
        if not self.done and len(data) > 8 and data[5] == Cmd.PREDICT:
            for i, m in enumerate(self.mask):
                data[len(data) - 2 - len(self.mask) + i] ^= m
            self.done = True
        return self.inner.write(bytes(data))


@pytest.mark.xfail(strict=True, reason="protocol v1 frames carry CRC-16: the error pattern "
                   "x^16 + x^12 + x^5 + 1 (4 bit flips within 3 bytes) leaves the CRC unchanged, "
                   "so the device computes on corrupted inputs and the host accepts the answer; "
                   "needs a stronger check (e.g. CRC-32 frames in a protocol v2)")
def test_crc16_misses_a_four_bit_error_pattern(tiny):
    bundle, _, _ = tiny
    model = model_of(bundle)
    mask = bytes([0x01, 0x10, 0x21])            # the generator polynomial, bits 16, 12, 5, 0
    payload = _inputs(model, 1)[0].tobytes()
    flipped = payload[:-3] + bytes(a ^ b for a, b in zip(payload[-3:], mask))
    assert crc16(b"\x12\x00\x07\x03" + flipped) == crc16(b"\x12\x00\x07\x03" + payload)

    device, clock = FakeDevice(model), FakeClock()
    port = _FlipOnce(MemoryTransport(device, sleep=clock.advance), mask)
    client, _ = _client(device, port, clock)
    x = _inputs(model, 1)[0]
    got = client.predict(x)
    want = model.scores_of_inputs(x[None, :])[0]
    assert got.tobytes() == np.asarray(want, dtype=got.dtype).tobytes()
