"""The documents messages cite, from a source checkout (the installed wheel:
tests/packaging/test_wheel.py, where ``cite`` names the installed copy)."""

import pytest

from sensorbudget.trainer.doc_files import cite, doc_path
from tests.paths import REPO

DOCS = sorted(p.name for p in (REPO / "docs").glob("*.md"))


@pytest.mark.parametrize("name", DOCS)
def test_every_document_is_found_in_the_checkout(name):
    assert doc_path(name).read_bytes() == (REPO / "docs" / name).read_bytes()
    assert cite(name) == f"docs/{name}"       # the checkout's text is as before


@pytest.mark.parametrize("name", ["nope.md", "../pyproject.toml", "method"])
def test_a_name_that_is_not_a_document_is_refused(name):
    with pytest.raises(FileNotFoundError, match="not one of sensorbudget's documents"):
        doc_path(name)
