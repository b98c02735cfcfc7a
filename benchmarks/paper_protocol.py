"""Reproduce the evaluation protocol of Naula et al. (2014) on emotions and yeast.

10-fold nested cross-validation; low/med/high budgets = 10%/45%/80% of the features; methods
greedy-joint (ML-gRLS: joint greedy RLS, lambda by LOO over 2^-15..2^15 per fold and budget)
and mtlasso (scikit-learn MultiTaskLasso, L1,2, alpha searched to hit each budget exactly);
prints our macro-AUC and Hamming loss next to the paper's Table 2 figures.

Usage: python benchmarks/paper_protocol.py [--data-dir DIR] [--folds 10] [--report-dir DIR]
       [--cache DIR] [--datasets emotions,yeast] [--lam-search grid|path|both].
Not part of ``make test`` (minutes).

``--lam-search``: how greedy-joint chooses lambda inside each training fold. "grid" (the
evaluation's own rule): one greedy path per grid value to the largest budget, per budget the
value with the lowest LOO after that many steps. "path": one ``GreedyRLS(budget=k)`` per budget
with the default steered search (:mod:`sensorbudget.trainer.selection.lam_search`). "both" runs the two on the
same folds and prints the macro-AUC of each and their difference per budget (issue 19: within
0.005 at every budget).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sensorbudget.trainer.data import load_table  # noqa: E402
from sensorbudget.trainer.evaluation import methods  # noqa: E402
from sensorbudget.trainer.evaluation.protocol import EvalData, evaluate  # noqa: E402
from sensorbudget.trainer.evaluation.report import fmt, summarize, write_report  # noqa: E402

#: Paper Table 2 (low, med, high): macro-AUC of ML-gRLS and MT-lasso, Hamming loss of ML-gRLS.
PAPER = {
    "emotions": {("greedy-joint", "macro_auc"): (.815, .833, .832),
                 ("mtlasso", "macro_auc"): (.788, .828, .839),
                 ("greedy-joint", "hamming_loss"): (.213, .202, .203)},
    "yeast": {("greedy-joint", "macro_auc"): (.654, .693, .699),
              ("mtlasso", "macro_auc"): (.630, .670, .691),
              ("greedy-joint", "hamming_loss"): (.210, .200, .200)},
}
BUDGETS = ("low", "med", "high")


def load(data_dir: Path, name: str) -> EvalData:
    table = load_table(data_dir / name / f"{name}.arff", xml=data_dir / name / f"{name}.xml")
    return EvalData(table.X, table.Y, table.task, table.target_names)


def run_protocol(data, method_names, folds, cache, progress, lam_search):
    setup = methods.Setup(task=data.task, lam_search=lam_search)
    return evaluate(data, method_names, ",".join(BUDGETS), folds=folds, cache_dir=cache,
                    progress=progress, setup=setup)


def auc_by_budget(result) -> dict:
    return {r["budget"]: r["mean"] for r in summarize(result)
            if r["method"] == "greedy-joint" and r["measure"] == "macro_auc"}


def table_rows(name, result) -> list:
    """(dataset, measure, method, budget, ours mean ± std, paper) rows."""
    summary = {(r["method"], r["budget"], r["measure"]): r for r in summarize(result)}
    rows = []
    for measure in ("macro_auc", "hamming_loss"):
        for method in result.methods:
            paper = PAPER[name].get((method, measure), (None,) * 3)
            for budget, ref in zip(BUDGETS, paper):
                s = summary[(method, budget, measure)]
                rows.append((name, measure, method, budget, s["n_features"],
                             f"{fmt(s['mean'], 3)} ± {fmt(s['std'], 3)}",
                             "—" if ref is None else f"{ref:.3f}"))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--datasets", default="emotions,yeast")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--methods", default="greedy-joint,mtlasso")
    parser.add_argument("--report-dir", type=Path, default=None)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--lam-search", choices=("grid", "path", "both"), default="grid")
    args = parser.parse_args(argv)
    rows, compare = [], []
    for name in args.datasets.split(","):
        data = load(args.data_dir, name)
        start = time.perf_counter()

        def progress(done, total, name=name, start=start):
            print(f"  {name}: {done}/{total} (fold, method) done, "
                  f"{time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)

        searches = ("grid", "path") if args.lam_search == "both" else (args.lam_search,)
        results = {}
        for search in searches:
            start = time.perf_counter()
            names = args.methods.split(",") if search == searches[0] else ["greedy-joint"]
            results[search] = run_protocol(data, names, args.folds, args.cache, progress,
                                           search)
            print(f"{name} ({search}): {data.X.shape[0]} x {data.X.shape[1]}, "
                  f"{data.Y.shape[1]} labels, {time.perf_counter() - start:.0f} s", flush=True)
        result = results[searches[0]]
        if len(searches) == 2:
            grid, path = auc_by_budget(results["grid"]), auc_by_budget(results["path"])
            compare += [(name, b, grid[b], path[b]) for b in BUDGETS]
        if args.report_dir is not None:
            write_report(result, args.report_dir / name, title=f"Paper protocol: {name}",
                         notes=["budgets low/med/high = 10%/45%/80% of the features",
                                "mtlasso: alpha searched to hit each budget (no interpolation)"])
        rows += table_rows(name, result)
    print()
    print("| data | measure | method | budget | features | ours (mean ± std) | paper |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.0f} | {r[5]} | {r[6]} |")
    if compare:
        print("\n| data | budget | macro-AUC grid | macro-AUC path | path - grid | within 0.005 |")
        print("|---|---|---|---|---|---|")
        for name, b, g, p in compare:
            print(f"| {name} | {b} | {g:.4f} | {p:.4f} | {p - g:+.4f} | "
                  f"{'yes' if abs(p - g) <= 0.005 else 'NO'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
