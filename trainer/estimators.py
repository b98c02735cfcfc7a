"""scikit-learn estimators for budgeted multi-target greedy RLS feature selection:
:class:`GreedyRLS` (regression) and the shared fit logic; :class:`GreedyRLSClassifier` lives in
:mod:`sensorbudget.trainer.classifier`."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.feature_selection import SelectorMixin

from sklearn.utils.validation import check_is_fitted, validate_data

from . import target_scaling
from .errors import TrainerError
from .selection import fitted
from .selection.caches import target_columns
from .selection.heldout import observed_heldout
from .selection.lam_search import choose_lambda
from .selection.loop import Preprocessing
from .selection.refit import observed_ridge
from .selection.validation import (
    budget_unit,
    check_budget,
    check_fit_data,
    check_groups,
    check_magnitudes,
    check_params,
    check_target_range,
    is_distributed_input,
    target_names,
    validate_targets_allow_nan,
)

_DTYPES = {"float64": np.float64, "float32": np.float32}


class _GreedyRLSBase:
    """Shared fit logic: validation, the greedy path(s), weights in original units."""

    def __init__(self, budget=10, lam=None, fit_intercept=True, standardize=True,
                 dtype="float64", extractors=None, extractor_costs=None,
                 extractor_sensors=None, sensor_costs=None, max_cost=None, max_sensors=None,
                 max_energy=None, max_time=None, mode="joint", strategy="auto",
                 backend="local", client=None, n_partitions=None, lam_search="path",
                 standardize_targets=False, max_ram=None, max_flash=None):
        self.budget = budget
        self.standardize_targets = standardize_targets
        self.lam = lam
        self.lam_search = lam_search
        self.fit_intercept = fit_intercept
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
        self.max_ram = max_ram
        self.max_flash = max_flash
        self.mode = mode
        self.strategy = strategy
        self.backend = backend
        self.client = client
        self.n_partitions = n_partitions

    def _check_params(self, n_samples, n_features):
        return check_params(self, n_samples, n_features)

    def _fit_targets(self, X, Y, progress=None, groups=None, target_names=None):
        """Select features for the target matrix Y (n x t, NaN = missing) and set every fitted
        attribute; ``groups`` (n,) switches the criterion to leave-group-out. With
        ``backend="dask"`` the rows go to Dask workers (:meth:`_fit_on_cluster`). Constant
        targets and budgets beyond a fold's rows are refused before any computation."""
        if getattr(self, "backend", "local") == "dask":
            groups = check_groups(groups, X.shape[0])
            return self._fit_on_cluster(np.asarray(X, dtype=np.float64), Y, groups, progress)
        scaling = None
        if getattr(self, "standardize_targets", False):
            Y, *scaling = target_scaling.standardize(Y, self.fit_intercept)
        n, d = X.shape
        plan = self._check_params(n, d)
        groups = check_groups(groups, n)
        check_fit_data(self, Y, groups, target_names)
        X = np.asarray(X, dtype=np.float64)
        check_magnitudes(X, Y)
        prep = Preprocessing.fit(X, Y, self.fit_intercept, self.standardize)
        n_groups = None if groups is None else int(np.unique(groups).size)
        self._select_and_refit(plan, prep, lambda c: (X, target_columns(Y, c)), Y.shape, n_groups,
                               partial(observed_ridge, X, Y), progress, groups,
                               partial(observed_heldout, X, Y, groups))
        if scaling is not None:
            target_scaling.fold_estimator(self, *scaling)
        return self

    def _fit_on_cluster(self, X, Y, groups=None, progress=None):
        """:meth:`_fit_targets` with the rows on Dask workers
        (:class:`sensorbudget.trainer.distributed.row_store.ClusterRows`); adds ``distributed_`` and
        ``selected_range_``."""
        # dask is an optional dependency (sensorbudget[dask]): imported for this backend only
        from .distributed.row_store import ClusterRows

        if getattr(self, "standardize_targets", False):
            raise TrainerError("standardize_targets=True needs the local backend (not Dask)")
        if not isinstance(X, np.ndarray):
            self.__dict__.pop("feature_names_in_", None)          # names of an earlier fit
        with ClusterRows(X, Y, groups, client=getattr(self, "client", None),
                         n_partitions=self.n_partitions) as rows:
            n, d = rows.shape
            self.n_features_in_ = d
            plan = self._check_params(n, d)
            check_target_range(*rows.target_range())
            check_budget(rows.fold_rows(), self.budget, fit_intercept=self.fit_intercept,
                         what=budget_unit(self))
            prep = rows.preprocessing(self.fit_intercept, self.standardize)
            self._select_and_refit(plan, prep, lambda c: (rows.source(c), None),
                                   (n, rows.n_targets), rows.n_groups, rows.ridge, progress,
                                   heldout=rows.heldout)
            self.selected_range_ = rows.selected_range(self.selected_)
            self.distributed_ = rows.info()
        return self

    def _select_and_refit(self, plan, prep, data_of, n_t, n_groups, ridge, progress,
                          groups=None, heldout=None):
        """The greedy run(s) on ``data_of(columns)`` (the rows and targets of each run), then
        the path attributes, the ridge weights (``ridge``, :func:`fitted.set_weights`) and the
        held-out predictions (``heldout``, :func:`fitted.set_heldout`); ``n_t`` = (rows,
        targets). Warns when a searched lambda is at an end of the grid."""
        n, t = n_t
        columns = self._target_columns(t)
        fits = [choose_lambda(*data_of(c), self.budget, self.lam,
                              replace(prep, y_mean=prep.y_mean[c]),
                              lam_search=getattr(self, "lam_search", "path"),
                              dtype=_DTYPES[self.dtype], progress=progress, plan=plan,
                              strategy=self.strategy, groups=groups) for c in columns]
        infos = [info for _, _, info in fits]
        self.lam_search_ = infos[0] if self.mode == "joint" else infos
        fits = [(path, finals) for path, finals, _ in fits]
        fitted.set_path(self, plan, fits, n, n_groups)
        fitted.set_weights(self, prep, columns, fits, ridge)
        fitted.set_heldout(self, prep, columns, fits, heldout, n)
        fitted.warn_lambda_edge(self)

    def _target_columns(self, t: int) -> list:
        """The target columns of each greedy run: all (joint) or one per run (separate)."""
        return ([np.arange(t)] if self.mode == "joint" else [np.array([q]) for q in range(t)])

    def __sklearn_clone__(self):
        """Clones share a ``client`` object (a connection, which cannot be deep-copied)."""
        client = getattr(self, "client", None)
        if client is None or isinstance(client, str):
            return super().__sklearn_clone__()
        self.client = None
        try:
            new = super().__sklearn_clone__()
        finally:
            self.client = client
        new.client = client
        return new

    def _get_support_mask(self):
        check_is_fitted(self, "selected_")
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.selected_] = True
        return mask

    def _scores(self, X):
        check_is_fitted(self, "selected_")
        X = validate_data(self, X, reset=False)
        return np.asarray(X, dtype=np.float64)[:, self.selected_] @ self.coef_ + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


class GreedyRLS(_GreedyRLSBase, SelectorMixin, RegressorMixin, BaseEstimator):
    """Budgeted multi-target feature selection by greedy regularized least squares.

    At every step the feature whose addition gives the lowest leave-one-out (LOO) squared error,
    summed over all targets, is added (Naula et al. 2014, Algorithm 2); LOO errors come in closed
    form from Sherman-Morrison updates, so ``budget`` steps cost O(budget n d t). With
    ``fit(X, y, groups=...)`` the criterion is the leave-group-out error instead (windows of one
    recording held out together), at the same complexity. Missing target values (NaN) are
    allowed: each target uses its observed rows (centred with their means) and the joint
    criterion sums the per-target criteria.

    Parameters
    ----------
    budget : int or None, default=10
        Number of extractors to select (without ``extractors``: features), 1 <= budget <=
        n_extractors; None means no count limit (the other budgets, or the candidates, end it).
    lam : float or None, default=None
        Ridge parameter; None chooses it by the criterion at the full budget over the grid
        2^-15 ... 2^15 (see ``lam_search``).
    fit_intercept : bool, default=True
        Fit an unpenalized intercept. The criterion (LOO or leave-group-out) is then exactly
        that of ridge with the intercept refitted without the held-out rows (closed form:
        the hat matrix is J/n + H_c; :class:`sensorbudget.trainer.selection.loop.Preprocessing`).
    standardize : bool, default=True
        Scale each feature to unit standard deviation (over all rows) before selection;
        weights are reported in original feature units either way. The scale is *not*
        refitted per held-out fold: it is a fixed per-feature weighting of the penalty.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the n x d working arrays (float32 halves memory for large data).
    extractors : sequence of length n_features or None, default=None
        For each feature column, the name of the extractor that yields it, or a tuple of names
        when it needs several (a fusion / Cartesian feature). Choosing an extractor adds every
        feature whose extractors are then all chosen. None: each column is its own extractor,
        named after ``feature_names_in_`` (or ``x0, x1, ...``).
    extractor_costs : dict or None, default=None
        {extractor: price} or {extractor: {"price", "energy", "time"}} (absent kinds 0); must
        cover every extractor. None: price 1 each, or 0 each when ``sensor_costs`` is given.
    extractor_sensors : dict or None, default=None
        {extractor: [sensor, ...]}: the sensors an extractor needs (unlisted extractors need
        none). A sensor is paid once, when the first extractor needing it is chosen.
    sensor_costs : dict or None, default=None
        {sensor: price} or {sensor: {"price", "energy", "time"}} for every sensor named in
        ``extractor_sensors`` (None: sensors are free but still counted). An entry may say
        ``"level": "transform"`` (shared computation, not a sensor) and place a resource on a
        sensor's rate ladder (``rate_hz``, ``sample_rate_hz``, ``sensor``: the sensor is then
        paid at the rate the device reads it; :mod:`.selection.rate_closure`).
    max_cost, max_sensors, max_energy, max_time : float or None, default=None
        Hard budgets on the total unit price (BOM), the number of sensors, and the energy and
        time per prediction (sums over chosen extractors and sensors).
    max_ram : float or None, default=None
        Budget on the ``ram`` cost kind: static bytes of the firmware that the extractors and
        their shared resources (ring buffers, scratch arrays) add (``train --board``;
        :mod:`sensorbudget.firmware_gen.memory`).
    max_flash : float or None, default=None
        Budget on the ``flash`` cost kind: bytes of code and constant data the extractors and
        their shared parts (a kind's code, spectrum tables) add (``train --max-flash``;
        :mod:`sensorbudget.firmware_gen.memory_flash`).
    mode : {"joint", "separate"}, default="joint"
        joint: one extractor set for all targets; separate: each target its own set (each
        within the budgets), reported with the union cost and the average per-target cost.
    strategy : {"auto", "cost-ratio", "error"}, default="auto"
        error: lowest LOO error; cost-ratio: largest LOO error decrease per unit of added
        (budget-weighted) cost; auto: both under the same budgets, keep the lower final LOO
        error (only "error" runs when all candidates cost the same).
    backend : {"local", "dask"}, default="local"
        Where the rows live: in this process, or partitioned over Dask workers
        (:mod:`sensorbudget.trainer.distributed.row_store`; same picks, path and weights to round-off). A Dask
        array X or a :class:`sensorbudget.trainer.distributed.dask_data.ShardTable` always uses Dask. Missing
        targets (NaN) need the local backend.
    client : distributed.Client, str or None, default=None
        The Dask client (clones share it), a scheduler address, ``"local:N"`` (a LocalCluster
        of N worker processes for this fit), or None for the current default client.
    n_partitions : int or None, default=None
        Row partitions of a NumPy X with the Dask backend (default: one per worker); a Dask
        array has one per row chunk, a shard table one per file.
    lam_search : {"path", "grid"}, default="path"
        How lambda is chosen when ``lam`` is None. "grid": one greedy run per grid value, the
        lowest final criterion wins (31 runs). "path": one greedy run steered along the grid
        by the exact criterion of its current set at every lambda, then the greedy run at the
        best lambda of the final set (at most about 2.3 runs;
        :mod:`sensorbudget.trainer.selection.lam_search`). The Dask backend always uses the grid.
    standardize_targets : bool, default=False
        Select and fit on targets scaled to unit standard deviation (centred with an
        intercept), then fold the scales into ``coef_`` and ``intercept_`` (w_j s_j,
        b_j s_j + m_j): predictions stay in target units, the criterion is on the
        standardised scale (:mod:`sensorbudget.trainer.target_scaling`). Off, a fit whose target standard
        deviations differ more than 10x warns.

    Attributes
    ----------
    selected_ : ndarray of shape (k,)
        Selected feature indices in selection order.
    selected_extractors_ : list of str
        Selected extractor names in selection order.
    required_sensors_ : list of str
        Sensors the selected extractors need, in the order they were first needed.
    path_ : list of dict
        Per step: ``added`` (feature indices), ``added_extractors``, ``added_sensors``,
        ``costs`` (cumulative extractors, sensors, price, energy, time), ``loo_mse`` and
        ``loo_mse_per_target`` (separate mode adds ``costs_mean_per_target``).
    costs_ : dict
        Final cumulative costs (union over targets in separate mode).
    strategy_ : str (list of str in separate mode)
        The choice rule whose path was kept.
    loo_path_ : ndarray of shape (k,)
        For each selected feature, the criterion's mean squared error (LOO, or leave-group-out
        when ``groups`` was given) over all scored entries after the step that added it.
    criterion_ : {"loo", "leave-group-out"}
        The selection criterion: LOO, or with ``fit(..., groups=...)`` the leave-group-out
        squared error (each group held out in turn; exact, :mod:`sensorbudget.trainer.selection.holdout_math`).
    n_groups_ : int or None
        Number of sample groups (None without groups).
    target_rows_ : ndarray of shape (n_targets,)
        Rows each target was scored and fitted on (its non-NaN rows).
    lam_ : float (ndarray of shape (n_targets,) in separate mode)
        The ridge parameter used.
    lam_loo_ : ndarray
        When ``lam`` is None, the criterion's MSE for each grid value: of that value's own
        path ("grid") or of the selected set refitted at that value ("path"); else for ``lam``.
    lam_search_ : dict (list of dict in separate mode)
        How lambda was chosen: ``method`` ("fixed", "grid" or "path"), ``runs`` (greedy runs),
        and for "path" the ``start``, the steered run's ``moves`` [(step, lambda)] and the
        ``curves`` evaluated.
    heldout_predictions_ : ndarray of shape (n_samples, n_targets)
        The criterion's held-out predictions of the final model, in the original target units
        and rows in input order: each row predicted by ridge refitted (weights *and*
        intercept) without it (LOO) or without its group, at ``lam_`` on the selected
        features (each target's own in separate mode); NaN where a target is missing. Their
        squared errors sum to the last criterion value. Exact closed form
        (:mod:`sensorbudget.trainer.selection.heldout`); scaling is not refitted per fold (see
        ``standardize``). For :class:`GreedyRLSClassifier`: the held-out scores of the +1/-1
        encoded labels (one column per label or class).
    coef_ : ndarray of shape (k, n_targets)
        Weights of the selected features in original units (0 where a feature is not in a
        target's set in separate mode).
    intercept_ : ndarray of shape (n_targets,)
    target_mean_, target_scale_ : ndarray of shape (n_targets,)
        With ``standardize_targets`` only: the m and s the fit used (already folded in).
    target_paths_, target_selected_, costs_mean_per_target_ :
        Separate mode only: each target's path and features, and the average per-target costs.
    distributed_, selected_range_ :
        Dask backend only: partitions (labels, workers, rows), bytes and seconds per step; the
        (min, max) of each selected column over all rows (what a bundle records of X).
    """

    def fit(self, X, y, groups=None, progress=None):
        """Select extractors for the targets ``y`` and fit the ridge model on their features.

        ``y`` may hold NaN (missing values): each target is scored and fitted on its observed
        rows. ``groups`` (one id per row: recording, subject, ...) makes the criterion the
        leave-group-out error; ``progress(done, total)`` is called after every greedy step.
        A Dask array ``X`` (and ``y``), or a :class:`sensorbudget.trainer.distributed.dask_data.ShardTable` (then
        ``y`` is None: the shards hold the targets), is fitted on Dask workers (see ``backend``).
        """
        if is_distributed_input(X):
            self._y_1d = y is not None and np.ndim(y) == 1
            if y is not None and not hasattr(y, "__dask_graph__"):
                y = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
            return self._fit_on_cluster(X, y, groups, progress)
        names = target_names(y)
        X, y = validate_targets_allow_nan(self, X, y)
        Y = np.asarray(y, dtype=np.float64)
        self._y_1d = Y.ndim == 1
        if not self.standardize_targets and not target_scaling.is_label_codes(Y):
            target_scaling.warn_scales(Y, names)
        return self._fit_targets(X, Y.reshape(len(Y), -1), progress, groups, names)

    def predict(self, X):
        """Predicted targets: X[:, selected_] @ coef_ + intercept_."""
        scores = self._scores(X)
        return scores.ravel() if self._y_1d else scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
