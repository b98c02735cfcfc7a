"""The documentation that messages cite, wherever sensorbudget runs from.

The repository's ``docs/*.md`` install with the wheel as the data package ``sensorbudget.docs``
(pyproject's ``package-dir`` maps the folder; no ``__init__.py``: a namespace package of data
files). In a source checkout the same name finds the checkout's ``docs/`` through
``sensorbudget.__path__``. :func:`doc_path` is the file a printed line points to, so a user of the
installed wheel is not sent to a ``docs/`` folder they do not have.
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
    if not path.is_file():
        raise FileNotFoundError(f"{name!r} is not one of sensorbudget's documents "
                                f"({path.parent})")
    return path
