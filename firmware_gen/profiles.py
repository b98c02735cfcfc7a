"""Board profiles: each board's part, limits and power with the source of every figure, as
``sensorbudget targets`` prints them. The figures live in the registry
(:mod:`sensorbudget.firmware_gen.boards`); this module formats them.

The flash and RAM sizes are the build's fit check (:func:`sensorbudget.firmware_gen.build.build`:
flash, and RAM plus ``stack_reserve``, must fit; less than 25 % RAM headroom is a warning).
Clock, supply and currents feed the energy model (:mod:`sensorbudget.device_sim.costs`) of the
board a simulation is costed with. Currents are typical values at 25 C of the microcontroller
alone (a development board's debugger, LEDs and regulator draw more); check your part.

>>> from sensorbudget.firmware_gen.profiles import PROFILES
>>> p = PROFILES["nucleo-f4"]
>>> p.part, p.clock_hz, p.flash_bytes // 1024, p.ram_bytes // 1024
('STM32F401RE', 16000000.0, 512, 96)
"""

from __future__ import annotations

from .boards import BOARDS, Board, get_board

#: a board's profile is the board itself (kept for the callers of ``PROFILES[name]``)
BoardProfile = Board
PROFILES = BOARDS


def get_profile(target: str) -> Board:
    """The profile of a board (a canonical name or an alias)."""
    return get_board(target)


def _current(amps: float) -> str:
    return f"{amps * 1e6:.3g} uA" if amps < 1e-3 else f"{amps * 1e3:.3g} mA"


def format_profile(p: Board) -> str:
    """A few lines describing one board (``sensorbudget targets``): part, clock, limits, power
    and the source of each figure, the backends that measure it, how it is flashed."""

    def size(n):
        return "no limit" if n is None else f"{n // 1024} KiB ({n} bytes)"

    power = "placeholder" if not p.mcu else \
        f"{_current(p.active_current_a)} active, {_current(p.sleep_current_a)} " \
        f"{p.sleep_mode} at {p.supply_v:g} V"
    flashing = ", ".join(p.flashing.tools) if p.flashing.tools else p.flashing.kind
    return "\n".join([
        f"{p.name}: {p.board}",
        f"  part {p.part}, {p.cpu}, {p.clock_hz / 1e6:g} MHz; runs on {p.emulated_by}",
        f"  flash {size(p.flash_bytes)}, RAM {size(p.ram_bytes)}"
        + (f" ({p.stack_reserve} bytes kept for the stack)" if p.stack_reserve else ""),
        f"  memory: {p.memory_source}",
        f"  power{' (estimated)' if p.estimated_power else ''}: {power}",
        f"  active power source: {p.active_source}",
        f"  sleep power source: {p.sleep_source}",
        f"  toolchain: {p.cc} {' '.join(p.arch_flags)}".rstrip()
        + f"; HAL: {', '.join((*p.hal, *((p.linker_script,) if p.linker_script else ())))}",
        f"  measured by: {', '.join(p.backends) or 'no backend'}; flashed with: {flashing}"])
