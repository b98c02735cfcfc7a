"""Read run folders (model bundles, evaluation reports, simulation reports) into one JSON-able
dictionary: the data the HTML report embeds and plots, and nothing else.

A run is a folder (or its main file): a bundle (``model.json``), an evaluation report
(``results.json``) or a simulation report (``report.json``). A simulation whose bundle is not
given but still exists at the path it names brings that bundle in. Designs are the steps of
every bundle's greedy path (each step a model with that many units) and the mean over the outer
folds of every (method, budget) of an evaluation.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from sensorbudget.firmware_gen.build import FOOTPRINT
from sensorbudget.trainer.bundle import load_bundle
from sensorbudget.trainer.bundle.files import json_default
from sensorbudget.trainer.target_scaling import path_in_target_units

from ..errors import DeviceError
from ..report import load_report
from .confusion import evaluation_confusions

#: The kind of every error a design carries, as the page names it (issue 32: every number
#: says what it is): a bundle's path is scored on its own training data.
ERROR_KINDS = {"loo": "in-sample LOO", "leave-group-out": "in-sample leave-group-out",
               "held-out": "nested CV"}
#: A per-target (or per-label) measure of a results.json record: ``measure[target]``.
PER_TARGET = re.compile(r"[^\[\]]+\[.*\]\Z", re.DOTALL)
#: How the criterion of a design is named on the page.
CRITERIA = {"loo": "LOO (leave-one-out, closed form)",
            "leave-group-out": "leave-group-out (closed form, one group at a time)",
            "held-out": "held-out folds (nested cross-validation)"}
#: The costs a design is plotted against: key -> (axis title, unit).
COST_KINDS = {"price": ("BOM price of the sensors", "currency"),
              "sensors": ("number of sensors", ""),
              "energy": ("sensor energy per prediction", "J"),
              "time": ("sensor read time per prediction", "s"),
              "ram": ("static RAM the features add on the board (train --board, estimated)",
                      "B"),
              "flash": ("flash the features add on the board (train --board, estimated)", "B")}
#: Without sensor costs (a plain feature table), designs are plotted against this count.
FALLBACK_KIND = {"extractors": ("number of features (extractors)", "")}
#: The error an evaluation's designs are plotted and ranked by: the first of these measures
#: it has (lower is better), else the error rate 1 - accuracy (multi-class). Bundles' path
#: errors are MSE; designs of different measures are never drawn on one axis.
ERROR_MEASURES = {"mse": "MSE", "hamming_loss": "Hamming loss", "zero_one_loss": "0/1 loss",
                  "pairwise_error": "pairwise ranking error"}
ERROR_RATE = "error rate (1 - accuracy)"


def criterion_label(name, folds=None) -> str:
    if name == "held-out" and folds:
        return f"held-out folds ({folds}-fold nested cross-validation)"
    return CRITERIA.get(name, str(name))


def _text(value) -> str | None:
    return value if isinstance(value, str) else None


def _short(value, limit: int = 60) -> str:
    """``repr(value)``, cut to about ``limit`` characters with "..." (control characters come
    out escaped)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _read_json(path: Path, what: str) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise DeviceError(f"{str(path)!r} is not a readable {what}: {exc}") from None
    if not isinstance(data, dict):
        raise DeviceError(f"{str(path)!r} is not a {what} (a JSON {type(data).__name__})")
    return data


def classify(path) -> tuple:
    """(kind, main file) of a run folder or file: kind is bundle, evaluation or simulation."""
    path = Path(path)
    names = {"model.json": "bundle", "results.json": "evaluation", "report.json": "simulation",
             "firmware.json": "firmware"}
    if path.is_dir():
        found = [(kind, path / name) for name, kind in names.items() if (path / name).is_file()]
        if len(found) != 1:
            raise DeviceError(f"{str(path)!r} holds {'none' if not found else 'more than one'} "
                              f"of model.json (bundle), results.json (evaluation), "
                              f"report.json (simulation) and firmware.json (firmware)")
        return found[0]
    if path.is_file() and path.name in names:
        return names[path.name], path
    if not path.exists():
        raise DeviceError(f"{str(path)!r} does not exist")
    raise DeviceError(f"{str(path)!r} is not a run folder (a bundle, an evaluation report, a "
                      f"simulation report or a built firmware) nor its model.json/results.json/"
                      f"report.json/firmware.json")


def _design(run: dict, entry: dict, sensors: list, extractors: list) -> dict:
    costs = dict(entry.get("costs") or {})
    if "price" not in costs and "cost" in entry:
        costs["price"] = entry["cost"]
    costs.setdefault("extractors", len(extractors))
    if sensors:
        costs.setdefault("sensors", len(sensors))
    return {"run": run["name"], "kind": "path", "step": int(entry["step"]),
            "criterion": run["criterion_label"], "error_kind": run["error_kind"],
            "measure": "MSE",
            "error": float(entry["loo_mse"]), "criterion_error": entry.get("criterion_mse"),
            "per_target": [float(v) for v in entry.get("loo_mse_per_target") or []],
            "targets": run["targets"], "sensors": list(sensors),
            "extractors": list(extractors), "costs": costs, "currency": run["currency"],
            "simulations": [], "firmware": []}


def _fitting(standardize_targets, fit_intercept, standardize) -> list:
    """How a design was fitted, beyond its features: a bundle and an evaluation with the same
    list fit the same model on the same data (unknown entries None match anything)."""
    return [bool(standardize_targets), fit_intercept, standardize]


def _label_f1(entry) -> dict | None:
    """A multi-label bundle's mean F1 over labels on its held-out (LOO or leave-group-out)
    scores: ``honest`` with each row decided by the threshold chosen without it, ``tuned``
    with the stored thresholds (chosen on the same scores: optimistic); as train prints."""
    if not isinstance(entry, dict):
        return None

    def mean(key):
        vals = entry.get(key)
        ok = isinstance(vals, list) and vals and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals)
        return sum(vals) / len(vals) if ok else None

    tuned, honest = mean("heldout_f1"), mean("rechosen_f1")
    if tuned is None and honest is None:
        return None
    kind = "leave-group-out" if entry.get("heldout") == "leave-group-out" else "LOO"
    return {"honest": honest, "tuned": tuned, "kind": kind}


def read_bundle(path: Path, name: str) -> tuple:
    """(run, designs) of one bundle's model.json."""
    bundle = load_bundle(path.parent)          # verified: format, hashes, types
    meta = bundle.meta
    entries = path_in_target_units(meta)       # every error in the targets' units
    if not entries:
        raise DeviceError(f"{str(path)!r}: the bundle has an empty selection path")
    run = {"name": name, "kind": "bundle", "path": str(path.parent),
           "sha256": meta.get("weights_sha256"), "task": meta.get("task"),
           "targets": [str(t) for t in meta.get("targets", [])],
           "criterion": meta.get("criterion", "loo"),
           "criterion_label": criterion_label(meta.get("criterion", "loo")),
           "error_kind": ERROR_KINDS.get(meta.get("criterion", "loo"), "in-sample"),
           "currency": meta.get("currency") or "", "lam": meta.get("lam"), "designs": [],
           "selected": [str(f) for f in meta.get("selected") or []],
           "budget": meta.get("budget"), "window": meta.get("window"), "hop": meta.get("hop"),
           "total_costs": dict((meta.get("costs") or {}).get("total") or {}),
           "bundle_sha256": bundle.bundle_sha256(),
           "trained_on": _text((meta.get("data") or {}).get("recordings")),
           "n_samples": meta.get("n_samples"), "n_features": len(meta.get("features") or []),
           "standardized_targets": bool(meta.get("target_scaling")),
           "fitting": _fitting(bool(meta.get("target_scaling")), meta.get("fit_intercept"),
                               meta.get("standardize")),
           "f1": _label_f1(meta.get("decision")),
           "mode": (meta.get("costs") or {}).get("mode"),
           "count_only": not any(v is not None for k, v in ((meta.get("costs") or {}).get(
               "budgets") or {}).items() if k.startswith("max_"))}
    designs, sensors, extractors = [], [], []
    for entry in entries:
        sensors += [s for s in entry.get("added_sensors") or [] if s not in sensors]
        extractors += [e for e in (entry.get("added_extractors") or entry.get("added") or [])
                       if e not in extractors]
        designs.append(_design(run, entry, sensors, extractors))
        designs[-1]["added"] = list(entry.get("added_extractors") or entry.get("added") or [])
        designs[-1]["added_sensors"] = list(entry.get("added_sensors") or [])
        if isinstance(entry.get("rates_hz"), dict):      # multi-rate: each sensor's rate here
            designs[-1]["rates_hz"] = dict(entry["rates_hz"])
    return run, designs


def _mean_std(values: list) -> tuple:
    vals = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    if not vals:
        return None, None
    mean = sum(vals) / len(vals)
    if len(vals) < 2:
        return mean, None
    return mean, (sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)) ** 0.5


def _shape(config) -> list | None:
    """The evaluated data's [rows, features, targets] (config.shape), if it is that."""
    shape = config.get("shape") if isinstance(config, dict) else None
    ok = isinstance(shape, list) and len(shape) == 3 and all(
        isinstance(v, int) and not isinstance(v, bool) for v in shape)
    return shape if ok else None


def read_evaluation(path: Path, name: str, data: dict | None = None) -> tuple:
    """(evaluation, designs): mean ± std (ddof=1) over folds of every measure, per method and
    budget, as :func:`sensorbudget.trainer.evaluation.report.summarize` computes them. ``data``: the
    results.json dictionary when it is not read from ``path``."""
    if data is None:
        data = _read_json(path, "evaluation results.json")
    try:
        methods, budgets = list(data["methods"]), [str(b) for b in data["budgets"]]
        measures, records, config = list(data["measures"]), list(data["records"]), data["config"]
    except (KeyError, TypeError):
        raise DeviceError(f"{str(path)!r} is not an evaluation results.json (needs methods, "
                          f"budgets, measures, records, config)") from None
    if not all(isinstance(v, str) for v in methods + measures):
        raise DeviceError(f"{str(path)!r}: methods and measures must be lists of names")
    records = [r for r in records if isinstance(r, dict)]
    keys = sorted({k for r in records for k in r if PER_TARGET.match(k)})
    cells = []
    for method in methods:
        for budget in budgets:
            rows = [r for r in records if r.get("method") == method
                    and str(r.get("budget")) == budget]
            cell = {"method": method, "budget": budget, "n": len(rows),
                    "n_features": _mean_std([r.get("n_features") for r in rows])[0]}
            costs = sorted({k for r in rows for k in r if k.startswith("cost_")})
            for key in measures + keys + costs:
                mean, std = _mean_std([r.get(key) for r in rows])
                cell[key] = {"mean": mean, "std": std}
            cells.append(cell)
    folds = config.get("folds") if isinstance(config, dict) else None
    setup = config.get("setup") if isinstance(config, dict) else None
    setup = setup if isinstance(setup, dict) else {}
    if folds is not None and (isinstance(folds, bool) or not isinstance(folds, int)
                              or not 2 <= folds <= 10 ** 6):
        raise DeviceError(f"{str(path)!r}: config.folds={_short(folds)} is not a number of "
                          f"folds (an integer from 2 to 10^6)")
    evaluation = {"name": name, "path": str(path.parent), "methods": methods, "budgets": budgets,
                  "measures": measures, "per_target": keys, "folds": folds,
                  "grouped": bool(isinstance(config, dict) and config.get("grouped")),
                  "stratified": bool(isinstance(config, dict) and config.get("stratified")),
                  "fitting": _fitting(setup.get("standardize_targets"),
                                      setup.get("fit_intercept"), setup.get("standardize")),
                  "task": (config.get("setup") or {}).get("task") if isinstance(config, dict)
                  else None, "cells": cells, "shape": _shape(config)}
    confusions = evaluation_confusions(records, methods, budgets)   # classes only: pages of
    evaluation.update({"confusions": confusions} if confusions else {})   # others as before
    crit = criterion_label("held-out", folds)
    error = next((m for m in ERROR_MEASURES if m in measures),
                 "accuracy" if "accuracy" in measures else None)
    designs = []
    for cell in cells if error else []:
        if cell[error]["mean"] is None:
            continue
        mean, std = cell[error]["mean"], cell[error]["std"]
        if error == "accuracy":
            mean = 1.0 - mean
        costs = {k[5:]: cell[k]["mean"] for k in cell if k.startswith("cost_")
                 and cell[k]["mean"] is not None}
        costs.setdefault("extractors", cell["n_features"])
        designs.append({"run": name, "kind": "evaluation", "step": None,
                        "method": cell["method"], "budget": cell["budget"], "criterion": crit,
                        "error_kind": ERROR_KINDS["held-out"],
                        "measure": ERROR_MEASURES.get(error, ERROR_RATE),
                        "error": mean, "error_std": std,
                        "per_target": [], "targets": [], "sensors": [], "extractors": [],
                        "n_features": cell["n_features"], "costs": costs, "currency": "",
                        "simulations": [], "firmware": []})
    return evaluation, designs


def read_firmware(path: Path, name: str) -> dict:
    """A built firmware folder: its target, numeric and footprint (flash and RAM bytes from
    ``size -A``, footprint.json) and the bundle it was generated from (bundle_sha256)."""
    meta = _read_json(path, "firmware.json")
    fp = _read_json(path.parent / FOOTPRINT, f"footprint ({FOOTPRINT}: build the firmware "
                                              f"with --build)")
    out = {"name": name, "path": str(path.parent)}
    for key, where, kind in (("target", meta, str), ("numeric", meta, str),
                             ("bundle_sha256", meta, str), ("flash_bytes", fp, int),
                             ("ram_bytes", fp, int), ("flash_limit", fp, (int, type(None))),
                             ("ram_limit", fp, (int, type(None)))):
        value = where.get(key)
        if not isinstance(value, kind) or isinstance(value, bool) or (
                isinstance(value, int) and not 0 <= value < 2 ** 63):
            raise DeviceError(f"{str(path.parent)!r}: {key}={_short(value)} is not "
                              f"{'a string' if kind is str else 'a byte count'}")
        out[key] = value
    return out


def read_simulation(path: Path, name: str) -> dict:
    report = load_report(path)
    return {"name": name, "path": str(path.parent), "report": report}


def _name(path: Path, taken: set) -> str:
    """A run's name: its folder's, made unique by " (2)", " (3)", ..."""
    path = Path(path).resolve()
    return _unique((path.name if path.is_dir() else path.parent.name) or str(path), taken)


def _unique(base: str, taken: set) -> str:
    name, i = base, 2
    while name in taken:
        name, i = f"{base} ({i})", i + 1
    taken.add(name)
    return name


def _series_ok(s, n: int) -> bool:
    """The report's ``series`` has per-prediction lists of one length, one list per output
    and names as strings (else it is left out)."""
    try:
        lists = [s["recording"], s["time_s"], s["cost"], *s["device"], *s["truth"]]
        names = [*s["outputs"], *s["recordings"]]
        return (len(s["device"]) == len(s["truth"]) == len(s["outputs"])
                and all(isinstance(v, list) and len(v) == n for v in lists)
                and isinstance(s["recordings"], list) and bool(s["recordings"])
                and all(isinstance(v, str) for v in names))
    except (KeyError, TypeError):
        return False


def simulation_entry(sim: dict) -> dict:
    """What the page shows of one simulation report (numbers taken as they are)."""
    rep = sim["report"]
    c, e, b = rep["cost"], rep["energy"], rep.get("bundle") or {}
    epp = e["energy_per_prediction_j"]
    series = rep.get("series")
    n = len(series["time_s"]) if isinstance(series, dict) and "time_s" in series else -1
    per_sensor = ((rep.get("sensors") or {}).get("per_sensor") or {})
    return {"name": sim["name"], "path": sim["path"], "backend": rep["backend"],
            "numeric": rep.get("numeric"), "board": rep["profile"]["name"],
            "clock_hz": rep["profile"].get("clock_hz"), "task": b.get("task"),
            "bundle_path": b.get("path"), "sha256": b.get("sha256"),
            "selected": list(b.get("selected") or []),
            "unit": c["unit"], "measured": c["measured"], "method": c.get("method"),
            "total": c.get("total"), "extractors": c.get("extractors"), "model": c.get("model"),
            "pushes": c.get("pushes"), "first_window": c.get("first_window"),
            "pushes_note": c.get("pushes_note"), "cost_predictions": c.get("predictions"),
            "per_extractor": dict(c.get("per_extractor") or {}),
            "per_extractor_method": c.get("per_extractor_method"),
            "sensor_energy_j": {k: v.get("energy_j") for k, v in sorted(per_sensor.items())
                                if isinstance(v, dict)},
            "compute_time_s": (e.get("compute_time_s") or {}).get("median"),
            "energy_sensors_j": epp["sensors"], "energy_compute_j": epp["compute"],
            "active_power_w": rep["profile"].get("active_power_w"),
            "average_power_w": e["average_power_w"], "battery_wh": e.get("battery_wh"),
            "battery_life_days": e.get("battery_life_days"),
            "energy_estimated": bool(e.get("estimated")),
            "recordings": rep.get("recordings"),
            "predictions": rep.get("predictions"), "lost": rep.get("lost"),
            "mismatches": rep.get("mismatches"), "accuracy": rep.get("accuracy"),
            "series": series if _series_ok(series, n) else None,
            **({"rates": rep["rates"]} if isinstance(rep.get("rates"), dict) else {})}


def collect(paths, evaluations=None) -> dict:
    """The report data of the run folders ``paths`` and of the in-memory ``evaluations``
    ({name: results.json dictionary}); see the module docstring."""
    taken, done = set(), {}
    runs, designs, evaluations_out, sims, firmware = [], [], [], [], []

    def add_bundle(folder: Path):
        key = str(folder.resolve())
        if key not in done:
            run, ds = read_bundle(folder / "model.json", _name(folder, taken))
            run["designs"] = list(range(len(designs), len(designs) + len(ds)))
            runs.append(run)
            designs.extend(ds)
            done[key] = run
        return done[key]

    for p in paths:
        kind, main = classify(p)
        key = str(main.parent.resolve())
        if kind == "bundle":
            add_bundle(main.parent)
        elif key not in done and kind == "evaluation":
            ev, ds = read_evaluation(main, _name(main.parent, taken))
            ev["designs"] = list(range(len(designs), len(designs) + len(ds)))
            evaluations_out.append(ev)
            designs.extend(ds)
        elif key not in done and kind == "firmware":
            firmware.append(read_firmware(main, _name(main.parent, taken)))
        elif key not in done:
            sims.append(read_simulation(main, _name(main.parent, taken)))
        done.setdefault(key, True)
    for name, results in (evaluations or {}).items():
        results = json.loads(json.dumps(results, default=json_default))   # as written
        ev, ds = read_evaluation(Path(name), _unique(name, taken), results)
        ev["path"] = "(this run)"
        ev["designs"] = list(range(len(designs), len(designs) + len(ds)))
        evaluations_out.append(ev)
        designs.extend(ds)
    for sim in sims:                     # bring in the bundle a simulation names, if it exists
        where = Path(str(sim["report"].get("bundle", {}).get("path") or ""))
        sha = sim["report"].get("bundle", {}).get("sha256")
        if not any(r["sha256"] == sha for r in runs) and (where / "model.json").is_file():
            run = add_bundle(where)
            if run["sha256"] != sha:     # the bundle was retrained since: not this design
                run["note"] = f"not the bundle simulated in {sim['name']} (sha256 differs)"
    entries = [simulation_entry(s) for s in sims]
    for i, (sim, entry) in enumerate(zip(sims, entries)):
        run = next((r for r in runs if r["sha256"] and r["sha256"] == entry["sha256"]), None)
        entry["design"] = None if run is None else run["designs"][-1]
        if run is not None:
            designs[run["designs"][-1]]["simulations"].append(i)
    for i, fw in enumerate(firmware):    # a firmware shows on the design it was built from
        run = next((r for r in runs if r["bundle_sha256"] == fw["bundle_sha256"]), None)
        fw["design"] = None if run is None else run["designs"][-1]
        if run is not None:
            designs[run["designs"][-1]]["firmware"].append(i)
    if not runs and not evaluations_out and not sims and not firmware:
        raise DeviceError("no runs given")
    return {"runs": runs, "designs": designs, "evaluations": evaluations_out,
            "simulations": entries, "firmware": firmware,
            "criteria": CRITERIA, "cost_kinds": COST_KINDS, "fallback_kind": FALLBACK_KIND}
