"""Output files: canonical bytes (NPZ, JSON) and all-or-nothing writing.

Every file and folder the project writes goes through :func:`write_atomically` (one file) or
:func:`write_folder_atomically` (a folder of files). Both build the output under a unique
temporary name beside the target and rename it into place, so a reader sees the old output or
the new one, never a part. Outputs get the modes a plain ``open``/``mkdir`` would give (0666 /
0777 less the process umask, so 0644 / 0755 with the usual umask 022), not the private 0600 /
0700 of the temporary files they start as.
"""

from __future__ import annotations

import io
import json
import os
import shutil
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


def write_atomically(path, data: bytes) -> None:
    """Write ``data`` to the file ``path`` via a temporary file beside it and ``os.replace``.

    The parent directory is created if needed; on any failure the temporary file is removed and
    ``path`` is left as it was. The file gets mode 0666 & ~umask.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        _write_synced(Path(tmp), data, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_folder_atomically(target, files: dict, *, replaceable, what: str = "an earlier output",
                            error: type = OutputError) -> None:
    """Write {name: bytes} as the folder ``target``, all or nothing.

    The files go into a temporary sibling folder (mode 0777 & ~umask, files 0666 & ~umask)
    that then takes the place of ``target``. An existing ``target`` is replaced only if it is
    a folder holding nothing but names in ``replaceable`` (``what``: an earlier output of the
    same kind); anything else is refused with ``error`` (default
    :class:`~trainer.errors.OutputError`). The replaced folder is moved into a unique temporary
    sibling first and removed after the new one is in place.
    """
    target = Path(target)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise error(f"output {str(target)!r} exists and is not a directory")
    if target.exists():
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
        os.chmod(tmp, 0o777 & ~mask)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
            os.rename(target, old / target.name)
        os.rename(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

