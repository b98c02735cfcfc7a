"""The C header's calibrated label decisions: ``<name>_thresholds`` and ``<name>_decide``.

Every multi-label header gets them: label j is on when ``scores[j] > thresholds[j]``, with the
bundle's calibrated thresholds (``decision`` in model.json, chosen on held-out scores) or 0
without them (then ``<name>_decide`` equals ``<name>_labels``). Firmware applies calibrated
decisions by calling ``<name>_decide`` (float32) or ``<name>_decide_<q>`` (Q15/Q31).

Fixed point: a score is ``scores_q * 2^-G``, so ``score > threshold`` exactly when
``scores_q > floor(threshold * 2^G)`` (scores_q is an integer); the integer thresholds are
stored in the accumulator type, clamped to [qmin - 1, qmax] (below every score: always on;
at the top: never on). Platt coefficients, when present, are written as ``<name>_platt_a`` /
``<name>_platt_b`` (float) with the formula in a comment; the header computes no exponential.
"""

from __future__ import annotations

import math

import numpy as np

from . import cgen
from .ctemplate import macro
from .fixed_point import FORMATS, FixedPointModel


def thresholds(meta: dict) -> np.ndarray:
    """The bundle's per-label thresholds (zeros without a ``decision`` entry)."""
    entry = meta.get("decision")
    if not entry:
        return np.zeros(len(meta["targets"]))
    return np.asarray(entry["thresholds"], dtype=np.float64)


def integer_thresholds(values, fixed: FixedPointModel) -> list:
    """floor(threshold * 2^G) clamped to [qmin - 1, qmax], as Python ints."""
    fmt, scale = fixed.fmt, 2 ** fixed.score_frac_bits
    out = []
    for v in np.asarray(values, dtype=np.float64):
        q = math.floor(v * scale) if abs(v * scale) < 2.0 ** 62 else (fmt.qmax if v > 0
                                                                       else fmt.qmin - 1)
        out.append(int(min(max(q, fmt.qmin - 1), fmt.qmax)))
    return out


def _describe(meta: dict) -> str:
    entry = meta.get("decision")
    if not entry:
        return "/* Label thresholds: 0 (the sign of the score; the bundle has no calibrated ones). */\n"
    return (f"/* Label thresholds, rule {cgen.c_comment(entry['rule'])}, chosen on held-out "
            f"{cgen.c_comment(entry['heldout'])} scores. */\n")


def _platt(meta: dict, name: str, up: str) -> str:
    platt = (meta.get("decision") or {}).get("platt")
    if not platt:
        return ""
    ab = np.asarray(platt, dtype=np.float64)
    dims = (f"{up}_N_TARGETS",)
    return "\n".join([
        "/* Platt probabilities (not computed here): p[j] = 1 / (1 + exp(-(platt_a[j] * score[j]"
        "\n * + platt_b[j]))), score[j] the float score. */\n",
        cgen.array_declare("float", f"{name}_platt_a", ab[:, 0], size_macros=dims),
        cgen.array_declare("float", f"{name}_platt_b", ab[:, 1], size_macros=dims)])


def decide_part(meta: dict, name: str, numeric: str, fixed: FixedPointModel | None) -> str:
    """The thresholds array and the decide function of a multi-label header ('' otherwise)."""
    if meta["task"] != "multilabel":
        return ""
    up, dims = name.upper(), (f"{name.upper()}_N_TARGETS",)
    values = thresholds(meta)
    if fixed is None:
        th = f"{name}_thresholds"
        table = cgen.array_declare("float", th, values.astype(np.float32), size_macros=dims)
        code = macro("header.h.j2", "decide", name, up, "", "float", "float", "", th, "")
    else:
        fmt = FORMATS[numeric]
        th = f"{name}_{numeric}_thresholds"
        table = cgen.array_declare(fmt.acc_ctype, th, integer_thresholds(values, fixed),
                                   size_macros=dims, per_line=3)
        code = macro("header.h.j2", "decide", name, up, f"_{numeric}", fmt.ctype, fmt.ctype,
                     "_q", th, f"({fmt.acc_ctype})")
    return "\n".join([_describe(meta), table, _platt(meta, name, up), code])
