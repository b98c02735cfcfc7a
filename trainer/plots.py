"""Pareto plot of a selection path: the criterion's error against cumulative cost (PNG via
matplotlib)."""

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


def _clusters(points, near: float = 0.04) -> list:
    """(first, last) index runs of consecutive points within ``near`` (as a fraction of the
    axes' ranges) of the run's first point: one label per run, so labels do not pile up."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    dx, dy = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    out = []
    for i, (x, y) in enumerate(points):
        if out and abs(x - points[out[-1][0]][0]) / dx < near \
                and abs(y - points[out[-1][0]][1]) / dy < near:
            out[-1][1] = i
        else:
            out.append([i, i])
    return [tuple(r) for r in out]


#: How the error axis names a bundle's ``criterion``.
CRITERION_LABELS = {"loo": "LOO MSE", "leave-group-out": "leave-group-out MSE"}
#: Axis titles of the cost kinds (a path entry's ``costs``).
COST_LABELS = {"price": "sensor price (BOM)", "sensors": "number of sensors",
               "extractors": "number of extractors", "energy": "sensor energy per prediction (J)",
               "time": "sensor read time per prediction (s)"}


def pareto_png(path_entries, out_path_or_bytes=None, *, cost_kind: str = "price",
               title: str | None = None, criterion: str | None = None):
    """Draw the criterion's MSE vs cumulative ``cost_kind`` for every step, with the Pareto
    front. ``criterion`` (the bundle's: loo, leave-group-out) names the error axis.

    The points carry their step numbers; what each step added is listed beside the plot (long
    extractor names at every point overlapped). ``path_entries`` are bundle ``path`` dicts (or
    an estimator's ``path_``). Writes the PNG to a file path or a binary file object; with
    ``None`` returns the PNG bytes.
    """
    if not path_entries:
        raise TrainerError("the path is empty; nothing to plot")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    points = [(_cost(e, cost_kind), float(e["loo_mse"])) for e in path_entries]
    front = pareto_front(points)
    ylabel = CRITERION_LABELS.get(criterion or "loo", f"{criterion} MSE")
    fig = Figure(figsize=(9.6, max(4.4, 0.9 + 0.16 * len(points))), dpi=100)
    ax = fig.add_axes((0.09, 0.12, 0.56, 0.8))
    ax.plot([p[0] for p in points], [p[1] for p in points], "o-", color="0.6", lw=1,
            label="greedy path")
    ax.step([points[i][0] for i in front], [points[i][1] for i in front], "s-", where="post",
            color="C0", label="Pareto front")
    steps = [e.get("step", k + 1) for k, e in enumerate(path_entries)]
    for k, (first, last) in enumerate(_clusters(points)):
        text = str(steps[first]) if first == last else f"{steps[first]}-{steps[last]}"
        ax.annotate(text, points[first], textcoords="offset points", fontsize=7,
                    xytext=(4, 4 if k % 2 == 0 else -10))
    lines = [f"{step:>3}  {', '.join(e.get('added_extractors') or e.get('added') or [])[:38]}"
             for step, e in zip(steps, path_entries)]
    fig.text(0.67, 0.92, "step  added\n" + "\n".join(lines), va="top", ha="left",
             family="monospace", fontsize=7)
    ax.set_xlabel(f"cumulative {COST_LABELS.get(cost_kind, cost_kind)}")
    ax.set_ylabel(ylabel)
    ax.set_title(title or f"{ylabel} vs {COST_LABELS.get(cost_kind, cost_kind)}", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
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
