"""Replay parity on real recordings (python backend) and the replay's segmentation rules."""

import numpy as np
import pytest

from sensorbudget.device_sim.backends import PythonBackend
from sensorbudget.device_sim.replay import replay, same_scores, segments_of
from sensorbudget.device_sim.transports import FakeClock
from sensorbudget.trainer.bundle.model import load_bundle
from sensorbudget.trainer.sensing.feature_set import load_feature_set

from .conftest import AIR_SENSORS, MOTIONS_SENSORS, model_of, recordings_of, write_tiny


@pytest.mark.parametrize("numeric", ["float32", "q15", "q31"])
def test_python_backend_matches_reference_on_basic_motions(motions, numeric):
    bundle, recs = motions
    model = model_of(bundle, numeric, full_scale={"*": 64.0} if numeric != "float32" else None)
    res = replay(PythonBackend(model), model, recordings_of(recs, model))
    assert len(res.records) == 40 * 9                    # 40 recordings x 9 windows
    assert res.count("delivered") == 360 and res.mismatches == 0
    assert res.link["lost"] == 0 and res.link["retransmissions"] == 0


def test_device_features_equal_the_trainers_features(motions):
    """Independent check of the reference: the float32 windows the device computes are the
    trainer's feature table, column for column, bit for bit."""
    bundle, recs = motions
    model = model_of(bundle)
    fs = load_feature_set(recs, MOTIONS_SENSORS)
    meta = load_bundle(bundle).meta
    cols = [fs.feature_names.index(f) for f in meta["selected"]]
    rset = recordings_of(recs, model)
    rows = []
    for rec in rset.recordings:
        ((first, samples),) = segments_of(rec, model.channels, model.sample_rate, model.window)
        assert first == 0
        rows.append(model.features_of(model.wire_samples(samples)))
    X = np.concatenate(rows)
    assert X.shape == (len(fs.X), model.k)
    assert np.array_equal(X.view(np.uint32), fs.X[:, cols].view(np.uint32))


def test_air_quality_stream_is_cut_at_missing_hours(air):
    bundle, stream = air
    model = model_of(bundle)
    rset = recordings_of(stream, model)
    pieces = segments_of(rset.recordings[0], model.channels, model.sample_rate, model.window)
    assert len(pieces) > 1
    for first, samples in pieces:
        assert not np.isnan(samples).any() and len(samples) >= model.window
    res = replay(PythonBackend(model), model, rset, stats=False)
    assert res.mismatches == 0 and res.count("lost") == 0
    # every window of the training table is replayed, with the same features
    fs = load_feature_set(stream, AIR_SENSORS)
    meta = load_bundle(bundle).meta
    cols = [fs.feature_names.index(f) for f in meta["selected"]]
    ends = {r.end_sample for r in res.records}
    assert set((fs.window_start + fs.window - 1).tolist()) <= ends
    by_end = {}
    for first, samples in pieces:
        X = model.features_of(model.wire_samples(samples))
        for i, x in enumerate(X):
            by_end[first + i * model.hop + model.window - 1] = x
    X_dev = np.array([by_end[s + fs.window - 1] for s in fs.window_start])
    assert np.array_equal(X_dev.view(np.uint32), fs.X[:, cols].view(np.uint32))


def test_segments_split_at_missing_samples_and_gaps(tmp_path, tiny):
    model = model_of(tiny[0])
    path = write_tiny(tmp_path, n=60, nan_at=(20,))
    text = path.read_text().splitlines()
    # a time gap after sample 40: shift the later time stamps by 1 s
    rows = [text[0]] + [r if i <= 40 else f"{float(r.split(',')[0]) + 1:.2f}," + r.split(",", 1)[1]
                        for i, r in enumerate(text[1:])]
    path.write_text("\n".join(rows) + "\n")
    rec = recordings_of(path, model).recordings[0]
    pieces = segments_of(rec, ["ax", "t"], model.sample_rate, model.window)
    assert [(first, len(s)) for first, s in pieces] == [(0, 20), (21, 20), (41, 19)]


def _segments_loop(data, gaps, window):
    """The segmentation rule sample by sample (the reference of the vectorised segments_of)."""
    pieces, start = [], None
    for i in range(len(data)):
        if np.isnan(data[i]).any() or (start is not None and gaps[i - 1]):
            if start is not None and i - start >= window:
                pieces.append((start, len(data[start:i])))
            start = None if np.isnan(data[i]).any() else i
        elif start is None:
            start = i
    if start is not None and len(data) - start >= window:
        pieces.append((start, len(data) - start))
    return pieces


@pytest.mark.parametrize("seed", range(6))
def test_segments_of_is_the_sample_by_sample_rule(seed):
    """Seeded recordings with runs of NaN (in any channel) and time gaps, at any position
    (first and last sample included) against the loop that states the rule."""
    from sensorbudget.trainer.sensing.recordings import Recording

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    data = rng.normal(size=(n, 3))
    for _ in range(int(rng.integers(0, 12))):
        a = int(rng.integers(0, max(1, n)))
        data[a:a + int(rng.integers(1, 6)), int(rng.integers(0, 3))] = np.nan
    steps = np.full(max(0, n - 1), 0.01)
    steps[rng.random(len(steps)) < 0.03] = 0.5               # gaps
    rec = Recording(f"r{seed}", np.concatenate([[0.0], np.cumsum(steps)])[:n],
                    {c: data[:, j] for j, c in enumerate("xyz")})
    window = int(rng.integers(1, 30))
    got = segments_of(rec, ["x", "y", "z"], 100.0, window)
    assert [(first, len(piece)) for first, piece in got] == _segments_loop(data, steps > 0.1,
                                                                           window)
    for first, piece in got:
        assert np.array_equal(piece, data[first:first + len(piece)])


def test_tiny_stream_parity_and_accounting(tiny):
    bundle, rec, _ = tiny
    model = model_of(bundle)
    res = replay(PythonBackend(model), model, recordings_of(rec, model))
    n = len(res.records)
    assert n == res.count("delivered") + res.count("retried") + res.count("lost")
    assert res.segments == 2 and res.mismatches == 0
    assert all(r.extractors is not None and r.model is not None for r in res.records)


def test_paced_replay_follows_the_rate_on_the_injected_clock(tiny):
    bundle, rec, _ = tiny
    model = model_of(bundle)
    clock = FakeClock()
    res = replay(PythonBackend(model, clock=clock, sleep=clock.advance), model,
                 recordings_of(rec, model), rate=40.0, clock=clock, sleep=clock.advance)
    assert res.mismatches == 0 and res.late_samples == 0
    assert clock() == pytest.approx((res.samples_sent - 1) / 40.0)


def test_same_scores_is_bitwise():
    a = np.array([0.1, -0.0], np.float32)
    assert same_scores(a, a.copy()) and not same_scores(a, np.array([0.1, 0.0], np.float32))
    assert same_scores(np.array([3, -4], np.int32), np.array([3, -4], np.int64))



@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_wire_blocks_are_the_segment_quantised_at_once(tiny, numeric, monkeypatch):
    """The replay quantises a segment a block at a time as its requests reach it: any slice
    (across blocks, going back, empty) equals that slice of the whole segment's wire samples."""
    from sensorbudget.device_sim import replay as replay_module

    monkeypatch.setattr(replay_module._WireBlocks, "BLOCK", 7)
    model = model_of(tiny[0], numeric, full_scale={"*": 4.0} if numeric != "float32" else None)
    rng = np.random.default_rng(3)
    raw = rng.normal(scale=3.0, size=(100, len(model.channels)))
    raw[rng.random(raw.shape) < 0.05] *= 10                     # clamped in Q15
    whole = model.wire_samples(raw)
    blocks = replay_module._WireBlocks(model, raw)
    assert len(blocks) == len(whole)
    for _ in range(200):
        a = int(rng.integers(0, 101))
        b = int(rng.integers(a, 101))
        got = blocks[a:b]
        assert got.dtype == whole.dtype and np.array_equal(got, whole[a:b])
