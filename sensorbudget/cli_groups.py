"""``--groups COLUMN|recording``: sample groups for the leave-group-out selection criterion.

``recording`` takes the recording index of every window (recordings with ``--sensors``, or a
feature table written by ``sensorbudget features``). ``COLUMN`` names a column of a CSV/ARFF
table (numbers or text: a subject, a device, a day) or an array of an NPZ table; the loader
keeps it out of the features and drops its rows with the rows it drops.
"""

from __future__ import annotations

import click

from ._errors import CliError

RECORDING = "recording"

groups_option = click.option(
    "--groups", "groups", default=None, metavar="COLUMN|recording",
    help="Select by leave-group-out error: rows sharing a group id (a CSV/ARFF column or NPZ "
         "array, or 'recording' for windows of recordings) are held out together.")


def group_column(value):
    """What the table loader gets as its ``groups`` column (None for ``recording``)."""
    return None if value in (None, RECORDING) else value


def resolve_groups(value, data: dict):
    """Group ids (n,) for ``--groups value`` from ``cli.load_training_data``'s result."""
    if value is None:
        return None
    fs = data.get("fs")
    if value == RECORDING:
        if fs is None:
            raise CliError("--groups recording needs recordings (--sensors sensors.toml) or a "
                           "feature table written by 'sensorbudget features'; for a table, give "
                           "the name of its group column")
        return fs.groups
    if fs is not None:
        raise CliError(f"--groups {value!r}: windows of recordings are grouped with "
                       f"--groups recording")
    return data["groups"]
