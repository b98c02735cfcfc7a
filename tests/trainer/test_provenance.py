"""Whether data are a bundle's training data is decided on their bytes, not their name
(issue 32: a test split's stream.csv was labelled in-sample because the training split's file
had the same name): the recordings digest, and predict, simulate and compare labelling the same
data the same way."""

import hashlib
import json
import os
import shutil

import pytest
from click.testing import CliRunner

from tests.fixtures import TINY_SENSORS, write_stream
from sensorbudget.trainer.provenance import fingerprint, same_data


def _folder(base):
    write_stream(base / "a.csv", seed=0)
    write_stream(base / "sub" / "b.csv", seed=1)
    return base


def test_the_digest_follows_the_bytes_wherever_they_are(tmp_path):
    a = _folder(tmp_path / "a")
    b = tmp_path / "elsewhere" / "b"
    shutil.copytree(a, b)
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(a / "a.csv") == hashlib.sha256((a / "a.csv").read_bytes()).hexdigest()
    os.symlink(a / "a.csv", b / "link.csv")                 # a link is not part of it
    assert fingerprint(b) == fingerprint(a)
    (b / "sub" / "b.csv").write_bytes((b / "sub" / "b.csv").read_bytes().replace(b"1", b"2", 1))
    assert fingerprint(b) != fingerprint(a)
    shutil.rmtree(b)
    shutil.copytree(a, b)
    (b / "sub" / "b.csv").rename(b / "sub" / "c.csv")         # same bytes, other name
    assert fingerprint(b) != fingerprint(a)
    shutil.rmtree(b)
    shutil.copytree(a, b)
    (b / "extra.csv").write_text("time,ax\n")
    assert fingerprint(b) != fingerprint(a)


def test_same_data_says_when_it_cannot_tell(tmp_path):
    rec = write_stream(tmp_path / "stream.csv")
    other = write_stream(tmp_path / "o" / "stream.csv", seed=5)
    digest = hashlib.sha256(rec.read_bytes()).hexdigest()
    assert same_data({"recordings": "stream.csv", "recordings_sha256": digest}, rec) is True
    assert same_data({"recordings": "stream.csv", "recordings_sha256": digest}, other) is False
    assert same_data({"recordings": "stream.csv"}, rec) is None       # a name proves nothing
    assert same_data({"file": "t.csv", "sha256": digest}, rec) is True
    assert same_data({"file": "t.csv", "sha256": digest}, other) is False
    assert same_data({"file": "f.npz", "sha256": "0" * 64}, rec) is None  # table of these?
    assert same_data({"recordings": "x", "recordings_sha256": digest}, tmp_path / "no") is None


def _cli(*args):
    from sensorbudget.cli import main

    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("where", ["copy", "other"])
def test_predict_and_simulate_label_the_same_recordings_alike(tmp_path, where):
    (tmp_path / "sensors.toml").write_text(TINY_SENSORS)
    rec = write_stream(tmp_path / "train" / "stream.csv", seed=0)
    _cli("train", rec, "--sensors", tmp_path / "sensors.toml", "--budget", "2", "-o",
         tmp_path / "b")
    if where == "copy":
        data = tmp_path / "copy" / "stream.csv"
        data.parent.mkdir()
        shutil.copyfile(rec, data)
    else:                                                   # the same name, other recordings
        data = write_stream(tmp_path / "test" / "stream.csv", seed=7)
    line = next(x for x in _cli("predict", tmp_path / "b", data, "-o", tmp_path / "p.csv")
                .splitlines() if x.startswith("metrics on"))
    _cli("simulate", tmp_path / "b", "--recordings", data, "--backend", "python", "--report",
         tmp_path / "sim")
    report = json.loads((tmp_path / "sim" / "report.json").read_text(encoding="utf-8"))
    said = report["accuracy"]["device"]["data"]
    assert f"Replayed recordings: {said}." in (tmp_path / "sim" / "summary.md").read_text()
    assert ("; in-sample:" in line) == said.startswith("in-sample:") == (where == "copy")
    assert ("test split" in line) == ("test split" in said) == (where == "other")
    row = next(x for x in _cli("compare", tmp_path / "sim", tmp_path / "sim").splitlines()
               if x.startswith("accuracy (device"))
    assert row.count("(in-sample)") == 2 * (where == "copy")
    assert row.count("(test split)") == 2 * (where == "other")
