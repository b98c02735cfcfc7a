"""Time per greedy selection step vs number of labels, with and without SVD label compression.

For each data set the joint greedy path (fixed lambda, ``--steps`` steps) runs on the full +1/-1
label matrix and on its compressions Y_r = U_r S_r keeping energy 0.9, 0.99 and the full rank
(:mod:`sensorbudget.trainer.label_compression`). Printed per row: labels used (r), time per step, the SVD
time (paid once per fit), and how many of the picks agree with the uncompressed run.

Data: CAL500 (502 x 68, 174 labels; from ../shared/data when present) and synthetic
n=2000, d=200 with t = 10, 50, 200, 800 labels driven by a rank-20 latent structure, and
n=500, d=200 with t=2000 (more labels than rows: the exact compression has r <= n - 1).

Usage: python benchmarks/bench_labels.py [--steps 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sensorbudget.trainer.label_compression import compress_targets  # noqa: E402
from sensorbudget.trainer.selection.loop import Preprocessing, greedy_select  # noqa: E402

ENERGIES = (None, 0.9, 0.99, 1.0)


def synthetic(t, n=2000, d=200, rank=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    latent = X[:, :40] @ rng.normal(size=(40, rank)) + rng.normal(size=(n, rank))
    Y = np.where(latent @ rng.normal(size=(rank, t)) + 2 * rng.normal(size=(n, t)) > 0, 1.0, -1.0)
    return X, Y


def cal500(data_dir: Path):
    path = data_dir / "cal500" / "cal500.arff"
    if not path.is_file():
        return None
    from sensorbudget.trainer.data import load_table

    table = load_table(path, xml=data_dir / "cal500" / "cal500.xml")
    return table.X, 2.0 * table.Y - 1.0


def time_path(X, Y, steps, lam, repeat):
    prep = Preprocessing.fit(X, Y, True, True)
    best, path = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        path = greedy_select(X, Y, steps, lam, prep)
        best = min(best, time.perf_counter() - start)
    return best / steps, path.selected


def bench(name, X, Y, steps, lam, repeat, passes=2):
    """Rows for one data set; each timing is the best of ``repeat`` runs over ``passes`` passes
    (the first pass of a process is often slower: allocator and BLAS warm-up)."""
    best, reference = {}, None
    for _ in range(passes):
        for energy in ENERGIES:
            start = time.perf_counter()
            Ysel = Y if energy is None else compress_targets(Y, energy)[0]
            svd = 0.0 if energy is None else time.perf_counter() - start
            per_step, picks = time_path(X, Ysel, steps, lam, repeat)
            reference = picks if energy is None else reference
            old = best.get(energy, (np.inf, np.inf, 0, None))
            best[energy] = (min(old[0], per_step), min(old[1], svd), Ysel.shape[1], picks)
    rows = []
    for energy, (per_step, svd, r, picks) in best.items():
        same = sum(a == b for a, b in zip(picks, reference))
        rows.append((name, Y.shape[1], "none" if energy is None else f"{energy:g}", r,
                     per_step * 1e3, svd * 1e3, f"{same}/{steps}"))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lam", type=float, default=1.0)
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--labels", default="10,50,200,800")
    args = parser.parse_args(argv)
    rows = []
    real = cal500(args.data_dir)
    if real is not None:
        rows += bench("CAL500 502x68", *real, args.steps, args.lam, args.repeat)
    for t in (int(v) for v in args.labels.split(",")):
        rows += bench("synthetic 2000x200", *synthetic(t), args.steps, args.lam, args.repeat)
    # more labels than rows: the full-rank compression is exact and has r <= n - 1 < t
    rows += bench("synthetic 500x200", *synthetic(2000, n=500), args.steps, args.lam, args.repeat)
    print("| data | labels t | compression | labels used r | ms/step | SVD ms | same picks |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.2f} | {r[5]:.1f} | {r[6]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
