"""The report page: static HTML tables and panels around Plotly figures, every script inline.

Deterministic: the same data give the same bytes (figure ids are counters, no time stamps, no
random ids; plotly.js is the one bundled with the installed ``plotly`` package).
"""

from __future__ import annotations

import html
import json
import math
from importlib import resources

from trainer.evaluation.metrics import LABELS
from trainer.version import package_version

from .figures import (
    cost_text,
    design_title,
    evaluation_figures,
    pareto_figures,
    si,
    simulation_figures,
)

#: The metric definitions shown beside the evaluation tables.
DEFINITIONS = {
    "mse": "mean squared error over the test rows, averaged over targets",
    "mae": "mean absolute error over the test rows, averaged over targets",
    "r2": "coefficient of determination 1 - SSE/SST per target, averaged (constant targets "
          "left out)",
    "zero_one_loss": "fraction of examples whose predicted label set is not exactly the true set",
    "hamming_loss": "fraction of (example, label) entries predicted wrong",
    "accuracy": "mean Jaccard index |Y ∩ Ŷ| / |Y ∪ Ŷ| of the label sets (0/0 = 1)",
    "one_error": "fraction of examples whose top-scored label is not relevant",
    "coverage": "mean depth in the ranking needed to cover every relevant label, minus 1",
    "ranking_loss": "mean fraction of (relevant, irrelevant) label pairs ranked wrong",
    "macro_auc": "mean ROC AUC over labels that have both classes in the test fold",
    "pairwise_error": "fraction of pairs within a query ranked in the wrong order",
}


def esc(x) -> str:
    return html.escape(str(x))


def num(v, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:.{digits}g}" if isinstance(v, float) else str(v)


def table(head: list, rows: list, cls: str = "") -> str:
    out = [f'<table class="{cls}"><thead><tr>' + "".join(f"<th>{esc(h)}</th>" for h in head)
           + "</tr></thead><tbody>"]
    out += ["<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows]
    return "\n".join(out) + "</tbody></table>"


def sim_rows(data: dict, which: list) -> list:
    rows = []
    for i in which:
        s = data["simulations"][i]
        how = "measured" if s["measured"] else "estimated"
        total = (s["total"] or {}).get("median")
        life = s["battery_life_days"]
        rows.append([esc(s["name"]), esc(s["backend"]), esc(s["board"]), esc(s["numeric"]),
                     f"{num(total)} {esc(s['unit'])} ({how})", si(s["compute_time_s"], "s"),
                     si(s["energy_sensors_j"], "J"), si(s["energy_compute_j"], "J"),
                     si(s["average_power_w"], "W"),
                     "-" if life is None else f"{life:.3g} days on {num(s['battery_wh'])} Wh"
                     + (" (estimated)" if s["energy_estimated"] else "")])
    return rows


SIM_HEAD = ["simulation", "backend", "board", "numeric", "compute per prediction (median)",
            "compute time", "sensor energy / prediction", "compute energy / prediction",
            "average power", "battery life"]


def design_panel(data: dict, i: int) -> str:
    d = data["designs"][i]
    out = [f'<div class="design" data-design="{i}" hidden><h3>{esc(design_title(d))}</h3>',
           (f"<p>criterion: <b>{esc(d['criterion'])}</b>; MSE {num(d['error'])}; costs: "
            f"{esc(cost_text(d['costs'], d['currency']))}</p>")]
    if d["kind"] == "path":
        run = next(r for r in data["runs"] if r["name"] == d["run"])
        steps = [data["designs"][j] for j in run["designs"] if data["designs"][j]["step"]
                 <= d["step"]]
        out.append("<h4>selection path</h4>" + table(
            ["step", "added extractors", "added sensors", "costs", "MSE"],
            [[s["step"], esc(", ".join(s["added"])), esc(", ".join(s["added_sensors"])),
              esc(cost_text(s["costs"], s["currency"])), num(s["error"])] for s in steps]))
        if d["per_target"]:
            out.append("<h4>per-target error (criterion MSE)</h4>" + table(
                ["target", "MSE"], [[esc(t), num(v)] for t, v in zip(d["targets"],
                                                                      d["per_target"])]))
        if run.get("note"):
            out.append(f"<p class='note'>{esc(run['note'])}</p>")
    else:
        ev = next(e for e in data["evaluations"] if e["name"] == d["run"])
        cell = next(c for c in ev["cells"] if c["method"] == d["method"]
                    and c["budget"] == d["budget"])
        keys = [k for k in ev["per_target"] if k.startswith("mse[")]
        if keys:
            out.append("<h4>per-target error (held-out MSE, mean ± std over folds)</h4>" + table(
                ["target", "MSE"],
                [[esc(k[4:-1]), f"{num(cell[k]['mean'])} ± {num(cell[k]['std'])}"]
                 for k in keys]))
    if d["simulations"]:
        out.append("<h4>measured on the device</h4>" + table(SIM_HEAD,
                                                             sim_rows(data, d["simulations"])))
    elif d["kind"] == "path":
        out.append("<p class='note'>no simulation of this design among the runs (only a "
                   "bundle's final step can be simulated)</p>")
    return "\n".join(out) + "</div>"


def _eval_rows(ev: dict, labels: dict, keys: list) -> list:
    rows = []
    for key in keys:
        base, _, target = key.partition("[")
        for budget in ev["budgets"]:
            cells = [c for c in ev["cells"] if c["budget"] == budget]
            first = [esc(target[:-1])] if target else []
            rows.append(first + [esc(labels.get(base, base)), esc(budget)] + [
                f"{num(c[key]['mean'])} ± {num(c[key]['std'])}" if key in c else "-"
                for c in cells])
    return rows


def evaluation_section(ev: dict, labels: dict) -> str:
    """Mean ± std tables (every measure; per target or label), with the definitions."""
    methods = [c["method"] for c in ev["cells"] if c["budget"] == ev["budgets"][0]]
    defs = "".join(f"<dt>{esc(labels.get(m, m))}</dt><dd>{esc(DEFINITIONS[m])}</dd>"
                   for m in ev["measures"] if m in DEFINITIONS)
    grouped = "group K-fold" if ev["grouped"] else "K-fold"
    out = (f"<h3>{esc(ev['name'])}</h3><p>{ev['folds']}-fold nested cross-validation "
           f"({grouped}); values are mean ± std over the outer folds (ddof=1).</p>"
           f"<details><summary>metric definitions</summary><dl>{defs}</dl></details>"
           + table(["measure", "budget"] + methods,
                   _eval_rows(ev, labels, ev["measures"]), "numbers"))
    per_target = sorted(ev["per_target"], key=lambda k: (k.partition("[")[2], k))
    if per_target:
        out += ("<h4>per target</h4>" + table(["target", "measure", "budget"] + methods,
                                              _eval_rows(ev, labels, per_target), "numbers"))
    return out


def _finite(obj):
    """``obj`` with NaN and infinities as None (JSON has no such numbers; a report.json read
    by Python's json may hold them)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def _json(obj) -> str:
    """JSON safe inside a <script> element (no '<', '>' or '&'; no NaN)."""
    text = json.dumps(_finite(obj), sort_keys=False, separators=(",", ":"), allow_nan=False,
                      ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _lean(data: dict) -> dict:
    """The data as embedded for scripts: the simulations' series only once (in the figures)."""
    sims = [{k: v for k, v in s.items() if k != "series"} for s in data["simulations"]]
    return {**data, "simulations": sims}


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def render(data: dict, title: str = "sensorbudget report") -> str:
    """The whole page as a string."""
    figures, body = pareto_figures(data), [f"<h1>{esc(title)}</h1>"]
    sources = [(r["name"], "bundle", r["path"]) for r in data["runs"]]
    sources += [(e["name"], "evaluation", e["path"]) for e in data["evaluations"]]
    sources += [(s["name"], "simulation", s["path"]) for s in data["simulations"]]
    body.append("<p>Runs: " + "; ".join(f"<b>{esc(n)}</b> ({k}, <code>{esc(p)}</code>)"
                                       for n, k, p in sources) + "</p>")
    if data["designs"]:
        body.append("<h2>Designs: error against cost</h2><p>Every design of every run is a "
                    "point (a bundle's greedy path step by step; an evaluation's method and "
                    "budget). Hover for its sensors, extractors, criterion and costs; click a "
                    "point (or pick it below) to see its selection path, per-target errors "
                    "and simulations.</p>")
        body.append('<div class="grid">' + "".join(
            f'<div class="fig" id="{f["id"]}"></div>' for f in figures) + "</div>")
        options = "".join(f'<option value="{i}">{esc(design_title(d))}</option>'
                          for i, d in enumerate(data["designs"]))
        body.append('<p><label>design: <select id="design-select"><option value="">'
                    f'(none selected)</option>{options}</select></label></p>')
        body.append('<div id="design-panel"><p id="design-none">No design selected.</p>'
                    + "".join(design_panel(data, i) for i in range(len(data["designs"])))
                    + "</div>")
    for k, ev in enumerate(data["evaluations"]):
        if k == 0:
            body.append("<h2>Evaluations</h2>")
        figs = evaluation_figures(ev, LABELS, k)
        figures += figs
        body.append(evaluation_section(ev, LABELS) + '<div class="grid">' + "".join(
            f'<div class="fig" id="{f["id"]}"></div>' for f in figs) + "</div>")
    if data["simulations"]:
        body.append("<h2>Simulations</h2>" + table(SIM_HEAD, sim_rows(
            data, list(range(len(data["simulations"]))))))
    for k, sim in enumerate(data["simulations"]):
        figs = simulation_figures(sim, k)
        figures += figs
        acc = (sim["accuracy"] or {}).get("device") or {}
        acc_text = ", ".join(f"{a} {num(v)}" for a, v in acc.items() if not isinstance(v, list))
        body.append(f"<h3>{esc(sim['name'])}: {esc(sim['backend'])} on {esc(sim['board'])}"
                    f"</h3><p>{num(sim['predictions'])} predictions, {num(sim['lost'])} lost, "
                    f"{num(sim['mismatches'])} not bit-identical to the host model. Device "
                    f"against the recordings' targets: {esc(acc_text or '-')}. Cost: "
                    f"{esc(sim['method'] or '-')}.</p>" + '<div class="grid">' + "".join(
                        f'<div class="fig" id="{f["id"]}"></div>' for f in figs) + "</div>")
    body.append(f"<footer>sensorbudget {esc(package_version())}; plots by plotly.js, inline."
                "</footer>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}</title><style>{_asset('report.css')}</style>"
            f"<script>{plotly_js()}</script></head><body>\n" + "\n".join(body)
            + f'\n<script type="application/json" id="sb-figures">{_json(figures)}</script>'
            + f'\n<script type="application/json" id="sb-data">{_json(_lean(data))}</script>'
            + f"\n<script>{_asset('report.js')}</script>\n</body></html>\n")
