"""sensorbudget.trainer.api: train, predict, evaluate and Bundle.decide against independent
references (numpy, a loop over the rows, the estimator itself)."""

import csv

import numpy as np
import pytest

from sensorbudget.trainer import GreedyRLS, api
from sensorbudget.trainer.errors import TrainerError


@pytest.fixture
def table(tmp_path):
    """A seeded CSV with a text column and a date column that training leaves out."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(40, 5))
    Y = np.column_stack([X[:, 0] - X[:, 2], X[:, 1] + 0.5 * X[:, 4]]) + 0.05 * rng.normal(
        size=(40, 2))
    X, Y = (np.vectorize(lambda v: float(f"{v:.6f}"))(A) for A in (X, Y))   # as written
    path = tmp_path / "t.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["site", "f0", "f1", "f2", "f3", "f4", "date", "y0", "y1"])
        for i in range(40):
            w.writerow([f"=s{i}", *(f"{v:.6f}" for v in X[i]), f"2024-05-{1 + i % 28:02d}",
                        *(f"{v:.6f}" for v in Y[i])])
    return path, X, Y


def test_train_equals_the_estimator_and_a_path_equals_a_dataset(table):
    path, X, Y = table
    options = dict(targets=["y0", "y1"], ignore=["site", "date"])
    bundle = api.train(path, budget=3, lam=0.5, **options)
    ref = GreedyRLS(budget=3, lam=0.5).fit(X, Y)
    assert bundle.meta["selected_index"] == ref.selected_.tolist()
    np.testing.assert_allclose(bundle.W, ref.coef_, rtol=1e-10)
    again = api.train(api.Dataset.load(path, **options), budget=3, lam=0.5)
    assert again.meta == bundle.meta
    with pytest.raises(TrainerError, match="give --budget K or a cost budget"):
        api.train(path, **options)


def test_predict_a_table_without_repeating_ignore(table, tmp_path):
    """The bundle knows its features: columns training left out (text, dates) need not be
    named again; the predictions equal numpy's X[:, selected] W + b."""
    path, X, Y = table
    bundle = api.train(path, budget=2, lam=0.5, targets=["y0", "y1"], ignore=["site", "date"])
    plain = api.predict(bundle, path)
    named = api.predict(bundle, path, ignore=["site", "date"])
    assert plain.to_csv() == named.to_csv()
    expected = X[:, bundle.meta["selected_index"]] @ bundle.W + bundle.b
    np.testing.assert_allclose(np.column_stack([plain.columns["y0"], plain.columns["y1"]]),
                               expected, rtol=1e-9)
    assert any("metrics on 40 row(s); in-sample" in line for line in plain.lines)
    plain.save(tmp_path / "p.csv")
    back = api.Predictions.load(tmp_path / "p.csv")
    np.testing.assert_array_equal(back.columns["y0"], plain.columns["y0"])
    assert back.ids["row"].tolist() == list(range(40))


def _multilabel(tmp_path):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(60, 6))
    L = np.column_stack([X[:, 0] > 0.2, X[:, 1] + X[:, 2] > 0, X[:, 3] > -0.5]).astype(int)
    np.savez(tmp_path / "ml.npz", X=X, Y=L, target_names=np.array(["a", "b", "c"]),
             task=np.array("multilabel"))
    return tmp_path / "ml.npz", X, L


def test_decide_is_the_rule_row_by_row(tmp_path):
    """Bundle.decide against a loop over rows and labels: label on when score > threshold."""
    path, X, _ = _multilabel(tmp_path)
    bundle = api.train(path, budget=3, lam=1.0, threshold="f1")
    th = bundle.meta["decision"]["thresholds"]
    scores = np.random.default_rng(1).normal(size=(25, 3))
    loop = [[1 if scores[i, j] > th[j] else 0 for j in range(3)] for i in range(25)]
    assert bundle.decide(scores).tolist() == loop
    columns = api.predict(bundle, path).columns
    s = bundle.decision_scores(X)
    assert columns["a"].tolist() == [int(v > th[0]) for v in s[:, 0]]
    assert str(bundle.kind) == "multilabel"


def test_decide_multiclass_is_the_first_largest_score(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 4))
    cls = np.argmax(X[:, :3], axis=1).astype(float)
    np.savez(tmp_path / "mc.npz", X=X, Y=cls[:, None], target_names=np.array(["k"]),
             task=np.array("multiclass"))
    bundle = api.train(tmp_path / "mc.npz", budget=3, lam=1.0)
    assert api.train(tmp_path / "mc.npz", budget=3, lam=1.0, task=api.Task.MULTICLASS).meta == \
        bundle.meta
    scores = rng.normal(size=(20, 3))
    scores[0] = [0.5, 0.5, 0.1]                              # a tie: the first class
    loop = [max(range(3), key=lambda j: (scores[i, j], -j)) for i in range(20)]
    assert bundle.decide(scores).tolist() == loop
    assert bundle.classes == ["0", "1", "2"] and str(bundle.kind) == "multiclass"


def test_evaluate_a_dataset_and_its_file_alike(tmp_path):
    path, *_ = _multilabel(tmp_path)
    by_path = api.evaluate(path, budgets="1,2", folds=3)
    by_data = api.evaluate(api.Dataset.load(path), budgets="1,2", folds=3)
    assert by_path.to_dict() == by_data.to_dict()
    assert by_path.chosen[0] == "budgets 1,2" and by_path.chosen[1].startswith("methods ")
    assert by_path.summary_lines()[1].startswith("scores: nested CV")


def test_recording_options_travel_with_the_features_and_the_bundle(tmp_path):
    """Streams whose time column is 'stamp' (in ms since an epoch): the options given to
    features are stored in the feature file and the bundle, so predict reads the recordings
    without them, as it does with them given again; files made with the defaults store none."""
    from tests.fixtures import write_sensors_toml, write_stream

    for i in range(2):
        path = write_stream(tmp_path / "rec" / f"r{i}.csv", n=140, seed=i)
        lines = path.read_text().splitlines()
        rows = ["stamp" + lines[0][4:]] + [
            f"{1_700_000_000_000 + round(float(r.split(',')[0]) * 1000)},{r.split(',', 1)[1]}"
            for r in lines[1:]]
        path.write_text("\n".join(rows) + "\n")
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    data = api.features(tmp_path / "rec", toml, time_column="stamp", time_unit="ms")
    data.save(tmp_path / "f.npz")
    stored = api.Dataset.load(tmp_path / "f.npz").feature_set.recording_options
    assert stored == {"time_column": "stamp", "time_unit": "ms"}
    bundle = api.train(tmp_path / "f.npz", budget=2, lam=1.0)
    assert bundle.meta["recording_options"] == stored
    plain = api.predict(bundle, tmp_path / "rec")
    given = api.predict(bundle, tmp_path / "rec", time_column="stamp", time_unit="ms")
    assert plain.to_csv() == given.to_csv() and len(plain.ids["window_start"]) == data.n_samples
    np.testing.assert_allclose(plain.columns["y"], bundle.decision_scores(data.X)[:, 0],
                               rtol=1e-6)
    evaluation = api.evaluate(tmp_path / "rec", sensors=toml, time_column="stamp",
                              budgets="1", folds=2)
    assert evaluation.result.config["shape"][0] == data.n_samples
    defaults = api.features(tmp_path / "rec", toml, time_column="stamp", time_unit="ms")
    defaults.feature_set.recording_options = {}
    with np.load(__import__("io").BytesIO(defaults.to_bytes())) as npz:
        assert "recording_options_json" not in npz.files


def test_predict_a_loaded_dataset_as_its_file(table):
    path, X, Y = table
    options = dict(targets=["y0", "y1"], ignore=["site", "date"])
    bundle = api.train(path, budget=2, lam=0.5, **options)
    from_file = api.predict(bundle, path)
    from_data = api.predict(bundle, api.Dataset.load(path, **options))
    assert from_data.to_csv() == from_file.to_csv()
    mse = [line for line in from_file.lines if "MSE" in line]
    assert mse and [line for line in from_data.lines if "MSE" in line] == mse


def test_the_typed_view_reads_model_json(tmp_path):
    """The Bundle's fields against the saved model.json read as plain JSON."""
    import json

    path, *_ = _multilabel(tmp_path)
    api.train(path, budget=2, lam=0.25, threshold="f1").save(tmp_path / "b")
    raw = json.loads((tmp_path / "b" / "model.json").read_text())
    bundle = api.Bundle.load(tmp_path / "b")
    assert (bundle.features, bundle.targets, bundle.selected, bundle.lam) == (
        raw["features"], raw["targets"], raw["selected"], raw["lam"])
    assert bundle.thresholds.tolist() == raw["decision"]["thresholds"]
    assert bundle.window is None and bundle.required_sensors == raw["required_sensors"]


def test_a_binary_task_is_two_classes(tmp_path):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(50, 4))
    np.savez(tmp_path / "bin.npz", X=X, Y=np.where(X[:, 0] > 0, "yes", "no"),
             feature_names=np.array(list("abcd")), target_names=np.array(["ok"]))
    bundle = api.train(tmp_path / "bin.npz", budget=2, lam=1.0, task=api.Task.BINARY)
    assert bundle.meta["task"] == "multiclass" and bundle.kind is api.Task.BINARY
    assert bundle.classes == ["no", "yes"]
    decided = api.predict(bundle, tmp_path / "bin.npz").columns["class"]
    scores = bundle.decision_scores(X)
    assert decided.tolist() == [("no", "yes")[int(s[1] > s[0])] for s in scores]
    evaluation = api.evaluate(tmp_path / "bin.npz", task=api.Task.BINARY, budgets="1", folds=2)
    assert evaluation.result.config["setup"]["task"] == "multiclass"
