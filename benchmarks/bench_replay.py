"""Replay speed per backend against the same firmware without the link (issue 29).

Usage: python benchmarks/bench_replay.py [--seconds 3600] [--before DIR] [--backends ...]
                                         [--numeric q15] [--repeat N] [--work DIR]

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

Both in wall-clock time and in CPU time: on a busy machine (2 cores shared by several users)
a process waits in the run queue for much of its wall-clock time, so wall-clock ratios swing
from run to run; the CPU columns count the CPU seconds of the replay (the host process, its
reference thread included, and the emulator, boot included) and of the no-link run (the
emulator's, minus its boot). ``--repeat N`` runs before, after and no-link N times,
interleaved, and keeps the best of each.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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
EXCERPT = {"host": (8192, 400), "mps2-an386": (8192, 160), "nucleo-f4": (8192, 100),
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
        marks["cpu"] = _cpu(resource.RUSAGE_SELF)
        return info

    be.open = timed_open
    try:
        children = _cpu(resource.RUSAGE_CHILDREN)      # the emulator's, once it is reaped
        res = Replayer(be, model).run(rset)
        end = time.perf_counter()
        host_cpu = _cpu(resource.RUSAGE_SELF) - marks["cpu"]
        be.quit()
    finally:
        be.close()
    return {"seconds": end - marks["up"], "samples": res.samples_sent,
            "cpu_host": host_cpu, "cpu_device": _cpu(resource.RUSAGE_CHILDREN) - children,
            "channels": len(model.channels), "predictions": len(res.records),
            "mismatches": res.mismatches, "lost": res.count("lost"),
            "requests": res.link.get("requests")}


def _cpu(who) -> float:
    """User + system CPU seconds of this process (RUSAGE_SELF, every thread) or of its reaped
    children (RUSAGE_CHILDREN)."""
    use = resource.getrusage(who)
    return use.ru_utime + use.ru_stime


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


def no_link_images(target: str, model, wire: np.ndarray, work: Path) -> list:
    """The two no-link images of ``target`` (0 and EXCERPT repetitions of the excerpt): [(argv,
    repetitions)]."""
    from sensorbudget.device_sim.backends.firmware import _semihost_argv
    from sensorbudget.firmware_gen.build import build, build_simavr_harness, write_firmware
    from sensorbudget.firmware_gen.firmware import generate_firmware
    from sensorbudget.firmware_gen.targets import get_target, run_command

    samples, reps = EXCERPT[target]
    tgt = get_target(target)
    images = []
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
        images.append((argv, r))
    return images


def no_link_rate(target: str, model, images: list) -> tuple:
    """Samples per second of the firmware running a compiled-in excerpt without the link, per
    wall-clock second and per CPU second of the emulator: the excerpt's samples over the time of
    the image that repeats it minus that of the one that only boots (each the faster of two
    runs)."""
    samples, _ = EXCERPT[target]
    times, cpus = [], []
    for argv, r in images:
        best = cpu = None
        for _ in range(2):                      # the faster of two runs (a busy machine)
            t0, c0 = time.perf_counter(), _cpu(resource.RUSAGE_CHILDREN)
            # stdin stays open: simavr's harness ends at EOF
            done = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            done.wait()
            t = time.perf_counter() - t0
            c = _cpu(resource.RUSAGE_CHILDREN) - c0
            cpu = c if cpu is None else min(cpu, c)
            done.stdin.close()
            per_rep = (samples - model.window) // model.hop + 1
            if done.returncode != per_rep * r % 251:      # every window of every repetition ran
                raise SystemExit(f"no-link {target} exited {done.returncode}, not "
                                 f"{per_rep * r % 251} (predictions % 251)")
            best = t if best is None else min(best, t)
        times.append(best)
        cpus.append(cpu)
    n = samples * images[1][1]
    return n / max(times[1] - times[0], 1e-9), n / max(cpus[1] - cpus[0], 1e-9)


def python_no_link(model, wire: np.ndarray) -> tuple:
    t0, c0 = time.perf_counter(), _cpu(resource.RUSAGE_SELF)
    model.scores(model.features_of(wire))
    return (len(wire) / (time.perf_counter() - t0),
            len(wire) / max(_cpu(resource.RUSAGE_SELF) - c0, 1e-9))


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
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of each (before, after, no-link, interleaved); the best is shown")
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
            no_link = _no_link(spec, args, bundle, stream, work)
            before = after = nl = None
            for _ in range(args.repeat):        # interleaved; the best of each (a busy machine)
                if args.before:
                    before = _best(before, run_worker(args.before, spec, args, bundle, stream,
                                                      work / f"before-{spec}"))
                after = _best(after, run_worker(ROOT, spec, args, bundle, stream,
                                                work / f"after-{spec}"))
                rate = no_link()
                nl = rate if nl is None or rate is None else (max(nl[0], rate[0]),
                                                              max(nl[1], rate[1]))
            rows.append((spec, before, after, nl))
            print_row(*rows[-1], flush=True)
    return 1 if any("error" in r[2] or r[2]["mismatches"] or r[2]["lost"] for r in rows) else 0


def _best(old, new):
    """The faster of two worker results (an error only when both failed)."""
    if old is None or "error" in old:
        return new
    if "error" in new:
        return old
    return new if new["samples"] / new["seconds"] > old["samples"] / old["seconds"] else old


def _no_link(spec, args, bundle, stream, work):
    """A function measuring the no-link rate of ``spec`` once (None: it has none)."""
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.trainer.bundle.model import load_bundle
    from sensorbudget.trainer.sensing.recordings import load_recordings

    model = ReferenceModel(load_bundle(bundle), args.numeric, full_scale=FULL_SCALE)
    rec = load_recordings(stream, model.sample_rate).recordings[0]
    wire = model.wire_samples(np.column_stack([rec.columns[c] for c in model.channels]))
    if spec == "python":
        return lambda: python_no_link(model, wire)
    if spec not in NO_LINK_TARGET:
        return lambda: None
    target = NO_LINK_TARGET[spec]
    images = no_link_images(target, model, wire, work / "nolink")
    return lambda: no_link_rate(target, model, images)


HEADER_PRINTED = []


def _rate(r) -> str:
    if r is None:
        return "-"
    if "error" in r:
        return "error"
    return f"{r['samples'] / r['seconds']:,.0f}"


def _cpu_rate(r):
    """Samples per CPU second of a replay: the host process (link, reference) and the
    emulator together."""
    if r is None or "error" in r:
        return None
    return r["samples"] / max(r["cpu_host"] + r["cpu_device"], 1e-9)


def print_row(spec, before, after, no_link, flush=False) -> None:
    """Wall-clock columns, then CPU columns (a busy machine stretches wall-clock time by its
    run-queue waits; CPU seconds are steadier): replay samples per second, the no-link run's,
    and their ratio no-link / replay (the figure to hold)."""
    if not HEADER_PRINTED:
        print(f"{'backend':15} {'before smp/s':>13} {'after smp/s':>12} {'after s':>8} "
              f"{'ch-smp/s':>10} {'no-link smp/s':>14} {'before/nl':>10} {'after/nl':>9} | "
              f"{'CPU: before':>11} {'after':>9} {'no-link':>9} {'before/nl':>9} "
              f"{'after/nl':>8} {'host+dev s':>11}  check")
        HEADER_PRINTED.append(1)
    nl_wall, nl_cpu = no_link if no_link else (None, None)
    ok = "error" not in after
    rate = after["samples"] / after["seconds"] if ok else None
    brate = (before["samples"] / before["seconds"]
             if before is not None and "error" not in before else None)
    ratio = f"{nl_wall / rate:.2f}x" if ok and nl_wall else "-"
    bratio = f"{nl_wall / brate:.2f}x" if brate and nl_wall else "-"
    cb, ca = _cpu_rate(before), _cpu_rate(after)
    split = f"{after['cpu_host']:.2f}+{after['cpu_device']:.2f}" if ok else "-"
    cpu_cols = (f"{(f'{cb:,.0f}' if cb else '-'):>11} {(f'{ca:,.0f}' if ca else '-'):>9} "
                f"{(f'{nl_cpu:,.0f}' if nl_cpu else '-'):>9} "
                f"{(f'{nl_cpu / cb:.2f}x' if cb and nl_cpu else '-'):>9} "
                f"{(f'{nl_cpu / ca:.2f}x' if ca and nl_cpu else '-'):>8} "
                f"{split:>11}")
    check = (f"{after['predictions']} predictions, {after['mismatches']} mismatches, "
             f"{after['lost']} lost" if ok else after["error"])
    print(f"{spec:15} {_rate(before):>13} {_rate(after):>12} "
          f"{after['seconds'] if ok else float('nan'):8.2f} "
          f"{rate * after['channels'] if ok else float('nan'):10,.0f} "
          f"{(f'{nl_wall:,.0f}' if nl_wall else '-'):>14} {bratio:>10} {ratio:>9} | "
          f"{cpu_cols}  {check}", flush=flush)


if __name__ == "__main__":
    sys.exit(main())
