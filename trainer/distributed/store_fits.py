"""Fits on the selected columns from a row store's partitions (:mod:`sensorbudget.trainer.distributed.
row_store`): ridge weights from the partitions' sums, and the held-out predictions of the
final model (global terms from the sums, then each partition's whole groups)."""

from __future__ import annotations

import numpy as np

from ..selection.caches import total
from ..selection.heldout import gram_terms


def heldout_on_store(store, features, targets, prep, lam, offset) -> np.ndarray:
    """Held-out predictions (n x len(targets), rows in input order) of ridge on ``features``:
    the global terms (L, W) from the partitions' sums, then each partition's whole groups
    (:meth:`sensorbudget.trainer.distributed.partition.RowPartition.heldout`)."""
    features = np.asarray(features, dtype=np.intp)
    targets = np.asarray(targets, dtype=np.intp)
    parts = store.map("ridge_sums", features, targets, prep)
    L, W = gram_terms(total([p[0] for p in parts]) + lam * np.eye(features.size),
                      total([p[1] for p in parts]))
    preds = store.map("heldout", features, targets, prep, L, W, offset)
    out = np.empty((sum(len(p) for p in preds), targets.size))
    start = 0
    for rows, pred in zip(store.row_index, preds):
        out[slice(start, start + len(pred)) if rows is None else rows] = pred
        start += len(pred)
    return out


def ridge_on_store(store, features, targets, prep, lam) -> tuple:
    """(W, x_min, x_max): ridge weights (k x len(targets)) on the transformed ``features``
    from the sums X_S^T X_S and X_S^T Y over the partitions, and the raw columns' ranges."""
    features = np.asarray(features, dtype=np.intp)
    parts = store.map("ridge_sums", features, np.asarray(targets, dtype=np.intp), prep)
    K = total([p[0] for p in parts]) + lam * np.eye(features.size)
    XtY = total([p[1] for p in parts])
    W = np.linalg.solve(K, XtY) if features.size else np.zeros((0, len(targets)))
    return W, np.min([p[2] for p in parts], axis=0), np.max([p[3] for p in parts], axis=0)
