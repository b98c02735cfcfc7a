"""The Dask backend: same picks, path and weights as the single-machine trainer; faults.

Two small LocalClusters (2 worker processes each) serve the whole module: one for the
equality tests, one that the fault test kills a worker of.
"""

import contextlib
import os

import numpy as np
import pytest

from tests.paths import EXAMPLES, SHARED
from tests.trainer.reference import heldout_intercept_bruteforce
from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier, TrainerError
from sensorbudget.trainer.data import load_table
from sensorbudget.trainer.distributed import partition
from sensorbudget.trainer.distributed.dask_data import ShardTable, group_bounds, row_split, shard_paths
from sensorbudget.trainer.distributed.row_store import WorkerLostError

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

ATTRS = ("selected_", "loo_path_", "coef_", "intercept_", "lam_loo_", "heldout_predictions_")


def make_data(n, d, t, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=d) + rng.normal(size=d)
    W = np.zeros((d, t))
    W[rng.choice(d, size=min(4, d), replace=False)] = rng.normal(size=(min(4, d), t))
    return X, X @ W + 0.5 * rng.normal(size=(n, t)) + rng.normal(size=t)


def mixed_groups(n, seed=0):
    """Shuffled group ids: groups of 1..5 rows (singletons included)."""
    rng = np.random.default_rng(seed)
    sizes = np.resize([1, 3, 2, 5, 1, 4], n)
    ids = np.repeat(np.arange(sizes.size), sizes)[:n]
    return rng.permutation(ids)


def assert_same_fit(local, dist, exact=False, rtol=1e-10):
    """Identical picks; path, weights and lambda curve equal (bit for bit when ``exact``)."""
    np.testing.assert_array_equal(local.selected_, dist.selected_)
    for name in ATTRS[1:]:
        a, b = np.asarray(getattr(local, name)), np.asarray(getattr(dist, name))
        if exact:
            np.testing.assert_array_equal(a, b, err_msg=name)
        else:
            np.testing.assert_allclose(b, a, rtol=rtol, atol=1e-12, err_msg=name)
    assert local.criterion_ == dist.criterion_ and local.n_groups_ == dist.n_groups_
    if exact:
        assert local.path_ == dist.path_


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as c:
            yield c


EXT = [f"e{i // 3}" for i in range(24)]
CASES = {
    "plain": (dict(budget=6, lam=0.5), None),
    "groups": (dict(budget=5, lam=1.0), "mixed"),
    "extractors+costs": (dict(budget=None, lam=1.0, extractors=EXT, max_cost=6.0,
                              extractor_costs={f"e{i}": 1.0 + i % 3 for i in range(8)}), None),
    "extractors+groups": (dict(budget=3, lam=2.0, extractors=EXT), "mixed"),
    "separate": (dict(budget=3, lam=0.7, mode="separate"), None),
    "lambda grid": (dict(budget=2, lam_search="grid"), None),    # Dask: always the grid
    "float32": (dict(budget=4, lam=1.0, dtype="float32"), "mixed"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_cluster_fit_equals_local_fit(client, case):
    kwargs, kind = CASES[case]
    X, Y = make_data(240, 24, 3, seed=len(case))
    groups = None if kind is None else mixed_groups(240, seed=1)
    local = GreedyRLS(**kwargs).fit(X, Y, groups=groups)
    dist = GreedyRLS(**kwargs, backend="dask", client=client, n_partitions=3).fit(
        X, Y, groups=groups)
    # float32 sums in another order differ at float32 round-off (1e-7), not in the picks
    assert_same_fit(local, dist, rtol=1e-5 if kwargs.get("dtype") == "float32" else 1e-10)
    assert len(dist.distributed_["partitions"]) == 3


def test_one_partition_is_bit_identical(client):
    """One partition runs exactly the single-machine operations: same bits."""
    X, Y = make_data(150, 20, 2, seed=3)
    groups = mixed_groups(150, seed=2)
    for g in (None, groups):
        local = GreedyRLS(budget=5, lam=0.3).fit(X, Y, groups=g)
        dist = GreedyRLS(budget=5, lam=0.3, backend="dask", client=client,
                         n_partitions=1).fit(X, Y, groups=g)
        assert_same_fit(local, dist, exact=True)


def test_real_data_yeast_and_classifier(client):
    path = SHARED / "yeast" / "yeast.arff"
    if not path.is_file():
        pytest.skip("shared yeast data not available")
    table = load_table(path, labels=14)
    X, y = table.X, table.Y.astype(int)
    for est in (GreedyRLS(budget=6, lam=4.0), GreedyRLSClassifier(budget=4, lam=1.0)):
        target = 2.0 * y - 1 if isinstance(est, GreedyRLS) else y
        local = est.fit(X, target)
        local_copy = {a: getattr(local, a) for a in ATTRS}
        dist = est.set_params(backend="dask", client=client).fit(X, target)
        np.testing.assert_array_equal(local_copy["selected_"], dist.selected_)
        np.testing.assert_allclose(dist.loo_path_, local_copy["loo_path_"], rtol=1e-10)
        np.testing.assert_allclose(dist.coef_, local_copy["coef_"], rtol=1e-9, atol=1e-12)


def test_real_recordings_with_groups(client):
    """BasicMotions windows, leave-one-recording-out, sensor groups as extractors."""
    recordings = SHARED / "basic_motions"
    if not recordings.is_dir():
        pytest.skip("shared BasicMotions recordings not available")
    from sensorbudget.trainer.sensing.feature_set import load_feature_set

    fs = load_feature_set(recordings, EXAMPLES
                          / "basic_motions.sensors.toml")
    X, Y = np.asarray(fs.X, dtype=float), 2.0 * fs.Y - 1
    kwargs = dict(budget=4, lam=2.0, extractors=fs.feature_channels)   # 1-10 features each
    local = GreedyRLS(**kwargs).fit(X, Y, groups=fs.groups)
    dist = GreedyRLS(**kwargs, backend="dask", client=client).fit(X, Y, groups=fs.groups)
    assert_same_fit(local, dist)
    assert dist.criterion_ == "leave-group-out" and dist.n_groups_ == 80


def test_dask_array_input_rechunked_at_group_boundaries(client):
    X, Y = make_data(200, 12, 2, seed=7)
    groups = np.repeat(np.arange(40), 5)                 # contiguous groups of 5 rows
    local = GreedyRLS(budget=4, lam=1.0).fit(X, Y, groups=groups)
    dist = GreedyRLS(budget=4, lam=1.0, client=client).fit(
        da.from_array(X, chunks=(63, 6)), da.from_array(Y, chunks=(50, 2)), groups=groups)
    assert_same_fit(local, dist)
    assert all(r % 5 == 0 for r in dist.distributed_["rows"])
    with pytest.raises(TrainerError, match="contiguous run"):
        GreedyRLS(budget=2, lam=1.0, client=client).fit(
            da.from_array(X, chunks=(50, 12)), Y, groups=mixed_groups(200))


def test_npz_and_csv_shards(client, tmp_path):
    X, Y = make_data(180, 10, 2, seed=9)
    groups = np.repeat(np.arange(36), 5)
    names = [f"f{i}" for i in range(10)]
    for k, rows in enumerate(np.array_split(np.arange(180), 3)):
        np.savez(tmp_path / f"part{k}.npz", X=X[rows], Y=Y[rows], rec=groups[rows],
                 feature_names=np.array(names), target_names=np.array(["a", "b"]))
        lines = ["g," + ",".join(names) + ",a,b"] + [
            f"{groups[r]}," + ",".join(repr(float(v)) for v in np.r_[X[r], Y[r]]) for r in rows]
        (tmp_path / f"part{k}.csv").write_text("\n".join(lines) + "\n")
    local = GreedyRLS(budget=4, lam=1.0).fit(X, Y, groups=groups)
    npz = ShardTable(shard_paths(str(tmp_path / "*.npz")), {"groups": "rec"})
    csv = ShardTable(shard_paths(str(tmp_path / "*.csv")), {"groups": "g", "targets": ["a", "b"]})
    for shards in (npz, csv):
        dist = GreedyRLS(budget=4, lam=1.0, client=client).fit(shards, None)
        assert_same_fit(local, dist)
        assert dist.distributed_["partitions"] == [f"part{k}.{shards.paths[0].suffix[1:]}"
                                                  for k in range(3)]
    np.savez(tmp_path / "part3.npz", X=X[:5], Y=Y[:5], rec=groups[:5],   # group 0 again
             feature_names=np.array(names), target_names=np.array(["a", "b"]))
    with pytest.raises(TrainerError, match="group 0 has rows in partitions"):
        GreedyRLS(budget=2, lam=1.0, client=client).fit(
            ShardTable(shard_paths(str(tmp_path / "*.npz")), {"groups": "rec"}), None)
    np.savez(tmp_path / "part3.npz", X=X[:5], Y=Y[:5], rec=groups[:5] + 100)
    with pytest.raises(TrainerError, match="'part3.npz' differs from 'part0.npz' in its "
                                           "features"):
        GreedyRLS(budget=2, lam=1.0, client=client).fit(
            ShardTable(shard_paths(str(tmp_path / "*.npz")), {"groups": "rec"}), None)


def test_bytes_per_step_do_not_grow_with_rows(client):
    sent = []
    for n in (200, 2000):
        X, Y = make_data(n, 30, 4, seed=n)
        est = GreedyRLS(budget=5, lam=1.0, backend="dask", client=client).fit(X, Y)
        sent.append(est.distributed_["bytes_per_step"])
    assert sent[0]["down"] == sent[1]["down"] and sent[0]["rounds"] == sent[1]["rounds"] == 3
    assert sent[1]["up"] < 2 * 30 * 8 * 4 + 4096      # partial scores, R^T x_b, SSEs


def test_clones_share_the_client(client):
    from sklearn.base import clone

    est = clone(GreedyRLS(budget=2, backend="dask", client=client))
    assert est.client is client and est.get_params()["backend"] == "dask"


def test_bad_inputs_are_clear_errors(client):
    X, Y = make_data(60, 5, 2)
    Y[3, 1] = np.nan
    with pytest.raises(TrainerError, match="missing targets are not supported"):
        GreedyRLS(budget=2, lam=1.0, backend="dask", client=client).fit(X, Y)
    with pytest.raises(TrainerError, match="backend="):
        GreedyRLS(budget=2, backend="spark").fit(X, np.nan_to_num(Y))
    Y[:, 1] = 4.0
    with pytest.raises(TrainerError, match="target column 1 has a single value"):
        GreedyRLS(budget=2, lam=1.0, backend="dask", client=client).fit(X, Y)
    groups = np.repeat([0, 1], 30)
    with pytest.raises(TrainerError, match="budget=30 features .* 30 training rows, at most 29"):
        GreedyRLS(budget=30, lam=1.0, backend="dask", client=client).fit(
            X[:, :5].repeat(6, axis=1), X[:, 0], groups=groups)


def test_heldout_predictions_equal_refits_with_the_intercept(client):
    """The cluster's held-out predictions (groups spread over partitions, rows shuffled)
    against one sklearn refit per group, intercept inside the fold."""
    X, Y = make_data(90, 8, 2, seed=4)
    groups = mixed_groups(90, seed=3)
    est = GreedyRLS(budget=3, lam=0.8, backend="dask", client=client, n_partitions=3).fit(
        X, Y, groups=groups)
    ref = heldout_intercept_bruteforce((X / est.x_scale_)[:, est.selected_], Y, groups, 0.8)
    np.testing.assert_allclose(est.heldout_predictions_, ref, rtol=1e-9, atol=1e-9)


def test_lost_worker_stops_the_fit_with_a_clear_error():
    """A worker killed after step 2 (by the progress hook): WorkerLostError, no result."""
    X, Y = make_data(300, 16, 2, seed=5)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as c:
            victim = sorted(c.scheduler_info()["workers"])[1]

            def kill_at_step_two(done, total):
                if done == 2:
                    with contextlib.suppress(Exception):      # the worker dies mid-call
                        c.run(os._exit, 1, workers=[victim])

            est = GreedyRLS(budget=6, lam=1.0, backend="dask", client=c)
            with pytest.raises(WorkerLostError, match=r"lost while .* greedy step 3 \(run 1"):
                est.fit(X, Y, progress=kill_at_step_two)
            assert not hasattr(est, "selected_")


# -- no cluster needed -----------------------------------------------------------------------
def test_partition_out_of_step_is_refused():
    X, Y = make_data(20, 4, 1)
    key = ("test-session", 0)
    partition.build_partition(key, "rows", partition.arrays_loader, X, Y)
    try:
        assert partition.call_partition(key, 0, "stats", ())["n"] == 20
        with pytest.raises(partition.PartitionLostError, match="served 1 calls; the driver expected 0"):
            partition.call_partition(key, 0, "stats", ())
    finally:
        partition.drop_session("test-session")
    with pytest.raises(partition.PartitionLostError, match="not on this worker"):
        partition.call_partition(key, 1, "stats", ())


def test_row_split_keeps_groups_whole():
    groups = mixed_groups(101, seed=4)
    parts = row_split(101, 4, groups)
    assert sorted(np.concatenate(parts).tolist()) == list(range(101))
    owners = [{g for g in groups[p]} for p in parts]
    assert all(not (a & b) for i, a in enumerate(owners) for b in owners[i + 1:])
    assert [s.stop - s.start for s in row_split(10, 3)] == [3, 4, 3]


def test_group_bounds_move_to_group_starts():
    groups = np.repeat([5, 1, 9, 2], [3, 4, 2, 3])
    np.testing.assert_array_equal(group_bounds([0, 4, 8, 12], groups), [0, 7, 9, 12])
    with pytest.raises(TrainerError, match="group 1 is split"):
        group_bounds([0, 12], np.array([1, 1, 2, 1]))
