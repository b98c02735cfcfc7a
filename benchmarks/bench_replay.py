"""Replay speed per backend against the same firmware without the link (issue 29).

Usage: python benchmarks/bench_replay.py [--seconds 3600] [--before DIR] [--backends ...]
                                         [--numeric q15] [--work DIR]

The device: ``replay_data`` (9 channels at 100 Hz, window 256 / hop 128, six features with one
256-point FFT; simavr: 3 channels, window 64 / hop 32, four features with one 64-point FFT, as
the Uno cannot hold the other's window); the stream: ``--seconds`` of it (an hour: 360 000
samples, 3.24 M channel samples, 2 811 predictions). For each backend the table gives the replay's samples per second
(``Replayer.run`` after the device is up: the Python reference, the link and the device; build
and start-up excluded) for this checkout and, with ``--before DIR`` (a checkout of an earlier
commit, e.g. ``git worktree add /tmp/before HEAD``), for that one, run in the same invocation
with its own PYTHONPATH; every replay is checked (0 mismatches, nothing lost).

Beside them, the *no-link* run: the same firmware built with ``-DSBFW_REPLAY_EXCERPT`` runs a
compiled-in excerpt of the same stream (its first samples, repeated) through the stream,
extractors and model from memory, with no link at all, in the same emulator; its rate is
(samples run) / (its wall time minus that of a run of 0 repetitions, the boot). ``python``'s
no-link figure is the reference pipeline on the whole stream (features and scores, no device).
The figure to hold is the ratio replay / no-link (issue 29: <= 3 on qemu-nucleo-f4 and simavr;
the hour on qemu-nucleo-f4 in <= 15 s; host >= 1 M channel samples per second).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
BACKENDS = ("python", "host", "qemu-m4f", "qemu-nucleo-f4", "unicorn-m4f", "simavr")
FULL_SCALE = {"*": 8.0}
#: backend -> firmware target of its no-link run (unicorn: none; it has no link of its own)
NO_LINK_TARGET = {"host": "host", "qemu-m4f": "mps2-an386", "qemu-nucleo-f4": "nucleo-f4",
                  "simavr": "arduino-uno"}
#: samples compiled into the no-link image, and repetitions (AVR: 32 KB of flash, slow)
EXCERPT = {"host": (8192, 44), "mps2-an386": (8192, 44), "nucleo-f4": (8192, 22),
           "arduino-uno": (512, 8)}


# -- one replay (run in a child process, with the PYTHONPATH of the checkout measured) ---------
def worker(spec: str, numeric: str, bundle: str, stream: str, work: str) -> dict:
    from sensorbudget.device_sim.backends import make_backend
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.device_sim.replay import Replayer
    from sensorbudget.trainer.bundle.model import load_bundle
    from sensorbudget.trainer.sensing.recordings import load_recordings

    model = ReferenceModel(load_bundle(bundle), numeric, full_scale=FULL_SCALE)
    rset = load_recordings(stream, model.sample_rate)
    be = make_backend(spec, model=model, workdir=work)
    if hasattr(be, "build") and spec != "unicorn-m4f":
        be.build()
    marks = {}
    opened = be.open

    def timed_open():
        info = opened()
        marks["up"] = time.perf_counter()
        return info

    be.open = timed_open
    try:
        res = Replayer(be, model).run(rset)
        end = time.perf_counter()
        be.quit()
    finally:
        be.close()
    return {"seconds": end - marks["up"], "samples": res.samples_sent,
            "channels": len(model.channels), "predictions": len(res.records),
            "mismatches": res.mismatches, "lost": res.count("lost"),
            "requests": res.link.get("requests")}


def run_worker(tree: Path, spec: str, args, bundle: Path, stream: Path, work: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", spec, "--numeric",
           args.numeric, "--bundle", str(bundle), "--stream", str(stream), "--work", str(work)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tree)
    if done.returncode != 0:
        return {"error": (done.stderr or done.stdout).strip().splitlines()[-1][:120]}
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- the no-link runs --------------------------------------------------------------------------
def excerpt_header(wire: np.ndarray, samples: int, reps: int) -> str:
    data = np.ascontiguousarray(wire[:samples]).tobytes()
    rows = ",\n".join("    " + ", ".join(str(b) for b in data[i:i + 24])
                      for i in range(0, len(data), 24))
    return ("/* sbfw_excerpt.h: a compiled-in excerpt for the no-link replay "
            "(benchmarks/bench_replay.py). */\n#include <stdint.h>\n#include <string.h>\n"
            "#ifdef __AVR__\n#include <avr/pgmspace.h>\n#define SBFW_EXCERPT_ATTR PROGMEM\n"
            "#define SBFW_EXCERPT_COPY memcpy_P\n#else\n#define SBFW_EXCERPT_ATTR\n"
            "#define SBFW_EXCERPT_COPY memcpy\n#endif\n"
            f"#define SBFW_EXCERPT_SAMPLES {samples}u\n#define SBFW_EXCERPT_REPS {reps}u\n"
            f"static const uint8_t sbfw_excerpt[{len(data)}] SBFW_EXCERPT_ATTR = {{\n{rows}\n}};\n")


def no_link_rate(target: str, model, wire: np.ndarray, work: Path) -> float:
    """Samples per second of the firmware running a compiled-in excerpt without the link."""
    from sensorbudget.device_sim.backends.firmware import _semihost_argv
    from sensorbudget.firmware_gen.build import build, build_simavr_harness, write_firmware
    from sensorbudget.firmware_gen.firmware import generate_firmware
    from sensorbudget.firmware_gen.targets import get_target, run_command

    samples, reps = EXCERPT[target]
    tgt = get_target(target)
    times = []
    for r in (0, reps):
        out = work / f"nolink-{target}-{r}"
        fw = generate_firmware(model.bundle, target=target, numeric=model.numeric,
                               name=model.plan.name, plan=model.plan)
        write_firmware(fw, out)
        (out / "sbfw_excerpt.h").write_text(excerpt_header(wire, samples, r))
        build(out, make_vars={"EXTRA_CFLAGS": "-DSBFW_REPLAY_EXCERPT"})
        if tgt.arch == "avr":
            build_simavr_harness(out)
        argv = run_command(tgt, out, 1)
        if tgt.emulators[0] == "qemu":
            argv = _semihost_argv(argv)
        best = None
        for _ in range(2):                      # the faster of two runs (a busy machine)
            t0 = time.perf_counter()       # stdin stays open: simavr's harness ends at EOF
            done = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            done.wait()
            t = time.perf_counter() - t0
            done.stdin.close()
            per_rep = (samples - model.window) // model.hop + 1
            if done.returncode != per_rep * r % 251:      # every window of every repetition ran
                raise SystemExit(f"no-link {target} exited {done.returncode}, not "
                                 f"{per_rep * r % 251} (predictions % 251)")
            best = t if best is None else min(best, t)
        times.append(best)
    return samples * reps / max(times[1] - times[0], 1e-9)


def python_no_link(model, wire: np.ndarray) -> float:
    t0 = time.perf_counter()
    model.scores(model.features_of(wire))
    return len(wire) / (time.perf_counter() - t0)


# -- the table ---------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3600.0)
    ap.add_argument("--simavr-seconds", type=float, default=120.0,
                    help="simavr's stream (it runs ~2 000 samples/s: an hour takes 3 min, "
                         "30 min before issue 29)")
    ap.add_argument("--before", type=Path, default=None,
                    help="an earlier checkout, measured side by side")
    ap.add_argument("--backends", nargs="+", default=list(BACKENDS))
    ap.add_argument("--numeric", default="q15")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--bundle", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--stream", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.numeric, args.bundle, args.stream,
                                str(args.work))))
        return 0
    from sensorbudget.device_sim.backends import available_backends
    from replay_data import make_bundle, write_stream_npz

    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        work = args.work or Path(tmp)
        bundles = {"main": make_bundle(work / "data"), "uno": make_bundle(work / "data", uno=True)}
        streams = {"main": write_stream_npz(work / "data" / "stream.npz", args.seconds),
                   "uno": write_stream_npz(work / "data" / "uno.npz", args.simavr_seconds)}
        usable = available_backends()
        rows = []
        for spec in args.backends:
            if usable.get(spec) is not None:
                print(f"skip {spec}: {usable[spec]}", file=sys.stderr)
                continue
            bundle = bundles["uno" if spec == "simavr" else "main"]
            stream = streams["uno" if spec == "simavr" else "main"]
            after = run_worker(ROOT, spec, args, bundle, stream, work / f"after-{spec}")
            before = (run_worker(args.before, spec, args, bundle, stream,
                                 work / f"before-{spec}") if args.before else None)
            rows.append((spec, before, after, _no_link(spec, args, bundle, stream, work)))
            print_row(*rows[-1], flush=True)
    return 1 if any("error" in r[2] or r[2]["mismatches"] or r[2]["lost"] for r in rows) else 0


def _no_link(spec, args, bundle, stream, work):
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.trainer.bundle.model import load_bundle
    from sensorbudget.trainer.sensing.recordings import load_recordings

    model = ReferenceModel(load_bundle(bundle), args.numeric, full_scale=FULL_SCALE)
    rec = load_recordings(stream, model.sample_rate).recordings[0]
    wire = model.wire_samples(np.column_stack([rec.columns[c] for c in model.channels]))
    if spec == "python":
        return python_no_link(model, wire)
    if spec not in NO_LINK_TARGET:
        return None
    return no_link_rate(NO_LINK_TARGET[spec], model, wire, work / "nolink")


HEADER_PRINTED = []


def _rate(r) -> str:
    if r is None:
        return "-"
    if "error" in r:
        return "error"
    return f"{r['samples'] / r['seconds']:,.0f}"


def print_row(spec, before, after, no_link, flush=False) -> None:
    if not HEADER_PRINTED:
        print(f"{'backend':15} {'before smp/s':>13} {'after smp/s':>12} {'after s':>8} "
              f"{'ch-smp/s':>10} {'no-link smp/s':>14} {'before/nl':>10} {'after/nl':>9}  check")
        HEADER_PRINTED.append(1)
    ok = "error" not in after
    rate = after["samples"] / after["seconds"] if ok else None
    brate = (before["samples"] / before["seconds"]
             if before is not None and "error" not in before else None)
    ratio = f"{no_link / rate:.2f}x" if ok and no_link else "-"
    bratio = f"{no_link / brate:.2f}x" if brate and no_link else "-"
    check = (f"{after['predictions']} predictions, {after['mismatches']} mismatches, "
             f"{after['lost']} lost" if ok else after["error"])
    print(f"{spec:15} {_rate(before):>13} {_rate(after):>12} "
          f"{after['seconds'] if ok else float('nan'):8.2f} "
          f"{rate * after['channels'] if ok else float('nan'):10,.0f} "
          f"{(f'{no_link:,.0f}' if no_link else '-'):>14} {bratio:>10} {ratio:>9}  {check}",
          flush=flush)


if __name__ == "__main__":
    sys.exit(main())
