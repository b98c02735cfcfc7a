"""Multi-rate firmware images (issue 30 item 3) on every backend here: the interleaved
two-sensor BasicMotions set (accelerometer at 10 Hz with a 2.5 Hz group decimated in the
device, gyroscope at 5 Hz half a period later) replayed with every prediction equal to the
reference; the compiled firmware answers the protocol byte for byte as the Python device; the
instruction counts of QEMU and unicorn agree; generated lines fit 100 columns."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from sensorbudget.device_sim.backends import available_backends
from sensorbudget.device_sim.fake_multirate import FakeMultiRateDevice
from sensorbudget.device_sim.multirate import EventStream, MultiRateModel, multirate_segments
from sensorbudget.device_sim.protocol import Cmd, FrameDecoder, encode_frame
from sensorbudget.device_sim.simulate import simulate
from sensorbudget.firmware_gen import FirmwareGenError, generate_firmware
from sensorbudget.firmware_gen.build import build, write_firmware
from sensorbudget.firmware_gen.targets import get_target
from sensorbudget.trainer.bundle.model import load_bundle
from sensorbudget.trainer.sensing.recordings import load_recordings
from tests.device_sim.multirate_data import train_multirate
from tests.firmware_gen.helpers import Session

AVAILABLE = available_backends()
UNIT = {"host": "nanoseconds", "simavr": "cycles"}


def need(spec):
    if AVAILABLE.get(spec) is not None:
        pytest.skip(f"backend {spec}: {AVAILABLE[spec]}")


@pytest.fixture(scope="session")
def watch(tmp_path_factory):
    return train_multirate(tmp_path_factory.mktemp("watch-fw"))


@pytest.mark.parametrize("spec,numeric", [
    ("host", "float32"), ("host", "q15"), ("host", "q31"),
    ("qemu-nucleo-f4", "float32"), ("qemu-nucleo-f4", "q15"),
    ("simavr", "q15"), ("simavr", "float32"),
    ("unicorn-m4f", "float32"), ("unicorn-rv32", "q15")])
def test_every_backend_replays_the_interleaved_streams_bit_for_bit(watch, spec, numeric,
                                                                   tmp_path):
    need(spec)
    bundle, _, test = watch
    report, result = simulate(bundle, test, backend=spec, numeric=numeric, workdir=tmp_path,
                              bench=spec.startswith(("qemu", "simavr")))
    assert report["predictions"] == report["delivered"] == 88
    assert report["mismatches"] == 0 and report["unexpected"] == 0 and report["lost"] == 0
    assert report["cost"]["measured"] and report["cost"]["unit"] == UNIT.get(spec,
                                                                              "instructions")
    # counted units are exact and positive; the host's nanoseconds less the counter's own
    # (calibrated at boot) can read 0 for a short region
    assert all(r.extractors is not None and r.extractors >= (spec != "host")
               for r in result.records)
    assert [s["pushed_hz"] for s in report["rates"]["sensors"]] == [10.0, 5.0]
    if spec.startswith(("qemu", "simavr")):   # BENCH: <p>_mr_compute, counted exactly
        assert report["cost"]["bench"]["extractors"]["per_run"] > 0


def test_qemu_and_unicorn_count_the_same_instructions(watch, tmp_path):
    """A window's extractor cost is the sum over the pushes that completed a group's window
    (each group computes its features in the push that brings its last sample), its model
    cost the kernel call. QEMU's -icount regions are unicorn's exact per-call counts plus one
    constant per timed call (the call through the pointer and the counter's own few
    instructions the boot calibration does not make): one constant per part, the extractors'
    a multiple of the groups (3 pushes, one per group, in every window here). And the sum
    covers every group: it is at least what BENCH measures for recomputing all of them
    (``<name>_mr_compute``, less its loop's few instructions per repetition)."""
    need("qemu-m4f")
    need("unicorn-m4f")
    bundle, _, test = watch
    (qreport, qres), (_, ures) = (
        simulate(bundle, test, backend=spec, numeric="q15", workdir=tmp_path / spec,
                 bench=spec == "qemu-m4f") for spec in ("qemu-m4f", "unicorn-m4f"))
    qemu, exact = ([(r.extractors, r.model) for r in res.records] for res in (qres, ures))
    assert len(qemu) == len(exact) == 88
    diffs = {(qe - ee, qm - em) for (qe, qm), (ee, em) in zip(qemu, exact, strict=True)}
    assert len(diffs) == 1, diffs
    ext, mod = diffs.pop()
    assert ext % 3 == 0 and 0 <= ext // 3 <= 8 and 0 <= mod <= 8, (ext, mod)
    assert len({e for e, _ in exact}) > 1       # the windows' costs differ: not one constant
    bench = qreport["cost"]["bench"]["extractors"]["per_run"]
    assert min(e for e, _ in qemu) >= bench - 12, (min(qemu), bench)


def _requests(model, events):
    """A request sequence through every multi-rate command and refusal: HELLO, SENSORS, a
    PUSH_SAMPLES (unknown here), an unknown sensor, a truncated request, the segment in
    requests that end where windows complete, RESET and the first window again."""
    ends = [int(e) + 1 for e in events.ends]
    count, body = events[0:ends[0]]
    out = [(Cmd.HELLO, b""), (Cmd.SENSORS, b""), (Cmd.PUSH_SAMPLES, b"\x00\x00"),
           (Cmd.PUSH_EVENTS, struct.pack("<H", 1) + bytes([len(model.sensors)]) + body[1:13]),
           (Cmd.PUSH_EVENTS, struct.pack("<H", count) + body[:-1])]
    start = 0
    for stop in (ends[0], ends[1] - 3, ends[3], len(events)):      # 0, 1+, 2 windows, rest
        n, chunk = events[start:stop]
        out.append((Cmd.PUSH_EVENTS, struct.pack("<H", n) + chunk))
        start = stop
    return out + [(Cmd.RESET, b""), (Cmd.PUSH_EVENTS, struct.pack("<H", count) + body)]


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_the_compiled_firmware_answers_as_the_python_device(watch, numeric, tmp_path):
    """The same frames into the host image and into FakeMultiRateDevice give the same answer
    bytes (the segment's requests are small enough for every target's buffers)."""
    if AVAILABLE["host"] is not None:
        pytest.skip(AVAILABLE["host"])
    bundle, _, test = watch
    b = load_bundle(bundle)
    model = MultiRateModel(b, numeric)
    rec = load_recordings(test, model.sample_rate).recordings[1]
    _, streams, _, _, phases = multirate_segments(rec, model)[0]
    requests = _requests(model, EventStream(model, model.wire_streams(streams), phases))
    fake = FakeMultiRateDevice(model, name="sbmodel")
    fw = generate_firmware(b, target="host", numeric=numeric, plan=model.plan)
    write_firmware(fw, tmp_path / "fw")
    build(tmp_path / "fw")
    session = Session(tmp_path / "fw")
    predicted = 0
    try:
        for seq, (cmd, payload) in enumerate(requests):
            got = session.request(cmd, payload, seq=seq)
            want = FrameDecoder().feed(fake.feed(encode_frame(seq, cmd, payload)))
            assert [(seq, *got)] == want, (seq, cmd)
            if got[0] == Cmd.PUSH_EVENTS | 0x80:
                predicted += struct.unpack_from("<H", got[1])[0]
        session.seq = len(requests)
        assert session.quit() == 0
    finally:
        session.process.close()
    assert predicted == 11 + 1 and fake.windows == 1    # the segment's, then one after RESET


@pytest.mark.parametrize("target", ["host", "nucleo-f4", "arduino-uno"])
@pytest.mark.parametrize("name", ["sbmodel", "n" * 31])
def test_generated_files_fit_100_columns_and_name_the_sensors(watch, target, name):
    b = load_bundle(watch[0])
    fw = generate_firmware(b, target=target, numeric="q15", name=name)
    long = [(f, i) for f, text in fw.files.items() if f.endswith((".c", ".h"))
            for i, line in enumerate(text.splitlines(), 1) if len(line) > 100]
    assert long == []
    main = fw.files["main.c"]
    assert "0 accel (10 Hz): acc_x, acc_y, acc_z; 1 gyro (5 Hz): gyro_z" in main
    m = fw.manifest["multi_rate"]
    assert [(s["name"], s["rate_hz"], s["window"], s["hop"]) for s in m["sensors"]] == [
        ("accel", 10.0, 20, 8), ("gyro", 5.0, 10, 4)]
    assert fw.manifest["window"] == fw.manifest["hop"] == 0
    assert (fw.manifest["ram_estimate"] is None) == (get_target(fw.target).name == "host")


def test_a_model_whose_answers_overflow_the_uno_is_refused(watch):
    """One window's PUSH_EVENTS answer must fit the target's transmit buffer (AVR: 160)."""
    b = load_bundle(watch[0])
    model = MultiRateModel(b, "float32")
    big = type(model.plan)(**{**model.plan.__dict__, "targets": tuple(range(40))})
    with pytest.raises(FirmwareGenError) as err:
        generate_firmware(b, target="arduino-uno", numeric="float32", plan=big)
    assert "holds at most 160" in str(err.value)


def test_single_rate_main_c_has_no_multirate_part(tmp_path):
    """A single-rate image keeps its PUSH_SAMPLES loop (the golden files pin its bytes)."""
    from tests.device_sim.conftest import TINY_SENSORS, train, write_tiny

    (tmp_path / "s.toml").write_text(TINY_SENSORS)
    bundle = train(write_tiny(tmp_path / "rec"), tmp_path / "s.toml", tmp_path / "b", 3)
    main = generate_firmware(load_bundle(bundle), target="host").files["main.c"]
    assert "PUSH_EVENTS" not in main and "fw_push(in, n, out, len)" in main
    assert np.char.count(main, "multirate") == 0


def test_the_host_image_survives_a_faulty_link(watch, tmp_path):
    """Corrupted and dropped bytes on the way to and from the C device: retries, the
    exactly-once cache and the resend from a window's first event lose and garble nothing."""
    need("host")
    from sensorbudget.device_sim.backends import make_backend
    from sensorbudget.device_sim.multirate import MultiRateReplayer
    from sensorbudget.device_sim.transports import FaultyTransport

    bundle, _, test = watch
    model = MultiRateModel(load_bundle(bundle), "q15")

    def wrap(port):
        return FaultyTransport(port, seed=3, corrupt=0.001, drop=0.001)

    dev = make_backend("host", model=model, workdir=tmp_path, wrap=wrap, timeout=0.2)
    try:
        res = MultiRateReplayer(dev, model).run(load_recordings(test, model.sample_rate))
        dev.quit()
    finally:
        dev.close()
    assert len(res.records) == 88 and res.mismatches == 0 and res.count("lost") == 0
    assert res.link["retransmissions"] + res.recoveries > 0, res.link


@pytest.mark.parametrize("spec", ["qemu-nucleo-f4", "simavr"])
def test_counts_are_the_same_in_every_run(watch, spec, tmp_path):
    """QEMU -icount instructions and simavr cycles do not depend on the host's timing: two
    replays give the same per-window figures and BENCH totals."""
    need(spec)
    bundle, _, test = watch
    runs = [simulate(bundle, test, backend=spec, numeric="q15", workdir=tmp_path / str(i))
            for i in range(2)]
    (a, ra), (b, rb) = runs
    assert [(r.extractors, r.model) for r in ra.records] == [
        (r.extractors, r.model) for r in rb.records]
    assert a["cost"]["bench"] == b["cost"]["bench"] and a["mismatches"] == b["mismatches"] == 0


def test_q15_scores_on_the_uno_are_within_the_stated_bound_of_the_float_model(watch, tmp_path):
    """The fixed-point image's real scores (scores * 2^-G) stay within firmware.json's
    stream_error_bound of the float64 model on the trainer's own features."""
    need("simavr")
    import sensorbudget as sb

    bundle, train, test = watch
    fw = sb.firmware(str(bundle), target="arduino-uno", numeric="q15")
    bound, frac = fw.manifest["stream_error_bound"], fw.manifest["score_frac_bits"]
    assert bound is not None and bound > 0
    (tmp_path / "s.toml").write_text((train.parent / "watch.sensors.toml").read_text())
    data = sb.features(str(test), sensors=str(tmp_path / "s.toml"))
    b = load_bundle(bundle)
    X = np.asarray(data.X, dtype=np.float64)[:, [list(data.feature_names).index(f)
                                                  for f in b.meta["selected"]]]
    model = X @ np.asarray(b.W, dtype=np.float64).reshape(X.shape[1], -1) + np.asarray(b.b)
    _, result = simulate(bundle, test, backend="simavr", numeric="q15", workdir=tmp_path,
                         bench=False)
    real = np.array([r.scores for r in result.records], dtype=np.float64) * 2.0 ** -frac
    assert real.shape == model.shape and np.abs(real - model).max() <= bound
