"""Budgets, the shared setup and the selection methods compared by
:mod:`sensorbudget.trainer.evaluation.protocol`.

A method has a ``name`` and ``fit_predict(X, Y, budgets, setup)`` returning one :class:`Model`
per budget (with ``uses_groups = True`` it also gets the training rows' ``groups``). Greedy
methods at count budgets use the nesting of the greedy path at a fixed lambda (module notes of
:mod:`sensorbudget.trainer.evaluation.protocol`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from .. import label_compression, target_scaling
from ..errors import TrainerError
from ..estimators import GreedyRLS
from ..ranking import GreedyRankRLS
from ..selection.costs import build_plan
from ..selection.loop import LAMBDA_GRID
from ..selection.refit import Model, ridge_refit
from . import baselines
from .calibration import heldout_predictions, ridge_heldout

PRESETS = {"low": 0.10, "med": 0.45, "high": 0.80}
LIMIT_PARAMS = {"price": "max_cost", "energy": "max_energy", "time": "max_time",
                "sensors": "max_sensors"}
COST_KEYS = ("extractors", "extractor_costs", "extractor_sensors", "sensor_costs")


@dataclass(frozen=True)
class Budget:
    """One budget: ``kind`` is "count", "fraction" or a cost kind of :data:`LIMIT_PARAMS`;
    ``cap``: at most that many units under a cost budget (``"8@energy:6e-3"``, train's
    ``--budget 8 --max-energy 6e-3``), None for no count limit."""

    kind: str
    value: float
    label: str
    cap: int | None = None

    def count(self, n_units: int):
        """Number of units for count/fraction budgets (at least 1), None for cost budgets."""
        if self.kind == "count":
            return int(min(self.value, n_units))
        if self.kind == "fraction":
            return max(1, min(n_units, int(math.floor(self.value * n_units + 0.5))))
        return None


def parse_budgets(spec: str) -> list:
    """Budgets from "low,med,high", "3,5,10" (counts), "0.1,0.5" or "10%" (fractions),
    "price:5,energy:0.2" (cost limits) or "8@energy:0.2" (at most 8 units under a cost limit);
    raises :class:`TrainerError` for anything else."""
    out = []
    for item in (s.strip() for s in str(spec).split(",")):
        if not item:
            continue
        if "@" in item:
            out.append(_capped(item))
            continue
        if item in PRESETS:
            out.append(Budget("fraction", PRESETS[item], item))
            continue
        kind, _, text = item.rpartition(":") if ":" in item else ("", "", item)
        try:
            value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
        except ValueError:
            raise TrainerError(f"budget {item!r} is not a count, fraction, low/med/high or "
                               f"KIND:VALUE with KIND in {sorted(LIMIT_PARAMS)}") from None
        if kind:
            if kind not in LIMIT_PARAMS or value < 0:
                raise TrainerError(f"budget {item!r}: cost kind must be one of "
                                   f"{sorted(LIMIT_PARAMS)} and the value >= 0")
            out.append(Budget(kind, value, item))
        elif text.endswith("%") or (0 < value < 1):
            if not 0 < value <= 1:
                raise TrainerError(f"budget {item!r}: a fraction must be in (0, 1]")
            out.append(Budget("fraction", value, item))
        elif value >= 1 and value == int(value):
            out.append(Budget("count", int(value), item))
        else:
            raise TrainerError(f"budget {item!r} must be a positive integer count or a fraction")
    if not out:
        raise TrainerError(f"no budgets in {spec!r}")
    return out


def _capped(item: str) -> Budget:
    """``COUNT@KIND:VALUE``: a cost budget of at most COUNT units."""
    count, _, limit = (t.strip() for t in item.partition("@"))
    try:
        inner = parse_budgets(limit) if "@" not in limit and ":" in limit else []
    except TrainerError:
        inner = []
    if not (count.isdigit() and int(count) >= 1) or len(inner) != 1 or inner[0].kind not in \
            LIMIT_PARAMS:
        raise TrainerError(f"budget {item!r} must be COUNT@KIND:VALUE: a whole number of units "
                           f">= 1, then a cost limit with KIND in {sorted(LIMIT_PARAMS)}")
    return Budget(inner[0].kind, inner[0].value, item, cap=int(count))


@dataclass
class Setup:
    """Options shared by the methods of one evaluation."""

    task: str = "multilabel"
    fit_intercept: bool = True
    standardize: bool = True
    lam: float | None = None
    lam_search: str = "path"
    dtype: str = "float64"
    cost_kwargs: dict = field(default_factory=dict)
    compress_energy: float | None = None
    label_subset: int | None = None
    seed: int = 0
    threshold: str = "f1"        # multi-label decisions: rule of calibration.choose_thresholds
    standardize_targets: bool = False    # joint criterion / mtlasso on standardised targets

    def estimator_kwargs(self) -> dict:
        return dict(fit_intercept=self.fit_intercept, standardize=self.standardize,
                    dtype=self.dtype, **{k: v for k, v in self.cost_kwargs.items()
                                         if k in COST_KEYS and v is not None})


def _refit(X, Y_fit, features, est, setup: Setup) -> Model:
    """Ridge on ``features`` at ``est``'s lambda and scaling (:func:`ridge_refit`), with
    ``heldout()``: its LOO predictions of ``Y_fit`` on these training rows, intercept refitted
    per row (:func:`sensorbudget.trainer.evaluation.calibration.ridge_heldout`, the scores ``train
    --threshold`` chooses thresholds on)."""
    model = ridge_refit(X, Y_fit, features, est.lam_, est.x_mean_, est.x_scale_,
                        setup.fit_intercept)
    model.heldout = partial(ridge_heldout, X, Y_fit, model.features, est.lam_, est.x_mean_,
                            est.x_scale_, setup.fit_intercept)
    return model


def prefix_models(X, Y_sel, Y_fit, counts, setup: Setup) -> dict:
    """{k: Model} for every k in ``counts``, ridge weights for ``Y_fit`` on the picks.

    lambda given: one greedy path to max(counts), its prefixes. ``lam_search="path"`` (the
    default, as :class:`~sensorbudget.trainer.GreedyRLS`'s): one ``GreedyRLS(budget=k)`` with its steered
    search per k (about two runs each). ``"grid"``: one greedy path per grid lambda to
    max(counts); per k the lambda with the lowest LOO MSE after k steps (ties to the smaller
    lambda) and its first k picks (31 runs)."""
    if setup.lam is None and setup.lam_search == "path":
        out = {}
        for k in sorted(set(counts)):
            est = GreedyRLS(budget=k, lam=None, lam_search="path", strategy="error",
                            **setup.estimator_kwargs()).fit(X, Y_sel)
            out[k] = _refit(X, Y_fit, est.selected_, est, setup)
        return out
    K = max(counts)
    grid = LAMBDA_GRID if setup.lam is None else (float(setup.lam),)
    fits = [GreedyRLS(budget=K, lam=v, strategy="error", **setup.estimator_kwargs()).fit(X, Y_sel)
            for v in grid]
    out = {}
    for k in sorted(set(counts)):
        def loo(est, k=k):
            return est.path_[min(k, len(est.path_)) - 1]["loo_mse"]
        best = min(fits, key=lambda e: (loo(e), e.lam_))
        feats = [f for entry in best.path_[:k] for f in entry["added"]]
        out[k] = _refit(X, Y_fit, feats, best, setup)
    return out


def _cost_models(X, Y_sel, Y_fit, budget: Budget, setup: Setup, mode="joint") -> Model:
    est = GreedyRLS(budget=budget.cap, lam=setup.lam, mode=mode, **setup.estimator_kwargs(),
                    **{LIMIT_PARAMS[budget.kind]: budget.value}).fit(X, Y_sel)
    if mode == "separate":
        model = Model(list(map(int, est.selected_)), est.coef_, est.intercept_,
                      lam=est.lam_.tolist())
        model.heldout = partial(heldout_predictions, est, X, Y_fit)
        return model
    return _refit(X, Y_fit, est.selected_, est, setup)


def _selection_targets(Y, setup: Setup):
    """The targets the joint criterion selects on: standardised with the training fold's own
    means and scales under ``setup.standardize_targets`` (weights are refitted on Y)."""
    if not setup.standardize_targets:
        return Y
    return target_scaling.standardize(Y, setup.fit_intercept)[0]


def _plan(setup: Setup, n_features: int):
    kw = {k: setup.cost_kwargs.get(k) for k in COST_KEYS}
    return build_plan(n_features, feature_names=setup.cost_kwargs.get("feature_names"), **kw)


class GreedyJoint:
    """One shared feature set for all targets (Type II); optional SVD-compressed criterion."""

    name = "greedy-joint"

    def fit_predict(self, X, Y, budgets, setup: Setup) -> list:
        Y_sel = _selection_targets(Y, setup)
        if setup.compress_energy is not None:
            Y_sel, _ = label_compression.compress_targets(
                Y, setup.compress_energy, center=setup.fit_intercept)
        n_units = _plan(setup, X.shape[1]).n_extractors
        counts = [b.count(n_units) for b in budgets if b.count(n_units) is not None]
        prefix = prefix_models(X, Y_sel, Y, counts, setup) if counts else {}
        return [prefix[b.count(n_units)] if b.count(n_units) is not None
                else _cost_models(X, Y_sel, Y, b, setup) for b in budgets]


class _Separate(Model):
    """Per-target models side by side (columns of the prediction)."""

    def __init__(self, models):
        self.models = models
        feats = sorted({f for m in models for f in m.features})
        super().__init__(feats, None, None, lam=[m.lam for m in models],
                         exact=all(m.exact for m in models))
        if all(hasattr(m, "heldout") for m in models):
            self.heldout = lambda: np.column_stack([m.heldout() for m in models])

    def predict(self, X):
        return np.column_stack([m.predict(X) for m in self.models])


class GreedySeparate:
    """Each target its own feature set of the same size (Type I), single-target greedy RLS."""

    name = "greedy-separate"

    def fit_predict(self, X, Y, budgets, setup: Setup) -> list:
        n_units = _plan(setup, X.shape[1]).n_extractors
        counts = [b.count(n_units) for b in budgets if b.count(n_units) is not None]
        per_target = [prefix_models(X, Y[:, [q]], Y[:, [q]], counts, setup) if counts else {}
                      for q in range(Y.shape[1])]
        return [_Separate([p[b.count(n_units)] for p in per_target])
                if b.count(n_units) is not None
                else _cost_models(X, Y, Y, b, setup, mode="separate") for b in budgets]


class MTLasso:
    """Multi-task lasso (L1,2) with alpha searched per budget
    (:mod:`sensorbudget.trainer.evaluation.baselines`)."""

    name = "mtlasso"

    def fit_predict(self, X, Y, budgets, setup: Setup) -> list:
        ext = setup.cost_kwargs.get("extractors")
        if ext is not None and len({str(e) for e in ext}) < len(ext):
            raise TrainerError("mtlasso selects single features; it cannot be used with "
                               "extractor groups (use --unit feature)")
        out = []
        for b in budgets:
            k = b.count(X.shape[1])
            if k is None:
                raise TrainerError(f"mtlasso supports count/fraction budgets only, not {b.label!r}")
            Z, m, s = (target_scaling.standardize(Y, setup.fit_intercept)
                       if setup.standardize_targets else (Y, 0.0, 1.0))
            fit = baselines.mtlasso_to_budget(X, Z, k, fit_intercept=setup.fit_intercept,
                                              standardize=setup.standardize)
            coef, intercept = target_scaling.fold_back(fit.coef, fit.intercept, m, s)
            out.append(Model(list(map(int, fit.selected)), coef, intercept,
                             lam=fit.alpha, exact=fit.exact))
        return out


class GreedyRankMethod:
    """Evaluation method "greedy-rank": :class:`GreedyRankRLS` per budget, fitted with the
    training fold's query ids (``groups``); for :func:`sensorbudget.trainer.evaluation.protocol.evaluate`."""

    name = "greedy-rank"
    uses_groups = True

    def fit_predict(self, X, Y, budgets, setup, groups=None) -> list:
        n_units = _plan(setup, X.shape[1]).n_extractors
        kwargs = {k: v for k, v in setup.estimator_kwargs().items() if k != "fit_intercept"}
        out = []
        for b in budgets:
            k = b.count(n_units)
            limit = {} if k is not None else {LIMIT_PARAMS[b.kind]: b.value}
            est = GreedyRankRLS(budget=k if k is not None else b.cap, lam=setup.lam, **kwargs,
                                **limit).fit(X, Y, groups)
            out.append(Model(list(map(int, est.selected_)), est.coef_, est.intercept_,
                             lam=float(est.lam_)))
        return out


def _methods() -> dict:
    return {m.name: m for m in (GreedyJoint, GreedySeparate, MTLasso, GreedyRankMethod)}


def get_method(name_or_method):
    """A method instance from its registry name (or the object itself). A method has a
    ``name`` and ``fit_predict(X, Y, budgets, setup)`` returning one :class:`Model` per budget;
    with ``uses_groups = True`` it also gets the training rows' ``groups``."""
    if not isinstance(name_or_method, str):
        return name_or_method
    methods = _methods()
    if name_or_method not in methods:
        raise TrainerError(f"unknown method {name_or_method!r}; choose from {sorted(methods)}")
    return methods[name_or_method]()
