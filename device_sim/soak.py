"""Link soak: many predictions through the real link and client to the Python device over a
faulty channel (bit flips, byte drops, late duplicates, reordering, garbage bursts), each checked
bit for bit against the reference model.

The host plays *segments*: RESET, then a fixed schedule of PUSH_SAMPLES requests over one of a few
random sample streams, with small (one window, ``hop`` samples) and large (``big`` windows,
``>= 44`` sample values) requests, and an occasional PREDICT. Every prediction ends as one of:

- ``correct``: the window index and scores equal the reference's, bit for bit;
- ``wrong``: anything else that the host accepted (must stay 0);
- ``lost``: its request raised :class:`~sensorbudget.device_sim.errors.DeviceTimeout` (no answer
  after every retry: reported lost) or was refused with a
  :class:`~sensorbudget.device_sim.protocol.ProtocolError` (reported).

After a failed request the host resynchronises as the replay does: RESET, then the samples from
the start of the first unresolved window up to where the segment resumes (no window completes in
them), then the rest of the plan, the device's window ``j`` being the segment's window
``m0 + j``. With requests in flight, a request whose frame (or whose answer, then its retry) was
lost while later ones ran is refused as stale (:class:`~sensorbudget.device_sim.link.Overtaken`):
it was not lost by the link's retries, so it and the requests in flight after it are sent again
after the resynchronisation (counted in ``overtaken``), not reported lost.

Used by ``tests/device_sim/test_soak.py`` (10^5 predictions) and ``benchmarks/soak_link.py``
(10^6 and more).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from .client import DeviceClient
from .errors import DeviceTimeout
from .fake import FakeDevice
from .link import Link, Overtaken
from .protocol import ProtocolError
from .transports import FakeClock, FaultyTransport, MemoryTransport

DEFAULT_FAULTS = {"corrupt": 0.002, "drop": 0.001, "duplicate": 0.02, "reorder": 0.02,
                  "garbage": 0.02}


@dataclass
class SoakResult:
    """Outcome counts of a soak (predictions and requests) and the fault and link counters."""

    predictions: int = 0
    correct: int = 0
    wrong: int = 0
    lost: int = 0
    requests: int = 0
    requests_lost: int = 0
    requests_refused: int = 0
    overtaken: int = 0          # requests refused as overtaken, then resent after a RESET
    resyncs: int = 0            # mid-segment RESETs
    faults: dict = field(default_factory=dict)
    link: dict = field(default_factory=dict)
    fake_seconds: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


def _streams(model, n_streams: int, n_samples: int, seed: int) -> list:
    """[(wire samples, expected window scores, inputs of window 0)] of random streams."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_streams):
        raw = rng.normal(scale=4.0, size=(n_samples, len(model.channels)))
        wire = model.wire_samples(raw)
        X = model.features_of(wire)
        out.append((wire, model.scores(X), model.inputs(X[:1])[0]))
    return out


def _schedule(model, big: int, n_samples: int) -> list:
    """Chunk sizes of one segment: the first window, then big / small pushes alternating."""
    sizes, pos, small = [model.window], model.window, model.hop
    while pos + big * model.hop <= n_samples:
        for size in (big * model.hop, small, small):
            if pos + size <= n_samples:
                sizes.append(size)
                pos += size
    return sizes


def run_soak(model, predictions: int, *, seed: int = 0, faults=None, big: int = 10,
             timeout: float = 0.05, retries: int = 12, predict_every: int = 8,
             depth: int = 1) -> SoakResult:
    """Push until ``predictions`` predictions were requested; returns the :class:`SoakResult`.

    ``depth``: requests in flight (:meth:`~sensorbudget.device_sim.link.Link.pipeline`, as the
    replay sends them). After a failure the segment resumes after a RESET (module docstring);
    the requests sent after the failed one are ``abandoned`` by the link (their answers unused)
    and sent again."""
    faults = dict(DEFAULT_FAULTS if faults is None else faults)
    values = big * model.hop * len(model.channels)
    if values < 44:
        big = -(-44 // (model.hop * len(model.channels)))
    n_samples = model.window + 6 * big * model.hop
    streams = _streams(model, 4, n_samples, seed)
    schedule = _schedule(model, big, n_samples)
    device, clock = FakeDevice(model), FakeClock()
    port = FaultyTransport(MemoryTransport(device, sleep=clock.advance), seed=seed, **faults)
    link = Link(port, timeout=timeout, retries=retries, clock=clock)
    client = DeviceClient(link)
    client.info = device.info
    res = SoakResult()
    segment = 0
    while res.predictions < predictions:
        wire, expected, x0 = streams[segment % len(streams)]
        segment += 1
        if _call(res, lambda: client.reset() or True) is None:
            continue
        _segment(res, client, model, _plan(model, schedule, wire, x0, predict_every), wire,
                 expected, depth, predictions, big * model.hop)
    res.faults = {"corrupted_bytes": port.corrupted, "dropped_bytes": port.dropped,
                  **port.counts}
    res.link = link.stats.as_dict()
    res.fake_seconds = clock()
    return res


def _plan(model, schedule: list, wire, x0, predict_every: int) -> list:
    """[(kind, data, windows it completes, first sample)] of one segment."""
    plan, pos = [], 0
    for i, size in enumerate(schedule):
        plan.append(("push", wire[pos:pos + size], _windows_ending(model, pos, size), pos))
        pos += size
        if predict_every and i % predict_every == predict_every - 1:
            plan.append(("predict", x0, [0], pos))
    return plan


def _resume(model, plan: list, i: int, wire, chunk: int) -> tuple:
    """(prefix requests, m0): after a RESET, the pushes of samples [m0 * hop, plan[i]'s first
    sample) in pieces of at most ``chunk`` samples (they complete no window), where m0 is the
    first window that ends at or after that sample."""
    pos = plan[i][3]
    m0 = max(0, -(-(pos + 1 - model.window) // model.hop))
    prefix = [("push", wire[a:min(a + chunk, pos)], [], a)
              for a in range(m0 * model.hop, pos, chunk)]
    return prefix, m0


def _segment(res: SoakResult, client, model, plan: list, wire, expected, depth: int,
             target: int, chunk: int) -> None:
    """Run one segment's requests (``depth`` in flight); resynchronise after a failure."""
    i, todo, m0 = 0, plan, 0        # next plan item, requests of this pass, window offset
    while i < len(plan):
        answers = client.exchange(((kind, data) for kind, data, _, _ in todo), depth)
        done = 0                    # requests of this pass answered
        try:
            for kind, _, want, _ in todo:
                got = next(answers, None)
                if got is None:     # pragma: no cover - the pipeline yields one per request
                    break
                done += 1
                res.requests += 1
                res.predictions += len(want)
                if kind == "push":
                    _check(res, [(w + m0, s) for w, s in got], want, expected)
                else:
                    ok = got.tobytes() == np.asarray(expected[0], got.dtype).tobytes()
                    res.correct += ok
                    res.wrong += not ok
                if res.predictions >= target:
                    answers.close()
                    return
            return
        except (DeviceTimeout, ProtocolError) as exc:
            failed = todo[done]
            step = 0 if isinstance(exc, Overtaken) else 1     # overtaken: sent again
            res.requests += 1
            if step:
                res.predictions += len(failed[2])
                res.lost += len(failed[2])
                if isinstance(exc, DeviceTimeout):
                    res.requests_lost += 1
                else:
                    res.requests_refused += 1
            else:
                res.requests_lost += 1      # the link counts an overtaken request as lost
                res.overtaken += 1
        n_prefix = len(todo) - (len(plan) - i)
        i += max(0, done - n_prefix) + (step if done >= n_prefix else 0)
        if i >= len(plan):
            return
        for _ in range(3):
            res.resyncs += 1
            if _call(res, lambda: client.reset() or True) is not None:
                break
        else:
            return                  # the device stopped answering RESET: next segment
        prefix, m0 = _resume(model, plan, i, wire, chunk)
        todo = prefix + plan[i:]


def _windows_ending(model, pos: int, size: int) -> list:
    """Indices of the windows that complete while samples [pos, pos + size) arrive."""
    first = max(0, -(-(pos + 1 - model.window) // model.hop))
    return [m for m in range(first, (pos + size - model.window) // model.hop + 1)
            if m * model.hop + model.window > pos]


def _call(res: SoakResult, fn, *args):
    res.requests += 1
    try:
        return fn(*args)
    except DeviceTimeout:
        res.requests_lost += 1
    except ProtocolError:
        res.requests_refused += 1
    return None


def _check(res: SoakResult, got: list, want: list, expected) -> None:
    indices = [w for w, _ in got]
    if indices != want:
        res.wrong += max(len(want), 1)      # a prefix push (want []) must complete none
        return
    for w, scores in got:
        ok = scores.tobytes() == np.asarray(expected[w], scores.dtype).tobytes()
        res.correct += ok
        res.wrong += not ok
