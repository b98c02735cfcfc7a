"""Confusion matrices for the report page (binary and multi-class runs).

M[i][j] = the number of windows (rows) of true class i decided as class j, the matrix of
:func:`sensorbudget.trainer.evaluation.metrics.confusion_matrix`:

- a simulation: the device's decisions against the replayed recordings' classes, as
  ``simulate`` stored them (report.json ``accuracy.device``: ``confusion``, ``classes``);
- an evaluation: each method and budget's held-out decisions summed over the outer folds of
  nested cross-validation (results.json records' ``confusion``), the sum the text report
  prints (:func:`sensorbudget.trainer.evaluation.report.pooled_confusion`).

The values come from users' files: a matrix that is not C x C non-negative integers for C
classes (1 <= C <= :data:`MAX_CLASSES`) is left out; class names are shown as printable text
(control characters escaped, cut to :data:`NAME_LIMIT` characters) and the template escapes
them for HTML.
"""

from __future__ import annotations

from sensorbudget.trainer.text import printable

#: a page table of more classes than this is left out
MAX_CLASSES = 100
#: class names are cut to this many characters on the page
NAME_LIMIT = 40
#: counts beyond this are not counts of windows (and not exact in JavaScript)
MAX_COUNT = 2 ** 53


def class_name(value) -> str:
    """One class name as the page shows it: printable, at most :data:`NAME_LIMIT` characters."""
    text = printable(value, keep_newlines=False)
    return text if len(text) <= NAME_LIMIT else text[:NAME_LIMIT - 1] + "…"


def counts(value) -> list | None:
    """``value`` as a C x C list of non-negative integer counts, or None."""
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_CLASSES:
        return None
    rows = []
    for row in value:
        if not isinstance(row, list) or len(row) != len(value) or not all(
                isinstance(v, int) and not isinstance(v, bool) and 0 <= v < MAX_COUNT
                for v in row):
            return None
        rows.append(list(row))
    return rows


def table(confusion, classes) -> dict | None:
    """{"classes": names, "counts": M, "n": total} of a stored matrix and its classes (named by
    their index, as the text report does, when the names are missing), or None."""
    M = counts(confusion)
    if M is None:
        return None
    if classes is None:
        classes = [str(j) for j in range(len(M))]
    if (not isinstance(classes, list) or len(classes) != len(M)
            or not all(isinstance(c, (str, int)) and not isinstance(c, bool) for c in classes)):
        return None
    return {"classes": [class_name(c) for c in classes], "counts": M,
            "n": sum(map(sum, M))}


def simulation_confusion(accuracy) -> dict | None:
    """The device's confusion matrix of a simulation report's ``accuracy``, or None."""
    device = accuracy.get("device") if isinstance(accuracy, dict) else None
    if not isinstance(device, dict) or device.get("confusion") is None:
        return None
    return table(device.get("confusion"), device.get("classes"))


def evaluation_confusions(records: list, methods: list, budgets: list) -> list:
    """Per method and budget (in that order) with a matrix in its records: {"method",
    "budget", "folds", "classes", "counts", "n"}, the counts summed over the folds' records
    (those whose matrix and classes agree with the first one's)."""
    out = []
    for method in methods:
        for budget in budgets:
            first, total, folds = None, None, 0
            for r in records:
                if r.get("method") != method or str(r.get("budget")) != budget:
                    continue
                one = table(r.get("confusion"), r.get("classes"))
                if one is None or (first is not None and one["classes"] != first["classes"]):
                    continue
                if first is None:
                    first, total = one, [[0] * len(one["counts"]) for _ in one["counts"]]
                total = [[a + b for a, b in zip(x, y)] for x, y in zip(total, one["counts"])]
                folds += 1
            if first is not None:
                out.append({"method": method, "budget": budget, "folds": folds,
                            "classes": first["classes"], "counts": total,
                            "n": sum(map(sum, total))})
    return out
