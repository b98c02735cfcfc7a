"""Group (extractor) selection: speed vs singleton selection and vs refitting, and BasicMotions.

Usage: python benchmarks/bench_groups.py [--quick] [--basic-motions DIR] [--skip-speed]

Speed: E extractors x m features (D = E m columns), n samples, t targets, k steps at lam = 1.
- "singleton": plain greedy selection of k single columns out of the same D columns;
- "group": greedy selection of k extractors (k m columns), block Woodbury scoring;
- "refit": the definition, a ridge refit (Cholesky + hat diagonal for the LOO residuals) for
  every candidate group at every step. It runs at a few steps only (on the prefix the fast
  path chose, whose pick it must reproduce) and the total is the trapezoid over steps
  (labelled "extrapolated"); with --quick it runs every step.

BasicMotions (UEA; accelerometer + gyroscope at 10 Hz, 4 activities): features from
examples/basic_motions.sensors.toml, trained on the TRAIN file's windows and scored on the TEST
file's windows (accuracy per window and per recording by summed scores). Compares, at equal
extractor budgets, all candidate features with accelerometer-only features, and shows which
sensors the cost-aware (auto) strategy keeps under price and energy budgets.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.linalg import cho_factor, cho_solve

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sensorbudget.trainer import GreedyRLSClassifier  # noqa: E402
from sensorbudget.trainer.selection.costs import build_plan  # noqa: E402
from sensorbudget.trainer.selection.loop import Preprocessing, greedy_select  # noqa: E402

CASES = [(5000, 400, 5, 10, 30)]
QUICK = [(1000, 100, 5, 5, 8)]


def make_data(n, E, m, t, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, E * m))
    support = rng.choice(E * m, size=2 * t, replace=False)
    Y = X[:, support] @ rng.standard_normal((support.size, t)) + rng.standard_normal((n, t))
    return X, Y


def refit_step(Xs, Yc, selected, candidates, lam):
    """The definition: LOO SSE of a fresh ridge fit on S + g for every candidate group g."""
    scores = []
    for cols in candidates:
        Z = Xs[:, selected + cols]
        factor = cho_factor(Z.T @ Z + lam * np.eye(Z.shape[1]))
        W = cho_solve(factor, Z.T @ Yc)
        lev = np.einsum("ij,ji->i", Z, cho_solve(factor, Z.T))
        scores.append(float(np.sum(np.square((Yc - Z @ W) / (1.0 - lev)[:, None]))))
    return int(np.argmin(scores))


def speed_case(n, E, m, t, k, full_refit):
    X, Y = make_data(n, E, m, t)
    prep = Preprocessing.fit(X, Y, True, True)
    plan = build_plan(E * m, extractors=[f"e{i // m}" for i in range(E * m)])
    t0 = time.perf_counter()
    greedy_select(X, Y, k, 1.0, prep)
    single = time.perf_counter() - t0
    t0 = time.perf_counter()
    path = greedy_select(X, Y, k, 1.0, prep, plan=plan)
    group = time.perf_counter() - t0
    Xs = (X - prep.x_mean) / prep.x_scale
    Yc = Y - prep.y_mean
    chosen = [step[0][0] for step in path.steps]
    probe = range(k) if full_refit else sorted({0, k // 2, k - 1})
    times = {}
    for s in probe:
        selected = [f for e in chosen[:s] for f in range(e * m, e * m + m)]
        remaining = [e for e in range(E) if e not in chosen[:s]]
        t0 = time.perf_counter()
        best = refit_step(Xs, Yc, selected, [list(range(e * m, e * m + m)) for e in remaining],
                          1.0)
        times[s] = time.perf_counter() - t0
        assert remaining[best] == chosen[s], f"refit pick differs at step {s + 1}"
    steps = sorted(times)
    refit = (sum(times.values()) if full_refit
             else float(np.trapezoid([times[s] for s in steps], steps)) + times[steps[-1]])
    return single, group, refit, not full_refit


def print_speed(cases, full_refit):
    print("Grouped selection: E extractors x m features, k steps, lam=1 (seconds)")
    print(f"{'n':>6} {'E':>5} {'m':>3} {'t':>3} {'k':>3} {'singleton':>10} {'group':>8} "
          f"{'group/single':>12} {'refit':>10} {'refit/group':>11}")
    for case in cases:
        single, group, refit, extrapolated = speed_case(*case, full_refit)
        mark = "*" if extrapolated else " "
        print(f"{case[0]:>6} {case[1]:>5} {case[2]:>3} {case[3]:>3} {case[4]:>3} {single:>10.2f} "
              f"{group:>8.2f} {group / single:>12.2f} {refit:>9.1f}{mark} {refit / group:>11.0f}")
    if not full_refit:
        print("* refit loop timed at 3 steps (same prefix, same pick asserted) and extrapolated "
              "by the trapezoid rule")


# -- BasicMotions -------------------------------------------------------------------------------
def basic_motions(directory: Path):
    from sensorbudget.trainer.sensing.feature_set import load_feature_set
    from sensorbudget.trainer.sensing.sensor_budget import cost_kwargs_from_feature_set

    toml = ROOT / "examples" / "basic_motions.sensors.toml"
    train = load_feature_set(directory / "BasicMotions_TRAIN.ts", toml)
    test = load_feature_set(directory / "BasicMotions_TEST.ts", toml)
    y_train, y_test = train.Y.argmax(axis=1), test.Y.argmax(axis=1)
    costs = cost_kwargs_from_feature_set(train)
    acc_only = [i for i, s in enumerate(train.feature_sensors) if s == "accel"]
    gyro_only = [i for i, s in enumerate(train.feature_sensors) if s == "gyro"]
    print(f"\nBasicMotions: {train.X.shape[0]} train / {test.X.shape[0]} test windows, "
          f"{train.X.shape[1]} candidate features ({len(acc_only)} accelerometer-only); "
          f"sensor costs {costs['sensor_costs']}")

    def run(cols, **params):
        sub = {k: v for k, v in costs.items()}
        sub["extractors"] = [costs["extractors"][i] for i in cols]
        used = set(e for e in sub["extractors"])
        sub["extractor_sensors"] = {e: s for e, s in costs["extractor_sensors"].items()
                                    if e in used}
        sensors_used = {s for v in sub["extractor_sensors"].values() for s in v}
        sub["sensor_costs"] = {s: c for s, c in costs["sensor_costs"].items()
                               if s in sensors_used}
        est = GreedyRLSClassifier(**sub, **params).fit(train.X[:, cols], y_train)
        scores = est.decision_function(test.X[:, cols])
        window_acc = float(np.mean(est.classes_[scores.argmax(axis=1)] == y_test))
        rec_acc = recording_accuracy(scores, test.groups, y_test)
        return est, window_acc, rec_acc

    def recording_accuracy(scores, groups, y):
        hits = [scores[groups == g].sum(axis=0).argmax() == y[groups == g][0]
                for g in np.unique(groups)]
        return float(np.mean(hits))

    every = list(range(train.X.shape[1]))
    print(f"{'features':<18} {'k':>3} {'sensors':<12} {'price':>6} {'energy/pred (J)':>15} "
          f"{'window acc':>10} {'recording acc':>13}")
    for k in (1, 2, 3, 5, 8):
        for label, cols in (("accel + gyro", every), ("accel only", acc_only),
                            ("gyro only", gyro_only)):
            est, wa, ra = run(cols, budget=k, strategy="error")
            print(f"{label:<18} {k:>3} {'+'.join(est.required_sensors_):<12} "
                  f"{est.costs_['price']:>6.2f} {est.costs_['energy']:>15.3g} {wa:>10.3f} "
                  f"{ra:>13.3f}")
    by_sensor = cost_kwargs_from_feature_set(train, unit="sensor")
    est = GreedyRLSClassifier(budget=1, strategy="error", **by_sensor).fit(train.X, y_train)
    print(f"\nunit=sensor, one sensor (all its features): greedy picks "
          f"{est.selected_extractors_} ({len(est.selected_)} features)")
    print("\ncost-aware selection (strategy=auto, budget=None) on all candidate features")
    print(f"{'budget':<28} {'strategy':<10} {'k':>3} {'sensors':<12} {'price':>6} "
          f"{'energy/pred (J)':>15} {'window acc':>10} {'recording acc':>13}")
    for label, params in (("max_cost=1.0", dict(max_cost=1.0)),
                          ("max_cost=3.5", dict(max_cost=3.5)),
                          ("max_energy=1e-3 J", dict(max_energy=1e-3)),
                          ("max_cost=3.5, 5 extractors", dict(max_cost=3.5, budget=5)),
                          ("max_cost=1.0, 5 extractors", dict(max_cost=1.0, budget=5))):
        params = {"budget": None, **params}
        est, wa, ra = run(every, strategy="auto", **params)
        print(f"{label:<28} {est.strategy_:<10} {len(est.selected_extractors_):>3} "
              f"{'+'.join(est.required_sensors_):<12} {est.costs_['price']:>6.2f} "
              f"{est.costs_['energy']:>15.3g} {wa:>10.3f} {ra:>13.3f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small case, full refit loop")
    parser.add_argument("--skip-speed", action="store_true", help="only the BasicMotions part")
    parser.add_argument("--basic-motions", type=Path,
                        default=ROOT.parent / "shared" / "data" / "basic_motions",
                        help="directory with BasicMotions_TRAIN.ts / _TEST.ts")
    args = parser.parse_args(argv)
    if not args.skip_speed:
        print_speed(QUICK if args.quick else CASES, full_refit=args.quick)
    if (args.basic_motions / "BasicMotions_TRAIN.ts").is_file():
        basic_motions(args.basic_motions)
    else:
        print(f"\n(BasicMotions skipped: {args.basic_motions} not found)")


if __name__ == "__main__":
    main()
