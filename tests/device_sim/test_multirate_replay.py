"""Multi-rate replay (issue 30 item 3) on the python backend: the event order and window
completions against slow definitions, the device's predictions against the trainer's features,
the protocol's multi-rate commands, the report's rates and energy, CLI against the Python API,
a faulty link, missing samples and bad recordings."""

from __future__ import annotations

import json
import struct
from fractions import Fraction
from functools import partial

import numpy as np
import pytest
from click.testing import CliRunner

import sensorbudget as sb
from sensorbudget.device_sim.client import DeviceInfo, parse_hello, parse_sensors
from sensorbudget.device_sim.fake_multirate import FakeMultiRateDevice
from sensorbudget.device_sim.backends import PythonBackend
from sensorbudget.device_sim.multirate import (
    EventStream,
    MultiRateModel,
    MultiRateReplayer,
    multirate_segments,
)
from sensorbudget.device_sim.protocol import Cmd, Err, FrameDecoder, encode_frame
from sensorbudget.device_sim.simulate import simulate
from sensorbudget.device_sim.transports import FakeClock, FaultyTransport
from sensorbudget.trainer.bundle.model import load_bundle
from sensorbudget.trainer.sensing.recordings import load_recordings

from .multirate_data import SENSORS_TOML, train_multirate, write_multirate_set


@pytest.fixture(scope="session")
def watch(tmp_path_factory):
    """(bundle dir, TRAIN set, TEST set) of the two-sensor multi-rate BasicMotions set."""
    return train_multirate(tmp_path_factory.mktemp("watch"))


def model_of(bundle, numeric="float32"):
    return MultiRateModel(load_bundle(bundle), numeric)


def first_segment(watch, numeric="float32", with_rows=False):
    bundle, train, _ = watch
    model = model_of(bundle, numeric)
    rec = load_recordings(train, model.sample_rate).recordings[0]
    k0, streams, _, _, phases = multirate_segments(rec, model)[0]
    return (model, k0, streams, phases, rec) if with_rows else (model, k0, streams)


def test_the_bundle_has_sensors_and_groups_at_several_rates(watch):
    """The set exercises interleaving: two sensors pushed at different rates, one of them
    also decimated in the device."""
    model = model_of(watch[0])
    rates = {s.name: s.rate_hz for s in model.plan.sensors}
    assert rates == {"accel": 10.0, "gyro": 5.0}
    assert {(model.plan.sensors[g.sensor].name, g.factor) for g in model.plan.groups} == {
        ("accel", 1), ("accel", 4), ("gyro", 1)}


def test_events_go_in_the_recordings_time_order_and_windows_complete_where_a_slow_loop_says(
        watch):
    """The order of the recording's own time stamps (each pushed sample is a row of the
    table: the accelerometer at 0.1 i s, the gyroscope at 0.05 + 0.2 i s), and each window
    complete at the first prefix of events holding every sample its groups read."""
    model, _, streams, phases, rec = first_segment(watch, with_rows=True)
    wire = model.wire_streams(streams)
    events = EventStream(model, wire, phases)
    p = model.plan
    assert events.phases == phases and phases["gyro"] == pytest.approx(0.25)
    rows = {s.name: rec.time[~np.isnan(rec.columns[s.channels[0]])] for s in p.sensors}
    slow = sorted((float(rows[s.name][i]), si, i) for si, s in enumerate(p.sensors)
                  for i in range(len(wire[s.name])))
    got, pos = [], 0
    for _ in range(len(events)):
        s = events.data[pos]
        n = 1 + len(p.sensors[s].channels) * wire[p.sensors[s].name].dtype.itemsize
        got.append((s, bytes(events.data[pos + 1:pos + n])))
        pos += n
    count = {si: 0 for si in range(len(p.sensors))}
    for (s, values), (_, si, i) in zip(got, slow):
        assert s == si and values == wire[p.sensors[si].name][i].tobytes()
        count[si] += 1
    assert len(got) == len(slow) and pos == len(events.data)
    # slow completion: the first prefix of events holding every sample each group reads in m
    have = [[] for _ in p.sensors]
    ends = []
    for e, (_, si, i) in enumerate(slow):
        have[si].append(i)
        while all(all(idx in set(have[g.sensor]) for idx in
                      (np.arange(g.plan.window) + len(ends) * g.plan.hop) * g.factor)
                  for g in p.groups):
            ends.append(e)
    assert list(events.ends) == ends and len(ends) == 11
    # each window's first event: the first sample of the window of any sensor
    for m, start in enumerate(events.starts):
        assert start == next(e for e, (_, si, i) in enumerate(slow)
                             if i >= m * model.sensors[si].hop)
    assert np.allclose(events.times, [t for t, _, _ in slow], atol=1e-9)   # the pacing


def test_a_phase_that_breaks_the_resend_suffix_falls_back_to_the_nominal_order(watch):
    """A gyroscope stamped 0.6 of its period early would put its first sample of window m
    (at 0.8 m - 0.12 s) before the accelerometer's last sample before it (0.8 m - 0.1 s), so a
    resend from window m would not be a suffix: the events then go in nominal order (i /
    rate), for which it always is; a phase that keeps both is kept."""
    model, _, streams = first_segment(watch)
    wire = model.wire_streams(streams)
    nominal = EventStream(model, wire)
    early = EventStream(model, wire, {"accel": 0.0, "gyro": -0.6})
    assert early.phases == {} and early.data == nominal.data
    assert list(early.starts) == list(nominal.starts) and list(early.ends) == list(nominal.ends)
    kept = EventStream(model, wire, {"accel": 0.0, "gyro": 0.25})
    assert kept.phases == {"accel": 0.0, "gyro": 0.25}
    assert np.allclose(kept.times - nominal.times, np.where(
        np.array([b == 1 for b in _sensors_of(kept, model)]), 0.25 / 5, 0.0))


def _sensors_of(events, model) -> list:
    """The sensor index of each event of an EventStream, read from its bytes."""
    out, pos = [], 0
    for _ in range(len(events)):
        s = events.data[pos]
        out.append(s)
        pos += 1 + model.sensors[s].channels * model.sample_dtype.itemsize
    return out


def test_device_predictions_equal_the_model_on_the_trainers_features(watch, tmp_path):
    """Independent reference: the features the trainer computed for the bundle
    (``sensorbudget features``, rates.py) through the float32 model give bit for bit the
    scores the device answered for each window."""
    bundle, train, _ = watch
    (tmp_path / "s.toml").write_text(SENSORS_TOML)
    data = sb.features(str(train), sensors=str(tmp_path / "s.toml"))
    b = load_bundle(bundle)
    cols = [list(data.feature_names).index(f) for f in b.meta["selected"]]
    X = np.asarray(data.X, dtype=np.float32)[:, cols]
    W, bias = np.asarray(b.W, dtype=np.float32), np.asarray(b.b, dtype=np.float32)
    expect = np.repeat(bias[None, :], len(X), axis=0)
    for i in range(W.shape[0]):                 # the C header's sequential float32 sums
        expect = expect + X[:, i:i + 1] * W[i]
    report, result = simulate(bundle, train, backend="python")
    got = np.array([r.scores for r in result.records])
    assert report["predictions"] == len(X) == 440 and report["mismatches"] == 0
    assert np.array_equal(got.view(np.uint32), expect.astype(np.float32).view(np.uint32))


def frames(device, *requests, first=1):
    """Answers (seq, cmd, payload) of ``device`` to requests (cmd, payload), seq first, ..."""
    dec, out = FrameDecoder(), []
    for seq, (cmd, payload) in enumerate(requests, first):
        out += dec.feed(device.feed(encode_frame(seq, cmd, payload)))
    return out


def test_hello_sensors_and_refusals_of_the_fake_device(watch):
    model, _, streams = first_segment(watch, "q15")
    dev = FakeMultiRateDevice(model)
    wire = model.wire_streams(streams)
    events = EventStream(model, wire)
    (_, _, hello), (_, _, sensors), (_, cmd, err) = frames(
        dev, (Cmd.HELLO, b""), (Cmd.SENSORS, b""), (Cmd.PUSH_SAMPLES, b"\x00\x00"))
    info = parse_hello(hello)
    assert (info.window, info.hop, info.channels, info.numeric) == (0, 0, 4, "q15")
    assert list(parse_sensors(sensors)) == model.sensors
    assert [(s.channels, s.window, s.hop, s.rate_hz) for s in model.sensors] == [
        (3, 20, 8, 10.0), (1, 10, 4, 5.0)]
    assert (cmd, err) == (Cmd.ERROR, bytes([Cmd.PUSH_SAMPLES, Err.UNKNOWN_COMMAND]))
    count, body = events[0:int(events.ends[1]) + 1]
    good = struct.pack("<H", count) + body
    bad_sensor = struct.pack("<H", 1) + bytes([2]) + body[1:7]
    answers = frames(dev, (Cmd.PUSH_EVENTS, bad_sensor), (Cmd.PUSH_EVENTS, good[:-1]),
                     (Cmd.PUSH_EVENTS, good), first=4)
    assert [a[2] for a in answers[:2]] == [bytes([Cmd.PUSH_EVENTS, Err.BAD_VALUE]),
                                           bytes([Cmd.PUSH_EVENTS, Err.BAD_LENGTH])]
    # the refused requests consumed nothing: windows 0 and 1, with the reference's scores
    (n,) = struct.unpack_from("<H", answers[2][2])
    assert answers[2][1] == Cmd.PUSH_EVENTS | 0x80 and n == 2
    ref = model.stream_scores({k: v[:len(v)] for k, v in wire.items()})
    for j in range(2):
        off = 2 + j * (4 + 4 * model.t)
        assert struct.unpack_from("<I", answers[2][2], off)[0] == j
        assert np.array_equal(np.frombuffer(answers[2][2], "<i4", model.t, off + 4), ref[j])


def test_an_answer_too_long_for_the_device_is_refused_before_any_sample(watch):
    model, _, streams = first_segment(watch)
    events = EventStream(model, model.wire_streams(streams))
    dev = FakeMultiRateDevice(model, max_response=2 + 4 + 4 * model.t)   # one window at most
    count, body = events[0:int(events.ends[1]) + 1]
    (_, _, err), (_, _, one) = frames(dev, (Cmd.PUSH_EVENTS, struct.pack("<H", count) + body),
                                      (Cmd.PUSH_EVENTS, struct.pack("<H", events.ends[0] + 1)
                                       + events[0:int(events.ends[0]) + 1][1]), first=1)
    assert err == bytes([Cmd.PUSH_EVENTS, Err.BAD_LENGTH])
    assert struct.unpack_from("<HI", one) == (1, 0)


def test_report_rates_and_energy_at_each_sensors_own_rate(watch, tmp_path):
    """Energy per prediction = rate x min(window_s, hop_s) readings x energy per reading at
    that rate (datasheet current x supply / rate), per sensor, the same as the bundle's."""
    bundle, _, test = watch
    report, _ = simulate(bundle, test, backend="python", report_dir=tmp_path / "rep")
    meta = load_bundle(bundle).meta
    acc_e = 5e-6 * 2.5 / 10                 # the toml: 5 uA at 10 Hz, 2.5 V
    expect = {"accel": (10.0, 10 * min(2.0, 0.8) * acc_e), "gyro": (5.0, 5 * 0.8 * 1.05e-3)}
    rates = {s["name"]: s for s in report["rates"]["sensors"]}
    by_bundle = {s["name"]: s for s in meta["sensors"]}
    for name, (rate, energy) in expect.items():
        assert rates[name]["rate_hz"] == rate == by_bundle[name]["chosen_rate_hz"]
        assert rates[name]["energy_j"] == pytest.approx(energy, rel=1e-12)
        assert by_bundle[name]["energy_per_prediction_j"] == pytest.approx(energy, rel=1e-12)
        assert rates[name]["readings"] == round(rate * 0.8)
    assert report["energy"]["energy_per_prediction_j"]["sensors"] == pytest.approx(
        sum(e for _, e in expect.values()), rel=1e-12)
    assert rates["accel"]["feature_rates_hz"] == [10.0, 2.5]
    summary = (tmp_path / "rep" / "summary.md").read_text()
    assert "accel pushed at 10 Hz" in summary and "gyro pushed at 5 Hz" in summary
    assert report["energy"]["deadline_s"] == 0.8


def test_cli_and_python_api_write_the_same_report(watch, tmp_path):
    from sensorbudget.cli import main

    bundle, _, test = watch
    run = partial(CliRunner().invoke, main, catch_exceptions=False)
    result = run(["simulate", str(bundle), "--recordings", str(test), "--numeric", "q15",
                  "--report", str(tmp_path / "cli")])
    assert result.exit_code == 0, result.output
    assert "0 mismatches" in result.output
    assert ("window 2 s, hop 0.8 s; sensors at their own rates: accel pushed at 10 Hz (window "
            "20, hop 8 samples; features at 10, 2.5 Hz; paid at 10 Hz: 8 readings") in result.output
    sb.simulate(str(bundle), str(test), numeric="q15").save(tmp_path / "api")
    assert (tmp_path / "cli" / "summary.md").read_bytes() == (
        tmp_path / "api" / "summary.md").read_bytes()
    report, again = (json.loads((tmp_path / d / "report.json").read_text())
                     for d in ("cli", "api"))
    for r in (report, again):
        r.pop("round_trip_s")         # the link's wall-clock round trips, set aside
    assert report == again
    assert report["predictions"] == report["delivered"] == 88 and report["rates"]


def test_a_faulty_link_loses_and_corrupts_nothing(watch, tmp_path):
    bundle, _, test = watch

    def wrap(port):
        return FaultyTransport(port, seed=5, corrupt=0.002, drop=0.002)

    model, clock = model_of(bundle), FakeClock()       # timeouts pass on the fake clock
    dev = PythonBackend(model, wrap=wrap, clock=clock, sleep=clock.advance, timeout=0.05)
    res = MultiRateReplayer(dev, model, clock=clock, sleep=clock.advance).run(
        load_recordings(test, model.sample_rate))
    assert res.mismatches == 0 and res.count("lost") == 0 and len(res.records) == 88
    assert res.link["retransmissions"] > 0 or res.recoveries > 0


def test_a_missing_sample_skips_the_windows_the_trainer_skips(watch, tmp_path):
    """An empty accelerometer cell (sample 35 of recording 0) drops the windows holding it;
    the replay predicts the windows the trainer's feature set has, with no mismatch."""
    rec_dir = write_multirate_set(tmp_path / "gap", "TEST", per_class=1, missing_at=(0, 35))
    (tmp_path / "s.toml").write_text(SENSORS_TOML)
    data = sb.features(str(rec_dir), sensors=str(tmp_path / "s.toml"))
    report, result = simulate(watch[0], rec_dir, backend="python")
    first = [r for r in result.records if r.recording == result.records[0].recording]
    assert report["mismatches"] == 0 and report["predictions"] == len(data.X) == 4 * 11 - 3
    assert len(first) == 8 and {r.segment for r in first} == {0, 1}
    ends = sorted(r.end_time_s for r in first)
    assert 2.0 + 0.8 * 2 not in ends and 2.0 + 0.8 * 5 in ends     # windows 2-4 skipped


def test_recordings_a_sensor_contradicts_give_one_clear_error(watch, tmp_path):
    from sensorbudget.cli import main

    rec_dir = write_multirate_set(tmp_path / "jit", "TEST", per_class=1)
    path = rec_dir / "rec00.csv"
    lines = path.read_text().splitlines()
    assert lines[4].startswith("0.20,") and lines[4].endswith(",,,")
    lines[4] = "0.17" + lines[4][4:]       # an accelerometer row 0.03 s (0.3 period) early
    path.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(main, ["simulate", str(watch[0]), "--recordings", str(rec_dir),
                                       "--report", str(tmp_path / "rep")])
    assert result.exit_code == 2, result.output
    out = result.output.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("Error: ") and "'accel'" in out[0]
    assert "jitter tolerance" in out[0] and not (tmp_path / "rep").exists()


def test_device_info_of_a_single_rate_device_is_unchanged():
    info = DeviceInfo(2, "float32", 3, 1, 2, 8, 4, "m")
    assert not info.multi_rate and info.sensors == () and info.max_push(1024) == 127


def test_a_sensors_answer_of_another_extension_version_is_refused(watch):
    from sensorbudget.device_sim.client import encode_sensors
    from sensorbudget.device_sim.protocol import ProtocolError

    model = model_of(watch[0])
    good = encode_sensors(model.sensors)
    assert good[0] == 1 and parse_sensors(good) == tuple(model.sensors)
    with pytest.raises(ProtocolError, match="multi-rate extension v2; this host speaks v1"):
        parse_sensors(bytes([2]) + good[1:])
    with pytest.raises(ProtocolError, match="does not hold 2 sensor"):
        parse_sensors(good[:-1])


def test_the_html_summary_shows_each_sensors_rate_as_the_runs_hold_it(watch, tmp_path):
    """The page's summary card (what it opens on) states the design's rate per sensor as the
    bundle's model.json has it and the simulation's pushed rates as its report.json."""
    from tests.device_sim.html.test_summary import cards

    bundle, _, test = watch
    sb.simulate(str(bundle), str(test), backend="python").save(tmp_path / "sim")
    sb.report([str(bundle), str(tmp_path / "sim")]).save(tmp_path / "page.html")
    meta = load_bundle(bundle).meta
    report = json.loads((tmp_path / "sim" / "report.json").read_text())
    (card,) = cards(tmp_path / "page.html")
    rates = ", ".join(f"{s} {r:g} Hz" for s, r in meta["sensor_rates_hz"].items())
    assert card["rows"]["rates"]["text"] == rates == "accel 10 Hz, gyro 5 Hz"
    pushed = card["rows"]["pushed_rates"]["text"]
    for s in report["rates"]["sensors"]:
        assert f"{s['name']} pushed at {s['pushed_hz']:g} Hz (features at " + ", ".join(
            f"{r:g}" for r in s["feature_rates_hz"]) + " Hz)" in pushed


def test_a_sensor_pushed_above_the_rate_it_is_paid_at_is_flagged(watch, tmp_path):
    """A bundle written before the selection priced each sensor at the rate the device reads
    it (issue 30): accelerometer features at 5 and 2 Hz of its 10 Hz recording, paid at 5 Hz
    (the highest chosen rate), while the device must read it at 10 Hz (2 Hz is no whole
    fraction of 5 Hz). The selection no longer forms such a set, so the old bundle is made by
    hand: trained now (5 Hz accelerometer features only), one of them renamed to its 2 Hz
    twin in model.json and the file vouched for again (``sensorbudget upgrade``). The replay
    still equals the reference, and the report says so for that sensor alone."""
    import json

    from click.testing import CliRunner

    from sensorbudget.cli import main
    from tests.device_sim.conftest import train

    toml = (SENSORS_TOML.replace("rates_hz = [2.5, 10]", "rates_hz = [2, 5]")
            .replace("current_a_by_rate = [2.7e-6, 5e-6]", "current_a_by_rate = [2.5e-6, 3.5e-6]")
            .replace("hop_s = 0.8", "hop_s = 1.0"))
    (tmp_path / "s.toml").write_text(toml)
    bundle = train(watch[1], tmp_path / "s.toml", tmp_path / "b", 14)
    meta = load_bundle(bundle).meta
    assert {"acc_y@5.mean", "acc_x@5.min"} <= set(meta["selected"])
    assert "acc_y@2.mean" not in meta["selected"] and meta["sensor_rates_hz"]["accel"] == 5.0
    old = json.loads((bundle / "model.json").read_text().replace('"acc_y@5.mean"',
                                                                 '"acc_y@2.mean"'))
    for key in ("features", "extractors"):             # the candidates stay as they were
        old[key] = json.loads(json.dumps(meta[key]))
    i = old["selected"].index("acc_y@2.mean")
    old["selected_index"][i] = old["features"].index("acc_y@2.mean")
    old.pop("content_sha256")
    (bundle / "model.json").write_text(json.dumps(old))
    done = CliRunner().invoke(main, ["upgrade", str(bundle)], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert {"acc_y@2.mean", "acc_x@5.min"} <= set(load_bundle(bundle).meta["selected"])
    report, _ = simulate(bundle, watch[2], backend="python", report_dir=tmp_path / "rep")
    rates = {s["name"]: s for s in report["rates"]["sensors"]}
    assert report["mismatches"] == 0 and report["predictions"] == 72
    assert (rates["accel"]["pushed_hz"], rates["accel"]["rate_hz"]) == (10.0, 5.0)
    assert rates["accel"]["pushed_above_paid"] and not rates["gyro"]["pushed_above_paid"]
    assert "accel pushed at 10 Hz" in (tmp_path / "rep" / "summary.md").read_text()
    assert "pushed above the rate it is paid at" in (tmp_path / "rep" / "summary.md").read_text()


def test_a_paced_replay_sends_each_event_at_its_time_stamp(watch):
    """``rate="recorded"``: one event a request, each released at its sample's time stamp
    ((i + phase) / rate of its sensor, the push order's; segments one after the other) on the
    injected clock, none late."""
    bundle, _, test = watch
    clock = FakeClock()
    model = model_of(bundle)
    rset = load_recordings(test, model.sample_rate)
    dev = PythonBackend(model, clock=clock, sleep=clock.advance)
    replayer = MultiRateReplayer(dev, model, rate="recorded", clock=clock, sleep=clock.advance)
    res = replayer.run(rset)
    assert res.mismatches == 0 and res.late_samples == 0 and len(res.records) == 88
    segments = [seg for rec in rset.recordings for seg in multirate_segments(rec, model)]
    streams = [EventStream(model, model.wire_streams(seg[1]), seg[4]) for seg in segments]
    due, start = [], 0.0
    for events in streams:                  # slow: each event's time stamp, segment by segment
        for i in range(len(events)):
            due.append(start + float(events.times[i]))
        start = due[-1] + 1 / max(s.rate_hz for s in model.sensors)
    assert [replayer.pacer.offset(g) for g in range(len(due))] == due
    assert len(due) == res.samples_sent and clock.now >= due[-1]
    steps = sorted(set(np.round(np.diff(streams[0].times), 12)))
    assert steps == [0.05, 0.1]    # the gyroscope's stamps between two accelerometer ones


def test_compare_shows_the_rates_of_a_multi_rate_design_beside_its_bundle(watch, tmp_path):
    """``compare`` takes a multi-rate bundle folder (estimated) and its simulation: both say
    each sensor's paid rate, as model.json's sensor_rates_hz."""
    from sensorbudget.device_sim.compare import compare_rows, load_side

    bundle, _, test = watch
    simulate(bundle, test, backend="python", report_dir=tmp_path / "sim")
    rows = {r[0]: r[1:] for r in compare_rows(load_side(bundle), load_side(tmp_path / "sim"))}
    rates = ", ".join(f"{s} {r:g} Hz" for s, r in load_bundle(bundle).meta[
        "sensor_rates_hz"].items())
    assert rows["sensor rates (paid at)"] == (rates, rates)
    assert rows["mismatches"] == (None, 0)


def test_python_backend_estimates_each_sensors_pushes(watch):
    """The multi-rate device's op-count pushes (issue 28): per sensor, its min(window, hop) new
    samples at the rate it is pushed at (a whole window for each segment's first prediction) x
    its channels x the core's store cost (OPS store_op, measured), as the SENSORS answer
    describes each sensor; the report's first window adds them to the window pass."""
    from sensorbudget.device_sim.costs import OPS
    from sensorbudget.firmware_gen.boards import DEFAULT_BOARD, get_board

    bundle, _, test = watch
    report, result = simulate(bundle, test, backend="python", bench=False)
    store = OPS[get_board(DEFAULT_BOARD).ops]["store_op"]
    device = PythonBackend(model_of(bundle))
    try:
        info = device.open().sensors                      # the SENSORS answer
    finally:
        device.close()
    steady = sum(min(s.window, s.hop) * s.channels for s in info) * store
    whole = sum(s.window * s.channels for s in info) * store
    cost = report["cost"]
    assert {r.pushes for r in result.records if r.window > 0} == {round(steady)}
    assert {r.pushes for r in result.records if r.window == 0} == {round(whole)}
    assert cost["first_window"]["median"] == round(whole) + cost["extractors"]["median"]
    assert cost["total"]["median"] == (round(steady) + cost["extractors"]["median"]
                                       + cost["model"]["median"])
