"""SVD label compression (exact picks at full rank) and ML-CSSP label subsets."""

import numpy as np
import pytest

from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.errors import TrainerError
from sensorbudget.trainer.label_compression import (
    compress_targets,
    compression_rank,
    mlcssp_select,
    reconstruct,
    reconstruction_matrix,
    retained_energy,
)


def make_data(n, d, t, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, t)) * (rng.random((d, 1)) < 0.4)
    Y = np.where(X @ W + rng.normal(size=(n, t)) > 0, 1.0, -1.0)   # +1/-1 labels, like training
    return X, Y


@pytest.mark.parametrize("n, d, t", [(40, 12, 8), (15, 10, 30)])
@pytest.mark.parametrize("lam", [0.5, None])
def test_full_rank_compression_gives_identical_picks(n, d, t, lam):
    X, Y = make_data(n, d, t, seed=n + t)
    Y_r, V_r = compress_targets(Y, energy=1.0)
    assert Y_r.shape[1] <= min(n - 1, t)                      # rank of the centred Y
    full = GreedyRLS(budget=6, lam=lam).fit(X, Y)
    small = GreedyRLS(budget=6, lam=lam).fit(X, Y_r)
    np.testing.assert_array_equal(small.selected_, full.selected_)
    assert small.lam_ == full.lam_
    # the LOO SSE (not the per-entry mean) is invariant
    np.testing.assert_allclose(small.loo_path_ * n * Y_r.shape[1], full.loo_path_ * n * t,
                               rtol=1e-9)


def test_compressed_targets_reconstruct_the_centred_labels():
    _, Y = make_data(30, 4, 9, seed=3)
    Y_r, V_r = compress_targets(Y, energy=1.0)
    np.testing.assert_allclose(Y_r.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(Y_r @ V_r.T, Y - Y.mean(axis=0), atol=1e-10)
    np.testing.assert_allclose(V_r.T @ V_r, np.eye(V_r.shape[1]), atol=1e-12)
    Y_2, _ = compress_targets(Y, rank=2)
    assert Y_2.shape == (30, 2)
    assert retained_energy(Y, [Y_r.shape[1]])[0] == pytest.approx(1.0)


def test_rank_by_energy_hand_case():
    s = np.array([3.0, 2.0, 1.0])                             # energy shares 9/14, 13/14, 1
    assert compression_rank(s, 0.5) == 1
    assert compression_rank(s, 9 / 14) == 1
    assert compression_rank(s, 0.9) == 2
    assert compression_rank(s, 0.99) == 3
    assert compression_rank(s, 1.0) == 3
    assert compression_rank(np.array([2.0, 1e-20]), 1.0) == 1  # numerical rank
    with pytest.raises(TrainerError, match="energy"):
        compression_rank(s, 0.0)


def test_truncated_compression_is_cheaper_and_close():
    X, Y = make_data(60, 15, 40, seed=5)
    Y_r, _ = compress_targets(Y, energy=0.9)
    assert Y_r.shape[1] < 40
    full = GreedyRLS(budget=3, lam=1.0).fit(X, Y)
    small = GreedyRLS(budget=3, lam=1.0).fit(X, Y_r)
    assert len(set(full.selected_) & set(small.selected_)) >= 2


def test_mlcssp_picks_spanning_labels_and_is_deterministic():
    rng = np.random.default_rng(0)
    base = np.where(rng.normal(size=(50, 3)) > 0, 1.0, -1.0)
    Y = base[:, [0, 1, 2, 0, 1, 2, 0, 1]]                    # 8 labels spanned by 3 columns
    Y[:, 7] *= -1
    cols = mlcssp_select(Y, 3, seed=1)
    assert len(set(cols.tolist())) == 3
    np.testing.assert_array_equal(cols, mlcssp_select(Y, 3, seed=1))
    B = reconstruction_matrix(Y, cols)
    np.testing.assert_allclose(reconstruct(Y[:, cols], B), Y, atol=1e-10)
    np.testing.assert_array_equal(mlcssp_select(Y, 8), np.arange(8))
    with pytest.raises(TrainerError, match="k=9"):
        mlcssp_select(Y, 9)


def test_bad_label_matrix():
    with pytest.raises(TrainerError, match="non-finite"):
        compress_targets(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(TrainerError, match="rank=5"):
        compress_targets(np.eye(3), rank=5)


def test_fit_on_compressed_labels_matches_the_uncompressed_estimator():
    from sensorbudget.trainer.label_compression import fit_on_compressed_labels

    X, Y = make_data(40, 12, 8, seed=9)
    full = GreedyRLS(budget=4).fit(X, Y)
    packed = fit_on_compressed_labels(GreedyRLS(budget=4), X, Y, energy=1.0)
    np.testing.assert_array_equal(packed.selected_, full.selected_)
    np.testing.assert_allclose(packed.predict(X), full.predict(X), atol=1e-10)
    np.testing.assert_allclose(packed.loo_path_, full.loo_path_, rtol=1e-9)
    assert packed.label_compression_["n_labels"] == 8
    assert len(packed.path_[-1]["loo_mse_per_target"]) == 8
    with pytest.raises(TrainerError, match="joint"):
        fit_on_compressed_labels(GreedyRLS(budget=2, mode="separate"), X, Y)


def _explicit_loo(X, Y, features, lam, x_mean, x_scale, fit_intercept):
    """Refit ridge (intercept unpenalized, refitted) without each row and predict it."""
    Xs = (X[:, features] - x_mean[features]) / x_scale[features]
    out = np.empty_like(Y)
    for i in range(len(X)):
        keep = np.arange(len(X)) != i
        A, B = Xs[keep], Y[keep]
        if fit_intercept:
            a_mean, b_mean = A.mean(axis=0), B.mean(axis=0)
        else:
            a_mean, b_mean = np.zeros(A.shape[1]), np.zeros(B.shape[1])
        W = np.linalg.solve((A - a_mean).T @ (A - a_mean) + lam * np.eye(A.shape[1]),
                            (A - a_mean).T @ (B - b_mean))
        out[i] = (Xs[i] - a_mean) @ W + b_mean
    return out


@pytest.mark.parametrize("energy", [1.0, 0.6])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_compressed_fit_heldout_predictions_are_in_label_units(energy, fit_intercept):
    from sensorbudget.trainer.evaluation.calibration import heldout_predictions
    from sensorbudget.trainer.label_compression import fit_on_compressed_labels

    X, Y = make_data(30, 10, 6, seed=4)
    est = fit_on_compressed_labels(GreedyRLS(budget=3, fit_intercept=fit_intercept), X, Y,
                                   energy=energy)
    assert est.label_compression_["rank"] <= 6
    ref = _explicit_loo(X, Y, np.asarray(est.selected_), float(est.lam_), est.x_mean_,
                        est.x_scale_, fit_intercept)
    assert est.heldout_predictions_.shape == Y.shape
    np.testing.assert_allclose(est.heldout_predictions_, ref, atol=1e-9)
    # the threshold code path of train takes them as they are
    np.testing.assert_allclose(heldout_predictions(est, X, Y), ref, atol=1e-9)
