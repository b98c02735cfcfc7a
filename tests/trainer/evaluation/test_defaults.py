"""Default budgets and methods of an evaluation (trainer.evaluation.defaults)."""

import numpy as np
import pytest

from sensorbudget.trainer.evaluation.defaults import default_budgets, default_methods, power_of_two_counts
from sensorbudget.trainer.evaluation.methods import Setup, parse_budgets
from sensorbudget.trainer.evaluation.protocol import EvalData, evaluate


@pytest.mark.parametrize("cap", [1, 2, 3, 8, 15, 64, 72])
def test_power_of_two_counts_against_a_slow_enumeration(cap):
    slow = sorted({k for k in range(1, cap + 1) if k == cap or (k & (k - 1)) == 0})
    assert power_of_two_counts(cap) == slow


@pytest.mark.parametrize("n, d, folds", [(30, 40, 3), (50, 6, 5), (21, 21, 2)])
def test_default_budgets_run_where_high_fails(n, d, folds):
    rng = np.random.default_rng(n + d)
    X = rng.normal(size=(n, d))
    data = EvalData(X, X[:, :2] @ np.array([[1.0, 0.5], [0.2, -1.0]]), task="regression")
    setup = Setup(task="regression", lam=1.0)
    budgets, note = default_budgets(data, setup, folds)
    rows = n - int(np.ceil(n / folds))                    # KFold's smallest training fold
    cap = min(d, rows // 2)
    assert [b.value for b in budgets] == power_of_two_counts(cap) and f"{rows} rows" in note
    result = evaluate(data, ["greedy-joint"], budgets, folds=folds, setup=setup)
    assert set(result.budgets) == {b.label for b in budgets}


def test_default_methods_follow_the_budget_kind():
    setup = Setup(task="regression")
    assert default_methods("regression", parse_budgets("1,2"), setup, 5) == (
        ["greedy-joint", "greedy-separate", "mtlasso"], [])
    methods, notes = default_methods("regression", parse_budgets("1,energy:0.2"), setup, 5)
    assert methods == ["greedy-joint", "greedy-separate"] and "'energy:0.2'" in notes[0]
    grouped = Setup(task="regression", cost_kwargs={"extractors": ["a", "a", "b"]})
    methods, notes = default_methods("regression", parse_budgets("1"), grouped, 3)
    assert "mtlasso" not in methods and "extractor groups" in notes[0]
    assert default_methods("ranking", parse_budgets("1"), setup, 5)[0] == ["greedy-rank",
                                                                           "greedy-joint"]
