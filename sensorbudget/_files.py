"""All-or-nothing file output for the CLI: a temporary file in the target directory, then rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same directory and ``os.replace``.

    The parent directory is created if needed; on any failure the temporary file is removed and
    ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
