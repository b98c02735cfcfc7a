"""Loading speed: sparse and dense ARFF and CSV through ``sensorbudget.trainer.data.load_table``.

Usage: python benchmarks/bench_loading.py [--runs 3] [--root DIR]

Files (written once to a temporary directory, seeded): the delicious-size sparse ARFF
(:mod:`synthetic`: 12920 rows, 500 binary features, 983 labels, ~3 MB), a dense ARFF and a CSV
of 5000 x 200 numbers plus 10 labels (~9 MB each), and CAL500 from the shared data. Each
figure is timed inside a fresh process (file read + parse + checks; the import not counted);
the ARFF files are also decoded by liac-arff alone (its COO reader for the sparse file, ``arff.
loads(..., return_type=arff.COO)``, its dense reader otherwise) in the alternating process, and
the row gives the pair-by-pair ratio.
Targets (issue 19): sparse ARFF within 2x of liac-arff's COO, dense ARFF and CSV >= 50 MB/s
(rates of files of at least ``SMALL_MB``; CAL500's 0.5 MB is shown for its per-file cost).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchutil as bu  # noqa: E402
import synthetic  # noqa: E402

COO_FACTOR = 2.0
#: Files below this size are dominated by the per-file cost (header, label declarations,
#: checks: about 10 ms), not by the parsing rate: their MB/s is shown without a verdict.
SMALL_MB = 1.0
MB_PER_S = 50.0


def child_load(path, options):
    from sensorbudget.trainer.data import load_table

    start = time.perf_counter()
    table = load_table(path, **options)
    return {"s": time.perf_counter() - start, "shape": [table.X.shape, table.Y.shape]}


def child_liac(path, layout="coo"):
    import arff

    start = time.perf_counter()
    arff.loads(Path(path).read_text(encoding="utf-8"),
               return_type=arff.COO if layout == "coo" else arff.DENSE)
    return {"s": time.perf_counter() - start}


def files(folder: Path) -> list:
    """[(label, path, load options, liac-arff layout to compare with or None)]."""
    X, Y = synthetic.multilabel("delicious")
    out = [("delicious-size sparse ARFF", synthetic.write_sparse_arff(folder / "d.arff", X, Y),
            {"labels": Y.shape[1]}, "coo")]
    rng = np.random.default_rng(1)
    Xd, Yd = rng.normal(size=(5000, 200)), (rng.random((5000, 10)) < 0.3).astype(float)
    out.append(("dense ARFF 5000x210", synthetic.write_dense_arff(folder / "n.arff", Xd, Yd),
                {"labels": 10}, "dense"))
    out.append(("CSV 5000x210", synthetic.write_csv(folder / "n.csv", Xd, Yd),
                {"labels": 10}, None))
    cal = bu.ROOT.parent / "shared" / "data" / "cal500"
    if (cal / "cal500.arff").is_file():
        out.append(("CAL500 dense ARFF", cal / "cal500.arff", {"xml": str(cal / "cal500.xml")},
                    "dense"))
    return out


def report(runs: int, root=None, vs=None) -> str:
    """The table; with ``vs`` (a previous checkout) its load_table time alternates with ours
    and the row adds its median and the before/after ratio pair by pair."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, path, options, coo in files(Path(tmp)):
            mb = path.stat().st_size / 1e6
            ours, liac, before = [], [], []
            load0 = bu.load()
            for _ in range(runs):
                ours.append(bu.run_child(__file__, ["load", str(path), options], root)["s"])
                if coo:
                    liac.append(bu.run_child(__file__, ["liac", str(path), coo], root)["s"])
                if vs:
                    before.append(bu.run_child(__file__, ["load", str(path), options], vs)["s"])
            ratio = [a / b for a, b in zip(ours, liac)]
            speed = bu.median([mb / s for s in ours])
            target = (f"<={COO_FACTOR:g}x COO " + ("ok" if bu.median(ratio) <= COO_FACTOR
                                                   else "MISS")) if coo == "coo" \
                else (f">={MB_PER_S:g} MB/s " + ("ok" if speed >= MB_PER_S else "MISS")
                      if mb >= SMALL_MB else "- (small file: per-file cost)")
            rows.append([label, f"{mb:.1f}", bu.spread(ours), f"{speed:.0f}", coo or "-",
                         bu.spread(liac) if liac else "-", bu.spread(ratio) if liac else "-",
                         target,
                         bu.spread(before) if before else "-",
                         bu.spread([b / a for a, b in zip(ours, before)]) if before else "-",
                         f"{load0:.2f}/{bu.load():.2f}"])
    return bu.table(["file", "MB", "load_table s", "MB/s", "liac-arff layout", "liac-arff s",
                     "ours/liac", "target", "before s", "before/after", "load"], rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--root", default=None)
    parser.add_argument("--vs", default=None, help="a previous checkout, side by side")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    bu.use_root(args.root)
    if args.child:
        kind, *rest = json.loads(args.child)
        print(json.dumps({"load": child_load, "liac": child_liac}[kind](*rest), default=str))
        return
    print(report(max(3, args.runs), args.root, args.vs))


if __name__ == "__main__":
    main()
