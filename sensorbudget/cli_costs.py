"""Click options for budgeted sensor selection, shared by ``train`` (and ``info --plot``).

The options reach the command as keywords of the same names, which it passes to
:func:`sensorbudget.trainer.api.train`; ``--board`` becomes its ``ram_costs`` hook
(:func:`ram_costs_of`).
"""

from __future__ import annotations

from pathlib import Path

import click

from sensorbudget.firmware_gen.boards import BOARD_NAMES, names_where
from sensorbudget.trainer.bundle import write_atomically

_OPTIONS = (
    click.option("--max-sensors", type=click.IntRange(min=0), default=None,
                 help="At most this many sensors on the device."),
    click.option("--max-cost", type=click.FloatRange(min=0), default=None,
                 help="Unit-price budget (bill of materials), in the sensors.toml currency."),
    click.option("--max-energy", type=click.FloatRange(min=0), default=None,
                 help="Energy budget per prediction (J)."),
    click.option("--max-time", type=click.FloatRange(min=0), default=None,
                 help="Sensor read-time budget per prediction (s)."),
    click.option("--mode", type=click.Choice(("joint", "separate")), default="joint",
                 show_default=True,
                 help="joint: one sensor set for all targets; separate: one set per target."),
    click.option("--strategy", type=click.Choice(("auto", "cost-ratio", "error")),
                 default="auto", show_default=True,
                 help="auto: best of cost-ratio and error-only greedy under the same budget."),
    click.option("--board", type=click.Choice(BOARD_NAMES), default=None, metavar="TARGET",
                 help=f"Select a design whose firmware fits this board's RAM and flash "
                      f"({names_where(lambda b: b.ram_bytes)}): each candidate's bytes (its "
                      f"channel's ring buffer, scratch arrays, a kind's code: shared parts paid "
                      f"once) are costs (firmware_gen.memory, .memory_flash); with --sensors."),
    click.option("--max-ram", type=click.IntRange(min=1), default=None, metavar="BYTES",
                 help="With --board: RAM for the firmware, static data plus stack (default: "
                      "the board's)."),
    click.option("--max-flash", type=click.IntRange(min=1), default=None, metavar="BYTES",
                 help="With --board: flash for the firmware, code plus constant data "
                      "(default: the board's; firmware_gen.memory_flash)."),
    click.option("--numeric", type=click.Choice(("float32", "q15", "q31")), default="float32",
                 show_default=True, help="With --board: the firmware's number format."),
    click.option("--unit", type=click.Choice(("feature", "channel", "sensor")),
                 default="feature", show_default=True,
                 help="What one greedy step adds: a feature, a channel's features, or a "
                      "sensor's features (with --sensors or a feature table)."),
)

#: ``--plot PNG`` alone (for ``info``); :func:`cost_options` includes it too.
plot_option = click.option(
    "--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Write the Pareto plot (LOO error vs unit price) as a PNG here.")


def cost_options(f):
    """Decorator adding --max-sensors --max-cost --max-energy --max-time --mode --strategy
    --unit --plot to a click command (keyword arguments of the same names, underscored)."""
    for option in reversed(_OPTIONS + (plot_option,)):
        f = option(f)
    return f


def ram_costs_of(board=None, max_ram=None, numeric="float32", max_flash=None):
    """The ``ram_costs`` hook of :func:`sensorbudget.trainer.api.train` for ``--board``
    (None without it): adds the board's RAM costs and budget to the estimator's keywords."""
    if max_ram is not None and board is None:
        raise click.UsageError("--max-ram needs --board (the runtime's bytes depend on it)")
    if max_flash is not None and board is None:
        raise click.UsageError("--max-flash needs --board (the runtime's bytes depend on it)")
    if board is None:
        return None

    def add(kwargs, feature_set, unit, n_targets):
        return _board_kwargs(kwargs, board, (max_ram, max_flash), numeric, unit, feature_set,
                             n_targets)

    return add


def _board_kwargs(kwargs, board, limits, numeric, unit, feature_set, n_targets) -> dict:
    """``kwargs`` with the RAM costs and budget of ``board`` (:mod:`sensorbudget.firmware_gen.memory`)."""
    from sensorbudget.firmware_gen import FirmwareGenError
    from sensorbudget.firmware_gen.memory import add_memory_costs
    from sensorbudget.firmware_gen.targets import get_target

    if feature_set is None or not getattr(feature_set, "sensors", None) or unit != "feature":
        raise click.UsageError("--board needs recordings with --sensors sensors.toml (or a "
                               "feature table built from one) and --unit feature")
    try:
        target = get_target(board)
        if target.ram_bytes is None:
            raise FirmwareGenError(f"--board {board}: the host has no RAM limit; give a board "
                                   f"({names_where(lambda b: b.ram_bytes)})")
        return add_memory_costs(kwargs, feature_set, target, numeric, n_targets, *limits)
    except FirmwareGenError as exc:
        raise click.UsageError(str(exc)) from None


def board_lines(meta: dict, board, numeric: str) -> list:
    """RAM per path step on ``board``: the plan's estimate of the design's static bytes
    (runtime and selected parts) and what the board leaves for them."""
    if board is None:
        return []
    from sensorbudget.firmware_gen.memory import memory_budget_lines

    return memory_budget_lines(meta, board, numeric)


def write_plot(path_entries, out, criterion=None) -> None:
    """Write the Pareto PNG of a bundle path to ``out`` (matplotlib imported lazily);
    ``criterion``: the bundle's (loo, leave-group-out), named on the error axis."""
    from sensorbudget.trainer.plots import pareto_png

    write_atomically(out, pareto_png(path_entries, criterion=criterion))
