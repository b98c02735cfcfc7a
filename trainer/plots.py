"""Pareto plot of a selection path: LOO error against cumulative cost (PNG via matplotlib)."""

from __future__ import annotations

import io
from pathlib import Path

from .errors import TrainerError


def pareto_front(points) -> list:
    """Indices of the (cost, error) points not dominated by another (cheaper-or-equal and
    lower-or-equal, one strictly), in increasing cost."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], points[i][1]))
    front, best = [], float("inf")
    for i in order:
        if points[i][1] < best:
            front.append(i)
            best = points[i][1]
    return front


def _cost(entry: dict, kind: str) -> float:
    costs = entry.get("costs") or {}
    if kind in costs:
        return float(costs[kind])
    if kind == "price" and "cost" in entry:
        return float(entry["cost"])
    raise TrainerError(f"path entry {entry.get('step')} has no {kind!r} cost")


def pareto_png(path_entries, out_path_or_bytes=None, *, cost_kind: str = "price",
               title: str | None = None):
    """Draw LOO MSE vs cumulative ``cost_kind`` for every step, with the Pareto front.

    ``path_entries`` are bundle ``path`` dicts (or an estimator's ``path_``). Writes the PNG to
    a file path or a binary file object; with ``None`` returns the PNG bytes.
    """
    if not path_entries:
        raise TrainerError("the path is empty; nothing to plot")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    points = [(_cost(e, cost_kind), float(e["loo_mse"])) for e in path_entries]
    front = pareto_front(points)
    fig = Figure(figsize=(6.4, 4.4), dpi=100)
    ax = fig.add_subplot()
    ax.plot([p[0] for p in points], [p[1] for p in points], "o-", color="0.6", lw=1,
            label="greedy path")
    ax.step([points[i][0] for i in front], [points[i][1] for i in front], "s-", where="post",
            color="C0", label="Pareto front")
    for entry, (x, y) in zip(path_entries, points):
        label = ", ".join(entry.get("added_extractors") or entry.get("added") or [])
        ax.annotate(label[:24], (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xlabel(f"cumulative {cost_kind}")
    ax.set_ylabel("LOO MSE")
    ax.set_title(title or f"LOO error vs {cost_kind}")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    data = buf.getvalue()
    if out_path_or_bytes is None:
        return data
    if hasattr(out_path_or_bytes, "write"):
        out_path_or_bytes.write(data)
    else:
        Path(out_path_or_bytes).write_bytes(data)
    return None
