"""PNG plots of a simulation report (matplotlib, Agg backend; imported only when writing).

They show what the interactive report (:mod:`sensorbudget.device_sim.html`) shows, for papers and terminals:
the device's predictions against the recordings' ground truth, the cost breakdown in units
that make sense (sensor energy in J with an SI prefix, compute in the backend's unit; linear
axes), and the per-prediction compute cost (one bar per distinct value when there are few).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .html.figures import si  # noqa: E402


def cost_histogram(path, report: dict, result) -> None:
    """Predictions per compute cost (pushes + extractors + model, every prediction: each
    segment's first stores a whole window): a bar per distinct value when there are at most 30
    (a single bar says that every prediction cost the same), else a histogram."""
    from .replay import compute_of

    c = report["cost"]
    values = [compute_of(r) for r in result.records if r.extractors is not None]
    label = "measured" if c["measured"] else "estimated"
    fig, ax = plt.subplots(figsize=(6, 3.5))
    distinct = sorted(set(values))
    if not values:
        ax.text(0.5, 0.5, "no per-prediction measurements", ha="center", transform=ax.transAxes)
        title = f"{report['backend']}: compute cost per prediction"
    elif len(distinct) <= 30:
        counts = [values.count(v) for v in distinct]
        ax.bar([f"{v:g}" for v in distinct], counts, color="#4477aa")
        for i, n in enumerate(counts):
            ax.text(i, n, str(n), ha="center", va="bottom", fontsize=7)
        ax.tick_params(axis="x", labelrotation=45 if len(distinct) > 8 else 0, labelsize=8)
        title = (f"{report['backend']}: all {len(values)} predictions cost {distinct[0]:g} "
                 f"{c['unit']}" if len(distinct) == 1 else
                 f"{report['backend']}: {len(values)} predictions, {len(distinct)} distinct costs")
    else:
        ax.hist(values, bins=40, color="#4477aa")
        title = f"{report['backend']}: compute cost per prediction"
    parts = "extractors + model" if c.get("pushes_note") else "pushes + extractors + model"
    ax.set_xlabel(f"{c['unit']} per prediction, {parts} ({label})")
    ax.set_ylabel("predictions")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def cost_breakdown(path, report: dict) -> None:
    """Left: sensor energy per prediction, per sensor (J, SI prefix). Right: compute per
    prediction per extractor and for the model, in the backend's unit; both linear."""
    c, e = report["cost"], report["energy"]
    sensors = {k: v.get("energy_j", 0.0) for k, v in
               sorted((report["sensors"].get("per_sensor") or {}).items())}
    compute = dict(c.get("per_extractor") or {})
    compute["model"] = (c.get("model") or {}).get("median") or 0.0
    if c.get("pushes"):                   # storing the new samples (steady prediction)
        compute["pushes"] = c["pushes"]["median"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, max(2.8, 0.9 + 0.22 * len(compute))))
    if sensors:
        left.barh(list(sensors), list(sensors.values()), color="#cc6677")
        for y, v in enumerate(sensors.values()):
            left.text(v, y, f" {si(v, 'J')}", va="center", fontsize=8)
    else:
        left.text(0.5, 0.5, "no sensor costs in the bundle", ha="center",
                  transform=left.transAxes)
    left.set_xlabel("sensor energy per prediction (J)")
    left.set_title(f"sensors: {si(e['energy_per_prediction_j']['sensors'], 'J')} per "
                   f"prediction", fontsize=10)
    right.barh(list(compute), list(compute.values()), color="#4477aa")
    right.tick_params(axis="y", labelsize=7)
    right.set_xlabel(f"{c['unit']} per prediction (median)")
    est = "measured" if c["measured"] else "estimated"
    right.set_title(f"compute on {report['profile']['name']} ({est}): "
                    f"{si(e['energy_per_prediction_j']['compute'], 'J')} per prediction",
                    fontsize=10)
    for ax in (left, right):
        ax.margins(x=0.25)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def timeline(path, report: dict, result, model) -> None:
    """The device's predictions against the recordings' ground truth (first output), with
    lost predictions and mismatches (device != host model) marked."""
    recs = result.records
    s = report.get("series") or {}
    task = report["bundle"]["task"]
    idx = np.arange(len(recs))
    fig, ax = plt.subplots(figsize=(8, 3.5))
    truth = np.array([np.nan if v is None else v for v in (s.get("truth") or [[]])[0]],
                     dtype=float)
    if truth.size and not np.isnan(truth).all():
        ax.plot(idx, truth, color="#999999", lw=2.5, label="ground truth (recordings)")
    got = [i for i, r in enumerate(recs) if r.scores is not None]
    if got:
        dev = model.labels(np.array([recs[i].scores for i in got]))
        dev_line = dev if dev.ndim == 1 else dev[:, 0]
        ax.plot(got, dev_line, ".", ms=3, color="#4477aa",
                label=f"device ({report['backend']}, {report['numeric']})")
    marks = truth if truth.size else np.zeros(len(recs))
    bad = [i for i, r in enumerate(recs) if r.match is False]
    lost = [i for i, r in enumerate(recs) if r.status == "lost"]
    if bad:
        ax.plot(bad, np.nan_to_num(marks[bad]), "x", color="#cc3311",
                label=f"differs from host model ({len(bad)})")
    if lost:
        ax.plot(lost, np.nan_to_num(marks[lost]), "|", color="#ee7733",
                label=f"lost ({len(lost)})")
    ax.set_xlabel("prediction (replay order)")
    output = (s.get("outputs") or report["bundle"]["targets"] or ["output"])[0]
    ax.set_ylabel("class index" if task == "multiclass" else
                  (f"{output} (0/1)" if task == "multilabel" else output))
    ax.set_title(f"{output}: device prediction and ground truth", fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_plots(out_dir, report: dict, result, model) -> list:
    out = Path(out_dir)
    files = [out / "cost_histogram.png", out / "cost_breakdown.png", out / "timeline.png"]
    cost_histogram(files[0], report, result)
    cost_breakdown(files[1], report)
    timeline(files[2], report, result, model)
    return files
