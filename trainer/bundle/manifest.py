"""Ownership of output folders: the manifest each one carries, and the temporaries' names.

Every folder the project writes (bundle, evaluation report, simulation report, firmware, C
library) holds :data:`MANIFEST_FILE`: its kind and every file written into it (relative path ->
sha256), e.g. ``{"format": "sensorbudget-output", "kind": "bundle", "files": {"model.json":
"...", "weights.npz": "..."}}`` (canonical JSON: the same output gives the same bytes). A later
write replaces the folder only while the folder is exactly what that manifest says
(:func:`first_foreign`): each regular file in it is listed with the same hash, each subfolder
leads to a listed file, there is nothing else (no link, FIFO, other file, empty folder), and
the kind is the same. A file of the marker's name alone (``firmware.json`` with any content)
proves nothing: without a valid manifest every entry is foreign.

Temporaries (a folder or file being written; the old folder between the swap and its removal)
are named ``.NAME.sensorbudget-tmp-PID-XXXXXXXX`` beside the output: :func:`remove_leftovers`
removes those of processes that no longer run, so a write interrupted mid-removal is cleaned up
by the next write of the same output. They only ever hold generated files or an earlier output
that passed :func:`first_foreign`, never a copy of user data.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
from pathlib import Path

MANIFEST_FILE = "sensorbudget-manifest.json"
MANIFEST_FORMAT = "sensorbudget-output"
TMP_MARK = ".sensorbudget-tmp-"
_HEX64 = re.compile(r"[0-9a-f]{64}")


def file_sha256(path) -> str:
    """sha256 (hex) of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _level(folder: Path, rel: str) -> list:
    with os.scandir(folder / rel if rel else folder) as it:
        return [(f"{rel}/{e.name}" if rel else e.name, e) for e in sorted(it, key=lambda e: e.name)]


def entries(folder: Path):
    """(relative posix path, os.DirEntry) of everything under ``folder``, depth first, names
    sorted at each level (so "the first" entry is the same on every run); links not followed;
    iterative, so any depth of nesting is walked."""
    pending = [iter(_level(folder, ""))]
    while pending:
        item = next(pending[-1], None)
        if item is None:
            pending.pop()
            continue
        yield item
        if item[1].is_dir(follow_symlinks=False):
            pending.append(iter(_level(folder, item[0])))


def manifest_text(folder: Path, kind: str) -> str:
    """The manifest of ``folder`` as it is now: every regular file but the manifest itself
    (canonical JSON: sorted keys, two-space indent, trailing newline)."""
    files = {rel: file_sha256(e.path) for rel, e in entries(folder)
             if rel != MANIFEST_FILE and e.is_file(follow_symlinks=False)}
    return json.dumps({"format": MANIFEST_FORMAT, "kind": kind, "files": files}, indent=2,
                      sort_keys=True) + "\n"


def read_manifest(folder: Path):
    """The valid manifest of ``folder`` ({"kind", "files"}), or None (absent or invalid)."""
    path = folder / MANIFEST_FILE
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode) or os.lstat(path).st_size > 64 << 20:
            return None
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not (isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT
            and isinstance(data.get("kind"), str) and isinstance(data.get("files"), dict)):
        return None
    files = data["files"]
    if not all(isinstance(k, str) and isinstance(v, str) and _HEX64.fullmatch(v)
               for k, v in files.items()):
        return None
    return {"kind": data["kind"], "files": files}


def first_foreign(folder: Path, kind: str):
    """None when ``folder`` is exactly an earlier output of ``kind`` (its manifest), else a
    one-line reason naming the first entry that is not (see the module notes)."""
    manifest = read_manifest(folder)
    if manifest is not None and manifest["kind"] != kind:
        return f"it is a sensorbudget {manifest['kind']}, not a {kind}"
    listed = {} if manifest is None else manifest["files"]
    needed = {"/".join(p.split("/")[:i]) for p in listed for i in range(1, p.count("/") + 1)}
    unlisted = (f"and no valid {MANIFEST_FILE} lists it (a folder without one, even an "
                f"output of an older sensorbudget, is never replaced)" if manifest is None
                else "which is not in its manifest")
    for rel, entry in entries(folder):
        if rel == MANIFEST_FILE and manifest is not None:
            continue
        if entry.is_symlink():
            return f"it holds {rel!r}, a symbolic link sensorbudget did not write"
        if entry.is_dir():
            if rel in needed or not _empty(entry.path):
                continue                     # a listed file's folder, or its content decides
            return f"it holds the empty folder {rel!r}, {unlisted}"
        if not entry.is_file():
            return f"it holds {rel!r}, which is not a regular file"
        if rel not in listed:
            return f"it holds {rel!r}, {unlisted}"
        if file_sha256(entry.path) != listed[rel]:
            return f"it holds {rel!r}, changed since sensorbudget wrote it"
    return None


def _empty(path) -> bool:
    with os.scandir(path) as it:
        return next(it, None) is None


def tmp_prefix(name: str) -> str:
    """Prefix of this process's temporaries for the output ``name``."""
    return f".{name}{TMP_MARK}{os.getpid()}-"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:                  # another user's process
        return True
    return True


def remove_leftovers(parent: Path, name: str) -> None:
    """Remove the temporaries of output ``name`` in ``parent`` left by writers that no longer
    run (interrupted, killed); those of running writers are theirs to finish."""
    start = f".{name}{TMP_MARK}"
    try:
        found = [e for e in os.scandir(parent) if e.name.startswith(start)]
    except OSError:
        return
    for entry in found:
        pid = entry.name[len(start):].split("-", 1)[0]
        if not pid.isdigit() or _running(int(pid)):
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            Path(entry.path).unlink(missing_ok=True)
