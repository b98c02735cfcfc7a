"""``train --threshold f1|precision:P|zero --platt``: calibrated multi-label decisions (chosen
by :func:`sensorbudget.trainer.training.decision_for`), and how a bundle's decisions are
described."""

from __future__ import annotations

import click
import numpy as np


def _rule(ctx, param, value):
    if value is None:
        return None
    from sensorbudget.trainer.errors import TrainerError
    from sensorbudget.trainer.evaluation.calibration import parse_rule

    try:
        parse_rule(value)
    except TrainerError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None
    return value


def threshold_options(f):
    """--threshold and --platt."""
    f = click.option("--platt", is_flag=True,
                     help="Multi-label: also store Platt-scaled probabilities fitted on the same "
                          "held-out scores.")(f)
    return click.option(
        "--threshold", "threshold_rule", default=None, callback=_rule,
        metavar="f1|precision:P|zero",
        help="Multi-label decisions: per-label thresholds chosen on the held-out (LOO or "
             "leave-group-out) scores of the final model: maximise F1 (the default), the "
             "lowest reaching precision P, or 0 (the sign).")(f)


def describe_decision(meta: dict) -> list:
    """Lines on a bundle's label thresholds for train and info, each F1 said for what it is:
    in-sample LOO (or leave-group-out) scores with the threshold re-chosen without each row,
    and with the thresholds tuned on those same scores (optimistic)."""
    from sensorbudget.trainer.bundle.decision import describe

    entry = meta.get("decision")
    if meta["task"] == "multiclass":
        column = f" (column {meta['class_column']!r})" if meta.get("class_column") else ""
        classes = [str(c)[:32] for c in meta.get("classes") or meta["targets"]]
        return [f"classes{column}: {', '.join(classes)}; {describe(meta)}"]
    if not entry or "heldout_f1" not in entry:
        return [describe(meta)] if meta["task"] == "multilabel" else []
    kind = "leave-group-out" if entry["heldout"] == "leave-group-out" else "LOO"
    lines = [f"label thresholds ({entry['rule']}, chosen on the final model's in-sample "
             f"{kind} scores; label on when score > threshold"
             + ("; Platt probabilities stored" if entry.get("platt") else "") + "):"]
    nan = [float("nan")] * len(entry["thresholds"])
    tuned, honest = entry.get("heldout_f1") or nan, entry.get("rechosen_f1")
    for j, (name, th) in enumerate(zip(meta["targets"], entry["thresholds"])):
        own = (f"{kind} F1 {honest[j]:.3f} (threshold re-chosen without the row), "
               if honest else "")
        lines.append(f"  {name[:32]:<32} {th:>10.4g}  {own}{tuned[j]:.3f} with the threshold "
                     f"tuned on the same scores (optimistic)")
    mean = (f"mean {kind} F1 over labels: "
            + (f"{np.mean(honest):.3f} with thresholds re-chosen without each row, "
               if honest else "")
            + f"{np.mean(tuned):.3f} with thresholds tuned on the same scores (optimistic); "
              f"in-sample: features and lambda were chosen on all rows (nested CV: "
              f"sensorbudget evaluate)")
    return lines + [mean]
