"""Calibrated label thresholds vs threshold 0, beside logistic regression on the same features.

For emotions, yeast (Mulan's own train/test split) and CAL500 (no published split: a seeded
2/3 - 1/3 split) from ../shared/data: ``GreedyRLSClassifier(budget=k)`` (lambda by the default
search) on the training rows; thresholds per label chosen on its held-out LOO scores
(:mod:`sensorbudget.trainer.evaluation.calibration`, rules f1 and precision:0.7); micro/macro-F1 on the test
rows with threshold 0 and with the calibrated thresholds, beside scikit-learn's
``LogisticRegression`` (one per label, default C=1, standardized features, probability > 0.5)
on the same selected features. F1 as scikit-learn's ``f1_score`` (checked against it).

Usage: python benchmarks/calibration.py [--budgets 10,20] [--markdown]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sensorbudget.trainer import GreedyRLSClassifier  # noqa: E402
from sensorbudget.trainer.data import load_table  # noqa: E402
from sensorbudget.trainer.evaluation.calibration import choose_thresholds, heldout_predictions  # noqa: E402
from sensorbudget.trainer.evaluation.metrics import f1_scores  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
SETS = {"emotions": 6, "yeast": 14, "cal500": 174}


def split(name):
    """(X_train, Y_train, X_test, Y_test) of a data set."""
    folder = DATA / name
    if (folder / f"{name}-train.arff").is_file():
        tr = load_table(folder / f"{name}-train.arff", labels=SETS[name])
        te = load_table(folder / f"{name}-test.arff", labels=SETS[name])
        return tr.X, tr.Y, te.X, te.Y
    t = load_table(folder / f"{name}.arff", labels=SETS[name])
    order = np.random.default_rng(0).permutation(len(t.X))
    cut = 2 * len(order) // 3
    return t.X[order[:cut]], t.Y[order[:cut]], t.X[order[cut:]], t.Y[order[cut:]]


def logistic_f1(Xtr, Ytr, Xte, Yte):
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(Xtr)
    A, B = scaler.transform(Xtr), scaler.transform(Xte)
    D = np.zeros_like(Yte)
    for j in range(Ytr.shape[1]):
        if np.unique(Ytr[:, j]).size < 2:
            D[:, j] = Ytr[0, j]
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            D[:, j] = LogisticRegression(max_iter=2000).fit(A, Ytr[:, j]).predict(B)
    return f1_scores(Yte, D)


def run(name, budget) -> dict:
    Xtr, Ytr, Xte, Yte = split(name)
    keep = Ytr.min(0) != Ytr.max(0)          # labels with both classes in the training rows
    Ytr, Yte = Ytr[:, keep], Yte[:, keep]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = GreedyRLSClassifier(budget=budget).fit(Xtr, Ytr)
    held = heldout_predictions(est, Xtr, 2.0 * Ytr - 1.0)
    scores = est.decision_function(Xte)
    row = {"data": name, "k": budget, "labels": int(keep.sum()), "n_train": len(Xtr),
           "n_test": len(Xte)}
    for rule in ("zero", "f1", "precision:0.7"):
        th = choose_thresholds(held, Ytr, rule)
        row[rule] = f1_scores(Yte, (scores > th).astype(int))
    sel = est.selected_
    row["logreg"] = logistic_f1(Xtr[:, sel], Ytr, Xte[:, sel], Yte)
    _check_against_sklearn(Yte, (scores > 0).astype(int), row["zero"])
    return row


def _check_against_sklearn(Y, D, ours):
    from sklearn.metrics import f1_score

    assert abs(f1_score(Y, D, average="micro", zero_division=0) - ours["micro_f1"]) < 1e-12
    assert abs(f1_score(Y, D, average="macro", zero_division=0) - ours["macro_f1"]) < 1e-12


COLUMNS = ("zero", "f1", "precision:0.7", "logreg")


def table(rows, markdown=False) -> str:
    head = ["data", "k", "labels", "train/test"] + [f"{c} micro/macro-F1" for c in COLUMNS]
    body = [[r["data"], str(r["k"]), str(r["labels"]), f"{r['n_train']}/{r['n_test']}"]
            + [f"{r[c]['micro_f1']:.3f} / {r[c]['macro_f1']:.3f}" for c in COLUMNS]
            for r in rows]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return "\n".join(lines + ["| " + " | ".join(b) + " |" for b in body])
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(x, widths)) for x in [head] + body)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="10,20")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    for name in SETS:
        if not (DATA / name).is_dir():
            print(f"skipping {name}: {DATA / name} is missing", file=sys.stderr)
            continue
        for k in (int(b) for b in args.budgets.split(",")):
            rows.append(run(name, k))
            print(f"done {name} k={k}", file=sys.stderr)
    print(table(rows, args.markdown))


if __name__ == "__main__":
    main()
