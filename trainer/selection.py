"""The one greedy selection loop, data preparation and the choice of lambda by LOO."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _rls_math as rm

#: The paper's lambda grid, 2^-15 ... 2^15.
LAMBDA_GRID = tuple(2.0 ** e for e in range(-15, 16))
#: Scores within this relative distance of the best are ties, resolved to the lowest index.
TIE_RTOL = 1e-12


@dataclass
class Preprocessing:
    """Affine map applied to X and Y before selection: Xs = (X - x_mean) / x_scale, Yc = Y - y_mean.

    Convention: with ``fit_intercept`` X and Y are centred with their training means, and the
    LOO criterion is the LOO error of the centred problem (the means are computed from all n
    rows, so a held-out row's value leaks slightly into the centring: O(1/n)). With
    ``standardize`` each column is divided by its standard deviation (root mean square when
    there is no intercept); constant columns keep scale 1 (they become zero or stay constant).
    """

    x_mean: np.ndarray
    x_scale: np.ndarray
    y_mean: np.ndarray

    @classmethod
    def fit(cls, X, Y, fit_intercept: bool, standardize: bool) -> "Preprocessing":
        d, t = X.shape[1], Y.shape[1]
        x_mean = X.mean(axis=0) if fit_intercept else np.zeros(d)
        y_mean = Y.mean(axis=0) if fit_intercept else np.zeros(t)
        x_scale = np.ones(d)
        if standardize:
            # E[(x - m)^2] computed without an n x d temporary: E[x^2] - 2 m E[x] + m^2.
            ms = np.einsum("ij,ij->j", X, X) / X.shape[0]
            var = np.maximum(ms - 2 * x_mean * X.mean(axis=0) + x_mean ** 2, 0.0)
            scale = np.sqrt(var)
            ok = scale > 1e-12 * np.maximum(1.0, np.abs(x_mean))
            x_scale = np.where(ok, scale, 1.0)
        return cls(x_mean=x_mean, x_scale=x_scale, y_mean=y_mean)

    def transform_into(self, X, dtype) -> np.ndarray:
        """A new C-ordered array (X - x_mean) / x_scale of ``dtype`` (the one n x d copy)."""
        out = np.empty(X.shape, dtype=dtype)
        step = max(1, (1 << 22) // max(1, X.shape[1]))
        for i0 in range(0, X.shape[0], step):
            block = (X[i0:i0 + step] - self.x_mean) / self.x_scale
            out[i0:i0 + step] = block
        return out

    def column(self, X, b, dtype) -> np.ndarray:
        """Column b of the transformed X, computed from the original X (no stored copy)."""
        return ((X[:, b] - self.x_mean[b]) / self.x_scale[b]).astype(dtype)


@dataclass
class GreedyPath:
    """Result of one greedy run at a fixed lambda."""

    lam: float
    selected: list = field(default_factory=list)
    loo_sse: list = field(default_factory=list)


def pick(scores: np.ndarray) -> int:
    """Index of the lowest score; near-ties (relative ``TIE_RTOL``) go to the lowest index."""
    finite = np.isfinite(scores)
    if not finite.any():
        return int(np.flatnonzero(~np.isnan(scores))[0])
    best = scores[finite].min()
    return int(np.flatnonzero(scores <= best + TIE_RTOL * abs(best))[0])


def greedy_select(X, Y, budget, lam, prep: Preprocessing, *, dtype=np.float64,
                  progress=None) -> GreedyPath:
    """Greedy forward selection of ``budget`` features by closed-form LOO (Algorithm 2).

    Each step scores every unselected candidate with :func:`_rls_math.candidate_loo_sse`,
    adds the lowest (ties to the lowest index) and updates the caches with
    :func:`_rls_math.add_feature`. Cost O(budget n d t) time, O(n d + n t) memory.
    ``progress(step)`` is called after each step.
    """
    R = prep.transform_into(X, dtype)
    Yc = np.asarray(Y, dtype=np.float64) - prep.y_mean
    E, h, P, sigma = rm.initial_caches(R, Yc)
    chosen = np.zeros(R.shape[1], dtype=bool)
    path = GreedyPath(lam=float(lam))
    for step in range(budget):
        scores = rm.candidate_loo_sse(R, E, h, P, sigma, lam)
        scores[chosen] = np.nan
        b = pick(scores)
        rm.add_feature(R, E, h, P, sigma, prep.column(X, b, dtype), b, lam)
        chosen[b] = True
        path.selected.append(b)
        path.loo_sse.append(rm.loo_sse(E, h))
        if progress is not None:
            progress(step + 1)
    return path


def select_with_lambda(X, Y, budget, lam, prep, *, dtype=np.float64, progress=None):
    """Run :func:`greedy_select` at ``lam``, or at every grid value when ``lam`` is None.

    Returns (best path, {lam: final LOO SSE}); the best lambda has the lowest LOO SSE at the
    full budget (ties to the smaller lambda).
    """
    grid = LAMBDA_GRID if lam is None else (float(lam),)
    paths = []
    for i, value in enumerate(grid):
        def tick(step, i=i):
            if progress is not None:
                progress(i * budget + step, len(grid) * budget)
        paths.append(greedy_select(X, Y, budget, value, prep, dtype=dtype, progress=tick))
    finals = {p.lam: p.loo_sse[-1] for p in paths}
    best = min(paths, key=lambda p: (p.loo_sse[-1], p.lam))
    return best, finals
