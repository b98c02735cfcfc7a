"""The CSV-table reading options shared by ``evaluate`` and ``predict``."""

from __future__ import annotations

import click

_TABLE_OPTIONS = (
    click.option("--sep", default=None, help="CSV field separator [default: ',']."),
    click.option("--decimal", default=None, help="CSV decimal mark [default: '.']."),
    click.option("--ignore", multiple=True, help="Column to leave out (repeatable)."),
    click.option("--na-value", type=float, default=None,
                 help="A number that marks a missing value."),
    click.option("--drop-missing", is_flag=True,
                 help="Drop rows with missing values (prints the rows, the fraction and the "
                      "count per column)."),
    click.option("--max-drop-fraction", type=click.FloatRange(0, 1, min_open=True), default=0.5,
                 show_default=True,
                 help="With --drop-missing: refuse when more than this fraction of the rows "
                      "would be dropped (1 = drop any number)."),
)


def table_options(func):
    """Decorator: ``--sep``, ``--decimal``, ``--ignore``, ``--na-value``, ``--drop-missing``
    and ``--max-drop-fraction``, in that order in ``--help``."""
    for option in reversed(_TABLE_OPTIONS):
        func = option(func)
    return func
