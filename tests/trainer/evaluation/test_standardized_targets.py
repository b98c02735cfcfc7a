"""Evaluation methods with standardised targets (Setup.standardize_targets): greedy-joint's
prefix path against GreedyRLS(standardize_targets=True), mtlasso against a fit on the
standardised targets unscaled by hand, greedy-separate unchanged (its criterion is per target
and scale-free)."""

import numpy as np
import pytest

from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.evaluation import baselines
from sensorbudget.trainer.evaluation.methods import GreedyJoint, GreedySeparate, MTLasso, Setup, parse_budgets
from sensorbudget.trainer.target_scaling import TargetScaleWarning


def _data(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(70, 9))
    Y = np.column_stack([X[:, 0] - X[:, 1], X[:, 2] + X[:, 3], X[:, 4] - X[:, 5]])
    Y = (Y + 0.4 * rng.normal(size=Y.shape)) * [1.0, 150.0, 0.05] + [3.0, -200.0, 0.0]
    return X, Y


@pytest.mark.parametrize("seed", [0, 1])
def test_greedy_joint_prefixes_equal_the_estimator_on_standardised_targets(seed):
    X, Y = _data(seed)
    setup = Setup(task="regression", lam=1.0, standardize_targets=True)
    models = GreedyJoint().fit_predict(X, Y, parse_budgets("1,2,4"), setup)
    for k, model in zip((1, 2, 4), models):
        est = GreedyRLS(budget=k, lam=1.0, standardize_targets=True).fit(X, Y)
        assert list(model.features) == est.selected_.tolist()
        np.testing.assert_allclose(model.predict(X), est.predict(X), rtol=1e-9, atol=1e-9)
    with pytest.warns(TargetScaleWarning):                # raw targets: the largest decides
        raw = GreedyJoint().fit_predict(X, Y, parse_budgets("2"),
                                        Setup(task="regression", lam=1.0))
        assert list(raw[0].features) == GreedyRLS(budget=2, lam=1.0).fit(X, Y).selected_.tolist()


def test_mtlasso_predicts_in_target_units():
    X, Y = _data(2)
    setup = Setup(task="regression", standardize_targets=True)
    (model,) = MTLasso().fit_predict(X, Y, parse_budgets("3"), setup)
    m, s = Y.mean(0), Y.std(0)
    fit = baselines.mtlasso_to_budget(X, (Y - m) / s, 3)
    assert list(model.features) == list(map(int, fit.selected))
    np.testing.assert_allclose(model.predict(X), fit.predict(X) * s + m, rtol=1e-9, atol=1e-9)


def test_greedy_separate_is_unchanged():
    X, Y = _data(3)
    budgets = parse_budgets("2")
    on = GreedySeparate().fit_predict(X, Y, budgets, Setup(task="regression", lam=1.0,
                                                            standardize_targets=True))[0]
    off = GreedySeparate().fit_predict(X, Y, budgets, Setup(task="regression", lam=1.0))[0]
    assert on.features == off.features
    np.testing.assert_allclose(on.predict(X), off.predict(X), rtol=1e-12)
