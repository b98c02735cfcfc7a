"""Whether data are the data a bundle was trained on: the one test behind every "in-sample or
test split" label (predict's metrics, simulate's accuracy, the HTML report).

A bundle's ``data`` entry (model.json) names what it was trained on: a feature table as
``{"file", "sha256"}``; recordings as ``{"recordings": name, "recordings_sha256": digest}``.
The digest of a file is its sha256; of a folder of recordings the sha256 of its regular files
(links left out) in sorted order of their relative paths, each contributing

    relative path (UTF-8, "/"-separated) NUL sha256(file bytes) NEWLINE

so the same recordings give the same digest wherever they are, and any changed, added or
removed file another. A name alone proves nothing (``stream.csv`` of the test split is not
``stream.csv`` of the training split): without a digest the answer is "cannot tell".
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fingerprint(path) -> str:
    """The sha256 of a data file, or of a recordings folder (see the module docstring)."""
    path = Path(path)
    if not path.is_dir():
        return _file_sha256(path)
    entries = []
    for root, dirs, files in os.walk(path):            # links to folders are not followed
        dirs.sort()
        for name in files:
            full = Path(root) / name
            if full.is_file() and not full.is_symlink():
                entries.append((full.relative_to(path).as_posix(), full))
    digest = hashlib.sha256()
    for rel, full in sorted(entries):
        digest.update(rel.encode("utf-8", "surrogateescape") + b"\0"
                      + _file_sha256(full).encode() + b"\n")
    return digest.hexdigest()


def recordings_entry(path) -> dict:
    """The bundle's ``data`` entry of recordings: their name and :func:`fingerprint`."""
    return {"recordings": Path(path).name, "recordings_sha256": fingerprint(path)}


def same_data(source, path) -> bool | None:
    """True when ``path`` holds exactly the data the bundle was trained on (``source``: its
    model.json ``data``), False when the bundle's recorded digest of the same kind of data
    differs, None when it cannot tell: no digest (recordings named only), a feature table
    against recordings, or ``path`` unreadable."""
    source = source if isinstance(source, dict) else {}
    digest = source.get("recordings_sha256") or source.get("sha256")
    if not isinstance(digest, str):
        return None
    try:
        same = fingerprint(path) == digest
    except OSError:
        return None
    table = source.get("recordings_sha256") is None          # trained on a feature table
    if not same and table and str(source.get("file", "")).lower().endswith(".npz"):
        return None           # a feature table written from recordings: these may be them
    return same
