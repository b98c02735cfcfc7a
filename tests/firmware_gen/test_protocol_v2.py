"""Protocol v2 on the compiled host firmware: buffer sizes derived from the largest answer (an
8-byte transmit buffer under AddressSanitizer), a Python-encoded stream with duplicates, stale
and reordered requests executed exactly once, and a faulty-link replay against the reference."""

import shutil
import struct
import subprocess

import numpy as np
import pytest

from sensorbudget.device_sim.protocol import Cmd, Err, Unit, encode_frame
from tests.firmware_gen.helpers import device_samples, push_samples


def _asan_works() -> bool:
    gcc = shutil.which("gcc")
    if gcc is None:
        return False
    done = subprocess.run([gcc, "-fsanitize=address", "-x", "c", "-", "-o", "/dev/null"],
                          input="int main(void){return 0;}", capture_output=True, text=True,
                          check=False)
    return done.returncode == 0


@pytest.mark.skipif(not _asan_works(), reason="gcc without AddressSanitizer")
def test_an_8_byte_transmit_buffer_still_holds_stats_bench_and_hello(firmware, bm_bundle):
    """Issue 21: TX_PAYLOAD=8 overflowed the global transmit buffer on STATS/BENCH answers."""
    asan = "-fsanitize=address -fno-omit-frame-pointer -fno-sanitize-recover=all"
    built = firmware(bm_bundle, "host", make_vars={"TX_PAYLOAD": 8, "EXTRA_CFLAGS": asan,
                                                   "LDFLAGS": "-fsanitize=address"})
    with built.start() as dev:
        assert struct.unpack("<BIII", dev.call(Cmd.STATS)) == (Unit.NANOSECONDS, 0, 0, 0)
        unit, _ = dev.bench(10, 0)
        assert unit == Unit.NANOSECONDS
        assert dev.call(Cmd.HELLO)[12:] == b"sbmodel"
        scores = dev.call(Cmd.PREDICT, np.zeros(built.plan.k, "<f4").tobytes())
        assert len(scores) == built.plan.t * 4
        assert dev.quit(0) == 0                       # ASan would exit non-zero


def test_duplicates_stale_and_reordered_requests_run_exactly_once(firmware, bm_bundle,
                                                                  bm_recordings):
    built = firmware(bm_bundle, "host")
    plan = built.plan
    samples = device_samples(plan, bm_recordings.recordings[2].columns)
    pushes = [struct.pack("<H", 10) + np.ascontiguousarray(samples[i:i + 10]).tobytes()
              for i in range(0, 40, 10)]
    frames = [encode_frame(100 + i, Cmd.PUSH_SAMPLES, p) for i, p in enumerate(pushes)]
    with built.start() as dev:
        dev.write(frames[0] + frames[1] + frames[0] + frames[1] + frames[3] + frames[2])
        got = dev.frames(5.0, count=6)
        assert [(s, c) for s, c, _ in got] == [
            (100, Cmd.PUSH_SAMPLES | 0x80), (101, Cmd.PUSH_SAMPLES | 0x80),
            (100, Cmd.ERROR), (101, Cmd.PUSH_SAMPLES | 0x80),
            (103, Cmd.PUSH_SAMPLES | 0x80), (102, Cmd.ERROR)]
        assert got[2][2] == bytes([Cmd.PUSH_SAMPLES, Err.STALE, 101, 0])
        assert got[1][2] == got[3][2]                   # the repeat: the cached answer
        # executed: 100, 101, 103 (30 samples; window 20, hop 10): the next 10 samples complete
        # window 2 (had 102 or a repeat run too, they would complete window 3 or 4)
        assert (plan.window, plan.hop) == (20, 10)
        dev.seq = 104
        assert push_samples(dev, plan, samples[40:50], 10)[0] == [2]
        assert dev.quit(0) == 0


def test_faulty_link_replay_through_the_firmware_is_correct_or_reported(firmware, bm_bundle,
                                                                         bm_recordings):
    """Late duplicates, reordering, garbage, flips and drops on the way to the C side: every
    window arrives once, in order, equal to what an undisturbed run gives."""
    from sensorbudget.device_sim.client import DeviceClient
    from sensorbudget.device_sim.link import Link
    from sensorbudget.device_sim.transports import FaultyTransport

    built = firmware(bm_bundle, "host")
    plan = built.plan
    recordings = [device_samples(plan, bm_recordings.recordings[r].columns) for r in range(4)]

    def run(faulty):
        out = []
        with built.start() as dev:
            port = dev.port
            if faulty:
                # faults on what the host writes only: which writes get a fault does not depend
                # on how the pty splits the answers
                port = FaultyTransport(dev.port, seed=5, corrupt=0.001, drop=0.001,
                                       duplicate=0.1, reorder=0.03, garbage=0.1,
                                       directions="tx")
            client = DeviceClient(Link(port, timeout=0.25, retries=8))
            assert client.hello().version == 2
            for samples in recordings:
                client.reset()
                got = []
                for i in range(0, len(samples), 4):
                    got += client.push(samples[i:i + 4])
                out.append(got)
            client.quit(0)
        return out, port

    clean, _ = run(False)
    faulty, port = run(True)
    for want, got in zip(clean, faulty):
        assert [w for w, _ in got] == list(range(len(want))) == [w for w, _ in want]
        assert np.array_equal(np.array([s for _, s in got]), np.array([s for _, s in want]))
    assert min(port.counts.values()) >= 3 and port.corrupted + port.dropped > 0, port.counts


def test_one_protocol_version_in_python_generator_and_c():
    """The host codec, the generator's manifest and the C runtime agree on the version."""
    import re

    from sensorbudget.device_sim.protocol import VERSION
    from sensorbudget.firmware_gen.firmware import template
    from sensorbudget.firmware_gen.plan import PROTOCOL_VERSION

    macro = re.search(r"#define SBFW_PROTOCOL_VERSION (\d+)", template("sbfw_protocol.h"))
    assert VERSION == PROTOCOL_VERSION == int(macro.group(1)) == 2
