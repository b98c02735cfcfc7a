"""The bundle's calibrated label decisions: the optional ``model.json`` key ``decision``.

A multi-label bundle may hold ``decision`` = {``rule`` ("f1", "zero" or "precision:P"),
``heldout`` (the criterion whose held-out scores chose it: "loo" or "leave-group-out"),
``thresholds`` (one number per label), ``heldout_f1``, ``heldout_precision``,
``heldout_recall`` (at those thresholds on the held-out scores they were tuned on: optimistic),
optionally ``rechosen_f1``, ``rechosen_precision``, ``rechosen_recall`` (each row decided by
the threshold the rule picks on the other rows' held-out scores) and ``platt`` (one
[a, b] per label)}. Label j is on when its score is > ``thresholds[j]``; its Platt probability is
1 / (1 + exp(-(a s + b))). Without the key every threshold is 0 (the sign of the score) and
there are no probabilities. :mod:`trainer.evaluation.calibration` chooses the values.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import BundleError

KEY = "decision"


def _finite_list(value, length) -> bool:
    return (isinstance(value, list) and len(value) == length
            and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                    and math.isfinite(v) for v in value))


def check_decision(meta: dict) -> None:
    """Raise :class:`BundleError` when ``decision`` is present but malformed."""
    entry = meta.get(KEY)
    if entry is None:
        return
    t = len(meta["targets"])
    if not isinstance(entry, dict):
        raise BundleError(f"model.json decision={entry!r:.60} must be an object")
    if meta.get("task") != "multilabel":
        raise BundleError(f"model.json decision applies to task multilabel, not "
                          f"{meta.get('task')!r}")
    if not isinstance(entry.get("rule"), str):
        raise BundleError(f"model.json decision.rule={entry.get('rule')!r:.60} must be a string")
    for key in ("thresholds", "heldout_f1", "heldout_precision", "heldout_recall",
                "rechosen_f1", "rechosen_precision", "rechosen_recall"):
        if (key == "thresholds" or key in entry) and not _finite_list(entry.get(key), t):
            raise BundleError(f"model.json decision.{key}={entry.get(key)!r:.60} must be a list "
                              f"of {t} finite numbers (one per label)")
    platt = entry.get("platt")
    if platt is not None and not (isinstance(platt, list) and len(platt) == t
                                  and all(_finite_list(p, 2) for p in platt)):
        raise BundleError(f"model.json decision.platt={platt!r:.60} must be a list of {t} "
                          f"[a, b] pairs of finite numbers")


def thresholds(meta: dict) -> np.ndarray:
    """Per-label thresholds (t,): the stored ones, else zeros."""
    entry = meta.get(KEY)
    if entry is None:
        return np.zeros(len(meta["targets"]))
    return np.asarray(entry["thresholds"], dtype=np.float64)


def decide(scores, meta: dict) -> np.ndarray:
    """0/1 decisions (n x t): score > threshold of its label."""
    return (np.asarray(scores) > thresholds(meta)).astype(int)


def probabilities(scores, meta: dict):
    """Platt probabilities (n x t) 1 / (1 + exp(-(a s + b))), or None without ``platt``."""
    platt = (meta.get(KEY) or {}).get("platt")
    if platt is None:
        return None
    ab = np.asarray(platt, dtype=np.float64)
    z = np.asarray(scores, dtype=np.float64) * ab[:, 0] + ab[:, 1]
    return 0.5 * (1.0 + np.tanh(0.5 * z))
