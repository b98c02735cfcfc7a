"""Nested cross-validation: budgets, exact prefix models, no test-fold leaks, caching, reports."""

import json

import numpy as np
import pytest

import sensorbudget.trainer.evaluation.baselines as baselines
import sensorbudget.trainer.selection.loop as loop
from sensorbudget.trainer import GreedyRLS, label_compression
from sensorbudget.trainer.errors import TrainerError
from sensorbudget.trainer.evaluation.protocol import (
    Budget,
    EvalData,
    GreedyJoint,
    Setup,
    encode_targets,
    evaluate,
    make_folds,
    parse_budgets,
    prefix_models,
)
from sensorbudget.trainer.evaluation.report import markdown_report, summary_table, wilcoxon_tests, write_report


def multilabel_data(n=48, d=8, t=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = np.zeros((d, t))
    W[:3] = rng.normal(size=(3, t))
    Y = (X @ W + 0.5 * rng.normal(size=(n, t)) > 0).astype(float)
    return EvalData(X, Y, "multilabel", [f"l{j}" for j in range(t)])


def regression_data(n=40, d=7, t=3, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = X[:, :3] @ rng.normal(size=(3, t)) + 0.3 * rng.normal(size=(n, t))
    return EvalData(X, Y, "regression", [f"y{j}" for j in range(t)])


# -- budgets -------------------------------------------------------------------------------
def test_parse_budgets():
    low, med, high = parse_budgets("low,med,high")
    assert [low.count(72), med.count(72), high.count(72)] == [7, 32, 58]
    assert [low.count(103), med.count(103), high.count(103)] == [10, 46, 82]
    assert [b.count(10) for b in parse_budgets("3, 0.25,50%,1")] == [3, 3, 5, 1]
    assert parse_budgets("price:2.5")[0] == Budget("price", 2.5, "price:2.5")
    assert parse_budgets("price:2.5")[0].count(10) is None
    assert parse_budgets("20")[0].count(8) == 8
    for bad in ("", "x", "1.5", "0", "volts:3", "price:-1", "150%"):
        with pytest.raises(TrainerError):
            parse_budgets(bad)


# -- greedy prefix models ---------------------------------------------------------------------
def test_prefix_models_equal_separate_estimator_fits():
    data = multilabel_data()
    T = encode_targets(data.Y, "multilabel")
    models = prefix_models(data.X, T, T, [1, 3, 5], Setup())
    for k, model in models.items():
        ref = GreedyRLS(budget=k).fit(data.X, T)               # its own LOO choice of lambda
        assert model.features == ref.selected_.tolist()
        assert model.lam == ref.lam_
        np.testing.assert_allclose(model.coef, ref.coef_, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(model.predict(data.X), ref.predict(data.X), atol=1e-10)


@pytest.mark.parametrize("lam_search", ["path", "grid"])
def test_separate_method_equals_single_target_runs(lam_search):
    """Per target, the method's model is GreedyRLS's with the same lambda search (at the
    largest budget the grid's prefix rule is the estimator's grid rule)."""
    data = regression_data()
    [model] = run_fold_models(data, "greedy-separate", "3", lam_search=lam_search)
    for q in range(3):
        ref = GreedyRLS(budget=3, lam_search=lam_search).fit(data.X, data.Y[:, q])
        np.testing.assert_allclose(model.predict(data.X)[:, q], ref.predict(data.X), atol=1e-10)


def test_path_search_costs_a_few_runs_per_budget(monkeypatch):
    """The default prefix models fit one GreedyRLS per budget, not 31 paths."""
    data = multilabel_data()
    T = encode_targets(data.Y, "multilabel")
    calls = []
    original = GreedyRLS.fit
    monkeypatch.setattr(GreedyRLS, "fit", lambda self, *a, **k: calls.append(self.lam_search)
                        or original(self, *a, **k))
    prefix_models(data.X, T, T, [1, 3, 5], Setup())
    assert calls == ["path"] * 3
    calls.clear()
    prefix_models(data.X, T, T, [1, 3, 5], Setup(lam_search="grid"))
    assert len(calls) == 31


def run_fold_models(data, name, budgets, **setup):
    from sensorbudget.trainer.evaluation.protocol import get_method

    return get_method(name).fit_predict(data.X, encode_targets(data.Y, data.task),
                                        parse_budgets(budgets), Setup(task=data.task, **setup))


def test_mtlasso_hits_budgets_inside_evaluation():
    result = evaluate(multilabel_data(), ["mtlasso"], "1,3,6", folds=3)
    for r in result.records:
        assert r["n_features"] == int(r["budget"])


# -- no leaks --------------------------------------------------------------------------------
class RowSpy:
    """Records which rows (identified by their X or Y values) every selection call sees."""

    def __init__(self, monkeypatch, data):
        self.x_rows = {row.tobytes(): i for i, row in enumerate(data.X)}
        self.y_rows = {row.tobytes(): i for i, row in enumerate(data.Y)}
        self.seen = set()
        for owner, name, arg in [(GreedyRLS, "fit", 1),
                                 (loop, "greedy_select", 0),
                                 (baselines, "mtlasso_to_budget", 0),
                                 (label_compression, "compress_targets", None),
                                 (label_compression, "mlcssp_select", None),
                                 (label_compression, "reconstruction_matrix", None)]:
            monkeypatch.setattr(owner, name, self.wrap(getattr(owner, name), arg))
        original = loop.Preprocessing.fit.__func__
        monkeypatch.setattr(loop.Preprocessing, "fit", classmethod(
            lambda cls, X, *a, **k: (self.record(X, self.x_rows), original(cls, X, *a, **k))[1]))

    def record(self, A, index):
        self.seen |= {index[np.ascontiguousarray(row, dtype=float).tobytes()] for row in A}

    def wrap(self, func, arg):
        def spy(*args, **kwargs):
            if arg is None:                                    # label functions: Y rows
                self.record(args[0], self.y_rows)
            else:
                self.record(args[arg], self.x_rows)
            return func(*args, **kwargs)
        return spy


def leaking_folds(monkeypatch, data, methods, folds=3, **setup):
    """Fold indices in which a selection call saw a row outside the training fold."""
    spy = RowSpy(monkeypatch, data)
    splits = make_folds(len(data.X), folds, 0)
    bad = []
    for i, (train, test) in enumerate(splits):
        spy.seen = set()
        evaluate(data, methods, "2,4", folds=folds, only_folds=[i],
                 setup=Setup(task=data.task, **setup))
        assert spy.seen, "the spy saw nothing: the check would be vacuous"
        if not spy.seen <= set(train.tolist()) or spy.seen & set(test.tolist()):
            bad.append(i)
    return bad


@pytest.mark.parametrize("setup", [{}, {"compress_energy": 0.99}, {"label_subset": 2}])
def test_no_test_fold_reaches_selection_or_lambda(monkeypatch, setup):
    data = regression_data()                                   # unique X and Y rows
    methods = ["greedy-joint", "greedy-separate", "mtlasso"]
    assert leaking_folds(monkeypatch, data, methods, **setup) == []


def test_planted_leak_is_caught(monkeypatch):
    data = regression_data()

    class LeakyGreedy(GreedyJoint):
        """Selects (and picks lambda) on every row, then predicts the test fold."""

        name = "leaky"

        def fit_predict(self, X, Y, budgets, setup):
            return super().fit_predict(data.X, data.Y, budgets, setup)

    assert leaking_folds(monkeypatch, data, [LeakyGreedy()]) == [0, 1, 2]


# -- label options, caching, groups, costs ----------------------------------------------------
def test_full_rank_compression_gives_identical_results():
    data = multilabel_data(t=5)
    plain = evaluate(data, ["greedy-joint"], "2,5", folds=3)
    packed = evaluate(data, ["greedy-joint"], "2,5", folds=3,
                      setup=Setup(compress_energy=1.0))
    for a, b in zip(plain.records, packed.records):
        assert a["lam"] == b["lam"]
        assert a["hamming_loss"] == b["hamming_loss"]
        assert a["macro_auc"] == pytest.approx(b["macro_auc"], abs=1e-12)


def test_label_subset_of_all_labels_changes_nothing():
    data = multilabel_data()
    plain = evaluate(data, ["greedy-joint"], "3", folds=3)
    subset = evaluate(data, ["greedy-joint"], "3", folds=3, setup=Setup(label_subset=3))
    for a, b in zip(plain.records, subset.records):
        assert a["macro_auc"] == pytest.approx(b["macro_auc"], abs=1e-9)


def test_cache_makes_reruns_cheap(tmp_path, monkeypatch):
    data = multilabel_data()
    first = evaluate(data, ["greedy-joint"], "2", folds=3, only_folds=[1], cache_dir=tmp_path)
    calls = []
    monkeypatch.setattr(GreedyJoint, "fit_predict", lambda *a: calls.append(1))
    full = evaluate(data, ["greedy-joint"], "2", folds=3, only_folds=[1], cache_dir=tmp_path)
    assert calls == [] and full.records == first.records
    with pytest.raises(TypeError):                             # another config: not cached
        evaluate(data, ["greedy-joint"], "3", folds=3, only_folds=[1], cache_dir=tmp_path)


def test_grouped_folds_keep_groups_together():
    groups = np.repeat(np.arange(8), 5)
    for train, test in make_folds(40, 4, 0, groups):
        assert not set(groups[train]) & set(groups[test])


def test_cost_budgets_respect_the_limit():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 6))
    Y = (X[:, [0, 2]] + 0.3 * rng.normal(size=(40, 2)) > 0).astype(float)
    costs = {"extractors": [f"e{i // 2}" for i in range(6)],
             "extractor_sensors": {"e0": ["a"], "e1": ["b"], "e2": ["a", "c"]},
             "sensor_costs": {"a": 1.0, "b": 2.0, "c": 1.5}}
    result = evaluate(EvalData(X, Y), ["greedy-joint", "greedy-separate"], "price:2.5,1",
                      folds=3, setup=Setup(cost_kwargs=costs))
    for r in result.records:
        if r["budget"] == "price:2.5" and r["method"] == "greedy-joint":
            assert 0 < r["cost_price"] <= 2.5
        if r["budget"] == "1":
            assert r["cost_extractors"] == 1 or r["method"] == "greedy-separate"
    with pytest.raises(TrainerError, match="extractor groups"):
        evaluate(EvalData(X, Y), ["mtlasso"], "1", folds=3, setup=Setup(cost_kwargs=costs))


def test_regression_measures_and_bad_inputs():
    result = evaluate(regression_data(), ["greedy-joint", "mtlasso"], "2,5", folds=4)
    assert result.measures == ["mse", "mae", "r2"]
    assert len(result.records) == 4 * 2 * 2
    assert all("mse[y0]" in r for r in result.records)
    with pytest.raises(TrainerError, match="0/1"):
        evaluate(EvalData(np.ones((10, 2)), np.full((10, 1), 2.0)), ["greedy-joint"], "1")
    with pytest.raises(TrainerError, match="unknown method"):
        evaluate(multilabel_data(), ["ridge"], "1")
    with pytest.raises(TrainerError, match="folds=1"):
        evaluate(multilabel_data(), ["greedy-joint"], "1", folds=1)


# -- reports -----------------------------------------------------------------------------------
def test_report_files_contain_the_printed_numbers(tmp_path):
    result = evaluate(multilabel_data(), ["greedy-joint", "mtlasso"], "2,4", folds=3)
    printed = summary_table(result)
    out = write_report(result, tmp_path / "rep", notes=["a note"])
    text = (out / "report.md").read_text()
    cells = [c.strip() for line in printed.splitlines()[1:] for c in line.split("  ") if "±" in c]
    assert len(cells) == 9 * 2 * 2
    for cell in cells:
        assert cell in text
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = json.loads((out / "results.json").read_text())
    assert len(saved["records"]) == len(result.records)
    assert (out / "summary.csv").read_text().count("\n") == 1 + 2 * 2 * 9
    assert len(wilcoxon_tests(result)) == 2 * 9
    assert "a note" in text and "Wilcoxon" in text
    assert "per-label thresholds (f1)" in text and "at 0 for mtlasso" in text
    assert printed.splitlines()[-1].startswith("decisions: per-label thresholds (f1)")
    write_report(result, out)                                  # replacing an old report works
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


def test_a_target_constant_in_a_training_fold_is_an_error_before_any_fit():
    data = multilabel_data(n=12)
    data.Y[:, 2] = 0
    data.Y[make_folds(12, 3, 0)[1][1][0], 2] = 1                  # on in fold 1 only
    with pytest.raises(TrainerError, match=r"single value in the training rows of fold 1"):
        evaluate(data, ["greedy-joint"], "2", folds=3)


def test_markdown_mentions_auc_skips():
    data = multilabel_data(n=12)
    splits = make_folds(12, 3, 0)
    data.Y[:, 2] = 0
    data.Y[[splits[0][1][0], splits[1][1][0]], 2] = 1   # on in two folds, absent from the third
    result = evaluate(data, ["greedy-joint"], "2", folds=3)
    assert "skipped" in markdown_report(result)
