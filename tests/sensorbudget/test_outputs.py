"""Outputs never destroy what the tool did not write (issue reproducers): foreign folders, device
nodes, FIFOs and links are refused with exit 2; folders are replaced whole, so readers and
interrupted writes see the old output or the new one."""

import os
import stat
import threading

import numpy as np
import pytest

from tests.export.helpers import synthetic
from tests.fixtures import write_sensors_toml, write_stream
from sensorbudget.trainer.bundle import load_bundle, save_bundle, write_folder_atomically
from sensorbudget.trainer.bundle.manifest import MANIFEST_FILE


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    y = X[:, 0] - X[:, 2] + 0.1 * rng.normal(size=40)
    lines = ["a,b,c,d,y"] + [",".join(f"{v:.6f}" for v in (*x, t)) for x, t in zip(X, y)]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def bundle(tmp_path, table, invoke):
    out = tmp_path / "B"
    result = invoke(["train", str(table), "--target", "y", "--budget", "2", "--lam", "1",
                     "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_evaluate_refuses_a_foreign_report_folder(invoke, table, tmp_path):
    report = tmp_path / "E"
    report.mkdir()
    (report / "notes.txt").write_text("x")
    result = invoke(["evaluate", str(table), "--target", "y", "--budgets", "1", "--folds", "2",
                     "--report", str(report)])
    assert result.exit_code == 2
    assert "notes.txt" in result.output and "refusing" in result.output
    assert (report / "notes.txt").read_text() == "x"
    assert leftovers(tmp_path) == []


def special_files(tmp_path):
    """A FIFO, a symbolic link to a file, and (as root) a character device like /dev/null."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    target = tmp_path / "real.h"
    target.write_text("keep")
    link = tmp_path / "link.h"
    link.symlink_to(target)
    out = [(fifo, stat.S_ISFIFO), (link, stat.S_ISLNK)]
    if os.geteuid() == 0:
        node = tmp_path / "null"
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        out.append((node, stat.S_ISCHR))
    return out, target


def test_file_outputs_refuse_device_nodes_fifos_and_links(invoke, bundle, tmp_path):
    specials, target = special_files(tmp_path)
    for path, is_kind in specials:
        for argv in (["export", "c-header", str(bundle), "-o", str(path)],
                     ["export", "onnx", str(bundle), "-o", str(path)]):
            result = invoke(argv)
            assert result.exit_code == 2, (argv, result.output)
            assert "refusing to replace" in result.output
            assert is_kind(os.lstat(path).st_mode)
    assert target.read_text() == "keep"


def test_folder_outputs_refuse_links_and_files(invoke, bundle, table, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "dirlink").symlink_to(real)
    (tmp_path / "afile").write_text("mine")
    for out, why in (("dirlink", f"is a symbolic link; refusing to write through it (name "
                                 f"the folder it points to, {str(real)!r}, instead)"),
                     ("afile", "exists and is not a directory")):
        result = invoke(["train", str(table), "--target", "y", "--budget", "1", "--lam", "1",
                         "-o", str(tmp_path / out)])
        assert result.exit_code == 2 and why in result.output
    assert (tmp_path / "dirlink").is_symlink() and list(real.iterdir()) == []
    assert (tmp_path / "afile").read_text() == "mine"


def test_replacing_a_bundle_keeps_siblings_and_leaves_no_temporaries(invoke, bundle, table,
                                                                      tmp_path):
    sibling = tmp_path / ".B.old"
    sibling.mkdir()
    (sibling / "keep").write_text("user data")
    result = invoke(["train", str(table), "--target", "y", "--budget", "1", "--lam", "1",
                     "-o", str(bundle)])
    assert result.exit_code == 0, result.output
    assert len(load_bundle(bundle).meta["selected"]) == 1          # the new bundle
    assert (sibling / "keep").read_text() == "user data"
    assert leftovers(tmp_path) == [".B.old"]


def test_readers_see_the_old_or_the_new_bundle_whole(tmp_path):
    """A reader loading the bundle while it is rewritten 40 times never fails, and always gets
    one of the two written versions (its hash check passes)."""
    versions = [synthetic("regression", budget=b, seed=b)[2:] for b in (2, 3)]
    path = tmp_path / "B"
    save_bundle(path, *versions[0])
    errors, seen, done = [], set(), threading.Event()

    def read():
        while not done.is_set():
            try:
                seen.add(len(load_bundle(path).meta["selected"]))
            except Exception as exc:            # noqa: BLE001 (any failure is the finding)
                errors.append(repr(exc))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(40):
            save_bundle(path, *versions[i % 2])
    finally:
        done.set()
        reader.join()
    assert errors == []
    assert seen <= {2, 3} and seen
    assert leftovers(tmp_path) == []


def test_a_failed_write_leaves_the_old_folder_whole(tmp_path):
    out = tmp_path / "R"
    write_folder_atomically(out, {"report.json": b"old"}, kind="report")

    def failing(folder):
        (folder / "plot.png").write_bytes(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        write_folder_atomically(out, {"report.json": b"new"}, kind="report",
                                then=failing)
    assert sorted(p.name for p in out.iterdir()) == ["report.json", MANIFEST_FILE]
    assert (out / "report.json").read_bytes() == b"old"
    assert leftovers(tmp_path) == []


def test_a_failed_firmware_build_leaves_the_old_firmware(invoke, tmp_path, monkeypatch):
    import sensorbudget.firmware_gen.build as fw_build
    from sensorbudget.firmware_gen.errors import FirmwareGenError

    stream = write_stream(tmp_path / "rec" / "s.csv")
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    bundle = tmp_path / "Brec"
    result = invoke(["train", str(stream), "--sensors", str(toml), "--budget", "2", "--lam",
                     "1", "-o", str(bundle)])
    assert result.exit_code == 0, result.output
    out = tmp_path / "fw"
    result = invoke(["firmware", str(bundle), "--target", "host", "-o", str(out)])
    assert result.exit_code == 0, result.output
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken(folder, **_):
        (folder / "firmware.elf").write_bytes(b"partial")
        raise FirmwareGenError("make failed (exit 2)")

    monkeypatch.setattr(fw_build, "build", broken)
    result = invoke(["firmware", str(bundle), "--target", "host", "--name", "other", "-o",
                     str(out), "--build"])
    assert result.exit_code == 2 and "make failed" in result.output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("argv", [["train", "{t}", "--target", "y", "--budget", "1", "-o", ""],
                                  ["train", "{t}", "--target", "y", "--budget", "1", "-o", "."],
                                  ["evaluate", "{t}", "--target", "y", "--budgets", "1",
                                   "--folds", "2", "--report", "."]])
def test_the_current_folder_is_never_an_output(invoke, table, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    result = invoke([a.format(t=table) for a in argv])
    assert result.exit_code == 2 and "names the current folder" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before


# --- ownership by manifest (issue 33, item 1) -------------------------------------------------

@pytest.fixture
def rec_bundle(tmp_path, invoke):
    """A bundle trained on recordings (the firmware, library and simulation need extractors)."""
    stream = write_stream(tmp_path / "rec" / "s.csv")
    toml = write_sensors_toml(tmp_path / "sensors.toml")
    out = tmp_path / "Brec"
    result = invoke(["train", str(stream), "--sensors", str(toml), "--budget", "2", "--lam",
                     "1", "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


#: every command that writes a folder: its argv (``{o}`` the folder) and its marker file
FOLDER_COMMANDS = {
    "train": (["train", "{rec}", "--sensors", "{toml}", "--budget", "1", "--lam", "1", "-o",
               "{o}"], "model.json"),
    "evaluate": (["evaluate", "{table}", "--target", "y", "--budgets", "1", "--folds", "2",
                  "--methods", "greedy-joint", "--report", "{o}"], "results.json"),
    "simulate": (["simulate", "{bundle}", "--recordings", "{rec}", "--backend", "python",
                  "--report", "{o}"], "report.json"),
    "firmware": (["firmware", "{bundle}", "--target", "host", "-o", "{o}"], "firmware.json"),
    "c-library": (["export", "c-library", "{bundle}", "-o", "{o}"], "c_library.json"),
}


def run_folder_command(invoke, command, out, rec_bundle, table, tmp_path):
    argv, _ = FOLDER_COMMANDS[command]
    names = {"rec": tmp_path / "rec", "toml": tmp_path / "sensors.toml", "table": table,
             "bundle": rec_bundle, "o": out}
    return invoke([a.format(**names) for a in argv])


def files_of(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def error_lines(output):
    return [line for line in output.splitlines() if line.strip()]


@pytest.mark.parametrize("command", sorted(FOLDER_COMMANDS))
def test_a_folder_with_only_the_marker_is_foreign(invoke, command, rec_bundle, table, tmp_path):
    """The issue's reproducer: a project folder holding a file of the marker's name (any
    content), sources and notes is not an earlier output: refused, named, nothing touched."""
    out = tmp_path / "proj"
    (out / "src").mkdir(parents=True)
    (out / FOLDER_COMMANDS[command][1]).write_text('{"v":1}')
    (out / "src" / "main.c").write_text("int main(){}\n")
    (out / "README").write_text("notes\n")
    before = files_of(out)
    result = run_folder_command(invoke, command, out, rec_bundle, table, tmp_path)
    assert result.exit_code == 2, result.output
    last = error_lines(result.output)[-1]
    assert last.startswith("Error: ") and "'README'" in last and "refusing" in last, last
    assert "Traceback" not in result.output
    assert files_of(out) == before
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("command", sorted(FOLDER_COMMANDS))
def test_an_earlier_output_is_replaced_only_while_it_is_exactly_its_manifest(
        invoke, command, rec_bundle, table, tmp_path):
    out = tmp_path / "out"
    result = run_folder_command(invoke, command, out, rec_bundle, table, tmp_path)
    assert result.exit_code == 0, result.output
    first = files_of(out)
    result = run_folder_command(invoke, command, out, rec_bundle, table, tmp_path)
    assert result.exit_code == 0, result.output                 # its own output: replaced
    assert files_of(out).keys() == first.keys()
    nested = sorted(p for p in out.rglob("*") if p.is_dir())
    user = (nested[0] if nested else out) / "NOTES.txt"         # a user file, nested if it can
    user.write_text("mine")
    result = run_folder_command(invoke, command, out, rec_bundle, table, tmp_path)
    assert result.exit_code == 2, result.output
    assert repr(str(user.relative_to(out))) in error_lines(result.output)[-1]
    assert user.read_text() == "mine"
    user.unlink()
    edited = sorted(p for p in out.rglob("*") if p.is_file())[0]   # a generated file, edited
    edited.write_bytes(edited.read_bytes() + b"\n")
    result = run_folder_command(invoke, command, out, rec_bundle, table, tmp_path)
    assert result.exit_code == 2, result.output
    last = error_lines(result.output)[-1]
    assert repr(str(edited.relative_to(out))) in last and "changed" in last, last
    assert leftovers(tmp_path) == []


# --- modes kept (issue 33, item 4) ------------------------------------------------------------

def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_private_output_folder_stays_private(invoke, table, tmp_path):
    """The issue's reproducer: ``mkdir -m 700 priv; train -o priv`` left priv at 0755 and its
    files at 0644; now priv keeps 0700 and its files get only the owner's bits."""
    priv = tmp_path / "priv"
    priv.mkdir()
    os.chmod(priv, 0o700)
    reference = tmp_path / "reference"                    # what open() gives under this umask
    reference.write_text("")
    for budget in ("2", "1"):                             # written into priv, then replaced
        result = invoke(["train", str(table), "--target", "y", "--budget", budget, "--lam",
                         "1", "-o", str(priv)])
        assert result.exit_code == 0, result.output
        assert mode(priv) == 0o700
        assert {p.name: mode(p) for p in priv.iterdir()} == {
            p.name: mode(reference) & 0o700 for p in priv.iterdir()}
    os.chmod(priv / "model.json", 0o640)                  # a mode chosen later is kept too
    result = invoke(["train", str(table), "--target", "y", "--budget", "2", "--lam", "1", "-o",
                     str(priv)])
    assert result.exit_code == 0, result.output
    assert mode(priv / "model.json") == 0o640


@pytest.mark.parametrize("kind", ["onnx", "c-header"])
def test_a_replaced_file_output_keeps_its_mode(invoke, bundle, tmp_path, kind):
    secret = tmp_path / "secret.out"
    secret.write_text("old")
    os.chmod(secret, 0o600)
    result = invoke(["export", kind, str(bundle), "-o", str(secret)])
    assert result.exit_code == 0, result.output
    assert mode(secret) == 0o600 and secret.read_bytes() != b"old"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("command", ["firmware", "c-library"])
def test_force_moves_the_foreign_folder_aside_and_says_where(invoke, command, rec_bundle, table,
                                                             tmp_path):
    out = tmp_path / "proj"
    (out / "src").mkdir(parents=True)
    (out / FOLDER_COMMANDS[command][1]).write_text('{"v":1}')
    (out / "src" / "main.c").write_text("int main(){}\n")
    before = files_of(out)
    argv, _ = FOLDER_COMMANDS[command]
    names = {"bundle": rec_bundle, "o": out}
    result = invoke([a.format(**names) for a in argv] + ["--force"])
    assert result.exit_code == 0, result.output
    aside = tmp_path / "proj.moved-aside"
    assert f"aside to {aside}" in result.output
    assert files_of(aside) == before                        # nothing of the user's deleted
    assert MANIFEST_FILE in files_of(out)
    result = run_folder_command(invoke, command, out, rec_bundle, table, tmp_path)
    assert result.exit_code == 0, result.output             # now its own output


def test_train_refuses_a_foreign_folder_before_it_selects(invoke, tmp_path):
    """Targets on scales 1000x apart make the selection warn; a foreign output folder is refused
    first, so the one Error line is all that is printed and the user's file stays."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = np.c_[X[:, 0], 1000 * X[:, 1]] + 0.1 * rng.normal(size=(40, 2))
    lines = ["a,b,c,y1,y2"] + [",".join(f"{v:.6f}" for v in row) for row in np.c_[X, y]]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    argv = ["train", str(tmp_path / "t.csv"), "--target", "y1", "--target", "y2", "--budget",
            "2", "-o"]
    fresh = invoke([*argv, str(tmp_path / "fresh")])
    assert fresh.exit_code == 0 and "Warning: target standard deviations" in fresh.output
    out = tmp_path / "proj"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = invoke([*argv, str(out)])
    assert result.exit_code == 2
    assert error_lines(result.output) == [error_lines(result.output)[0]]
    assert error_lines(result.output)[0].startswith("Error: ") and "notes.txt" in result.output
    assert (out / "notes.txt").read_text() == "mine" and sorted(os.listdir(out)) == ["notes.txt"]
