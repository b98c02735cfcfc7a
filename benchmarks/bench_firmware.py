"""Cost of the generated firmware per prediction: Cortex-M4F instructions and AVR cycles.

Usage: python benchmarks/bench_firmware.py [--targets cortex-m4f,avr] [--quick]

Bundles are trained on the real BasicMotions recordings (/work/shared/data/basic_motions):
4-class activity recognition (t = 4) with k = 4 and 12 features, and a sensor-substitution
regression (t = 6: the gyroscope's per-axis mean and std predicted from accelerometer features)
with k = 12 and 24. For every (k, t), numeric format and target the firmware is generated,
built and run: Cortex-M4F in QEMU mps2-an386 with ``-icount shift=0`` (SysTick x 40 =
instructions), AVR (ATmega328P, 16 MHz) in simavr (Timer1 at clk/1 = cycles). One window of a
real recording is pushed, then the firmware's BENCH command repeats the extractors (features of
that window, conversion and quantisation included) and the model (one call of the kernel through
a function pointer, everything included) many times. ``/MAC`` = model cost / (k * t).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data" / "basic_motions"
GYRO_TARGETS = ["gyro_x.mean", "gyro_y.mean", "gyro_z.mean", "gyro_x.std", "gyro_y.std",
                "gyro_z.std"]
REPS = {"cortex-m4f": (20000, 2000), "cortex-m3": (5000, 200), "avr": (300, 10)}
UNIT = {"cortex-m4f": "instr", "cortex-m3": "instr", "avr": "cycles"}
REFERENCE = """\
reference points for 12 features x 6 outputs (issue 6, measured elsewhere): m2cgen (double) 122
instr/MAC on M4F and 266 cycles/MAC on AVR; plain float32 loop 5.7 instr/MAC, fully unrolled
float32 3.0 instr/MAC on M4F. Targets: M4F float32 <= 3.2 instr/MAC, AVR q15 <= 50 cycles/MAC."""


def train_bundles(tmp: Path, quick: bool) -> list:
    """[(label, bundle)] on BasicMotions: classification (t=4) and acc -> gyro regression (t=6)."""
    from sensorbudget.trainer.training import estimator_for_task
    from sensorbudget.trainer import GreedyRLS
    from sensorbudget.trainer.bundle.model import bundle_contents, load_bundle, save_bundle
    from sensorbudget.trainer.sensing.feature_set import load_feature_set

    fs = load_feature_set(DATA, ROOT / "examples" / "basic_motions.sensors.toml")
    X = np.asarray(fs.X, dtype=np.float64)
    names = list(fs.feature_names)
    extractors, sensors, structure = fs.bundle_structure()
    out = []
    for k in ([12] if quick else [4, 12]):
        est, y, targets, _ = estimator_for_task(fs.task, np.asarray(fs.Y), list(fs.target_names))
        est.set_params(budget=k, lam=1.0).fit(X, y)
        classes = [str(c) for c in est.classes_.tolist()]
        meta, arrays = bundle_contents(est, X, names, classes, task=fs.task,
                                       extractors=extractors, sensors=sensors,
                                       extra={**structure, "classes": classes})
        save_bundle(tmp / f"cls{k}", meta, arrays)
        out.append(("activity (4 classes)", load_bundle(tmp / f"cls{k}")))
    acc = [i for i, s in enumerate(fs.feature_sensors) if s == "accel"]
    Y = X[:, [names.index(t) for t in GYRO_TARGETS]]
    acc_names = [names[i] for i in acc]
    acc_ext = [e for e in extractors if e["features"][0] in acc_names]
    for k in ([12] if quick else [12, 24]):
        est = GreedyRLS(budget=k, lam=1.0).fit(X[:, acc], Y)
        meta, arrays = bundle_contents(est, X[:, acc], acc_names, GYRO_TARGETS,
                                       task="regression", extractors=acc_ext, sensors=sensors,
                                       extra=structure)
        save_bundle(tmp / f"reg{k}", meta, arrays)
        out.append(("acc -> gyro regression", load_bundle(tmp / f"reg{k}")))
    return out


def full_scale(recordings) -> dict:
    from sensorbudget.firmware_gen.plan import power_of_two_above

    return {c: power_of_two_above(max(float(np.nanmax(np.abs(r.columns[c])))
                                      for r in recordings.recordings))
            for c in recordings.recordings[0].columns}


def measure(bundle, target, numeric, kernel, work: Path, recording, scales, harness) -> dict:
    from sensorbudget.device_sim.backends.firmware import launch
    from sensorbudget.device_sim.client import DeviceClient
    from sensorbudget.device_sim.link import Link
    from sensorbudget.firmware_gen import generate_firmware, reference
    from sensorbudget.firmware_gen.build import build, write_firmware
    from sensorbudget.firmware_gen.plan import make_plan

    channels = make_plan(bundle, name="sbmodel", numeric="float32").channels
    fw = generate_firmware(bundle, target=target, numeric=numeric, kernel=kernel,
                           full_scale={c: scales[c] for c in channels})
    out = write_firmware(fw, work / f"{target}-{numeric}-{kernel}-{fw.plan.k}x{fw.plan.t}")
    fp = build(out)
    plan = fw.plan
    X = np.column_stack([recording.columns[c] for c in plan.channels])[:plan.window]
    samples = reference.quantize_samples(plan, X) if plan.fixed else X.astype("<f4")
    model_reps, ext_reps = REPS[target]
    with launch(out, harness=harness) as dev:
        client = DeviceClient(Link(dev.port, timeout=600, retries=0),
                              max_request=fw.manifest["max_request_payload"])
        done = 0
        for i in range(0, len(samples), 8):        # AVR requests carry <= 256 bytes
            done += len(client.push(samples[i:i + 8]))
        assert done == 1
        _, model = client.bench(model_reps, "model")
        _, ext = client.bench(ext_reps, "extractors")
        client.quit(0)
        dev.wait()
    return {"k": plan.k, "t": plan.t, "model": model / model_reps, "ext": ext / ext_reps,
            "kernel": fw.manifest["kernel"], "flash": fp["flash_bytes"], "ram": fp["ram_bytes"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="cortex-m4f,avr",
                        help="comma-separated: cortex-m4f, cortex-m3, avr")
    parser.add_argument("--quick", action="store_true", help="one bundle per task")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"skipped: {DATA} is missing")
        return 0
    from sensorbudget.firmware_gen.build import build_simavr_harness
    from sensorbudget.trainer.sensing.recordings import load_recordings

    targets = [t for t in args.targets.split(",") if t]
    need = {"cortex-m4f": ["arm-none-eabi-gcc", "qemu-system-arm"],
            "cortex-m3": ["arm-none-eabi-gcc", "qemu-system-arm"], "avr": ["avr-gcc", "gcc"]}
    for t in list(targets):
        missing = [tool for tool in need[t] if shutil.which(tool) is None]
        if missing:
            print(f"{t}: skipped ({missing[0]} is not installed)")
            targets.remove(t)
    recordings = load_recordings(DATA, 10)
    recording, scales = recordings.recordings[3], full_scale(recordings)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        harness = build_simavr_harness(work / "sim") if "avr" in targets else None
        bundles = train_bundles(work, args.quick)
        print(f"{'target':<11} {'numeric':<8} {'task':<23} {'k':>3} {'t':>2} {'kernel':<9}"
              f"{'extractors':>11} {'model':>8} {'model/MAC':>10} {'unit':<7}"
              f"{'flash':>7} {'RAM':>6}")
        for target in targets:
            runs = [(label, b, n, "auto") for label, b in bundles
                    for n in ("float32", "q15", "q31")]
            runs += [(label, b, n, "loop") for label, b in bundles[-1:] for n in ("float32", "q15")]
            for label, bundle, numeric, kernel in runs:
                r = measure(bundle, target, numeric, kernel, work, recording, scales, harness)
                print(f"{target:<11} {numeric:<8} {label:<23} {r['k']:>3} {r['t']:>2} "
                      f"{r['kernel']:<9}{r['ext']:>11.0f} {r['model']:>8.1f} "
                      f"{r['model'] / (r['k'] * r['t']):>10.2f} {UNIT[target]:<7}"
                      f"{r['flash']:>7} {r['ram']:>6}", flush=True)
    print(REFERENCE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
