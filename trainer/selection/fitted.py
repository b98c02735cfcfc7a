"""The fitted attributes of the greedy estimators from their greedy runs: the path, the ridge
weights in original units, the held-out predictions, and the warning for a lambda at the edge
of the grid (the estimators in :mod:`sensorbudget.trainer.estimators` call these)."""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np

from ..errors import TrainerWarning
from .loop import LAMBDA_GRID, merge_target_paths, path_records


def set_path(est, plan, fits, n_samples, n_groups) -> None:
    """The selection attributes of ``est`` from the runs' paths
    (:func:`sensorbudget.trainer.selection.loop.select_with_lambda` results)."""
    records = [path_records(path, plan, n_samples) for path, _ in fits]
    paths = [path for path, _ in fits]
    est.criterion_ = paths[0].criterion
    est.n_groups_ = n_groups
    est.target_rows_ = np.asarray([r for p in paths for r in p.target_rows], dtype=np.intp)
    est.path_ = records[0] if est.mode == "joint" else merge_target_paths(records, plan)
    est.selected_ = np.asarray([f for e in est.path_ for f in e["added"]], dtype=np.intp)
    est.selected_extractors_ = [x for e in est.path_ for x in e["added_extractors"]]
    est.required_sensors_ = [s for e in est.path_ for s in e["added_sensors"]]
    est.costs_ = dict(est.path_[-1]["costs"])
    est.loo_path_ = np.asarray([e["loo_mse"] for e in est.path_ for _ in e["added"]])
    est.cost_plan_ = plan
    est.strategy_ = paths[0].strategy if est.mode == "joint" else [p.strategy for p in paths]
    if est.mode == "separate":
        est.target_paths_ = records
        est.target_selected_ = [np.asarray(p.selected, dtype=np.intp) for p in paths]
        est.costs_mean_per_target_ = dict(est.path_[-1]["costs_mean_per_target"])


def set_weights(est, prep, columns, fits, ridge) -> None:
    """Ridge weights on the selected features (per target in separate mode), original units.

    ``ridge(f, cols, p, lam)`` returns, for the features f and target columns cols (centred
    and scaled by p), [(targets within cols, Preprocessing q, W)]: one entry per target
    observation mask, each with the map of its rows
    (:func:`sensorbudget.trainer.selection.caches.target_blocks`).
    """
    sel = est.selected_
    position = {int(f): i for i, f in enumerate(sel)}
    coef = np.zeros((sel.size, prep.y_mean.size))
    intercept = np.zeros(prep.y_mean.size)
    lams, loos = [], []
    for cols, (path, finals) in zip(columns, fits):
        f = np.asarray(path.selected, dtype=np.intp)
        at = np.array([position[i] for i in f], dtype=np.intp)
        for targets, p, W in ridge(f, cols, replace(prep, y_mean=prep.y_mean[cols]), path.lam):
            coef[np.ix_(at, cols[targets])] = W / p.x_scale[f][:, None]
            intercept[cols[targets]] = p.y_mean - p.x_mean[f] @ (W / p.x_scale[f][:, None])
        size = float(np.sum(path.target_rows))
        lams.append(path.lam)
        loos.append(np.array([finals[v] for v in LAMBDA_GRID]) / size if est.lam is None
                    else np.asarray([path.loo_sse[-1] / size]))
    est.lam_ = lams[0] if est.mode == "joint" else np.asarray(lams)
    est.lam_loo_ = loos[0] if est.mode == "joint" else np.asarray(loos)
    est.x_mean_ = prep.x_mean
    est.x_scale_ = prep.x_scale
    est.coef_ = coef
    est.intercept_ = intercept


def set_heldout(est, prep, columns, fits, heldout, n_samples) -> None:
    """``heldout_predictions_`` (n x t, rows in input order, NaN where a target is missing):
    the LOO / leave-group-out predictions of the final model of each run, with the intercept
    refitted per fold. ``heldout(f, cols, p, lam)`` returns [(rows or None, targets within
    cols, predictions)] (:func:`sensorbudget.trainer.selection.heldout.observed_heldout`)."""
    out = np.full((n_samples, prep.y_mean.size), np.nan)
    for cols, (path, _) in zip(columns, fits if heldout is not None else ()):
        f = np.asarray(path.selected, dtype=np.intp)
        for rows, targets, pred in heldout(f, cols, replace(prep, y_mean=prep.y_mean[cols]),
                                           path.lam):
            out[np.ix_(np.arange(n_samples) if rows is None else rows, cols[targets])] = pred
    est.heldout_predictions_ = out


def warn_lambda_edge(est) -> None:
    """A :class:`TrainerWarning` when a searched lambda is at either end of the grid: the
    criterion may still fall beyond it (the issue's lambda = 2^-15 chosen without a word)."""
    if est.lam is not None:
        return
    lams = np.atleast_1d(est.lam_)
    for q, lam in enumerate(lams.tolist()):
        end = ("lower" if lam == LAMBDA_GRID[0] else "upper" if lam == LAMBDA_GRID[-1]
               else None)
        if end is None:
            continue
        who = f" for target column {q}" if est.mode == "separate" else ""
        beyond = "smaller" if end == "lower" else "larger"
        warnings.warn(f"lambda={lam:.3g} (2^{round(math.log2(lam))}) chosen{who} at the {end} "
                      f"end of the grid 2^-15..2^15: the criterion may keep falling for "
                      f"{beyond} values; give --lam (lam=) to fix it explicitly",
                      TrainerWarning, stacklevel=4)
