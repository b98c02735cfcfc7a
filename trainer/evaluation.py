"""Nested cross-validation of budgeted selection methods (the paper's protocol).

Outer K-fold: for each fold, every method sees the training rows only -- feature selection,
the LOO choice of lambda, standardization, label compression and label-subset choice all happen
inside the training fold -- and is scored on the held-out rows at every budget.

Budgets are counts of selection units (features, or extractors when extractor groups are
given), fractions of the units (``low``/``med``/``high`` = 10%/45%/80%, the paper's), or cost
limits (``price:5``, ``energy:0.2``, ``time:1``, ``sensors:2``).

Greedy methods at count budgets use the nesting of the greedy path at a fixed lambda: one path
per grid lambda to the largest budget K gives every smaller budget as a prefix; for budget k the
lambda with the lowest LOO error after k steps is taken and ridge weights are refitted on the
first k picks (exactly what ``GreedyRLS(budget=k, lam=best)`` returns; these runs use the
plain "error" rule, whose paths are nested). Cost budgets run one estimator per budget.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from . import baselines, label_compression
from ._rls_math import ridge_weights
from .costs import build_plan
from .errors import TrainerError
from .estimators import GreedyRLS
from .metrics import MULTILABEL_MEASURES, REGRESSION_MEASURES, multilabel_scores, regression_scores
from .selection import LAMBDA_GRID
from .bundle import json_default

PRESETS = {"low": 0.10, "med": 0.45, "high": 0.80}
LIMIT_PARAMS = {"price": "max_cost", "energy": "max_energy", "time": "max_time",
                "sensors": "max_sensors"}
COST_KEYS = ("extractors", "extractor_costs", "extractor_sensors", "sensor_costs")


@dataclass(frozen=True)
class Budget:
    """One budget: ``kind`` is "count", "fraction" or a cost kind of :data:`LIMIT_PARAMS`."""

    kind: str
    value: float
    label: str

    def count(self, n_units: int):
        """Number of units for count/fraction budgets (at least 1), None for cost budgets."""
        if self.kind == "count":
            return int(min(self.value, n_units))
        if self.kind == "fraction":
            return max(1, min(n_units, int(math.floor(self.value * n_units + 0.5))))
        return None


def parse_budgets(spec: str) -> list:
    """Budgets from "low,med,high", "3,5,10" (counts), "0.1,0.5" or "10%" (fractions) or
    "price:5,energy:0.2" (cost limits); raises :class:`TrainerError` for anything else."""
    out = []
    for item in (s.strip() for s in str(spec).split(",")):
        if not item:
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


@dataclass
class Setup:
    """Options shared by the methods of one evaluation."""

    task: str = "multilabel"
    fit_intercept: bool = True
    standardize: bool = True
    lam: float | None = None
    dtype: str = "float64"
    cost_kwargs: dict = field(default_factory=dict)
    compress_energy: float | None = None
    label_subset: int | None = None
    seed: int = 0

    def estimator_kwargs(self) -> dict:
        return dict(fit_intercept=self.fit_intercept, standardize=self.standardize,
                    dtype=self.dtype, **{k: v for k, v in self.cost_kwargs.items()
                                         if k in COST_KEYS and v is not None})


@dataclass
class Model:
    """A fitted model at one budget: predictions X[:, features] @ coef + intercept."""

    features: list
    coef: np.ndarray
    intercept: np.ndarray
    lam: object = None
    exact: bool = True

    def predict(self, X):
        return np.asarray(X, dtype=np.float64)[:, self.features] @ self.coef + self.intercept


def ridge_refit(X, Y, features, lam, x_mean, x_scale, fit_intercept) -> Model:
    """Ridge on the standardized columns ``features`` (the estimator's convention), weights in
    original units."""
    f = np.asarray(features, dtype=np.intp)
    y_mean = Y.mean(axis=0) if fit_intercept else np.zeros(Y.shape[1])
    W = ridge_weights((X[:, f] - x_mean[f]) / x_scale[f], Y - y_mean, lam)
    coef = W / x_scale[f][:, None]
    return Model(list(map(int, f)), coef, y_mean - x_mean[f] @ coef, lam=float(lam))


def prefix_models(X, Y_sel, Y_fit, counts, setup: Setup) -> dict:
    """{k: Model} for every k in ``counts``: one greedy path per grid lambda to max(counts);
    per k the lambda with the lowest LOO MSE after k steps (ties to the smaller lambda) and
    ridge weights for ``Y_fit`` on its first k picks."""
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
        out[k] = ridge_refit(X, Y_fit, feats, best.lam_, best.x_mean_, best.x_scale_,
                             setup.fit_intercept)
    return out


def _cost_models(X, Y_sel, Y_fit, budget: Budget, setup: Setup, mode="joint") -> Model:
    est = GreedyRLS(budget=None, lam=setup.lam, mode=mode, **setup.estimator_kwargs(),
                    **{LIMIT_PARAMS[budget.kind]: budget.value}).fit(X, Y_sel)
    if mode == "separate":
        return Model(list(map(int, est.selected_)), est.coef_, est.intercept_,
                     lam=est.lam_.tolist())
    return ridge_refit(X, Y_fit, est.selected_, est.lam_, est.x_mean_, est.x_scale_,
                       setup.fit_intercept)


def _plan(setup: Setup, n_features: int):
    kw = {k: setup.cost_kwargs.get(k) for k in COST_KEYS}
    return build_plan(n_features, feature_names=setup.cost_kwargs.get("feature_names"), **kw)


class GreedyJoint:
    """One shared feature set for all targets (Type II); optional SVD-compressed criterion."""

    name = "greedy-joint"

    def fit_predict(self, X, Y, budgets, setup: Setup) -> list:
        Y_sel = Y
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
    """Multi-task lasso (L1,2) with alpha searched per budget (:mod:`trainer.baselines`)."""

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
            fit = baselines.mtlasso_to_budget(X, Y, k, fit_intercept=setup.fit_intercept,
                                              standardize=setup.standardize)
            out.append(Model(list(map(int, fit.selected)), fit.coef, fit.intercept,
                             lam=fit.alpha, exact=fit.exact))
        return out


METHODS = {m.name: m for m in (GreedyJoint, GreedySeparate, MTLasso)}


def get_method(name_or_method):
    """A method instance from its registry name (or the object itself)."""
    if not isinstance(name_or_method, str):
        return name_or_method
    if name_or_method not in METHODS:
        raise TrainerError(f"unknown method {name_or_method!r}; choose from {sorted(METHODS)}")
    return METHODS[name_or_method]()


@dataclass
class EvalData:
    """The table to evaluate on; ``groups`` (e.g. recording ids) keep rows together in folds."""

    X: np.ndarray
    Y: np.ndarray
    task: str = "multilabel"
    target_names: list | None = None
    groups: np.ndarray | None = None

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for a in (self.X, self.Y) + (() if self.groups is None else (self.groups,)):
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()[:16]


def make_folds(n: int, n_folds: int, seed: int, groups=None) -> list:
    """[(train_idx, test_idx)]: shuffled K-fold, or group K-fold when ``groups`` has at least
    ``n_folds`` distinct values (rows of one group never straddle train and test)."""
    from sklearn.model_selection import GroupKFold, KFold

    if not 2 <= n_folds <= n:
        raise TrainerError(f"folds={n_folds} must be in 2..{n} (the number of rows)")
    if groups is not None and np.unique(groups).size >= n_folds:
        splitter = GroupKFold(n_splits=n_folds)
        return [(tr, te) for tr, te in splitter.split(np.zeros(n), groups=groups)]
    return list(KFold(n_folds, shuffle=True, random_state=seed).split(np.zeros(n)))


def encode_targets(Y, task: str) -> np.ndarray:
    """Training targets: labels 0/1 -> -1/+1 (scores > 0 mean "on"), regression as is."""
    Y = np.asarray(Y, dtype=np.float64)
    return 2.0 * Y - 1.0 if task in ("multilabel", "multiclass") else Y


def run_fold(data: EvalData, method, train, test, budgets, setup: Setup) -> list:
    """Fit ``method`` on the rows ``train`` and score it on ``test`` at every budget."""
    T = encode_targets(data.Y[train], setup.task)
    X_tr, X_te = data.X[train], data.X[test]
    B = None
    if setup.label_subset is not None:
        cols = label_compression.mlcssp_select(T, setup.label_subset, setup.seed)
        B = label_compression.reconstruction_matrix(T, cols)
        T = T[:, cols]
    models = method.fit_predict(X_tr, T, budgets, setup)
    rows = []
    plan = _plan(setup, data.X.shape[1])
    for budget, model in zip(budgets, models):
        scores = model.predict(X_te)
        scores = scores if B is None else label_compression.reconstruct(scores, B)
        if setup.task in ("multilabel", "multiclass"):
            values = multilabel_scores(data.Y[test], scores)
        else:
            values = regression_scores(data.Y[test], scores, data.target_names)
        ext = sorted({e for f in model.features for e in plan.needs[f]})
        row = {"method": method.name, "budget": budget.label, "n_features": len(model.features),
               "lam": model.lam, "exact": bool(model.exact),
               **{f"cost_{k}": v for k, v in plan.cost_dict(plan.totals_of(ext)).items()},
               **values}
        rows.append(row)
    return rows


@dataclass
class EvaluationResult:
    """Per-fold records (one per fold x method x budget) and the configuration."""

    records: list
    config: dict
    measures: list
    methods: list
    budgets: list

    def values(self, method, budget, measure) -> np.ndarray:
        """The per-fold values of ``measure`` in fold order."""
        rows = sorted((r for r in self.records if r["method"] == method and r["budget"] == budget),
                      key=lambda r: r["fold"])
        return np.array([np.nan if r.get(measure) is None else r[measure] for r in rows], float)


def evaluate(data: EvalData, methods, budgets, *, folds=10, setup: Setup | None = None,
             only_folds=None, cache_dir=None, progress=None) -> EvaluationResult:
    """Nested K-fold evaluation of ``methods`` (names or objects) at ``budgets`` (a spec string
    or :class:`Budget` list). ``only_folds`` runs a subset of the folds; ``cache_dir`` stores each
    (fold, method) result and reuses it on a re-run with the same configuration; ``progress`` is
    called as ``progress(done, total)``."""
    setup = setup or Setup(task=data.task)
    budgets = parse_budgets(budgets) if isinstance(budgets, str) else list(budgets)
    methods = [get_method(m) for m in methods]
    if data.task in ("multilabel", "multiclass") and not np.isin(data.Y, (0, 1)).all():
        raise TrainerError("multi-label evaluation needs 0/1 label columns")
    splits = make_folds(len(data.X), folds, setup.seed, data.groups)
    todo = [i for i in range(folds) if only_folds is None or i in set(only_folds)]
    config = {"folds": folds, "budgets": [asdict(b) for b in budgets],
              "setup": {k: v for k, v in asdict(setup).items() if k != "cost_kwargs"},
              "costs": hashlib.sha256(json.dumps(setup.cost_kwargs, sort_keys=True,
                                                 default=str).encode()).hexdigest()[:16],
              "data": data.fingerprint(),
              "shape": list(data.X.shape) + [data.Y.shape[1]], "grouped": bool(
                  data.groups is not None and np.unique(data.groups).size >= folds)}
    key = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]
    records, done, total = [], 0, len(todo) * len(methods)
    for i in todo:
        train, test = splits[i]
        for method in methods:
            rows = _cached(cache_dir, key, i, method.name)
            if rows is None:
                rows = json.loads(json.dumps(
                    [dict(r, fold=i, n_test=len(test))
                     for r in run_fold(data, method, train, test, budgets, setup)],
                    default=json_default))
                _store(cache_dir, key, i, method.name, rows)
            records.extend(rows)
            done += 1
            if progress is not None:
                progress(done, total)
    measures = list(MULTILABEL_MEASURES if setup.task in ("multilabel", "multiclass")
                    else REGRESSION_MEASURES)
    return EvaluationResult(records, config, measures, [m.name for m in methods],
                            [b.label for b in budgets])


def _cache_file(cache_dir, key, fold, method) -> Path:
    return Path(cache_dir) / key / f"fold{fold}-{method}.json"


def _cached(cache_dir, key, fold, method):
    if cache_dir is None:
        return None
    path = _cache_file(cache_dir, key, fold, method)
    return json.loads(path.read_text()) if path.is_file() else None


def _store(cache_dir, key, fold, method, rows) -> None:
    if cache_dir is None:
        return
    path = _cache_file(cache_dir, key, fold, method)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(rows, default=json_default))
    tmp.replace(path)

