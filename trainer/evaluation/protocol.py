"""Nested cross-validation of budgeted selection methods (the paper's protocol).

Outer K-fold: for each fold, every method sees the training rows only -- feature selection,
the LOO choice of lambda, standardization, label compression and label-subset choice all happen
inside the training fold -- and is scored on the held-out rows at every budget. The outer folds
respect recordings and time (:mod:`sensorbudget.trainer.evaluation.folds`): windows of recordings keep each
recording in one fold, or, with fewer recordings than folds, form contiguous blocks in time with
a gap of one window length; only rows without groups or windows are shuffled.

Budgets are counts of selection units (features, or extractors when extractor groups are
given), fractions of the units (``low``/``med``/``high`` = 10%/45%/80%, the paper's), or cost
limits (``price:5``, ``energy:0.2``, ``time:1``, ``sensors:2``).

Ranking (``task="ranking"``): ``groups`` are the query ids; folds keep queries whole, the
measures are the pairwise ranking error and the pairwise squared error within queries
(:mod:`sensorbudget.trainer.evaluation.ranking_metrics`), and the method "greedy-rank" (:class:`sensorbudget.trainer.ranking.
GreedyRankMethod`) selects by leave-query-out error with the training fold's query ids.

Greedy methods at count budgets use the nesting of the greedy path at a fixed lambda: one path
per grid lambda to the largest budget K gives every smaller budget as a prefix; for budget k the
lambda with the lowest LOO error after k steps is taken and ridge weights are refitted on the
first k picks (exactly what ``GreedyRLS(budget=k, lam=best)`` returns; these runs use the
plain "error" rule, whose paths are nested). Cost budgets run one estimator per budget.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from .. import label_compression, target_scaling
from ..bundle.decision import decide_scores
from ..bundle.files import json_default
from ..errors import TrainerError
from ..tasks import encode_labels
from .calibration import choose_thresholds
from .folds import choose_split, fold_classes, make_split, outer_folds, overlap_warning
from .methods import (
    COST_KEYS,
    LIMIT_PARAMS,
    PRESETS,
    Budget,
    GreedyJoint,
    GreedySeparate,
    Model,
    MTLasso,
    Setup,
    _plan,
    get_method,
    parse_budgets,
    prefix_models,
    ridge_refit,
)
from .metrics import (
    CLASS_MEASURES,
    DECISION_MEASURES,
    MULTILABEL_MEASURES,
    REGRESSION_MEASURES,
    f1_scores,
    multilabel_scores,
    one_hot_classes,
    regression_scores,
    task_scores,
)
from .ranking_metrics import RANKING_MEASURES, ranking_scores

__all__ = ["COST_KEYS", "LIMIT_PARAMS", "PRESETS", "Budget", "EvalData", "EvaluationResult",
           "GreedyJoint", "GreedySeparate", "MTLasso", "Model", "Setup", "encode_targets",
           "evaluate", "get_method", "make_folds", "parse_budgets", "prefix_models",
           "ridge_refit", "run_fold"]


@dataclass
class EvalData:
    """The table to evaluate on; ``groups`` (e.g. recording ids) keep rows together in folds."""

    X: np.ndarray
    Y: np.ndarray
    task: str = "multilabel"
    target_names: list | None = None
    groups: np.ndarray | None = None
    window_start: np.ndarray | None = None   # windows of recordings: first sample of each
    window: int | None = None                # their length in samples
    hop: int | None = None

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for a in (self.X, self.Y) + (() if self.groups is None else (self.groups,)):
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()[:16]


def make_folds(n: int, n_folds: int, seed: int, groups=None, *, split="auto",
               window_start=None, window=None, classes=None) -> list:
    """[(train_idx, test_idx)]: grouped (stratified by ``classes`` when given), blocked
    (contiguous in time with a gap of one window) or shuffled K-fold; ``auto`` as
    :func:`sensorbudget.trainer.evaluation.folds.choose_split`."""
    kind = choose_split(split, n_folds, groups, window_start)
    return make_split(kind, n, n_folds, seed, groups, window_start, window, classes)


def encode_targets(Y, task: str) -> np.ndarray:
    """Training targets: labels 0/1 -> -1/+1 (scores > 0 mean "on"), regression as is."""
    Y = np.asarray(Y, dtype=np.float64)
    return encode_labels(Y) if task in ("multilabel", "multiclass") else Y


def fold_thresholds(model, Y_train, B, setup: Setup) -> tuple:
    """(thresholds (L,), rule used) for a multi-label model fitted on a training fold, chosen
    as ``train --threshold`` chooses them: :func:`sensorbudget.trainer.evaluation.calibration.
    choose_thresholds` with ``setup.threshold`` on the model's LOO scores of the fold's rows
    (``model.heldout()``, reconstructed through ``B`` for a label subset) against their 0/1
    labels. Multiclass, rule "zero", and methods without closed-form held-out scores (mtlasso)
    decide at 0; the rule returned says so."""
    L = Y_train.shape[1]
    if setup.task != "multilabel" or setup.threshold == "zero":
        return np.zeros(L), "zero"
    heldout = getattr(model, "heldout", None)
    if heldout is None:
        return np.zeros(L), "zero (no held-out scores)"
    scores = heldout()
    scores = scores if B is None else label_compression.reconstruct(scores, B)
    return choose_thresholds(scores, Y_train, setup.threshold), setup.threshold


def run_fold(data: EvalData, method, train, test, budgets, setup: Setup) -> list:
    """Fit ``method`` on the rows ``train`` and score it on ``test`` at every budget."""
    T = encode_targets(data.Y[train], setup.task)
    X_tr, X_te = data.X[train], data.X[test]
    B = None
    if setup.label_subset is not None:
        cols = label_compression.mlcssp_select(T, setup.label_subset, setup.seed)
        B = label_compression.reconstruction_matrix(T, cols)
        T = T[:, cols]
    extra = {"groups": data.groups[train]} if getattr(method, "uses_groups", False) else {}
    models = method.fit_predict(X_tr, T, budgets, setup, **extra)
    rows = []
    plan = _plan(setup, data.X.shape[1])
    for budget, model in zip(budgets, models):
        scores = model.predict(X_te)
        scores = scores if B is None else label_compression.reconstruct(scores, B)
        if setup.task == "multiclass":      # one decision rule: the class of the largest score
            values = task_scores("multiclass", data.Y[test], scores,
                                 decide_scores(scores, "multiclass"))
            values.update(decision="argmax", classes=list(data.target_names))
        elif setup.task == "multilabel":
            thresholds, rule = fold_thresholds(model, data.Y[train], B, setup)
            D = decide_scores(scores, "multilabel", thresholds)    # the one decision rule
            values = {**multilabel_scores(data.Y[test], scores, decisions=D),
                      **f1_scores(data.Y[test], D), "decision": rule}
        elif setup.task == "ranking":
            values = ranking_scores(data.Y[test], scores.reshape(data.Y[test].shape),
                                    data.groups[test])
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
             only_folds=None, cache_dir=None, progress=None, split="auto") -> EvaluationResult:
    """Nested K-fold evaluation of ``methods`` (names or objects) at ``budgets`` (a spec string
    or :class:`Budget` list). ``split`` chooses the outer folds (:mod:`sensorbudget.trainer.evaluation.folds`:
    auto, group, blocked, shuffled); every method and budget is checked against the smallest
    training fold before the first fit (:func:`check_combinations`). ``only_folds`` runs a subset of the folds; ``cache_dir`` stores each
    (fold, method) result and reuses it on a re-run with the same configuration; ``progress`` is
    called as ``progress(done, total)``."""
    setup = setup or Setup(task=data.task)
    budgets = parse_budgets(budgets) if isinstance(budgets, str) else list(budgets)
    methods = [get_method(m) for m in methods]
    if data.task == "multiclass" and data.Y.shape[1] == 1:   # a column of class values (0/1:
        names, one_hot = one_hot_classes(data.Y[:, 0])          # two classes, binary)
        data = replace(data, Y=one_hot, target_names=names)
    if data.task == "multiclass" and not (np.isin(data.Y, (0, 1)).all()
                                          and (data.Y.sum(axis=1) == 1).all()):
        raise TrainerError("multi-class evaluation needs one column of class values or "
                           "one-hot 0/1 columns (one 1 per row)")
    if data.task == "multilabel" and not np.isin(data.Y, (0, 1)).all():
        raise TrainerError("multi-label evaluation needs 0/1 label columns")
    _check_ranking(data, methods, folds)
    kind = choose_split(split, folds, data.groups, data.window_start)
    splits, stratified = outer_folds(kind, len(data.X), folds, setup.seed, data.groups,
                                     data.window_start, data.window,
                                     fold_classes(data.Y, data.task))
    check_combinations(data, methods, budgets, splits, setup)
    if kind == "shuffled" and data.window is not None and (data.hop or 0) < data.window:
        overlap_warning(data.window, data.hop, "evaluate")
    todo = [i for i in range(folds) if only_folds is None or i in set(only_folds)]
    config = {"folds": folds, "budgets": [asdict(b) for b in budgets],
              "setup": {k: v for k, v in asdict(setup).items() if k != "cost_kwargs"},
              "costs": hashlib.sha256(json.dumps(setup.cost_kwargs, sort_keys=True,
                                                 default=str).encode()).hexdigest()[:16],
              "data": data.fingerprint(),
              "shape": list(data.X.shape) + [data.Y.shape[1]], "grouped": kind == "group",
              "split": kind, "stratified": stratified, "window": data.window, "hop": data.hop}
    key = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]
    if setup.task == "regression" and not setup.standardize_targets:
        target_scaling.warn_scales(data.Y, data.target_names)      # once, not per fold
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", target_scaling.TargetScaleWarning)
        records = _run_folds(data, methods, budgets, splits, todo, setup, cache_dir, key,
                             progress)
    measures = list(MULTILABEL_MEASURES + DECISION_MEASURES if setup.task == "multilabel"
                    else CLASS_MEASURES if setup.task == "multiclass"
                    else RANKING_MEASURES if setup.task == "ranking" else REGRESSION_MEASURES)
    return EvaluationResult(records, config, measures, [m.name for m in methods],
                            [b.label for b in budgets])


def _run_folds(data, methods, budgets, splits, todo, setup, cache_dir, key, progress) -> list:
    """The records of every fold in ``todo`` and method (cached per (fold, method))."""
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
    return records


def check_combinations(data: EvalData, methods, budgets, splits, setup: Setup) -> None:
    """Every (method, budget) is possible on every training fold, checked before any fit:
    a target with a single value in a training fold, a count budget of more features than the
    smallest training fold has rows, mtlasso with a cost budget or with extractor groups, are
    :class:`TrainerError` naming them."""
    rows = min(len(train) for train, _ in splits)
    names = data.target_names or [f"column {j}" for j in range(data.Y.shape[1])]
    for i, (train, _) in enumerate(splits):
        Y = np.asarray(data.Y[train], dtype=np.float64)
        with np.errstate(invalid="ignore"):
            flat = np.nanmax(Y, axis=0) == np.nanmin(Y, axis=0)
        if flat.any():
            j = int(np.argmax(flat))
            raise TrainerError(f"target {names[j]!r} has a single value in the training rows "
                               f"of fold {i}: nothing can be learnt there; use fewer folds or "
                               f"drop the target")
    plan = _plan(setup, data.X.shape[1])
    ext = setup.cost_kwargs.get("extractors")
    for method in methods:
        n_units = data.X.shape[1] if method.name == "mtlasso" else plan.n_extractors
        if method.name == "mtlasso" and ext is not None and len({str(e) for e in ext}) < len(ext):
            raise TrainerError("mtlasso selects single features; it cannot be used with "
                               "extractor groups (use --unit feature)")
        for b in budgets:
            k = b.count(n_units)
            if k is None and method.name == "mtlasso":
                raise TrainerError(f"mtlasso supports count/fraction budgets only, not "
                                   f"{b.label!r}")
            if k is not None and k > rows:
                raise TrainerError(f"budget {b.label!r} ({k} features) with method "
                                   f"{method.name!r} exceeds the {rows} rows of the smallest "
                                   f"training fold; use a smaller budget or fewer folds")


def _check_ranking(data: EvalData, methods, folds: int) -> None:
    """Ranking needs query ids, at least ``folds`` queries (folds keep them whole), and
    methods that need query ids need a ranking task."""
    grouped = [m.name for m in methods if getattr(m, "uses_groups", False)]
    if data.task != "ranking":
        if grouped:
            raise TrainerError(f"method {grouped[0]!r} needs task 'ranking' (query ids as groups)")
        return
    if data.groups is None:
        raise TrainerError("ranking evaluation needs query ids (groups)")
    n_queries = np.unique(data.groups).size
    if n_queries < folds:
        raise TrainerError(f"ranking evaluation has {n_queries} queries; folds={folds} needs at "
                           f"least {folds} (folds keep queries whole)")


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

