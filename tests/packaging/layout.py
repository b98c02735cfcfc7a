"""What the wheel must hold, read from the repository and pyproject.toml (shared by the fast
layout test and the wheel test).

The four library folders (``trainer``, ``export``, ``firmware_gen``, ``device_sim``) install as
``sensorbudget.<folder>`` (pyproject's ``package-dir``), ``docs/`` as the data package
``sensorbudget.docs``; ``sensorbudget/`` installs as itself.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.paths import REPO

LIBRARIES = ("trainer", "export", "firmware_gen", "device_sim")
#: a documentation file named in code, templates or messages: docs/<name>.md
CITED = re.compile(r"\bdocs/([A-Za-z0-9_.-]+\.md)\b")


def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def source_files(folder: Path):
    """Every file under ``folder`` but Python's caches."""
    return sorted(p for p in folder.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def installed_name(path: Path) -> str:
    """Where a repository file lands in the wheel: trainer/x.py -> sensorbudget/trainer/x.py,
    docs/metrics.md -> sensorbudget/docs/metrics.md, sensorbudget/cli.py -> itself."""
    rel = path.relative_to(REPO)
    if rel.parts[0] == "sensorbudget":
        return rel.as_posix()
    return "sensorbudget/" + rel.as_posix()


def package_folders() -> dict:
    """{dotted package: folder} of every folder of sensorbudget/ and the four library folders
    (a package with its ``__init__.py``, or a data folder such as ``templates/``) and of
    ``docs/`` (the data package ``sensorbudget.docs``)."""
    out = {"sensorbudget.docs": REPO / "docs"}
    for top in ("sensorbudget", *LIBRARIES):
        for folder in sorted([REPO / top, *(REPO / top).rglob("*")]):
            if not folder.is_dir() or "__pycache__" in folder.parts:
                continue
            rel = folder.relative_to(REPO).parts
            out[".".join(rel if top == "sensorbudget" else ("sensorbudget", *rel))] = folder
    return out


def shipped_sources() -> list:
    """Every file the wheel must hold, as repository paths: all files of sensorbudget/ and the
    four library folders (modules, templates, PROTOCOL.md, the report's assets) and docs/*.md."""
    files = []
    for top in ("sensorbudget", *LIBRARIES):
        files += source_files(REPO / top)
    return files + sorted((REPO / "docs").glob("*.md"))


def cited_docs() -> dict:
    """{doc name: [files citing it]} over sensorbudget/ and the four library folders."""
    out: dict = {}
    for top in ("sensorbudget", *LIBRARIES):
        for path in source_files(REPO / top):
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            for name in CITED.findall(text):
                out.setdefault(name, []).append(path.relative_to(REPO).as_posix())
    return out
