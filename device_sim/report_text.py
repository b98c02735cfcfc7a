"""The simulation report as text: summary.md (:func:`summary_markdown`) and the lines the command
prints (:func:`accuracy_text`, :func:`stack_line`), read off a report.json dictionary
(:mod:`sensorbudget.device_sim.report`)."""

from __future__ import annotations


def arithmetic(report: dict) -> str:
    """The replay's arithmetic as the printed line, summary.md and ``compare`` name it: the
    numeric format, and the Q15 FFT when the firmware's spectra came from it (``--fft q15``)."""
    fft = ", spectra from the Q15 FFT" if report.get("fft") == "q15" else ""
    return f"{report.get('numeric', '?')}{fft}"


def stack_line(report: dict) -> str:
    s = report.get("stack") or {"measured": "not recorded in this report"}
    mark = ("" if s.get("high_water_bytes") is None else
            f"{s['high_water_bytes']} bytes of a {s['reserve_bytes']}-byte reserve, ")
    return f"stack high-water mark: {mark}{s['measured']}"


#: the parts of a prediction's compute, in report.json ``cost``, with what each is
PARTS = (("pushes", "pushes (new samples stored)"), ("extractors", "window pass (extractors)"),
         ("model", "model"), ("total", "total (pushes + window pass + model)"),
         ("first_window", "first window (pushes of a whole window + window pass)"))


def compute_lines(cost: dict) -> list:
    """[(part label, median)] of a report's compute per prediction, each part said for what
    it is (pushes, window pass, model and total: the steady predictions, ``cost.predictions``;
    first window: each segment's first); an image that does not measure the pushes gives
    (its ``pushes_note``, None) instead of the pushes and no first window."""
    out = []
    for key, label in PARTS:
        value = (cost.get(key) or {}).get("median")
        if value is not None:
            out.append((label, value))
        elif key == "pushes":
            out.append((cost.get("pushes_note") or "pushes not measured", None))
    return out


def compute_text(cost: dict) -> str:
    """The compute per prediction as one printed line (medians, the unit, which predictions)."""
    how = "measured" if cost["measured"] else "estimated"
    parts = [label if v is None else f"{label} {_fmt(v)}" for label, v in compute_lines(cost)]
    which = cost.get("predictions") or "every prediction"
    return (f"compute per prediction ({cost['unit']}, {how}; medians over {which}; first "
            f"window: each segment's first): " + ", ".join(parts))


def _fmt(x, digits=4) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def _rates_text(rates: dict) -> str:
    """A multi-rate replay's windows and each sensor's rates, said for what they are."""
    parts = [f"{s['name']} pushed at {s['pushed_hz']:g} Hz (window {s['window']}, hop "
             f"{s['hop']} samples; features at "
             f"{', '.join(f'{r:g}' for r in s['feature_rates_hz'])} Hz; paid at "
             f"{_fmt(s['rate_hz'])} Hz: {s['readings']} readings, {_fmt(s['energy_j'])} J per "
             f"prediction" + ("; pushed above the rate it is paid at: the device reads it more "
                              "often than the cost model pays" if s.get("pushed_above_paid")
                              else "") + ")" for s in rates["sensors"]]
    return (f"window {rates['window_s']:g} s, hop {rates['hop_s']:g} s; sensors at their own "
            f"rates: " + "; ".join(parts) + ".")


def rates_line(report: dict) -> str | None:
    """A multi-rate replay's windows and each sensor's rates as one printed line (None for
    one rate)."""
    return _rates_text(report["rates"]) if report.get("rates") else None


def summary_markdown(report: dict) -> str:
    """A short Markdown summary of a report dictionary."""
    c, e, b = report["cost"], report["energy"], report["bundle"]
    label = "measured" if c["measured"] else "**estimated**"
    lines = [f"# Simulation: {report['backend']} ({arithmetic(report)})", "",
             ("A bundle not read from a folder" if b["path"] is None else f"Bundle `{b['path']}`")
             + f": {len(b['selected'])} features "
             f"({', '.join(b['selected'])}); sensors {', '.join(b['required_sensors'])}; "
             + (_rates_text(report["rates"]) if report.get("rates") else
                f"window {b['window']}, hop {b['hop']} samples at {b['sample_rate_hz']:g} Hz.")
             + "", "",
             "| predictions | delivered | retried | lost | mismatches |", "|---|---|---|---|---|",
             f"| {report['predictions']} | {report['delivered']} | {report['retried']} | "
             f"{report['lost']} | {report['mismatches']} |", "",
             *_decision_lines(report.get("decisions")),
             f"## Compute per prediction ({c['unit']}, {label}: {c['method']})", "",
             f"Pushes, window pass, model and total: {c.get('predictions') or 'every prediction'}"
             f"; first window: each segment's first prediction.", "",
             "| part | min | median | max |", "|---|---|---|---|"]
    for key, name in PARTS:
        s = c.get(key) or {}
        if not s and key in ("pushes", "first_window"):
            lines.append(f"| {name} | {c.get('pushes_note') or 'not measured'} | | |")
            continue
        lines.append(f"| {name} | {_fmt(s.get('min'))} | {_fmt(s.get('median'))} | "
                     f"{_fmt(s.get('max'))} |")
    for part, b in sorted((c.get("bench") or {}).items()):
        lines.append(f"\nBENCH {part}: {b['total']} {b['unit']} over {b['reps']} runs = "
                     f"{b['per_run']:.6g} per run")
    lines += _breakdown(c)
    p = report["profile"]
    est = "; estimated" if e["estimated"] else ""
    epp = e["energy_per_prediction_j"]
    lines += ["", f"## Energy ({p['name']}: {p['clock_hz'] / 1e6:g} MHz, "
              f"{p['active_power_w'] * 1e3:.3g} mW active{est})",
              "", f"- source: {p['source']}",
              f"- costed board: {p['name']}; measured by {report['backend']}"
              + (f" on the {img} image" if (img := (report.get("board") or {}).get("image"))
                 else " (no image built here)"),
              f"- energy per prediction: sensors {_fmt(epp['sensors'])} J, "
              f"compute {_fmt(epp['compute'])} J (the median total: "
              + ("window pass + model; pushes not measured)" if c.get("pushes_note")
                 else "pushes + window pass + model)"),
              f"- latency (median) {_fmt((e['latency_s'] or {}).get('median'))} s, deadline "
              f"{_fmt(e['deadline_s'])} s, misses {e['deadline_misses']}",
              f"- duty cycle {_fmt(e['duty_cycle'])}, average power {_fmt(e['average_power_w'])} W,"
              f" battery life {_fmt(e['battery_life_days'])} days on {_fmt(e['battery_wh'])} Wh"]
    acc = report.get("accuracy") or {}
    if acc.get("device"):
        lines += _accuracy_lines(acc)
    link = report.get("link") or {}
    if link:
        lines += ["", "## Link", "", ", ".join(f"{k} {v}" for k, v in link.items())]
    lines += ["", "## Stack", "", f"- {stack_line(report)}"]
    lines += ["", "Plots: cost_histogram.png, cost_breakdown.png, timeline.png", ""]
    return "\n".join(lines)


def _decision_lines(d) -> list:
    """The calibrated decisions' agreement line (multi-label bundles with thresholds)."""
    if not d:
        return []
    return [f"Label decisions (thresholds {d['rule']}): {d['mismatches']} of {d['windows']} "
            f"windows differ from the reference's ({d['label_mismatches']} labels).", ""]


def _breakdown(c: dict) -> list:
    """The per-transform, per-extractor and per-channel push table of a cost section
    (Markdown lines)."""
    rows = [("transform", k, v) for k, v in sorted((c.get("per_transform") or {}).items())]
    rows += [("extractor", k, v) for k, v in sorted((c.get("per_extractor") or {}).items())]
    pushes = sorted((c.get("per_channel_push") or {}).items())
    if not rows and not pushes:
        return []
    lines = ["", f"Per transform (paid once per window) and per extractor, {c['unit']} "
                 f"({c.get('per_extractor_method') or c.get('method', '')}):", "",
             "| part | name | cost |", "|---|---|---|",
             *(f"| {part} | {name} | {_fmt(float(v), 5)} |" for part, name, v in rows)]
    if pushes:
        lines += ["", f"Pushes per channel, {c['unit']} per steady prediction (the pushes "
                      f"split over the channels by the op-count model):", "",
                  "| channel | pushes |", "|---|---|",
                  *(f"| {name} | {_fmt(float(v), 5)} |" for name, v in pushes)]
    return lines


def _fmt_acc(acc) -> str:
    if not acc:
        return "-"
    return ", ".join(f"{k} {_fmt(v)}" for k, v in acc.items()
                     if not isinstance(v, (list, str)))


def _accuracy_lines(acc: dict) -> list:
    """The accuracy section: what is scored, device and reference, and the device's confusion
    matrix (multi-class)."""
    device = acc["device"]
    lines = ["", "## Accuracy", ""]
    if device.get("decisions"):
        lines += [f"Against the recordings' targets; {device['decisions']}.", ""]
    if device.get("data"):
        lines += [f"Replayed recordings: {device['data']}.", ""]
    lines += [f"- device: {_fmt_acc(device)}", f"- reference: {_fmt_acc(acc.get('reference'))}"]
    if device.get("confusion") is not None:
        lines += ["", "Confusion matrix of the device's decisions (rows: true class, "
                  "columns: decided class):", "", "```", *_confusion(device), "```"]
    return lines


def _confusion(device: dict) -> list:
    from sensorbudget.trainer.evaluation.metrics import confusion_lines

    return confusion_lines(device["confusion"], device["classes"])


def accuracy_text(report: dict) -> list:
    """Plain lines for the terminal: the device's measures against the recordings' targets,
    what they score, and the confusion matrix (multi-class); [] without targets."""
    device = (report.get("accuracy") or {}).get("device")
    if not device:
        return []
    what = f"; {device['decisions']}" if device.get("decisions") else ""
    what += f"; {device['data']}" if device.get("data") else ""
    lines = [f"device vs the recordings' targets ({device['n']} windows{what}): "
             f"{_fmt_acc({k: v for k, v in device.items() if k != 'n'})}"]
    if device.get("confusion") is not None:
        lines += ["confusion matrix (rows: true class, columns: decided class):",
                  *(f"  {line}" for line in _confusion(device))]
    return lines
