"""Greedy RLS on one machine vs. on a Dask cluster (row partitions on workers).

Usage:
    python benchmarks/bench_dask.py [--quick] [--workers N] [--data DIR]
    python benchmarks/bench_dask.py --scheduler tcp://HOST:8786 --data /shared/DIR

Seeded synthetic data (n x d features, t targets; default n=200 000, d=500, t=10, k=20 steps,
float64: 800 MB of X) are written once as ``--workers`` NPZ shards under ``--data``. Then, each
in its own child process so that peak memory (ru_maxrss) is per process:

* single machine: read every shard, ``GreedyRLS(budget=k, lam=1).fit(X, Y)``;
* Dask: ``GreedyRLS(backend="dask")`` on the shard table (each worker reads its shards), on a
  ``LocalCluster`` of ``--workers`` single-threaded worker processes, or on ``--scheduler``.

Printed: time per greedy step and in all, peak RSS of every process, bytes sent to and
received from the workers per step, identical picks / max path difference, and a scaling
estimate: the measured single-thread time per step of one partition of n/P rows, plus the
measured per-step overhead of the cluster (round trips), for P = 1, 2, 4, 8 partitions.
``--quick``: n=20 000, d=200, t=5, k=10.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

FULL = dict(n=200_000, d=500, t=10, k=20)
QUICK = dict(n=20_000, d=200, t=5, k=10)


def make_shards(directory: Path, n, d, t, shards, seed=0) -> list:
    """Write (or reuse) seeded shards: X standard normal, Y = X_support W + noise."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    support = rng.choice(d, size=min(d, 2 * t), replace=False)
    W = rng.standard_normal((support.size, t))
    paths = []
    for s, rows in enumerate(np.array_split(np.arange(n), shards)):
        path = directory / f"n{n}_d{d}_t{t}_part{s:02d}of{shards:02d}.npz"
        if not path.exists():
            part = np.random.default_rng([seed, s])
            X = part.standard_normal((rows.size, d))
            Y = X[:, support] @ W + part.standard_normal((rows.size, t))
            np.savez(path, X=X, Y=Y)              # uncompressed: read at disk speed
            del X, Y
        paths.append(str(path))
    return paths


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class StepClock:
    """progress() callback recording the time of every completed step."""

    def __init__(self):
        self.times = [time.perf_counter()]

    def __call__(self, done, total):
        self.times.append(time.perf_counter())

    def per_step(self) -> float:
        """Mean seconds per step, leaving out the first step (it includes building)."""
        t = np.diff(self.times[1:])
        return float(t.mean()) if t.size else float("nan")


def run_single(args) -> dict:
    from sensorbudget.trainer import GreedyRLS

    t0 = time.perf_counter()
    arrays = [np.load(p) for p in args.paths]
    X = np.concatenate([a["X"] for a in arrays])
    Y = np.concatenate([a["Y"] for a in arrays])
    del arrays
    load = time.perf_counter() - t0
    clock = StepClock()
    t0 = time.perf_counter()
    est = GreedyRLS(budget=args.k, lam=1.0).fit(X, Y, progress=clock)
    fit = time.perf_counter() - t0
    return {"load_s": load, "fit_s": fit, "step_s": clock.per_step(), "rss_mb": peak_rss_mb(),
            "selected": est.selected_.tolist(), "loo_path": est.loo_path_.tolist()}


def run_dask(args) -> dict:
    import distributed

    from sensorbudget.trainer import GreedyRLS
    from sensorbudget.trainer.distributed.dask_data import ShardTable

    if args.scheduler:
        client = distributed.Client(args.scheduler)
    else:
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                           processes=True, dashboard_address=":0",
                                           silence_logs=40)
        client = distributed.Client(cluster)
    with client:
        clock = StepClock()
        t0 = time.perf_counter()
        est = GreedyRLS(budget=args.k, lam=1.0, backend="dask", client=client).fit(
            ShardTable(args.paths), None, progress=clock)
        fit = time.perf_counter() - t0
        workers = client.run(peak_rss_mb)
        latency = round_trip_seconds(client)
    return {"fit_s": fit, "step_s": clock.per_step(), "rss_mb": peak_rss_mb(),
            "worker_rss_mb": sorted(workers.values()), "traffic": est.distributed_,
            "latency_s": latency, "selected": est.selected_.tolist(),
            "loo_path": est.loo_path_.tolist()}


def round_trip_seconds(client, repeats=20) -> float:
    """Median time of one round of the store: tiny pinned tasks on every worker, gathered."""
    from sensorbudget.trainer.distributed import partition
    from sensorbudget.trainer.distributed.partition import PartitionSpec
    from sensorbudget.trainer.distributed.row_store import DaskRowStore

    specs = [PartitionSpec(f"p{i}", partition.arrays_loader, (np.zeros((2, 1)), np.zeros((2, 1))))
             for i in range(len(client.scheduler_info()["workers"]))]
    times = []
    with DaskRowStore(client, specs) as store:
        for _ in range(repeats):
            t0 = time.perf_counter()
            store.map("release")
            times.append(time.perf_counter() - t0)
    return float(np.median(times))


def run_shards(args) -> dict:
    return {"paths": make_shards(Path(args.data), args.n, args.d, args.t, args.workers)}


def run_partition(args) -> dict:
    """Single-thread time per step on n/P rows (one partition's share of a step)."""
    from threadpoolctl import threadpool_limits

    from sensorbudget.trainer import GreedyRLS
    from sensorbudget.trainer.selection import rls_math

    rls_math.set_threads(1)
    rng = np.random.default_rng(args.parts)
    X = rng.standard_normal((args.n // args.parts, args.d))
    Y = X[:, :args.t] + rng.standard_normal((X.shape[0], args.t))
    clock = StepClock()
    with threadpool_limits(1):
        GreedyRLS(budget=4, lam=1.0).fit(X, Y, progress=clock)
    return {"step_s": clock.per_step()}


def child(mode: str, args, **extra) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, "--json", json.dumps(
        {**vars(args), **extra})]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="n=20 000, d=200, t=5, k=10")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster workers/shards")
    parser.add_argument("--scheduler", default=None, help="Dask scheduler address")
    parser.add_argument("--data", default="/tmp/sensorbudget-bench-dask", help="shard dir")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--json", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        ns = argparse.Namespace(**json.loads(args.json))
        run = {"single": run_single, "dask": run_dask, "partition": run_partition,
               "shards": run_shards}[args.child]
        print(json.dumps(run(ns)))
        return
    size = QUICK if args.quick else FULL
    vars(args).update(size)
    # every step in a child: Linux carries a parent's peak RSS over into its children's ru_maxrss
    args.paths = child("shards", args)["paths"]
    single = child("single", args)
    dask = child("dask", args)
    parts = {p: child("partition", args, parts=p) for p in (1, 2, 4, 8)}
    report(args, single, dask, parts)


def report(args, single, dask, parts) -> None:
    n, d, t, k = args.n, args.d, args.t, args.k
    traffic = dask["traffic"]["bytes_per_step"]
    where = args.scheduler or f"LocalCluster({args.workers} procs x 1 thread)"
    same = single["selected"] == dask["selected"]
    diff = np.max(np.abs(np.subtract(single["loo_path"], dask["loo_path"]))
                  / np.abs(single["loo_path"]))
    print(f"greedy RLS, n={n} d={d} t={t} k={k} (X float64 {n * d * 8 / 1e6:.0f} MB), "
          f"{len(args.paths)} shards")
    print(f"{'run':<56}{'total s':>8}{'s/step':>8}  peak RSS per process (MB)")
    print(f"{'single machine (read shards + fit)':<56}{single['load_s'] + single['fit_s']:>8.1f}"
          f"{single['step_s']:>8.2f}  {single['rss_mb']:.0f}")
    workers = ", ".join(f"{m:.0f}" for m in dask["worker_rss_mb"])
    print(f"{'Dask ' + where + ', workers read shards':<56}{dask['fit_s']:>8.1f}"
          f"{dask['step_s']:>8.2f}  driver+scheduler {dask['rss_mb']:.0f}; workers {workers}")
    rounds = ", ".join(f"{k} {v:.3f} s" for k, v in traffic["seconds"].items())
    print(f"Dask step by round: {rounds}")
    print(f"bytes per step: {traffic['down'] / 1e3:.1f} kB to the workers, "
          f"{traffic['up'] / 1e3:.1f} kB back, {traffic['rounds']:.0f} rounds "
          f"(round trip {dask['latency_s'] * 1e3:.1f} ms); X once: "
          f"{n * d * 8 / 1e6:.0f} MB read by the workers from the shards")
    print(f"same picks: {same}; max relative LOO path difference {diff:.1e}")
    overhead = traffic["rounds"] * dask["latency_s"]
    print(f"scaling estimate (time per step = one partition's single-thread step on n/P rows "
          f"+ {overhead * 1e3:.0f} ms round trips):")
    print(f"{'P':>4}{'rows/partition':>16}{'partition s/step':>18}{'est. s/step':>13}"
          f"{'speed-up':>10}")
    base = parts[1]["step_s"] + overhead
    for p, r in parts.items():
        est = r["step_s"] + overhead
        print(f"{p:>4}{n // p:>16}{r['step_s']:>18.3f}{est:>13.3f}{base / est:>10.2f}")


if __name__ == "__main__":
    main()
