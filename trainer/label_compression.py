"""Many labels: select features on a compressed label matrix, or learn a subset of labels.

SVD compression (exact at full rank)
------------------------------------
The ridge LOO residuals of a target matrix are linear in it: E(Y) = M Y for an n x n matrix M
that depends on X_S and lambda only. With the thin SVD of the centred targets
Y_c = U S V^T and Y_r = U_r S_r = Y_c V_r (the first r components),

    ||E(Y_c)||_F^2 = ||M Y_c V V^T||_F^2 = ||M Y_c V||_F^2 = ||E(Y_r)||_F^2   when r = rank(Y_c),

because V has orthonormal columns. So every candidate's LOO SSE -- hence every greedy pick and
the LOO choice of lambda -- is the same for Y_r (n x r, r <= min(n, t)) as for Y_c (n x t), and a
selection step costs O(n d r) instead of O(n d t). Keeping only the components that hold a
fraction ``energy`` of sum(S^2) approximates the criterion. Y_r has column means 0, so it may
be passed to an estimator with ``fit_intercept=True`` (which centres it again, a no-op).
Weights for the original labels are refitted by ridge on the selected features (cheap).

ML-CSSP (Bi & Kwok, ICML 2013)
------------------------------
Pick k label columns C that span Y well (column subset selection): sample ~k log k labels with
probabilities given by the leverage scores of Y's top-k right singular vectors, then keep k of
them by QR with column pivoting. Learn the k labels only and reconstruct all of them as
Ŷ = Ŷ_C B with B = Y_C^+ Y from the training labels (Y ≈ Y_C Y_C^+ Y).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import qr

from .errors import TrainerError
from .selection.heldout import heldout_predictions
from .selection.refit import ridge_refit


def _check_matrix(Y) -> np.ndarray:
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim != 2 or Y.shape[0] < 1 or Y.shape[1] < 1:
        raise TrainerError(f"the label matrix must be 2-D and non-empty (got shape {Y.shape})")
    if not np.isfinite(Y).all():
        raise TrainerError("the label matrix contains non-finite values")
    return Y


def compression_rank(singular_values, energy: float) -> int:
    """The smallest r whose first r singular values hold >= ``energy`` of sum(s^2).

    ``energy=1`` keeps the numerical rank (singular values above max(n, t) eps s_max). At least
    one component is always kept.
    """
    if not 0 < energy <= 1:
        raise TrainerError(f"energy={energy!r} must be in (0, 1]")
    s = np.asarray(singular_values, dtype=np.float64)
    if s.size == 0 or s[0] == 0:
        return 1
    tol = s[0] * max(s.size, 1) * np.finfo(np.float64).eps * 10
    numerical_rank = max(1, int(np.sum(s > tol)))
    if energy >= 1:
        return numerical_rank
    share = np.cumsum(s ** 2) / np.sum(s ** 2)
    r = int(np.searchsorted(share, energy * (1 - 1e-12)) + 1)
    return max(1, min(r, numerical_rank))


def compress_targets(Y, energy: float = 0.999, *, center: bool = True, rank=None):
    """Compressed targets for selection: (Y_r, V_r) with Y_r = (Y - mean) V_r = U_r S_r.

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_targets)
    energy : float in (0, 1], default=0.999
        Fraction of the squared singular values to keep (1: the full numerical rank, exact).
    center : bool, default=True
        Centre the columns first (the estimators' ``fit_intercept=True`` convention).
    rank : int or None
        Keep exactly this many components instead of choosing by ``energy``.

    Returns
    -------
    Y_r : ndarray of shape (n_samples, r)
    V_r : ndarray of shape (n_targets, r), orthonormal columns; Y_c ≈ Y_r V_r^T.
    """
    Y = _check_matrix(Y)
    Yc = Y - Y.mean(axis=0) if center else Y
    U, s, Vt = np.linalg.svd(Yc, full_matrices=False)
    r = compression_rank(s, energy) if rank is None else int(rank)
    if not 1 <= r <= s.size:
        raise TrainerError(f"rank={r} is outside 1..{s.size}")
    return U[:, :r] * s[:r], Vt[:r].T


def retained_energy(Y, ranks, *, center: bool = True) -> list:
    """Fraction of sum(s^2) of the (centred) Y kept by each rank in ``ranks``."""
    Y = _check_matrix(Y)
    s = np.linalg.svd(Y - Y.mean(axis=0) if center else Y, compute_uv=False)
    total = float(np.sum(s ** 2)) or 1.0
    return [float(np.sum(s[:r] ** 2) / total) for r in ranks]


def mlcssp_select(Y, k: int, seed=0, *, oversample=None) -> np.ndarray:
    """Indices of k label columns chosen by ML-CSSP (randomized + deterministic CSSP).

    1. V_k = top-k right singular vectors of Y (t x k); leverage p_i = ||V_k[i]||^2 / k.
    2. Sample c = ``oversample`` (default ceil(k log k) + k, at most t) labels with replacement
       by p, scaled by 1 / sqrt(c p_i); top up with the highest-leverage labels if fewer than k
       distinct labels were drawn.
    3. Keep k of the sampled labels by QR with column pivoting of the scaled V_k^T columns.

    Returns the k label indices in pivot order (most important first). Deterministic for a
    given ``seed``.
    """
    Y = _check_matrix(Y)
    t = Y.shape[1]
    if not isinstance(k, (int, np.integer)) or not 1 <= k <= t:
        raise TrainerError(f"k={k!r} labels must be an integer in 1..{t}")
    if k == t:
        return np.arange(t)
    _, _, Vt = np.linalg.svd(Y, full_matrices=False)
    Vk = Vt[:k].T                                   # t x k
    lev = np.sum(Vk ** 2, axis=1)
    prob = lev / lev.sum()
    c = min(t, oversample or int(math.ceil(k * math.log(max(k, 2)))) + k)
    rng = np.random.default_rng(seed)
    drawn = rng.choice(t, size=c, replace=True, p=prob)
    cand = list(dict.fromkeys(drawn.tolist()))
    if len(cand) < k:
        extra = [i for i in np.argsort(-lev, kind="stable") if i not in set(cand)]
        cand += extra[:k - len(cand)]
    cand = np.asarray(cand, dtype=np.intp)
    scaled = Vk[cand].T / np.sqrt(c * np.maximum(prob[cand], 1e-300))
    _, _, piv = qr(scaled, mode="economic", pivoting=True)
    return cand[piv[:k]]


def reconstruction_matrix(Y, columns) -> np.ndarray:
    """B = Y_C^+ Y (k x t), so that Y ≈ Y_C B (exact on the chosen columns when Y_C has full
    column rank)."""
    Y = _check_matrix(Y)
    columns = np.asarray(columns, dtype=np.intp)
    return np.linalg.pinv(Y[:, columns]) @ Y


def reconstruct(pred_subset, B) -> np.ndarray:
    """All labels from predictions of the chosen ones: Ŷ = Ŷ_C B."""
    return np.asarray(pred_subset, dtype=np.float64) @ B


def fit_on_compressed_labels(estimator, X, Y, energy: float = 0.999):
    """Fit a joint-mode :class:`sensorbudget.trainer.GreedyRLS` whose selection runs on compressed labels.

    Selection and the LOO choice of lambda use Y_r (:func:`compress_targets`, centred when
    ``fit_intercept``); ``coef_`` / ``intercept_`` are then refitted by ridge on all labels with
    the chosen features and lambda, so ``predict`` returns every label. LOO errors are rescaled
    from per compressed entry to per label entry (SSE / (n t), exact at full rank, the LOO error
    of the retained part otherwise); ``loo_mse_per_target`` entries repeat that mean (per-label
    LOO errors are not available). ``heldout_predictions_`` are recomputed for the original
    labels (the LOO predictions of the refitted ridge model, intercept refitted per fold:
    :func:`sensorbudget.trainer.selection.heldout.heldout_predictions`), not left in compressed-target
    units, so thresholds chosen on them fit the labels. Adds ``label_compression_`` =
    {energy, rank, n_labels}. Returns the estimator.
    """
    if getattr(estimator, "mode", "joint") != "joint":
        raise TrainerError("label compression applies to the joint criterion (mode='joint')")
    Y = _check_matrix(np.asarray(Y, dtype=np.float64).reshape(len(Y), -1))
    Y_r, _ = compress_targets(Y, energy, center=estimator.fit_intercept)
    estimator.fit(X, Y_r)
    model = ridge_refit(np.asarray(X, dtype=np.float64), Y, estimator.selected_, estimator.lam_,
                        estimator.x_mean_, estimator.x_scale_, estimator.fit_intercept)
    estimator.coef_, estimator.intercept_ = model.coef, model.intercept
    estimator.heldout_predictions_ = _heldout_in_label_units(estimator, X, Y)
    factor = Y_r.shape[1] / Y.shape[1]
    estimator.loo_path_ = estimator.loo_path_ * factor
    estimator.lam_loo_ = estimator.lam_loo_ * factor
    for entry in estimator.path_:
        entry["loo_mse"] *= factor
        entry["loo_mse_per_target"] = [entry["loo_mse"]] * Y.shape[1]
    estimator.label_compression_ = {"energy": float(energy), "rank": int(Y_r.shape[1]),
                                    "n_labels": int(Y.shape[1])}
    return estimator


def _heldout_in_label_units(estimator, X, Y) -> np.ndarray:
    """LOO predictions (n x t) of every original label by ridge on the estimator's selected
    columns at its lambda, scaled as it scaled them (not refitted per fold) and centred on all
    rows with the intercept refitted without the held-out row (offset 1/n)."""
    f = np.asarray(estimator.selected_, dtype=np.intp)
    X = np.asarray(X, dtype=np.float64)
    Xs = (X[:, f] - estimator.x_mean_[f]) / estimator.x_scale_[f]
    n = X.shape[0]
    if estimator.fit_intercept:
        Xs = Xs - Xs.mean(axis=0)
        return heldout_predictions(Xs, Y, Y.mean(axis=0), float(estimator.lam_), None, 1.0 / n)
    return heldout_predictions(Xs, Y, np.zeros(Y.shape[1]), float(estimator.lam_))
