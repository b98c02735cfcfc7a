"""Output files: new ones honour the umask (as plain open/mkdir do), replaced ones keep their
modes; folders are replaced whole, and only while they are exactly their manifest; temporaries
left by an interrupt are removed by the next write."""

import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sensorbudget.trainer.bundle import npz_bytes, write_atomically, write_folder_atomically
from sensorbudget.trainer.bundle.manifest import MANIFEST_FILE
from sensorbudget.trainer.errors import OutputError

REPO = Path(__file__).resolve().parents[3]


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
                            kind="report")
    assert mode(tmp_path / "b") == dir_mode == 0o777 & ~umask
    assert {mode(p) for p in (tmp_path / "b").iterdir()} == {file_mode}


def test_folder_is_replaced_whole_and_nothing_else_is_touched(tmp_path):
    out = tmp_path / "b"
    write_folder_atomically(out, {"a": b"1", "b": b"2"}, kind="report")
    sibling = tmp_path / ".b.old"
    sibling.mkdir()
    (sibling / "keep.txt").write_text("mine")
    write_folder_atomically(out, {"a": b"3"}, kind="report")
    assert sorted(p.name for p in out.iterdir()) == ["a", MANIFEST_FILE]
    assert (out / "a").read_bytes() == b"3"
    assert (sibling / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".b.old", "b"]   # no temporaries


def test_a_foreign_folder_is_refused(tmp_path):
    out = tmp_path / "notes"
    out.mkdir()
    (out / "notes.txt").write_text("user data")
    with pytest.raises(OutputError, match="notes.txt"):
        write_folder_atomically(out, {"a": b"1"}, kind="report")
    assert (out / "notes.txt").read_text() == "user data"
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="not a directory"):
        write_folder_atomically(tmp_path / "file", {"a": b"1"}, kind="report")


# --- ownership by manifest (issue 33, item 1) -------------------------------------------------

FILES = {"model.json": b"{}\n", "src/a.c": b"int a;\n", "src/deep/b.h": b"#define B 1\n"}


def tree(folder) -> dict:
    """Everything under ``folder``: files as bytes, links as their target, folders as None."""
    return {str(p.relative_to(folder)): (os.readlink(p) if p.is_symlink() else
                                         p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*"))}


def test_the_manifest_lists_every_file_with_its_sha256(tmp_path):
    out = tmp_path / "out"

    def build(folder):
        (folder / "build").mkdir()
        (folder / "build" / "fw.elf").write_bytes(b"\x7fELF")

    write_folder_atomically(out, FILES, kind="firmware", then=build)
    manifest = json.loads((out / MANIFEST_FILE).read_text())
    expected = {rel: hashlib.sha256(data).hexdigest() for rel, data in FILES.items()}
    expected["build/fw.elf"] = hashlib.sha256(b"\x7fELF").hexdigest()
    assert manifest == {"format": "sensorbudget-output", "kind": "firmware", "files": expected}
    first = (out / MANIFEST_FILE).read_bytes()
    write_folder_atomically(out, FILES, kind="firmware", then=build)     # its own: replaced
    assert (out / MANIFEST_FILE).read_bytes() == first                  # same input, same bytes


def _extra_file(out):
    (out / "src" / "deep" / "user.c").write_text("mine")
    return "src/deep/user.c"


def _empty_folder(out):
    (out / "src" / "mine").mkdir()
    return "src/mine"


def _link(out):
    (out / "zlink").symlink_to(out / "model.json")
    return "zlink"


def _changed(out):
    (out / "src" / "a.c").write_text("int a = 1;\n")
    return "src/a.c"


def _no_manifest(out):
    (out / MANIFEST_FILE).unlink()
    return "model.json"


def _manifest(change, named):
    def tamper(out):
        data = json.loads((out / MANIFEST_FILE).read_text())
        change(data)
        (out / MANIFEST_FILE).write_text(json.dumps(data))
        return named
    return tamper


def _not_json(out):
    (out / MANIFEST_FILE).write_text('{"format": ')
    return "model.json"


@pytest.mark.parametrize("tamper", [
    _extra_file, _empty_folder, _link, _changed, _no_manifest, _not_json,
    _manifest(lambda d: d.update(kind="bundle"), "bundle"),
    _manifest(lambda d: d["files"].update({"src/a.c": "0" * 63}), "model.json"),
], ids=["extra-file", "empty-folder", "link", "changed", "no-manifest", "not-json", "other-kind",
        "bad-hash"])
def test_a_folder_that_is_not_exactly_its_manifest_is_refused_and_kept(tmp_path, tamper):
    out = tmp_path / "out"
    write_folder_atomically(out, FILES, kind="firmware")
    named = tamper(out)
    before = tree(out)
    with pytest.raises(OutputError, match=f"not an earlier firmware.*{named}.*refusing"):
        write_folder_atomically(out, {"other": b"x"}, kind="firmware")
    assert tree(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_deleted_generated_file_does_not_make_the_folder_foreign(tmp_path):
    out = tmp_path / "out"
    write_folder_atomically(out, FILES, kind="firmware")
    (out / "src" / "a.c").unlink()
    write_folder_atomically(out, {"x.c": b"1"}, kind="firmware")
    assert tree(out).keys() == {"x.c", MANIFEST_FILE}


def test_force_moves_a_foreign_folder_aside_whole(tmp_path):
    out = tmp_path / "proj"
    (out / "src").mkdir(parents=True)
    (out / "src" / "main.c").write_text("int main(){}")
    (out / "firmware.json").write_text('{"v":1}')
    before = tree(out)
    moved = write_folder_atomically(out, FILES, kind="firmware", force=True)
    assert moved == tmp_path / "proj.moved-aside" and tree(moved) == before
    (out / "README").write_text("notes")
    before = tree(out)
    moved = write_folder_atomically(out, FILES, kind="firmware", force=True)
    assert moved == tmp_path / "proj.moved-aside-2" and tree(moved) == before
    assert write_folder_atomically(out, FILES, kind="firmware", force=True) is None   # its own
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj", "proj.moved-aside",
                                                          "proj.moved-aside-2"]


# --- modes kept (issue 33, item 4) ------------------------------------------------------------

@pytest.mark.parametrize("kept", [0o600, 0o640, 0o604])
def test_replacing_a_file_keeps_its_mode(tmp_path, umask, kept):
    path = tmp_path / "secret.onnx"
    path.write_bytes(b"old")
    os.chmod(path, kept)
    write_atomically(path, b"new")
    assert mode(path) == kept and path.read_bytes() == b"new"


def test_replacing_a_folder_keeps_the_modes_of_the_folder_and_its_files(tmp_path, umask):
    file_mode, dir_mode = plain_modes(tmp_path)
    out = tmp_path / "out"
    write_folder_atomically(out, FILES, kind="firmware")
    for rel, kept in (("model.json", 0o600), ("src/deep", 0o700), ("src/a.c", 0o640)):
        os.chmod(out / rel, kept)
    os.chmod(out, 0o750)
    write_folder_atomically(out, {**FILES, "new.txt": b"n", "src/new/c.c": b"c"},
                            kind="firmware")
    classes = 0o770                           # what a 0750 folder grants: owner and group
    assert mode(out) == 0o750
    assert {rel: mode(out / rel) for rel in ("model.json", "src/deep", "src/a.c", "src/deep/b.h",
                                             "new.txt", "src/new", "src/new/c.c", "src")} == {
        "model.json": 0o600, "src/deep": 0o700, "src/a.c": 0o640,
        "src/deep/b.h": file_mode, "src": dir_mode,            # kept (they had plain modes)
        "new.txt": file_mode & classes, "src/new": dir_mode & classes,
        "src/new/c.c": file_mode & classes}


def test_an_empty_private_folder_stays_private(tmp_path, umask):
    file_mode, _ = plain_modes(tmp_path)
    out = tmp_path / "priv"
    out.mkdir(mode=0o700)
    os.chmod(out, 0o700)
    write_folder_atomically(out, FILES, kind="bundle")
    assert mode(out) == 0o700
    assert {mode(p) for p in out.rglob("*") if p.is_file()} == {file_mode & 0o700}


# --- interrupts (issue 33, item 5) ------------------------------------------------------------

KILLED_MID_REMOVAL = """
import os, shutil, signal, sys
import sensorbudget.trainer.bundle.files as files
out = sys.argv[1]
files.write_folder_atomically(out, {f"f{i:04d}": b"old" for i in range(400)}, kind="report")

def rmtree(path, ignore_errors=False):           # the old folder, after the swap
    for name in sorted(os.listdir(path))[:100]:
        os.unlink(os.path.join(path, name))
    os.kill(os.getpid(), signal.SIGKILL)         # interrupted mid-removal, no cleanup at all

files.shutil.rmtree = rmtree
files.write_folder_atomically(out, {"new": b"new"}, kind="report")
"""


def test_an_old_folder_left_mid_removal_is_removed_by_the_next_write(tmp_path):
    out = tmp_path / "out"
    child = subprocess.run([sys.executable, "-c", KILLED_MID_REMOVAL, str(out)], cwd=REPO)
    assert child.returncode == -signal.SIGKILL
    assert tree(out).keys() == {"new", MANIFEST_FILE}            # the swap was done
    left = [p for p in tmp_path.iterdir() if p.name != "out"]
    assert len(left) == 1 and left[0].name.startswith(".out.sensorbudget-tmp-")
    assert len(list(left[0].iterdir())) == 301                    # 300 old files + manifest
    mine = tmp_path / f".out.sensorbudget-tmp-{os.getpid()}-x"   # a running writer's: kept
    mine.mkdir()
    write_folder_atomically(out, {"newer": b"2"}, kind="report")
    assert sorted(p.name for p in tmp_path.iterdir()) == [mine.name, "out"]
    assert tree(out).keys() == {"newer", MANIFEST_FILE}


def test_a_temporary_file_of_a_dead_writer_is_removed_by_the_next_write(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    left = tmp_path / f".model.h.sensorbudget-tmp-{int(dead.stdout)}-abc.tmp"
    left.write_bytes(b"half")
    write_atomically(tmp_path / "model.h", b"x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.h"]


def _flatten(out: Path) -> None:
    """Remove the d/d/d/... chain under ``out`` without recursion (shutil.rmtree, and so
    pytest's clean-up of old temporary folders, recurses and fails at this depth)."""
    lifted, current = [], out
    while (current / "d").is_dir():
        lifted.append(out.parent / f"lifted{len(lifted)}")
        os.rename(current / "d", lifted[-1])
        current = lifted[-1]
    for path in lifted:
        os.rmdir(path)


def test_a_deeply_nested_foreign_folder_is_named_not_a_recursion_error(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY)
    try:
        for _ in range(1200):                 # deeper than Python's recursion limit
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(fd)
        with pytest.raises(OutputError, match="empty folder 'd/d/d/"):
            write_folder_atomically(out, FILES, kind="firmware")
    finally:
        _flatten(out)


def test_an_interrupt_before_the_swap_leaves_the_old_folder_and_no_temporaries(tmp_path):
    out = tmp_path / "out"
    write_folder_atomically(out, FILES, kind="firmware")
    before = tree(out)

    def interrupted(folder):
        (folder / "half.o").write_bytes(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_folder_atomically(out, {"x": b"1"}, kind="firmware", then=interrupted)
    assert tree(out) == before and [p.name for p in tmp_path.iterdir()] == ["out"]


def test_npz_bytes_are_reproducible_and_load_without_pickle(tmp_path):
    arrays = {"W": np.arange(6.0).reshape(2, 3), "b": np.float64(2.5)}
    blob = npz_bytes(arrays)
    assert blob == npz_bytes(dict(reversed(list(arrays.items()))))
    (tmp_path / "w.npz").write_bytes(blob)
    with np.load(tmp_path / "w.npz", allow_pickle=False) as npz:
        np.testing.assert_array_equal(npz["W"], arrays["W"])
        assert npz["b"].shape == ()
