"""Property-based tests (hypothesis): bundle save -> load -> predict round-trips.

For random regression, multi-label and multi-class fits with arbitrary (Unicode) feature and
target names, a saved bundle loads back with the same ``model.json`` and arrays, predicts what
the estimator predicts, and saving it again gives the same bytes.
"""

import os
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier
from sensorbudget.trainer.bundle.model import MODEL_FILE, WEIGHTS_FILE, bundle_contents, load_bundle, save_bundle

EXPLORE = int(os.environ.get("SB_HYPOTHESIS_EXAMPLES", "0"))
SETTINGS = settings(max_examples=EXPLORE or 25, deadline=None, derandomize=not EXPLORE,
                    database=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = st.text(min_size=1, max_size=12)


@st.composite
def fits(draw):
    """(estimator, X, feature names, target names, task, extra meta)."""
    n, d = draw(st.integers(8, 20)), draw(st.integers(1, 6))
    task = draw(st.sampled_from(["regression", "multilabel", "multiclass"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 100, size=d) + rng.normal(size=d) * 10
    budget = draw(st.integers(1, d))
    lam = draw(st.sampled_from([None, 0.1, 2.0]))
    features = draw(st.lists(NAMES, min_size=d, max_size=d))
    extra = {}
    if task == "regression":
        t = draw(st.integers(1, 3))
        Y = X @ rng.normal(size=(d, t)) + rng.normal(size=(n, t))
        est = GreedyRLS(budget=budget, lam=lam).fit(X, Y)
        targets = draw(st.lists(NAMES, min_size=t, max_size=t))
    elif task == "multilabel":
        Y = np.column_stack([np.arange(n) % 2, (np.arange(n) // 2) % 2])
        est = GreedyRLSClassifier(budget=budget, lam=lam).fit(X, Y)
        targets = draw(st.lists(NAMES, min_size=2, max_size=2))
    else:
        y = np.array(draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n)))
        y[:3] = ["a", "b", "c"]                        # every class present
        est = GreedyRLSClassifier(budget=budget, lam=lam).fit(X, y)
        targets = [str(c) for c in est.classes_]
        extra = {"classes": targets}
    return est, X, features, targets, task, extra


def _predictions(est, X, task):
    if task == "regression":
        return est.predict(X)
    if task == "multilabel":
        return est.predict(X)
    return np.searchsorted(est.classes_, est.predict(X))    # class index, as the bundle gives


@SETTINGS
@given(fits())
def test_bundle_save_load_predict_roundtrip(fit):
    est, X, features, targets, task, extra = fit
    meta, arrays = bundle_contents(est, X, features, targets, task=task, extra=extra)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bundle"
        saved = save_bundle(path, meta, arrays)
        first = {f: (path / f).read_bytes() for f in (MODEL_FILE, WEIGHTS_FILE)}
        bundle = load_bundle(path)
        save_bundle(path, meta, arrays)                       # overwrite: same bytes
        assert {f: (path / f).read_bytes() for f in (MODEL_FILE, WEIGHTS_FILE)} == first
    assert bundle.meta == saved
    assert bundle.meta["features"] == features and bundle.meta["targets"] == targets
    for name, value in arrays.items():
        np.testing.assert_array_equal(bundle.arrays[name], value)
    got = bundle.predict(X)
    want = _predictions(est, X, task)
    if task == "regression":
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
    else:
        scores = bundle.decision_scores(X)
        ref = est.decision_function(X)
        ref = ref[:, None] if ref.ndim == 1 else ref
        np.testing.assert_allclose(scores, ref, rtol=1e-9, atol=1e-9)
        # labels agree wherever the scores are not within rounding of a decision boundary
        margin = np.abs(scores).min(axis=1) if task == "multilabel" else np.ptp(
            np.sort(scores, axis=1)[:, -2:], axis=1)
        clear = margin > 1e-9
        np.testing.assert_array_equal(np.asarray(got)[clear], np.asarray(want)[clear])
