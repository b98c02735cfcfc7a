"""LOO vs leave-recording-out selection on BasicMotions with overlapping windows.

Usage: python benchmarks/study_group_criterion.py [--data DIR] [--budget K] [--hops 2,10,20]

Windows of 20 samples (2 s) are cut with hop 2, 10 and 20 samples (90%, 50% and no overlap)
from the UEA BasicMotions recordings (examples/basic_motions.sensors.toml). Selection and the
choice of lambda use the TRAIN file's 40 recordings only; the TEST file's 40 recordings are the
true held-out test set. Targets are the 4 activities as +1/-1 columns (what
GreedyRLSClassifier regresses), so a criterion's MSE and the test MSE are on the same scale.

For each hop and each selection criterion (LOO; leave-recording-out = ``groups`` = recording
index of every window) the table shows, after k selected features: the LOO and the
leave-recording-out estimates of *that* model (both computed exactly from the hat matrix, so
either path can be judged by either estimate), the true test MSE and test accuracy (windows,
and recordings by summed scores), and the sensors the k features need. A last table repeats the
comparison with whole channels as selection units (``unit="channel"``, sensor costs known).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sensorbudget.trainer import GreedyRLS  # noqa: E402
from sensorbudget.trainer.selection.rls_math import ridge_weights  # noqa: E402
from sensorbudget.trainer.sensing.feature_set import load_feature_set  # noqa: E402
from sensorbudget.trainer.sensing.sensor_budget import cost_kwargs_from_feature_set  # noqa: E402

DATA = Path("/work/shared/data/basic_motions")
SENSORS = ROOT / "examples" / "basic_motions.sensors.toml"


def split(fs):
    """(train rows, test rows) from the recording names (TRAIN / TEST file)."""
    is_train = np.array(["TRAIN" in fs.recording_names[g] for g in fs.groups])
    return np.flatnonzero(is_train), np.flatnonzero(~is_train)


def estimates(Xs, Yc, groups, lam):
    """(LOO MSE, leave-group-out MSE) of ridge on Xs (no intercept), from H = lam G."""
    n = Xs.shape[0]
    H = lam * np.linalg.inv(Xs @ Xs.T + lam * np.eye(n))
    E = H @ Yc
    loo = np.sum((E / np.diag(H)[:, None]) ** 2)
    lgo = 0.0
    for g in np.unique(groups):
        Q = np.flatnonzero(groups == g)
        lgo += np.sum(np.linalg.solve(H[np.ix_(Q, Q)], E[Q]) ** 2)
    return loo / Yc.size, lgo / Yc.size


def path_table(est, X, Y, groups, Xte, Yte, gte, fs):
    """Rows (k, added feature, LOO est, LGO est, test MSE, test acc, rec acc, sensors)."""
    mean, scale = est.x_mean_, est.x_scale_
    Yc = Y - Y.mean(axis=0)
    rows, sensors = [], []
    for k in range(1, len(est.selected_) + 1):
        f = est.selected_[:k]
        Xs = (X[:, f] - mean[f]) / scale[f]
        loo, lgo = estimates(Xs, Yc, groups, est.lam_)
        W = ridge_weights(Xs, Yc, est.lam_) / scale[f][:, None]
        pred = Xte[:, f] @ W + (Y.mean(axis=0) - mean[f] @ W)
        acc = np.mean(pred.argmax(1) == Yte.argmax(1))
        rec = [np.argmax(pred[gte == g].sum(0)) == np.argmax(Yte[gte == g][0])
               for g in np.unique(gte)]
        new = [s for s in fs.feature_sensors[f[-1]].split("+") if s not in sensors]
        sensors += new
        rows.append((k, fs.feature_names[f[-1]], loo, lgo, np.mean((pred - Yte) ** 2), acc,
                     np.mean(rec), "+".join(sensors)))
    return rows


def run_hop(hop, budget, data):
    fs = load_feature_set(data, SENSORS, window=20, hop=hop)
    tr, te = split(fs)
    X, Xte = np.asarray(fs.X[tr], float), np.asarray(fs.X[te], float)
    Y, Yte = 2.0 * fs.Y[tr] - 1.0, 2.0 * fs.Y[te] - 1.0
    groups, gte = fs.groups[tr], fs.groups[te]
    print(f"\n## hop={hop} samples (window 20): {len(tr)} train windows in "
          f"{np.unique(groups).size} recordings, {len(te)} test windows, {X.shape[1]} features")
    fits = {"LOO": GreedyRLS(budget=budget).fit(X, Y),
            "leave-recording-out": GreedyRLS(budget=budget).fit(X, Y, groups=groups)}
    summary = {}
    for name, est in fits.items():
        print(f"\nselected by {name} (lam = {est.lam_:g})")
        print(f"{'k':>2}  {'added':<18} {'LOO est':>8} {'LRO est':>8} {'test MSE':>8} "
              f"{'acc':>6} {'rec acc':>7}  sensors")
        rows = path_table(est, X, Y, groups, Xte, Yte, gte, fs)
        for k, added, loo, lgo, mse, acc, rec, sens in rows:
            print(f"{k:>2}  {added:<18} {loo:>8.4f} {lgo:>8.4f} {mse:>8.4f} {acc:>6.3f} "
                  f"{rec:>7.3f}  {sens}")
        r = np.array([row[2:7] for row in rows], dtype=float)
        summary[name] = (est, r)
    print(f"\nsummary hop={hop}: estimate - test MSE over the k steps of each path "
          f"(mean signed bias, mean |gap|; negative = optimistic)")
    for name, (est, r) in summary.items():
        print(f"  path {name:<20} LOO est {np.mean(r[:, 0] - r[:, 2]):+.4f} "
              f"({np.mean(np.abs(r[:, 0] - r[:, 2])):.4f})  LRO est "
              f"{np.mean(r[:, 1] - r[:, 2]):+.4f} ({np.mean(np.abs(r[:, 1] - r[:, 2])):.4f})  "
              f"final test MSE {r[-1, 2]:.4f}, acc {r[-1, 3]:.3f}")
    a, b = (summary[n][0] for n in fits)
    shared = len(set(a.selected_) & set(b.selected_))
    print(f"  feature sets: {shared}/{budget} shared; first 3 LOO "
          f"{[fs.feature_names[i] for i in a.selected_[:3]]} vs LRO "
          f"{[fs.feature_names[i] for i in b.selected_[:3]]}")
    return fs, tr, te


def channel_units(fs, tr, te, budget):
    """Channels as selection units, sensors priced (the sensor question of the issue)."""
    X, Xte = np.asarray(fs.X[tr], float), np.asarray(fs.X[te], float)
    Y, Yte = 2.0 * fs.Y[tr] - 1.0, 2.0 * fs.Y[te] - 1.0
    kw = cost_kwargs_from_feature_set(fs, unit="channel")
    print(f"\n## channels as units (hop={fs.hop}), budget {budget} channels")
    print(f"{'criterion':<20} {'lam':>8} {'channels (in order)':<44} {'sensors':<11} "
          f"{'est MSE':>8} {'test MSE':>8} {'acc':>6}")
    for name, groups in (("LOO", None), ("leave-recording-out", fs.groups[tr])):
        est = GreedyRLS(budget=budget, **kw).fit(X, Y, groups=groups)
        pred = est.predict(Xte)
        print(f"{name:<20} {est.lam_:>8.3g} {', '.join(est.selected_extractors_):<44} "
              f"{'+'.join(est.required_sensors_):<11} {est.loo_path_[-1]:>8.4f} "
              f"{np.mean((pred - Yte) ** 2):>8.4f} "
              f"{np.mean(pred.argmax(1) == Yte.argmax(1)):>6.3f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="BasicMotions directory")
    parser.add_argument("--budget", type=int, default=8, help="features to select")
    parser.add_argument("--hops", default="2,10,20", help="window hops in samples")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        sys.exit(f"BasicMotions not found at {args.data}")
    last = None
    for hop in (int(h) for h in args.hops.split(",")):
        out = run_hop(hop, args.budget, args.data)
        last = out if last is None else last
    channel_units(*last, budget=3)


if __name__ == "__main__":
    main()
