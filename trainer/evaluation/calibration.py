"""Calibrated label decisions from held-out scores: per-label thresholds and Platt scaling.

A multi-label model regresses +1/-1 label codes; its score s is turned into a decision
"on when s > threshold". The trainer's LOO (or leave-group-out) predictions of the final model
are held-out scores of every training row, so a threshold chosen on them is chosen on data the
model did not fit:

- ``f1``: the threshold maximising the held-out F1 = 2 TP / (2 TP + FP + FN) of the label;
- ``precision:P``: the lowest threshold whose held-out precision TP / (TP + FP) is >= P (the
  most recall at that precision); when no threshold reaches P, the one with the highest
  precision (ties: more recall);
- ``zero``: threshold 0 (the sign of the score, the +1/-1 encoding's midpoint).

Candidate thresholds are the midpoints between consecutive distinct held-out scores, plus one
below the smallest and one above the largest score (every distinct decision vector on the
held-out rows, once). Ties between candidates go to the highest threshold (fewest labels on).

Platt scaling fits p = 1 / (1 + exp(-(a s + b))) by maximum likelihood on the same held-out
scores, with Platt's smoothed targets (N+ + 1) / (N+ + 2) and 1 / (N- + 2) (Platt 1999).

:func:`heldout_predictions` returns the estimator's ``heldout_predictions_`` when it has them,
else computes the same held-out predictions of the final ridge model on its selected features in
closed form (:func:`ridge_heldout`).
"""

from __future__ import annotations

import numpy as np

from ..errors import TrainerError

RULES = ("f1", "zero", "precision:P")


def parse_rule(text: str) -> tuple:
    """("f1" | "zero" | "precision", target precision or None) from ``f1``, ``zero`` or
    ``precision:P`` with 0 < P <= 1; raises :class:`TrainerError` otherwise."""
    text = str(text).strip()
    if text in ("f1", "zero"):
        return text, None
    kind, _, value = text.partition(":")
    try:
        target = float(value) if kind == "precision" else None
    except ValueError:
        target = None
    if target is None or not 0 < target <= 1:
        raise TrainerError(f"threshold rule {text!r} must be f1, zero or precision:P with "
                           f"0 < P <= 1 (e.g. precision:0.9)")
    return "precision", target


def candidate_thresholds(scores) -> np.ndarray:
    """Descending candidates: above the largest score, midpoints between consecutive distinct
    scores, below the smallest (each distinct decision vector once)."""
    s = np.unique(np.asarray(scores, dtype=np.float64))[::-1]
    mids = 0.5 * (s[:-1] + s[1:])
    return np.concatenate([[s[0] + 1.0], mids, [s[-1] - 1.0]])


def _counts(scores, y):
    """(candidates, TP, FP) for "on when score > candidate", candidates descending."""
    scores = np.asarray(scores, dtype=np.float64)
    y = np.asarray(y).astype(bool)
    cand = candidate_thresholds(scores)
    order = np.argsort(-scores, kind="stable")
    s_sorted, y_sorted = scores[order], y[order]
    on = np.searchsorted(-s_sorted, -cand, side="left")    # rows with score > candidate
    tp = np.concatenate([[0], np.cumsum(y_sorted)])[on]
    fp = on - tp
    return cand, tp, fp


def f1_threshold(scores, y) -> float:
    """The held-out-F1-maximising threshold of one label (ties: the highest threshold).

    F1 = 2 TP / (2 TP + FP + FN) for the decision score > threshold; a label with no positive
    row gets the threshold above every score (nothing on)."""
    cand, tp, fp = _counts(scores, y)
    positives = int(np.sum(np.asarray(y).astype(bool)))
    if positives == 0:
        return float(cand[0])
    f1 = 2.0 * tp / (tp + fp + positives)
    return float(cand[int(np.argmax(f1))])


def precision_threshold(scores, y, target: float) -> float:
    """The lowest threshold with held-out precision TP / (TP + FP) >= ``target``; when none
    reaches it, the threshold of the highest precision (ties: the lowest threshold)."""
    cand, tp, fp = _counts(scores, y)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 0.0)
    ok = np.flatnonzero(precision >= target)
    if ok.size:
        return float(cand[ok[-1]])
    best = np.flatnonzero(precision == precision.max())
    return float(cand[best[-1]])


def platt_fit(scores, y, smooth=True, max_iter=100) -> tuple:
    """(a, b) maximising the log-likelihood of p = 1 / (1 + exp(-(a s + b))) for targets
    ``y`` (Platt's smoothed targets with ``smooth``). Newton's method with step halving on
    the convex negative log-likelihood."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(y).astype(bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    t = (np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0)) if smooth
         else y.astype(np.float64))
    Z = np.column_stack([s, np.ones_like(s)])

    def loss(w):
        z = Z @ w
        return float(np.sum(np.logaddexp(0.0, z) - t * z))

    w = np.array([1.0, 0.0])
    current = loss(w)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(Z @ w)))
        grad = Z.T @ (p - t)
        hess = (Z * (p * (1 - p))[:, None]).T @ Z + 1e-12 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        rate = 1.0
        while rate > 1e-10 and loss(w - rate * step) > current:
            rate *= 0.5
        w = w - rate * step
        new = loss(w)
        if current - new <= 1e-12 * max(1.0, abs(current)):
            current = new
            break
        current = new
    return float(w[0]), float(w[1])


def ridge_heldout(X, Y, features, lam, x_mean, x_scale, fit_intercept, groups=None):
    """Held-out predictions (n x t) of ridge on the columns ``features``, every row (or group of
    ``groups``) left out in turn with the intercept refitted without it.

    With Xs = (X[:, f] - x_mean) / x_scale (scaling of all rows, not refitted) the hat matrix of
    ridge with an unpenalized intercept is H = J/n + Hc, Hc = Xc (Xc'Xc + lam I)^-1 Xc' with Xc
    centred by the column means; the held-out residuals of a group Q are
    e_Q = (I - H_QQ)^-1 r_Q (r: training residuals), so the held-out prediction is y_Q - e_Q
    (LOO: r_i / (1 - h_ii)). O(n k^2 + sum |Q|^2 k + sum |Q|^3)."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64).reshape(len(X), -1)
    f = np.asarray(features, dtype=np.intp)
    Xs = (X[:, f] - np.asarray(x_mean)[f]) / np.asarray(x_scale)[f]
    n = len(X)
    y_mean = Y.mean(axis=0) if fit_intercept else np.zeros(Y.shape[1])
    if fit_intercept:
        Xs = Xs - Xs.mean(axis=0)
    A = Xs.T @ Xs + float(lam) * np.eye(f.size)
    B = np.linalg.solve(A, Xs.T) if f.size else np.zeros((0, n))     # k x n
    resid = (Y - y_mean) - Xs @ (B @ (Y - y_mean))
    if groups is None:
        h = np.einsum("ij,ji->i", Xs, B) + (1.0 / n if fit_intercept else 0.0)
        return Y - resid / (1.0 - h)[:, None]
    groups = np.asarray(groups)
    out = np.empty_like(Y)
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        H = Xs[rows] @ B[:, rows] + (1.0 / n if fit_intercept else 0.0)
        out[rows] = Y[rows] - np.linalg.solve(np.eye(rows.size) - H, resid[rows])
    return out


def heldout_predictions(est, X, Y, groups=None) -> np.ndarray:
    """The fitted estimator's held-out predictions (n x t) of its training targets ``Y``:
    ``est.heldout_predictions_`` when present (and of Y's shape: not a fit on compressed
    labels), else :func:`ridge_heldout` on its selected
    features (per target in separate mode)."""
    given = getattr(est, "heldout_predictions_", None)
    Y = np.asarray(Y, dtype=np.float64).reshape(len(X), -1)
    if given is not None and np.shape(given) in (Y.shape, (Y.size,)):
        return np.asarray(given, dtype=np.float64).reshape(Y.shape)
    if np.isnan(Y).any():
        raise TrainerError("held-out predictions with missing targets need the estimator's "
                           "heldout_predictions_")
    if getattr(est, "mode", "joint") == "separate":
        return np.column_stack([
            ridge_heldout(X, Y[:, [q]], est.target_selected_[q], est.lam_[q], est.x_mean_,
                          est.x_scale_, est.fit_intercept, groups)
            for q in range(Y.shape[1])])
    return ridge_heldout(X, Y, est.selected_, est.lam_, est.x_mean_, est.x_scale_,
                         est.fit_intercept, groups)


def _first_argmax_prefix(v) -> np.ndarray:
    """For every k, the first index j <= k with v[j] = max(v[:k+1]) (the highest threshold of
    the best prefix candidates, candidates descending)."""
    best = np.maximum.accumulate(v)
    record = v > np.concatenate([[-np.inf], best[:-1]])
    return np.maximum.accumulate(np.where(record, np.arange(v.size), 0))


def _last_argmax_prefix(v) -> np.ndarray:
    """For every k, the last index j <= k with v[j] = max(v[:k+1])."""
    best = np.maximum.accumulate(v)
    record = v >= np.concatenate([[-np.inf], best[:-1]])
    return np.maximum.accumulate(np.where(record, np.arange(v.size), 0))


def _suffix(v, first: bool) -> np.ndarray:
    """For every q, the first (``first``) or last index j >= q with v[j] = max(v[q:])."""
    r = v[::-1]
    idx = (_last_argmax_prefix(r) if first else _first_argmax_prefix(r))
    return (v.size - 1 - idx)[::-1]


def _left_out_choice(tp, fp, positives, r, y, kind, target) -> np.ndarray:
    """Per row, the full-list candidate index the rule picks on the *other* rows' counts.

    Leaving out row i (value rank r, label y) changes the counts only where it is on
    (candidates k > r): tp - y, fp - (1 - y). So per label value y the rule's choice is the
    better of its choice among candidates k <= r (unchanged counts: running prefix scans) and
    among k > r (shifted counts: suffix scans), with the rule's tie order (f1: the highest
    threshold; precision: the lowest)."""
    out = np.empty(r.size, dtype=np.intp)
    k = np.arange(tp.size)
    for yv in (0, 1):
        rows = np.flatnonzero(y == yv)
        if not rows.size:
            continue
        ri = r[rows]
        tps, fps = tp - yv, fp - (1 - yv)              # counts with the row gone (k > r)
        if kind == "f1":
            pos = positives - yv
            if pos == 0:
                out[rows] = 0
                continue
            A = 2.0 * tp / (tp + fp + pos)
            with np.errstate(invalid="ignore", divide="ignore"):   # k = 0: never a k > r
                B = 2.0 * tps / (tps + fps + pos)
            ia, ib = _first_argmax_prefix(A)[ri], _suffix(B, first=True)[ri + 1]
            out[rows] = np.where(A[ia] >= B[ib], ia, ib)
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            A = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 0.0)
            B = np.where(tps + fps > 0, tps / np.maximum(tps + fps, 1), 0.0)
        ok_a = np.maximum.accumulate(np.where(A >= target, k, -1))[ri]
        ok_b = np.flatnonzero(B >= target)
        last_b = ok_b[-1] if ok_b.size else -1
        ia, ib = _last_argmax_prefix(A)[ri], _suffix(B, first=False)[ri + 1]
        fallback = np.where(A[ia] > B[ib], ia, ib)
        out[rows] = np.where(last_b > ri, last_b, np.where(ok_a >= 0, ok_a, fallback))
    return out


def left_out_thresholds(scores, y, rule="f1") -> np.ndarray:
    """Per row i, the threshold the rule (:func:`f1_threshold`, :func:`precision_threshold`,
    "zero") picks on the held-out scores and labels of all rows but i (n,); exact and
    O(n log n) per label (a slow loop over the rows gives the same thresholds bit for bit).

    Deciding row i by "score_i > threshold_i" scores the threshold choice honestly: the
    threshold never saw row i (the scores themselves are held-out already)."""
    kind, target = parse_rule(rule)
    scores = np.asarray(scores, dtype=np.float64)
    y = np.asarray(y).astype(bool)
    if kind == "zero":
        return np.zeros(scores.size)
    if scores.size < 2:
        raise TrainerError(f"thresholds chosen without each row need at least 2 rows, "
                           f"got {scores.size}")
    values, r, mult = np.unique(-scores, return_inverse=True, return_counts=True)
    u = -values                                          # distinct scores, descending
    cand, tp, fp = _counts(scores, y)
    choice = _left_out_choice(tp, fp, int(y.sum()), r.ravel(), y.astype(int), kind, target)
    t = cand[choice]
    alone = (mult[r] == 1) & ((choice == r) | (choice == r + 1))   # row i's own gap merged
    m = u.size
    if alone.any():
        ra = r[alone]
        up = np.where(ra > 0, u[np.maximum(ra - 1, 0)], np.nan)
        down = np.where(ra < m - 1, u[np.minimum(ra + 1, m - 1)], np.nan)
        t[alone] = np.where(ra == 0, down + 1.0,
                            np.where(ra == m - 1, up - 1.0, 0.5 * (up + down)))
    return t


def decision_counts(on, Y) -> dict:
    """{"f1", "precision", "recall"}: per-label lists for the 0/1 decisions ``on`` (n x t)."""
    on = np.asarray(on, dtype=bool)
    Yb = np.asarray(Y).astype(bool).reshape(on.shape)
    tp, fp, fn = ((on & Yb).sum(0), (on & ~Yb).sum(0), (~on & Yb).sum(0))
    return {"f1": [float(v) for v in 2 * tp / np.maximum(2 * tp + fp + fn, 1)],
            "precision": [float(v) for v in tp / np.maximum(tp + fp, 1)],
            "recall": [float(v) for v in tp / np.maximum(tp + fn, 1)]}


def choose_thresholds(scores, Y, rule="f1") -> np.ndarray:
    """Per-label thresholds (t,) from held-out ``scores`` and 0/1 labels ``Y`` (n x t)."""
    kind, target = parse_rule(rule)
    scores = np.asarray(scores, dtype=np.float64).reshape(len(scores), -1)
    Y = np.asarray(Y).reshape(scores.shape)
    if kind == "zero":
        return np.zeros(scores.shape[1])
    if kind == "f1":
        return np.array([f1_threshold(scores[:, j], Y[:, j]) for j in range(scores.shape[1])])
    return np.array([precision_threshold(scores[:, j], Y[:, j], target)
                     for j in range(scores.shape[1])])


def decision_entry(scores, Y, rule="f1", platt=False, source="loo") -> dict:
    """The bundle's ``decision`` entry: rule, thresholds, where the scores came from, and two
    sets of F1/precision/recall on the held-out scores:

    - ``rechosen_*``: row i decided by the threshold chosen on the other rows
      (:func:`left_out_thresholds`): the threshold choice is not scored on its own rows;
    - ``heldout_*``: at the stored thresholds, tuned on these same scores (optimistic).

    Both share the selection's optimism (features and lambda were chosen on every row; nested
    CV, ``sensorbudget evaluate``, has none). With ``platt`` the Platt coefficients [a, b]."""
    scores = np.asarray(scores, dtype=np.float64).reshape(len(scores), -1)
    thresholds = choose_thresholds(scores, Y, rule)
    Y = np.asarray(Y).reshape(scores.shape)
    tuned = decision_counts(scores > thresholds, Y)
    left_out = np.column_stack([left_out_thresholds(scores[:, j], Y[:, j], rule)
                                for j in range(scores.shape[1])])
    honest = decision_counts(scores > left_out, Y)
    entry = {"rule": str(rule), "heldout": str(source),
             "thresholds": [float(v) for v in thresholds],
             **{f"heldout_{k}": v for k, v in tuned.items()},
             **{f"rechosen_{k}": v for k, v in honest.items()}}
    if platt:
        entry["platt"] = [list(platt_fit(scores[:, j], Y[:, j].astype(bool)))
                          for j in range(scores.shape[1])]
    return entry
