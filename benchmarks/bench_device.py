"""Per-backend cost table and a link soak: BasicMotions replayed through every available backend.

Usage: python benchmarks/bench_device.py [--bundle DIR] [--recordings PATH] [--quick]
                                         [--soak-seeds N] [--extractors-only]

Without --bundle, a 5-extractor bundle is trained on BasicMotions TRAIN (the shared data) and
TEST is replayed. For each available backend and numeric format the table gives the parity
(predictions, mismatches), the per-prediction extractor and model cost (median of the STATS
answers, in the backend's unit), the BENCH per-run averages and the wall time. The soak replays
the same recordings through the host firmware over a link that corrupts and drops bytes
(FaultyTransport, several seeds) and counts delivered / retried / lost / wrong predictions.
The last table (``device_costs.py``) gives, per extractor and target, the measured cost of the
issue-22 set (64-sample windows) beside its lower bound (loads + arithmetic per sample).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MOTIONS = Path("/work/shared/data/basic_motions")
PLAN = [("python", "float32"), ("host", "float32"), ("host", "q15"), ("qemu-m4f", "float32"),
        ("qemu-m4f", "q15"), ("unicorn-m4f", "float32"), ("unicorn-m4f", "q15"),
        ("qemu-m3", "float32"), ("qemu-m3", "q15"), ("simavr", "q15"), ("simavr", "float32")]


def train_bundle(out: Path) -> Path:
    cmd = [sys.executable, "-m", "sensorbudget", "train", str(MOTIONS / "BasicMotions_TRAIN.ts"),
           "--sensors", str(ROOT / "examples" / "basic_motions.sensors.toml"), "--budget", "5",
           "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    return out


def one(spec, numeric, bundle, recordings, work, max_recordings, wrap=None, **kw):
    from sensorbudget.device_sim.backends import make_backend
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.device_sim.replay import replay
    from sensorbudget.device_sim.simulate import run_bench
    from sensorbudget.trainer.bundle.model import load_bundle
    from sensorbudget.trainer.sensing.recordings import load_recordings

    full_scale = {"*": 64.0} if numeric != "float32" else None
    model = ReferenceModel(load_bundle(bundle), numeric, full_scale=full_scale)
    rset = load_recordings(recordings, model.sample_rate)
    rset.recordings = rset.recordings[:max_recordings]
    be = make_backend(spec, model=model, workdir=work, wrap=wrap, **kw)
    t0 = time.perf_counter()
    try:
        res = replay(be, model, rset)
        bench = run_bench(be) if wrap is None else {}
        be.quit()
    finally:
        be.close()
    return res, bench, time.perf_counter() - t0


def median(values):
    v = [x for x in values if x is not None]
    return float(np.median(v)) if v else float("nan")


def table(args, bundle, recordings, work):
    from sensorbudget.device_sim.backends import available_backends

    usable = available_backends()
    rows = []
    for spec, numeric in PLAN:
        if usable.get(spec) is not None:
            print(f"skip {spec}: {usable[spec]}", file=sys.stderr)
            continue
        n_rec = args.max_recordings if spec != "simavr" else min(args.max_recordings, 8)
        res, bench, wall = one(spec, numeric, bundle, recordings, work / f"{spec}-{numeric}",
                               n_rec)
        per = {p: bench.get(p, {}).get("per_run", float("nan")) for p in ("extractors", "model")}
        unit = (res.cost_unit or "-") + (" (estimated)" if spec == "python" else "")
        rows.append((spec, numeric, len(res.records), res.mismatches, unit,
                     median(r.extractors for r in res.records),
                     median(r.model for r in res.records), per["extractors"], per["model"],
                     wall))
    head = ("backend", "numeric", "pred", "mism", "unit", "ext/pred", "model/pred",
            "BENCH ext", "BENCH model", "wall s")
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(f"{x:.6g}" if isinstance(x, float) else str(x) for x in r) + " |")


def paid_where() -> list:
    """Per-prediction extractor cost where it is paid (issue 28): ``bench_issue28.py`` on the
    issue's bundle (pushes over the hop + the window pass as simulate reports it, the first
    window apart, beside a per-core lower bound). Prints and returns its rows."""
    import bench_issue28  # benchmarks/ (this script's directory) is on sys.path

    return bench_issue28.main([])


def soak(args, bundle, recordings, work):
    from sensorbudget.device_sim.backends import available_backends
    from sensorbudget.device_sim.transports import FaultyTransport

    spec = "host" if available_backends()["host"] is None else "python"
    print(f"\nsoak: {spec} firmware, corrupt 0.1% + drop 0.1% of bytes both ways")
    print("| seed | predictions | delivered | retried | lost | mismatches | retransmissions | "
          "dropped frames | wall s |\n|---|---|---|---|---|---|---|---|---|")
    for seed in range(args.soak_seeds):
        def wrap(port, seed=seed):
            return FaultyTransport(port, seed=seed, corrupt=0.001, drop=0.001)

        res, _, wall = one(spec, "float32", bundle, recordings, work / f"soak{seed}",
                           args.max_recordings, wrap=wrap, timeout=0.1, retries=4)
        link = res.link
        print(f"| {seed} | {len(res.records)} | {res.count('delivered')} | "
              f"{res.count('retried')} | {res.count('lost')} | {res.mismatches} | "
              f"{link['retransmissions']} | {link['dropped_frames']} | {wall:.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", type=Path)
    ap.add_argument("--recordings", type=Path, default=MOTIONS / "BasicMotions_TEST.ts")
    ap.add_argument("--quick", action="store_true", help="10 recordings, 1 soak seed")
    ap.add_argument("--soak-seeds", type=int, default=3)
    ap.add_argument("--extractors-only", action="store_true",
                    help="only the per-extractor cost table of the issue-22 set")
    ap.add_argument("--paid-only", action="store_true",
                    help="only the per-prediction (pushes + window pass) table, issue 28 "
                         "(bench_issue28.py)")
    ap.add_argument("--cost-runs", default="",
                    help="comma-separated target:numeric runs of that table (default: all)")
    args = ap.parse_args()
    args.max_recordings = 10 if args.quick else 40
    if args.quick:
        args.soak_seeds = 1
    import device_costs  # benchmarks/ (this script's directory) is on sys.path

    runs = [r for r in args.cost_runs.split(",") if r]
    with tempfile.TemporaryDirectory(prefix="bench-device-") as tmp:
        work = Path(tmp)
        if args.extractors_only:
            device_costs.run(work / "costs", quick=args.quick, only=runs)
            return
        if args.paid_only:
            paid_where()
            return
        bundle = args.bundle or train_bundle(work / "bundle")
        table(args, bundle, args.recordings, work)
        paid_where()
        soak(args, bundle, args.recordings, work)
        device_costs.run(work / "costs", quick=args.quick, only=runs)


if __name__ == "__main__":
    main()
