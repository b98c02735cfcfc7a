"""The simulation report: ``report.json``, ``summary.md`` and PNG plots in one directory.

``report.json`` (format ``sensorbudget-sim-report`` version 1) holds at least:

- ``backend``, ``numeric``, ``bundle`` (path, sha256, selected features, required sensors);
- ``predictions`` (reference windows), ``delivered``, ``retried``, ``lost``, ``mismatches``
  (device predictions that are not bit-identical to the reference), ``unexpected``;
- ``decision_mismatches``: for a multi-label bundle with calibrated thresholds, the windows
  whose device decisions (scores > the bundle's thresholds) differ from the reference's
  (``decisions``: rule, windows, mismatches, label_mismatches; both null otherwise,
  :func:`sensorbudget.device_sim.replay.decision_agreement`);
- ``cost``: ``unit`` (instructions, cycles, nanoseconds), ``measured`` (bool) and ``method``,
  per-prediction statistics (min, median, max, mean, n) over the steady predictions (after the
  first of each segment; ``predictions`` says which): ``pushes`` (storing the new samples in
  the window's ring buffer; null with ``pushes_note`` saying why when the image does not
  measure them), ``extractors`` (the window pass), ``model`` and ``total`` = pushes +
  extractors + model (what energy, time, duty cycle and battery life are priced on);
  ``first_window`` (pushes + window pass of each segment's first prediction: a whole window
  stored); ``per_extractor`` (one window, per feature's extractor), ``per_transform`` (each
  shared transform, e.g. a channel's FFT ``acc_x.fft`` or its jerk ``acc_x.jerk``, paid once
  per window), ``per_channel_push`` (each channel's pushes per steady prediction),
  ``per_extractor_push`` (those split equally over the extractors reading each channel:
  :func:`~sensorbudget.device_sim.costs.push_shares`) and
  ``bench`` averages; the same statistics are repeated under the unit's name
  (``"instructions"`` or ``"cycles"``);
- ``profile`` (target clock and power with sources), ``sensors`` (energy and read time per
  prediction: :func:`sensorbudget.trainer.sensing.sensor_budget.per_prediction`, min(window,
  hop) readings, the selection budgets' definition), ``energy`` (latency, deadline misses,
  duty cycle, average power, battery life);
- ``accuracy`` of the device and of the reference against the recordings' targets (when the
  recordings carry them): regression RMSE and MAE; classification the measures of
  :func:`sensorbudget.trainer.evaluation.metrics.task_scores` on the decisions of the one rule
  (``decisions`` says which; multi-class also ``confusion`` and ``classes``), ``data`` (in-sample
  or a test split) and ``n``; and ``link`` counters;
- ``series``: per prediction in replay order, the recording, the window's end time, the
  device's output, the recordings' ground truth and the measured compute cost
  (:func:`series`; what the HTML report plots).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from sensorbudget.trainer.bundle.files import json_default, write_folder_atomically
from sensorbudget.trainer.provenance import same_data
from sensorbudget.trainer.target_scaling import path_in_target_units

from .costs import (
    PROFILES,
    energy_budget,
    estimate_costs,
    push_shares,
    sensor_costs,
    stats3,
)
from .errors import DeviceError
from .replay import compute_of, decision_agreement
from .report_schema import check_report
from .report_text import _breakdown, accuracy_text, stack_line, summary_markdown  # noqa: F401

FORMAT = "sensorbudget-sim-report"
FORMAT_VERSION = 1
REPORT_FILE = "report.json"
SUMMARY_FILE = "summary.md"
KIND = "simulation report"         # the kind its folder's manifest names


def ground_truth(rec, meta: dict, end_sample: int):
    """Target vector of the window ending at ``end_sample`` of ``rec`` (None if unknown)."""
    out = []
    for t in meta["targets"]:
        if t in rec.columns:
            out.append(float(rec.columns[t][end_sample]))
        elif "=" in t and t.split("=", 1)[0] in rec.labels:
            key, value = t.split("=", 1)
            out.append(float(str(rec.labels[key]) == value))
        elif t in rec.labels:
            out.append(float(rec.labels[t]))
        elif len(rec.labels) == 1 and isinstance(next(iter(rec.labels.values())), str):
            out.append(float(next(iter(rec.labels.values())) == t))
        else:
            return None
    return np.array(out)


def _accuracy(model, task: str, scores: list, truth: list) -> dict | None:
    """The measures of :func:`sensorbudget.trainer.evaluation.metrics.task_scores` on the
    answered windows with a known target; decisions by
    :meth:`~sensorbudget.device_sim.reference.Reference.labels` (the one rule, the bundle's
    thresholds in the scores' units: what the device's ``decide`` gives)."""
    from sensorbudget.trainer.bundle.decision import describe
    from sensorbudget.trainer.evaluation.metrics import task_scores

    pairs = [(s, y) for s, y in zip(scores, truth) if s is not None and y is not None
             and not np.isnan(y).any()]
    if not pairs:
        return None
    raw = np.array([np.asarray(p[0]).reshape(-1) for p in pairs])
    S, Y = model.real_scores(raw), np.array([p[1] for p in pairs])
    if task == "regression":
        rmse = np.sqrt(np.mean((S - Y) ** 2, axis=0))
        return {"rmse": float(rmse.mean()), "rmse_per_target": rmse.tolist(),
                "mae": float(np.mean(np.abs(S - Y))), "n": len(pairs)}
    values = task_scores(task, Y > 0.5, S, model.labels(raw))
    out = {"decisions": describe(model.meta), **values, "n": len(pairs)}
    if task == "multilabel":
        out["hamming_accuracy"] = 1.0 - values["hamming_loss"]
    else:
        out["classes"] = list(model.meta.get("classes") or model.meta["targets"])
    return out


def accuracy(result, model, recordings) -> dict:
    """Accuracy of the device's and the reference's predictions against the targets."""
    by_name = {r.name: r for r in recordings.recordings}
    truth = [ground_truth(by_name[r.recording], model.meta, r.end_sample)
             for r in result.records]
    task = model.meta["task"]
    return {"device": _accuracy(model, task, [r.scores for r in result.records], truth),
            "reference": _accuracy(model, task, [r.reference for r in result.records], truth)}


def _g9(v):
    """A float32-precision number to 9 significant digits (exact for float32; short JSON)."""
    return None if v is None or not np.isfinite(v) else float(f"{float(v):.9g}")


def _exact(v):
    return None if v is None or not np.isfinite(v) else float(v)


def series(result, model, recordings) -> dict:
    """Per prediction, in replay order: ``recording`` (index into ``recordings``), ``time_s``
    (end of the window in its recording), ``device`` and ``truth`` (one list per output:
    the targets' values for regression, 0/1 per label, the class index for multiclass; null
    where the prediction was lost or the recordings carry no target) and ``cost`` (pushes +
    extractors + model in the cost unit: :func:`compute_of`; null where not measured) and
    ``first`` (true for the first prediction of a segment, which stores a whole window)."""
    recs, task = result.records, model.meta["task"]
    outputs = ["class"] if task == "multiclass" else [str(t) for t in model.meta["targets"]]
    names = list(dict.fromkeys(r.recording for r in recs))
    index = {name: i for i, name in enumerate(names)}
    by_name = {r.name: r for r in recordings.recordings}
    device = [[None] * len(recs) for _ in outputs]
    truth = [[None] * len(recs) for _ in outputs]
    got = [i for i, r in enumerate(recs) if r.scores is not None]
    if got:
        out = np.asarray(model.labels(np.array([recs[i].scores for i in got])), dtype=float)
        out = out.reshape(len(got), -1)
        for k, i in enumerate(got):
            for j in range(len(outputs)):
                device[j][i] = _g9(out[k, j])
    for i, r in enumerate(recs):
        y = ground_truth(by_name[r.recording], model.meta, r.end_sample)
        if y is None or np.isnan(y).any():
            continue
        y = [float(np.argmax(y))] if task == "multiclass" else y
        for j in range(len(outputs)):
            truth[j][i] = _exact(y[j])
    return {"outputs": outputs, "recordings": names,
            "recording": [index[r.recording] for r in recs],
            "time_s": [_exact(r.end_sample / model.sample_rate if r.end_time_s is None
                              else r.end_time_s) for r in recs],
            "device": device, "truth": truth,
            "cost": [None if r.extractors is None else _g9(compute_of(r)) for r in recs],
            "first": [r.window == 0 for r in recs]}


#: what report.json says instead of a number when STATS did not carry the pushes
PUSHES_NOT_MEASURED = ("pushes not measured (image built before the firmware timed its pushes: "
                       "its STATS answer has no pushes); total = window pass + model")


def steady(records) -> tuple:
    """(the predictions after the first of each segment, what they are): what a running device
    pays per prediction; every prediction when no segment has a second."""
    later = [r for r in records if r.window > 0]
    if later:
        return later, f"the {len(later)} predictions after the first of each segment"
    return list(records), f"all {len(records)} predictions (no segment has a second)"


def _measured_parts(recs) -> dict:
    """pushes, extractors, model, total (steady predictions) and first_window (pushes +
    extractors of each segment's first prediction) statistics of answered STATS."""
    later, which = steady(recs)
    known = all(r.pushes is not None for r in recs)
    firsts = [r for r in recs if r.window == 0]
    return {"pushes": stats3(r.pushes for r in later) if known else None,
            "extractors": stats3(r.extractors for r in later),
            "model": stats3(r.model for r in later),
            "total": stats3(compute_of(r) for r in later),
            "first_window": (stats3(r.pushes + r.extractors for r in firsts)
                             if known and firsts else None),
            "predictions": which, "pushes_note": None if known else PUSHES_NOT_MEASURED}


def _estimated_parts(est) -> dict:
    """The same statistics of the op-count estimate (one value each)."""
    e = sum(est["extractors"].values()) + sum(est["transforms"].values())
    p, f = sum(est["pushes"].values()), sum(est["first_pushes"].values())
    return {"pushes": stats3([p]), "extractors": stats3([e]), "model": stats3([est["model"]]),
            "total": stats3([p + e + est["model"]]), "first_window": stats3([f + e]),
            "predictions": "a steady prediction (op-count estimate)", "pushes_note": None}


def cost_section(result, backend, model) -> dict:
    """Per-prediction compute statistics (measured or estimated): ``pushes`` (storing the new
    samples), ``extractors`` (the window pass), ``model`` and ``total`` (their sum) over the
    steady predictions (:func:`steady`), ``first_window`` (pushes + window pass of each
    segment's first prediction, which stores a whole window), per-extractor and per-channel
    push costs."""
    prof = PROFILES[backend.profile]
    est = estimate_costs(model, prof)
    recs = [r for r in result.records if r.extractors is not None]
    measured = bool(backend.measured and recs)
    est_tr = est.get("transforms", {})
    parts = _measured_parts(recs) if recs else _estimated_parts(est)
    unit = (result.cost_unit or prof.unit) if recs else prof.unit
    method = (getattr(backend, "cost_method", "measured on the backend") if measured
              else f"estimated (op-count model, {prof.name} profile)")
    per, per_method = backend.per_extractor(), getattr(backend, "per_extractor_method", "")
    per_transform, per_push = dict(est_tr), dict(est["pushes"])
    ext = parts["extractors"]
    if per is None and measured:
        share = (sum(est["extractors"].values()) + sum(est_tr.values())) or 1.0
        per = {k: ext["median"] * v / share for k, v in est["extractors"].items()}
        per_transform = {k: ext["median"] * v / share for k, v in est_tr.items()}
        per_method = ("apportioned: measured extractor total split by the op-count model "
                      "(transforms, such as a channel's FFT, once each)")
    elif per is None:
        per, per_method = dict(est["extractors"]), "estimated (op-count model)"
    if parts["pushes"] is not None:     # the reported pushes, split per channel by the model
        share = sum(est["pushes"].values()) or 1.0
        per_push = {k: parts["pushes"]["median"] * v / share for k, v in est["pushes"].items()}
    else:                               # STATS without pushes: nothing to split
        per_push = None
    return {"unit": unit, "measured": measured, "method": method, **parts,
            "per_extractor": per, "per_transform": per_transform, "per_channel_push": per_push,
            "per_extractor_push": None if per_push is None else push_shares(model, per_push),
            "per_extractor_method": per_method, "per_extractor_measured": measured,
            "bench": result.bench}


def build_report(result, backend, model, recordings, *, bundle_path, recordings_path,
                 battery_wh: float, stack: dict | None = None) -> dict:
    """The report.json dictionary of one replay; ``stack`` is the firmware's measured stack
    (:func:`sensorbudget.firmware_gen.build.record_stack`; None: the backend runs no image)."""
    meta = model.meta
    cost = cost_section(result, backend, model)
    profile = PROFILES[backend.profile]
    sensors = sensor_costs(meta)
    totals = [compute_of(r) for r in
              steady([r for r in result.records if r.extractors is not None])[0]]
    if not totals and cost["total"]:
        totals = [cost["total"]["median"]]
    energy = energy_budget(compute_units=totals, unit=cost["unit"], profile=profile,
                           sensors=sensors, period_s=model.period_s, battery_wh=battery_wh,
                           sample_period_s=1.0 / model.sample_rate)
    energy["estimated"] = (not cost["measured"]) or profile.estimated_power
    decisions = decision_agreement(result, model)
    report = {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "backend": result.backend, "numeric": result.numeric,
        "board": {"costed": profile.name, "image": getattr(backend, "target", None)},
        "bundle": {"path": None if bundle_path is None else str(bundle_path),
                   "sha256": meta.get("weights_sha256"),
                   "task": meta["task"], "targets": list(meta["targets"]),
                   "selected": list(meta["selected"]),
                   "required_sensors": list(meta.get("required_sensors", [])),
                   "required_extractors": list(meta.get("required_extractors", [])),
                   "channels": list(model.channels), "window": model.window, "hop": model.hop,
                   "sample_rate_hz": model.sample_rate, "price": _price(meta)},
        "recordings": str(recordings_path),
        "loo_mse": path_in_target_units(meta)[-1]["loo_mse"] if meta.get("path") else None,
        "predictions": len(result.records), "delivered": result.count("delivered"),
        "retried": result.count("retried"), "lost": result.count("lost"),
        "mismatches": result.mismatches, "unexpected": result.unexpected,
        "decision_mismatches": None if decisions is None else decisions["mismatches"],
        "decisions": decisions,
        "segments": result.segments, "samples_sent": result.samples_sent,
        "recoveries": result.recoveries, "late_samples": result.late_samples,
        "round_trip_s": stats3(r.round_trip_s for r in result.records),
        "cost": cost, cost["unit"]: {k: cost[k] for k in ("pushes", "extractors", "model",
                                                          "total", "first_window", "measured")},
        "profile": profile.as_dict(), "sensors": sensors, "energy": energy,
        "accuracy": _with_kind(accuracy(result, model, recordings), meta, recordings_path),
        "link": result.link,
        "series": series(result, model, recordings),
        "stack": stack_section(stack, result.backend),
    }
    if getattr(model, "multi_rate", False):        # single-rate reports keep their keys
        from .multirate import rates_section
        report["rates"] = rates_section(model, sensors)
    plan = getattr(model, "plan", None)
    if getattr(plan, "fft", "float32") != "float32":     # the opt-in Q15 FFT (fft_c.check_fft)
        report["fft"] = plan.fft
    return report


def stack_section(stack: dict | None, backend: str) -> dict:
    """report.json's ``stack``: the high-water mark measured on the emulator (bytes or None),
    the board's stack reserve, and how it was measured or why it was not."""
    s = stack or {"stack_high_water": None, "stack_reserve": None,
                  "stack_measured": f"not measured: backend {backend} runs no firmware image"}
    return {"high_water_bytes": s["stack_high_water"], "reserve_bytes": s["stack_reserve"],
            "measured": s["stack_measured"]}


def _with_kind(acc: dict, meta: dict, recordings_path) -> dict:
    """Each accuracy entry says what it measures: in-sample when the replayed recordings are
    the bundle's training recordings (the same bytes,
    :func:`sensorbudget.trainer.provenance.same_data`), else a test split if none were trained
    on."""
    same = same_data(meta.get("data"), recordings_path)
    replayed = Path(str(recordings_path)).name
    kind = (f"in-sample: {replayed} is what the bundle was trained on, so optimistic" if same
            else "a test split if none of these recordings were trained on" if same is False
            else f"in-sample if {replayed} holds the bundle's training recordings (optimistic "
                 f"then), else a test split: the bundle records no digest to tell")
    return {k: None if v is None else {**v, "data": kind} for k, v in acc.items()}


def _price(meta: dict) -> float:
    by_name = {s["name"]: s for s in meta.get("sensors", []) if isinstance(s, dict)}
    return float(sum(by_name.get(n, {}).get("unit_price", 0.0)
                     for n in meta.get("required_sensors", [])))


def write_report(out_dir, report: dict, result=None, model=None) -> Path:
    """Write report.json, summary.md and (with matplotlib) the plots as the folder ``out_dir``,
    all or nothing (:func:`sensorbudget.trainer.bundle.files.write_folder_atomically`);
    returns it."""
    files = {REPORT_FILE: (json.dumps(report, indent=2, sort_keys=True, default=json_default)
                           + "\n").encode(),
             SUMMARY_FILE: summary_markdown(report).encode()}

    def plots(folder):
        try:
            from .plots import write_plots  # matplotlib: optional (sensorbudget[plot])
        except ImportError:
            return
        write_plots(folder, report, result, model)

    write_folder_atomically(out_dir, files, kind=KIND,
                            then=None if result is None else plots)
    return Path(out_dir)


def load_report(path) -> dict:
    """A report.json (or a directory holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / REPORT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:   # bad JSON, not UTF-8, too deep
        raise DeviceError(f"{str(path)!r} is not a readable simulation report: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = (f"format={data.get('format')!r}" if isinstance(data, dict)
                 else f"a JSON {type(data).__name__}, not an object")
        raise DeviceError(f"{str(path)!r} is not a {FORMAT} ({found})")
    check_report(data, repr(str(path)))
    return data
