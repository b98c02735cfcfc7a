"""Run every fuzz target for a short (smoke) or long time and report executions and coverage.

``python -m fuzz.smoke`` (``make fuzz-smoke``): every Python target for 4 s and every C target
for 3 s, two at a time, from a fresh seed corpus -- about a minute in total. Exit status 1 when
any target crashes, hangs, runs out of memory or fails to start; the reproducer is kept under
``build/fuzz/artifacts/``. Long runs use the same script (see fuzz/README.md)::

    python -m fuzz.smoke --py-seconds 600 --c-seconds 600 --workdir build/fuzz

Missing tools: without atheris the Python targets run the fallback mutation loop of
:mod:`fuzz._harness`; without a clang that links libFuzzer the C targets are skipped with a
message, or fail the run with ``--strict`` (or ``FUZZ_STRICT=1``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY_TARGETS = ("tables", "recordings", "sensors", "bundle", "onnx", "frames", "reports",
              "features", "pages", "calibrate")
FLAGS = ("-timeout=10", "-rss_limit_mb=2048", "-print_final_stats=1")
STAT = re.compile(r"#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)")


@dataclass
class Outcome:
    """What one fuzzing run did."""

    target: str
    status: str = "ok"          # ok, CRASH, skipped
    runs: int = 0
    cov: int = 0
    ft: int = 0
    corpus: int = 0
    seconds: float = 0.0
    detail: str = ""


def _parse(outcome: Outcome, log: str) -> None:
    stats = STAT.findall(log)
    if stats:
        runs, cov, ft, corp = map(int, stats[-1])
        outcome.runs, outcome.cov, outcome.ft, outcome.corpus = runs, cov, ft, corp
    done = re.search(r"Done (\d+) runs", log)
    if done:
        outcome.runs = int(done.group(1))


def _run(target: str, cmd: list, corpus: Path, artifacts: Path, seconds: float,
         env=None) -> Outcome:
    outcome = Outcome(target)
    artifacts.mkdir(parents=True, exist_ok=True)
    full = [*cmd, f"-max_total_time={int(seconds)}", *FLAGS,
            f"-artifact_prefix={artifacts}/{target}-", str(corpus)]
    start = time.monotonic()
    try:
        done = subprocess.run(full, cwd=ROOT, env=env, capture_output=True, text=True,
                              errors="replace", timeout=seconds + 120, check=False)
        log, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:
        log, code = f"{exc.stdout or ''}{exc.stderr or ''}\nkilled after {exc.timeout} s", -9
    outcome.seconds = time.monotonic() - start
    _parse(outcome, log)
    (artifacts / f"{target}.log").write_text(log)
    if code != 0:
        outcome.status = "CRASH"
        found = sorted(p.name for p in artifacts.glob(f"{target}-*"))
        tail = "\n".join(log.splitlines()[-25:])
        outcome.detail = f"exit {code}; reproducer: {found or 'none'}\n{tail}"
    return outcome


def run_python(target: str, work: Path, artifacts: Path, seconds: float) -> Outcome:
    corpus = work / "corpus" / f"py_{target}"      # the target adds its seeds itself
    corpus.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return _run(f"py_{target}", [sys.executable, "-m", f"fuzz.py_{target}"], corpus, artifacts,
                seconds, env)


def run_c(config, exe: Path, build: Path, work: Path, artifacts: Path, seconds: float) -> Outcome:
    from fuzz._harness import write_seeds
    from fuzz.c_targets import seeds

    corpus = work / "corpus" / f"c_{config.name}"
    write_seeds(corpus, seeds(config, build))
    return _run(f"c_{config.name}", [str(exe)], corpus, artifacts, seconds)


def _c_jobs(args, work: Path, artifacts: Path, strict: bool) -> tuple:
    """(callables running the C targets, outcomes of skipped/failed builds)."""
    from fuzz.c_targets import CONFIGS, build_all, find_clang

    configs = [c for c in CONFIGS if not args.only or f"c_{c.name}" in args.only]
    if not configs:
        return [], []
    if find_clang() is None:
        why = "no clang that links libFuzzer (apt-get install clang libclang-rt-14-dev)"
        status = "CRASH" if strict else "skipped"
        return [], [Outcome(f"c_{c.name}", status, detail=why) for c in configs]
    build = work / "c"
    try:
        exes = build_all(build, jobs=args.jobs)
    except RuntimeError as exc:
        return [], [Outcome("c_build", "CRASH", detail=str(exc))]
    return [lambda c=c: run_c(c, exes[c.name], build, work, artifacts, args.c_seconds)
            for c in configs], []


def _table(outcomes) -> str:
    lines = [f"{'target':<28} {'status':<8} {'runs':>10} {'cov':>6} {'ft':>6} {'corpus':>7} "
             f"{'seconds':>8}"]
    for o in outcomes:
        lines.append(f"{o.target:<28} {o.status:<8} {o.runs:>10} {o.cov:>6} {o.ft:>6} "
                     f"{o.corpus:>7} {o.seconds:>8.1f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.smoke",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--py-seconds", type=float, default=4.0)
    parser.add_argument("--c-seconds", type=float, default=3.0)
    parser.add_argument("--jobs", type=int, default=2, help="targets run at the same time")
    parser.add_argument("--only", nargs="*", default=None,
                        help="target names (py_tables, c_protocol_q15, ...)")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="keep the corpora (WORKDIR/corpus/<target>) and the C build "
                             "(WORKDIR/c) here, to grow the corpora across runs")
    parser.add_argument("--artifacts", type=Path, default=ROOT / "build" / "fuzz" / "artifacts")
    parser.add_argument("--strict", action="store_true",
                        default=os.environ.get("FUZZ_STRICT") == "1",
                        help="fail when clang/libFuzzer is missing instead of skipping")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    start = time.monotonic()
    temp = None
    if args.workdir is None:
        temp = tempfile.mkdtemp(prefix="sbfuzz-smoke-")
    work = args.workdir or Path(temp)
    try:
        jobs, outcomes = _c_jobs(args, work, args.artifacts, args.strict)
        jobs += [lambda t=t: run_python(t, work, args.artifacts, args.py_seconds)
                 for t in PY_TARGETS if not args.only or f"py_{t}" in args.only]
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            outcomes += list(pool.map(lambda job: job(), jobs))
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
    print(_table(outcomes))
    bad = [o for o in outcomes if o.status == "CRASH"]
    for o in bad + [o for o in outcomes if o.status == "skipped"][:1]:
        print(f"\n{o.target}: {o.status}: {o.detail}")
    print(f"\nfuzz smoke: {len(outcomes) - len(bad)} of {len(outcomes)} targets clean in "
          f"{time.monotonic() - start:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
