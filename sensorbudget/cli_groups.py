"""``--groups COLUMN|recording``: sample groups for the leave-group-out selection criterion.

``recording`` takes the recording index of every window (recordings with ``--sensors``, or a
feature table written by ``sensorbudget features``). ``COLUMN`` names a column of a CSV/ARFF
table (numbers or text: a subject, a device, a day) or an array of an NPZ table; the loader
keeps it out of the features and drops its rows with the rows it drops
(:meth:`sensorbudget.trainer.dataset.Dataset.group_ids`).
"""

from __future__ import annotations

import click

groups_option = click.option(
    "--groups", "groups", default=None, metavar="COLUMN|recording",
    help="Select by leave-group-out error: rows sharing a group id (a CSV/ARFF column or NPZ "
         "array, or 'recording' for windows of recordings) are held out together.")
