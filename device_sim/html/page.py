"""The report page: a Jinja2 template (autoescape on: every value is escaped by construction)
of static HTML tables, the summary and the design panels around Plotly figures, every script
inline. The figures and the data reach the scripts as JSON in ``<script
type="application/json">`` blocks (:func:`script_json`: no ``<``, ``>``, ``&``, U+2028/9 inside,
so nothing in them can close the block) that ``report.js`` reads with ``textContent``.

Deterministic: the same data give the same bytes (figure ids are counters, no time stamps, no
random ids; plotly.js is the one bundled with the installed ``plotly`` package).
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from importlib import resources
from pathlib import PurePath

from sensorbudget.trainer.evaluation.metrics import LABELS
from sensorbudget.trainer.version import package_version

from .confusion import simulation_confusion
from .figures import (
    cost_text,
    design_title,
    evaluation_figures,
    num,
    pareto_figures,
    si,
    simulation_figures,
)
from .summary import chosen, summary

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


def sim_rows(data: dict, which: list) -> list:
    rows = []
    for i in which:
        s = data["simulations"][i]
        how = "measured" if s["measured"] else "estimated"
        total = (s["total"] or {}).get("median")
        life = s["battery_life_days"]
        rows.append([s["name"], s["backend"], s["board"], s["numeric"],
                     f"{num(total)} {s['unit']} ({how})", si(s["compute_time_s"], "s"),
                     si(s["energy_sensors_j"], "J"), si(s["energy_compute_j"], "J"),
                     si(s["average_power_w"], "W"),
                     "-" if life is None else f"{life:.3g} days on {num(s['battery_wh'])} Wh"
                     + (" (estimated)" if s["energy_estimated"] else "")])
    return rows


SIM_HEAD = ["simulation", "backend", "board", "numeric",
            "compute per prediction (median: pushes + window pass + model)",
            "compute time", "sensor energy / prediction", "compute energy / prediction",
            "average power", "battery life"]
FW_HEAD = ["firmware", "target", "numeric", "flash (bytes)", "RAM (bytes, static)"]


def fw_rows(data: dict, which: list) -> list:
    return [[f["name"], f["target"], f["numeric"],
             f"{f['flash_bytes']}" + (f" of {f['flash_limit']}" if f["flash_limit"] else ""),
             f"{f['ram_bytes']}" + (f" of {f['ram_limit']}" if f["ram_limit"] else "")]
            for f in (data["firmware"][i] for i in which)]


def design_view(data: dict, i: int) -> dict:
    """What the panel of design ``i`` shows (plain strings; the template escapes them)."""
    d = data["designs"][i]
    view = {"index": i, "title": design_title(d), "kind": d["kind"], "run": d["run"],
            "criterion": d["criterion"],
            "error_kind": d["error_kind"], "error": num(d["error"]),
            "measure": d.get("measure", "MSE"),
            "costs": cost_text(d["costs"], d["currency"]), "path_rows": [], "target_rows": [],
            "target_head": "", "note": "", "sim_rows": sim_rows(data, d["simulations"]),
            "fw_rows": fw_rows(data, d.get("firmware") or []), "confusion": None}
    if d["kind"] == "path":
        run = next(r for r in data["runs"] if r["name"] == d["run"])
        steps = [data["designs"][j] for j in run["designs"]
                 if data["designs"][j]["step"] <= d["step"]]
        view["path_rows"] = [[s["step"], ", ".join(s["added"]), ", ".join(s["added_sensors"]),
                              cost_text(s["costs"], s["currency"]), num(s["error"])]
                             for s in steps]
        view["target_rows"] = [[t, num(v)] for t, v in zip(d["targets"], d["per_target"])]
        view["target_head"] = f"{d['error_kind']} MSE" + (
            ", in the targets' units (selected on standardised targets)"
            if run.get("standardized_targets") else "")
        view["note"] = run.get("note") or ""
    else:
        ev = next(e for e in data["evaluations"] if e["name"] == d["run"])
        cell = next(c for c in ev["cells"] if c["method"] == d["method"]
                    and c["budget"] == d["budget"])
        view["target_rows"] = [[k[4:-1], f"{num(cell[k]['mean'])} ± {num(cell[k]['std'])}"]
                               for k in ev["per_target"] if k.startswith("mse[") and k in cell]
        view["target_head"] = "nested CV held-out MSE, mean ± std over folds"
        view["confusion"] = next((c for c in ev.get("confusions") or []
                                  if (c["method"], c["budget"]) == (d["method"], d["budget"])),
                                 None)
    return view


def _eval_rows(ev: dict, labels: dict, keys: list) -> list:
    rows = []
    for key in keys:
        base, _, target = key.partition("[")
        for budget in ev["budgets"]:
            cells = [c for c in ev["cells"] if c["budget"] == budget]
            first = [target[:-1]] if target else []
            rows.append(first + [labels.get(base, base), budget] + [
                f"{num(c[key]['mean'])} ± {num(c[key]['std'])}" if key in c else "-"
                for c in cells])
    return rows


def evaluation_view(ev: dict, labels: dict, figure_ids: list) -> dict:
    """Mean ± std tables (every measure; per target or label), with the definitions."""
    per_target = sorted(ev["per_target"], key=lambda k: (k.partition("[")[2], k))
    return {"name": ev["name"], "folds": ev["folds"] if ev["folds"] is not None else "K",
            "grouped": ("stratified group K-fold" if ev.get("stratified") else "group K-fold")
            if ev["grouped"] else "K-fold",
            "methods": [c["method"] for c in ev["cells"] if c["budget"] == ev["budgets"][0]],
            "definitions": [(labels.get(m, m), DEFINITIONS[m]) for m in ev["measures"]
                            if m in DEFINITIONS],
            "rows": _eval_rows(ev, labels, ev["measures"]),
            "target_rows": _eval_rows(ev, labels, per_target), "figure_ids": figure_ids,
            "confusions": ev.get("confusions") or []}


def accuracy_kind(data: dict, sim: dict) -> str:
    """What the device's accuracy on the replayed recordings is, as simulate decided it from
    the recordings' bytes (report.json accuracy.device.data: in-sample when they are the
    bundle's training recordings, :func:`sensorbudget.trainer.provenance.same_data`); a report without it
    says only what the names allow (a name proves nothing: a test split's stream.csv is not the
    training split's)."""
    said = ((sim["accuracy"] or {}).get("device") or {}).get("data")
    if isinstance(said, str):
        return said
    run = next((r for r in data["runs"] if sim.get("design") in r["designs"]), None)
    trained, replayed = (run or {}).get("trained_on"), PurePath(sim["recordings"] or "").name
    if trained and trained == replayed:
        return f"in-sample if these are the {trained} the bundle was trained on"
    if trained:
        return f"a test split if these are not the bundle's training recordings ({trained})"
    return "a test split only if the bundle was not trained on them"


def simulation_view(data: dict, sim: dict, figure_ids: list) -> dict:
    acc = (sim["accuracy"] or {}).get("device") or {}
    acc_text = ", ".join(f"{a} {num(v)}" for a, v in acc.items()
                         if isinstance(v, (int, float)) and not isinstance(v, bool))
    return {"name": sim["name"], "backend": sim["backend"], "board": sim["board"],
            "predictions": num(sim["predictions"]), "lost": num(sim["lost"]),
            "mismatches": num(sim["mismatches"]), "accuracy": acc_text or "-",
            "accuracy_kind": accuracy_kind(data, sim),
            "method": sim["method"] or "-", "recordings": sim["recordings"] or "-",
            "figure_ids": figure_ids, "confusion": simulation_confusion(sim["accuracy"])}


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


def script_json(obj) -> str:
    """JSON safe inside a ``<script>`` element: ``<``, ``>``, ``&`` and the JavaScript line
    separators U+2028/9 as ``\\uXXXX`` escapes (the same JSON value), NaN and infinities as
    null."""
    text = json.dumps(_finite(obj), sort_keys=False, separators=(",", ":"), allow_nan=False,
                      ensure_ascii=False)
    for char in "<>&\u2028\u2029":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def _lean(data: dict) -> dict:
    """The data as embedded for scripts: the simulations' series only once (in the figures)."""
    sims = [{k: v for k, v in s.items() if k != "series"} for s in data["simulations"]]
    return {**data, "simulations": sims}


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


@lru_cache(maxsize=1)
def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(loader=PackageLoader(__package__, "templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                       keep_trailing_newline=True)


def render(data: dict, title: str = "sensorbudget report") -> str:
    """The whole page as a string."""
    from markupsafe import Markup

    figures, evaluations, simulations = pareto_figures(data), [], []
    pareto_ids = [f["id"] for f in figures]
    for k, ev in enumerate(data["evaluations"]):
        figs = evaluation_figures(ev, LABELS, k)
        figures += figs
        evaluations.append(evaluation_view(ev, LABELS, [f["id"] for f in figs]))
    for k, sim in enumerate(data["simulations"]):
        figs = simulation_figures(sim, k)
        figures += figs
        simulations.append(simulation_view(data, sim, [f["id"] for f in figs]))
    sources = [(r["name"], "bundle", r["path"]) for r in data["runs"]]
    sources += [(e["name"], "evaluation", e["path"]) for e in data["evaluations"]]
    sources += [(s["name"], "simulation", s["path"]) for s in data["simulations"]]
    sources += [(f["name"], "firmware", f["path"]) for f in data["firmware"]]
    opened = chosen(data)
    return _environment().get_template("page.html.j2").render(
        title=title, css=Markup(_asset("report.css")), plotly=Markup(plotly_js()),
        js=Markup(_asset("report.js")),
        summaries=[summary(data, i) for i in opened],
        opened=opened[0] if opened else None,
        sources=[{"name": n, "kind": k, "path": p} for n, k, p in sources],
        designs=[design_view(data, i) for i in range(len(data["designs"]))],
        pareto_ids=pareto_ids, evaluations=evaluations, simulations=simulations,
        sim_head=SIM_HEAD, sim_rows=sim_rows(data, list(range(len(data["simulations"])))),
        fw_head=FW_HEAD, fw_rows=fw_rows(data, list(range(len(data["firmware"])))),
        firmware=data["firmware"], version=package_version(),
        figures_json=Markup(script_json(figures)),
        data_json=Markup(script_json(_lean(data))))
