"""Issue 29: the replay with several requests in flight gives the same report as one sample per
request, one request at a time; a request overtaken by a later one is never executed late; the
progress bar shows the replay's rate, and ``rate`` still paces it."""

import io
import re

import numpy as np
import pytest

from sensorbudget.device_sim.backends import PythonBackend, available_backends, make_backend
from sensorbudget.device_sim.client import DeviceClient
from sensorbudget.device_sim.fake import FakeDevice
from sensorbudget.device_sim.link import Link, Overtaken
from sensorbudget.device_sim.protocol import Cmd
from sensorbudget.device_sim.replay import replay
from sensorbudget.device_sim.report import build_report
from sensorbudget.device_sim.simulate import simulate
from sensorbudget.device_sim.transports import FakeClock, MemoryTransport
from sensorbudget.progress import ProgressBar

from .conftest import model_of, recordings_of

AVAILABLE = available_backends()
#: report fields that hold wall-clock times (the only ones allowed to differ)
WALL_CLOCK = re.compile(r"round_trip|wall|seconds|_s$|elapsed")


def strip_wall_clock(value):
    if isinstance(value, dict):
        return {k: strip_wall_clock(v) for k, v in value.items() if not WALL_CLOCK.search(k)}
    if isinstance(value, list):
        return [strip_wall_clock(v) for v in value]
    return value


def records(res):
    return [(r.segment, r.window, r.end_sample, r.status, np.asarray(r.scores).tobytes(),
             r.extractors, r.model) for r in res.records]


def replay_with(spec, model, rset, tmp_path, *, in_flight, one_sample, clock=None):
    """A replay with ``in_flight`` requests on the link; ``one_sample``: one sample per request
    (a pace so fast that it never waits, on a fake clock)."""
    clock = clock or FakeClock()
    kw = {"clock": clock, "sleep": clock.advance} if spec == "python" else {}
    be = make_backend(spec, model=model, workdir=tmp_path, **kw)
    be.in_flight = in_flight
    try:
        res = replay(be, model, rset, rate=1e9 if one_sample else None,
                     clock=clock if one_sample else FakeClock(), sleep=clock.advance)
        be.quit()
    finally:
        be.close()
    return res, be


@pytest.mark.parametrize("spec,numeric", [("python", "q15"), ("qemu-m4f", "q15"),
                                          ("qemu-nucleo-f4", "float32")])
def test_pipelined_report_equals_the_one_sample_one_request_replay(tiny, tmp_path, spec,
                                                                   numeric):
    """Same predictions (bit for bit, and equal to the reference), same statuses and the same
    window pass and model costs (exact instruction counts on QEMU) whether the samples go one
    per request and one request at a time, or in chunks with 8 requests in flight. The pushes
    differ on a firmware image, as they do on a device: one sample per request stores each row
    in its own timed call (its entry and exit paid per row), a chunk in one; everything that
    does not read them is the same."""
    if AVAILABLE.get(spec) is not None:
        pytest.skip(f"backend {spec}: {AVAILABLE[spec]}")
    bundle, rec, _ = tiny
    model = model_of(bundle, numeric, full_scale={"*": 64.0} if numeric != "float32" else None)
    rset = recordings_of(rec, model)
    single, be1 = replay_with(spec, model, rset, tmp_path / "one", in_flight=1, one_sample=True)
    batched, be8 = replay_with(spec, model, rset, tmp_path / "many", in_flight=8,
                               one_sample=False)
    assert single.samples_sent == batched.samples_sent > 0
    assert single.link["requests"] > 2 * batched.link["requests"]    # really batched
    assert records(single) == records(batched)
    assert batched.mismatches == 0 and batched.count("delivered") == len(batched.records) > 0
    assert all(r.extractors is not None and r.model is not None for r in batched.records)
    reports = [strip_wall_clock(build_report(res, be, model, rset, bundle_path=bundle,
                                             recordings_path=rec, battery_wh=3.7))
               for res, be in ((single, be1), (batched, be8))]
    pushes = [[r.pushes for r in res.records] for res in (single, batched)]
    if spec == "python":                     # the op-count estimate: per row stored
        assert pushes[0] == pushes[1]
    else:                                    # a call per row costs more than one per chunk
        assert all(one > chunk for one, chunk in zip(*pushes) if one is not None)
    for report in reports:
        report.pop("link", None)             # request counts differ by design
        if spec != "python":                 # what reads the pushes
            report.pop("energy")
            report["series"].pop("cost")
            for part in ("pushes", "total", "first_window", "per_channel_push",
                         "per_extractor_push"):
                report["cost"].pop(part)
            report.pop(report["cost"]["unit"])
    assert reports[0] == reports[1]


class DropFrames:
    """A MemoryTransport whose ``write`` loses the frames numbered in ``lost`` (0-based count
    of frames written; a write may carry several)."""

    def __init__(self, device, lost, clock):
        self.inner = MemoryTransport(device, sleep=clock.advance)
        self.lost, self.count = set(lost), 0
        self.timeout = 0.01

    @property
    def in_waiting(self):
        return self.inner.in_waiting

    def write(self, data):
        for piece in bytes(data).split(b"\x00"):
            if piece:
                if self.count not in self.lost:
                    self.inner.write(b"\x00" + piece + b"\x00")
                self.count += 1
        return len(data)

    def read(self, size=1):
        return self.inner.read(size)


def test_an_overtaken_request_is_refused_never_run_late(tiny):
    """Three pushes in flight, the first one's frame lost: the device runs the second and third
    (newer seqs); the first, retransmitted, is refused as STALE (not executed) and the
    pipeline raises Overtaken before yielding any answer that came after the gap."""
    bundle, _, _ = tiny
    model = model_of(bundle)
    device, clock = FakeDevice(model), FakeClock()
    link = Link(DropFrames(device, {1}, clock), timeout=0.1, retries=2, clock=clock)
    client = DeviceClient(link)
    client.hello()
    executed = device.executed
    rng = np.random.default_rng(0)
    pushes = [("push", rng.normal(size=(model.hop, len(model.channels)))) for _ in range(3)]
    got = []
    with pytest.raises(Overtaken, match="refused as stale"):
        for answer in client.exchange(iter(pushes), depth=3):
            got.append(answer)
    assert got == [] and device.executed == executed + 2
    assert device.count == 2 * model.hop              # the lost push's samples never arrived
    assert link.stats.retransmissions == 1


def test_pipeline_answers_in_order_with_one_write_per_batch(tiny):
    bundle, _, _ = tiny
    model = model_of(bundle)
    device, clock = FakeDevice(model), FakeClock()
    port = DropFrames(device, set(), clock)
    writes = []
    write = port.write
    port.write = lambda data: writes.append(len(data)) or write(data)
    link = Link(port, timeout=0.1, retries=0, clock=clock)
    requests = [(Cmd.HELLO, b"")] + [(Cmd.STATS, b"")] * 7
    replies = list(link.pipeline(iter(requests), depth=8))
    assert len(writes) == 1 and len(replies) == 8
    assert replies[0].payload[0] == 2 and all(len(r.payload) == 9 for r in replies[1:])


def test_progress_bar_shows_the_paced_rate(tiny, tmp_path):
    """``rate`` paces the replay in (fake) real time with requests in flight, and the bar's
    rate is the samples replayed per second of that clock."""
    bundle, rec, _ = tiny
    clock, stream = FakeClock(1000.0), io.StringIO()
    bar = ProgressBar("replaying (samples)", enabled=True, stream=stream, clock=clock,
                      min_interval=0.0)
    report, res = simulate(bundle, rec, rate=20.0, clock=clock, sleep=clock.advance,
                           progress=bar, bench=False)
    total = res.samples_sent
    assert clock() - 1000.0 >= (total - 1) / 20.0 - 1e-9  # paced: no faster than 20 samples/s
    last = stream.getvalue().rstrip("\n").split("\r")[-1]
    assert f"{total}/{total} 100%" in last
    shown = float(re.search(r" ([\d.]+)/s ", last).group(1))
    # the bar starts at the first answer (up to in_flight samples later than the first send)
    assert 20.0 <= shown <= 20.0 * total / (total - 2 * PythonBackend.in_flight)


def test_rate_text_units():
    from sensorbudget.progress import rate_text

    assert (rate_text(950), rate_text(12345), rate_text(1.25e6)) == ("950", "12.3k", "1.25M")
