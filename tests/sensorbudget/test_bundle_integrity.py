"""The whole bundle is covered by its hash: an edited model.json is refused by every command; a
bundle without ``content_sha256`` (format 1, or the hash removed: a downgrade) is refused by every
command that reads it, naming ``sensorbudget upgrade``, which re-hashes a bundle the user vouches
for; numbers and types the schema cannot hold are one ``Error:`` line (issue 33)."""

import csv
import hashlib
import io
import json

import numpy as np
import pytest

from tests.fixtures import write_sensors_toml, write_stream
from sensorbudget.trainer.bundle import npz_bytes
from sensorbudget.trainer.bundle.model import content_sha256


@pytest.fixture
def bundle(tmp_path, invoke):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 5))
    y = X[:, 1] + 2 * X[:, 3] + 0.1 * rng.normal(size=50)
    lines = ["a,b,c,d,e,y"] + [",".join(f"{v:.6f}" for v in (*x, t)) for x, t in zip(X, y)]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "B"
    result = invoke(["train", str(tmp_path / "t.csv"), "--target", "y", "--budget", "3",
                     "--lam", "1", "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def rec_bundle(tmp_path, invoke):
    """A bundle of recordings: every command (firmware, library, simulate) can read it."""
    write_stream(tmp_path / "rec" / "s.csv")
    write_sensors_toml(tmp_path / "sensors.toml")
    out = tmp_path / "R"
    result = invoke(["train", str(tmp_path / "rec"), "--sensors", str(tmp_path / "sensors.toml"),
                     "--budget", "2", "--lam", "1", "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def edit(bundle, change):
    meta = json.loads((bundle / "model.json").read_text())
    change(meta)
    (bundle / "model.json").write_text(json.dumps(meta, indent=2, sort_keys=True))
    return meta


@pytest.mark.parametrize("argv", [["info", "{b}"], ["export", "c-header", "{b}", "-o", "{o}"],
                                  ["export", "onnx", "{b}", "-o", "{o}"]])
def test_reordered_selection_is_refused(invoke, bundle, tmp_path, argv):
    def reverse(meta):
        meta["selected"].reverse()
        meta["selected_index"].reverse()

    edit(bundle, reverse)
    out = tmp_path / "model.out"
    result = invoke([a.format(b=bundle, o=out) for a in argv])
    assert result.exit_code == 2
    assert "content_sha256" in result.output and "tampered" in result.output
    assert not out.exists()


#: every command that reads a bundle; ``{o}`` is its output (never written on a refusal)
READERS = {
    "info": ["info", "{b}"],
    "predict": ["predict", "{b}", "{rec}", "-o", "{o}"],
    "export-onnx": ["export", "onnx", "{b}", "-o", "{o}"],
    "export-c-header": ["export", "c-header", "{b}", "-o", "{o}"],
    "export-c-library": ["export", "c-library", "{b}", "-o", "{o}"],
    "firmware": ["firmware", "{b}", "--target", "host", "-o", "{o}"],
    "simulate": ["simulate", "{b}", "--recordings", "{rec}", "--backend", "python", "--report",
                 "{o}"],
    "report": ["report", "{b}", "-o", "{o}"],
}


def run_reader(invoke, name, bundle, tmp_path):
    out = tmp_path / "out"
    result = invoke([a.format(b=bundle, rec=tmp_path / "rec", o=out) for a in READERS[name]])
    return result, out


def one_error(result) -> str:
    """The single non-empty output line of a refused command (exit 2, no traceback)."""
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def downgrade(bundle, *, version=1):
    """The issue's attack: edit the weights (every score negated), recompute the plain
    weights_sha256, delete content_sha256 and claim format 1."""
    with np.load(bundle / "weights.npz", allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["W"], arrays["b"] = -arrays["W"], -arrays["b"]
    blob = npz_bytes(arrays)
    (bundle / "weights.npz").write_bytes(blob)

    def change(meta):
        meta["weights_sha256"] = hashlib.sha256(blob).hexdigest()
        meta["format_version"] = version
        del meta["content_sha256"]

    edit(bundle, change)


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("name", sorted(READERS))
def test_a_bundle_without_content_hash_is_refused_naming_upgrade(invoke, rec_bundle, tmp_path,
                                                                 name, version):
    downgrade(rec_bundle, version=version)
    result, out = run_reader(invoke, name, rec_bundle, tmp_path)
    line = one_error(result)
    assert f"sensorbudget upgrade {rec_bundle}" in line and "content_sha256" in line, line
    assert not out.exists()


def predictions(invoke, bundle, tmp_path, name) -> np.ndarray:
    out = tmp_path / name
    result = invoke(["predict", str(bundle), str(tmp_path / "rec"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    return np.array([float(r["y"]) for r in rows])


def test_upgrade_rehashes_the_bundle_the_user_vouches_for(invoke, rec_bundle, tmp_path):
    before = predictions(invoke, rec_bundle, tmp_path, "before.csv")
    downgrade(rec_bundle)
    result = invoke(["upgrade", str(rec_bundle)])
    assert result.exit_code == 0, result.output
    assert "vouch" in result.output and "content_sha256" in result.output
    meta = json.loads((rec_bundle / "model.json").read_text())
    assert meta["format_version"] == 2 and meta["content_sha256"] == content_sha256(meta)
    after = predictions(invoke, rec_bundle, tmp_path, "after.csv")
    np.testing.assert_allclose(after, -before, rtol=1e-12, atol=1e-12)   # the edit, vouched for
    result = invoke(["train", str(tmp_path / "rec"), "--sensors", str(tmp_path / "sensors.toml"),
                     "--budget", "1", "--lam", "1", "-o", str(rec_bundle)])
    assert result.exit_code == 0, result.output                  # now sensorbudget's own output


def test_upgrade_refuses_what_is_not_a_bundle_folder(invoke, rec_bundle, tmp_path):
    (rec_bundle / "notes.txt").write_text("mine")
    line = one_error(invoke(["upgrade", str(rec_bundle)]))
    assert "'notes.txt'" in line
    (rec_bundle / "notes.txt").unlink()
    (rec_bundle / "weights.npz").write_bytes(b"not a zip")
    line = one_error(invoke(["upgrade", str(rec_bundle)]))
    assert "weights.npz" in line


def huge_integer(bundle):
    text = (bundle / "model.json").read_text()
    (bundle / "model.json").write_text(text.replace('"n_samples": ', '"n_samples": '
                                                    + "9" * 5000 + ', "was": ', 1))


def no_channels(bundle):
    def change(meta):
        for entry in meta["extractors"]:
            entry["params"]["channels"] = []
        meta["content_sha256"] = content_sha256(meta)

    edit(bundle, change)


@pytest.mark.parametrize("name", sorted(READERS))
@pytest.mark.parametrize("damage, named", [(huge_integer, "5000 digits"),
                                           (no_channels, "channels=[]")])
def test_numbers_and_types_the_schema_refuses_are_one_line(invoke, rec_bundle, tmp_path, name,
                                                           damage, named):
    damage(rec_bundle)
    result, out = run_reader(invoke, name, rec_bundle, tmp_path)
    assert named in one_error(result)
    assert not out.exists()
