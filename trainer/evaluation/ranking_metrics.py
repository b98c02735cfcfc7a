"""Ranking measures over queries: pairwise ranking error and pairwise squared error.

Inputs: ``y`` (n,) or (n, t) relevance values, ``scores`` of the same shape, ``groups`` (n,)
query ids. Only pairs of rows in the same query count, and only pairs with different relevance
(y_i > y_j) are ranking pairs.

- pairwise ranking error: the fraction of ranking pairs ordered wrong (s_i < s_j), a tie in
  the scores counting 1/2 (1 - AUC within the query). ``average="queries"`` (default) takes the
  mean over queries that have a ranking pair; ``"pairs"`` pools all pairs.
- pairwise squared error (the RankRLS loss): sum over all pairs of one query of
  ((y_i - y_j) - (s_i - s_j))^2, divided by the number of rows; 0 for a query of one row.

Multi-target inputs are scored per column and averaged over columns.
"""

from __future__ import annotations

import numpy as np

RANKING_MEASURES = ("pairwise_error", "pairwise_sq_error")
#: Rows per chunk of the pair matrix (memory O(chunk x query size)).
CHUNK = 1024


def _columns(y, scores, groups):
    y = np.asarray(y, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    if y.shape != scores.shape or y.ndim not in (1, 2):
        raise ValueError(f"y {y.shape} and scores {scores.shape} must be equal 1-D or 2-D shapes")
    groups = np.asarray(groups)
    if groups.shape != (y.shape[0],):
        raise ValueError(f"groups has shape {groups.shape}; expected ({y.shape[0]},)")
    y2, s2 = y.reshape(len(y), -1), scores.reshape(len(y), -1)
    _, inv = np.unique(groups, return_inverse=True)
    queries = [np.flatnonzero(inv.ravel() == q) for q in range(inv.max() + 1)]
    return y2, s2, queries


def _query_counts(y, s):
    """(wrong pairs with ties as 1/2, ranking pairs) of one query."""
    wrong, pairs = 0.0, 0
    for i0 in range(0, y.size, CHUNK):
        dy = y[i0:i0 + CHUNK, None] - y[None, :]
        ds = s[i0:i0 + CHUNK, None] - s[None, :]
        ranked = dy > 0
        pairs += int(ranked.sum())
        wrong += float(np.sum(ranked & (ds < 0)) + 0.5 * np.sum(ranked & (ds == 0)))
    return wrong, pairs


def pairwise_ranking_error(y, scores, groups, *, average="queries") -> float:
    """Fraction of mis-ordered ranking pairs within queries (ties 1/2); nan without pairs."""
    if average not in ("queries", "pairs"):
        raise ValueError(f"average={average!r} must be 'queries' or 'pairs'")
    y2, s2, queries = _columns(y, scores, groups)
    per_column = []
    for c in range(y2.shape[1]):
        counts = [_query_counts(y2[q, c], s2[q, c]) for q in queries]
        counts = [(w, p) for w, p in counts if p]
        if not counts:
            per_column.append(np.nan)
        elif average == "queries":
            per_column.append(float(np.mean([w / p for w, p in counts])))
        else:
            per_column.append(sum(w for w, _ in counts) / sum(p for _, p in counts))
    return float(np.mean(per_column))


def pairwise_squared_error(y, scores, groups) -> float:
    """RankRLS loss per row: sum_q sum_{i<j in q} ((y_i - y_j) - (s_i - s_j))^2 / n.

    Uses sum_{i<j} (a_i - a_j)^2 = m sum_i (a_i - mean a)^2 for a = y - s within a query.
    """
    y2, s2, queries = _columns(y, scores, groups)
    a = y2 - s2
    total = sum(len(q) * float(np.sum((a[q] - a[q].mean(axis=0)) ** 2)) for q in queries)
    return total / (len(a) * a.shape[1])


def ranking_scores(Y, scores, groups) -> dict:
    """{measure: value} for :data:`RANKING_MEASURES` (lower is better for both)."""
    return {"pairwise_error": pairwise_ranking_error(Y, scores, groups),
            "pairwise_sq_error": pairwise_squared_error(Y, scores, groups)}
