"""The bundle's calibrated label decisions: the optional ``model.json`` key ``decision``.

A multi-label bundle may hold ``decision`` = {``rule`` ("f1", "zero" or "precision:P"),
``heldout`` (the criterion whose held-out scores chose it: "loo" or "leave-group-out"),
``thresholds`` (one number per label), ``heldout_f1``, ``heldout_precision``,
``heldout_recall`` (at those thresholds on the held-out scores they were tuned on: optimistic),
optionally ``rechosen_f1``, ``rechosen_precision``, ``rechosen_recall`` (each row decided by
the threshold the rule picks on the other rows' held-out scores) and ``platt`` (one
[a, b] per label)}. Label j is on when its score is > ``thresholds[j]``; its Platt probability is
1 / (1 + exp(-(a s + b))). Without the key every threshold is 0 (the sign of the score) and
there are no probabilities. :mod:`sensorbudget.trainer.evaluation.calibration` chooses the values.
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


def decide_scores(scores, task: str, label_thresholds=None) -> np.ndarray:
    """The decision of a task from its scores: the one rule every surface applies.

    - ``regression``: the scores themselves (n x t);
    - ``multilabel``: D[i, j] = 1 if scores[i, j] > label_thresholds[j] else 0 (int, n x t;
      thresholds 0 when None: the sign of the +1/-1 encoding);
    - ``multiclass`` (and binary, two classes): the index of the largest score,
      argmax_j scores[i, j], the first on ties (int, n).

    ``scores`` and ``label_thresholds`` must be in the same units (float scores, or the integer
    scores of a fixed-point model with the thresholds floor(threshold 2^G)).

    >>> decide_scores([[0.2, -0.1], [0.7, 0.4]], "multilabel", [0.3, -0.5]).tolist()
    [[0, 1], [1, 1]]
    >>> decide_scores([[0.2, -0.1], [0.7, 0.9]], "multiclass").tolist()
    [0, 1]
    """
    if task == "regression":
        return np.asarray(scores)
    scores = np.asarray(scores)
    scores = scores.reshape(len(scores), -1)
    if task == "multiclass":
        return np.argmax(scores, axis=1)
    if task != "multilabel":
        raise BundleError(f"task {task!r} is not regression, multilabel or multiclass")
    th = np.zeros(scores.shape[1]) if label_thresholds is None else np.asarray(label_thresholds)
    return (scores > th).astype(int)


def decide(scores, meta: dict) -> np.ndarray:
    """The bundle's decisions of ``scores`` (:func:`decide_scores` with the bundle's task and
    thresholds): multi-label 0/1 (score > the label's stored threshold, 0 without one),
    multi-class the class index, regression the scores."""
    task = meta["task"]
    return decide_scores(scores, task, thresholds(meta) if task == "multilabel" else None)


def describe(meta: dict) -> str:
    """What the decisions are, for every printed metric that scores them."""
    task = meta["task"]
    if task == "multiclass":
        return "decisions: the class of the largest score"
    if task == "regression":
        return "predictions: the scores"
    entry = meta.get(KEY)
    if not entry:
        return "decisions: label on when score > 0 (no calibrated thresholds in the bundle)"
    return (f"decisions: label on when score > the bundle's calibrated threshold (rule "
            f"{entry['rule']}, chosen on {entry['heldout']} scores)")


def probabilities(scores, meta: dict):
    """Platt probabilities (n x t) 1 / (1 + exp(-(a s + b))), or None without ``platt``."""
    platt = (meta.get(KEY) or {}).get("platt")
    if platt is None:
        return None
    return platt_probabilities(scores, platt)


def platt_probabilities(scores, platt) -> np.ndarray:
    """p[i, j] = 1 / (1 + exp(-(a_j s[i, j] + b_j))) for ``platt`` = [[a_j, b_j], ...],
    computed as (1 + tanh(z / 2)) / 2 (no overflow)."""
    ab = np.asarray(platt, dtype=np.float64)
    z = np.asarray(scores, dtype=np.float64) * ab[:, 0] + ab[:, 1]
    return 0.5 * (1.0 + np.tanh(0.5 * z))
