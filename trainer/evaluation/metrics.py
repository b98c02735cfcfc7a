"""Evaluation measures: the seven multi-label measures of the paper and per-target regression.

Multi-label inputs are ``Y`` (n x L, 0/1 ground truth) and ``scores`` (n x L real); a label is
predicted on when its score is > ``threshold`` (a number, or one per label: 0 for the +1/-1
encoding's sign; :mod:`sensorbudget.trainer.evaluation.protocol` passes the thresholds each training fold
chose, as a trained bundle decides).
Definitions follow the paper's Appendix A (Naula et al. 2014) and Mulan's implementations; every
example counts in every example-based average:

- 0/1 loss: fraction of examples whose predicted label set differs from the true set.
- Hamming loss: fraction of wrong (example, label) entries.
- accuracy: mean over examples of |Y ∩ Ŷ| / |Y ∪ Ŷ|, with 0/0 := 1 (nothing true, nothing
  predicted).
- one-error: fraction of examples whose top-scored label is not relevant. Ties for the top go
  to the lowest label index (``argmax``); an example with no relevant label scores 1.
- coverage: mean over examples of (rank of the lowest-ranked relevant label) - 1, where the rank
  of a score s counts the labels with score >= s (ties pessimistic, as scikit-learn's
  ``coverage_error``, which is this plus 1); 0 for an example without relevant labels.
- ranking loss: mean over examples of the fraction of (relevant, irrelevant) pairs ranked wrong,
  a tie counting as wrong (scikit-learn's ``label_ranking_loss``); 0 for an example without
  pairs.
- macro-AUC: mean over labels of the ROC AUC (Mann-Whitney, ties count 1/2). A label that has
  only one class among the examples is skipped (its AUC is undefined); :func:`macro_auc`
  reports which were skipped; nan when every label is skipped.

Regression (``Y``, ``pred`` n x t): MSE, MAE and R^2 per target and their mean over targets;
R^2 of a constant target is nan (undefined) and left out of the mean.

Decisions (0/1 ``D`` against 0/1 ``Y``, n x L): micro-F1 = 2 TP / (2 TP + FP + FN) with the
counts summed over every (example, label) entry; macro-F1 = the mean over labels of each
label's F1, a label with TP + FP + FN = 0 counting 0 (scikit-learn's ``f1_score`` with
``zero_division=0``).

Classes (binary and multi-class; ``y_true``, ``y_pred`` class indices 0..C-1): the confusion
matrix M[i, j] = the rows of true class i decided as class j; accuracy = trace(M) / n; balanced
accuracy = the mean over the classes present in ``y_true`` of their recall M[i, i] / sum_j
M[i, j]; macro-F1 = the mean over the classes present in ``y_true`` or ``y_pred`` of
2 M[i, i] / (sum_j M[i, j] + sum_j M[j, i]) (scikit-learn's ``accuracy_score``,
``balanced_accuracy_score`` and ``f1_score(average="macro", zero_division=0)``; the tests
compare with them). Full definitions: ``docs/metrics.md``.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

#: Multi-label measures in the paper's order, and whether larger is better.
MULTILABEL_MEASURES = ("zero_one_loss", "hamming_loss", "accuracy", "one_error", "coverage",
                       "ranking_loss", "macro_auc")
#: Measures of the 0/1 decisions only (scores > per-label thresholds).
DECISION_MEASURES = ("micro_f1", "macro_f1")
REGRESSION_MEASURES = ("mse", "mae", "r2")
#: Measures of class decisions (binary and multi-class).
CLASS_MEASURES = ("accuracy", "balanced_accuracy", "macro_f1")
HIGHER_IS_BETTER = {"accuracy": True, "macro_auc": True, "r2": True, "micro_f1": True,
                    "macro_f1": True, "balanced_accuracy": True}
LABELS = {"zero_one_loss": "0/1 loss", "hamming_loss": "Hamming loss", "accuracy": "accuracy",
          "one_error": "one-error", "coverage": "coverage", "ranking_loss": "ranking loss",
          "macro_auc": "macro-AUC", "mse": "MSE", "mae": "MAE", "r2": "R²",
          "pairwise_error": "pairwise ranking error", "pairwise_sq_error": "pairwise sq. error",
          "micro_f1": "micro-F1", "macro_f1": "macro-F1",
          "balanced_accuracy": "balanced accuracy"}


def higher_is_better(measure: str) -> bool:
    """True for measures where larger values are better (accuracy, macro-AUC, R^2)."""
    base = measure.split("[", 1)[0]
    return HIGHER_IS_BETTER.get(base, False)


def _check(Y, scores):
    Y = np.asarray(Y)
    scores = np.asarray(scores, dtype=np.float64)
    if Y.ndim != 2 or Y.shape != scores.shape:
        raise ValueError(f"Y {Y.shape} and scores {scores.shape} must be equal 2-D shapes")
    return Y.astype(bool), scores


def zero_one_loss(Y, scores, threshold=0.0) -> float:
    """Fraction of examples whose predicted label set is not exactly the true set."""
    Y, scores = _check(Y, scores)
    return float(np.mean(((scores > threshold) != Y).any(axis=1)))


def hamming_loss(Y, scores, threshold=0.0) -> float:
    """Fraction of (example, label) entries predicted wrong."""
    Y, scores = _check(Y, scores)
    return float(np.mean((scores > threshold) != Y))


def accuracy(Y, scores, threshold=0.0) -> float:
    """Mean Jaccard index |Y ∩ Ŷ| / |Y ∪ Ŷ| of the label sets, with 0/0 := 1."""
    Y, scores = _check(Y, scores)
    pred = scores > threshold
    inter = (Y & pred).sum(axis=1)
    union = (Y | pred).sum(axis=1)
    return float(np.mean(np.where(union == 0, 1.0, inter / np.maximum(union, 1))))


def one_error(Y, scores) -> float:
    """Fraction of examples whose top-scored label (ties: lowest index) is not relevant."""
    Y, scores = _check(Y, scores)
    top = np.argmax(scores, axis=1)
    return float(np.mean(~Y[np.arange(len(Y)), top]))


def coverage(Y, scores) -> float:
    """Mean over examples of how far down the ranking one must go to cover every relevant
    label, minus 1 (ties pessimistic; 0 for an example with no relevant label)."""
    Y, scores = _check(Y, scores)
    lowest = np.where(Y, scores, np.inf).min(axis=1, keepdims=True)
    depth = (scores >= lowest).sum(axis=1) - 1
    return float(np.mean(np.where(Y.any(axis=1), depth, 0)))


def ranking_loss(Y, scores) -> float:
    """Mean fraction of (relevant, irrelevant) label pairs with relevant score <= irrelevant."""
    Y, scores = _check(Y, scores)
    losses = np.zeros(len(Y))
    for i in range(len(Y)):
        rel, irr = scores[i, Y[i]], scores[i, ~Y[i]]
        if rel.size and irr.size:
            losses[i] = np.mean(rel[:, None] <= irr[None, :])
    return float(np.mean(losses))


def label_aucs(Y, scores) -> np.ndarray:
    """ROC AUC of each label (nan where the label has one class only), ties counting 1/2.

    AUC = (sum of positive ranks - n_pos (n_pos + 1) / 2) / (n_pos n_neg), with average ranks
    (Mann-Whitney U / (n_pos n_neg)).
    """
    Y, scores = _check(Y, scores)
    out = np.full(Y.shape[1], np.nan)
    for j in range(Y.shape[1]):
        pos = int(Y[:, j].sum())
        neg = len(Y) - pos
        if pos and neg:
            ranks = rankdata(scores[:, j])
            out[j] = (ranks[Y[:, j]].sum() - pos * (pos + 1) / 2) / (pos * neg)
    return out


def macro_auc(Y, scores, return_skipped=False):
    """Mean AUC over the labels that have both classes; with ``return_skipped`` also the
    indices of the skipped (one-class) labels."""
    aucs = label_aucs(Y, scores)
    ok = ~np.isnan(aucs)
    value = float(aucs[ok].mean()) if ok.any() else float("nan")
    if return_skipped:
        return value, np.flatnonzero(~ok).tolist()
    return value


def multilabel_scores(Y, scores, threshold=0.0, decisions=None) -> dict:
    """All seven multi-label measures as {name: value}, plus ``auc_skipped_labels``; the set
    measures (0/1 loss, Hamming loss, accuracy) score ``decisions`` (0/1, n x L) when given,
    else ``scores > threshold``; the ranking measures score ``scores``."""
    auc, skipped = macro_auc(Y, scores, return_skipped=True)
    decided, cut = (scores, threshold) if decisions is None else (decisions, 0.5)
    return {"zero_one_loss": zero_one_loss(Y, decided, cut),
            "hamming_loss": hamming_loss(Y, decided, cut),
            "accuracy": accuracy(Y, decided, cut),
            "one_error": one_error(Y, scores), "coverage": coverage(Y, scores),
            "ranking_loss": ranking_loss(Y, scores), "macro_auc": auc,
            "auc_skipped_labels": skipped}


def f1_scores(Y, decisions) -> dict:
    """{"micro_f1", "macro_f1"} of 0/1 ``decisions`` against 0/1 ``Y`` (n x L): micro-F1 =
    2 sum TP / (2 sum TP + sum FP + sum FN); macro-F1 = mean over labels of 2 TP / (2 TP + FP +
    FN), 0 for a label with TP + FP + FN = 0."""
    Y, D = _check(Y, decisions)
    D = D > 0.5
    tp, fp, fn = (Y & D).sum(0), (~Y & D).sum(0), (Y & ~D).sum(0)
    denom = 2 * tp + fp + fn
    per = np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0)
    total = int(denom.sum())
    return {"micro_f1": float(2 * tp.sum() / total) if total else 0.0,
            "macro_f1": float(per.mean())}


def regression_per_target(Y, pred) -> dict:
    """{"mse", "mae", "r2"} -> arrays (t,) of per-target values (R^2 nan for a constant target)."""
    Y = np.asarray(Y, dtype=np.float64)
    pred = np.asarray(pred, dtype=np.float64)
    Y, pred = Y.reshape(len(Y), -1), pred.reshape(len(pred), -1)
    if Y.shape != pred.shape:
        raise ValueError(f"Y {Y.shape} and predictions {pred.shape} must have equal shapes")
    resid = Y - pred
    sse = np.sum(resid ** 2, axis=0)
    sst = np.sum((Y - Y.mean(axis=0)) ** 2, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(sst > 0, 1.0 - sse / np.where(sst > 0, sst, 1.0), np.nan)
    return {"mse": sse / len(Y), "mae": np.mean(np.abs(resid), axis=0), "r2": r2}


def regression_scores(Y, pred, target_names=None) -> dict:
    """Mean MSE/MAE/R^2 over targets plus ``"mse[name]"`` etc. per target."""
    per = regression_per_target(Y, pred)
    t = per["mse"].size
    names = target_names if target_names is not None else [f"y{j}" for j in range(t)]
    out = {}
    for key, values in per.items():
        ok = ~np.isnan(values)
        out[key] = float(values[ok].mean()) if ok.any() else float("nan")
    for key, values in per.items():
        for name, v in zip(names, values):
            out[f"{key}[{name}]"] = float(v)
    return out


def confusion_matrix(y_true, y_pred, n_classes: int) -> np.ndarray:
    """M (C x C, int): M[i, j] = number of rows of true class i decided as class j."""
    y_true = np.asarray(y_true, dtype=np.intp).ravel()
    y_pred = np.asarray(y_pred, dtype=np.intp).ravel()
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true {y_true.shape} and y_pred {y_pred.shape} must have equal "
                         f"shapes")
    if y_true.size and (min(y_true.min(), y_pred.min()) < 0
                        or max(y_true.max(), y_pred.max()) >= n_classes):
        raise ValueError(f"class indices must be in 0..{n_classes - 1}")
    M = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(M, (y_true, y_pred), 1)
    return M


def class_scores(y_true, y_pred, n_classes: int) -> dict:
    """{"accuracy", "balanced_accuracy", "macro_f1"} of class decisions from the confusion
    matrix M (:func:`confusion_matrix`): trace(M) / n; the mean recall M[i, i] / row_i over the
    classes with rows; the mean of 2 M[i, i] / (row_i + col_i) over the classes that occur in
    the truth or the decisions."""
    M = confusion_matrix(y_true, y_pred, n_classes)
    rows, cols, diag = M.sum(axis=1), M.sum(axis=0), np.diag(M)
    n = int(M.sum())
    present, seen = rows > 0, (rows + cols) > 0
    recall = diag[present] / rows[present]
    f1 = 2 * diag[seen] / (rows[seen] + cols[seen])
    return {"accuracy": float(diag.sum() / n) if n else float("nan"),
            "balanced_accuracy": float(recall.mean()) if recall.size else float("nan"),
            "macro_f1": float(f1.mean()) if f1.size else float("nan")}


def confusion_lines(M, classes) -> list:
    """The confusion matrix as text lines: one row per true class, one column per decided
    class (names cut to 12 characters)."""
    names = [str(c)[:12] for c in classes]
    corner = "true / decided"
    width = max([len(corner), *map(len, names)])
    cell = max(6, *(len(n) for n in names), len(str(int(np.max(M)) if np.size(M) else 0)))
    head = f"{corner:<{width}}  " + " ".join(f"{n:>{cell}}" for n in names)
    return [head] + [f"{name:<{width}}  " + " ".join(f"{int(v):>{cell}}" for v in row)
                     for name, row in zip(names, np.asarray(M))]


def task_scores(task: str, Y, scores, decisions, target_names=None) -> dict:
    """Every measure of one task's predictions against the truth ``Y`` (n x t), as printed by
    ``predict`` and stored by ``simulate``; ``decisions`` are the decision rule's output
    (:func:`sensorbudget.trainer.bundle.decision.decide_scores`), which every decision measure scores:

    - regression: :func:`regression_scores` of the scores;
    - multilabel: micro/macro-F1, 0/1 loss, Hamming loss and accuracy of the 0/1
      ``decisions``; one-error, coverage, ranking loss and macro-AUC of the scores;
    - multiclass: ``Y`` one-hot (n x classes) or class indices (n,); accuracy, balanced
      accuracy and macro-F1 of the class indices ``decisions`` (:func:`class_scores`) and
      ``confusion`` (:func:`confusion_matrix`, a nested list).
    """
    if task == "regression":
        return regression_scores(Y, scores, target_names)
    if task == "multiclass":
        scores = np.asarray(scores, dtype=np.float64)
        c = scores.reshape(len(scores), -1).shape[1]
        Y = np.asarray(Y)
        truth = np.argmax(Y, axis=1) if Y.ndim == 2 else Y.astype(np.intp)
        return {**class_scores(truth, decisions, c),
                "confusion": confusion_matrix(truth, decisions, c).tolist()}
    D = np.asarray(decisions)
    return {**f1_scores(Y, D), **{k: v for k, v in multilabel_scores(Y, scores, decisions=D)
                                 .items() if k != "auc_skipped_labels"}}


def one_hot_classes(values) -> tuple:
    """(class names (sorted, as text: integers without a decimal point), one-hot 0/1 matrix
    n x classes) of one column of class values (numbers or strings); NaN is not a class."""
    values = np.asarray(values).ravel()
    if values.dtype.kind == "f":
        if np.isnan(values).any():
            raise ValueError("class values hold a missing value (NaN)")
        classes, index = np.unique(values, return_inverse=True)
        names = [f"{c:g}" for c in classes.tolist()]
    else:
        classes, index = np.unique(values.astype(str), return_inverse=True)
        names = [str(c) for c in classes]
    Y = np.zeros((values.size, len(names)))
    Y[np.arange(values.size), index] = 1.0
    return names, Y


def one_hot_of(values, classes) -> np.ndarray:
    """One-hot rows (n x len(classes)) of class values against a bundle's class names (numbers
    compared as written by :func:`one_hot_classes`: ``f"{v:g}"``); a missing value (NaN) gives
    a NaN row (a missing target); a value that is not a class raises ValueError naming it."""
    values = np.asarray(values).ravel()
    index = {str(c): j for j, c in enumerate(classes)}
    out = np.zeros((values.size, len(classes)))
    for i, v in enumerate(values.tolist()):
        if isinstance(v, float) and np.isnan(v):
            out[i] = np.nan
            continue
        key = f"{v:g}" if isinstance(v, float) else str(v)
        if key not in index:
            raise ValueError(f"class {key!r} (row {i}) is not one of the bundle's "
                             f"{len(classes)} classes ({', '.join(map(str, classes))[:80]})")
        out[i, index[key]] = 1.0
    return out
