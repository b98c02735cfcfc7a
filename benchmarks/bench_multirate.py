"""Multi-rate firmware (issue 30 item 3): what lower rates buy on the device, side by side.

Usage: python benchmarks/bench_multirate.py [--backend unicorn-m4f]

Three designs of the same seven extractor kinds on BasicMotions (accelerometer and gyroscope
recorded at 10 Hz; all 80 recordings replayed):

- ``single 10 Hz``: the single-rate firmware (examples/basic_motions.sensors.toml: acc_x.min,
  acc.mag_mean, acc_y.zcr, gyro_y.energy, gyr.mag_max, gyro_z.std, acc_z.ptp);
- ``multi, all 10 Hz``: the same features as a multi-rate bundle
  (examples/basic_motions.rates.sensors.toml, every feature ``@10``): the multi-rate unit's
  own cost at equal features (two groups, one per sensor);
- ``multi 10/5/2 Hz``: accel at 10 and 5 Hz, gyro at 5 and 2 Hz (four groups; the gyroscope
  runs at 10 Hz, since 2 Hz is no whole fraction of 5 Hz).

For each, in float32 and Q15, on the Cortex-M4F image (mps2-an386): the linked image's static
RAM and flash (``firmware --build``'s footprint) beside the estimates from the plan
(firmware_gen.memory / multirate_memory); the instructions per prediction, counted on unicorn
function by function (:func:`device_cost`: every push since the previous window plus the
window's computation, and the computation alone); and ``simulate``'s own extractor figure and
mismatches against the Python reference (must be 0). Then the Uno in Q15 (simavr, cycles):
simulate's extractor cost and BENCH's. Ratios are to ``single 10 Hz`` in the same numeric,
from the same run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.benchutil import table  # noqa: E402
from tests.paths import REPO, SHARED  # noqa: E402

DATA = SHARED / "basic_motions"
KINDS = ["acc_x.min", "acc.mag_mean", "acc_y.zcr", "gyro_y.energy", "gyr.mag_max",
         "gyro_z.std", "acc_z.ptp"]
MIXED = ["acc_x@10.min", "acc@5.mag_mean", "acc_y@10.zcr", "gyro_y@5.energy",
         "gyr@2.mag_max", "gyro_z@2.std", "acc_z@5.ptp"]


def designs(work: Path) -> dict:
    """{label: bundle} of the three designs (greedy RLS on exactly these columns)."""
    from sensorbudget.trainer.sensing.feature_set import load_feature_set
    from tests.firmware_gen.conftest import train

    single = load_feature_set(DATA, REPO / "examples" / "basic_motions.sensors.toml")
    rated = load_feature_set(DATA, REPO / "examples" / "basic_motions.rates.sensors.toml")
    at10 = [c.split(".")[0] + "@10." + c.split(".", 1)[1] for c in KINDS]
    return {"single 10 Hz": train(single, work / "single", len(KINDS), KINDS),
            "multi, all 10 Hz": train(rated, work / "multi10", len(at10), at10),
            "multi 10/5/2 Hz": train(rated, work / "mixed", len(MIXED), MIXED)}


def _device_rows(bundle, numeric: str) -> list:
    """Per recording, the pushes a device gets: [(sensor index or None, sample row)]."""
    import numpy as np

    from sensorbudget.firmware_gen import multirate_reference as mr
    from sensorbudget.firmware_gen import reference
    from sensorbudget.firmware_gen.multirate import is_multi_rate, make_multirate_plan
    from sensorbudget.firmware_gen.plan import make_plan
    from sensorbudget.trainer.sensing import rates
    from sensorbudget.trainer.sensing.recordings import load_recordings

    recs = load_recordings(DATA, 10.0).recordings
    dtype = np.float32 if numeric == "float32" else np.int16
    out = []
    if not is_multi_rate(bundle):
        plan = make_plan(bundle, name="sbmodel", numeric=numeric)
        for rec in recs:
            x = np.column_stack([rec.columns[c] for c in plan.channels])
            x = reference.quantize_samples(plan, x) if plan.fixed else x
            out.append([(None, row.astype(dtype)) for row in x])
        return out
    from sensorbudget.trainer.sensing.sensors import load_sensor_spec

    spec = load_sensor_spec(REPO / "examples" / "basic_motions.rates.sensors.toml")
    mplan = make_multirate_plan(bundle, name="sbmodel", numeric=numeric)
    for rec in recs:
        _, _, aligned = rates.usable_windows(rec, spec, "skip")
        streams = mr.trainer_streams(mplan, aligned)
        streams = mr.quantize_streams(mplan, streams) if mplan.fixed else streams
        names = [s.name for s in mplan.sensors]
        order = mr.push_order(mplan, {n: len(x) for n, x in streams.items()})
        out.append([(s, streams[names[s]][i].astype(dtype)) for s, i in order])
    return out


def _rows_cost(caller, state, scratch, rows, per: list, compute: list) -> None:
    """A single-rate recording's rows through ``sbmodel_stream_add_rows`` (per prediction:
    its calls since the previous window + ``stream_compute``), appended to per / compute."""
    import numpy as np

    cap = max(1, (caller.sym["fw_rx"][1] - 16) // rows[0].nbytes)
    stored, spent = caller.data("fw_tx"), 0
    for i in range(0, len(rows), cap):
        block = rows[i:i + cap]
        caller.write(scratch, np.ascontiguousarray(block).tobytes())
        at = 0
        while at < len(block):
            done, n = caller.call("sbmodel_stream_add_rows", state,
                                  scratch + at * rows[0].nbytes, len(block) - at, stored)
            at += int.from_bytes(caller.read(stored, 4), "little")
            spent += n
            if done:
                per.append(spent + caller.call("sbmodel_stream_compute", state)[1])
                spent = 0
                compute.append(caller.call("sbmodel_stream_compute", state)[1])


def device_cost(elf: Path, rows: list) -> tuple:
    """Median instructions per prediction on unicorn (Cortex-M4F): every push since the
    previous window plus the window's computation (single-rate: ``stream_add_rows`` on the
    rows up to the window's end, in blocks the receive buffer holds, as main.c stores a
    request's rows, and ``stream_compute``; multi-rate: ``mr_push`` per sample, which computes
    each group's window in the push that completes it), and the computation alone
    (``stream_compute`` / ``mr_compute``, the BENCH figure)."""
    import statistics

    import numpy as np

    from benchmarks.bench_issue28 import M4Caller

    caller = M4Caller(elf)
    state, scratch = caller.data("fw_stream"), caller.data("fw_rx")
    multi = rows[0][0][0] is not None
    per, compute = [], []
    for rec in rows:
        caller.call("sbmodel_mr_reset" if multi else "sbmodel_stream_reset", state)
        spent = 0
        if not multi:
            _rows_cost(caller, state, scratch, np.stack([r for _, r in rec]), per, compute)
            continue
        for sensor, row in rec:
            caller.write(scratch, row.tobytes())
            done, n = caller.call("sbmodel_mr_push", state, sensor, scratch)
            spent += n
            if done == 1:
                per.append(spent)
                spent = 0
                compute.append(caller.call("sbmodel_mr_compute" if multi else
                                           "sbmodel_stream_compute", state)[1])
    return statistics.median(per), statistics.median(compute), len(per)


def measure(bundle, numeric: str, backend: str, work: Path) -> dict:
    import sensorbudget as sb

    fw = sb.firmware(bundle.path, target="mps2-an386", numeric=numeric, build=True)
    fw.save(work)
    foot = json.loads((work / "footprint.json").read_text())
    r = sb.simulate(fw, DATA, backend=backend).report
    per, compute, n = device_cost(work / fw.manifest["artifacts"]["elf"],
                                  _device_rows(bundle, numeric))
    assert n == r["predictions"], (n, r["predictions"])
    return {"ram": foot["ram_bytes"], "ram_est": fw.manifest.get("ram_estimate"),
            "flash": foot["flash_bytes"], "flash_est": fw.manifest.get("flash_estimate"),
            "per": per, "compute": compute, "sim": r["cost"]["extractors"]["median"],
            "model": r["cost"]["model"]["median"], "predictions": r["predictions"],
            "mismatches": r["mismatches"]}


def uno_rows(bundles: dict) -> list:
    """The Uno (ATmega328P, simavr, cycles), Q15: simulate's extractor cost per prediction,
    BENCH's recomputation of the extractors, and the linked static RAM."""
    import sensorbudget as sb

    rows, base = [], None
    for label, bundle in bundles.items():
        fw = sb.firmware(bundle.path, target="arduino-uno", numeric="q15", build=True)
        r = sb.simulate(fw, DATA, backend="simavr").report
        m = (r["cost"]["extractors"]["median"], r["cost"]["bench"]["extractors"]["per_run"])
        base = base or m
        rows.append([label, f"{m[0]:g}", f"{m[0] / base[0]:.2f}x", f"{m[1]:.0f}",
                     f"{m[1] / base[1]:.2f}x", f"{r['predictions']} / {r['mismatches']}"])
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="unicorn-m4f")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bundles = designs(work)
        for numeric in ("float32", "q15"):
            base = None
            for label, bundle in bundles.items():
                m = measure(bundle, numeric, args.backend, work / f"fw_{numeric}_{len(rows)}")
                base = base or m
                rows.append([label, numeric, f"{m['ram']} ({m['ram_est']})",
                             f"{m['ram'] / base['ram']:.2f}x",
                             f"{m['flash']} ({m['flash_est']})",
                             f"{m['flash'] / base['flash']:.2f}x", f"{m['per']:g}",
                             f"{m['per'] / base['per']:.2f}x", f"{m['compute']:g}",
                             f"{m['compute'] / base['compute']:.2f}x", f"{m['sim']:g}",
                             f"{m['model']:g}", f"{m['predictions']} / {m['mismatches']}"])
        uno = uno_rows(bundles)
    print("BasicMotions, 80 recordings; firmware for mps2-an386 (Cortex-M4F); instructions on "
          "unicorn, median per prediction; RAM/flash: linked image (estimate from the plan)")
    print(table(["design", "numeric", "static RAM B (est.)", "RAM", "flash B (est.)", "flash",
                 "pushes + compute", "ratio", "compute alone", "ratio",
                 f"simulate's extractors ({args.backend})", "model",
                 "predictions / mismatches"], rows))
    print("\nThe Uno (arduino-uno image on simavr), Q15, cycles per prediction")
    print(table(["design", "extractors (simulate, median)", "ratio", "BENCH extractors",
                 "ratio", "predictions / mismatches"], uno))


if __name__ == "__main__":
    main()
