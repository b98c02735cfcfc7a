"""train --groups COLUMN|recording and --keep-missing-targets, end to end through the CLI."""


import numpy as np
import pytest

from tests.paths import REPO, SHARED
from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.bundle.model import load_bundle

AIR = REPO / "data" / "air_quality_uci" / "AirQualityUCI.csv"


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 4))
    subject = np.repeat(["ann", "bob", "cy", "dee", "eve", "fay"], 4)
    offset = {s: rng.normal() for s in subject}
    y = X[:, 0] - X[:, 2] + np.array([offset[s] for s in subject])
    rows = ["a,b,c,d,subject,y"] + [",".join([f"{v:.6f}" for v in x] + [s, f"{t:.6f}"])
                                    for x, s, t in zip(X, subject, y)]
    rows[5] = rows[5].replace(rows[5].split(",")[1], "", 1)   # a missing value in row 5
    path = tmp_path / "g.csv"
    path.write_text("\n".join(rows) + "\n")
    return path, X, subject, y


def test_column_groups_match_the_estimator(invoke, table, tmp_path):
    path, X, subject, y = table
    result = invoke(["train", str(path), "--target", "y", "--groups", "subject", "--drop-missing",
                     "--budget", "2", "--lam", "1", "-o", str(tmp_path / "b")],
                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    meta = load_bundle(tmp_path / "b").meta
    assert meta["features"] == ["a", "b", "c", "d"]          # the group column is no feature
    assert meta["criterion"] == "leave-group-out" and meta["n_groups"] == 6
    assert "LOGO MSE" in result.output
    keep = np.arange(24) != 4                                 # data row 5 had the missing value
    est = GreedyRLS(budget=2, lam=1.0).fit(X[keep], y[keep], groups=subject[keep])
    assert meta["selected_index"] == est.selected_.tolist()
    np.testing.assert_allclose([e["loo_mse"] for e in meta["path"]], est.loo_path_, rtol=1e-6)




@pytest.mark.skipif(not (SHARED / "basic_motions").is_dir(), reason="../shared/data is not available")
def test_recording_groups_from_recordings(invoke, tmp_path):
    from sensorbudget.trainer.sensing.feature_set import load_feature_set

    out = tmp_path / "r"
    toml = REPO / "examples" / "basic_motions.sensors.toml"
    result = invoke(["train", str(SHARED / "basic_motions"), "--sensors", str(toml),
                     "--groups", "recording", "--budget", "2", "--lam", "1", "-o", str(out)],
                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    meta = load_bundle(out).meta
    fs = load_feature_set(SHARED / "basic_motions", toml)
    assert meta["criterion"] == "leave-group-out" and meta["n_groups"] == len(set(fs.groups))


def test_one_recording_is_one_group(invoke, tmp_path):
    result = invoke(["train", str(AIR), "--sensors", str(REPO / "examples" / "air_quality.sensors.toml"),
                     "--groups", "recording", "--budget", "2", "-o", str(tmp_path / "r")])
    assert result.exit_code == 2 and "needs at least 2" in result.output


@pytest.mark.parametrize("args,needle", [
    (["--groups", "nope"], "group column 'nope' is not in the data"),
    (["--groups", "recording"], "--groups recording needs recordings"),
])
def test_group_errors(invoke, table, tmp_path, args, needle):
    path = table[0]
    result = invoke(["train", str(path), "--target", "y", "--drop-missing", "--budget", "1",
                     *args, "-o", str(tmp_path / "x")])
    assert result.exit_code == 2 and needle in result.output, result.output
    assert not (tmp_path / "x").exists()


def test_npz_group_array(invoke, tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 3))
    g = np.repeat(np.arange(10), 3)
    y = X[:, 1] + rng.normal(size=10)[g]
    np.savez(tmp_path / "t.npz", X=X, Y=y[:, None], subject=g)
    result = invoke(["train", str(tmp_path / "t.npz"), "--groups", "subject", "--budget", "1",
                     "--lam", "1", "-o", str(tmp_path / "b")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    est = GreedyRLS(budget=1, lam=1.0).fit(X, y, groups=g)
    assert load_bundle(tmp_path / "b").meta["n_groups"] == est.n_groups_ == 10


def test_keep_missing_targets_uses_each_targets_rows(invoke, tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    Y = np.column_stack([X[:, 0], X[:, 1] - X[:, 2]])
    lines = ["a,b,c,u,v"]
    for i, (x, t) in enumerate(zip(X, Y)):
        v = "" if i % 4 == 0 else f"{t[1]:.6f}"
        lines.append(",".join([f"{e:.6f}" for e in x] + [f"{t[0]:.6f}", v]))
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    args = ["train", str(tmp_path / "m.csv"), "--target", "u", "--target", "v", "--budget", "2",
            "--lam", "1", "-o", str(tmp_path / "b")]
    assert invoke(args).exit_code == 2                         # missing target: an error ...
    result = invoke(args + ["--keep-missing-targets"], catch_exceptions=False)
    assert result.exit_code == 0, result.output                # ... unless kept
    assert load_bundle(tmp_path / "b").meta["target_rows"] == [40, 30]
