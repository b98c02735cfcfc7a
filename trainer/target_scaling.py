"""Standardised targets for multi-target regression, folded back into target units.

The joint criterion sums squared errors over targets, so a target in large units (a standard
deviation of 4904 next to one of 237) dominates the selection. With standardised targets each
target counts by its share of explained variance instead. The fit then runs on

    Z = (Y - m) / s        (m: column means with an intercept, else 0; s: column std)

and, because a ridge fit on fixed features and lambda is linear in the targets, the model on
Z folds back exactly into target units:

    y_j = z_j * s_j + m_j = x . (w_j * s_j) + (b_j * s_j + m_j)

so the stored weights W[:, j] * s_j and intercepts b_j * s_j + m_j predict in the targets' own
units and every exporter (ONNX, C header, C library, firmware) stays unchanged. Held-out
predictions fold back the same way. Only the selection criterion (``loo_path_``, the path's
``loo_mse``, ``lam_loo_``) stays on the standardised scale: it is the mean over targets of
MSE_j / var_j. Missing targets (NaN) are left out of m and s.
"""

from __future__ import annotations

import warnings

import numpy as np

from .errors import TrainerError, TrainerWarning

#: Ratio of the largest to the smallest target standard deviation above which a fit without
#: standardised targets warns.
SCALE_RATIO_WARNING = 10.0


class TargetScaleWarning(TrainerWarning):
    """Target standard deviations differ more than :data:`SCALE_RATIO_WARNING` times."""


def target_moments(Y, center: bool = True) -> tuple:
    """(m, s): per-column mean (zeros without ``center``) and standard deviation of ``Y``
    (n x t, NaN = missing) over the observed rows; raises for a column with s = 0."""
    Y = np.asarray(Y, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)            # an all-NaN column
        m = np.nanmean(Y, axis=0) if center else np.zeros(Y.shape[1])
        s = np.nanstd(Y, axis=0)
    bad = np.flatnonzero(~(np.isfinite(s) & (s > 0)))
    if bad.size:
        raise TrainerError(f"target column {int(bad[0])} has standard deviation "
                           f"{float(s[bad[0]])!r}; standardised targets need a spread > 0")
    return m, s


def standardize(Y, center: bool = True) -> tuple:
    """(Z, m, s) with Z = (Y - m) / s (:func:`target_moments`)."""
    m, s = target_moments(Y, center)
    return (np.asarray(Y, dtype=np.float64) - m) / s, m, s


def fold_back(coef, intercept, m, s) -> tuple:
    """(W * s, b * s + m): weights and intercepts of a fit on standardised targets in target
    units (``coef`` k x t, ``intercept`` t)."""
    s = np.asarray(s, dtype=np.float64)
    return (np.asarray(coef, dtype=np.float64) * s,
            np.asarray(intercept, dtype=np.float64) * s + np.asarray(m, dtype=np.float64))


def fold_estimator(est, m, s) -> None:
    """Put a fitted estimator's ``coef_``, ``intercept_`` and ``heldout_predictions_`` of a fit
    on standardised targets into target units (:func:`fold_back`); set ``target_mean_`` and
    ``target_scale_``."""
    est.coef_, est.intercept_ = fold_back(est.coef_, est.intercept_, m, s)
    est.heldout_predictions_ = np.asarray(est.heldout_predictions_) * s + m
    est.target_mean_, est.target_scale_ = np.asarray(m), np.asarray(s)


def scale_ratio(Y) -> float:
    """Largest over smallest positive per-target standard deviation (1.0 for one target)."""
    Y = np.asarray(Y, dtype=np.float64).reshape(len(Y), -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        s = np.nanstd(Y, axis=0)
    s = s[np.isfinite(s) & (s > 0)]
    return float(s.max() / s.min()) if s.size > 1 else 1.0


def warn_scales(Y, names=None) -> None:
    """Warn (:class:`TrainerWarning`) when the target standard deviations differ by more than
    :data:`SCALE_RATIO_WARNING` times: the joint criterion is then dominated by the largest."""
    ratio = scale_ratio(Y)
    if ratio <= SCALE_RATIO_WARNING:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        s = np.nanstd(np.asarray(Y, dtype=np.float64), axis=0)
    names = list(names) if names is not None else [f"target {j}" for j in range(s.size)]
    hi, lo = int(np.nanargmax(s)), int(np.nanargmin(np.where(s > 0, s, np.nan)))
    warnings.warn(f"target standard deviations differ {ratio:.3g}x ({names[hi]} {s[hi]:.4g}, "
                  f"{names[lo]} {s[lo]:.4g}; limit {SCALE_RATIO_WARNING:g}x): the joint "
                  f"criterion is dominated by the largest; standardize_targets=True "
                  f"(--standardize-targets) weighs them equally", TargetScaleWarning,
                  stacklevel=3)


def is_label_codes(Y) -> bool:
    """Every column holds at most two distinct values (label codes such as 0/1 or -1/+1), for
    which differing scales mean class imbalance, not units."""
    Y = np.asarray(Y, dtype=np.float64).reshape(len(Y), -1)
    return all(np.unique(col[~np.isnan(col)]).size <= 2 for col in Y.T)


def bundle_entry(m, s) -> dict:
    """The bundle's ``target_scaling`` entry: the means and scales the fit used, already folded
    into the stored weights (exporters need nothing of it)."""
    return {"mean": [float(v) for v in m], "scale": [float(v) for v in s],
            "criterion": "standardised targets (mean over targets of MSE_j / var_j)",
            "folded": True}


def mse_in_target_units(per_target, scale, weights=None) -> tuple:
    """(mean, per_target) in the targets' units of MSEs measured on standardised targets:

        MSE_j = MSE~_j * s_j^2          mean = sum_j r_j MSE_j / sum_j r_j

    Exact for LOO, leave-group-out and held-out errors: a fold's residual on target j folds
    back as y - y^ = s_j (z - z^) (m_j cancels; the intercept is refitted per fold). ``weights``
    r_j: the rows target j was scored on (the joint criterion's SSE over all scored entries;
    None or all equal: the plain mean over targets, as the separate mode's)."""
    per = np.asarray(per_target, dtype=np.float64) * np.asarray(scale, dtype=np.float64) ** 2
    r = np.ones(per.size) if weights is None else np.asarray(weights, dtype=np.float64)
    return float(np.sum(r * per) / np.sum(r)), per


def path_in_target_units(meta: dict) -> list:
    """A bundle's ``path`` entries (copies) whose ``loo_mse`` and ``loo_mse_per_target`` are in
    the targets' units (:func:`mse_in_target_units` with the stored ``target_scaling`` scales);
    each entry keeps the criterion the selection minimised as ``criterion_mse``. Unchanged
    copies without ``target_scaling``. The one conversion every surface uses (train, info,
    --plot, simulate, compare, the HTML report)."""
    entries = [dict(e) for e in meta.get("path") or []]
    scaling = meta.get("target_scaling")
    if not scaling:
        return entries
    scale = scaling["scale"]
    joint = (meta.get("costs") or {}).get("mode", "joint") != "separate"
    rows = meta.get("target_rows") if joint else None
    for e in entries:
        per = e.get("loo_mse_per_target")
        if not isinstance(per, list) or len(per) != len(scale):
            raise TrainerError(f"path step {e.get('step')}: loo_mse_per_target={per!r} needs "
                               f"one value per target_scaling scale ({len(scale)})")
        e["criterion_mse"] = e["loo_mse"]
        e["loo_mse"], per = mse_in_target_units(per, scale, rows)
        e["loo_mse_per_target"] = per.tolist()
    return entries
