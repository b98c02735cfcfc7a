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


def paid_where(work: Path) -> list:
    """Per-prediction extractor cost where it is paid (issue 28), on the issue's 6-feature
    bundle (synthetic 9-channel 64 Hz stream, window 64, hop 32): on unicorn-m4f, every
    ``<name>_stream_add`` (one per pushed sample) and ``<name>_stream_compute`` (the window
    pass) counted per call. A prediction pays the ``hop`` pushes since the previous window plus
    the window pass (the first window: ``window`` pushes and the pass, with the Q15 magnitude
    cache filled); ``simulate``'s extractor cost is the pass alone. Beside them, the per-sample
    lower bound of ``device_costs.py`` (loads + arithmetic) for the same kinds at this window
    and hop. Prints and returns the rows."""
    from sensorbudget.device_sim.backends import available_backends

    reason = available_backends().get("unicorn-m4f")
    if reason is not None:
        print(f"per-prediction costs skipped: unicorn-m4f: {reason}")
        return []
    sys.path.insert(0, str(ROOT))
    import device_costs
    from sensorbudget.device_sim.backends.unicorn import UnicornBackend
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.firmware_gen import reference
    from tests.firmware_gen import gen_runner, generative

    rec = generative.write_recordings(work / "recordings", 2026)
    case = generative.issue_case()
    bundle, _ = generative.case_bundle(case, generative.feature_set(case, rec, work),
                                       work / "bundle")
    data = gen_runner.recordings_arrays(rec)
    rows = []
    for numeric in ("float32", "q15"):
        scales = None if numeric == "float32" else gen_runner.full_scale(
            case, ReferenceModel(bundle, "float32").plan.channels, data)
        model = ReferenceModel(bundle, numeric, full_scale=scales)
        be = UnicornBackend(model=model, workdir=work / f"u-{numeric}")
        be.open()
        be.reset()
        samples = reference.quantize_samples(model.plan, np.column_stack(
            [data[0][:, generative.CHANNELS.index(c)] for c in model.plan.channels])) \
            if numeric != "float32" else np.column_stack(
            [data[0][:, generative.CHANNELS.index(c)] for c in model.plan.channels]).astype(
                np.float32)
        pushes, per_window = 0, []
        for row in samples:
            be.uc.mem_write(be.scratch, np.ascontiguousarray(row).tobytes())
            done, n = be._call(be.fn["add"], be.stream, be.scratch)
            pushes += n
            if done:
                _, compute = be._call(be.fn["compute"], be.stream)
                per_window.append((pushes, compute))
                pushes = 0
        be.close()
        kinds = {"mean", "min", "ptp", "rms", "last", "mag_mean"}
        old = device_costs.HOP
        device_costs.HOP = case.hop
        bound = sum(device_costs.PER_SAMPLE[numeric][k] * case.window
                    + device_costs.PER_NEW[numeric].get(k, 0) * case.hop
                    + device_costs.PER_WINDOW[numeric].get(k, 0) for k in kinds)
        device_costs.HOP = old
        first = sum(per_window[0])
        steady = float(np.median([p + c for p, c in per_window[1:]]))
        passes = float(np.median([c for _, c in per_window[1:]]))
        rows.append((numeric, first, steady, passes, steady - passes, bound, steady / bound))
    print("\nper prediction where it is paid (issue-28 bundle, unicorn-m4f instructions; "
          "steady = median over the windows after the first)")
    print("| numeric | first window (pushes + pass) | steady: pushes + pass | pass alone "
          "(simulate) | pushes | lower bound | steady / bound |\n|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(f"{x:.4g}" if isinstance(x, float) else str(x) for x in r)
              + " |")
    return rows


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
                    help="only the per-prediction (pushes + window pass) table, issue 28")
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
            paid_where(work / "paid")
            return
        bundle = args.bundle or train_bundle(work / "bundle")
        table(args, bundle, args.recordings, work)
        paid_where(work / "paid")
        soak(args, bundle, args.recordings, work)
        device_costs.run(work / "costs", quick=args.quick, only=runs)


if __name__ == "__main__":
    main()
