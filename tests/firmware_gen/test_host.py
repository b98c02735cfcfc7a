"""Host firmware on a pty against the Python reference, on the real recordings: float32
bit-exact (extractors and model), fixed point exactly equal to the integer model."""

import struct

import numpy as np
import pytest

from sensorbudget.device_sim.protocol import Cmd, Err, Unit
from sensorbudget.firmware_gen import reference
from tests.export.helpers import float32_sequential
from tests.firmware_gen.conftest import AIR_QUALITY, bm_full_scale
from tests.firmware_gen.helpers import (
    device_samples,
    expect_error,
    predict,
    push_samples,
    same_bits,
)

#: one recording of each BasicMotions class
BM_RECORDINGS = (0, 10, 20, 30)


def check_stream(built, columns, per_request=7):
    """Push one recording; compare window indices, scores (and features) with the reference."""
    plan = built.plan
    samples = device_samples(plan, columns)
    features, _, expected = reference.stream(plan, built.bundle, samples)
    with built.start() as dev:
        dev.call(Cmd.RESET)
        windows, scores = push_samples(dev, plan, samples, per_request)
    assert windows == list(range(len(expected)))
    assert same_bits(scores, np.asarray(expected).astype(scores.dtype))
    if plan.fixed:
        assert np.array_equal(scores.astype(np.int64), expected)
    return features, scores


@pytest.mark.parametrize("numeric", ["float32", "q15", "q31"])
def test_every_extractor_kind_on_basic_motions(firmware, kinds_bundle, bm_recordings, numeric):
    built = firmware(kinds_bundle, "host", numeric, full_scale=bm_full_scale(bm_recordings))
    for r in BM_RECORDINGS:
        check_stream(built, bm_recordings.recordings[r].columns)


def test_float32_equals_the_trainers_features_and_numpy(firmware, bm_bundle, bm_features,
                                                         bm_recordings):
    built = firmware(bm_bundle, "host")
    sel = bm_bundle.selected_index
    for r in BM_RECORDINGS:
        features, scores = check_stream(built, bm_recordings.recordings[r].columns)
        rows = bm_features.groups == r
        trainer_X = bm_features.X[rows][:, sel]
        assert same_bits(features, trainer_X)          # C extractors == trainer.sensing.extractors
        assert same_bits(scores, float32_sequential(bm_bundle.W, bm_bundle.b, trainer_X))


def clean_segment(columns, channels, length):
    """Start of the first ``length`` samples without a missing value in ``channels``."""
    bad = np.isnan(np.column_stack([columns[c] for c in channels])).any(axis=1)
    cum = np.concatenate([[0], np.cumsum(bad)])
    return int(np.flatnonzero(cum[length:] - cum[:-length] == 0)[0])


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_air_quality_stream(firmware, aq_bundle, aq_features, numeric):
    from sensorbudget.trainer.sensing.recordings import load_recordings

    columns = load_recordings(AIR_QUALITY, aq_features.sample_rate).recordings[0].columns
    built = firmware(aq_bundle, "host", numeric)
    start = clean_segment(columns, built.plan.channels, 400)
    segment = {c: v[start:start + 400] for c, v in columns.items()}
    features, scores = check_stream(built, segment, 50)
    assert len(scores) == 395
    if numeric == "float32":
        # the trainer drops windows whose targets are missing; compare the ones it kept
        rows = (aq_features.window_start >= start) & (aq_features.window_start < start + 395)
        assert rows.sum() > 300
        assert same_bits(features[aq_features.window_start[rows] - start],
                         aq_features.X[rows][:, aq_bundle.selected_index])


@pytest.mark.parametrize("numeric", ["float32", "q15", "q31"])
def test_predict_matches_the_model_on_extreme_inputs(firmware, bm_bundle, bm_recordings,
                                                    numeric):
    built = firmware(bm_bundle, "host", numeric, full_scale=bm_full_scale(bm_recordings))
    plan, fx = built.plan, built.firmware.header.fixed
    rng = np.random.default_rng(0)
    if fx is None:
        X = (rng.normal(size=(40, plan.k)) * 10).astype(np.float32)
    else:
        q = fx.fmt.qmax
        X = rng.integers(-q, q + 1, size=(40, plan.k))
        X[:4] = [[q] * plan.k, [-q] * plan.k, [0] * plan.k, [q, -q] * (plan.k // 2)]
    expected = reference.scores(plan, bm_bundle, fx, X)
    with built.start() as dev:
        got = np.array([predict(dev, plan, x) for x in X])
    assert same_bits(got, np.asarray(expected).astype(got.dtype))


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_unrolled_kernel_equals_the_header_loop(firmware, bm_bundle, bm_recordings, numeric):
    fs = bm_full_scale(bm_recordings)
    loop = firmware(bm_bundle, "host", numeric, kernel="loop", full_scale=fs)
    unrolled = firmware(bm_bundle, "host", numeric, kernel="unrolled", full_scale=fs)
    assert "sbmodel_predict" in loop.firmware.files["sbmodel_kernel.h"]
    samples = device_samples(loop.plan, bm_recordings.recordings[5].columns)
    outputs = []
    for built in (loop, unrolled):
        with built.start() as dev:
            outputs.append(push_samples(dev, built.plan, samples, 25)[1])
    assert same_bits(outputs[0], outputs[1])


def test_protocol_commands(firmware, bm_bundle, bm_recordings):
    built = firmware(bm_bundle, "host")
    plan = built.plan
    samples = device_samples(plan, bm_recordings.recordings[0].columns)
    with built.start() as dev:
        hello = dev.call(Cmd.HELLO)
        assert struct.unpack_from("<BBHHHHH", hello) == (2, 0, plan.k, plan.t, 6, 20, 10)
        assert hello[12:] == b"sbmodel"
        assert struct.unpack("<BIII", dev.call(Cmd.STATS)) == (Unit.NANOSECONDS, 0, 0, 0)
        windows, _ = push_samples(dev, plan, samples[:35], 35)
        assert windows == [0, 1]
        unit, extract_ns, model_ns, _ = struct.unpack("<BIII", dev.call(Cmd.STATS))
        assert unit == Unit.NANOSECONDS and extract_ns > 0
        unit, total = dev.bench(1000, 0)
        assert unit == Unit.NANOSECONDS and total > 0
        expect_error(dev, Cmd.BENCH, struct.pack("<IB", 0, 0), Err.BAD_VALUE)
        expect_error(dev, Cmd.BENCH, struct.pack("<IB", 5, 2), Err.BAD_VALUE)
        expect_error(dev, Cmd.BENCH, b"\x01", Err.BAD_LENGTH)
        # windows continue across requests; RESET starts a new recording
        assert push_samples(dev, plan, samples[35:50], 15)[0] == [2, 3]
        dev.call(Cmd.RESET)
        assert push_samples(dev, plan, samples[:20], 20)[0] == [0]
        assert dev.quit(42) == 42


def test_malformed_frames_are_rejected(firmware, bm_bundle):
    from sensorbudget.device_sim.protocol import cobs_encode, encode_body, encode_frame

    built = firmware(bm_bundle, "host")
    good = encode_frame(7, Cmd.HELLO)
    bad_crc = bytearray(encode_frame(8, Cmd.HELLO))
    bad_crc[-2] ^= 0xFF
    bad_cobs = b"\x00\x09\x02\x08\x00"                 # a block longer than the frame
    short = b"\x00" + cobs_encode(encode_body(9, Cmd.HELLO)[:7]) + b"\x00"
    with built.start() as dev:
        # garbage, a bad CRC, bad COBS, a body too short, a truncated frame: no answer to any
        dev.write(b"\xff\xa5\xa5garbage" + bytes(bad_crc) + bad_cobs + short
                  + encode_frame(10, Cmd.STATS)[:-3] + good)
        frames = dev.frames(2.0, count=2)
        assert [(seq, cmd) for seq, cmd, _ in frames] == [(7, Cmd.HELLO | 0x80)]
        # a frame of another protocol version is refused, not executed
        dev.write(encode_frame(11, Cmd.RESET, version=3))
        assert dev.frames(2.0) == [(11, Cmd.ERROR, bytes([Cmd.RESET, Err.BAD_VERSION]))]
        dev.seq = 12
        expect_error(dev, 0x42, b"", Err.UNKNOWN_COMMAND)
        expect_error(dev, Cmd.PREDICT, b"\x00" * 3, Err.BAD_LENGTH)
        expect_error(dev, Cmd.PUSH_SAMPLES, struct.pack("<H", 2) + b"\x00" * 24, Err.BAD_LENGTH)
        expect_error(dev, Cmd.PUSH_SAMPLES, b"\x01", Err.BAD_LENGTH)
        expect_error(dev, Cmd.HELLO, b"\x00", Err.BAD_LENGTH)
        expect_error(dev, Cmd.QUIT, b"", Err.BAD_LENGTH)
        assert dev.call(Cmd.HELLO)[12:] == b"sbmodel"      # still alive
        assert dev.quit(0) == 0


def test_retries_get_the_cached_answer_without_executing_twice(firmware, bm_bundle,
                                                               bm_recordings):
    built = firmware(bm_bundle, "host")
    plan = built.plan
    samples = device_samples(plan, bm_recordings.recordings[3].columns)
    payload = struct.pack("<H", 20) + np.ascontiguousarray(samples[:20]).tobytes()
    with built.start() as dev:
        first = dev.request(Cmd.PUSH_SAMPLES, payload, seq=5)
        again = dev.request(Cmd.PUSH_SAMPLES, payload, seq=5)     # a host retry
        assert first == again and struct.unpack_from("<H", first[1]) == (1,)
        # not executed twice: the next 10 samples complete window 1, not window 3
        dev.seq = 6
        windows, _ = push_samples(dev, plan, samples[20:30], 10)
        assert windows == [1]
        # the same seq with another request, and an older seq, are refused (not executed)
        assert dev.request(Cmd.STATS, seq=6) == (Cmd.ERROR, bytes([Cmd.STATS, Err.STALE, 6, 0]))
        late = dev.request(Cmd.PUSH_SAMPLES, payload, seq=5)     # a late duplicate
        assert late == (Cmd.ERROR, bytes([Cmd.PUSH_SAMPLES, Err.STALE, 6, 0]))
        assert push_samples(dev, plan, samples[30:40], 10)[0] == [2]


def test_frames_longer_than_the_receive_buffer(firmware, bm_bundle, bm_recordings):
    """A valid frame too long for the device (AVR-sized buffers): BAD_LENGTH, still in sync."""
    built = firmware(bm_bundle, "host", make_vars={"RX_PAYLOAD": 64})
    plan = built.plan
    samples = device_samples(plan, bm_recordings.recordings[1].columns)
    with built.start() as dev:
        expect_error(dev, Cmd.PREDICT, b"\xa5\x5a" * 150, Err.BAD_LENGTH)
        expect_error(dev, 0x55, b"\x00" * 100, Err.UNKNOWN_COMMAND)
        expect_error(dev, Cmd.PUSH_SAMPLES, struct.pack("<H", 3)
                     + np.ascontiguousarray(samples[:3]).tobytes(), Err.BAD_LENGTH)
        assert push_samples(dev, plan, samples[:20], 2)[0] == [0]
        assert dev.call(Cmd.HELLO)[12:] == b"sbmodel"


def test_answers_longer_than_the_transmit_buffer(firmware, bm_bundle, bm_recordings):
    """A push whose answer would not fit is refused before any sample is consumed."""
    built = firmware(bm_bundle, "host", make_vars={"TX_PAYLOAD": 40})
    plan = built.plan
    samples = device_samples(plan, bm_recordings.recordings[1].columns)
    with built.start() as dev:
        # 30 samples complete windows 0 and 1: 2 + 2 x (4 + 4 x 4) = 42 bytes > 40
        expect_error(dev, Cmd.PUSH_SAMPLES, struct.pack("<H", 30)
                     + np.ascontiguousarray(samples[:30]).tobytes(), Err.BAD_LENGTH)
        assert push_samples(dev, plan, samples[:30], 20)[0] == [0, 1]


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_feature_table_firmware_takes_the_feature_vector(firmware, tmp_path, numeric):
    """A bundle trained on a plain table: HELLO says window 1, hop 1 and one channel per
    feature; each pushed feature vector is one prediction, equal to the reference (float32
    bit for bit, fixed point exactly) and, in float32, to numpy's model on the features."""
    from tests.export.helpers import synthetic_bundle

    bundle, X = synthetic_bundle(tmp_path, "multiclass", d=10, t=3, budget=4)
    built = firmware(bundle, "host", numeric)
    plan = built.plan
    values = np.asarray(X, dtype=np.float64)[:60, bundle.meta["selected_index"]]
    samples = device_samples(plan, {c: values[:, i] for i, c in enumerate(plan.channels)})
    features, inputs, expected = reference.stream(plan, bundle, samples)
    with built.start() as dev:
        hello = dev.call(Cmd.HELLO)
        assert struct.unpack_from("<HHHHH", hello, 2) == (plan.k, plan.t, plan.k, 1, 1)
        windows, scores = push_samples(dev, plan, samples, 9)
        got = np.array([predict(dev, plan, x) for x in inputs[:5]])
    assert windows == list(range(60))
    assert same_bits(scores, np.asarray(expected).astype(scores.dtype))
    assert same_bits(got, np.asarray(expected[:5]).astype(got.dtype))
    if numeric == "float32":
        assert same_bits(features, values.astype(np.float32))
        assert same_bits(scores, float32_sequential(bundle.W, bundle.b, values))
