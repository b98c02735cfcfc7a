"""Replay recordings through a device backend and compare every prediction with the reference.

Segments: a recording is cut at missing samples (NaN in any device channel) and at time gaps
(:func:`sensorbudget.trainer.sensing.recordings.time_gaps`); every piece with at least one full window is a
segment.
Each segment starts with RESET, so the device's window ``m`` (counted from the RESET) covers
segment samples ``[m * hop, m * hop + window)``, and the reference computes the same windows from
the same float32 samples with :class:`~sensorbudget.device_sim.reference.ReferenceModel`.

Samples go out in chunks that end where a window completes (so STATS after the chunk is the cost
of exactly that prediction), at most one request's worth, or one sample per request when a replay
``rate`` paces them in (simulated) real time. The backend keeps up to its ``in_flight`` requests
on the link at once (:meth:`~sensorbudget.device_sim.backends.base.Backend.exchange`, :meth:`~sensorbudget.device_sim.link.
Link.pipeline`), so the replay runs at the device's speed rather than one round trip per
request; a request overtaken by a later one (its frame lost) is recovered like a lost one below,
without counting as a loss.

Accounting: every reference window ends as ``delivered`` (its PUSH answered at the first
attempt), ``retried`` (answered after link retransmissions, or recomputed after a recovery) or
``lost``. When a PUSH stays unanswered after all link retries, the device state is unknown: the
replay RESETs it and resumes at the first unresolved window (``resend=True``: nothing is lost
unless recovery fails) or at the first window after the failed chunk (``resend=False``: the
windows in between are reported lost). More than ``max_losses`` consecutive lost requests mean
the device stopped answering: :class:`~sensorbudget.device_sim.errors.DeviceTimeout`.
"""

from __future__ import annotations

import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from sensorbudget.trainer.sensing.recordings import time_gaps

from .errors import DeviceError, DeviceTimeout
from .link import Overtaken


@dataclass
class PredictionRecord:
    """One reference window and what the device answered for it."""

    recording: str
    segment: int
    window: int              # index within the segment
    end_sample: int          # last sample of the window, index within the recording
    reference: np.ndarray
    status: str = "lost"     # delivered | retried | lost
    scores: np.ndarray | None = None
    extractors: float | None = None    # the window pass (STATS)
    model: float | None = None
    pushes: float | None = None         # storing its new rows (None: the image does not say)
    round_trip_s: float | None = None
    end_time_s: float | None = None     # multi-rate: the window's end in its recording (s)

    @property
    def match(self) -> bool | None:
        """Bit-exact equality with the reference (None when lost)."""
        if self.scores is None:
            return None
        return same_scores(self.scores, self.reference)


@dataclass
class ReplayResult:
    backend: str
    numeric: str
    records: list = field(default_factory=list)
    segments: int = 0
    samples_sent: int = 0
    recoveries: int = 0
    unexpected: int = 0          # predictions the reference has no window for
    late_samples: int = 0        # paced replay: samples sent after their due time
    cost_unit: str | None = None
    link: dict = field(default_factory=dict)
    bench: dict = field(default_factory=dict)

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.records)

    @property
    def mismatches(self) -> int:
        return sum(r.match is False for r in self.records) + self.unexpected


def compute_of(rec) -> float:
    """What one prediction paid: pushes (0 when the image does not say) + extractors + model."""
    return (rec.pushes or 0.0) + rec.extractors + rec.model


def decision_thresholds(model):
    """The bundle's label thresholds in the units of the model's scores (float32, or the
    integer thresholds floor(threshold * 2^G) of the C header, :func:`sensorbudget.export.c_decisions.
    integer_thresholds`), or None unless the bundle is multi-label with a ``decision`` entry."""
    meta = model.meta
    if meta.get("task") != "multilabel" or not meta.get("decision"):
        return None
    return model.thresholds()           # one definition (Reference.thresholds)


def decision_agreement(result: ReplayResult, model) -> dict | None:
    """Calibrated decisions of the device against the reference's, on every window the device
    answered: the device's scores and the reference's scores each turned into 0/1 decisions
    with the bundle's thresholds (label j on when score > threshold j, in the scores' units:
    :func:`decision_thresholds`). {``rule``, ``windows`` compared, ``mismatches`` (windows
    whose decision vectors differ), ``label_mismatches`` (differing (window, label) entries)},
    or None without calibrated thresholds (not multi-label, or no ``decision`` entry)."""
    th = decision_thresholds(model)
    if th is None:
        return None
    got = [r for r in result.records if r.scores is not None]
    if not got:
        return {"rule": str(model.meta["decision"]["rule"]), "windows": 0, "mismatches": 0,
                "label_mismatches": 0}
    device = np.array([np.asarray(r.scores).reshape(-1) for r in got]) > th
    reference = np.array([np.asarray(r.reference).reshape(-1) for r in got]) > th
    differ = device != reference
    return {"rule": str(model.meta["decision"]["rule"]), "windows": len(got),
            "mismatches": int(differ.any(axis=1).sum()), "label_mismatches": int(differ.sum())}


def same_scores(a, b) -> bool:
    """Bit-exact equality: float32 bit patterns, or integer values."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return bool(np.array_equal(a.astype(np.float32).view(np.uint32),
                                   b.astype(np.float32).view(np.uint32)))
    return bool(np.array_equal(a.astype(np.int64), b.astype(np.int64)))


def segments_of(rec, channels: list, sample_rate: float, window: int) -> list:
    """[(first sample, samples (n x channels) float64)] of the usable pieces of a recording."""
    absent = [c for c in channels if c not in rec.columns]
    if absent:
        raise DeviceError(f"recording {rec.name!r} has no channel {absent[0]!r} "
                          f"(columns: {', '.join(rec.columns)})")
    data = np.column_stack([np.asarray(rec.columns[c], dtype=np.float64) for c in channels])
    n = len(data)
    bad = np.isnan(data).any(axis=1)
    gaps = np.asarray(time_gaps(rec, sample_rate), dtype=bool)[:max(0, n - 1)]
    # a piece starts at a usable sample after an unusable one or a gap (or at 0), and stops at
    # the next unusable sample or gap (or at the end)
    after_break = np.ones(n, dtype=bool)
    after_break[1:] = bad[:-1] | gaps
    starts = np.flatnonzero(~bad & after_break)
    cuts = np.append(np.flatnonzero(bad[1:] | gaps) + 1, n)
    stops = cuts[np.searchsorted(cuts, starts, side="right")]
    return [(int(a), data[a:b]) for a, b in zip(starts, stops) if b - a >= window]


class _WireBlocks:
    """A segment's wire samples (``model.wire_samples``), computed a block of rows at a time
    when a request or the reference thread first reaches it (elementwise, so the same values as
    the whole segment's at once; two threads reaching a block together both compute it, the
    same values)."""

    BLOCK = 16384

    def __init__(self, model, samples):
        self.model, self.samples = model, samples
        self.blocks = {}

    def __len__(self) -> int:
        return len(self.samples)

    def _block(self, b: int) -> np.ndarray:
        got = self.blocks.get(b)
        if got is None:
            rows = self.samples[b * self.BLOCK:(b + 1) * self.BLOCK]
            got = self.blocks[b] = self.model.wire_samples(rows)
        return got

    def __getitem__(self, rows: slice) -> np.ndarray:
        start, stop, _ = rows.indices(len(self.samples))
        first, last = start // self.BLOCK, max(start, stop - 1) // self.BLOCK
        if first == last:
            off = first * self.BLOCK
            return self._block(first)[start - off:stop - off]
        return np.concatenate([self[max(start, b * self.BLOCK):min(stop, (b + 1) * self.BLOCK)]
                               for b in range(first, last + 1)])


class _Pacer:
    """Sends sample g no earlier than t0 + g / rate on the injected clock."""

    def __init__(self, rate, clock, sleep):
        self.rate, self.clock, self.sleep = rate, clock, sleep
        self.t0 = None
        self.late = 0

    def wait(self, g: int) -> None:
        if self.rate is None:
            return
        now = self.clock()
        if self.t0 is None:
            self.t0 = now
        due = self.t0 + self.offset(g)
        if now < due:
            self.sleep(due - now)
        elif now > due + 1.0 / self.rate:
            self.late += 1

    def offset(self, g: int) -> float:
        """Seconds from the first sample to sample ``g``."""
        return g / self.rate


class Replayer:
    """Drive one backend through recordings (see the module docstring)."""

    push_kind = "push"           # the request that carries samples (PUSH_SAMPLES)

    def __init__(self, backend, model, *, rate=None, stats=True, resend=True, max_losses=3,
                 clock=time.monotonic, sleep=time.sleep, progress=None):
        self.backend, self.model = backend, model
        self.progress = progress        # progress(samples sent, samples to send) after a push
        self._total = 0
        self.stats, self.resend, self.max_losses = stats, resend, max_losses
        self.clock = clock
        self.pacer = _Pacer(rate, clock, sleep)
        self.result = ReplayResult(backend=backend.name, numeric=model.numeric)
        self._losses = 0
        self._ok = 0
        self._last = None           # the record of the last window a push completed

    def run(self, recordings) -> ReplayResult:
        with ThreadPoolExecutor(max_workers=1) as self._pool:
            return self._run(recordings)

    def _run(self, recordings) -> ReplayResult:
        try:
            info = self.backend.open()
        except DeviceTimeout as exc:
            raise DeviceTimeout(f"the device does not answer (is it running the firmware?): "
                                f"{exc}") from None
        self._check_device(info)
        self.chunk = self.max_push = info.max_push(self.backend.max_request)
        segments = self._segments(recordings)
        self._total = sum(len(segment[-1]) for segment in segments)
        for segment in segments:
            self._segment(*segment)
        res = self.result
        res.late_samples = self.pacer.late
        res.link = self.backend.link_stats()
        return res

    def _check_device(self, info) -> None:
        """DeviceError unless the device's HELLO describes the model."""
        m = self.model
        if (info.k, info.t, info.channels, info.window, info.hop, info.numeric) != (
                m.k, m.t, len(m.channels), m.window, m.hop, m.numeric):
            raise DeviceError(f"the device runs another model: k={info.k} t={info.t} channels="
                              f"{info.channels} window={info.window} hop={info.hop} "
                              f"{info.numeric}; the bundle needs k={m.k} t={m.t} channels="
                              f"{len(m.channels)} window={m.window} hop={m.hop} {m.numeric}")

    def _segments(self, recordings) -> list:
        """[(recording name, first sample, samples)] of every segment (module notes)."""
        m = self.model
        return [(rec.name, first, samples) for rec in recordings.recordings
                for first, samples in segments_of(rec, m.channels, m.sample_rate, m.window)]

    def _lost(self, what: str) -> None:
        self._losses += 1
        if self._losses > self.max_losses:
            done = len(self.result.records) - self.result.count("lost")
            raise DeviceTimeout(f"the device stopped answering ({what}; {self._losses} lost "
                                f"requests in a row, {done} predictions received before)")

    def _grow(self) -> None:
        """After 16 answered pushes in a row, double the chunk again (up to one request)."""
        self._ok += 1
        if self._ok >= 16:
            self.chunk, self._ok = min(self.max_push, self.chunk * 2), 0

    def _reset(self) -> None:
        while True:
            try:
                self.backend.reset()
                return
            except DeviceTimeout:
                self._lost("RESET unanswered")

    def _segment(self, name: str, first: int, samples: np.ndarray) -> None:
        m, res = self.model, self.result
        seg = res.segments
        res.segments += 1
        samples = _WireBlocks(m, samples)
        starts = m.window_starts(len(samples))
        ends = starts + m.window - 1
        # the reference runs on a worker thread while the device does (numpy releases the GIL,
        # the link waits in select): its scores are filled in when the segment is done
        # both threads take the blocks they need (the first to reach one quantises it), so the
        # first request goes out before the whole segment is quantised
        reference = self._pool.submit(lambda: m.scores(m.features_of(samples[:len(samples)])))
        recs = [PredictionRecord(name, seg, i, first + int(e), None) for i, e in enumerate(ends)]
        res.records.extend(recs)
        try:
            self._replay_segment(first, samples, starts, ends, recs)
        finally:
            for rec, scores in zip(recs, reference.result()):
                rec.reference = scores

    def _replay_segment(self, first, samples, starts, ends, recs) -> None:
        """RESET, then the segment's requests; resynchronise after a lost or overtaken one."""
        res = self.result
        self._reset()
        pos, offset, recovered = 0, 0, set()
        while pos < len(samples):
            sent = deque()            # (kind, start, stop, time sent) of unanswered requests
            try:
                answers = self.backend.exchange(self._requests(samples, pos, ends, sent))
                for answer in answers:
                    kind, start, stop, t0 = sent.popleft()
                    if kind == "stats":
                        self._costs(recs, answer)
                        continue
                    self._losses = 0
                    self._grow()
                    res.samples_sent += stop - start
                    if self.progress is not None:
                        self.progress(min(res.samples_sent, self._total), self._total)
                    status = "retried" if self.backend.last_retried else "delivered"
                    self._accept(recs, answer, offset, status, recovered, self.clock() - t0)
                return
            except DeviceTimeout as exc:
                kind, start, stop, _ = sent[0]
                if not isinstance(exc, Overtaken):      # overtaken: resynchronise only
                    self._lost(f"{'PUSH_SAMPLES' if kind == 'push' else 'STATS'} after samples "
                               f"{first + start}..{first + stop - 1}")
                    self.chunk, self._ok = max(1, self.chunk // 2), 0  # small frames survive
                self._reset()
                res.recoveries += 1
                pending = [r.window for r in recs if r.scores is None]
                if self.resend:     # recompute the windows the lost chunk would have finished
                    resume = pending[0] if pending else len(recs)
                    recovered.update(w for w in pending if ends[w] < stop)
                else:
                    resume = int(np.searchsorted(starts, stop))
                if resume >= len(recs):
                    return
                pos, offset = int(starts[resume]), resume

    def _requests(self, samples, pos: int, ends, sent: deque):
        """The requests of a segment from sample ``pos`` on: pushes that end where a window
        completes (so a STATS after one is the cost of exactly that window's prediction), of at
        most one request's worth (``self.chunk``, read as each is made), or one sample when a
        ``rate`` paces them; each is listed in ``sent`` as it is made."""
        n, paced = len(samples), self.pacer.rate is not None
        g = self.result.samples_sent
        while pos < n:
            nxt = int(np.searchsorted(ends, pos))
            stop = int(ends[nxt]) + 1 if nxt < len(ends) else n
            stop = min(stop, pos + (1 if paced else self.chunk))
            self.pacer.wait(g)
            sent.append(("push", pos, stop, self.clock()))
            yield self.push_kind, samples[pos:stop]
            if self.stats and nxt < len(ends) and stop == int(ends[nxt]) + 1:
                sent.append(("stats", pos, stop, self.clock()))
                yield "stats", None
            g += stop - pos
            pos = stop

    def _accept(self, recs, preds, offset, status, recovered, rtt) -> None:
        self._last = None
        for window, scores in preds:
            i = offset + int(window)
            if not 0 <= i < len(recs) or recs[i].scores is not None:
                self.result.unexpected += 1
                continue
            got = self._last = recs[i]
            got.scores, got.round_trip_s = scores, rtt
            got.status = "retried" if i in recovered else status

    def _costs(self, recs, cost) -> None:
        """A STATS answer (unit, extractors, model, pushes): the cost of the last window the
        push before it completed."""
        if cost is not None and self._last is not None:
            unit, ext, model, pushes = cost
            self.result.cost_unit = unit
            self._last.extractors, self._last.model = float(ext), float(model)
            self._last.pushes = None if pushes is None else float(pushes)


def replay(backend, model, recordings, **options) -> ReplayResult:
    """Replay ``recordings`` (a RecordingSet) through ``backend``; see :class:`Replayer`."""
    return Replayer(backend, model, **options).run(recordings)
