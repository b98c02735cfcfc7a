"""The documentation that messages cite, wherever sensorbudget runs from.

The repository's ``docs/*.md`` install with the wheel as the data package ``sensorbudget.docs``
(pyproject's ``package-dir`` maps the folder; no ``__init__.py``: a namespace package of data
files). In a source checkout the same name finds the checkout's ``docs/`` through
``sensorbudget.__path__``. :func:`doc_path` is that file; :func:`cite` is how a printed line
names it: ``docs/<name>`` in a checkout (the repository's own file, the text as before), the
installed copy's path otherwise, so a user of the wheel is not sent to a folder they do not have.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

PACKAGE = "sensorbudget.docs"


def doc_path(name: str) -> Path:
    """The installed (or checked-out) copy of ``docs/<name>``, e.g. ``doc_path("metrics.md")``.

    Raises ``FileNotFoundError`` for a name that is not one of the shipped documents (a citation
    of a missing file is a bug: ``tests/packaging`` checks that every cited document ships).
    """
    path = Path(str(resources.files(PACKAGE).joinpath(name)))
    if Path(name).name != name or not name.endswith(".md") or not path.is_file():
        raise FileNotFoundError(f"{name!r} is not one of sensorbudget's documents "
                                f"({path.parent})")
    return path


def cite(name: str) -> str:
    """``docs/<name>`` when the document is a source checkout's (its folder ``docs`` beside
    ``pyproject.toml``), else the absolute path of the installed copy."""
    path = doc_path(name)
    if path.parent.name == "docs" and (path.parent.parent / "pyproject.toml").is_file():
        return f"docs/{name}"
    return str(path)
