"""The pure-Python device speaks PROTOCOL.md: HELLO, windows, retry cache, errors, limits."""

import struct

import numpy as np
import pytest

from sensorbudget.device_sim.client import DeviceClient, decode_predictions
from sensorbudget.device_sim.fake import FakeDevice
from sensorbudget.device_sim.link import Link
from sensorbudget.device_sim.protocol import Cmd, Err, FrameDecoder, ProtocolError, encode_frame
from sensorbudget.device_sim.transports import FakeClock, MemoryTransport

from .conftest import model_of


@pytest.fixture
def model(tiny):
    return model_of(tiny[0])


def ask(device, seq, cmd, payload=b""):
    (answer,) = FrameDecoder().feed(device.feed(encode_frame(seq, cmd, payload)))
    return answer


def client_for(device):
    clock = FakeClock()
    return DeviceClient(Link(MemoryTransport(device, sleep=clock.advance), clock=clock))


def test_hello_describes_the_model(model):
    info = client_for(FakeDevice(model, name="tiny")).hello()
    assert (info.version, info.numeric, info.k, info.t) == (2, "float32", model.k, model.t)
    assert (info.channels, info.window, info.hop, info.name) == (len(model.channels), 8, 4, "tiny")


def test_windows_complete_every_hop_after_the_first_window(model):
    client = client_for(FakeDevice(model))
    client.hello()
    rng = np.random.default_rng(1)
    samples = rng.normal(size=(21, len(model.channels)))
    got = client.push(samples[:7]) + client.push(samples[7:21])
    assert [w for w, _ in got] == [0, 1, 2, 3]            # ends at samples 7, 11, 15, 19
    ref = model.scores(model.features_of(model.wire_samples(samples)))
    assert np.array_equal(np.array([s for _, s in got]), ref)
    client.reset()
    assert [w for w, _ in client.push(samples[:8])] == [0]


def test_identical_retry_is_answered_from_the_cache(model):
    dev = FakeDevice(model)
    payload = struct.pack("<H", 8) + np.zeros((8, len(model.channels)), "<f4").tobytes()
    first = ask(dev, 5, Cmd.PUSH_SAMPLES, payload)
    again = ask(dev, 5, Cmd.PUSH_SAMPLES, payload)
    assert first == again and dev.count == 8 and dev.executed == 1
    # same seq but another frame (CRC differs): refused as stale, not executed
    assert ask(dev, 5, Cmd.PUSH_SAMPLES, struct.pack("<H", 0))[1:] == (
        Cmd.ERROR, bytes([Cmd.PUSH_SAMPLES, Err.STALE, 5, 0]))
    assert dev.executed == 1


def test_each_seq_is_executed_at_most_once(model):
    """Late duplicates and reordered requests (the v1 drift): older seqs are refused."""
    dev = FakeDevice(model)
    n_ch = len(model.channels)
    pushes = [struct.pack("<H", 4) + np.full((4, n_ch), i, "<f4").tobytes() for i in range(4)]
    frames = [encode_frame(10 + i, Cmd.PUSH_SAMPLES, p) for i, p in enumerate(pushes)]
    dev.feed(frames[0] + frames[1])
    answers = FrameDecoder().feed(dev.feed(frames[0] + frames[1] + frames[3] + frames[2]))
    assert [(s, c) for s, c, _ in answers] == [(10, Cmd.ERROR), (11, Cmd.PUSH_SAMPLES | 0x80),
                                                (13, Cmd.PUSH_SAMPLES | 0x80), (12, Cmd.ERROR)]
    assert answers[0][2] == bytes([Cmd.PUSH_SAMPLES, Err.STALE, 11, 0])
    assert dev.executed == 3 and dev.count == 12           # 10, 11, 13: each once
    # serial number arithmetic: after 65535 comes 0
    dev2 = FakeDevice(model)
    ask(dev2, 65535, Cmd.STATS)
    assert ask(dev2, 0, Cmd.STATS)[1] == Cmd.STATS | 0x80
    assert ask(dev2, 65535, Cmd.STATS)[1] == Cmd.ERROR


def test_a_frame_of_another_protocol_version_is_refused(model):
    dev = FakeDevice(model)
    (answer,) = FrameDecoder().feed(dev.feed(encode_frame(3, Cmd.RESET, version=3)))
    assert answer == (3, Cmd.ERROR, bytes([Cmd.RESET, Err.BAD_VERSION])) and dev.executed == 0


def test_errors(model):
    dev = FakeDevice(model)
    assert ask(dev, 1, 0x33)[1:] == (Cmd.ERROR, bytes([0x33, Err.UNKNOWN_COMMAND]))
    assert ask(dev, 2, Cmd.PUSH_SAMPLES, b"\x02\x00abc")[2] == bytes([2, Err.BAD_LENGTH])
    assert ask(dev, 3, Cmd.BENCH, struct.pack("<IB", 0, 0))[2] == bytes([4, Err.BAD_VALUE])
    with pytest.raises(ProtocolError, match="rejected BENCH: BAD_VALUE"):
        client_for(FakeDevice(model)).link.request(Cmd.BENCH, struct.pack("<IB", 1, 7))


def test_response_limit_refuses_before_consuming(model):
    dev = FakeDevice(model, max_response=2 + (4 + 4 * model.t))      # one prediction per answer
    n_ch = len(model.channels)
    payload = struct.pack("<H", 12) + np.zeros((12, n_ch), "<f4").tobytes()   # would finish 2
    assert ask(dev, 1, Cmd.PUSH_SAMPLES, payload)[2] == bytes([2, Err.BAD_LENGTH])
    assert dev.count == 0
    _, cmd, data = ask(dev, 2, Cmd.PUSH_SAMPLES, struct.pack("<H", 8) + bytes(8 * n_ch * 4))
    assert cmd == Cmd.PUSH_SAMPLES | 0x80 and len(decode_predictions(data, model.t, "<f4")) == 1


def test_predict_bench_stats_quit(model):
    dev = FakeDevice(model, costs=(120, 30))
    client = client_for(dev)
    client.hello()
    x = np.arange(model.k, dtype=np.float32)
    assert np.array_equal(client.predict(x), model.scores_of_inputs(x)[0])
    assert client.bench(10, "model") == ("instructions", 300)
    assert client.stats() == ("instructions", 120, 30, None)   # as an image before pushes
    client.quit(3)
    assert dev.exit_code == 3


def test_fixed_point_device_takes_q15_samples(tiny):
    model = model_of(tiny[0], "q15", full_scale={"*": 64.0})
    client = client_for(FakeDevice(model))
    info = client.hello()
    assert info.numeric == "q15" and info.sample_dtype == np.int16
    samples = np.random.default_rng(2).normal(size=(16, len(model.channels))) * 5
    got = client.push(model.wire_samples(samples))
    ref = model.scores(model.features_of(model.wire_samples(samples)))
    assert [w for w, _ in got] == [0, 1, 2] and got[0][1].dtype == np.int32
    assert np.array_equal(np.array([s for _, s in got]), ref)
