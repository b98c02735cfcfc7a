"""``sensorbudget upgrade``: hash a bundle the user vouches for (thin click layer over
:func:`sensorbudget.trainer.bundle.model.upgrade_bundle`)."""

from __future__ import annotations

import click

from ._errors import handle_errors
from .cli_export import BUNDLE_ARG


@click.command("upgrade")
@click.argument("bundle_dir", metavar="BUNDLE", type=BUNDLE_ARG)
@handle_errors
def upgrade_command(bundle_dir):
    """Re-hash BUNDLE as it is now, on your word that its model.json and weights.npz are what
    you trained: a bundle without content_sha256 (format 1) is refused by every other command
    until then. Use it only for a bundle you trust; it also adopts an older bundle folder as
    sensorbudget's own output (its manifest), so 'train -o BUNDLE' may replace it."""
    from sensorbudget.trainer.bundle.model import upgrade_bundle

    done = upgrade_bundle(bundle_dir)
    meta = done["meta"]
    click.echo(f"upgraded {bundle_dir}: format_version {done['old_version']} -> "
               f"{meta['format_version']}, content_sha256 {meta['content_sha256'][:16]}... "
               f"covers model.json and weights.npz as they are now, as you vouch for them")
    if not done["weights_matched"]:
        click.echo("Warning: weights.npz did not match the weights_sha256 its model.json held "
                   "(it was changed after the bundle was written); it is now hashed as it is",
                   err=True)
    elif done["old_version"] != 1 and not done["content_matched"]:
        click.echo("Warning: model.json did not match its content_sha256 (it was changed after "
                   "the bundle was written); it is now hashed as it is", err=True)
