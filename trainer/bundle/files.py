"""Output files: canonical bytes (NPZ, JSON) and all-or-nothing writing.

Every file and folder the project writes goes through :func:`write_atomically` (one file) or
:func:`write_folder_atomically` (a folder of files). Both build the output under a unique
temporary name beside the target and rename it into place, so a reader sees the old output or
the new one, never a part, and an interrupted write leaves the old output as it was.

Modes: a new output gets the modes a plain ``open``/``mkdir`` would give (0666 / 0777 less the
process umask), not the private 0600 / 0700 of the temporaries it starts as. Replacing an
output keeps its modes: a replaced file keeps its mode; a replaced folder keeps its own mode,
each file or subfolder that replaces one of the same name keeps that one's mode, and new ones
lose the permission classes (group, others) the folder grants nothing to (a 0700 folder gets
0600 files).

What is never replaced: anything that is not a regular file where a file is written (a device
node such as ``/dev/null``, a FIFO, a socket, a directory) and every symbolic link; a folder
that is not exactly an earlier output of the same kind (its manifest,
:mod:`~sensorbudget.trainer.bundle.manifest`); with ``force`` such a folder is moved aside whole under a
visible name, never deleted.

A folder is replaced by exchanging the new folder with the old one in one step
(``renameat2(RENAME_EXCHANGE)``, Linux 3.15+ on most local file systems), then deleting the old
one. Where the exchange is not available (another OS, a file system without it) the old folder
is first renamed to a temporary name and the new one renamed into place (a reader in between
finds no folder, never a mixed one). Temporaries carry a recognisable name and are removed by
the next write when an interrupt left them (:func:`~sensorbudget.trainer.bundle.manifest.remove_leftovers`).
"""

from __future__ import annotations

import ctypes
import errno
import io
import json
import os
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from ..errors import OutputError
from .manifest import (MANIFEST_FILE, entries, first_foreign, manifest_text, remove_leftovers,
                       tmp_prefix)


def npz_bytes(arrays: dict) -> bytes:
    """An ``.npz`` archive of ``arrays`` with fixed member timestamps (byte-reproducible);
    0-d arrays stay 0-d."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asarray(arrays[name]), allow_pickle=False)
            zf.writestr(info, member.getvalue())
    return buf.getvalue()


def json_default(value):
    """``json.dumps(default=...)`` for numpy scalars and arrays (anything else is an error)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def json_text(meta: dict) -> str:
    """Canonical JSON text of ``meta`` (sorted keys, two-space indent, trailing newline)."""
    return json.dumps(meta, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_synced(path: Path, data: bytes, mode: int) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(path, mode)


def check_file_target(path) -> None:
    """Refuse (``OutputError``) an output path that exists and is not a regular file, or is a
    symbolic link: a device node, FIFO, socket or directory is never replaced by a file."""
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise OutputError(f"output {str(path)!r} is a symbolic link; refusing to replace it "
                          f"(write to the file it points to instead)")
    if not stat.S_ISREG(mode):
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a socket" if stat.S_ISSOCK(mode) else "a device node")
        raise OutputError(f"output {str(path)!r} is {kind}, not a regular file; refusing to "
                          f"replace it")


def write_atomically(path, data: bytes) -> None:
    """Write ``data`` to the file ``path`` via a temporary file beside it and ``os.replace``.

    The parent directory is created if needed; on any failure the temporary file is removed and
    ``path`` is left as it was. A new file gets mode 0666 & ~umask, a replaced one keeps its
    mode. A ``path`` that is not a regular file (or is a link) is refused
    (:func:`check_file_target`).
    """
    path = Path(path)
    check_file_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(path.parent, path.name)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode) & 0o777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=tmp_prefix(path.name), suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        _write_synced(Path(tmp), data, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _libc_renameat2():
    """libc's ``renameat2`` from the process's own symbols (``dlopen(NULL)``), else None.

    Not ``ctypes.util.find_library("c")``: on Linux it runs ``ldconfig -p`` in a child process
    at every start (about 10 ms), and while Python forks it the main thread blocks all signals,
    so a Ctrl-C in that window is handled by another thread (issue 33, item 5)."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError, TypeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn


_RENAMEAT2 = _libc_renameat2()
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def exchange(a, b) -> bool:
    """Swap the paths ``a`` and ``b`` (both existing) in one step; False where the system cannot
    (no ``renameat2``, or the file system refuses ``RENAME_EXCHANGE``)."""
    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _folder_target(target, error) -> Path:
    """``target`` as a Path, refused when it is the current folder, one above it, a link or a
    file."""
    if str(target) in ("", ".", ".."):
        raise error(f"output {str(target)!r} names the current folder or its parent; name the "
                    f"folder to write, e.g. {str(Path(str(target) or '.') / 'out')!r}")
    target = Path(target)
    if target.resolve() in (Path.cwd(), *Path.cwd().parents):
        raise error(f"output {str(target)!r} is the current folder or one above it; name the "
                    f"folder to write")
    if target.is_symlink():
        raise error(f"output {str(target)!r} is a symbolic link; refusing to write through it "
                    f"(name the folder it points to, {os.readlink(target)!r}, instead)")
    if target.exists() and not target.is_dir():
        raise error(f"output {str(target)!r} exists and is not a directory")
    return target


def _check_owned(target: Path, kind: str, error, force: bool) -> bool:
    """True when ``target`` exists and is not exactly an earlier output of ``kind`` (only
    allowed with ``force``)."""
    if not target.exists():
        return False
    reason = first_foreign(target, kind)
    if reason is not None and not force:
        raise error(f"output directory {str(target)!r} is not an earlier {kind} written by "
                    f"sensorbudget: {reason}; refusing to replace it (move it away or choose "
                    f"another folder)")
    return reason is not None


def _old_modes(target: Path):
    """(folder mode, {relative path: (is folder, mode)}) of an existing ``target``, else None."""
    if not target.exists():
        return None
    inner = {rel: (e.is_dir(follow_symlinks=False), stat.S_IMODE(e.stat(
                   follow_symlinks=False).st_mode) & 0o777)
             for rel, e in entries(target) if not e.is_symlink()}
    return stat.S_IMODE(os.stat(target).st_mode), inner


def _class_mask(folder_mode: int) -> int:
    """The permission classes (owner, group, others) a folder grants anything to: 0o700 for a
    0700 folder, 0o770 for 0750, 0o777 for 0755."""
    return sum(7 << shift for shift in (6, 3, 0) if folder_mode >> shift & 7)


def _apply_modes(folder: Path, modes, mask: int) -> None:
    """Modes of the new folder's contents (see the module notes); deepest entries first."""
    if modes is None:
        os.chmod(folder, 0o777 & ~mask)
        return
    folder_mode, old = modes
    allowed = _class_mask(folder_mode)
    found = [(rel, e.is_dir(follow_symlinks=False), stat.S_IMODE(e.stat(
              follow_symlinks=False).st_mode)) for rel, e in entries(folder) if not e.is_symlink()]
    for rel, is_dir, current in reversed(found):
        kept = old.get(rel)
        os.chmod(folder / rel, kept[1] if kept and kept[0] == is_dir else current & allowed)
    os.chmod(folder, folder_mode)


def _relative(rel: str, error) -> Path:
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise error(f"output file name {rel!r} must be a relative path without '.' or '..'")
    if rel == MANIFEST_FILE:
        raise error(f"output file name {rel!r} is the folder's manifest, written by "
                    f"write_folder_atomically itself")
    return Path(*parts)


def _move_aside(target: Path) -> Path:
    """Rename ``target`` to the first free ``NAME.moved-aside[-N]`` beside it."""
    for n in range(1, 10_000):
        aside = target.with_name(f"{target.name}.moved-aside" + (f"-{n}" if n > 1 else ""))
        if not os.path.lexists(aside):
            os.rename(target, aside)
            return aside
    raise FileExistsError(errno.EEXIST, "no free name to move the folder aside", str(target))


def check_folder_output(target, *, kind: str, error: type = OutputError) -> None:
    """Raise ``error`` now when ``target`` could not be written as a ``kind`` output (the current
    folder, a link, a file, a folder that is not exactly an earlier ``kind`` output): the check
    :func:`write_folder_atomically` makes, for a command to run before the work that produces
    the files."""
    _check_owned(_folder_target(target, error), kind, error, False)


def write_folder_atomically(target, files: dict, *, kind: str, error: type = OutputError,
                            then=None, force: bool = False):
    """Write {relative path: bytes} as the folder ``target``, all or nothing.

    The files go into a temporary sibling folder (paths may hold ``/``: subfolders are made);
    ``then(folder)``, if given, adds to it (a build, plots); the manifest of everything in it
    (:data:`~sensorbudget.trainer.bundle.manifest.MANIFEST_FILE`, naming ``kind``, e.g. "bundle") is written
    last; then the folder takes the place of ``target`` (see the module notes). An existing
    ``target`` is replaced only while it is exactly an earlier output of the same ``kind``
    (:func:`~sensorbudget.trainer.bundle.manifest.first_foreign`, checked before anything is written and
    again just before the swap); otherwise ``error`` (default
    :class:`~sensorbudget.trainer.errors.OutputError`) names its first foreign entry, or, with ``force``,
    the whole folder is moved aside to ``NAME.moved-aside`` (returned; else None).
    """
    target = _folder_target(target, error)
    _check_owned(target, kind, error, force)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(target.parent, target.name)
    mask = _umask()
    tmp = Path(tempfile.mkdtemp(prefix=tmp_prefix(target.name), dir=target.parent))
    old, moved = None, None
    try:
        for rel, data in files.items():
            path = tmp / _relative(rel, error)
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_synced(path, data, 0o666 & ~mask)
        if then is not None:
            then(tmp)
        _write_synced(tmp / MANIFEST_FILE, manifest_text(tmp, kind).encode(), 0o666 & ~mask)
        _apply_modes(tmp, _old_modes(target), mask)
        if _check_owned(target, kind, error, force):
            moved = _move_aside(target)
        if target.exists() and exchange(tmp, target):
            return moved                             # tmp now holds the old folder
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=tmp_prefix(target.name), dir=target.parent))
            os.rename(target, old / target.name)
        os.rename(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return moved
