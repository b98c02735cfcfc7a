"""Shared fixture of the command-line tests: ``invoke(argv)`` runs ``sensorbudget`` in-process."""

from functools import partial

import pytest
from click.testing import CliRunner

from sensorbudget.cli import main


@pytest.fixture
def invoke():
    return partial(CliRunner().invoke, main)
