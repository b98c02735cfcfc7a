"""PipePort: a child's stdin/stdout pipes as the link's port (QEMU's semihosting console,
issue 29). The child here is ``cat`` (an echo: what the link writes comes back byte for byte)
and a Python child speaking protocol v2 through FakeDevice, so the real Link runs on it."""

import os
import subprocess
import sys
import time

import numpy as np

from sensorbudget.device_sim.link import Link
from sensorbudget.device_sim.protocol import Cmd
from sensorbudget.device_sim.transports import PipePort


def _child(argv):
    to_child, from_child = os.pipe(), os.pipe()
    proc = subprocess.Popen(argv, stdin=to_child[0], stdout=from_child[1], close_fds=True)
    os.close(to_child[0])
    os.close(from_child[1])
    return proc, PipePort(from_child[0], to_child[1], timeout=0.02)


def _read_all(port, n, deadline_s=5.0):
    got, deadline = b"", time.monotonic() + deadline_s
    while len(got) < n and time.monotonic() < deadline:
        got += port.read(max(1, port.in_waiting))
    return got


def test_large_writes_come_back_whole_then_reads_time_out_and_eof_is_quiet():
    proc, port = _child(["cat"])
    data = np.random.default_rng(0).integers(0, 256, 300_000, dtype=np.uint8).tobytes()
    try:
        # more than a pipe holds (64 KiB) in all: 32 KiB writes, each read back before the next
        got = b""
        for i in range(0, len(data), 32_768):
            port.write(data[i:i + 32_768])
            got += _read_all(port, i + 32_768 - len(got)) if i + 32_768 <= len(data) else b""
        got += _read_all(port, len(data) - len(got))
        assert got == data
        t0 = time.monotonic()
        assert port.read(10) == b"" and port.in_waiting == 0        # idle: one timeout
        assert 0.015 <= time.monotonic() - t0 < 1.0
        port.write(b"last")
        os.close(port.tx)                       # cat exits at EOF after echoing
        port.tx = -1
        assert proc.wait(5) == 0
        assert _read_all(port, 4) == b"last"    # still readable after the child exited
        t0 = time.monotonic()
        assert [port.read(10) for _ in range(3)] == [b""] * 3  # EOF: waits, never spins
        assert time.monotonic() - t0 >= 0.035
    finally:
        port.close()
        proc.kill()
        proc.wait()


DEVICE = """
import os, sys
sys.path[:0] = {path!r}
from sensorbudget.device_sim.protocol import FrameDecoder, encode_frame
dec = FrameDecoder()
while True:
    data = os.read(0, 65536)
    if not data:
        break
    out = b"".join(encode_frame(seq, cmd | 0x80, payload[::-1])
                   for seq, cmd, payload in dec.feed(data))
    os.write(1, out)
"""


def test_the_link_pipelines_requests_over_pipes():
    """32 requests in flight to a child answering each with its payload reversed: every answer
    in order, equal to the reversal computed here."""
    proc, port = _child([sys.executable, "-c", DEVICE.format(path=sys.path)])
    try:
        link = Link(port, timeout=5.0, retries=0, poll=0.02)
        rng = np.random.default_rng(1)
        payloads = [rng.integers(0, 256, int(n), dtype=np.uint8).tobytes()
                    for n in rng.integers(0, 1024, 300)]
        replies = list(link.pipeline(((Cmd.PUSH_SAMPLES, p) for p in payloads), depth=32))
        assert [r.payload for r in replies] == [p[::-1] for p in payloads]
        assert link.stats.delivered == 300 and link.stats.dropped_frames == 0
    finally:
        port.close()
        proc.wait(5)
