"""The summary the report opens on: for each bundle its chosen design (the selected set, the
last step of its path), or, without bundles, each evaluation's best design (lowest mean
held-out error); what it uses and what it costs, every number with its kind.

Plain data (strings and numbers) for the page template: each row is one fact with its
``key`` (for scripts and tests), a ``label``, the ``names`` it lists (or None), the ``value``
as read from the runs (full precision, kept in the page as ``data-value``), its ``text`` and
its ``kind`` (where the number comes from).
"""

from __future__ import annotations

import math

from .figures import design_title, num, si

#: What an error of each kind is, in the summary's words.
ERROR_NOTES = {
    "in-sample LOO": "in-sample LOO on the training data (optimistic: the same data chose "
                     "the features)",
    "in-sample leave-group-out": "in-sample leave-group-out on the training data "
                                 "(optimistic: the same data chose the features)",
    "nested CV": "nested CV: mean over the outer folds' held-out data",
}


def _row(key: str, label: str, value=None, text: str = "", kind: str = "",
         names=None) -> dict:
    return {"key": key, "label": label, "value": value, "text": text, "kind": kind,
            "names": list(names) if names is not None else None}


def _number(value) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) else None


def chosen(data: dict) -> list:
    """The designs the report opens on: every bundle's last step, else every evaluation's
    design with the lowest mean held-out error (MSE; Hamming loss or error rate for
    classification: :data:`sensorbudget.device_sim.html.runs.ERROR_MEASURES`; the first on a tie)."""
    if data["runs"]:
        return [run["designs"][-1] for run in data["runs"] if run["designs"]]
    out = []
    for ev in data["evaluations"]:
        scored = [i for i in ev["designs"] if data["designs"][i]["error"] is not None]
        if scored:
            out.append(min(scored, key=lambda i: (data["designs"][i]["error"], i)))
    return out


def _units_note(d: dict, run: dict | None) -> str:
    """How a bundle trained on standardised targets has its error in the targets' units."""
    if not (run and run.get("standardized_targets")):
        return ""
    return (f"; in the targets' units: each target's MSE on standardised targets times its "
            f"stored variance (the criterion itself, mean of MSE / variance: "
            f"{num(_number(d.get('criterion_error')))})")


def _costs(d: dict, run: dict | None) -> list:
    costs, currency = d["costs"], d["currency"]
    readings = (f", min(window, hop) = {min(run['window'], run['hop'])} readings per sensor"
                if run and isinstance(run.get("window"), int) and isinstance(run.get("hop"), int)
                else "")
    where = (f"model.json: the selection's cost{readings}" if run
             else "mean over the outer folds' selections")
    rows = []
    if costs.get("price") is not None:
        rows.append(_row("price", "sensor price (BOM)", _number(costs["price"]),
                         f"{num(_number(costs['price']))} {currency}".strip(),
                         "model.json: the selection's cost, each sensor once" if run
                         else where))
    for key, label, unit in (("energy", "sensor energy per prediction", "J"),
                             ("time", "sensor read time per prediction", "s")):
        if costs.get(key) is not None:
            rows.append(_row(key, label, _number(costs[key]), si(_number(costs[key]), unit),
                             where))
    return rows


def nested_cv_of(data: dict, run: dict) -> list:
    """[(evaluation, cell)] of the evaluations in the report that scored this bundle's design
    by nested CV: the same data shape (rows, features, targets), the same fitting (targets
    standardised or not, intercept, column scaling), the bundle's greedy mode and its count
    budget (a bundle with cost budgets has no such cell)."""
    shape = [run["n_samples"], run["n_features"], len(run["targets"])]
    if not run["count_only"] or run["budget"] is None or run["mode"] is None:
        return []
    def same(a, b):
        return all(x is None or y is None or x == y for x, y in zip(a, b))

    return [(ev, cell) for ev in data["evaluations"] if ev["shape"] == shape
            and same(ev.get("fitting") or [], run.get("fitting") or [])
            for cell in ev["cells"] if cell["method"] == f"greedy-{run['mode']}"
            and cell["budget"] == str(run["budget"]) and any(
                (cell.get(m) or {}).get("mean") is not None for m in NESTED_CV_MEASURES)]


#: What the summary shows of the nested CV of a bundle's design: the regression error, or a
#: multi-label evaluation's macro-F1 (beside the bundle's in-sample F1) and Hamming loss.
NESTED_CV_MEASURES = {"mse": "MSE", "macro_f1": "macro-F1", "hamming_loss": "Hamming loss"}


def _f1_rows(run: dict) -> list:
    """A multi-label bundle's mean F1 over labels, as train and info print it: with each row
    decided by the threshold chosen without it, and (optimistic) with the stored thresholds."""
    f1 = run.get("f1")
    if not f1:
        return []
    kind = (f"in-sample {f1['kind']}: features and lambda chosen on all rows")
    value = f1["honest"] if f1["honest"] is not None else f1["tuned"]
    text = (f"{f1['honest']:.3f} with each row's thresholds re-chosen without it; "
            if f1["honest"] is not None else "")                  # as train prints them
    text += (f"{f1['tuned']:.3f}" if f1["tuned"] is not None else "-") + (
        " with the thresholds tuned on the same scores (optimistic)")
    return [_row("f1", "mean F1 over labels", _number(value), text, kind)]


def _nested_cv_rows(data: dict, run: dict) -> list:
    rows = []
    for ev, cell in nested_cv_of(data, run):
        for key, label in NESTED_CV_MEASURES.items():
            if (cell.get(key) or {}).get("mean") is None:
                continue
            mean, std = cell[key]["mean"], cell[key]["std"]
            rows.append(_row("nested_cv" if key == "mse" else f"nested_cv_{key}",
                             f"{label}, nested CV of this design", _number(mean),
                             f"{num(mean)}" + (f" ± {num(std)}" if std is not None else ""),
                             f"nested CV ({ev['name']}: {cell['method']} at budget "
                             f"{cell['budget']}, mean ± std over {ev['folds']} outer folds' "
                             f"held-out data; the same data shape)"))
    return rows


def _simulation_rows(sim: dict) -> list:
    how = "measured" if sim["measured"] else "estimated"
    where = f"simulation {sim['name']}: {sim['backend']} on {sim['board']}, {sim['numeric']}"
    total = _number((sim["total"] or {}).get("median"))
    life = _number(sim["battery_life_days"])
    rows = [_row("compute", "compute per prediction (median: pushes + window pass + model)",
                 total, f"{num(total)} {sim['unit']} ({how})", where),
            *_compute_parts(sim, how, where),
            _row("compute_time", "compute time per prediction (median)",
                 _number(sim["compute_time_s"]), si(_number(sim["compute_time_s"]), "s"), where),
            _row("energy_sensors", "sensor energy per prediction",
                 _number(sim["energy_sensors_j"]), si(_number(sim["energy_sensors_j"]), "J"),
                 where),
            _row("energy_compute", "compute energy per prediction",
                 _number(sim["energy_compute_j"]), si(_number(sim["energy_compute_j"]), "J"),
                 where)]
    battery = "-" if life is None else (f"{num(life, 3)} days on {num(sim['battery_wh'])} Wh"
                                        + (" (estimated)" if sim["energy_estimated"] else ""))
    rows.append(_row("battery_life", f"battery life on {sim['board']}", life, battery, where))
    rates = [s for s in (sim.get("rates") or {}).get("sensors") or [] if isinstance(s, dict)]
    if rates:
        rows.insert(0, _row("pushed_rates", "rate per sensor on the device", None, "; ".join(
            f"{s.get('name')} pushed at {num(_number(s.get('pushed_hz')))} Hz (features at "
            + ", ".join(num(_number(r)) for r in s.get("feature_rates_hz") or []) + " Hz)"
            for s in rates), where + ": the replay's interleaved streams"))
    return rows


#: the parts of the compute a simulation's card shows: (key, label, report.json cost part)
COMPUTE_PARTS = (("pushes", "pushes per prediction (new samples stored, median)", "pushes"),
                 ("window_pass", "window pass per prediction (extractors, median)",
                  "extractors"),
                 ("model", "model per prediction (median)", "model"),
                 ("first_window", "first window (pushes of a whole window + window pass, "
                                  "median)", "first_window"))


def _compute_parts(sim: dict, how: str, where: str) -> list:
    """One row per part of the compute, each with its unit and which predictions it is over;
    the pushes of an image that does not measure them say so instead of a number."""
    rows = []
    for key, label, part in COMPUTE_PARTS:
        value = _number((sim.get(part) or {}).get("median"))
        which = ("each segment's first prediction" if part == "first_window" else
                 sim.get("cost_predictions") or "every prediction")
        text = (f"{num(value)} {sim['unit']} ({how})" if value is not None else
                sim.get("pushes_note") or "not measured")
        rows.append(_row(key, label, value, text, f"{where}; {which}"))
    return rows


def _footprint_rows(fw: dict) -> list:
    where = f"firmware {fw['name']}: {fw['target']}, {fw['numeric']} (size -A)"
    return [_row("flash", "flash", fw["flash_bytes"], f"{fw['flash_bytes']} bytes" + (
                 f" of {fw['flash_limit']}" if fw["flash_limit"] else ""), where),
            _row("ram", "RAM (static, without stack)", fw["ram_bytes"],
                 f"{fw['ram_bytes']} bytes" + (f" of {fw['ram_limit']}" if fw["ram_limit"]
                                                else ""), where)]


def summary(data: dict, i: int) -> dict:
    """The summary card of design ``i``: title and rows (see the module docstring)."""
    d = data["designs"][i]
    run = next((r for r in data["runs"] if r["name"] == d["run"]), None)
    rows = []
    if run is not None:
        rows.append(_row("sensors", "sensors", len(d["sensors"]), f"{len(d['sensors'])} needed",
                         "model.json", names=d["sensors"]))
        rows.append(_row("features", "features", len(run["selected"]),
                         f"{len(run['selected'])} selected", "model.json",
                         names=run["selected"]))
        if d.get("rates_hz"):            # a multi-rate bundle's design
            rows.append(_row("rates", "rate per sensor", None, ", ".join(
                f"{s} {num(_number(r))} Hz" for s, r in d["rates_hz"].items()),
                "model.json (path step): each sensor at the highest rate a feature chosen so "
                "far needs; its energy per prediction is paid at that rate"))
    else:
        rows.append(_row("features", "features", _number(d["n_features"]),
                         f"{num(_number(d['n_features']), 3)} (mean over folds; each fold "
                         "selects its own)", "nested CV"))
    std = d.get("error_std")
    shown = num(_number(d["error"])) + (f" ± {num(_number(std))}" if std is not None else "")
    rows.append(_row("error", d.get("measure", "MSE"), _number(d["error"]), shown,
                     ERROR_NOTES.get(d["error_kind"], d["error_kind"]) + _units_note(d, run)))
    if run is not None:
        rows += _f1_rows(run) + _nested_cv_rows(data, run)
    rows += _costs(d, run)
    for s in d["simulations"]:
        rows += _simulation_rows(data["simulations"][s])
    for f in d.get("firmware") or []:
        rows += _footprint_rows(data["firmware"][f])
    if run is not None and not d["simulations"]:
        rows.append(_row("compute", "compute, energy and battery life", None,
                         "not simulated: sensorbudget simulate BUNDLE --report DIR", ""))
    if run is not None and not d.get("firmware"):
        rows.append(_row("flash", "flash and RAM", None,
                         "no firmware given: sensorbudget firmware BUNDLE --build -o DIR", ""))
    return {"design": i, "title": design_title(d), "rows": rows}
