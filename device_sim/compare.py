"""Side-by-side cost/accuracy table of two simulation reports (or bundles).

A bundle directory stands for its own cost estimate: its required sensors (price, energy per
prediction), an op-count estimate of the compute on the registry's default board, and the LOO
error of its selection path; prediction counts and device accuracy are then blank.
"""

from __future__ import annotations

from pathlib import Path

from sensorbudget.firmware_gen.boards import DEFAULT_BOARD
from sensorbudget.trainer.bundle.model import load_bundle
from sensorbudget.trainer.target_scaling import path_in_target_units

from .costs import PROFILES, energy_budget, estimate_costs, sensor_costs, stats3
from .errors import DeviceError
from .multirate import make_model
from .report import REPORT_FILE, _price, load_report
from .report_text import arithmetic
from .simulate import DEFAULT_BATTERY_WH


def bundle_summary(path, profile: str = DEFAULT_BOARD, battery_wh=DEFAULT_BATTERY_WH) -> dict:
    """A report-like dictionary of a bundle's estimated costs (no replay)."""
    bundle = load_bundle(path)
    meta = bundle.meta
    model = make_model(bundle)
    prof = PROFILES[profile]
    est = estimate_costs(model, prof)
    ext = sum(est["extractors"].values()) + sum(est["transforms"].values())   # FFTs once each
    mod, push = est["model"], sum(est["pushes"].values())
    first = sum(est["first_pushes"].values()) + ext
    sensors = sensor_costs(meta)
    energy = energy_budget(compute_units=[push + ext + mod], unit=prof.unit, profile=prof,
                           sensors=sensors, period_s=model.period_s, battery_wh=battery_wh,
                           sample_period_s=1.0 / model.sample_rate)
    loo = path_in_target_units(meta)[-1]["loo_mse"] if meta.get("path") else None
    return {"backend": "bundle (estimate)", "numeric": "float32",
            "bundle": {"path": str(path), "selected": meta["selected"],
                       "required_sensors": meta.get("required_sensors", []),
                       "price": _price(meta)},
            "cost": {"unit": prof.unit, "measured": False, "pushes": stats3([push]),
                     "extractors": stats3([ext]), "model": stats3([mod]),
                     "total": stats3([push + ext + mod]), "first_window": stats3([first]),
                     "predictions": "a steady prediction (op-count estimate)"},
            "energy": energy, "sensors": sensors, "loo_mse": loo, "profile": prof.as_dict()}


def load_side(path) -> dict:
    """A report (directory or report.json) or a bundle directory."""
    path = Path(path)
    if path.is_file() or (path / REPORT_FILE).is_file():
        return load_report(path)
    if (path / "model.json").is_file():
        return bundle_summary(path)
    raise DeviceError(f"{str(path)!r} is neither a simulation report nor a bundle directory")


def _acc(report: dict, who: str):
    acc = ((report.get("accuracy") or {}).get(who)) or {}
    for key in ("hamming_accuracy", "accuracy", "rmse"):   # multi-label: Hamming, as before
        value = acc.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return f"{key} {value:.4g}" + _data_kind(acc.get("data"))
    return None


def _data_kind(said) -> str:
    """simulate's word on the replayed recordings (report.json accuracy entries' ``data``),
    short: in-sample, test split, or either when the bundle could not tell."""
    if not isinstance(said, str):
        return ""
    return (" (in-sample)" if said.startswith("in-sample:") else
            " (test split)" if said.startswith("a test split") else " (in-sample or test split)")


def _med(section):
    return None if not section else section.get("median")


def compare_rows(a: dict, b: dict) -> list:
    """[(metric, value A, value B)] for two report dictionaries."""
    def both(fn):
        return fn(a), fn(b)

    rows = [
        ("backend", *both(lambda r: f"{r['backend']} ({arithmetic(r)})")),
        ("features", *both(lambda r: len(r["bundle"]["selected"]))),
        ("sensors", *both(lambda r: ", ".join(r["bundle"].get("required_sensors") or []))),
        ("sensor price", *both(lambda r: r["bundle"].get("price"))),
        *_rate_rows(a, b),
        ("predictions", *both(lambda r: r.get("predictions"))),
        ("mismatches", *both(lambda r: r.get("mismatches"))),
        ("lost", *both(lambda r: r.get("lost"))),
        ("accuracy (device, replayed recordings)", *both(lambda r: _acc(r, "device"))),
        ("accuracy (reference, replayed recordings)",
         *both(lambda r: _acc(r, "reference"))),
        ("LOO MSE (training rows, in-sample)", *both(lambda r: r.get("loo_mse"))),
        ("compute unit", *both(lambda r: r["cost"]["unit"] + (
            "" if r["cost"]["measured"] else " (estimated)"))),
        *_compute_rows(a, b),
        ("sensor energy / prediction (J)",
         *both(lambda r: r["energy"]["energy_per_prediction_j"]["sensors"])),
        ("compute energy / prediction (J)",
         *both(lambda r: r["energy"]["energy_per_prediction_j"]["compute"])),
        ("latency median (s)", *both(lambda r: _med(r["energy"].get("latency_s")))),
        ("deadline misses", *both(lambda r: r["energy"]["deadline_misses"])),
        ("average power (W)", *both(lambda r: r["energy"]["average_power_w"])),
        ("battery life (days)", *both(lambda r: r["energy"].get("battery_life_days"))),
    ]
    return rows


def _rates(report: dict) -> str | None:
    """Each sensor at the rate it is paid at (multi-rate: report or bundle ``sensors``)."""
    per = ((report.get("sensors") or {}).get("per_sensor")) or {}
    rated = [f"{n} {v['rate_hz']:g} Hz" for n, v in per.items()
             if isinstance(v, dict) and isinstance(v.get("rate_hz"), (int, float))]
    return ", ".join(rated) or None


def _rate_rows(a: dict, b: dict) -> list:
    """The sensors' rates, when either side's sensors run at their own rates (issue 30)."""
    ra, rb = _rates(a), _rates(b)
    return [] if ra is None and rb is None else [("sensor rates (paid at)", ra, rb)]


#: compute rows: (label, report.json cost part), medians of steady predictions but the first
#: window (each segment's first prediction)
COMPUTE_ROWS = (("pushes / prediction (new samples stored)", "pushes"),
                ("window pass / prediction (extractors)", "extractors"),
                ("model / prediction", "model"),
                ("total / prediction (pushes + window pass + model)", "total"),
                ("first window (pushes of a whole window + window pass)", "first_window"))


def _compute_rows(a: dict, b: dict) -> list:
    """Pushes, window pass, model, total and first-window cost per prediction (medians;
    a report of an image that does not measure the pushes says so). In different units
    (instructions on one backend, cycles on the other) the values carry their unit and get
    no ratio."""
    units = a["cost"]["unit"], b["cost"]["unit"]
    rows = []
    for label, part in COMPUTE_ROWS:
        va, vb = (_med(r["cost"].get(part)) for r in (a, b))
        if units[0] != units[1]:
            label += " (different units: no ratio)"
            va, vb = (None if v is None else f"{v:.4g} {u}" for v, u in zip((va, vb), units))
        va, vb = (_unmeasured(r, part) if v is None else v for v, r in zip((va, vb), (a, b)))
        rows.append((label, va, vb))
    return rows


def _unmeasured(report: dict, part: str):
    """What a side shows for a part it has no figure of: "not measured (image built
    before ...)" for the pushes of an old image's report, else None (a blank cell)."""
    if part in ("pushes", "first_window") and report["cost"].get("pushes_note"):
        return "not measured (image built before the firmware timed its pushes)"
    if part in ("pushes", "first_window") and "total" in report["cost"] and part not in \
            report["cost"]:
        return "not in this report (written before pushes were reported)"
    return None


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def format_table(rows: list, names=("A", "B"), markdown: bool = False) -> str:
    """The rows as a Markdown table or aligned plain text, with a B/A ratio for numbers."""
    head = ["metric", *names, "B/A"]
    body = []
    for metric, va, vb in rows:
        ratio = (f"{vb / va:.3g}x" if isinstance(va, (int, float)) and isinstance(vb, (int, float))
                 and not isinstance(va, bool) and va not in (0, 0.0) else "")
        body.append([metric, _cell(va), _cell(vb), ratio])
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join(fmt.format(*r).rstrip() for r in [head, *body])
