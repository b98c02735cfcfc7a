"""Speed and memory of greedy RLS selection, side by side with a one-candidate-at-a-time loop.

Usage: python benchmarks/bench_selection.py [--quick]

For each (n, d, t, k) case a child process generates seeded synthetic data, runs
``GreedyRLS(budget=k, lam=1)`` and reports wall time and peak RSS (ru_maxrss of the child,
including the data itself). In the same run, the straightforward implementation of the paper's
Algorithm 2 below (a Python loop over candidates, each scored with its own Sherman-Morrison
update) selects on the same data; the picks are asserted equal. On the largest case the naive
loop runs only ``NAIVE_STEPS`` steps and its time is extrapolated linearly (labelled).
Finally the time exponent in each of n, d, t, k is measured by doubling one at a time.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time

import numpy as np

CASES = [(500, 200, 6, 20), (2000, 1000, 14, 50), (10000, 2000, 50, 50)]
TARGETS = {(2000, 1000, 14, 50): (0.5, None), (10000, 2000, 50, 50): (6.0, 500.0)}
NAIVE_STEPS = {(10000, 2000, 50, 50): 3}


def make_data(n, d, t, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    support = rng.choice(d, size=min(d, 2 * t), replace=False)
    Y = X[:, support] @ rng.standard_normal((support.size, t)) + rng.standard_normal((n, t))
    return X, Y


def naive_algorithm2(X, Y, lam, k):
    """Algorithm 2 one candidate at a time: A = GY, g = diag G, C = GX with rank-one updates."""
    n, d = X.shape
    A, g, C = Y / lam, np.full(n, 1.0 / lam), X / lam
    selected = []
    for _ in range(k):
        best, best_i = np.inf, -1
        for i in range(d):
            if i in selected:
                continue
            c, x = C[:, i], X[:, i]
            u = c / (1.0 + x @ c)
            e = np.sum(np.square((A - np.outer(u, x @ A)) / (g - u * c)[:, None]))
            if e < best:
                best, best_i = e, i
        c, x = C[:, best_i].copy(), X[:, best_i]
        u = c / (1.0 + x @ c)
        A -= np.outer(u, x @ A)
        g -= u * c
        C -= np.outer(u, x @ C)
        selected.append(best_i)
    return selected


def child(n, d, t, k, dtype, naive_steps):
    """Run in a subprocess: one fast fit (and optionally the naive loop); print JSON."""
    from trainer import GreedyRLS

    X, Y = make_data(n, d, t)
    start = time.perf_counter()
    est = GreedyRLS(budget=k, lam=1.0, fit_intercept=False, standardize=False,
                    dtype=dtype).fit(X, Y)
    fast = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    out = {"fast_s": fast, "rss_mib": rss, "picks": est.selected_.tolist()}
    if naive_steps:
        start = time.perf_counter()
        picks = naive_algorithm2(X, Y, 1.0, naive_steps)
        out["naive_s"] = (time.perf_counter() - start) * k / naive_steps
        out["naive_extrapolated"] = naive_steps < k
        assert picks == out["picks"][:naive_steps], (picks, out["picks"][:naive_steps])
    print(json.dumps(out))


def run_child(n, d, t, k, dtype="float64", naive_steps=0):
    cmd = [sys.executable, __file__, "--child", json.dumps([n, d, t, k, dtype, naive_steps])]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the two smaller cases")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*json.loads(args.child))
        return
    cases = CASES[:2] if args.quick else CASES
    print(f"{'n':>6} {'d':>5} {'t':>3} {'k':>3} {'dtype':>7} {'fast s':>8} {'peak MiB':>9} "
          f"{'naive s':>9} {'naive/fast':>10} {'target':>16}")
    for case in cases:
        for dtype in ("float64", "float32"):
            steps = NAIVE_STEPS.get(case, case[3]) if dtype == "float64" else 0
            r = run_child(*case, dtype=dtype, naive_steps=steps)
            naive = r.get("naive_s")
            tgt = TARGETS.get(case)
            ok = ""
            if tgt:
                ok = f"<={tgt[0]}s" + (f",<={tgt[1]:.0f}MiB" if tgt[1] else "")
                good = r["fast_s"] <= tgt[0] and (tgt[1] is None or r["rss_mib"] <= tgt[1])
                ok += " ok" if good else " MISS"
            naive_txt = "-" if naive is None else f"{naive:.2f}" + ("*" if r["naive_extrapolated"] else "")
            ratio = "-" if naive is None else f"{naive / r['fast_s']:.1f}x"
            print(f"{case[0]:>6} {case[1]:>5} {case[2]:>3} {case[3]:>3} {dtype:>7} "
                  f"{r['fast_s']:>8.3f} {r['rss_mib']:>9.0f} {naive_txt:>9} {ratio:>10} {ok:>16}")
    print("* naive time extrapolated linearly from its first steps (picks of those steps asserted equal)")
    base = (4000, 1000, 16, 32)
    t0 = min(run_child(*base)["fast_s"] for _ in range(2))
    print(f"\nscaling from (n,d,t,k)={base}: {t0:.3f} s")
    for i, name in enumerate("ndtk"):
        case = list(base)
        case[i] *= 2
        t1 = min(run_child(*case)["fast_s"] for _ in range(2))
        print(f"  2x {name}: {t1:.3f} s  exponent {math.log2(t1 / t0):.2f}")


if __name__ == "__main__":
    main()
