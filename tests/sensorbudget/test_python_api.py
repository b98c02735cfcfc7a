"""The README pipeline run twice, through the command line and through the Python API
(``import sensorbudget as sb``), on the same seeded recordings: every file either writes is
byte-identical (feature NPZ, bundle folder, evaluation report, predictions CSV); the
predictions equal numpy's X[:, selected] @ W + b of the feature table (the reference)."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

import sensorbudget as sb
from sensorbudget.cli import main
from tests.fixtures import write_sensors_toml, write_stream


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Three seeded recordings of the tiny device and its sensors.toml."""
    root = tmp_path_factory.mktemp("api")
    for i in range(3):
        write_stream(root / "rec" / f"r{i}.csv", n=160 + 20 * i, seed=i)
    return root / "rec", write_sensors_toml(root / "sensors.toml")


def _files(folder) -> dict:
    """{relative path: bytes} of every file under ``folder``."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _cli(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def both(inputs, tmp_path_factory):
    """(cli folder, python folder), each holding feats.npz, bundle/, report/, pred.csv."""
    rec, toml = inputs
    cli, py = tmp_path_factory.mktemp("cli"), tmp_path_factory.mktemp("py")
    _cli("features", rec, "--sensors", toml, "-o", cli / "feats.npz")
    _cli("train", cli / "feats.npz", "--budget", 3, "--max-cost", 30, "--groups", "recording",
         "-o", cli / "bundle")
    _cli("evaluate", cli / "feats.npz", "--budgets", "1,2", "--folds", 3, "--report",
         cli / "report")
    _cli("predict", cli / "bundle", rec, "-o", cli / "pred.csv")

    sb.features(rec, sensors=toml).save(py / "feats.npz")
    data = sb.Dataset.load(py / "feats.npz")
    sb.train(data, budget=3, max_cost=30, groups="recording").save(py / "bundle")
    sb.evaluate(py / "feats.npz", budgets="1,2", folds=3).save(py / "report")
    sb.predict(sb.Bundle.load(py / "bundle"), rec).save(py / "pred.csv")
    return cli, py


@pytest.mark.parametrize("name", ["feats.npz", "bundle", "report", "pred.csv"])
def test_cli_and_python_write_the_same_bytes(both, name):
    cli, py = both
    if (cli / name).is_dir():
        ours, theirs = _files(cli / name), _files(py / name)
        assert sorted(ours) == sorted(theirs) and ours
        different = [f for f in ours if ours[f] != theirs[f]]
        assert different == []
    else:
        assert (cli / name).read_bytes() == (py / name).read_bytes()


def test_predictions_equal_numpy_on_the_feature_table(both):
    cli, _ = both
    fs = sb.Dataset.load(cli / "feats.npz")
    model = json.loads((cli / "bundle" / "model.json").read_text())
    with np.load(cli / "bundle" / "weights.npz", allow_pickle=False) as npz:
        W, b = npz["W"], npz["b"]
    X = fs.X[:, model["selected_index"]]
    expected = X @ W + b
    got = sb.Predictions.load(cli / "pred.csv")
    np.testing.assert_allclose(got.columns["y"], expected[:, 0], rtol=1e-9, atol=1e-12)
    assert got.ids["window_start"].tolist() == fs.feature_set.window_start.tolist()


def test_loaded_objects_read_back_what_was_saved(both, tmp_path):
    cli, _ = both
    bundle = sb.Bundle.load(cli / "bundle")
    bundle.save(tmp_path / "again")
    assert _files(tmp_path / "again") == _files(cli / "bundle")
    evaluation = sb.Evaluation.load(cli / "report")
    assert evaluation.to_dict() == json.loads((cli / "report" / "results.json").read_text())
    data = sb.Dataset.load(cli / "feats.npz")
    data.save(tmp_path / "feats.npz")
    assert (tmp_path / "feats.npz").read_bytes() == (cli / "feats.npz").read_bytes()
