"""RISC-V targets beside nucleo-f4 and the Uno, one bundle, one run (issue 31).

Usage: python benchmarks/bench_riscv.py [--rows N] [--budget K]

Trains an Air Quality bundle (``--budget`` extractors, default 6, lambda by LOO) on the bundled
recording, then per target and numeric format builds the firmware (flash and RAM from
``size -A`` against the part's limits) and replays the first ``--rows`` hours of the recording
through the backend that runs it: ``qemu-hifive1`` (minstret, instructions), ``unicorn-rv32``
(the RV32IMC build, instructions, core only), ``unicorn-rv32ec`` (ch32v003, instructions, core
only), ``qemu-nucleo-f4`` (SysTick under -icount: instructions) and ``simavr`` (Uno: cycles).
A row gives the parity (mismatches against the Python reference), the median extractor and
model cost per prediction and the model's cost per multiply-add (k x t MACs). Instruction
counts of different ISAs are not cycles: they compare work, not time.
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
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bundle, recordings = bundle_of(work, args.budget), excerpt(work, args.rows)
        print(f"Air Quality, budget {args.budget}, first {args.rows} hours replayed; costs are "
              f"medians per prediction in the backend's unit\n")
        print("| target | backend | numeric | flash / limit | RAM / limit | predictions | "
              "mismatches | extractors | model | model per MAC | unit |\n" + "|---" * 11 + "|")
        for target, spec, numeric in RUNS:
            fp = footprint_of(bundle, target, numeric, work)
            mem = ((f"{fp['flash_bytes']} / {fp['flash_limit']}", f"{fp['ram_bytes']} / "
                    f"{fp['ram_limit']}") if isinstance(fp, dict) else (f"does not fit: {fp}",
                                                                         "-"))
            r = replay_of(spec, bundle, recordings, numeric, work)
            if isinstance(r, str):
                print(f"| {target} | {spec} | {numeric} | {mem[0]} | {mem[1]} | skipped: {r} "
                      f"| | | | | |")
                continue
            res, ext, mod, macs = r
            print(f"| {target} | {spec} | {numeric} | {mem[0]} | {mem[1]} | {len(res.records)} "
                  f"| {res.mismatches} | {ext:.0f} | {mod:.0f} | {mod / macs:.1f} "
                  f"({macs} MACs) | {res.cost_unit} |")


if __name__ == "__main__":
    main()
