"""``sensorbudget targets``: the boards of the registry, their parts, limits, power and sources."""

from __future__ import annotations

import json

import click

from ._errors import handle_errors


@click.command("targets")
@click.argument("names", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print the boards as JSON.")
@handle_errors
def targets_command(names, as_json):
    """List the firmware targets (or only NAMES): board, CPU, clock, flash, RAM, active and
    sleep current, the datasheets the figures come from, the backends that measure each and
    how it is flashed."""
    from sensorbudget.firmware_gen.boards import ALIASES, BOARDS, get_board
    from sensorbudget.firmware_gen.profiles import format_profile

    chosen = [get_board(n) for n in names] if names else list(BOARDS.values())
    aliases = {}
    for old, new in ALIASES.items():
        aliases.setdefault(new, []).append(old)
    if as_json:
        out = {b.name: {**b.as_dict(), "aliases": aliases.get(b.name, []),
                        "counter": b.counter, "emulators": list(b.emulators)} for b in chosen}
        click.echo(json.dumps(out, indent=2, sort_keys=True))
        return
    blocks = []
    for b in chosen:
        text = format_profile(b)
        if aliases.get(b.name):
            text += f"\n  also called: {', '.join(aliases[b.name])}"
        blocks.append(text + f"\n  costs: {b.counter}")
    click.echo("\n\n".join(blocks))
