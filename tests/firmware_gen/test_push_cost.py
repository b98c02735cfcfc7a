"""STATS's ``pushes`` (issue 28 item 5) against an independent count: the Cortex-M4F image
(mps2-an386, float32) runs under QEMU (SysTick on ``-icount``: instructions) and is sent seeded
random PUSH_SAMPLES requests (1 to ``hop`` rows, so a window's rows span one or more requests);
after each request that completed a window, STATS's pushes must equal the instructions that
unicorn (:class:`~sensorbudget.device_sim.backends.unicorn.CortexM4`, exact counts) executes
in the same ELF's ``<name>_stream_add_rows`` for the same calls (the rows from the one after
the previous ready window to the completing one, split at the request boundaries as main.c's
``fw_store`` splits them, from the same ring position), plus one constant per timed call (the
call's own argument set-up and branch inside the timed region, which the timer's calibration
does not see): one constant for every window, whether its rows came in 1, 2 or more calls."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from sensorbudget.device_sim.protocol import Cmd
from tests.firmware_gen.conftest import need_tools
from tests.firmware_gen.helpers import decode_push, device_samples


def _calls(window: int, hop: int, requests) -> list:
    """Per completed window, the row counts of the add_rows calls that stored its rows
    (fw_store: one call per request part up to the next window's end)."""
    seen, next_end, out, calls = 0, window, [], []
    for n in requests:
        left = n
        while left > 0:
            take = min(left, next_end - seen)
            calls.append(take)
            seen, left = seen + take, left - take
            if seen == next_end:
                out.append(calls)
                calls, next_end = [], next_end + hop
    return out


def test_stats_pushes_equal_the_add_rows_calls_counted_in_unicorn(firmware, bm_bundle,
                                                                  bm_recordings):
    need_tools("qemu-system-arm", "arm-none-eabi-gcc")
    from sensorbudget.device_sim.backends import available_backends

    reason = available_backends()["unicorn-m4f"]
    if reason is not None:
        pytest.skip(f"backend unicorn-m4f: {reason}")
    from sensorbudget.device_sim.backends.unicorn import CortexM4

    built = firmware(bm_bundle, "cortex-m4f", "float32")
    plan = built.plan
    samples = np.concatenate([device_samples(plan, bm_recordings.recordings[r].columns)
                              for r in (5, 6, 7)])
    rng = np.random.default_rng(2805)
    requests, total = [], 0
    while total < len(samples):
        n = min(int(rng.integers(1, plan.hop + 1)), len(samples) - total)
        requests.append(n)
        total += n
    # the device: STATS after every request that completed a window; first, rows short of a
    # window and RESET (their pending pushes must not reach the first window's)
    measured = []
    with built.start() as dev:
        for n in (plan.window // 2, plan.window - plan.window // 2 - 1):
            chunk = np.ascontiguousarray(samples[-n:], dtype="<f4")
            assert decode_push(plan, dev.call(Cmd.PUSH_SAMPLES, struct.pack("<H", n)
                                              + chunk.tobytes())) == []
        dev.call(Cmd.RESET)
        at = 0
        for n in requests:
            chunk = np.ascontiguousarray(samples[at:at + n], dtype="<f4")
            at += n
            answer = decode_push(plan, dev.call(Cmd.PUSH_SAMPLES,
                                                struct.pack("<H", n) + chunk.tobytes()))
            assert len(answer) <= 1
            if answer:
                measured.append(struct.unpack("<BIII", dev.call(Cmd.STATS))[3])
        dev.quit(0)
    calls = _calls(plan.window, plan.hop, requests)
    assert len(measured) == len(calls) >= 10
    # the same calls in unicorn on the same ELF, from a reset stream
    cpu = CortexM4(built.out / "firmware.elf")
    stream = cpu.symbol("fw_stream")
    rows_at = cpu.symbol("fw_rx") + 8                 # word-aligned, as main.c's rows
    stored_at = cpu.symbol("fw_scores")               # any word of RAM for *stored
    add_rows = cpu.symbol("sbmodel_stream_add_rows")
    cpu.call(cpu.symbol("sbmodel_stream_reset"), stream)
    counted, at = [], 0
    for window_calls in calls:
        cost = 0
        for take in window_calls:
            cpu.uc.mem_write(rows_at, np.ascontiguousarray(samples[at:at + take]).tobytes())
            at += take
            _, n = cpu.call(add_rows, stream, rows_at, take, stored_at)
            assert struct.unpack("<I", cpu.uc.mem_read(stored_at, 4))[0] == take
            cost += n
        counted.append(cost)
    n_calls = np.array([len(c) for c in calls])
    assert len(set(n_calls[1:].tolist())) > 1          # windows of 1 call and of more
    offset = (np.array(measured) - np.array(counted)) / n_calls
    assert (offset == offset[0]).all() and 0 <= offset[0] <= 8, (offset, n_calls)


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_rows_decoded_in_place_answer_as_the_native_wire(firmware, kinds_bundle, bm_recordings,
                                                         numeric):
    """main.c's other path (a target whose samples are not the wire's little-endian bytes:
    fw_rows decodes each request's rows in place, built here with -DFW_WIRE_NATIVE=0): the
    same PUSH_SAMPLES answers byte for byte as the native image, and the reference's scores."""
    from sensorbudget.firmware_gen import reference
    from tests.firmware_gen.conftest import bm_full_scale
    from tests.firmware_gen.helpers import same_bits

    fs = None if numeric == "float32" else bm_full_scale(bm_recordings)
    native = firmware(kinds_bundle, "host", numeric, full_scale=fs)
    decoded = firmware(kinds_bundle, "host", numeric, full_scale=fs,
                       make_vars={"EXTRA_CFLAGS": "-DFW_WIRE_NATIVE=0"})
    plan = native.plan
    samples = device_samples(plan, bm_recordings.recordings[9].columns)
    _, _, expected = reference.stream(plan, kinds_bundle, samples)
    rng = np.random.default_rng(2806)
    sizes = rng.integers(0, 3 * plan.window, size=len(samples))
    answers = []
    for built in (native, decoded):
        got, at = [], 0
        with built.start() as dev:
            for n in sizes:
                n = int(min(n, len(samples) - at))
                chunk = np.ascontiguousarray(samples[at:at + n])
                got.append(dev.call(Cmd.PUSH_SAMPLES, struct.pack("<H", n) + chunk.tobytes()))
                at += n
                if at == len(samples):
                    break
            dev.quit(0)
        answers.append(got)
    assert answers[0] == answers[1]
    scores = [s for a in answers[1] for _, s in decode_push(plan, a)]
    assert len(scores) == len(expected) > 0
    assert same_bits(np.array(scores), np.asarray(expected).astype(scores[0].dtype))


def test_multirate_stats_pushes_are_the_other_events_each_timed(tmp_path_factory):
    """A multi-rate image's pushes (main_multirate.c.j2): the events since the previous ready
    window that did not complete a group's window, each timed. QEMU's STATS (mps2-an386, Q15,
    -icount) against unicorn's exact count of the same fw_event calls (the unicorn-m4f
    backend): per window the difference is one constant per timed call, the same constant as
    the extractors' (3 group-completing events a window here), times the window's other events
    counted from the event stream (its events since the previous window's last, less the 3)."""
    from sensorbudget.device_sim.backends import available_backends
    from sensorbudget.device_sim.multirate import (
        EventStream,
        MultiRateModel,
        multirate_segments,
    )
    from sensorbudget.device_sim.simulate import simulate
    from sensorbudget.trainer.bundle.model import load_bundle
    from sensorbudget.trainer.sensing.recordings import load_recordings
    from tests.device_sim.multirate_data import train_multirate

    for spec in ("qemu-m4f", "unicorn-m4f"):
        if available_backends().get(spec) is not None:
            pytest.skip(f"backend {spec}: {available_backends()[spec]}")
    work = tmp_path_factory.mktemp("mr-pushes")
    bundle, _, test = train_multirate(work / "watch")
    records = {}
    for spec in ("qemu-m4f", "unicorn-m4f"):
        _, result = simulate(bundle, test, backend=spec, numeric="q15", workdir=work / spec,
                             bench=False)
        records[spec] = [(r.pushes, r.extractors) for r in result.records]
    model = MultiRateModel(load_bundle(bundle), "q15")
    others = []
    for rec in load_recordings(test, model.sample_rate).recordings:
        for _, streams, _, _, phases in multirate_segments(rec, model):
            ends = [int(e) for e in EventStream(model, model.wire_streams(streams),
                                                phases).ends]
            others += [b - a - 3 for a, b in zip([-1] + ends[:-1], ends)]
    qemu, exact = records["qemu-m4f"], records["unicorn-m4f"]
    assert len(qemu) == len(exact) == len(others) > 0
    ext = {q[1] - u[1] for q, u in zip(qemu, exact)}
    assert len(ext) == 1 and ext.pop() % 3 == 0
    per_call = (qemu[0][1] - exact[0][1]) // 3
    assert 0 < per_call <= 8
    assert [q[0] - u[0] for q, u in zip(qemu, exact)] == [per_call * n for n in others]
    assert len(set(others)) > 1 and min(others) > 0     # first windows pay more events
