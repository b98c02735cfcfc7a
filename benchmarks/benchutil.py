"""Shared helpers of the benchmarks: fresh child processes, medians, machine load, GEMM speed.

Every figure is measured in a fresh Python process (``run_child``) and reported as the median
of ``runs`` (at least 3) with the 1-minute load average around it, because this 2-core machine
swings about 2x with other work. Ratios are taken pair by pair from runs made side by side
(alternating, or in the same process), so they hold when the machine's speed drifts.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def use_root(root) -> None:
    """Import ``trainer`` from the tree ``root`` (default: this repository)."""
    path = str(Path(root or ROOT).resolve())
    if path not in sys.path:
        sys.path.insert(0, path)


def load() -> float:
    """The 1-minute load average (runnable processes; 2 cores here)."""
    return os.getloadavg()[0]


def run_child(script: str, args: list, root=None, timeout=3600) -> dict:
    """Run ``script --child JSON(args) [--root root]`` in a fresh interpreter; its last stdout
    line is JSON."""
    cmd = [sys.executable, script, "--child", json.dumps(args)]
    if root is not None:
        cmd += ["--root", str(root)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=timeout)
    return json.loads(res.stdout.strip().splitlines()[-1])


def repeat(fn, runs: int) -> tuple:
    """([fn() for each run], (load before, load after))."""
    before = load()
    out = [fn() for _ in range(runs)]
    return out, (before, load())


def median(values) -> float:
    return float(statistics.median(values))


def spread(values) -> str:
    """'median (min-max)'."""
    return f"{median(values):.3g} ({min(values):.3g}-{max(values):.3g})"


def gemm_seconds(n: int, d: int, t: int, dtype=np.float64, reps: int = 3) -> float:
    """Median seconds of one (n x t) @ (t x d) product, the GEMM every scoring step needs."""
    rng = np.random.default_rng(0)
    E = rng.standard_normal((n, t)).astype(dtype)
    P = rng.standard_normal((t, d)).astype(dtype)
    E @ P
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        E @ P
        times.append(time.perf_counter() - start)
    return median(times)


def table(header: list, rows: list) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
