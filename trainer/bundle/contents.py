"""The bundle's ``model.json`` contents from a fitted estimator: path, extractors, costs."""

from __future__ import annotations

import numpy as np

from .. import target_scaling
from ..selection.lam_search import lam_choice


def unit_extractors(features) -> list:
    """Default structure before costs: every feature is its own extractor of unit cost, no sensors."""
    return [{"name": f, "features": [f], "sensors": [], "cost": 1.0, "params": {}}
            for f in features]


def bundle_contents(est, X, features, targets, *, task, extractors=None, sensors=None,
                    created_by="sensorbudget", extra=None, x_range=None, n_samples=None,
                    decision=None):
    """(model.json dict, arrays) describing a fitted :class:`GreedyRLS`-like estimator.

    ``X`` (the training features) gives the selected columns' ranges and the row count; a fit
    whose X is not at hand (distributed) passes ``X=None`` with ``x_range`` = (min, max) of the
    selected columns and ``n_samples`` instead.

    ``extractors`` (list of {name, features, sensors, cost, params}) and ``sensors`` (list of
    {name, ...}) describe the device; ``extractors`` defaults to the estimator's own extractor
    structure (:func:`plan_extractors`; one unit-cost extractor per feature for a plain fit).
    ``path`` records per step: ``added`` (feature names), ``added_extractors``,
    ``added_sensors``, ``loo_mse``, ``loo_mse_per_target``, ``cost`` (cumulative unit price)
    and ``costs`` (cumulative totals of every kind; separate mode adds
    ``costs_mean_per_target``). ``costs`` at the top level breaks the final cost down by
    extractor and sensor and repeats the budgets. ``criterion`` ("loo" or "leave-group-out";
    the path's ``loo_mse`` values are that criterion's), ``n_groups`` (None for LOO) and
    ``target_rows`` (rows each target was fitted on: its non-missing rows) describe the fit.
    ``decision`` (multi-label) is the calibrated thresholds entry of
    :mod:`sensorbudget.trainer.bundle.decision` (:func:`sensorbudget.trainer.evaluation.calibration.decision_entry`).
    """
    features, targets = [str(f) for f in features], [str(t) for t in targets]
    sel = [int(i) for i in est.selected_]
    plan = getattr(est, "cost_plan_", None)
    rename = _extractor_renaming(est, plan, features)
    given = extractors is not None
    if not given:
        extractors = (unit_extractors(features) if plan is None
                      else plan_extractors(plan, features, rename))
    if plan is not None and (_fitted_with_costs(est) or not given):
        path, required, req_sensors = _path_from_estimator(est, features, rename)
    else:
        path, required, req_sensors = _path_from_extractors(est, features, extractors)
    units = None
    known = {e["name"] for e in extractors}
    if any(name not in known for name in required):
        # Selection units (channels, sensors) are not the device's extractors: list the
        # extractors that yield the selected features instead, and keep the units apart.
        units = required
        owner = {f: e["name"] for e in extractors for f in e["features"]}
        required = list(dict.fromkeys(owner[features[i]] for i in sel if features[i] in owner))
    if X is None:
        x_min, x_max = (np.asarray(v, dtype=np.float64) for v in x_range)
        n_rows = int(n_samples)
    else:
        Xs = np.asarray(X, dtype=np.float64)[:, sel]
        x_min, x_max, n_rows = Xs.min(axis=0), Xs.max(axis=0), int(Xs.shape[0])
    lam = np.atleast_1d(np.asarray(est.lam_, dtype=np.float64))
    meta = {
        "created_by": created_by, "task": task, "features": features, "targets": targets,
        "selected": [features[i] for i in sel], "selected_index": sel,
        "lam": float(np.median(lam)), "fit_intercept": bool(est.fit_intercept),
        "standardize": bool(est.standardize),
        "budget": None if est.budget is None else int(est.budget),
        "n_samples": n_rows, "path": path, "extractors": extractors,
        "sensors": [] if sensors is None else sensors,
        "required_extractors": required, "required_sensors": req_sensors,
        **_required_transforms(est, plan),
        "costs": _cost_breakdown(est, plan, rename, path),
        "criterion": str(getattr(est, "criterion_", "loo")),
        "n_groups": _number_or_none(getattr(est, "n_groups_", None)),
        "target_rows": [int(r) for r in getattr(est, "target_rows_",
                                                [n_rows] * len(targets))],
    }
    if lam.size > 1:
        meta["lam_per_target"] = lam.tolist()
    meta["lam_choice"] = lam_choice(est)
    if units is not None:
        meta["selection_units"] = units
    if decision is None and task == "multilabel":
        decision = getattr(est, "decision_", None)     # GreedyRLSClassifier's own thresholds
    if decision is not None:
        meta["decision"] = decision
    if getattr(est, "target_scale_", None) is not None:      # standardize_targets: folded in
        meta["target_scaling"] = target_scaling.bundle_entry(est.target_mean_, est.target_scale_)
    meta.update(extra or {})
    arrays = {"W": est.coef_, "b": est.intercept_, "x_mean": est.x_mean_[sel],
              "x_scale": est.x_scale_[sel], "x_min": x_min, "x_max": x_max,
              "loo_path": est.loo_path_}
    return meta, arrays


def _fitted_with_costs(est) -> bool:
    """The estimator was given an extractor structure or costs (else it is plain selection)."""
    return any(getattr(est, p, None) is not None for p in (
        "extractors", "extractor_costs", "extractor_sensors", "sensor_costs"))


def _extractor_renaming(est, plan, features) -> dict:
    """Estimator extractor names -> bundle names (a plain fit names extractors after columns)."""
    if plan is None or getattr(est, "extractors", None) is not None:
        return {}
    return dict(zip(plan.extractor_names, features))


def plan_extractors(plan, features, rename) -> list:
    """The bundle's extractor list from a fitted cost plan: features, sensors and costs."""
    yields = [[] for _ in plan.extractor_names]
    for i, need in enumerate(plan.needs):
        for e in need:
            yields[e].append(features[i])
    out = []
    for e, name in enumerate(plan.extractor_names):
        price, energy, time = (float(v) for v in plan.extractor_cost[e][:3])   # not ram
        out.append({"name": rename.get(name, name), "features": yields[e],
                    "sensors": [plan.sensor_names[s] for s in np.flatnonzero(plan.uses[e])],
                    "cost": price, "costs": {"price": price, "energy": energy, "time": time},
                    "params": {}})
        if getattr(plan, "transform_names", ()):
            out[-1]["transforms"] = plan.transforms_of([e])
    return out


def _path_from_estimator(est, features, rename):
    path, required, req_sensors = [], [], []
    for entry in est.path_:
        step = {"step": entry["step"], "added": [features[i] for i in entry["added"]],
                "added_extractors": [rename.get(e, e) for e in entry["added_extractors"]],
                "added_sensors": list(entry["added_sensors"]), "loo_mse": entry["loo_mse"],
                "loo_mse_per_target": list(entry["loo_mse_per_target"]),
                "cost": entry["costs"]["price"], "costs": dict(entry["costs"])}
        if "costs_mean_per_target" in entry:
            step["costs_mean_per_target"] = dict(entry["costs_mean_per_target"])
        required += step["added_extractors"]
        req_sensors += step["added_sensors"]
        path.append(step)
    return path, required, req_sensors


def _path_from_extractors(est, features, extractors):
    """Legacy path: one feature per step, costs summed from the given extractor list."""
    owner = {f: e for e in extractors for f in e["features"]}
    by_name = {e["name"]: e for e in extractors}
    required, req_sensors, path, cost = [], [], [], 0.0
    for step, i in enumerate(int(i) for i in est.selected_):
        ext, new_ext, new_sensors = owner.get(features[i]), [], []
        if ext is not None and ext["name"] not in required:
            required.append(ext["name"])
            new_ext.append(ext["name"])
            cost += float(ext.get("cost", 1.0))
            new_sensors = [s for s in by_name[ext["name"]].get("sensors", [])
                           if s not in req_sensors]
            req_sensors += new_sensors
        loo = float(est.loo_path_[step])
        path.append({"step": step + 1, "added": [features[i]], "added_extractors": new_ext,
                     "added_sensors": new_sensors, "loo_mse": loo,
                     "loo_mse_per_target": [loo] * len(np.atleast_1d(est.intercept_)),
                     "cost": cost, "costs": {"extractors": len(required),
                                             "sensors": len(req_sensors), "price": cost}})
    return path, required, req_sensors


def _cost_breakdown(est, plan, rename, path) -> dict:
    """Top-level ``costs``: final totals, per required extractor and sensor, and the budgets."""
    out = {"mode": getattr(est, "mode", "joint"), "total": dict(path[-1]["costs"]) if path else {},
           "budgets": {p: _number_or_none(getattr(est, p, None)) for p in (
               "budget", "max_sensors", "max_cost", "max_energy", "max_time")}}
    for memory in ("max_ram", "max_flash"):
        if getattr(est, memory, None) is not None:
            out["budgets"][memory] = _number_or_none(getattr(est, memory))
    if path and "costs_mean_per_target" in path[-1]:
        out["mean_per_target"] = dict(path[-1]["costs_mean_per_target"])
    if plan is None:
        return out
    index = {n: i for i, n in enumerate(plan.extractor_names)}
    kinds = ("price", "energy", "time")
    out["extractors"] = {rename.get(n, n): dict(zip(kinds, map(float,
                                                           plan.extractor_cost[index[n]])))
                         for n in est.selected_extractors_}
    sensor_index = {n: i for i, n in enumerate(plan.sensor_names)}
    out["sensors"] = {s: dict(zip(kinds, map(float, plan.sensor_cost[sensor_index[s]])))
                      for s in est.required_sensors_}
    t_index = {n: i for i, n in enumerate(getattr(plan, "transform_names", ()))}
    if t_index:
        out["transforms"] = {t: dict(zip(kinds, map(float, plan.transform_cost[t_index[t]])))
                             for t in _required_transforms(est, plan)["required_transforms"]}
    return out


def _required_transforms(est, plan) -> dict:
    """``{"required_transforms": [...]}`` when the plan has transforms (the cost model's level
    between sensors and extractors: computed once per window), else ``{}``."""
    if plan is None or not getattr(plan, "transform_names", ()):
        return {}
    index = {n: i for i, n in enumerate(plan.extractor_names)}
    chosen = [index[n] for n in getattr(est, "selected_extractors_", []) if n in index]
    return {"required_transforms": plan.transforms_of(chosen)}


def _number_or_none(value):
    if value is None:
        return None
    return int(value) if float(value).is_integer() else float(value)
