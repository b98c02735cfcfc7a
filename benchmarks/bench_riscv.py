"""RISC-V targets beside nucleo-f4 and the Uno, one bundle, one run (issue 31).

Usage: python benchmarks/bench_riscv.py [--rows N] [--budget K] [--per-extractor]

Trains an Air Quality bundle (``--budget`` extractors, default 6, lambda by LOO) on the bundled
recording, then per target and numeric format builds the firmware (flash and RAM from
``size -A`` against the part's limits) and replays the first ``--rows`` hours of the recording
through the backend that runs it: ``qemu-hifive1`` (minstret, instructions), ``unicorn-rv32``
(the RV32IMC build, instructions, core only), ``unicorn-rv32ec`` (ch32v003, instructions, core
only), ``qemu-nucleo-f4`` (SysTick under -icount: instructions) and ``simavr`` (Uno: cycles).
A row gives the parity (mismatches against the Python reference), the median extractor and
model cost per prediction and the model's cost per multiply-add (k x t MACs). Instruction
counts of different ISAs are not cycles: they compare work, not time.

The second table is the lower-bound method used for Cortex-M (``device_costs.py``, also in
``bench_device.py --extractors-only``): the issue-22 set (six extractors over 64-sample windows,
hop 12, BasicMotions) built for hifive1 (QEMU ``minstret``), the Cortex-M4F and Cortex-M3 (QEMU
MPS2, instructions; the nucleo-f4's core is the M4F) and the Uno's ATmega328P (simavr, cycles),
the extractor cost per prediction (median of the windows after the first) against the same
bound (loads + arithmetic per sample: the Cortex-M4F's; the ATmega328P's for Uno Q15), and the
model per multiply-add; with ``--per-extractor`` each extractor alone too.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
AIR = ROOT / "data" / "air_quality_uci" / "AirQualityUCI.csv"
SENSORS = ROOT / "examples" / "air_quality.sensors.toml"
#: (target, backend, numeric)
RUNS = [(t, b, n) for n in ("q15", "float32") for t, b in (
    ("hifive1", "qemu-hifive1"), ("hifive1", "unicorn-rv32"), ("ch32v003", "unicorn-rv32ec"),
    ("nucleo-f4", "qemu-nucleo-f4"), ("arduino-uno", "simavr"))]


def bundle_of(work: Path, budget: int) -> Path:
    from click.testing import CliRunner

    from sensorbudget.cli import main

    out = work / "bundle"
    result = CliRunner().invoke(main, ["train", str(AIR), "--sensors", str(SENSORS), "--budget",
                                       str(budget), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def excerpt(work: Path, rows: int) -> Path:
    lines = AIR.read_text(encoding="utf-8", errors="replace").splitlines(True)
    path = work / "excerpt.csv"
    path.write_text("".join(lines[:rows + 1]), encoding="utf-8")
    return path


def footprint_of(bundle, target, numeric, work: Path):
    from sensorbudget.firmware_gen import FirmwareGenError, generate_firmware
    from sensorbudget.firmware_gen.build import build, write_firmware
    from sensorbudget.trainer.bundle.model import load_bundle

    fw = generate_firmware(load_bundle(bundle), target=target, numeric=numeric)
    try:
        return build(write_firmware(fw, work / f"fp-{target}-{numeric}"))
    except FirmwareGenError as exc:
        return str(exc)


def replay_of(spec, bundle, recordings, numeric, work: Path):
    from sensorbudget.device_sim.backends import available_backends, make_backend
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.device_sim.replay import replay
    from sensorbudget.trainer.bundle.model import load_bundle
    from sensorbudget.trainer.sensing.recordings import load_recordings

    reason = available_backends().get(spec)
    if reason is not None:
        return reason
    model = ReferenceModel(load_bundle(bundle), numeric)
    be = make_backend(spec, model=model, workdir=work)
    try:
        res = replay(be, model, load_recordings(recordings, model.sample_rate))
        be.quit()
    finally:
        be.close()
    ext = float(np.median([r.extractors for r in res.records]))
    mod = float(np.median([r.model for r in res.records]))
    return res, ext, mod, model.k * model.t


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=300)
    ap.add_argument("--budget", type=int, default=6)
    ap.add_argument("--per-extractor", action="store_true",
                    help="the lower-bound table per extractor too (builds 8 images a target)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bundle, recordings = bundle_of(work, args.budget), excerpt(work, args.rows)
        from sensorbudget.trainer.bundle.model import load_bundle

        print(f"Air Quality, budget {args.budget}, first {args.rows} hours replayed; costs are "
              f"medians per prediction in the backend's unit; features: "
              f"{', '.join(load_bundle(bundle).meta['selected'])}\n")
        print("| target | backend | numeric | flash / limit | RAM / limit | predictions | "
              "mismatches | extractors | bound (ratio) | model | model per MAC | unit |\n"
              + "|---" * 12 + "|")
        for target, spec, numeric in RUNS:
            fp = footprint_of(bundle, target, numeric, work)
            mem = ((f"{fp['flash_bytes']} / {fp['flash_limit']}", f"{fp['ram_bytes']} / "
                    f"{fp['ram_limit']}") if isinstance(fp, dict) else (f"does not fit: {fp}",
                                                                         "-"))
            r = replay_of(spec, bundle, recordings, numeric, work)
            if isinstance(r, str):
                print(f"| {target} | {spec} | {numeric} | {mem[0]} | {mem[1]} | skipped: {r} "
                      f"| | | | | | |")
                continue
            res, ext, mod, macs = r
            bound = bound_of(bundle, numeric, "avr" if spec == "simavr" else "m4f")
            ratio = "-" if bound is None else f"{bound} ({ext / bound:.2f})"
            print(f"| {target} | {spec} | {numeric} | {mem[0]} | {mem[1]} | {len(res.records)} "
                  f"| {res.mismatches} | {ext:.0f} | {ratio} | {mod:.0f} | {mod / macs:.1f} "
                  f"({macs} MACs) | {res.cost_unit} |")
        bounds_table(work / "costs", args.per_extractor)


def bound_of(bundle, numeric: str, core: str = "m4f"):
    """The lower bound of ``device_costs.py`` for ``core`` ("m4f": the Cortex-M4F's, also shown
    for the RISC-V rows; "avr": the ATmega328P's, Q15 only) (loads + arithmetic per sample, per
    new sample and per window) summed over the bundle's extractors at its window and hop ('max'
    counts as 'min'); None when a kind has no bound there."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import device_costs
    from sensorbudget.firmware_gen.plan import make_plan
    from sensorbudget.trainer.bundle.model import load_bundle

    fmt = "float32" if numeric == "float32" else "q15"
    plan = make_plan(load_bundle(bundle), name="b", numeric="float32")
    table = device_costs.bound_table(core, fmt)
    if table is None:
        return None
    per = {**table["per_sample"], "max": table["per_sample"]["min"]}
    kinds = [e.kind for e in plan.extractors]
    if any(k not in per for k in kinds):
        return None
    return sum(per[k] * plan.window + table["per_new"].get(k, 0) * plan.hop
               + table["per_window"].get(k, 0) for k in kinds)


def bounds_table(work: Path, per_extractor: bool) -> None:
    """The issue-22 set against the Cortex-M lower bound (``device_costs.run``), Q15 and
    float32, on hifive1, Cortex-M4F, Cortex-M3 and the Uno."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import device_costs

    runs = [f"{t}:{n}" for n in ("q15", "float32")
            for t in ("hifive1", "cortex-m4f", "cortex-m3", "avr")]
    device_costs.run(work, quick=not per_extractor, only=runs)


if __name__ == "__main__":
    main()
