"""The model bundle: ``model.json`` + ``weights.npz``, the contract every other package reads.

``weights.npz`` holds ``W`` (k x t) and ``b`` (t,) in original feature units, so a prediction is
``X[:, selected_index] @ W + b`` (multi-label: label on when > 0; multi-class: argmax), plus the
training statistics of the selected features ``x_mean``, ``x_scale``, ``x_min``, ``x_max`` (k,)
and ``loo_path`` (k,). Both files are written deterministically (fixed zip timestamps, sorted
JSON) into a temporary directory that is renamed into place, so a bundle is whole or absent.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import BundleError, BundleWarning
from ..selection.lam_search import lam_choice
from .files import json_text, npz_bytes, write_folder_atomically
from .schema import STRICT_JSON, check_meta_types

FORMAT = "sensorbudget-bundle"
FORMAT_VERSION = 2
#: Versions this code reads: 1 (model.json not covered by a hash) and 2 (content_sha256).
READABLE_VERSIONS = (1, 2)
MODEL_FILE = "model.json"
WEIGHTS_FILE = "weights.npz"
TASKS = ("regression", "multilabel", "multiclass")
REQUIRED_KEYS = (
    "format", "format_version", "created_by", "task", "features", "targets", "selected",
    "selected_index", "lam", "fit_intercept", "standardize", "path", "extractors", "sensors",
    "required_extractors", "required_sensors", "weights_sha256",
)
CONTENT_KEY = "content_sha256"
REQUIRED_ARRAYS = ("W", "b", "x_mean", "x_scale", "x_min", "x_max", "loo_path")


def save_bundle(path, meta: dict, arrays: dict) -> dict:
    """Validate and write a bundle; returns the final ``model.json`` dict (with the hash)."""
    blob = npz_bytes(arrays)
    meta = dict(meta, format=FORMAT, format_version=FORMAT_VERSION,
                weights_sha256=hashlib.sha256(blob).hexdigest())
    meta.pop(CONTENT_KEY, None)
    meta[CONTENT_KEY] = content_sha256(meta)
    check_bundle(meta, arrays)
    write_folder_atomically(Path(path), {MODEL_FILE: json_text(meta).encode(), WEIGHTS_FILE: blob},
                            replaceable={MODEL_FILE, WEIGHTS_FILE}, what="a bundle",
                            error=BundleError)
    return meta


def content_sha256(meta: dict) -> str:
    """sha256 of the canonical ``model.json`` text without its ``content_sha256`` entry. As
    ``model.json`` holds ``weights_sha256``, this one hash covers both files of the bundle."""
    return hashlib.sha256(json_text({k: v for k, v in meta.items() if k != CONTENT_KEY})
                          .encode()).hexdigest()


@dataclass
class Bundle:
    """A loaded, verified bundle: ``meta`` (model.json) and ``arrays`` (weights.npz)."""

    meta: dict
    arrays: dict

    @property
    def W(self) -> np.ndarray:
        return self.arrays["W"]

    @property
    def protected(self) -> bool:
        """Both files are covered by a hash (format version 2 and later)."""
        return self.meta.get("format_version") != 1

    @property
    def b(self) -> np.ndarray:
        return self.arrays["b"]

    @property
    def selected_index(self) -> np.ndarray:
        return np.asarray(self.meta["selected_index"], dtype=np.intp)

    @property
    def task(self) -> str:
        return self.meta["task"]

    def bundle_sha256(self) -> str:
        """Hash of the whole bundle: sha256 over canonical model.json (it holds the weights
        hash)."""
        return hashlib.sha256(json_text(self.meta).encode()).hexdigest()

    def decision_scores(self, X) -> np.ndarray:
        """Scores ``X[:, selected_index] @ W + b`` from the full candidate matrix, in the
        reference order every exporter reproduces: ``acc = b``, then for each selected feature
        i in selection order ``acc = acc + X[:, s_i] * W[i]`` (separately rounded products
        and sums, no fused multiply-add)."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != len(self.meta["features"]):
            raise BundleError(f"X has shape {X.shape}; the bundle expects "
                              f"{len(self.meta['features'])} feature columns")
        acc = np.broadcast_to(self.b, (X.shape[0], self.b.size)).copy()
        for i, column in enumerate(self.selected_index):
            acc += X[:, column, None] * self.W[i]
        return acc

    def predict(self, X) -> np.ndarray:
        """Predictions: scores (regression), 0/1 labels (multi-label) or class index (multi-class)."""
        scores = self.decision_scores(X)
        if self.task == "multilabel":
            return (scores > 0).astype(int)
        if self.task == "multiclass":
            return np.argmax(scores, axis=1)
        return scores


def _read_pair(path: Path) -> tuple:
    """(model.json bytes, weights.npz bytes) of one and the same bundle folder.

    Both are read through one open handle of the folder, so a bundle replaced meanwhile (a
    folder exchanged by :func:`~trainer.bundle.files.write_folder_atomically`) gives the old
    pair or the new one, never a mix; when the folder is replaced during the read, it is read
    again (up to three times)."""
    for _ in range(3):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        except (FileNotFoundError, NotADirectoryError):
            raise BundleError(f"{str(path)!r} is not a bundle directory") from None
        try:
            before = os.fstat(fd).st_ino
            return tuple(_read_at(fd, name) for name in (MODEL_FILE, WEIGHTS_FILE))
        except FileNotFoundError as exc:
            missing = path / exc.filename
            try:
                swapped = os.stat(path).st_ino != before
            except FileNotFoundError:
                swapped = True
            if not swapped:
                raise BundleError(f"{str(missing)!r} is missing; {str(path)!r} is not a bundle "
                                  f"directory") from None
        finally:
            os.close(fd)
    raise BundleError(f"{str(path)!r} kept changing while being read; try again")


def _read_at(dir_fd: int, name: str) -> bytes:
    try:
        fd = os.open(name, os.O_RDONLY, dir_fd=dir_fd)
    except FileNotFoundError as exc:
        exc.filename = name
        raise
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise BundleError(f"{name!r} in the bundle is not a regular file")
        return fh.read()


def load_bundle(path) -> Bundle:
    """Read and verify a bundle directory (format, version, hash, shapes)."""
    path = Path(path)
    mfile, wfile = path / MODEL_FILE, path / WEIGHTS_FILE
    text, blob = _read_pair(path)
    try:
        meta = json.loads(text.decode("utf-8"), **STRICT_JSON)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise BundleError(f"{str(mfile)!r} is not valid JSON: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise BundleError(f"{str(mfile)!r} is not a {FORMAT} (format="
                          f"{meta.get('format') if isinstance(meta, dict) else None!r})")
    version = meta.get("format_version")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise BundleError(f"bundle format_version={version!r} is not supported (this "
                          f"sensorbudget reads versions {', '.join(map(str, READABLE_VERSIONS))})")
    if version == 1:
        warnings.warn(f"{str(path)!r} is a format-1 bundle: its model.json is not covered by a "
                      f"hash, so edits to it go unnoticed; train again to protect it",
                      BundleWarning, stacklevel=2)
    elif meta.get(CONTENT_KEY) != content_sha256(meta):
        raise BundleError(f"{str(mfile)!r} does not match its content_sha256: the bundle was "
                          f"changed after it was written (tampered?)")
    digest = hashlib.sha256(blob).hexdigest()
    if digest != meta.get("weights_sha256"):
        raise BundleError(f"{str(wfile)!r} sha256 {digest[:12]}... does not match model.json "
                          f"weights_sha256 {str(meta.get('weights_sha256'))[:12]}... (tampered?)")
    try:
        with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, MemoryError) as exc:
        raise BundleError(f"{str(wfile)!r} is not a readable npz: {exc}") from None
    check_bundle(meta, arrays)
    return Bundle(meta=meta, arrays=arrays)


def check_bundle(meta: dict, arrays: dict) -> None:
    """Consistency of model.json with weights.npz; raises :class:`BundleError`."""
    missing = [k for k in REQUIRED_KEYS if k not in meta]
    if missing:
        raise BundleError(f"model.json lacks the key {missing[0]!r}")
    check_meta_types(meta)
    if meta["task"] not in TASKS:
        raise BundleError(f"task={meta['task']!r} is not one of {TASKS}")
    lacking = [k for k in REQUIRED_ARRAYS if k not in arrays]
    if lacking:
        raise BundleError(f"weights.npz lacks the array {lacking[0]!r}")
    odd = [n for n in REQUIRED_ARRAYS
           if np.asarray(arrays[n]).dtype not in (np.float32, np.float64)]
    if odd:
        raise BundleError(f"weights.npz array {odd[0]!r} has dtype "
                          f"{np.asarray(arrays[odd[0]]).dtype}; expected float32 or float64")
    features, sel = meta["features"], meta["selected_index"]
    k, t = len(sel), len(meta["targets"])
    W, b = arrays["W"], arrays["b"]
    if W.shape != (k, t) or b.shape != (t,):
        raise BundleError(f"W has shape {W.shape} and b {b.shape}; model.json says k={k}, t={t}")
    if not all(isinstance(i, int) and 0 <= i < len(features) for i in sel):
        raise BundleError(f"selected_index {sel} is out of range 0..{len(features) - 1}")
    if [features[i] for i in sel] != meta["selected"]:
        raise BundleError("model.json 'selected' does not match features[selected_index]")
    for name in REQUIRED_ARRAYS[2:]:
        if arrays[name].shape != (k,):
            raise BundleError(f"{name} has shape {arrays[name].shape}; expected ({k},)")
    bad = [n for n in REQUIRED_ARRAYS if not np.isfinite(arrays[n]).all()]
    if bad:
        raise BundleError(f"weights.npz holds NaN or inf values in {bad[0]!r}")


def unit_extractors(features) -> list:
    """Default structure before costs: every feature is its own extractor of unit cost, no sensors."""
    return [{"name": f, "features": [f], "sensors": [], "cost": 1.0, "params": {}}
            for f in features]


def bundle_contents(est, X, features, targets, *, task, extractors=None, sensors=None,
                    created_by="sensorbudget", extra=None, x_range=None, n_samples=None):
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
        price, energy, time = (float(v) for v in plan.extractor_cost[e])
        out.append({"name": rename.get(name, name), "features": yields[e],
                    "sensors": [plan.sensor_names[s] for s in np.flatnonzero(plan.uses[e])],
                    "cost": price, "costs": {"price": price, "energy": energy, "time": time},
                    "params": {}})
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
    return out


def _number_or_none(value):
    if value is None:
        return None
    return int(value) if float(value).is_integer() else float(value)
