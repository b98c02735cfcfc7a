"""The bundle contract: round trip, determinism, atomic writes, and refusal of bad bundles."""

import hashlib
import json

import numpy as np
import pytest

from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier
from sensorbudget.trainer.bundle.model import (
    FORMAT_VERSION,
    bundle_contents,
    content_sha256,
    load_bundle,
    save_bundle,
    upgrade_bundle,
)
from sensorbudget.trainer.bundle.schema import MAX_INT_DIGITS
from sensorbudget.trainer.errors import BundleError


def fitted(seed=0, classifier=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 6)) * [1, 2, 3, 4, 5, 6] + 10
    if classifier:
        Y = (X[:, [0, 2]] > 10).astype(int)
        est = GreedyRLSClassifier(budget=3, lam=0.5).fit(X, Y)
        task, targets = "multilabel", ["l0", "l1"]
    else:
        Y = X[:, [1, 4]] @ [[1.0, 2.0], [0.5, -1.0]] + rng.normal(size=(40, 2))
        est = GreedyRLS(budget=3, lam=0.5).fit(X, Y)
        task, targets = "regression", ["y0", "y1"]
    return est, X, task, targets


def write(tmp_path, classifier=False, name="b"):
    est, X, task, targets = fitted(classifier=classifier)
    meta, arrays = bundle_contents(est, X, [f"f{i}" for i in range(6)], targets, task=task)
    save_bundle(tmp_path / name, meta, arrays)
    return est, X, tmp_path / name


@pytest.mark.parametrize("classifier", [False, True])
def test_roundtrip_predicts_like_the_estimator(tmp_path, classifier):
    est, X, path = write(tmp_path, classifier)
    b = load_bundle(path)
    assert b.meta["selected_index"] == est.selected_.tolist()
    assert b.meta["selected"] == [f"f{i}" for i in est.selected_]
    assert [e["step"] for e in b.meta["path"]] == [1, 2, 3]
    assert b.meta["required_extractors"] == b.meta["selected"] and b.meta["required_sensors"] == []
    # Prediction by the documented formula equals the estimator's.
    scores = X[:, b.selected_index] @ b.W + b.b
    ref = est.decision_function(X) if classifier else est.predict(X)
    np.testing.assert_allclose(scores, ref, rtol=1e-12)
    np.testing.assert_allclose(b.decision_scores(X), scores, rtol=1e-12)   # reference order
    if classifier:
        np.testing.assert_array_equal(b.predict(X), est.predict(X))
    np.testing.assert_allclose(b.arrays["x_min"], X[:, est.selected_].min(axis=0))


def test_bytes_are_deterministic(tmp_path):
    write(tmp_path, name="a")
    write(tmp_path, name="b")
    for f in ("model.json", "weights.npz"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()


def test_overwrites_a_bundle_but_not_other_directories(tmp_path):
    write(tmp_path)
    write(tmp_path)   # replacing an existing bundle is fine
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("x")
    est, X, task, targets = fitted()
    meta, arrays = bundle_contents(est, X, [f"f{i}" for i in range(6)], targets, task=task)
    with pytest.raises(BundleError, match="not an earlier bundle.*keep.txt"):
        save_bundle(tmp_path / "other", meta, arrays)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "other"]


def test_invalid_contents_write_nothing(tmp_path):
    est, X, task, targets = fitted()
    meta, arrays = bundle_contents(est, X, [f"f{i}" for i in range(6)], ["only-one"], task=task)
    with pytest.raises(BundleError, match="W has shape"):
        save_bundle(tmp_path / "bad", meta, arrays)
    assert list(tmp_path.iterdir()) == []


def edit_json(path, rehash=True, **changes):
    """Edit model.json; with ``rehash`` its content_sha256 is recomputed (as a careful forger
    would), so that the checks behind the hash are reached."""
    meta = json.loads((path / "model.json").read_text())
    meta.update(changes)
    if rehash:
        meta["content_sha256"] = content_sha256(meta)
    (path / "model.json").write_text(json.dumps(meta))


@pytest.mark.parametrize("change,match", [
    (dict(format_version=FORMAT_VERSION + 1), f"format_version={FORMAT_VERSION + 1} is not"),
    (dict(format="other"), "is not a sensorbudget-bundle"),
    (dict(selected_index=[0, 1, 99]), "out of range"),
    (dict(task="ranking"), "task='ranking'"),
    (dict(targets=["y0"]), "W has shape"),
])
def test_tampered_model_json(tmp_path, change, match):
    _, _, path = write(tmp_path)
    edit_json(path, **change)
    with pytest.raises(BundleError, match=match):
        load_bundle(path)


def test_any_edit_of_model_json_is_detected(tmp_path):
    """Reversing selected and selected_index together keeps every array consistent; only the
    content hash notices (before format 2 such a bundle loaded and predicted differently)."""
    _, _, path = write(tmp_path)
    meta = json.loads((path / "model.json").read_text())
    assert len(meta["selected"]) > 1
    edit_json(path, rehash=False, selected=meta["selected"][::-1],
              selected_index=meta["selected_index"][::-1])
    with pytest.raises(BundleError, match="content_sha256.*tampered"):
        load_bundle(path)


def test_the_content_hash_is_that_of_the_canonical_text(tmp_path):
    _, _, path = write(tmp_path)
    meta = json.loads((path / "model.json").read_text())
    rest = {k: v for k, v in meta.items() if k != "content_sha256"}
    text = json.dumps(rest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert meta["content_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert meta["format_version"] == 2 and load_bundle(path).meta == meta


@pytest.mark.parametrize("version", [1, 2])
def test_a_bundle_without_content_hash_is_refused_until_upgraded(tmp_path, version):
    """No downgrade: format 1 (or the hash deleted) is refused, naming the upgrade; upgrading
    hashes the files as they are (here model.json edited as the user wants it)."""
    _, X, path = write(tmp_path)
    meta = json.loads((path / "model.json").read_text())
    del meta["content_sha256"]
    meta["format_version"] = version
    meta["targets"] = ["renamed", "y1"]
    (path / "model.json").write_text(json.dumps(meta))
    with pytest.raises(BundleError, match=f"no content_sha256.*sensorbudget upgrade {path}"):
        load_bundle(path)
    done = upgrade_bundle(path)
    assert done["old_version"] == version and done["weights_matched"]
    assert not done["content_matched"]
    bundle = load_bundle(path)
    assert bundle.meta["targets"] == ["renamed", "y1"] and bundle.meta["format_version"] == 2
    rest = {k: v for k, v in bundle.meta.items()
            if k not in ("content_sha256", "format_version")}
    assert rest == {k: v for k, v in meta.items() if k != "format_version"}


@pytest.mark.parametrize("digits", [MAX_INT_DIGITS + 1, 5000])
def test_an_integer_too_long_for_int64_is_refused(tmp_path, digits):
    _, _, path = write(tmp_path)
    text = (path / "model.json").read_text()
    (path / "model.json").write_text(text.replace('"n_samples": ', '"n_samples": '
                                                  + "1" * digits + ', "was": ', 1))
    with pytest.raises(BundleError, match=f"integer of {digits} digits"):
        load_bundle(path)


@pytest.mark.parametrize("value", [2**63, -2**63 - 1])
def test_an_integer_outside_int64_fails_the_schema(tmp_path, value):
    _, _, path = write(tmp_path)
    edit_json(path, n_samples=value)
    with pytest.raises(BundleError, match="n_samples=.* must be an integer"):
        load_bundle(path)


def test_tampered_or_missing_files(tmp_path):
    _, _, path = write(tmp_path)
    blob = bytearray((path / "weights.npz").read_bytes())
    blob[-30] ^= 0xFF
    (path / "weights.npz").write_bytes(bytes(blob))
    with pytest.raises(BundleError, match="does not match model.json weights_sha256"):
        load_bundle(path)
    (path / "model.json").write_text("{not json")
    with pytest.raises(BundleError, match="not valid JSON"):
        load_bundle(path)
    (path / "weights.npz").unlink()
    with pytest.raises(BundleError, match="weights.npz' is missing"):
        load_bundle(path)
