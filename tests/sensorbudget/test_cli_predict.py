"""``sensorbudget predict`` against a plain ridge on the selected features, the estimator's own
predictions, scikit-learn metrics, and recordings against the feature pipeline."""

import csv
import re

import numpy as np
import pytest
from sklearn.metrics import f1_score, mean_squared_error, r2_score

from tests.fixtures import write_sensors_toml, write_stream
from sensorbudget.trainer.bundle.model import load_bundle
from sensorbudget.trainer.sensing.feature_set import load_feature_set


def _read(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


@pytest.fixture
def regression_csv(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5)) * [1, 2, 3, 4, 5] + 1
    y = X[:, 1] - 0.5 * X[:, 3] + 0.3 * rng.normal(size=60)
    lines = ["a,b,c,d,e,y"] + [",".join(repr(float(v)) for v in [*x, t]) for x, t in zip(X, y)]
    path = tmp_path / "r.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, X, y


def test_table_predictions_equal_a_plain_ridge_on_the_selected_features(invoke, tmp_path,
                                                                         regression_csv):
    path, X, y = regression_csv
    assert invoke(["train", str(path), "--target", "y", "--budget", "2", "--lam", "0.5",
                   "-o", str(tmp_path / "b")]).exit_code == 0
    meta = load_bundle(tmp_path / "b").meta
    # the table without its target column: no metrics
    bare = tmp_path / "bare.csv"
    bare.write_text("\n".join(",".join(line.split(",")[:5])
                              for line in path.read_text().splitlines()) + "\n")
    result = invoke(["predict", str(tmp_path / "b"), str(bare), "-o", str(tmp_path / "p.csv")],
                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "no metrics" in result.output and f"wrote {tmp_path / 'p.csv'}" in result.output
    head, rows = _read(tmp_path / "p.csv")
    assert head == ["row", "y"]
    sel = meta["selected_index"]
    Xs = (X[:, sel] - X[:, sel].mean(0)) / X[:, sel].std(0)
    w = np.linalg.solve(Xs.T @ Xs + 0.5 * np.eye(2), Xs.T @ (y - y.mean()))
    np.testing.assert_allclose([float(r[1]) for r in rows], Xs @ w + y.mean(), rtol=1e-9)
    # with the target column: metrics as scikit-learn's
    result = invoke(["predict", str(tmp_path / "b"), str(path)], catch_exceptions=False)
    pred = Xs @ w + y.mean()
    assert re.search(rf"^  MSE +{mean_squared_error(y, pred):.6g}$", result.output, re.M)
    assert re.search(rf"^  R² +{r2_score(y, pred):.6g}$", result.output, re.M)
    assert result.output.startswith("row,y\n0,")


def test_multilabel_decisions_use_the_stored_thresholds(invoke, tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 6))
    Y = (X[:, :3] + rng.normal(size=(90, 3)) > 0.7).astype(int)
    lines = [",".join([f"f{i}" for i in range(6)] + ["p", "q", "r"])]
    lines += [",".join([repr(float(v)) for v in x] + [str(v) for v in t]) for x, t in zip(X, Y)]
    (tmp_path / "ml.csv").write_text("\n".join(lines) + "\n")
    assert invoke(["train", str(tmp_path / "ml.csv"), "--labels", "3", "--budget", "3",
                   "--lam", "1", "--platt", "-o", str(tmp_path / "b")]).exit_code == 0
    bundle = load_bundle(tmp_path / "b")
    result = invoke(["predict", str(tmp_path / "b"), str(tmp_path / "ml.csv"), "-o",
                     str(tmp_path / "p.csv")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    head, rows = _read(tmp_path / "p.csv")
    assert head[:4] == ["row", "p", "q", "r"] and head[-1] == "p:r"
    D = np.array([[int(v) for v in r[1:4]] for r in rows])
    np.testing.assert_array_equal(D, bundle.predict(X))
    for average in ("micro", "macro"):
        value = f1_score(Y, D, average=average)
        assert re.search(rf"^  {average}-F1 +{value:.6g}$", result.output, re.M)


def test_recordings_are_featurised_like_the_feature_pipeline(invoke, tmp_path):
    stream = write_stream(tmp_path / "s.csv", n=300)
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    result = invoke(["train", str(stream), "--sensors", str(toml), "--budget", "2", "--lam",
                     "1", "-o", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    out = tmp_path / "p.csv"
    result = invoke(["predict", str(tmp_path / "b"), str(stream), "-o", str(out)],
                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    fs = load_feature_set(stream, toml)
    bundle = load_bundle(tmp_path / "b")
    head, rows = _read(out)
    assert head == ["recording", "window_start", *fs.target_names]
    np.testing.assert_array_equal([int(r[1]) for r in rows], fs.window_start)
    got = np.array([[float(v) for v in r[2:]] for r in rows])
    np.testing.assert_array_equal(got, bundle.predict(fs.X))
    assert "R²" in result.output
    # the feature table written by `features` gives the same predictions
    assert invoke(["features", str(stream), "--sensors", str(toml), "-o",
                   str(tmp_path / "f.npz")]).exit_code == 0
    again = invoke(["predict", str(tmp_path / "b"), str(tmp_path / "f.npz"), "-o",
                    str(tmp_path / "q.csv")])
    assert again.exit_code == 0 and _read(tmp_path / "q.csv")[1] == rows


@pytest.mark.parametrize("args,needle", [
    (["--window", "4"], "--window/--hop/--compute-target do not apply"),
])
def test_bad_options(invoke, tmp_path, regression_csv, args, needle):
    path, _, _ = regression_csv
    invoke(["train", str(path), "--target", "y", "--budget", "2", "-o", str(tmp_path / "b")])
    result = invoke(["predict", str(tmp_path / "b"), str(path), *args])
    assert result.exit_code == 2 and needle in result.output


def test_missing_feature_column_is_one_error_line(invoke, tmp_path, regression_csv):
    path, _, _ = regression_csv
    invoke(["train", str(path), "--target", "y", "--budget", "5", "-o", str(tmp_path / "b")])
    other = tmp_path / "o.csv"
    other.write_text("a,b,y\n1,2,3\n4,5,6\n")
    result = invoke(["predict", str(tmp_path / "b"), str(other)])
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "has no column" in result.output and "a feature the bundle needs" in result.output


def test_metrics_say_in_sample_on_the_training_file_and_not_on_a_split(invoke, tmp_path,
                                                                        regression_csv):
    """Metrics on the training file are labelled in-sample; on held-back rows (a split of the
    same table) they are not, and equal scikit-learn's on those rows."""
    path, X, y = regression_csv
    lines = path.read_text().splitlines()
    (tmp_path / "train.csv").write_text("\n".join(lines[:41]) + "\n")
    (tmp_path / "test.csv").write_text("\n".join(lines[:1] + lines[41:]) + "\n")
    assert invoke(["train", str(tmp_path / "train.csv"), "--target", "y", "--budget", "2",
                   "--lam", "0.5", "-o", str(tmp_path / "b")]).exit_code == 0
    inside = invoke(["predict", str(tmp_path / "b"), str(tmp_path / "train.csv"), "-o",
                     str(tmp_path / "p1.csv")], catch_exceptions=False)
    assert inside.exit_code == 0 and "metrics on 40 row(s); in-sample" in inside.output
    split = invoke(["predict", str(tmp_path / "b"), str(tmp_path / "test.csv"), "-o",
                    str(tmp_path / "p2.csv")], catch_exceptions=False)
    assert split.exit_code == 0 and "in-sample" not in split.output
    assert "metrics on 20 row(s); DATA is not the bundle's training file" in split.output
    pred = np.array([float(r[1]) for r in _read(tmp_path / "p2.csv")[1]])
    assert re.search(rf"^  R² +{r2_score(y[40:], pred):.6g}$", split.output, re.M)


def test_predict_drop_missing_reports_and_refuses_above_the_fraction(invoke, tmp_path,
                                                                    regression_csv):
    """The same report and limit as train: 3 of 5 rows miss 'b' -> refused at the default 0.5,
    accepted with --max-drop-fraction 1, the remaining rows predicted as on the full table."""
    path, X, y = regression_csv
    assert invoke(["train", str(path), "--target", "y", "--budget", "2", "--lam", "0.5",
                   "-o", str(tmp_path / "b")]).exit_code == 0
    lines = path.read_text().splitlines()[:6]
    for i in (1, 2, 3):
        cells = lines[i].split(",")
        cells[1] = ""
        lines[i] = ",".join(cells)
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    args = ["predict", str(tmp_path / "b"), str(tmp_path / "m.csv"), "--drop-missing"]
    refused = invoke(args + ["-o", str(tmp_path / "p.csv")])
    assert refused.exit_code == 2 and "would drop 3 of 5 rows (60.0 %)" in refused.output
    assert not (tmp_path / "p.csv").exists()
    ok = invoke(args + ["--max-drop-fraction", "1", "-o", str(tmp_path / "p.csv")],
                catch_exceptions=False)
    assert ok.exit_code == 0, ok.output
    assert "dropped 3 of 5 rows (60.0 %) with missing values; missing per column: b 3" \
        in ok.output
    full = invoke(["predict", str(tmp_path / "b"), str(path), "-o", str(tmp_path / "f.csv")])
    assert full.exit_code == 0
    kept = [r[1] for r in _read(tmp_path / "p.csv")[1]]
    assert kept == [r[1] for r in _read(tmp_path / "f.csv")[1][3:5]]
