"""PNG plots of a simulation report (matplotlib, Agg backend; imported only when writing)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .costs import PROFILES  # noqa: E402


def cost_histogram(path, report: dict, result) -> None:
    """Histogram of the per-prediction compute cost (extractors + model)."""
    c = report["cost"]
    values = [r.extractors + r.model for r in result.records if r.extractors is not None]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    if values:
        ax.hist(values, bins=min(40, max(5, len(set(values)))), color="#4477aa")
    else:
        ax.text(0.5, 0.5, "no per-prediction measurements", ha="center", transform=ax.transAxes)
    label = "measured" if c["measured"] else "estimated"
    ax.set_xlabel(f"{c['unit']} per prediction ({label})")
    ax.set_ylabel("predictions")
    ax.set_title(f"{report['backend']}: compute cost per prediction")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def cost_breakdown(path, report: dict) -> None:
    """Energy per prediction: sensors vs extractors vs model (log scale)."""
    c, prof = report["cost"], PROFILES[report["profile"]["name"]]
    parts = {"sensors": report["sensors"]["energy_j"]}
    for part in ("extractors", "model"):
        med = (c[part] or {}).get("median") or 0.0
        parts[part] = prof.active_power_w * prof.seconds(med, c["unit"])
    fig, ax = plt.subplots(figsize=(6, 2.8))
    names = list(parts)
    vals = [max(v, 1e-18) for v in parts.values()]
    ax.barh(names, vals, color=["#cc6677", "#4477aa", "#228833"])
    ax.set_xscale("log")
    ax.set_xlabel("energy per prediction (J, log scale)")
    est = "" if c["measured"] else " (compute estimated)"
    ax.set_title(f"cost breakdown on {prof.name}{est}")
    for y, v in enumerate(parts.values()):
        ax.text(max(v, 1e-18), y, f" {v:.3g} J", va="center", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def timeline(path, report: dict, result, model) -> None:
    """Device predictions against the reference over the replay (lost and mismatches marked)."""
    recs = result.records
    idx = np.arange(len(recs))
    ref = model.labels(np.array([r.reference for r in recs])) if recs else np.zeros(0)
    task = report["bundle"]["task"]
    ref_line = ref if ref.ndim == 1 else ref[:, 0]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.plot(idx, ref_line, color="#999999", lw=2.5, label="reference")
    got = [i for i, r in enumerate(recs) if r.scores is not None]
    if got:
        dev = model.labels(np.array([recs[i].scores for i in got]))
        dev_line = dev if dev.ndim == 1 else dev[:, 0]
        ax.plot(got, dev_line, ".", ms=3, color="#4477aa", label=report["backend"])
    bad = [i for i, r in enumerate(recs) if r.match is False]
    lost = [i for i, r in enumerate(recs) if r.status == "lost"]
    if bad:
        ax.plot(bad, ref_line[bad], "x", color="#cc3311", label=f"mismatch ({len(bad)})")
    if lost:
        ax.plot(lost, ref_line[lost], "|", color="#ee7733", label=f"lost ({len(lost)})")
    ax.set_xlabel("prediction")
    ax.set_ylabel("class index" if task == "multiclass" else
                  ("label 0" if task == "multilabel" else report["bundle"]["targets"][0]))
    ax.set_title("predictions vs reference")
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
