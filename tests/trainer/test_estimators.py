"""scikit-learn conformance and the classifier's label encoding."""

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier, TrainerError


# budget=2: the checks' toy problems need two features to reach their accuracy thresholds;
# with one-feature data fit raises the "n_features=1" error the checks accept.
@parametrize_with_checks([GreedyRLS(budget=2), GreedyRLSClassifier(budget=2)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_multilabel_encoding_and_predict():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 6))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] + X[:, 2] > 0]).astype(int)
    est = GreedyRLSClassifier(budget=3, lam=0.1, threshold=0.0).fit(X, Y)
    reg = GreedyRLS(budget=3, lam=0.1).fit(X, 2.0 * Y - 1)   # the same problem as +-1 regression
    assert est.selected_.tolist() == reg.selected_.tolist()
    np.testing.assert_allclose(est.decision_function(X), reg.predict(X))
    np.testing.assert_array_equal(est.predict(X), (reg.predict(X) > 0).astype(int))
    assert est.task_ == "multilabel" and (est.predict(X) == Y).mean() > 0.8


def test_multiclass_one_hot_argmax():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 5))
    y = np.array(["a", "b", "c"])[np.argmax(X[:, :3], axis=1)]
    est = GreedyRLSClassifier(budget=3, lam=0.1).fit(X, y)
    onehot = np.where(y[:, None] == np.array(["a", "b", "c"]), 1.0, -1.0)
    reg = GreedyRLS(budget=3, lam=0.1).fit(X, onehot)
    np.testing.assert_array_equal(est.predict(X), np.array(["a", "b", "c"])[
        np.argmax(reg.predict(X), axis=1)])
    assert (est.predict(X) == y).mean() > 0.8


def test_selector_transform_and_pipeline():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 7))
    y = X[:, 3] - X[:, 5]
    pipe = make_pipeline(StandardScaler(), GreedyRLS(budget=2, lam=0.01)).fit(X, y)
    est = pipe[-1]
    assert sorted(est.selected_.tolist()) == [3, 5]
    np.testing.assert_array_equal(est.get_support(indices=True), [3, 5])
    np.testing.assert_array_equal(est.transform(X), X[:, est.get_support()])
    assert est.coef_.shape == (2, 1) and est.predict(X).shape == (40,)


@pytest.mark.parametrize("params,match", [
    (dict(budget=0), "budget=0 is outside 1..4"),
    (dict(budget=5), "budget=5 is outside 1..4"),
    (dict(budget=2.5), "budget=2.5 must be an integer"),
    (dict(budget=2, lam=-1.0), "lam=-1.0 must be a finite number > 0"),
    (dict(budget=2, dtype="float16"), "dtype='float16'"),
])
def test_bad_parameters(params, match):
    X = np.random.default_rng(0).normal(size=(10, 4))
    with pytest.raises(TrainerError, match=match):
        GreedyRLS(**params).fit(X, X[:, 0])


def test_one_class_label_column_is_an_error():
    X = np.random.default_rng(0).normal(size=(10, 4))
    Y = np.column_stack([X[:, 0] > 0, np.zeros(10)]).astype(int)
    with pytest.raises(TrainerError, match="label column 1 has only one class"):
        GreedyRLSClassifier(budget=2).fit(X, Y)
