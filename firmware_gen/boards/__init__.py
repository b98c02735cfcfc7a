"""The board registry: one :class:`Board` per board, and every other table derives from it.

A board's entry (:mod:`.entries`) holds its part, core, clock, flash, RAM, stack reserve, active
and sleep current with the source of each figure, toolchain flags, HAL template files, emulator
machine, flashing tools and the backends that measure it. The firmware targets
(:mod:`sensorbudget.firmware_gen.targets`), the fit checks
(:mod:`~sensorbudget.firmware_gen.memory`, :mod:`~sensorbudget.firmware_gen.build`), the flash
plans (:mod:`~sensorbudget.firmware_gen.flash`),
the cost profiles (:mod:`sensorbudget.device_sim.costs`) and the backends' specs
(:mod:`sensorbudget.device_sim.backends`) are read off it; no other module spells a board's
name (``tests/firmware_gen/test_boards.py`` checks). Adding a board is one entry plus its HAL.

>>> from sensorbudget.firmware_gen.boards import get_board
>>> b = get_board("nucleo-f4")
>>> b.part, b.clock_hz, b.flash_bytes // 1024, b.ram_bytes // 1024, b.backends
('STM32F401RE', 16000000.0, 512, 96, ('qemu-nucleo-f4',))
>>> get_board("cortex-m4f").name, board_of_backend("unicorn-m4f").name
('mps2-an386', 'mps2-an386')
"""

from __future__ import annotations

from ..errors import FirmwareGenError
from .board import ARCHES, FP_FLAGS, SIZE_FLAGS, WARNINGS, Board, Flashing, Measurer
from .entries import ENTRIES, MPS2_AN386

__all__ = ["ARCHES", "BOARDS", "ALIASES", "BOARD_NAMES", "DEFAULT_BOARD", "Board", "Flashing",
           "Measurer", "FP_FLAGS", "SIZE_FLAGS", "WARNINGS", "get_board", "board_of_backend",
           "measurer", "measurers", "names_where"]

#: canonical name -> Board
BOARDS = {b.name: b for b in ENTRIES}
#: older names, kept working: they resolve to these canonical boards (the same image)
ALIASES = {alias: b.name for b in ENTRIES for alias in b.aliases}
BOARD_NAMES = (*BOARDS, *ALIASES)
#: the board the estimating backends (python, serial:URL) and compare's bundle estimates cost
#: with unless told otherwise: the Cortex-M4F image the older default name ``cortex-m4f``
#: resolves to (instructions at the FPGA's 25 MHz, the STM32F401's currents as a stand-in)
DEFAULT_BOARD = MPS2_AN386.name


def get_board(name: str) -> Board:
    """The board called ``name`` (a canonical name or an alias); FirmwareGenError naming the
    known ones otherwise."""
    try:
        return BOARDS[ALIASES.get(name, name)]
    except (KeyError, TypeError):
        raise FirmwareGenError(f"target={name!r} is not one of "
                               f"{', '.join(BOARD_NAMES)}") from None


def measurers() -> dict:
    """{backend name: (Board, Measurer)} of every backend that measures a board's image."""
    return {m.name: (b, m) for b in ENTRIES for m in b.measured_by}


def measurer(backend: str) -> Measurer:
    """The :class:`Measurer` called ``backend``."""
    return _lookup(backend)[1]


def board_of_backend(backend: str) -> Board:
    """The board whose image ``backend`` measures (the board it is costed with by default)."""
    return _lookup(backend)[0]


def _lookup(backend: str) -> tuple:
    found = measurers().get(backend)
    if found is None:
        raise FirmwareGenError(f"backend={backend!r} measures no board of the registry; "
                               f"known: {', '.join(measurers())}")
    return found


def names_where(test) -> str:
    """The comma-separated names of the boards for which ``test(board)`` holds (help texts and
    messages list boards from here instead of spelling them)."""
    return ", ".join(b.name for b in ENTRIES if test(b))
