"""Spectral candidates on BasicMotions: the tables of examples/gait_spectral/README.md.

    .venv/bin/python examples/gait_spectral/run.py [--out gait-out] [--folds 5] [--no-simulate]

The README's commands through the Python API (the same functions the CLI calls), from
../shared/data/basic_motions. Every number says what it is:

- nested CV: ``sensorbudget evaluate`` on all 80 recordings (outer folds keep each recording
  whole, stratified by class; selection and lambda inside each training fold), accuracy mean
  ± std over the folds (std with ddof=1, as evaluate's report) and the selected designs'
  energy per prediction (mean over the folds);
- sensor energy only: the candidate sets as shipped (time_domain / spectral.sensors.toml);
- with the compute priced (Arduino Uno): the 8-feature design of the spectral set trained on
  BasicMotions TRAIN (in-sample selection), replayed as float32 firmware on the ATmega328P in
  simavr over TEST (a test split), its measured costs merged into copies of both sensors files
  (``calibrate``), then the features priced on the Uno (``--compute-target arduino-uno``) and
  nested CV again.

The per-extractor table of the README comes from ``benchmarks/spectral_costs.py`` (one firmware
build and run per extractor subset on three devices: not repeated here).

Without ../shared/data/basic_motions the script prints why and exits 0.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tomllib
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

import sensorbudget as sb
from sensorbudget.trainer.errors import TrainerWarning

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2] / "shared" / "data" / "basic_motions"
SETS = ("time_domain", "spectral")
SENSOR_BUDGETS = ("4", "8", "energy:0.0001", "energy:0.1")
UNO_BUDGETS = ("4", "8", "energy:0.0001", "energy:0.0005", "energy:0.002", "energy:0.01",
               "energy:0.1")
#: what the README's first column says for a budget
LABELS = {"4": "4 features", "8": "8 features", "energy:0.0001": "energy ≤ 0.0001 J",
          "energy:0.0005": "energy ≤ 0.0005 J", "energy:0.002": "energy ≤ 0.002 J",
          "energy:0.01": "energy ≤ 0.01 J", "energy:0.1": "energy ≤ 0.1 J (both sensors)"}
#: the first table's: the gyroscope's 1.5 mJ a reading does not fit 0.1 mJ
SENSOR_LABELS = {**LABELS, "energy:0.0001": "energy ≤ 0.0001 J (accelerometer only)"}
UNO_DESIGN = ("spectral", 8)
TRANSFORMS = ("acc_y.fft", "gyro_z.fft")


def sensors_file(name: str) -> Path:
    return HERE / f"{name}.sensors.toml"


@dataclass
class Cell:
    """One candidate set at one budget under nested CV: per outer fold, the held-out accuracy,
    the selected design's energy per prediction (J) and its feature count."""

    budget: str
    accuracy: list = field(default_factory=list)
    energy: list = field(default_factory=list)
    features: list = field(default_factory=list)

    @property
    def mean(self) -> float:
        return float(np.mean(self.accuracy))

    @property
    def std(self) -> float:
        return float(np.std(self.accuracy, ddof=1))

    @property
    def energy_mean(self) -> float:
        return float(np.mean(self.energy))


def nested_cv(data, budgets, folds) -> dict:
    """{budget: Cell} of greedy-joint under nested CV (``sensorbudget evaluate``)."""
    ev = sb.evaluate(data, budgets=",".join(budgets), folds=folds, methods="greedy-joint")
    cells = {b: Cell(b) for b in budgets}
    for r in sorted(ev.records, key=lambda r: (r["budget"], r["fold"])):
        c = cells[r["budget"]]
        c.accuracy.append(float(r["accuracy"]))
        c.energy.append(float(r["cost_energy"]))
        c.features.append(int(r["n_features"]))
    return cells


def sensor_energy(data_dir=DATA, folds=5, budgets=SENSOR_BUDGETS) -> dict:
    """{set: {budget: Cell}}: the first table (sensor energy only)."""
    return {s: nested_cv(sb.features(data_dir, sensors=sensors_file(s)), budgets, folds)
            for s in SETS}


@dataclass
class Device:
    """The Uno replay of the 8-feature spectral design and what calibrate took from it."""

    selected: list
    predictions: int
    mismatches: int
    lost: int
    test_accuracy: float            # the device's decisions vs TEST's labels (a test split)
    cost: dict                      # report.json cost: medians in cycles
    energy: dict                    # J per prediction: sensors, compute, total
    transforms: dict                # calibrated FFT: cycles, s, J per window


def uno_design(data_dir: Path, out: Path) -> Device:
    """Train on TRAIN, replay TEST on the ATmega328P (simavr, float32), calibrate copies of
    both sensors files in ``out``."""
    name, budget = UNO_DESIGN
    train = sb.features(data_dir / "BasicMotions_TRAIN.ts", sensors=sensors_file(name))
    with warnings.catch_warnings():
        # overlapping windows: the in-sample LOO is optimistic; the honest numbers are nested CV
        warnings.simplefilter("ignore", TrainerWarning)
        bundle = sb.train(train, budget=budget)
    bundle.save(out / "gait8")
    fw = sb.firmware(out / "gait8", target="arduino-uno", numeric="float32", build=True)
    sim = sb.simulate(fw, str(data_dir / "BasicMotions_TEST.ts"), backend="simavr")
    sim.save(out / "sim_uno")
    for s in SETS:
        cal = out / f"{s}.cal.toml"
        shutil.copyfile(sensors_file(s), cal)
        sb.calibrate(cal, [out / "sim_uno"]).save()
    entries = [e for e in _calibration(out / f"{name}.cal.toml") if e["extractor"] in TRANSFORMS]
    r = sim.report
    return Device(
        selected=list(bundle.selected), predictions=r["predictions"],
        mismatches=r["mismatches"], lost=r["lost"],
        test_accuracy=r["accuracy"]["device"]["accuracy"],
        cost={k: r["cost"][k]["median"] for k in ("pushes", "extractors", "model", "total")},
        energy={k: r["energy"]["energy_per_prediction_j"][k]
                for k in ("sensors", "compute", "total")},
        transforms={e["extractor"]: {k: e[k] for k in ("compute_cycles", "compute_time_s",
                                                       "compute_energy_j", "method")}
                    for e in entries})


def _calibration(path: Path) -> list:
    return tomllib.loads(path.read_text())["calibration"]


def priced(data_dir: Path, out: Path, folds=5, budgets=UNO_BUDGETS, sets=SETS) -> dict:
    """{set: {budget: Cell}}: the second table (sensor + compute energy on the Uno), from the
    calibrated copies :func:`uno_design` wrote in ``out``."""
    return {s: nested_cv(sb.features(data_dir, sensors=out / f"{s}.cal.toml",
                                     compute_target="arduino-uno"), budgets, folds)
            for s in sets}


class OutputError(Exception):
    """An --out folder this example may not write into."""


OWN = ("table.md", "results.json", "gait8", "sim_uno", "time_domain.cal.toml",
       "spectral.cal.toml")


def check_out(out: Path) -> None:
    """``out`` is new, or holds only what an earlier run wrote (nothing else is replaced)."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} is not a folder")
    foreign = sorted(p.name for p in out.iterdir() if p.name not in OWN) if out.is_dir() else []
    if foreign:
        raise OutputError(f"--out {out} holds {foreign[0]!r}, which this example did not "
                          f"write; give a new or empty folder")


def run(data_dir=DATA, out="gait-out", folds=5, simulate=True) -> dict:
    """{"sensor_energy": {set: {budget: Cell}}, "uno": Device or None, "priced": ...}."""
    out = Path(out)
    check_out(out)
    out.mkdir(parents=True, exist_ok=True)
    result = {"sensor_energy": sensor_energy(data_dir, folds), "uno": None, "priced": None}
    if simulate:
        result["uno"] = uno_design(Path(data_dir), out)
        result["priced"] = priced(Path(data_dir), out, folds)
    (out / "results.json").write_text(json.dumps(
        {k: (asdict(v) if isinstance(v, Device) else
             {s: {b: asdict(c) for b, c in cells.items()} for s, cells in v.items()}
             if v else None) for k, v in result.items()}, indent=1, sort_keys=True) + "\n")
    return result


def joules(x: float) -> str:
    """Two significant digits, written out (0.030, 0.000030)."""
    return f"{x:.{max(0, 1 - int(np.floor(np.log10(x))))}f}" if x > 0 else f"{x:g}"


def table_rows(cells: dict, budgets, labels=LABELS) -> list:
    """Markdown rows: budget | time-domain accuracy | energy | spectral accuracy | energy."""
    lines = ["| budget | time-domain: accuracy | energy (J) | with spectral: accuracy | "
             "energy (J) |", "|---|---|---|---|---|"]
    for b in budgets:
        row = [labels[b]]
        for s in SETS:
            c = cells[s][b]
            row += [f"{c.mean:.3f} ± {c.std:.3f}", joules(c.energy_mean)]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def table(result, folds=5) -> list:
    """The README's tables as markdown lines."""
    lines = [f"Sensor energy only (nested CV: {folds} outer folds of the 80 recordings, each "
             f"recording whole; accuracy mean ± std over the folds, energy per prediction of "
             f"the selected designs: mean over the folds):", ""]
    lines += table_rows(result["sensor_energy"], SENSOR_BUDGETS, SENSOR_LABELS)
    dev = result["uno"]
    if dev is None:
        return lines
    lines += ["", f"The {UNO_DESIGN[1]}-feature spectral design (trained on TRAIN): "
              + ", ".join(dev.selected), "",
              f"On the Uno (simavr, float32, the {dev.predictions} TEST windows, a test split): "
              f"{dev.mismatches} mismatches vs Python, {dev.lost} lost, device accuracy "
              f"{dev.test_accuracy:.3f}; compute per prediction (median cycles): pushes "
              f"{dev.cost['pushes']:.0f} + window pass {dev.cost['extractors']:.0f} + model "
              f"{dev.cost['model']:.0f} = {dev.cost['total']:.0f}; energy per prediction: "
              f"sensors {dev.energy['sensors']:.3g} + compute {dev.energy['compute']:.3g} = "
              f"{dev.energy['total']:.3g} J", ""]
    for t, e in dev.transforms.items():
        lines.append(f"calibrated `{t}`: {e['compute_cycles']:.0f} cycles, "
                     f"{e['compute_time_s'] * 1e3:.1f} ms, {e['compute_energy_j'] * 1e3:.2f} mJ "
                     f"per window ({e['method']})")
    lines += ["", f"Sensor + compute energy on the Uno (nested CV, {folds} outer folds):", ""]
    lines += table_rows(result["priced"], UNO_BUDGETS)
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the basic_motions folder")
    parser.add_argument("--out", type=Path, default=Path("gait-out"))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--no-simulate", action="store_true",
                        help="only the first table (no firmware, no simavr)")
    args = parser.parse_args(argv)
    if not (args.data / "BasicMotions_TRAIN.ts").is_file():
        print(f"skipped: BasicMotions not found in {args.data} (it is read from "
              f"../shared/data/basic_motions; the archive states no license, so it is not "
              f"shipped)")
        return 0
    try:
        result = run(args.data, args.out, folds=args.folds, simulate=not args.no_simulate)
    except OutputError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    lines = table(result, folds=args.folds)
    (args.out / "table.md").write_text("\n".join(lines) + "\n")
    print(*lines, sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
