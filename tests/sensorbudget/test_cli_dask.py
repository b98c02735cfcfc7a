"""``--dask``: the option, shard loading, and the train wiring end to end on a local cluster."""


import click
import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.cli import main
from tests.paths import REPO, SHARED
from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.bundle.model import load_bundle
from sensorbudget.trainer.dataset import Dataset
from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.training import cost_kwargs, dask_estimator_for_task, fit_on_dask

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def scheduler():
    """Address of a one-worker LocalCluster (``--dask ADDRESS``)."""
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def invoke():
    """``sensorbudget train DATA ... --budget 3 --lam 1`` (the real command)."""
    def run(args, **kwargs):
        return CliRunner().invoke(main, ["train", *args, "--budget", "3", "--lam", "1"], **kwargs)
    return run


@pytest.fixture
def shards(tmp_path):
    """Three CSV shards of a multi-label table (3 labels; shard 2 lacks label c's 1s)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 6))
    Y = (X[:, :3] + 0.3 * rng.normal(size=(90, 3)) > 0).astype(int)
    Y[60:, 2] = 0
    subject = np.repeat(np.arange(18), 5)
    for k, rows in enumerate(np.array_split(np.arange(90), 3)):
        lines = ["f0,f1,f2,f3,f4,f5,subject,a,b,c"] + [
            ",".join([repr(float(v)) for v in X[r]] + [str(subject[r])]
                     + [str(v) for v in Y[r]]) for r in rows]
        (tmp_path / f"part{k}.csv").write_text("\n".join(lines) + "\n")
    return tmp_path, X, Y, subject


@pytest.mark.parametrize("value,ok", [("local", True), ("local:3", True), ("local:0", False),
                                      ("tcp://10.0.0.5:8786", True), ("sched.json", True),
                                      ("two words", False), ("local:x", False)])
def test_dask_option_values(value, ok):
    args = ["d", "-o", "out", "--dask", value]
    if ok:
        assert main.commands["train"].make_context("train", args).params["dask"] == value
    else:
        with pytest.raises(click.BadParameter):
            main.commands["train"].make_context("train", args)


def test_load_shards_names_labels_and_refuses_recordings(shards):
    import dataclasses

    path, *_ = shards
    d = Dataset.load(str(path / "*.csv"), shards=True, labels=3, ignore=("subject",))
    assert d.feature_names == [f"f{i}" for i in range(6)] and d.target_names == ["a", "b", "c"]
    assert d.task == "multilabel" and d.source["shards"] == [f"part{k}.csv" for k in range(3)]
    assert d.X.options["targets"] == ["a", "b", "c"] and d.X.options["labels"] is None
    with pytest.raises(DataError, match="sensorbudget features"):
        Dataset.load(str(path), shards=True, sensors="sensors.toml")
    with pytest.raises(DataError, match="--keep-missing-targets does not apply"):
        Dataset.load(str(path), shards=True, keep_missing_targets=True)
    with pytest.raises(DataError, match="no shard files match"):
        Dataset.load(str(path / "*.npz"), shards=True)
    with pytest.raises(DataError, match="single class-value column"):
        dask_estimator_for_task("multiclass", dataclasses.replace(d, target_names=["a"]))
    assert dask_estimator_for_task("multiclass", d)[1].check == "onehot"
    assert dask_estimator_for_task("multilabel", d)[1].target_map == (2.0, -1.0)


def test_train_on_local_cluster_equals_local_fit(invoke, shards, tmp_path):
    path, X, Y, subject = shards
    result = invoke([str(path / "*.csv"), "--labels", "3", "--groups", "subject",
                     "--dask", "local:1", "-o", str(tmp_path / "bundle")],
                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    ref = GreedyRLS(budget=3, lam=1.0).fit(X, 2.0 * Y - 1, groups=subject)
    bundle = load_bundle(tmp_path / "bundle")
    assert bundle.meta["selected_index"] == ref.selected_.tolist()
    assert bundle.meta["n_samples"] == 90 and bundle.meta["criterion"] == "leave-group-out"
    np.testing.assert_allclose(bundle.W, ref.coef_, rtol=1e-10)
    np.testing.assert_allclose(bundle.arrays["x_min"], X[:, ref.selected_].min(axis=0))
    np.testing.assert_array_equal(bundle.predict(X), (ref.predict(X) > 0).astype(int))


def test_cluster_errors_are_one_line_usage_errors(invoke, shards, tmp_path, scheduler):
    path, *_ = shards
    (path / "part3.csv").write_text("f0,f1\n1,2\n3,4\n")
    result = invoke([str(path / "*.csv"), "--labels", "3", "--dask", scheduler,
                     "-o", str(tmp_path / "b")])
    assert result.exit_code == 2 and "Error: " in result.output
    assert "part3.csv" in result.output and "Traceback" not in result.output


def test_recordings_as_feature_files_with_sensor_costs(tmp_path, scheduler):
    """Recordings split over files: one feature NPZ per batch, --groups recording, sensor
    budget; the same choice as the single-machine fit on all windows."""
    import dataclasses

    from sensorbudget.trainer.sensing.feature_set import load_feature_set

    recordings = SHARED / "basic_motions"
    if not recordings.is_dir():
        pytest.skip("shared BasicMotions recordings not available")
    fs = load_feature_set(recordings, REPO / "examples" / "basic_motions.sensors.toml")
    for k, recs in enumerate(np.array_split(np.arange(len(fs.recording_names)), 3)):
        rows = np.isin(fs.groups, recs)
        part = dataclasses.replace(fs, X=fs.X[rows], Y=fs.Y[rows], groups=fs.groups[rows] - recs[0],
                                   window_start=fs.window_start[rows],
                                   recording_names=[fs.recording_names[i] for i in recs])
        (tmp_path / f"feats{k}.npz").write_bytes(part.save_npz())
    d = Dataset.load(tmp_path, shards=True, groups="recording")
    est, X, targets, extra = dask_estimator_for_task(d.task, d)
    costs = dict(max_cost=3.0, unit="sensor")
    est.set_params(budget=None, lam=1.0, **cost_kwargs(d.feature_set, **costs))
    fit_on_dask(est, X, scheduler)
    ref = GreedyRLS(budget=None, lam=1.0, **cost_kwargs(fs, **costs))
    ref.fit(np.asarray(fs.X, dtype=float), 2.0 * fs.Y - 1, groups=fs.groups)
    assert est.selected_extractors_ == ref.selected_extractors_ and est.n_groups_ == 80
    assert extra == {"classes": sorted(fs.target_names)} and targets == sorted(fs.target_names)
    np.testing.assert_allclose(est.loo_path_, ref.loo_path_, rtol=1e-10)
