"""Greedy RankRLS: sparse ranking models selected by the exact leave-query-out error.

RankRLS (Pahikkala et al.; greedy variant: Pahikkala, Airola, Naula, Salakoski 2010, the thesis'
publication I) minimizes the pairwise least-squares loss within queries,

    sum_q sum_{i<j in q} ((y_i - y_j) - (f_i - f_j))^2 + lam ||w||^2,   f = X w.

For a query of m rows, sum_{i<j} (a_i - a_j)^2 = m ||C a||^2 with the centring C = I - 11^T/m,
so the loss is the ridge loss of the *query-wise centred* rows scaled by sqrt(m_q):

    X~_q = sqrt(m_q) (X_q - mean_q X),   y~_q = sqrt(m_q) (y_q - mean_q y)   (L = X~^T X~ is
    X^T times the query Laplacian times X). No intercept: a shift of f does not change a ranking.

Holding a whole query Q out, training on the others and scoring Q's pairs gives exactly the
leave-group-out residual of the ridge on (X~, y~) with groups = queries: the hold-out residual
of Q is sqrt(m_Q) C_Q (y_Q - f_Q), whose squared norm is Q's pairwise loss. So greedy RankRLS
is the greedy RLS loop (:func:`sensorbudget.trainer.selection.loop.greedy_select`) on (X~, y~) with the
leave-group-out criterion (:mod:`sensorbudget.trainer.selection.holdout_math`), O(n d) per step and candidate
set.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import validate_data

from .estimators import _GreedyRLSBase, check_groups


def query_laplacian_transform(X, Y, qid):
    """(X~, Y~): every query's rows centred with the query means and scaled by sqrt(m_q).

    Then ||Y~ - X~ W||^2 = sum_q sum_{i<j in q} ((y_i - y_j) - (f_i - f_j))^2 for f = X W.
    A query of one row becomes zero (it has no pairs).
    """
    _, inv, counts = np.unique(qid, return_inverse=True, return_counts=True)
    inv = inv.ravel()
    n = inv.size
    member = sp.csr_matrix((np.ones(n), (inv, np.arange(n))), shape=(counts.size, n))
    scale = np.sqrt(counts)[inv][:, None]
    out = []
    for A in (X, Y):
        means = np.asarray(member @ A) / counts[:, None]
        out.append((A - means[inv]) * scale)
    return out[0], out[1]


class GreedyRankRLS(_GreedyRLSBase, SelectorMixin, RegressorMixin, BaseEstimator):
    """Budgeted feature selection for ranking: greedy RankRLS with leave-query-out selection.

    ``fit(X, y, groups=qid)``: rows with equal ``qid`` form a query; only the order of the
    scores within a query matters. Each step adds the feature with the lowest leave-query-out
    pairwise squared error (module notes); lambda is chosen the same way over 2^-15 ... 2^15.
    Without ``groups`` all rows form one query and the criterion is LOO on the centred data.

    Parameters are those of :class:`sensorbudget.trainer.GreedyRLS` except ``fit_intercept`` (none: scores
    are only compared within queries) and ``mode`` (always joint). ``standardize`` scales the
    columns of X~ (module notes) to unit root mean square.

    Attributes are those of :class:`sensorbudget.trainer.GreedyRLS`; ``intercept_`` is 0, ``loo_path_`` is
    the leave-query-out pairwise squared error per row, and ``n_queries_`` the number of queries.
    There is no ``heldout_predictions_``: the closed form gives the held-out predictions of
    the transformed targets sqrt(m_q) (y - mean_q y), i.e. held-out scores only up to an unknown
    shift per query (the held-out model's mean score on the query), which is not in the units
    of ``predict`` and has no label decision to calibrate; it is removed rather than left in the
    wrong units.
    """

    #: Fixed for ranking: no intercept (shift invariance), one feature set for all targets.
    fit_intercept = False
    mode = "joint"

    def __init__(self, budget=10, lam=None, standardize=True, dtype="float64", extractors=None,
                 extractor_costs=None, extractor_sensors=None, sensor_costs=None, max_cost=None,
                 max_sensors=None, max_energy=None, max_time=None, strategy="auto"):
        self.budget = budget
        self.lam = lam
        self.standardize = standardize
        self.dtype = dtype
        self.extractors = extractors
        self.extractor_costs = extractor_costs
        self.extractor_sensors = extractor_sensors
        self.sensor_costs = sensor_costs
        self.max_cost = max_cost
        self.max_sensors = max_sensors
        self.max_energy = max_energy
        self.max_time = max_time
        self.strategy = strategy

    def fit(self, X, y, groups=None, progress=None):
        """Select features ranking the rows of each query (``groups`` = query ids) by ``y``."""
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=np.float64)
        Y = np.asarray(y, dtype=np.float64)
        self._y_1d = Y.ndim == 1
        Y = Y.reshape(len(Y), -1)
        qid = check_groups(groups, X.shape[0])
        Xq, Yq = query_laplacian_transform(X, Y, np.zeros(len(X)) if qid is None else qid)
        self._fit_targets(Xq, Yq, progress, qid)
        del self.heldout_predictions_       # transformed-target units (class notes)
        self.n_queries_ = 1 if qid is None else self.n_groups_
        return self

    def predict(self, X):
        """Ranking scores X[:, selected_] @ coef_ (compare them within a query only)."""
        scores = self._scores(X)
        return scores.ravel() if self._y_1d else scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
