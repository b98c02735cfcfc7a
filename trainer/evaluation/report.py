"""Summaries of an :class:`sensorbudget.trainer.evaluation.protocol.EvaluationResult`: tables, tests, curves,
files.

Every number is formatted by one function (:func:`fmt`), so the text the CLI prints and the
Markdown report carry identical strings. Means and standard deviations are over the outer folds
(sample standard deviation, ddof=1). Methods are compared per measure and budget by a two-sided
Wilcoxon signed-rank test on the paired per-fold values (scipy; exact distribution for small
samples); when every paired difference is 0 the p-value is 1. matplotlib is imported lazily with
the Agg backend.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
from pathlib import Path

import numpy as np

from ..bundle.files import json_default, write_folder_atomically
from .folds import describe_split
from .metrics import LABELS, confusion_lines, higher_is_better


#: What every number of an evaluation is (issue 32: every number says its kind); the
#: summary.csv and wilcoxon.csv ``kind`` column, results.json's ``scores``, the curves' title.
SCORE_KIND = "nested CV: the outer folds' held-out data (mean ± std over folds)"


def fmt(value, digits=4) -> str:
    """A number as printed everywhere (``nan`` for undefined values)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "nan"
    return f"{value:.{digits}f}"


def summarize(result) -> list:
    """Rows {method, budget, measure, mean, std, n, n_features} over the folds."""
    rows = []
    for method, budget, measure in itertools.product(result.methods, result.budgets,
                                                     result.measures):
        v = result.values(method, budget, measure)
        v = v[~np.isnan(v)]
        feats = result.values(method, budget, "n_features")
        rows.append({"method": method, "budget": budget, "measure": measure,
                     "mean": float(v.mean()) if v.size else float("nan"),
                     "std": float(v.std(ddof=1)) if v.size > 1 else float("nan"),
                     "n": int(v.size), "n_features": float(np.mean(feats)) if feats.size else 0.0})
    return rows


def wilcoxon_tests(result) -> list:
    """Rows {measure, budget, a, b, n, p_value, better} for every pair of methods."""
    from scipy.stats import wilcoxon

    rows = []
    for a, b in itertools.combinations(result.methods, 2):
        for budget, measure in itertools.product(result.budgets, result.measures):
            x, y = result.values(a, budget, measure), result.values(b, budget, measure)
            ok = ~(np.isnan(x) | np.isnan(y))
            x, y = x[ok], y[ok]
            diff = x - y
            if x.size == 0:
                p = float("nan")
            elif np.all(diff == 0):
                p = 1.0
            else:
                p = float(wilcoxon(x, y).pvalue)
            sign = np.mean(diff) * (1 if higher_is_better(measure) else -1) if x.size else 0
            rows.append({"measure": measure, "budget": budget, "a": a, "b": b, "n": int(x.size),
                         "p_value": p, "better": a if sign > 0 else b if sign < 0 else "tie"})
    return rows


def _aligned(rows) -> list:
    """Rows of cells as lines: first two columns left-aligned, the others right-aligned, every
    column as wide as its widest cell (so the table stays aligned for any names and values)."""
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) if c < 2 else cell.rjust(w)
                      for c, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows]


def describe_decisions(result) -> str | None:
    """One line on how multi-label decisions were made (None for other tasks): the rule
    (``config["setup"]["threshold"]``) and the methods that fell back to threshold 0."""
    setup = result.config.get("setup", {})
    if setup.get("task") == "multiclass":
        return ("decisions: the class of the largest score (argmax), the rule of train, "
                "predict, simulate, ONNX and C")
    if setup.get("task") != "multilabel":
        return None
    rule = setup.get("threshold", "zero") if setup.get("task") == "multilabel" else "zero"
    if rule == "zero":
        text = "decisions: a label is on when its score is > 0 (--threshold zero)"
    else:
        text = (f"decisions: per-label thresholds ({rule}) chosen on each training fold's LOO "
                f"scores, as train --threshold {rule} does, applied to its test fold")
    fallback = sorted({r["method"] for r in result.records
                       if str(r.get("decision", "")).startswith("zero (")})
    if rule != "zero" and fallback:
        text += f"; at 0 for {', '.join(fallback)} (no closed-form held-out scores)"
    return text


def summary_table(result, measures=None) -> str:
    """Plain-text table: one line per (measure, budget), one "mean ± std" column per method,
    then the number of features each method really used per budget (mean over folds)."""
    summary = {(r["method"], r["budget"], r["measure"]): r for r in summarize(result)}
    measures = measures or result.measures
    rows = [["measure", "budget", *result.methods]]
    for measure, budget in itertools.product(measures, result.budgets):
        cells = [summary[(m, budget, measure)] for m in result.methods]
        rows.append([LABELS.get(measure, measure), budget,
                     *(f"{fmt(c['mean'])} ± {fmt(c['std'])}" for c in cells)])
    for budget in result.budgets:
        rows.append(["features used", budget, *(
            fmt(summary[(m, budget, measures[0])]["n_features"], 1) for m in result.methods)])
    decisions = describe_decisions(result)
    return "\n".join(_aligned(rows) + ([decisions] if decisions else [])
                     + confusion_text(result, result.budgets[-1:]))


def pooled_confusion(result, method: str, budget: str):
    """(confusion matrix summed over the held-out outer folds, class names) of a multi-class
    evaluation's method and budget, or (None, None)."""
    rows = [r for r in result.records if r["method"] == method and r["budget"] == budget
            and r.get("confusion") is not None]
    if not rows:
        return None, None
    M = np.sum([np.asarray(r["confusion"], dtype=np.int64) for r in rows], axis=0)
    return M, rows[0].get("classes") or [str(j) for j in range(len(M))]


def confusion_text(result, budgets=None) -> list:
    """Text lines: per method and budget (default: all), the confusion matrix of its class
    decisions summed over the held-out outer folds (nested CV); [] for other tasks."""
    lines = []
    for method, budget in itertools.product(result.methods, budgets or result.budgets):
        M, classes = pooled_confusion(result, method, budget)
        if M is None:
            continue
        lines += [f"confusion matrix of {method} at budget {budget}, summed over the held-out "
                  f"outer folds (nested CV; rows: true class, columns: decided class):",
                  *(f"  {line}" for line in confusion_lines(M, classes))]
    return lines


def markdown_report(result, title="Evaluation", notes=()) -> str:
    """The Markdown report: setup, mean ± std tables, features used, Wilcoxon tests, notes."""
    cfg = result.config
    summary = {(r["method"], r["budget"], r["measure"]): r for r in summarize(result)}
    split = describe_split(cfg.get("split", "group" if cfg.get("grouped") else "shuffled"),
                           cfg["folds"], cfg.get("window"), cfg.get("stratified", False))
    out = [f"# {title}", "",
           f"Nested cross-validation, outer folds: {split}; selection, lambda and "
           f"preprocessing inside each training fold. "
           f"Data: {cfg['shape'][0]} rows x {cfg['shape'][1]} features, {cfg['shape'][2]} "
           f"target(s). Values are mean ± std over folds (ddof=1); every measure is defined "
           f"in docs/metrics.md."
           + (f" {'Multi-label ' if cfg.get('setup', {}).get('task') == 'multilabel' else ''}"
              f"{describe_decisions(result)}." if describe_decisions(result) else ""), ""]
    header = "| measure | budget | " + " | ".join(result.methods) + " |"
    out += [header, "|" + "---|" * (2 + len(result.methods))]
    for measure, budget in itertools.product(result.measures, result.budgets):
        cells = [summary[(m, budget, measure)] for m in result.methods]
        out.append(f"| {LABELS.get(measure, measure)} | {budget} | " + " | ".join(
            f"{fmt(c['mean'])} ± {fmt(c['std'])}" for c in cells) + " |")
    out += ["", "Features each method really used per budget (mean over folds; greedy-separate: "
                "the union over targets):", "",
            "| budget | " + " | ".join(result.methods) + " |",
            "|" + "---|" * (1 + len(result.methods))]
    for budget in result.budgets:
        out.append(f"| {budget} | " + " | ".join(
            fmt(summary[(m, budget, result.measures[0])]["n_features"], 1)
            for m in result.methods) + " |")
    tests = wilcoxon_tests(result)
    if tests:
        out += ["", "Wilcoxon signed-rank tests (two-sided, paired over folds):", "",
                "| measure | budget | methods | p-value | better |", "|---|---|---|---|---|"]
        out += [f"| {LABELS.get(t['measure'], t['measure'])} | {t['budget']} | {t['a']} vs "
                f"{t['b']} | {fmt(t['p_value'])} | {t['better']} |" for t in tests]
    skipped = _auc_skips(result)
    if skipped:
        out += ["", f"macro-AUC skipped {skipped} (fold, label) case(s) where a label had a "
                    f"single class in the test fold."]
    inexact = sum(1 for r in result.records if not r.get("exact", True))
    if inexact:
        out += ["", f"{inexact} model(s) did not hit the budget exactly by the alpha search "
                    f"(support cut to the budget, see trainer.evaluation.baselines)."]
    confusion = confusion_text(result)
    if confusion:
        out += ["", "```", *confusion, "```"]
    out += [""] + [f"- {n}" for n in notes] + ([""] if notes else [])
    out += ["![curves](curves.png)", ""]
    return "\n".join(out)


def _auc_skips(result) -> int:
    return sum(len(r.get("auc_skipped_labels") or []) for r in result.records
               if r["method"] == result.methods[0] and r["budget"] == result.budgets[0])


def curves_png(result, path) -> None:
    """Mean ± std of every measure against the mean number of features, one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = {(r["method"], r["budget"], r["measure"]): r for r in summarize(result)}
    n = len(result.measures)
    cols = min(4, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False)
    for ax, measure in zip(axes.ravel(), result.measures):
        for method in result.methods:
            cells = [summary[(method, b, measure)] for b in result.budgets]
            x = [c["n_features"] for c in cells]
            ax.errorbar(x, [c["mean"] for c in cells], yerr=[c["std"] for c in cells],
                        marker="o", capsize=3, label=method)
        ax.set_title(LABELS.get(measure, measure))
        ax.set_xlabel("features used")
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    axes.ravel()[0].legend(fontsize="small")
    fig.suptitle(SCORE_KIND, fontsize="medium")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _csv(rows) -> str:
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return buf.getvalue()


def results_dict(result) -> dict:
    """What results.json holds: the kind of its numbers, the config, methods, budgets,
    measures and one record per (fold, method, budget)."""
    return {"scores": SCORE_KIND, "config": result.config, "methods": result.methods,
            "budgets": result.budgets, "measures": result.measures, "records": result.records}


def write_report(result, out_dir, title="Evaluation", notes=()) -> Path:
    """Write report.md, curves.png, summary.csv, wilcoxon.csv and results.json as the folder
    ``out_dir``, all or nothing (:func:`sensorbudget.trainer.bundle.files.write_folder_atomically`); an
    existing ``out_dir`` is replaced only if it is exactly an earlier report (its manifest)."""
    records = results_dict(result)
    files = {"report.md": markdown_report(result, title, notes).encode(),
             "summary.csv": _csv([{**r, "kind": SCORE_KIND} for r in summarize(result)]).encode(),
             "wilcoxon.csv": _csv([{**r, "kind": SCORE_KIND + ", paired per fold"}
                                   for r in wilcoxon_tests(result)]).encode(),
             "results.json": json.dumps(records, indent=1, default=json_default).encode()}
    curves = io.BytesIO()
    curves_png(result, curves)
    files["curves.png"] = curves.getvalue()
    write_folder_atomically(out_dir, files, kind="evaluation report")
    return Path(out_dir)
