"""``sensorbudget targets``: the firmware targets, their parts, limits, power and sources."""

from __future__ import annotations

import json

import click

from ._errors import handle_errors


@click.command("targets")
@click.argument("names", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print the profiles as JSON.")
@handle_errors
def targets_command(names, as_json):
    """List the firmware targets (or only NAMES): board, CPU, clock, flash, RAM, active and
    sleep current, the datasheets the figures come from, and how they run here."""
    from sensorbudget.firmware_gen.profiles import format_profile
    from sensorbudget.firmware_gen.targets import ALIASES, TARGETS, get_target

    chosen = [get_target(n) for n in names] if names else list(TARGETS.values())
    aliases = {}
    for old, new in ALIASES.items():
        aliases.setdefault(new, []).append(old)
    if as_json:
        out = {t.name: {**t.profile.as_dict(), "aliases": aliases.get(t.name, []),
                        "counter": t.counter, "emulators": list(t.emulators)} for t in chosen}
        click.echo(json.dumps(out, indent=2, sort_keys=True))
        return
    blocks = []
    for t in chosen:
        text = format_profile(t.profile)
        if aliases.get(t.name):
            text += f"\n  also called: {', '.join(aliases[t.name])}"
        blocks.append(text + f"\n  costs: {t.counter}")
    click.echo("\n\n".join(blocks))
