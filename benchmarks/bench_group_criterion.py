"""Cost per greedy step of the leave-group-out criterion vs LOO at equal (n, d, t).

Usage: python benchmarks/bench_group_criterion.py [--quick] [--repeats R]

For each case (n samples, d candidate features, t targets, m rows per sample group, k steps)
seeded synthetic data are selected from twice at lam = 1 in the same process: with the LOO
criterion (``groups=None``) and with the leave-group-out criterion (groups of m consecutive
rows; :mod:`sensorbudget.trainer.selection.holdout_math`). A step's time is taken between consecutive progress
callbacks; the first step (which includes building the caches, and for groups the U cache) is
reported separately, the per-step figure is the median of steps 2..k, the best of ``repeats``
interleaved runs (the machine is shared). ``ext`` cases select extractor groups of 3 columns
(block Woodbury moves) instead of single columns. Target: group/LOO <= 2. ``--threads 1`` runs
both criteria on one thread with single-threaded BLAS (steadier ratios on a busy machine).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sensorbudget.trainer.selection.costs import build_plan  # noqa: E402
from sensorbudget.trainer.selection.loop import Preprocessing, greedy_select  # noqa: E402

#: (n, d, t, m, k, extractor group size)
CASES = [(10000, 400, 4, 10, 8, 1), (10000, 400, 20, 10, 8, 1), (10000, 400, 4, 2, 8, 1),
         (10000, 400, 20, 2, 8, 1), (20000, 1000, 4, 41, 6, 1), (10000, 300, 4, 10, 6, 3),
         (10000, 300, 20, 10, 6, 3), (10000, 300, 4, 2, 6, 3), (10000, 300, 20, 2, 6, 3)]
QUICK = [(3000, 200, 4, 10, 5, 1), (3000, 150, 4, 10, 4, 3), (3000, 150, 4, 2, 4, 3)]


def make_data(n, d, t, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    support = rng.choice(d, size=min(d, 2 * t), replace=False)
    Y = X[:, support] @ rng.standard_normal((support.size, t)) + rng.standard_normal((n, t))
    return X, Y


def timed_run(X, Y, k, prep, plan, groups):
    stamps = []
    t0 = time.perf_counter()
    path = greedy_select(X, Y, k, 1.0, prep, plan=plan, groups=groups,
                         progress=lambda s: stamps.append(time.perf_counter()))
    steps = np.diff([t0] + stamps)
    return path, steps[0], float(np.median(steps[1:]))


def case(n, d, t, m, k, ext, repeats):
    X, Y = make_data(n, d, t)
    groups = np.arange(n) // m
    prep = Preprocessing.fit(X, Y, True, True)
    plan = None if ext == 1 else build_plan(d, extractors=[f"e{i // ext}" for i in range(d)])
    best = {"loo": (np.inf, np.inf), "group": (np.inf, np.inf)}
    picks = {}
    for _ in range(repeats):
        for name, g in (("loo", None), ("group", groups)):
            path, first, step = timed_run(X, Y, k, prep, plan, g)
            best[name] = (min(best[name][0], first), min(best[name][1], step))
            picks[name] = path.selected
    return best, picks


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small cases only")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs per criterion")
    parser.add_argument("--threads", type=int, default=None,
                        help="worker threads (default: the trainer's; 1 = serial, BLAS too)")
    args = parser.parse_args(argv)
    if args.threads is not None:
        from threadpoolctl import threadpool_limits

        from sensorbudget.trainer.selection import rls_math

        rls_math._WORKERS = args.threads
        if args.threads == 1:
            threadpool_limits(1)
    cases = QUICK if args.quick else CASES
    print("Per-step time, leave-group-out vs LOO criterion, lam=1 (seconds; step 1 includes "
          f"the cache set-up); threads={args.threads or 'default'}")
    print(f"{'n':>6} {'d':>5} {'t':>3} {'m':>3} {'k':>3} {'ext':>3} {'LOO step1':>9} "
          f"{'LGO step1':>9} {'LOO/step':>9} {'LGO/step':>9} {'LGO/LOO':>8} {'same picks':>10}")
    worst = 0.0
    for n, d, t, m, k, ext in cases:
        best, picks = case(n, d, t, m, k, ext, args.repeats)
        ratio = best["group"][1] / best["loo"][1]
        worst = max(worst, ratio)
        same = "yes" if picks["loo"] == picks["group"] else "no"
        print(f"{n:>6} {d:>5} {t:>3} {m:>3} {k:>3} {ext:>3} {best['loo'][0]:>9.3f} "
              f"{best['group'][0]:>9.3f} {best['loo'][1]:>9.4f} {best['group'][1]:>9.4f} "
              f"{ratio:>8.2f} {same:>10}")
    print(f"worst LGO/LOO per-step ratio: {worst:.2f} (target <= 2): "
          f"{'met' if worst <= 2 else 'NOT met'}")
    print("m = rows per sample group; ext = columns per extractor (1: single features). "
          "'same picks': synthetic rows are i.i.d., so both criteria usually agree.")


if __name__ == "__main__":
    main()
