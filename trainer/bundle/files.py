"""Output files: canonical bytes (NPZ, JSON) and all-or-nothing writing.

Every file and folder the project writes goes through :func:`write_atomically` (one file) or
:func:`write_folder_atomically` (a folder of files). Both build the output under a unique
temporary name beside the target and rename it into place, so a reader sees the old output or
the new one, never a part, and an interrupted write leaves the old output as it was. Outputs get
the modes a plain ``open``/``mkdir`` would give (0666 / 0777 less the process umask, so 0644 /
0755 with the usual umask 022), not the private 0600 / 0700 of the temporary files they start as.

What is never replaced: anything that is not a regular file where a file is written (a device
node such as ``/dev/null``, a FIFO, a socket, a directory) and every symbolic link; a folder
that is not an earlier output of the same kind (the caller says which names, or which marker
file, make one).

A folder is replaced by exchanging the new folder with the old one in one step
(``renameat2(RENAME_EXCHANGE)``, Linux 3.15+ on most local file systems), then deleting the old
one. Where the exchange is not available (another OS, a file system without it) the old folder
is first renamed to a unique temporary name and the new one renamed into place: an interrupt
between the two renames leaves the old output under that ``.NAME.old.*`` name, and a reader in
between finds no folder (it never finds a mixed one).
"""

from __future__ import annotations

import ctypes
import ctypes.util
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
    ``path`` is left as it was. The file gets mode 0666 & ~umask. A ``path`` that is not a
    regular file (or is a link) is refused (:func:`check_file_target`).
    """
    path = Path(path)
    check_file_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        _write_synced(Path(tmp), data, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _libc_renameat2():
    name = ctypes.util.find_library("c")
    try:
        fn = ctypes.CDLL(name, use_errno=True).renameat2
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


def write_folder_atomically(target, files: dict, *, replaceable, what: str = "an earlier output",
                            error: type = OutputError, then=None) -> None:
    """Write {name: bytes} as the folder ``target``, all or nothing.

    The files go into a temporary sibling folder (mode 0777 & ~umask, files 0666 & ~umask);
    ``then(folder)``, if given, adds to it (a build, plots); then the folder takes the place of
    ``target`` (see the module notes). An existing ``target`` is replaced only if it is an
    earlier output of the same kind (``what``): ``replaceable`` is the set of names such a
    folder may hold, or a function of the folder's path saying whether it is one (e.g. by a
    marker file). Anything else is refused with ``error`` (default
    :class:`~trainer.errors.OutputError`) before anything is written.
    """
    if str(target) in ("", ".", ".."):
        raise error(f"output {str(target)!r} names the current folder or its parent; name the "
                    f"folder to write, e.g. {str(Path(str(target) or '.') / 'out')!r}")
    target = Path(target)
    if target.resolve() in (Path.cwd(), *Path.cwd().parents):
        raise error(f"output {str(target)!r} is the current folder or one above it; name the "
                    f"folder to write")
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise error(f"output {str(target)!r} exists and is not a directory")
    if target.exists() and any(target.iterdir()):
        if callable(replaceable):
            if not replaceable(target):
                raise error(f"output directory {str(target)!r} is not empty and not {what}; "
                            f"refusing to overwrite")
        else:
            extra = {p.name for p in target.iterdir()} - set(replaceable)
            if extra:
                raise error(f"output directory {str(target)!r} is not empty and not {what} "
                            f"(holds {sorted(extra)[0]!r}); refusing to overwrite")
    target.parent.mkdir(parents=True, exist_ok=True)
    mask = _umask()
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    old = None
    try:
        for name, data in files.items():
            _write_synced(tmp / name, data, 0o666 & ~mask)
        if then is not None:
            then(tmp)
        os.chmod(tmp, 0o777 & ~mask)
        if target.exists() and exchange(tmp, target):
            return                                   # tmp now holds the old folder
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
            os.rename(target, old / target.name)
        os.rename(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
