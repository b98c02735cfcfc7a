"""Which sensors, at which rates? The multi-rate example (examples/multirate/README.md).

    .venv/bin/python examples/multirate/run.py [--out multirate-out] [--folds 5] [--no-simulate]

A wrist-worn activity tracker (BasicMotions: accelerometer + gyroscope at 10 Hz, read from
../shared/data/basic_motions). At three energy budgets per prediction, at most ``--cap``
features each, it compares the design chosen when every feature is a candidate at 10, 5 and 2 Hz
(watch.sensors.toml) with the best design when one rate holds for every sensor
(watch.<q>hz.sensors.toml). Every number says what it is:

- nested CV: ``sensorbudget evaluate`` on the 40 TRAIN recordings (outer folds keep each
  recording whole; selection and lambda inside each training fold);
- the design: ``sensorbudget train`` on all of TRAIN (its price and its sensor energy per
  prediction, from sensors.toml through the one cost model);
- test split: that design's predictions on the 40 TEST recordings (never trained on);
- simulate: the multi-rate design as float32 firmware on the nucleo-f4 image under QEMU and
  on the Arduino Uno under simavr, replaying TEST (a device whose tools are missing is skipped
  with the reason).

Without ../shared/data/basic_motions the script prints why and exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

import sensorbudget as sb
from sensorbudget.trainer.errors import TrainerError, TrainerWarning

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2] / "shared" / "data" / "basic_motions"
MULTI = HERE / "watch.sensors.toml"
RATES = (10, 5, 2)
#: (sensor energy per prediction in J, the average sensor power at one prediction per second)
BUDGETS = ((7e-6, "7 uW"), (1e-5, "10 uW"), (6e-3, "6 mW"))
CAP = 8
#: device -> (firmware target, simulate backend)
DEVICES = {"nucleo-f4": ("nucleo-f4", "qemu-nucleo-f4"), "arduino-uno": ("arduino-uno", "simavr")}


def single_rate_file(rate) -> Path:
    return HERE / f"watch.{rate}hz.sensors.toml"


@dataclass
class Design:
    """One selection procedure at one budget: its nested-CV score and the design it trains."""

    budget_j: float
    candidates: str              # "10/5/2 Hz" (multi-rate) or "5 Hz" (one rate for all)
    fits: bool = True
    note: str = ""
    cv_error: list = field(default_factory=list)     # nested CV: error rate per outer fold
    cv_energy: list = field(default_factory=list)    # sensor J per prediction per fold
    rates: dict = field(default_factory=dict)        # design: {sensor: Hz}
    features: list = field(default_factory=list)
    price: float = float("nan")
    energy_j: float = float("nan")
    test_accuracy: float = float("nan")
    bundle: str = ""
    simulations: dict = field(default_factory=dict)  # device -> measured numbers or skip note

    @property
    def cv_mean(self) -> float:
        return float(np.mean(self.cv_error)) if self.cv_error else float("nan")

    @property
    def cv_std(self) -> float:
        return float(np.std(self.cv_error)) if self.cv_error else float("nan")


def budget_spec(budget_j: float, cap: int) -> str:
    """The evaluate budget: at most ``cap`` features under the energy limit."""
    return f"{cap}@energy:{budget_j:g}"


def nested_cv(data, budget_j, cap, folds) -> tuple:
    """(error rate per outer fold, sensor energy per fold) of greedy-joint at the budget, or
    the tool's one line when nothing fits it."""
    try:
        ev = sb.evaluate(data, budgets=budget_spec(budget_j, cap), folds=folds,
                         methods="greedy-joint")
    except TrainerError as exc:              # the one line naming the cheapest option
        if "fits the budget" not in str(exc):
            raise
        return None, str(exc)
    records = sorted(ev.records, key=lambda r: r["fold"])
    return ([1.0 - r["accuracy"] for r in records], [r["cost_energy"] for r in records]), ""


def train_design(design: Design, data, test, cap, out: Path) -> None:
    """Train on all of TRAIN, save the bundle, score the TEST windows (a test split)."""
    with warnings.catch_warnings():
        # overlapping windows: the in-sample LOO criterion is optimistic; the honest numbers
        # are the nested CV and the test split
        warnings.simplefilter("ignore", TrainerWarning)
        bundle = sb.train(data, budget=cap, max_energy=design.budget_j)
    total = bundle.meta["costs"]["total"]
    design.rates = {k: float(v) for k, v in bundle.meta["sensor_rates_hz"].items()}
    design.features = list(bundle.selected)
    design.price, design.energy_j = float(total["price"]), float(total["energy"])
    decided = np.asarray(sb.predict(bundle, test).columns["class"])
    truth = np.asarray(test.target_names)[np.argmax(test.Y, axis=1)]
    design.test_accuracy = float(np.mean(decided == truth))
    path = out / f"bundle_{design.candidates.replace('/', '-').replace(' ', '')}_" \
                 f"{design.budget_j:g}"
    bundle.save(path)
    design.bundle = str(path)


def simulate(design: Design, test_path: Path, out: Path, devices=None) -> None:
    """The design as float32 firmware on each device, replaying TEST (a device whose tools
    are missing is skipped with the reason)."""
    from sensorbudget.device_sim.backends import available_backends

    missing = available_backends()
    for device, (target, backend) in (devices or DEVICES).items():
        if missing.get(backend) is not None:
            design.simulations[device] = {"skipped": f"backend {backend}: {missing[backend]}"}
            continue
        fw = sb.firmware(design.bundle, target=target, numeric="float32", build=True)
        sim = sb.simulate(fw, str(test_path), backend=backend)
        r = sim.report
        sim.save(out / f"sim_{device}_{Path(design.bundle).name}")
        design.simulations[device] = {
            "backend": backend, "predictions": r["predictions"], "lost": r["lost"],
            "mismatches": r["mismatches"], "accuracy": r["accuracy"]["device"]["accuracy"],
            "cost_unit": r["cost"]["unit"], "cost_median": r["cost"]["total"]["median"],
            "energy_j": r["energy"]["energy_per_prediction_j"]}


class OutputError(Exception):
    """An --out folder this example may not write into."""


def check_out(out: Path) -> None:
    """``out`` is new, or holds only what an earlier run wrote (nothing else is replaced)."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} is not a folder")
    foreign = sorted(p.name for p in out.iterdir() if not (
        p.name in ("table.md", "results.json") or p.name.startswith(("bundle_", "sim_")))) \
        if out.is_dir() else []
    if foreign:
        raise OutputError(f"--out {out} holds {foreign[0]!r}, which this example did not "
                          f"write; give a new or empty folder")


def run(data_dir=DATA, out="multirate-out", folds=5, budgets=BUDGETS, cap=CAP, rates=RATES,
        devices=True) -> list:
    """[(multi-rate Design, best single-rate Design, {rate: single-rate Design})] per budget."""
    out = Path(out)
    check_out(out)
    out.mkdir(parents=True, exist_ok=True)
    train_path, test_path = data_dir / "BasicMotions_TRAIN.ts", data_dir / "BasicMotions_TEST.ts"
    sets = {"10/5/2 Hz": MULTI, **{f"{q} Hz": single_rate_file(q) for q in rates}}
    data = {name: sb.features(train_path, sensors=path) for name, path in sets.items()}
    tests = {name: sb.features(test_path, sensors=path) for name, path in sets.items()}
    rows = []
    for budget_j, _ in budgets:
        designs = {}
        for name in sets:
            d = Design(budget_j, name)
            scores, d.note = nested_cv(data[name], budget_j, cap, folds)
            if scores is None:
                d.fits = False
            else:
                d.cv_error, d.cv_energy = scores
                train_design(d, data[name], tests[name], cap, out)
            designs[name] = d
        multi = designs.pop("10/5/2 Hz")
        fitting = [d for d in designs.values() if d.fits]
        best = min(fitting, key=lambda d: (d.cv_mean, d.energy_j)) if fitting else None
        if devices:
            simulate(multi, test_path, out)
        rows.append((multi, best, designs))
    (out / "results.json").write_text(json.dumps(
        [{"multi_rate": _record(m), "best_single_rate": _record(b) if b else None,
          "single_rate": {k: _record(v) for k, v in s.items()}} for m, b, s in rows],
        indent=1, sort_keys=True) + "\n")
    return rows


def _record(d: Design) -> dict:
    """A design for results.json: its bundle by folder name (inside --out), so that the same
    run writes the same bytes wherever --out is."""
    return dict(asdict(d), bundle=Path(d.bundle).name if d.bundle else "")


def _rates(d: Design) -> str:
    return ", ".join(f"{s} {r:g} Hz" for s, r in d.rates.items())


def _cv(d: Design) -> str:
    return f"{d.cv_mean:.3f} ± {d.cv_std:.3f}"


def table(rows, budgets=BUDGETS, folds=5, cap=CAP) -> list:
    """The README's tables as markdown lines."""
    story = dict(budgets)
    lines = [f"Designs (at most {cap} features; nested CV: {folds} outer folds of the 40 TRAIN "
             f"recordings, each recording whole; design and price/energy: trained on all of "
             f"TRAIN; test split: the 40 TEST recordings)", "",
             "| budget (J per prediction) | candidates | sensors at rates | features | price "
             "(USD) | sensor energy per prediction (J) | nested-CV error rate (mean ± std) | "
             "test-split accuracy |", "|---|---|---|---|---|---|---|---|"]
    for multi, best, _ in rows:
        head = f"{multi.budget_j:g} ({story.get(multi.budget_j, '')})"
        for label, d in (("10/5/2 Hz (multi-rate)", multi),
                         (f"best single rate: {best.candidates}" if best else
                          "best single rate", best)):
            if d is None or not d.fits:
                lines.append(f"| {head} | {label} | none fits | | | | | |")
                continue
            lines.append(f"| {head} | {label} | {_rates(d)} | {len(d.features)} | "
                         f"{d.price:g} | {d.energy_j:.3g} | {_cv(d)} | "
                         f"{d.test_accuracy:.3f} |")
    lines += ["", "Every single rate (nested-CV error rate, mean ± std; sensor energy per "
              "prediction of the design trained on TRAIN):", "",
              "| budget (J) | " + " | ".join(rows[0][2]) + " |",
              "|---|" + "---|" * len(rows[0][2])]
    for multi, _, singles in rows:
        cells = [f"{_cv(d)}, {d.energy_j:.3g} J" if d.fits else "none fits"
                 for d in singles.values()]
        lines.append(f"| {multi.budget_j:g} | " + " | ".join(cells) + " |")
    sims = [(m, dev, s) for m, _, _ in rows for dev, s in m.simulations.items()]
    if sims:
        lines += ["", "The multi-rate designs on devices (float32 firmware replaying the 40 "
                  "TEST recordings):", "",
                  "| budget (J) | device (backend) | predictions | mismatches vs Python | "
                  "device accuracy (test split) | compute per prediction | energy per "
                  "prediction: sensors + compute (J) |", "|---|---|---|---|---|---|---|"]
        for m, dev, s in sims:
            if "skipped" in s:
                lines.append(f"| {m.budget_j:g} | {dev} | skipped: {s['skipped']} | | | | |")
                continue
            e = s["energy_j"]
            lines.append(f"| {m.budget_j:g} | {dev} ({s['backend']}) | {s['predictions']} | "
                         f"{s['mismatches']} | {s['accuracy']:.3f} | {s['cost_median']:g} "
                         f"{s['cost_unit']} (median) | {e['sensors']:.3g} + "
                         f"{e['compute']:.3g} = {e['total']:.3g} |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the basic_motions folder")
    parser.add_argument("--out", type=Path, default=Path("multirate-out"))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--cap", type=int, default=CAP, help="at most this many features")
    parser.add_argument("--no-simulate", action="store_true")
    args = parser.parse_args(argv)
    if not (args.data / "BasicMotions_TRAIN.ts").is_file():
        print(f"skipped: BasicMotions not found in {args.data} (it is read from "
              f"../shared/data/basic_motions; the archive states no license, so it is not "
              f"shipped)")
        return 0
    try:
        rows = run(args.data, args.out, folds=args.folds, cap=args.cap,
                   devices=not args.no_simulate)
    except OutputError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    lines = table(rows, folds=args.folds, cap=args.cap)
    (args.out / "table.md").write_text("\n".join(lines) + "\n")
    print(*lines, sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
