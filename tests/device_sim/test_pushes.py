"""Issue 28 item 5: what ``simulate`` reports per prediction is what the firmware pays: the
pushes (each new sample stored into the window's ring buffer), the window pass and the model,
with each segment's first prediction (a whole window stored) apart.

- STATS answers 13 bytes (pushes u32 at offset 9); an image built before answers 9 and its
  report says "pushes not measured" instead of a number.
- On unicorn-m4f the report's figures equal the benchmark-style measurement, function by
  function (the ELF ``simulate`` built, loaded again and called row block by row block as
  ``main.c`` does), exactly; report.json, summary.md, the printed lines and ``compare`` show the
  same numbers (the HTML card: tests/device_sim/html/test_pushes_card.py).
- The python backend's pushes are the op-count formula computed by hand.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.device_sim.client import decode_stats, encode_stats
from sensorbudget.device_sim.protocol import ProtocolError, Unit

from .conftest import model_of, recordings_of

PARTS = {"pushes": "pushes (new samples stored)", "extractors": "window pass (extractors)",
         "model": "model", "total": "total (pushes + window pass + model)",
         "first_window": "first window (pushes of a whole window + window pass)"}


def _invoke(*args) -> str:
    from sensorbudget.cli import main

    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_stats_of_13_bytes_carry_the_pushes():
    data = struct.pack("<BIII", Unit.CYCLES, 4000, 300, 1234)
    assert decode_stats(data) == ("cycles", 4000, 300, 1234)
    assert encode_stats(Unit.CYCLES, 4000, 300, 1234) == data
    top = 2 ** 32 - 1                               # each figure saturates, as the firmware's
    assert encode_stats(Unit.INSTRUCTIONS, 2 ** 40, 7, 2 ** 33) == struct.pack(
        "<BIII", Unit.INSTRUCTIONS, top, 7, top)


def test_stats_of_9_bytes_from_an_older_image_have_no_pushes():
    data = struct.pack("<BII", Unit.NANOSECONDS, 812, 95)
    assert decode_stats(data) == ("nanoseconds", 812, 95, None)
    assert encode_stats(Unit.NANOSECONDS, 812, 95, None) == data


@pytest.mark.parametrize("size", [0, 8, 10, 12, 14, 17])
def test_stats_of_another_length_is_refused_naming_both(size):
    with pytest.raises(ProtocolError, match=rf"STATS answer of {size} bytes; expected 13 "
                                            rf"\(or 9 from an image built before"):
        decode_stats(bytes([1]) + bytes(max(0, size - 1)) if size else b"")


def _stats(values) -> dict:
    """min / median / max / n of ``values``, with numpy (the report's statistics, again)."""
    v = np.asarray(values, dtype=np.float64)
    return {"min": float(v.min()), "median": float(np.median(v)), "max": float(v.max()),
            "n": int(v.size)}


def _by_function(fw_dir, model, rset) -> tuple:
    """([(pushes, window pass)] of each segment's first window, of every later window): the
    ELF loaded again in unicorn and called as main.c calls it: after a reset, the rows up to
    each window's end stored in one ``<name>_stream_add_rows`` call (or, in an image without
    it, one ``<name>_stream_add`` per row), then ``<name>_stream_compute``."""
    from sensorbudget.device_sim.backends.unicorn import SCRATCH, CortexM4
    from sensorbudget.device_sim.replay import segments_of
    from sensorbudget.export.cgen import DEFAULT_NAME as p

    cpu = CortexM4(fw_dir / "firmware.elf")
    stream, rows_at, stored_at = cpu.symbol("fw_stream"), SCRATCH + 0x1000, SCRATCH + 0x800
    add_rows = cpu.symbols.get(f"{p}_stream_add_rows")
    first, later = [], []
    for rec in rset.recordings:
        for _, samples in segments_of(rec, model.channels, model.sample_rate, model.window):
            wire = np.ascontiguousarray(model.wire_samples(samples))
            ends = model.window_starts(len(wire)) + model.window - 1
            cpu.call(cpu.symbol(f"{p}_stream_reset"), stream)
            start = 0
            for i, end in enumerate(ends):
                rows = wire[start:end + 1]
                if add_rows is not None:
                    cpu.uc.mem_write(rows_at, rows.tobytes())
                    ready, pushes = cpu.call(add_rows["st_value"], stream, rows_at, len(rows),
                                             stored_at)
                    stored = struct.unpack("<I", cpu.uc.mem_read(stored_at, 4))[0]
                    assert (ready, stored) == (1, len(rows))
                else:
                    pushes = 0
                    for row in rows:
                        cpu.uc.mem_write(rows_at, row.tobytes())
                        pushes += cpu.call(cpu.symbol(f"{p}_stream_add"), stream, rows_at)[1]
                _, window_pass = cpu.call(cpu.symbol(f"{p}_stream_compute"), stream)
                (later if i else first).append((pushes, window_pass))
                start = end + 1
    return first, later


def test_unicorn_report_is_the_function_by_function_measurement_everywhere(tiny,
                                                                           unicorn_sim):
    """One replay (``simulate --backend unicorn-m4f``): its report's pushes, window pass and
    first window equal the benchmark's function-by-function counts exactly; summary.md, the
    printed lines and ``compare`` show the report's numbers, each part named."""
    bundle, rec, _ = tiny
    sim, printed, fw = unicorn_sim
    model = model_of(bundle)
    first, later = _by_function(fw, model, recordings_of(rec, model))
    assert len(first) >= 2 and len(later) > len(first)       # a gap: two segments
    cost = json.loads((sim / "report.json").read_text())["cost"]
    pick = ("min", "median", "max", "n")
    assert {k: cost["pushes"][k] for k in pick} == _stats([p for p, _ in later])
    assert {k: cost["extractors"][k] for k in pick} == _stats([e for _, e in later])
    assert {k: cost["first_window"][k] for k in pick} == _stats([p + e for p, e in first])
    assert cost["pushes_note"] is None and cost["measured"]
    assert cost["total"]["n"] == len(later)
    assert cost["predictions"] == f"the {len(later)} predictions after the first of each segment"

    summary = (sim / "summary.md").read_text()
    compared = _invoke("compare", sim, sim)
    for key, label in PARTS.items():
        s = cost[key]
        assert f"| {label} | {s['min']:.4g} | {s['median']:.4g} | {s['max']:.4g} |" in summary
        assert f"{label} {s['median']:.4g}" in printed
    rows = {line.split("  ")[0]: line for line in compared.splitlines()}
    for label, part in (("pushes / prediction (new samples stored)", "pushes"),
                        ("window pass / prediction (extractors)", "extractors"),
                        ("model / prediction", "model"),
                        ("total / prediction (pushes + window pass + model)", "total"),
                        ("first window (pushes of a whole window + window pass)",
                         "first_window")):
        assert rows[label].split()[-3:] == [f"{cost[part]['median']:.4g}"] * 2 + ["1x"]
    assert f"medians over {cost['predictions']}" in printed
    per_channel = cost["per_channel_push"]          # the pushes, split over the channels
    assert set(per_channel) == set(model.channels)
    assert sum(per_channel.values()) == pytest.approx(cost["pushes"]["median"], rel=1e-12)
    assert all(f"| {c} | {v:.5g} |" in summary for c, v in per_channel.items())


def test_python_backend_pushes_are_the_formula_by_hand(tiny, tmp_path):
    """The op-count estimate of the pushes: min(window, hop) new samples per prediction (a
    whole window for each segment's first) x the used channels x the store cost of the costed
    board's core (``OPS`` store_op: measured per stored value on the issue-28 bundle); the
    python backend answers it in STATS (rounded), the
    report takes it as measured there, and ``compare`` of the bundle alone estimates it
    unrounded."""
    from sensorbudget.device_sim.costs import OPS
    from sensorbudget.device_sim.simulate import simulate
    from sensorbudget.firmware_gen.boards import DEFAULT_BOARD, get_board

    bundle, rec, _ = tiny
    model = model_of(bundle)
    report, result = simulate(bundle, rec, backend="python", bench=False)
    store = OPS[get_board(DEFAULT_BOARD).ops]["store_op"]
    channels = len(model.channels)
    steady = min(model.window, model.hop) * channels * store
    whole = model.window * channels * store
    cost = report["cost"]
    assert {r.pushes for r in result.records if r.window > 0} == {round(steady)}
    assert {r.pushes for r in result.records if r.window == 0} == {round(whole)}
    assert cost["pushes"]["median"] == round(steady)
    assert cost["first_window"]["median"] == round(whole) + cost["extractors"]["median"]
    assert cost["total"]["median"] == (cost["pushes"]["median"] + cost["extractors"]["median"]
                                       + cost["model"]["median"])
    assert sum(cost["per_channel_push"].values()) == pytest.approx(round(steady), rel=1e-12)
    from sensorbudget.device_sim.compare import bundle_summary

    alone = bundle_summary(bundle, profile=DEFAULT_BOARD)["cost"]
    assert alone["pushes"]["median"] == pytest.approx(steady, rel=1e-12)
    assert alone["first_window"]["median"] - alone["extractors"]["median"] == \
        pytest.approx(whole, rel=1e-12)


def test_a_report_of_an_older_image_says_pushes_not_measured(tiny, tmp_path):
    """An image that answers STATS in 9 bytes: no pushes figure anywhere, the report and
    every surface say why; the total and the energy are the window pass and the model."""
    from sensorbudget.device_sim.backends import PythonBackend
    from sensorbudget.device_sim.fake import FakeDevice
    from sensorbudget.device_sim.replay import replay
    from sensorbudget.device_sim.report import build_report, write_report
    from sensorbudget.device_sim.report_text import compute_text

    bundle, rec, _ = tiny
    model = model_of(bundle)
    rset = recordings_of(rec, model)
    backend = PythonBackend(model, device=FakeDevice(model, costs=(500, 40)))
    result = replay(backend, model, rset)
    report = build_report(result, backend, model, rset, bundle_path=bundle,
                          recordings_path=rec, battery_wh=3.7)
    cost = report["cost"]
    assert cost["pushes"] is None and cost["first_window"] is None
    assert cost["per_channel_push"] is None and cost["per_extractor_push"] is None
    assert cost["pushes_note"].startswith("pushes not measured (image built before")
    assert cost["total"]["median"] == 540
    assert all(r.pushes is None for r in result.records)
    write_report(tmp_path / "old", report)
    summary = (tmp_path / "old" / "summary.md").read_text()
    assert f"| pushes (new samples stored) | {cost['pushes_note']} |" in summary
    assert "window pass + model; pushes not measured" in summary
    assert cost["pushes_note"] in compute_text(cost)
    compared = _invoke("compare", tmp_path / "old", tmp_path / "old")
    assert "not measured (image built before the firmware timed its pushes)" in compared
    # a report written before the pushes were reported at all (no such keys) says that
    older = json.loads((tmp_path / "old" / "report.json").read_text())
    for key in ("pushes", "first_window", "pushes_note", "predictions"):
        older["cost"].pop(key)
    (tmp_path / "older").mkdir()
    (tmp_path / "older" / "report.json").write_text(json.dumps(older))
    compared = _invoke("compare", tmp_path / "old", tmp_path / "older")
    line = next(x for x in compared.splitlines() if x.startswith("pushes / prediction"))
    assert line.rstrip().endswith("not in this report (written before pushes were reported)")
