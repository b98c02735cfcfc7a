"""Many targets: the products Q = E P^T kept current by rank-2 updates instead of one
n x d x t GEMM per step.

The Sherman-Morrison scores (:func:`sensorbudget.trainer.selection.rls_math.candidate_loo_sse_partial`) need
Q_ji = E_j . P_i for every row j and candidate i. Recomputing Q costs 2 n d t flops per step,
which dominates with many targets (delicious: t = 983). Adding feature b updates E and P by
rank-one terms with the *same* old P_b, den = lam + sigma_b and r = R^T x_b:

    E' = E - R_b P_b^T / den,      P' = P - r P_b^T / den,

so Q' = E' P'^T = Q - (Q_b - (||P_b||^2 / den) R_b) r^T / den - R_b (P P_b)^T / den,

a rank-2 update in O(n d) with Q_b = E P_b the old column b of Q and P P_b (d,) from the old P.
The step then costs O(n (d + t)) instead of O(n d t); Q is one more n x d array. Round-off adds
up over the steps like that of R and E, which are kept by the same kind of updates (the tests
compare the kept Q with E P^T recomputed, and the picks with the GEMM path and with refits).

:func:`add_feature_wide` is the row-local part of a step with Q kept: in-place BLAS rank-one
updates of R and E and one rank-2 update of Q (one pass over each), then the LOO terms.
"""

from __future__ import annotations

import numpy as np

from .blas_rows import rank_k_update
from .rls_math import add_feature_rows, loo_sse_terms, row_map

#: Targets from which a block keeps Q: below, the per-step GEMM E P^T is cheaper than reading
#: and writing one more n x d array (measured at n x d = 2000 x 1000 and 8000 x 500, k = 50:
#: the kept Q 7-17 % slower at t = 8-32, even at 64, 12-13 % faster at 128).
TRACK_TARGETS = 64
#: Rows per block of the LOO terms after a step (a cache-sized square of 256 x t: 10-15 %
#: faster than 1024 rows at t = 983).
SSE_ROWS = 256
#: Rows per block of :func:`target_products` (its GEMMs run on the worker threads).
PRODUCT_ROWS = 1024


def target_products(E: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Q = E P^T (n x d) in E's dtype: GEMMs over row blocks on the worker threads."""
    n, d = E.shape[0], P.shape[0]
    Pt = np.ascontiguousarray(P.T, dtype=E.dtype)
    Q = np.empty((n, d), dtype=E.dtype)

    def part(rows):
        np.matmul(E[rows], Pt, out=Q[rows])

    row_map(part, n, PRODUCT_ROWS)
    return Q


def add_feature_wide(R, E, h, Q, r, den, b, Pb, PPb):
    """The row-local part of adding feature ``b`` (in place) when Q = E P^T is kept:
    :func:`sensorbudget.trainer.selection.rls_math.add_feature_rows` for R, E, h, then

        Q <- Q - (Q_b - (||P_b||^2 / den) R_b) r^T / den - R_b (P P_b)^T / den

    (one in-place rank-2 BLAS update, :func:`sensorbudget.trainer.selection.blas_rows.rank_k_update`),
    with ``Pb`` the old P_b and ``PPb`` = P P_b from the old P. Returns
    :func:`sensorbudget.trainer.selection.rls_math.loo_sse_terms` of the new caches.
    """
    Rb = np.asarray(R[:, b], dtype=np.float64)
    U = np.empty((R.shape[0], 2), dtype=R.dtype)
    U[:, 0] = Q[:, b] - (float(np.dot(Pb, Pb)) / den) * Rb
    U[:, 1] = Rb
    V = np.stack([np.asarray(r, dtype=np.float64), np.asarray(PPb, dtype=np.float64)], axis=1)
    add_feature_rows(R, E, h, r, den, b, Pb)
    rank_k_update(Q, U, V * (-1.0 / den))
    return loo_sse_terms(E, h, row_block=SSE_ROWS)
