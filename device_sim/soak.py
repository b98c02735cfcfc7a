"""Link soak: many predictions through the real link and client to the Python device over a
faulty channel (bit flips, byte drops, late duplicates, reordering, garbage bursts), each checked
bit for bit against the reference model.

The host plays *segments*: RESET, then a fixed schedule of PUSH_SAMPLES requests over one of a few
random sample streams, with small (one window, ``hop`` samples) and large (``big`` windows,
``>= 44`` sample values) requests, and an occasional PREDICT. Every prediction ends as one of:

- ``correct``: the window index and scores equal the reference's, bit for bit;
- ``wrong``: anything else that the host accepted (must stay 0);
- ``lost``: its request raised :class:`~sensorbudget.device_sim.errors.DeviceTimeout` (reported lost) or was
  refused with a :class:`~sensorbudget.device_sim.protocol.ProtocolError` (reported); the rest of its segment
  is skipped (the next segment starts with RESET, so nothing drifts).

Used by ``tests/device_sim/test_soak.py`` (10^5 predictions) and ``benchmarks/soak_link.py``
(10^6 and more).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from .client import DeviceClient
from .errors import DeviceTimeout
from .fake import FakeDevice
from .link import Link
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

    ``depth``: requests in flight (:meth:`~sensorbudget.device_sim.link.Link.pipeline`, as the replay sends
    them). With more than one, a request whose frame is lost while later ones run is refused
    (``Overtaken``): it counts as lost with the rest of its segment, and the requests sent after
    it are ``abandoned`` (their answers unused)."""
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
        plan, pos = [], 0          # (kind, data, windows it completes)
        for i, size in enumerate(schedule):
            plan.append(("push", wire[pos:pos + size], _windows_ending(model, pos, size)))
            pos += size
            if predict_every and i % predict_every == predict_every - 1:
                plan.append(("predict", x0, [0]))
        _segment(res, client, plan, expected, depth, predictions)
    res.faults = {"corrupted_bytes": port.corrupted, "dropped_bytes": port.dropped,
                  **port.counts}
    res.link = link.stats.as_dict()
    res.fake_seconds = clock()
    return res


def _segment(res: SoakResult, client, plan: list, expected, depth: int, target: int) -> None:
    """Run one segment's requests (``depth`` in flight); stop at its first failure."""
    answers = client.exchange(((kind, data) for kind, data, _ in plan), depth)
    for kind, _, want in plan:
        res.requests += 1
        res.predictions += len(want)
        try:
            got = next(answers)
        except DeviceTimeout:
            res.requests_lost += 1
            got = None
        except ProtocolError:
            res.requests_refused += 1
            got = None
        if got is None:
            res.lost += len(want)
            return
        if kind == "push":
            _check(res, got, want, expected)
        else:
            ok = got.tobytes() == np.asarray(expected[0], got.dtype).tobytes()
            res.correct += ok
            res.wrong += not ok
        if res.predictions >= target:
            answers.close()
            return


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
        res.wrong += len(want)
        return
    for w, scores in got:
        ok = scores.tobytes() == np.asarray(expected[w], scores.dtype).tobytes()
        res.correct += ok
        res.wrong += not ok
