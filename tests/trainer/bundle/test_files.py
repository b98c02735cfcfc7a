"""Output files: modes honour the umask (as plain open/mkdir do), folders are replaced whole."""

import os
import stat

import numpy as np
import pytest

from trainer.bundle import npz_bytes, write_atomically, write_folder_atomically
from trainer.errors import OutputError


@pytest.fixture(params=[0o022, 0o027, 0o077])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def plain_modes(tmp_path):
    """The modes a plain open() and mkdir() give under the current umask (the reference)."""
    ref = tmp_path / "reference"
    ref.mkdir()
    (ref / "f").write_bytes(b"")
    return mode(ref / "f"), mode(ref)


def test_file_mode_is_that_of_open(tmp_path, umask):
    file_mode, _ = plain_modes(tmp_path)
    write_atomically(tmp_path / "out" / "model.h", b"x")
    assert mode(tmp_path / "out" / "model.h") == file_mode == 0o666 & ~umask
    write_atomically(tmp_path / "out" / "model.h", b"y")          # replacing keeps it
    assert mode(tmp_path / "out" / "model.h") == file_mode
    assert (tmp_path / "out" / "model.h").read_bytes() == b"y"


def test_folder_modes_are_those_of_mkdir(tmp_path, umask):
    file_mode, dir_mode = plain_modes(tmp_path)
    write_folder_atomically(tmp_path / "b", {"a.json": b"{}", "w.npz": npz_bytes({"W": 1})},
                            replaceable={"a.json", "w.npz"})
    assert mode(tmp_path / "b") == dir_mode == 0o777 & ~umask
    assert {mode(p) for p in (tmp_path / "b").iterdir()} == {file_mode}


def test_folder_is_replaced_whole_and_nothing_else_is_touched(tmp_path):
    out = tmp_path / "b"
    write_folder_atomically(out, {"a": b"1", "b": b"2"}, replaceable={"a", "b"})
    sibling = tmp_path / ".b.old"
    sibling.mkdir()
    (sibling / "keep.txt").write_text("mine")
    write_folder_atomically(out, {"a": b"3"}, replaceable={"a", "b"})
    assert sorted(p.name for p in out.iterdir()) == ["a"]
    assert (out / "a").read_bytes() == b"3"
    assert (sibling / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".b.old", "b"]   # no temporaries


def test_a_foreign_folder_is_refused(tmp_path):
    out = tmp_path / "notes"
    out.mkdir()
    (out / "notes.txt").write_text("user data")
    with pytest.raises(OutputError, match="notes.txt"):
        write_folder_atomically(out, {"a": b"1"}, replaceable={"a"})
    assert (out / "notes.txt").read_text() == "user data"
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="not a directory"):
        write_folder_atomically(tmp_path / "file", {"a": b"1"}, replaceable={"a"})


def test_npz_bytes_are_reproducible_and_load_without_pickle(tmp_path):
    arrays = {"W": np.arange(6.0).reshape(2, 3), "b": np.float64(2.5)}
    blob = npz_bytes(arrays)
    assert blob == npz_bytes(dict(reversed(list(arrays.items()))))
    (tmp_path / "w.npz").write_bytes(blob)
    with np.load(tmp_path / "w.npz", allow_pickle=False) as npz:
        np.testing.assert_array_equal(npz["W"], arrays["W"])
        assert npz["b"].shape == ()
