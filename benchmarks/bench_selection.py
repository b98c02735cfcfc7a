"""Speed and memory of greedy RLS selection: medians of fresh processes, side by side.

Usage: python benchmarks/bench_selection.py [--quick] [--runs 3] [--sections ...] [--root DIR]

Sections (all by default; ``--quick`` keeps the small ones):

- ``fixed``: ``GreedyRLS(budget=k, lam=1)`` at (n, d, t, k) = (2000, 1000, 14, 50) and
  (10000, 2000, 50, 50), float64 and float32: wall time and peak RSS (ru_maxrss of the child,
  including the data); in the same child the straightforward Algorithm 2 below (a Python loop over
  candidates, one Sherman-Morrison update each) selects on the same data, picks asserted equal
  (on the large case only ``NAIVE_STEPS`` steps, extrapolated, labelled), and the row gives
  naive/fast of that child: a ratio measured side by side.
- ``default``: the default run (``lam=None``) against one fixed-lambda run in the same child
  (ratio default/fixed), on the two sizes above, a tmc2007-size synthetic set and CAL500.
- ``labels``: delicious-size synthetic data (12920 x 500, 983 labels, k=100, fixed lambda):
  the run against k of the n x t x d GEMMs a step that recomputes Q = E P^T needs, timed in
  the same child (median of 5 before and 5 after the run); GEMM-equivalent GFLOP/s (k GEMMs'
  flops / run time) beside the machine's GEMM GFLOP/s. Since Q is kept by a rank-2 update
  (``trainer/selection/wide_rows.py``) the run does no per-step GEMM, so the first figure can
  exceed the machine's.
- ``loading``: :mod:`bench_loading` (ARFF/CSV MB/s, sparse ARFF against liac-arff's COO).

Every figure is the median of ``--runs`` fresh processes (min-max in brackets) with the
1-minute load average before/after the row. ``--vs DIR`` runs a previous checkout (e.g. ``git
archive HEAD``) alternately with this one and adds its medians and the before/after ratio pair
by pair (skipped where the old default run would take minutes: the large and tmc-size rows,
where the old default is exactly 31 fixed-lambda runs). ``--root DIR`` imports ``trainer`` from
another checkout instead of this one.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchutil as bu  # noqa: E402

CASES = [(500, 200, 6, 20), (2000, 1000, 14, 50), (10000, 2000, 50, 50)]
TARGETS = {(2000, 1000, 14, 50): (0.5, None), (10000, 2000, 50, 50): (6.0, 500.0)}
NAIVE_STEPS = {(10000, 2000, 50, 50): 3}
DEFAULT_CASES = [(2000, 1000, 14, 50), (10000, 2000, 50, 50)]
GEMM_FACTOR = 1.3         # many labels: run within 1.3x of k GEMMs (issue 19)
DEFAULT_FACTOR = 3.0      # default lambda search within 3x of one fixed-lambda run


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


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def child_fixed(n, d, t, k, dtype, naive_steps):
    """One fast fit at lam=1 (and optionally the naive loop on the same data)."""
    from sensorbudget.trainer import GreedyRLS

    X, Y = make_data(n, d, t)
    start = time.perf_counter()
    est = GreedyRLS(budget=k, lam=1.0, fit_intercept=False, standardize=False,
                    dtype=dtype).fit(X, Y)
    out = {"fast_s": time.perf_counter() - start, "rss_mib": rss_mib(),
           "picks": est.selected_.tolist()}
    if naive_steps:
        start = time.perf_counter()
        picks = naive_algorithm2(X, Y, 1.0, naive_steps)
        out["naive_s"] = (time.perf_counter() - start) * k / naive_steps
        out["naive_extrapolated"] = naive_steps < k
        assert picks == out["picks"][:naive_steps], (picks, out["picks"][:naive_steps])
    return out


def dataset(name):
    """(X, Y, fit kwargs) of a named data set: synthetic sizes, tmc/delicious stand-ins, CAL500."""
    if name.startswith("synthetic:"):
        n, d, t = map(int, name.split(":")[1].split(","))
        return (*make_data(n, d, t), dict(fit_intercept=False, standardize=False))
    if name in ("tmc", "delicious"):
        import synthetic

        X, Y = synthetic.multilabel(name)
        return X, 2.0 * Y - 1.0, {}
    from sensorbudget.trainer.data import load_table

    base = bu.ROOT.parent / "shared" / "data" / name
    table = load_table(base / f"{name}.arff", xml=base / f"{name}.xml")
    return table.X, 2.0 * table.Y - 1.0, {}


def child_default(name, k, lam):
    """The default run (lam=None) and one run at ``lam`` in this process (fixed first)."""
    from sensorbudget.trainer import GreedyRLS

    X, Y, kw = dataset(name)
    start = time.perf_counter()
    GreedyRLS(budget=k, lam=lam, **kw).fit(X, Y)
    fixed = time.perf_counter() - start
    start = time.perf_counter()
    est = GreedyRLS(budget=k, **kw).fit(X, Y)
    default = time.perf_counter() - start
    return {"fixed_s": fixed, "default_s": default, "lam": float(est.lam_),
            "loo": float(est.loo_path_[-1]), "how": getattr(est, "lam_search_", None)}


def child_labels(name, k, dtype, lam):
    """A fixed-lambda run on many labels and k scoring GEMMs timed in the same process."""
    from sensorbudget.trainer import GreedyRLS

    X, Y, kw = dataset(name)
    n, d = X.shape
    t = Y.shape[1]
    before = bu.gemm_seconds(n, d, t, np.dtype(dtype).type, reps=5)
    start = time.perf_counter()
    GreedyRLS(budget=k, lam=lam, dtype=dtype, **kw).fit(X, Y)
    run = time.perf_counter() - start
    gemm = bu.median([before, bu.gemm_seconds(n, d, t, np.dtype(dtype).type, reps=5)])
    flops = 2.0 * n * d * t
    return {"run_s": run, "gemms_s": k * gemm, "machine_gflops": flops / gemm / 1e9,
            "achieved_gflops": k * flops / run / 1e9, "rss_mib": rss_mib()}


CHILDREN = {"fixed": child_fixed, "default": child_default, "labels": child_labels}


def run(kind, args, root):
    return bu.run_child(__file__, [kind, *args], root)


def paired(kind, args, runs, vs, with_vs=True):
    """({"after": [results], "before": [results] or []}, (load before, load after)): runs of
    this checkout and, when ``vs`` is given, of the checkout ``vs``, alternating (A B A B)."""
    out, load0 = {"after": [], "before": []}, bu.load()
    for _ in range(runs):
        out["after"].append(run(kind, args, None))
        if vs and with_vs:
            out["before"].append(run(kind, args, vs))
    return out, (load0, bu.load())


def vs_cells(res, key):
    """(before median, before/after pair by pair) of the figure ``key``, or dashes."""
    if not res["before"]:
        return ["-", "-"]
    ratio = [b[key] / a[key] for a, b in zip(res["after"], res["before"])]
    return [bu.spread([b[key] for b in res["before"]]), bu.spread(ratio)]


def section_fixed(cases, runs, vs):
    rows = []
    for case in cases:
        for dtype in ("float64", "float32"):
            steps = NAIVE_STEPS.get(case, case[3]) if dtype == "float64" else 0
            both, (l0, l1) = paired("fixed", [*case, dtype, steps], runs, vs)
            res = both["after"]
            fast = [r["fast_s"] for r in res]
            rss = bu.median([r["rss_mib"] for r in res])
            ratio = ("-" if not steps else bu.spread([r["naive_s"] / r["fast_s"] for r in res])
                     + ("*" if res[0]["naive_extrapolated"] else ""))
            tgt = TARGETS.get(case)
            verdict = "-"
            if tgt and dtype == "float64":
                good = bu.median(fast) <= tgt[0] and (tgt[1] is None or rss <= tgt[1])
                verdict = (f"<={tgt[0]}s" + (f",<={tgt[1]:.0f}MiB" if tgt[1] else "")
                           + (" ok" if good else " MISS"))
            rows.append([",".join(map(str, case)), dtype, bu.spread(fast), f"{rss:.0f}",
                         ratio, *vs_cells(both, "fast_s"), verdict, f"{l0:.2f}/{l1:.2f}"])
    return bu.table(["n,d,t,k", "dtype", "fast s", "peak MiB", "naive/fast", "before s",
                     "before/after", "target", "load"], rows) + (
        "\n* naive time extrapolated from its first steps")


def section_default(items, runs, vs):
    rows = []
    for name, k, with_vs in items:
        both, (l0, l1) = paired("default", [name, k, 1.0], runs, vs, with_vs)
        res = both["after"]
        ratio = [r["default_s"] / r["fixed_s"] for r in res]
        how = res[0]["how"] or {"method": "grid"}
        before = "-" if not both["before"] else bu.spread(
            [r["default_s"] / r["fixed_s"] for r in both["before"]])
        rows.append([name, k, bu.spread([r["fixed_s"] for r in res]),
                     bu.spread([r["default_s"] for r in res]), bu.spread(ratio),
                     "ok" if bu.median(ratio) <= DEFAULT_FACTOR else "MISS",
                     f"{how['method']}, {how.get('runs', 31)} runs, lam={res[0]['lam']:g}",
                     *vs_cells(both, "default_s"), before, f"{l0:.2f}/{l1:.2f}"])
    return bu.table(["data", "k", "fixed-lam s", "default s", "default/fixed",
                     f"<={DEFAULT_FACTOR:g}x", "lambda search", "before default s",
                     "before/after", "before default/fixed", "load"], rows)


def section_labels(items, runs, vs):
    rows = []
    for name, k, dtype, with_vs in items:
        both, (l0, l1) = paired("labels", [name, k, dtype, 1.0], runs, vs, with_vs)
        res = both["after"]
        ratio = [r["run_s"] / r["gemms_s"] for r in res]
        rows.append([name, k, dtype, bu.spread([r["run_s"] for r in res]),
                     bu.spread([r["gemms_s"] for r in res]), bu.spread(ratio),
                     "ok" if bu.median(ratio) <= GEMM_FACTOR else "MISS",
                     f"{bu.median([r['achieved_gflops'] for r in res]):.0f} / "
                     f"{bu.median([r['machine_gflops'] for r in res]):.0f}",
                     f"{bu.median([r['rss_mib'] for r in res]):.0f}",
                     *vs_cells(both, "run_s"), f"{l0:.2f}/{l1:.2f}"])
    return bu.table(["data", "k", "dtype", "run s", "k GEMMs s", "run/GEMMs",
                     f"<={GEMM_FACTOR:g}x", "GEMM-equiv. GFLOP/s run / machine", "peak MiB",
                     "before s", "before/after", "load"], rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small cases only")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per figure (>=3)")
    parser.add_argument("--sections", default="fixed,default,labels,loading")
    parser.add_argument("--root", default=None, help="import trainer from this checkout")
    parser.add_argument("--vs", default=None,
                        help="also run a previous checkout side by side (before/after)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    bu.use_root(args.root)
    if args.child:
        kind, *rest = json.loads(args.child)
        print(json.dumps(CHILDREN[kind](*rest)))
        return
    runs = max(3, args.runs)
    sections = args.sections.split(",")
    print(f"{bu.os.cpu_count()} cores, load {bu.load():.2f}, trainer from "
          f"{args.root or bu.ROOT}, medians of {runs} fresh processes (min-max)\n")
    if "fixed" in sections:
        print(section_fixed(CASES[1:3] if not args.quick else CASES[:2], runs, args.vs), "\n")
    if "default" in sections:
        # before = 31 fixed runs: measured side by side only where that takes under a minute
        items = [(f"synthetic:{n},{d},{t}", k, n * d < 5e6) for n, d, t, k in DEFAULT_CASES]
        items = items[:1] if args.quick else items + [("cal500", 50, True), ("tmc", 50, False)]
        print(section_default(items, runs, args.vs), "\n")
    if "labels" in sections and not args.quick:
        items = [("delicious", 100, "float64", True), ("delicious", 100, "float32", True)]
        print(section_labels(items, runs, args.vs), "\n")
    if "loading" in sections:
        import bench_loading

        print(bench_loading.report(runs, args.root, vs=args.vs))


if __name__ == "__main__":
    main()
