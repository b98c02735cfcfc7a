"""Per-extractor on-device cost of the issue-22 set beside a lower bound (bench_device.py part).

The set: 64-sample windows (hop 12) of BasicMotions' two 3-axis sensors (accelerometer and
gyroscope), one regression target, six extractors, one per channel so nothing is shared:
``acc_x`` mean, ``acc_y`` min, ``acc_z`` ptp, ``gyro_x`` rms, ``gyro_y`` last and the magnitude
mean of ``acc_x, acc_y, acc_z``. Every firmware is built and run (QEMU ``-icount shift=0`` for
Cortex-M: instructions; simavr Timer1: AVR cycles) and the recording is pushed window by window;
the extractor cost of a window is the device's own count of that window's
``<name>_stream_compute`` (STATS after the PUSH that completed it: conversion and quantisation
included), the model's is BENCH over many runs. (Q15 magnitudes are computed once per sample
and cached, :mod:`sensorbudget.firmware_gen.q15_c`: the first window after a reset computes all
of them, so single windows show that difference; BENCH repeats a steady-state window.)

The windows start at 0, 12, 24, 36 (a 100-sample recording); the first window after a reset
computes every cached magnitude, the next ones only the ``hop`` new samples', so a row is the
median of the windows after the first (``all six`` also gives the first window and the
maximum). Per extractor the firmware is generated
from the same plan with only that extractor left (:func:`dataclasses.replace` on the plan; the
other model inputs stay 0), and the cost of the plan with no extractor at all (the call,
``start``, the quantiser) is taken off, so a row is what adding that extractor to a firmware
costs. ``empty`` is the frame without extractors.

The lower bound is the loads + arithmetic per sample on Cortex-M4F (no loop control, no IT),
times the window, for the definitions the firmware computes: float32 ``mean`` 2 (vldr, vadd),
``min`` 4 (vldr, vcmp, vmrs, vmov), ``ptp`` 7 (one load, two compares), ``rms`` 2 (vldr, vmla:
two roundings in one instruction), magnitude mean of 3 channels 8 (3 vldr, vmul, 2 vmla, vsqrt,
vadd), ``last`` 1 per window; Q15 (integer definitions throughout): ``mean`` 2 (ldrsh, add),
``min`` 3 (ldrsh, cmp, mov), ``ptp`` 5, ``rms`` 2 (ldrsh, smlal) plus 10 per window (the
shift of the 64-bit sum, vmov, vcvt, vsqrt, vcvt, mul, cmp, sub, the scale), the magnitude 17
per *new* sample (3 ldrsh, mul, 2 mla, vmov, vcvt, vsqrt, vcvt, vmov, mul, cmp, sub; the cached
old value: ldrh, sub, add, strh) plus 2 per window, ``last`` 4 per window. (Before the integer
rms and magnitude, the Q15 bounds were rms 5 and magnitude 17 per sample of the window, on
``(float)q * scale``: 2 052 for the set.) M3 and RISC-V are shown
against the same bounds (their ratios say how far a core without an FPU is from them). The AVR
Q15 rows have their own bound, :data:`AVR_Q15` (ATmega328P cycles: 2-cycle loads and stores,
1-cycle 8-bit ALU ops, 2-cycle multiplies; the building blocks are in ``bench_issue28.py``'s
docstring); AVR float32 has none (``-``). The issue's own estimate (mean 2, min 4, ptp 8,
rms 3, magnitude 10) is within one of these float32 counts.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

DATA = Path("/work/shared/data/basic_motions")
WINDOW, HOP = 64, 12
SET = (("mean", ["acc_x"]), ("min", ["acc_y"]), ("ptp", ["acc_z"]), ("rms", ["gyro_x"]),
       ("last", ["gyro_y"]), ("mag_mean", ["acc_x", "acc_y", "acc_z"]))
#: loads + arithmetic per sample (and per window) on Cortex-M4F, per numeric format
PER_SAMPLE = {"float32": {"mean": 2, "min": 4, "ptp": 7, "rms": 2, "last": 0, "mag_mean": 8},
              "q15": {"mean": 2, "min": 3, "ptp": 5, "rms": 2, "last": 0, "mag_mean": 0}}
PER_NEW = {"float32": {}, "q15": {"mag_mean": 17}}   # per sample new since the last window
PER_WINDOW = {"float32": {"last": 1}, "q15": {"last": 4, "rms": 10, "mag_mean": 2}}
#: ATmega328P building blocks (cycles), see ``bench_issue28.py``: int16 load, store; int16 added
#: to an int32; 16-bit compare, move; signed 16x16->32 multiply; int32 added to an int64; int32
#: add; 32-bit integer square root (table method)
LOAD16, STORE16, ADD32_16, CMP16, MOV16, MUL16, ADD64_32, ADD32, SQRT = 4, 4, 7, 2, 1, 16, 11, 4, 68
#: AVR Q15 loads + arithmetic: per sample of the window, per new sample, per window, and the
#: push (one used channel's sample stored into its ring buffer, per new sample)
AVR_Q15 = {
    "per_sample": {"mean": LOAD16 + ADD32_16, "min": LOAD16 + CMP16 + MOV16,
                   "ptp": LOAD16 + 2 * (CMP16 + MOV16), "rms": LOAD16 + MUL16 + ADD64_32,
                   "last": 0, "mag_mean": 0},
    "per_new": {"mag_mean": 3 * LOAD16 + 3 * MUL16 + 2 * ADD32 + SQRT + 16},
    "per_window": {"rms": 6 * 8 + SQRT + MUL16, "last": LOAD16 + STORE16, "mag_mean": 6 * 4},
    "push": LOAD16 + STORE16,
}
STEPS = 4                   # window starts measured: 0, HOP, 2 HOP, 3 HOP
RUNS = (("cortex-m4f", "float32"), ("cortex-m4f", "q15"), ("cortex-m3", "float32"),
        ("cortex-m3", "q15"), ("avr", "q15"), ("avr", "float32"), ("hifive1", "q15"),
        ("hifive1", "float32"))
MODEL_REPS = {"cortex-m4f": 20000, "cortex-m3": 2000, "avr": 20, "hifive1": 2000}
UNIT = {"cortex-m4f": "instr", "cortex-m3": "instr", "avr": "cycles", "hifive1": "instr"}
TOOLS = {"avr": "avr-gcc", "hifive1": "riscv64-unknown-elf-gcc"}     # else arm-none-eabi-gcc


def bound_table(core: str, numeric: str):
    """{"per_sample", "per_new", "per_window", "push"} of ``core`` ("avr" or "m4f": the
    Cortex-M4F's, also used for M3 and RISC-V) and ``numeric``; None for AVR float32."""
    if core == "avr":
        return AVR_Q15 if numeric == "q15" else None
    return {"per_sample": PER_SAMPLE[numeric], "per_new": PER_NEW[numeric],
            "per_window": PER_WINDOW[numeric], "push": 2}


def lower_bound(kind: str, numeric: str, core: str = "m4f", window: int = WINDOW,
                hop: int = HOP):
    """Loads + arithmetic of ``kind`` per prediction (the pass; no push); None without a
    bound."""
    t = bound_table(core, numeric)
    if t is None:
        return None
    return (t["per_sample"][kind] * window + t["per_new"].get(kind, 0) * hop
            + t["per_window"].get(kind, 0))


def spec() -> dict:
    """The sensors.toml data of the set (one feature group per extractor)."""
    sensors = [{"name": "accel", "channels": ["acc_x", "acc_y", "acc_z"], "unit_price": 1.0,
                "energy_per_reading_j": 1.5e-6, "sample_rate_hz": 10},
               {"name": "gyro", "channels": ["gyro_x", "gyro_y", "gyro_z"], "unit_price": 2.5,
                "energy_per_reading_j": 1.5e-3, "sample_rate_hz": 10}]
    features = [{"channels": ch, "extractors": [kind]} if len(ch) == 1 else
                {"group": "acc", "channels": ch, "extractors": [kind]} for kind, ch in SET]
    return {"window": {"length": WINDOW, "hop": HOP, "on_missing": "skip"}, "sensors": sensors,
            "features": features}


def make_bundle(tmp: Path):
    """A one-target regression bundle (walking vs the rest, +-1) selecting all six extractors."""
    from sensorbudget.trainer import GreedyRLS
    from sensorbudget.trainer.bundle.model import bundle_contents, load_bundle, save_bundle
    from sensorbudget.trainer.sensing.feature_set import build_feature_set
    from sensorbudget.trainer.sensing.recordings import load_recordings
    from sensorbudget.trainer.sensing.sensors import parse_sensor_spec

    sspec = parse_sensor_spec(spec())
    fs = build_feature_set(load_recordings(DATA, sspec.sample_rate_hz), sspec)
    X = np.asarray(fs.X, dtype=np.float64)
    labels = np.asarray(fs.Y)
    labels = labels[:, 0] if labels.ndim == 2 else labels
    y = np.where(labels == labels[0], 1.0, -1.0)
    extractors, sensors, structure = fs.bundle_structure()
    est = GreedyRLS(budget=len(SET), lam=1.0).fit(X, y)
    meta, arrays = bundle_contents(est, X, list(fs.feature_names), ["walking"],
                                   task="regression", extractors=extractors, sensors=sensors,
                                   extra=structure)
    save_bundle(tmp / "issue22", meta, arrays)
    bundle = load_bundle(tmp / "issue22")
    assert len(bundle.meta["required_extractors"]) == len(SET), bundle.meta["selected"]
    return bundle, load_recordings(DATA, sspec.sample_rate_hz).recordings[3]


def _run(bundle, plan, target, work: Path, recording, harness) -> tuple:
    """(median extractors after the first window, max extractors, model, first window) cost of
    the firmware of ``plan`` on ``target``: the extractors of STEPS windows (STATS), the model
    per BENCH run."""
    from sensorbudget.device_sim.backends.firmware import launch
    from sensorbudget.device_sim.client import DeviceClient
    from sensorbudget.device_sim.link import Link
    from sensorbudget.firmware_gen import generate_firmware, reference
    from sensorbudget.firmware_gen.build import build, write_firmware

    fw = generate_firmware(bundle, target=target, numeric=plan.numeric, name=plan.name,
                           plan=plan)
    out = write_firmware(fw, work)
    build(out)
    X = np.column_stack([recording.columns[c] for c in plan.channels])
    samples = reference.quantize_samples(plan, X) if plan.fixed else X.astype("<f4")
    with launch(out, harness=harness) as dev:
        client = DeviceClient(Link(dev.port, timeout=600, retries=0),
                              max_request=fw.manifest["max_request_payload"])
        ext = []
        for step in range(STEPS):
            chunk = samples[:WINDOW] if step == 0 else \
                samples[WINDOW + (step - 1) * HOP:WINDOW + step * HOP]
            for i in range(0, len(chunk), 8):
                client.push(chunk[i:i + 8])
            ext.append(float(client.stats()[1]))
        _, model = client.bench(MODEL_REPS[target], "model")
        client.quit(0)
        dev.wait()
    return float(np.median(ext[1:])), max(ext), model / MODEL_REPS[target], ext[0]


def measure(bundle, recording, target, numeric, work: Path, harness, per_extractor=True):
    """{"full": (ext, model), "empty": ..., kind: ...} for one target and numeric format."""
    from sensorbudget.firmware_gen.plan import make_plan

    plan = make_plan(bundle, name="sbmodel", numeric=numeric, full_scale={"*": 64.0})
    out = {"full": _run(bundle, plan, target, work / f"{target}-{numeric}-full", recording,
                        harness)}
    if per_extractor:
        out["empty"] = _run(bundle, dataclasses.replace(plan, extractors=()), target,
                            work / f"{target}-{numeric}-empty", recording, harness)
        for e in plan.extractors:
            sub = dataclasses.replace(plan, extractors=(e,))
            out[e.kind] = _run(bundle, sub, target, work / f"{target}-{numeric}-{e.kind}",
                               recording, harness)
    out["k"], out["t"] = plan.k, plan.t
    return out


def _ratio(cost: float, bound) -> str:
    """The "bound | ratio" cells."""
    return "- | -" if bound is None else f"{bound} | {cost / bound:.2f}"


def report(rows) -> None:
    """Print one table: per target and numeric format, each extractor's cost beside its bound."""
    head = ("target", "numeric", "extractor", "measured", "bound", "ratio", "unit")
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for (target, numeric), r in rows:
        unit = UNIT[target]
        empty = r.get("empty", (0.0,))[0]
        fmt = "q15" if numeric == "q15" else "float32"
        core = "avr" if target == "avr" else "m4f"
        for kind, _ in SET:
            if kind in r:
                cost = r[kind][0] - empty
                bound = lower_bound(kind, fmt, core)
                print(f"| {target} | {numeric} | {kind} | {cost:.0f} | {_ratio(cost, bound)} | "
                      f"{unit} |")
        if "empty" in r:
            print(f"| {target} | {numeric} | (empty frame) | {empty:.0f} | - | - | {unit} |")
        bounds = [lower_bound(k, fmt, core) for k, _ in SET]
        bound = None if None in bounds else sum(bounds)
        ext, worst, model, first = r["full"]
        print(f"| {target} | {numeric} | **all six** (first window {first:.0f}, max "
              f"{worst:.0f}) | {ext:.0f} | {_ratio(ext, bound)} | {unit} |")
        print(f"| {target} | {numeric} | model ({r['k']}x{r['t']} MACs) | {model:.1f} "
              f"({model / (r['k'] * r['t']):.2f}/MAC) | - | - | {unit} |")


def run(work: Path, quick: bool = False, only=None) -> list:
    """Measure every available target (or the ``only`` "target:numeric" runs); print and
    return the rows."""
    import shutil

    from sensorbudget.firmware_gen.build import build_simavr_harness
    from sensorbudget.firmware_gen.errors import FirmwareGenError

    if not DATA.is_dir():
        print(f"extractor costs skipped: {DATA} is missing")
        return []
    bundle, recording = make_bundle(work)
    harness = None
    rows = []
    for target, numeric in RUNS:
        if only and f"{target}:{numeric}" not in only:
            continue
        tool = TOOLS.get(target, "arm-none-eabi-gcc")
        if shutil.which(tool) is None:
            print(f"{target}: skipped ({tool} is not installed)")
            continue
        if target == "avr" and harness is None:
            harness = build_simavr_harness(work / "sim")
        try:
            r = measure(bundle, recording, target, numeric, work, harness,
                        per_extractor=not quick)
        except FirmwareGenError as exc:          # e.g. does not fit the board's RAM
            print(f"{target} {numeric}: skipped ({exc})")
            continue
        rows.append(((target, numeric), r))
    print(f"\nextractor cost per prediction (the window pass): {WINDOW}-sample windows, the "
          f"issue-22 set (bound = loads + arithmetic per sample x {WINDOW}: the Cortex-M4F's, "
          f"the ATmega328P's for avr q15; see device_costs.py)")
    report(rows)
    return rows
