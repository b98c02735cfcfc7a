"""Plotly figure specifications (plain dicts: ``data``, ``layout``) of the report data from
:func:`sensorbudget.device_sim.html.runs.collect`. Every plotted number is taken from that data as it is,
so the page's traces equal the runs' JSON files.

Every string Plotly draws (trace names, titles, hover texts, category labels) passes through
:func:`text`: Plotly reads its own small tag set (``<b>``, ``<br>``, ``<a>``...) in them and
decodes entities, so a name is escaped to be drawn as the characters it holds."""

from __future__ import annotations

import html
import math

from sensorbudget.trainer.plots import pareto_front

GREY, BLUE, RED = "#888888", "#1f77b4", "#d62728"
#: How each kind of error is drawn on the error-against-cost plots, and named in the legend.
LOO_MARKER = {"symbol": "circle", "size": 7}
CV_MARKER = {"symbol": "diamond-open", "size": 10, "line": {"width": 2}}
LOO_NAME = "training path, in-sample {criterion} (optimistic)"
CV_NAME = "nested CV, held-out folds (mean ± std)"
ERROR_AXIS = "MSE (● in-sample, ◆ nested CV)"


def text(value) -> str:
    """``value`` as text Plotly draws verbatim (its markup characters escaped)."""
    return html.escape(str(value), quote=False)


def num(v, digits: int = 4) -> str:
    """``v`` to ``digits`` significant digits; ``-`` for None and non-finite numbers."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:.{digits}g}" if isinstance(v, float) else str(v)


def si(value, unit: str = "", digits: int = 3) -> str:
    """``value`` with an SI prefix (``6.29e-07 J`` -> ``629 nJ``); ``-`` for None."""
    if value is None:
        return "-"
    if value == 0 or not unit:
        return f"{value:.{digits}g}{' ' + unit if unit else ''}"
    prefixes = ((1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""), (1e-3, "m"), (1e-6, "µ"),
                (1e-9, "n"), (1e-12, "p"))
    for scale, prefix in prefixes:
        if abs(value) >= scale:
            break
    return f"{value / scale:.{digits}g} {prefix}{unit}"


def _layout(title: str, xtitle: str, ytitle: str, **extra) -> dict:
    """Title on the left (the mode bar is on the right), legend under the plot; the titles
    (plain text) escaped for Plotly."""
    return {"title": {"text": text(title), "font": {"size": 13}, "x": 0.01, "xanchor": "left"},
            "height": 400, "margin": {"l": 70, "r": 20, "t": 40, "b": 40},
            "xaxis": {"title": {"text": text(xtitle)}, "automargin": True},
            "yaxis": {"title": {"text": text(ytitle)}, "automargin": True},
            "hovermode": "closest",
            "legend": {"font": {"size": 10}, "orientation": "h", "x": 0, "y": -0.22,
                       "yanchor": "top", "tracegroupgap": 2}, **extra}


def _wrap(names: list, per_line: int = 4) -> str:
    names = [text(n) for n in names]
    return "<br>  ".join(", ".join(names[i:i + per_line])
                         for i in range(0, len(names), per_line)) or "-"


def cost_text(costs: dict, currency: str) -> str:
    parts = []
    for kind, unit in (("price", currency), ("sensors", ""), ("extractors", ""),
                       ("energy", "J"), ("time", "s")):
        if costs.get(kind) is not None:
            v = costs[kind]
            parts.append(f"{kind} {si(v, unit) if unit in ('J', 's') else f'{v:g} {unit}'}")
    return ", ".join(p.strip() for p in parts)


def design_title(d: dict) -> str:
    if d["kind"] == "evaluation":
        return f"{d['run']}: {d['method']} at budget {d['budget']}"
    return f"{d['run']}: step {d['step']}"


def hover(d: dict) -> str:
    lines = [f"<b>{text(design_title(d))}</b>",
             f"criterion: {text(d['criterion'])}",
             f"{text(d.get('measure', 'MSE'))} ({text(d['error_kind'])}): {num(d['error'])}"]
    if d.get("criterion_error") is not None:      # trained on standardised targets
        lines.append(f"  in the targets' units; on standardised targets (mean of MSE / "
                     f"variance): {num(d['criterion_error'])}")
    if d["kind"] == "evaluation":
        lines.append(f"features: {num(d['n_features'], 3)} (mean over folds)")
    else:
        lines += [f"sensors: {_wrap(d['sensors'])}", f"extractors: {_wrap(d['extractors'])}"]
    lines.append(f"costs: {text(cost_text(d['costs'], d['currency']))}")
    return "<br>".join(lines)


def pareto_figures(data: dict) -> list:
    """One figure per cost kind that any design has and per error measure (bundles' MSE, a
    classification evaluation's Hamming loss or error rate: never two on one axis): every
    design a point, every bundle's path a line, evaluations as mean ± std over folds, and the
    Pareto front over all of them. The first measure's figures are ``pareto-KIND``."""
    measures = list(dict.fromkeys(d.get("measure", "MSE") for d in data["designs"]))
    return [f for m, measure in enumerate(measures)
            for f in _pareto_figures(data, measure, f"-{m}" if m else "")]


def _pareto_figures(data: dict, measure: str, suffix: str) -> list:
    designs, out = data["designs"], []
    mine_measure = [d.get("measure", "MSE") == measure for d in designs]
    kinds = {k: v for k, v in data["cost_kinds"].items()     # kinds with a cost somewhere
             if any(d["costs"].get(k) for d, ok in zip(designs, mine_measure) if ok)}
    if not any(d["costs"].get("sensors") for d in designs) and "price" in kinds:
        kinds["price"] = ("feature cost (no sensor costs: 1 per feature)", "")
    for kind, (title, unit) in (kinds or data["fallback_kind"]).items():
        idx = [i for i, d in enumerate(designs)
               if mine_measure[i] and d["costs"].get(kind) is not None]
        if not idx:
            continue
        if unit == "currency":
            unit = next((designs[i]["currency"] for i in idx if designs[i]["currency"]), "")
        near = _colocated(designs, idx, kind)
        traces = []
        for run in data["runs"]:
            mine = [i for i in run["designs"] if i in idx]
            if not mine:
                continue
            name = LOO_NAME.format(criterion=run["error_kind"].removeprefix("in-sample "))
            t = _points(designs, mine, kind, f"{run['name']}: {name}", "lines+markers", near)
            t.update(marker=dict(LOO_MARKER), legendgroup="loo")
            traces.append(t)
        for ev in data["evaluations"]:
            for method in ev["methods"]:
                mine = [i for i in ev["designs"] if i in idx and designs[i]["method"] == method]
                if not mine:
                    continue
                t = _points(designs, mine, kind, f"{ev['name']}: {method}, {CV_NAME}",
                            "markers", near)
                t.update(marker=dict(CV_MARKER), legendgroup="cv")
                t["error_y"] = {"type": "data", "visible": True,
                                "array": [designs[i]["error_std"] or 0 for i in mine]}
                traces.append(t)
        pts = [(designs[i]["costs"][kind], designs[i]["error"]) for i in idx]
        front = [idx[j] for j in pareto_front(pts)]
        f = _points(designs, front, kind, "Pareto front (over both kinds)", "lines")
        f.update(line={"shape": "hv", "color": "black", "width": 1, "dash": "dot"},
                 hoverinfo="skip", hovertemplate=None)
        f.pop("hovertext")
        traces.append(f)
        xtitle = f"{title} ({unit})" if unit else title
        axis = ERROR_AXIS if measure == "MSE" else f"{text(measure)} (◆ nested CV)"
        out.append({"id": f"pareto-{kind}{suffix}", "pareto": True, "data": traces,
                    "layout": _layout(f"{'error' if measure == 'MSE' else text(measure)} vs "
                                      f"{title}", xtitle, axis)})
    return out


def _colocated(designs, idx, kind, tol: float = 0.012) -> dict:
    """{design: the other designs drawn on the same spot} (within ``tol`` of the axes' ranges,
    about a marker): their hover names them all, since only the top one can be hovered or
    clicked (the design list below the plots reaches every one)."""
    xs = [designs[i]["costs"][kind] for i in idx]
    ys = [designs[i]["error"] for i in idx]
    dx, dy = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    return {i: [j for j, x, y in zip(idx, xs, ys) if j != i
                and abs(x - designs[i]["costs"][kind]) <= tol * dx
                and abs(y - designs[i]["error"]) <= tol * dy] for i in idx}


def _points(designs, idx, kind, name, mode, near=None) -> dict:
    texts = []
    for i in idx:
        also = (near or {}).get(i) or []
        texts.append(hover(designs[i]) + ("<br><i>on the same spot: " + text(
            "; ".join(design_title(designs[j]) for j in also)) + "</i>" if also else ""))
    return {"type": "scatter", "mode": mode, "name": text(name),
            "x": [designs[i]["costs"][kind] for i in idx], "y": [designs[i]["error"] for i in idx],
            "customdata": list(idx), "hovertext": texts,
            "hovertemplate": "%{hovertext}<extra></extra>"}


def evaluation_figures(ev: dict, labels: dict, k: int) -> list:
    """Mean ± std over the folds of every measure against the budget, one line per method."""
    out = []
    for m, measure in enumerate(ev["measures"]):
        traces = []
        for method in ev["methods"]:
            cells = [c for c in ev["cells"] if c["method"] == method]
            traces.append({"type": "scatter", "mode": "lines+markers", "name": text(method),
                           "x": [text(c["budget"]) for c in cells],
                           "y": [c[measure]["mean"] for c in cells],
                           "error_y": {"type": "data", "visible": True,
                                       "array": [c[measure]["std"] or 0 for c in cells]}})
        label = labels.get(measure, measure)
        out.append({"id": f"eval-{k}-{m}", "data": traces,
                    "layout": _layout(f"{label} (nested CV): mean ± std over {ev['folds']} "
                                      "outer folds", "budget", label, height=340,
                                      xaxis={"title": {"text": "budget"}, "type": "category",
                                             "automargin": True})})
    return out


def _time_axis(seconds: list) -> tuple:
    span = max((t for t in seconds if t is not None), default=0.0)
    for scale, name in ((86400.0, "days"), (3600.0, "h"), (60.0, "min"), (1.0, "s")):
        if span >= 3 * scale:
            return scale, name
    return 1.0, "s"


def simulation_figures(sim: dict, k: int) -> list:
    """Device output and ground truth over time (one figure per output), the cost breakdown
    (sensor energy; compute per extractor and model) and the per-prediction cost counts."""
    out, s = [], sim["series"]
    if s is not None:
        single = len(s["recordings"]) == 1
        scale, tname = _time_axis(s["time_s"])
        x = ([None if t is None else t / scale for t in s["time_s"]] if single
             else list(range(len(s["time_s"]))))
        xtitle = (f"time in {s['recordings'][0]} ({tname})" if single
                  else "prediction (recordings in replay order)")
        for j, name in enumerate(s["outputs"]):
            traces = [{"type": "scatter", "mode": "lines", "name": "ground truth (recordings)",
                       "x": x, "y": s["truth"][j], "line": {"color": GREY, "width": 2}},
                      {"type": "scatter", "mode": "lines", "name":
                       text(f"device ({sim['backend']}, {sim['numeric']})"), "x": x,
                       "y": s["device"][j], "line": {"color": BLUE, "width": 1}}]
            out.append({"id": f"sim-{k}-time-{j}", "data": traces,
                        "layout": _layout(f"{name}: device prediction and ground truth",
                                          xtitle, name, meta={"time_scale": scale})})
    sensors = sim["sensor_energy_j"]
    if sensors:
        out.append({"id": f"sim-{k}-sensors", "data": [{
            "type": "bar", "orientation": "h", "y": [text(n) for n in sensors],
            "x": list(sensors.values()),
            "marker": {"color": RED}, "hovertemplate": "%{y}: %{x:.4s}J<extra></extra>"}],
            "layout": _layout("sensor energy per prediction (from sensors.toml)",
                              "energy per prediction", "",
                              xaxis={"title": {"text": "energy per prediction"},
                                     "exponentformat": "SI", "ticksuffix": "J",
                                     "automargin": True})})
    parts = dict(sim["per_extractor"])
    parts["model"] = (sim["model"] or {}).get("median")
    parts = {n: v for n, v in parts.items() if v is not None}
    if parts:
        how = "measured" if sim["measured"] else "estimated"
        out.append({"id": f"sim-{k}-compute", "data": [{
            "type": "bar", "orientation": "h", "y": [text(n) for n in parts],
            "x": list(parts.values()), "marker": {"color": BLUE},
            "hovertemplate": f"%{{y}}: %{{x:.4g}} {text(sim['unit'])}<extra></extra>"}],
            "layout": _layout(f"compute per prediction on {sim['board']} ({how})",
                              f"{sim['unit']} per prediction (median)", "",
                              height=max(260, 60 + 22 * len(parts)))})
    out.append(histogram(sim, k))
    return out


def histogram(sim: dict, k: int) -> dict:
    """Predictions per compute cost: one bar per distinct value when there are few (so one bar
    with every prediction when all cost the same), else a histogram."""
    values = [v for v in (sim["series"] or {}).get("cost") or [] if v is not None]
    unit = sim["unit"]
    parts = ("extractors + model" if sim.get("pushes") is None
             else "pushes + extractors + model")
    distinct = sorted(set(values))
    if not values:
        total = (sim["total"] or {}).get("median")
        title = f"no per-prediction measurements (estimated {si(total, unit)} per prediction)"
        return {"id": f"sim-{k}-hist", "data": [],
                "layout": _layout(title, f"{unit} per prediction", "predictions")}
    if len(distinct) == 1:
        title = f"all {len(values)} predictions cost {distinct[0]:g} {unit}"
    else:
        title = (f"{len(values)} predictions: {distinct[0]:g} to {distinct[-1]:g} {unit}, "
                 f"median {(sim['total'] or {}).get('median', float('nan')):g}")
    if len(distinct) <= 30:
        trace = {"type": "bar", "x": [f"{v:g}" for v in distinct],
                 "y": [values.count(v) for v in distinct], "marker": {"color": BLUE},
                 "hovertemplate": f"%{{x}} {text(unit)}: %{{y}} predictions<extra></extra>"}
        xaxis = {"title": {"text": text(f"{unit} per prediction ({parts})")},
                 "type": "category", "automargin": True}
    else:
        trace = {"type": "histogram", "x": values, "nbinsx": 40, "marker": {"color": BLUE}}
        xaxis = {"title": {"text": text(f"{unit} per prediction ({parts})")},
                 "automargin": True}
    return {"id": f"sim-{k}-hist", "data": [trace],
            "layout": _layout(title, "", "predictions", xaxis=xaxis, height=300)}
