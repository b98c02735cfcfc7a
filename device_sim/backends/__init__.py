"""Backends: one interface over every way of running the model; the factory :func:`make_backend`.

Which backends exist, which board's image each runs and how it counts come from the board
registry (:mod:`sensorbudget.firmware_gen.boards`: each board's ``measured_by``); a backend
measures, and the board it is costed with (``make_backend(board=...)``) prices what it measured.

- :mod:`~sensorbudget.device_sim.backends.base`: :class:`Backend` (what the replay needs) and
  :class:`ProtocolBackend` (a device behind the framed protocol and its link);
- :mod:`~sensorbudget.device_sim.backends.local`: ``python`` and ``serial:URL`` (no firmware is
  built);
- :mod:`~sensorbudget.device_sim.backends.firmware`: ``host``, ``qemu-m4f``, ``qemu-m3``,
  ``qemu-nucleo-f4``, ``qemu-hifive1`` and ``simavr``: the generated firmware built and run as
  a child process (:func:`~.firmware.launch`);
- :mod:`~sensorbudget.device_sim.backends.unicorn`: ``unicorn-m4f``, the Cortex-M4F firmware's
  functions called in unicorn (optional dependency ``sensorbudget[sim]``);
- :mod:`~sensorbudget.device_sim.backends.unicorn_rv32`: ``unicorn-rv32``, the same for an
  RV32IMC/IMAC build of the hifive1 firmware (``unicorn-rv32ec``: the ch32v003 image).

========================  ==================================================================
``python``                :class:`~sensorbudget.device_sim.fake.FakeDevice` in-process (the
                          reference pipeline; costs are op-count estimates)
``host``                  host-compiled firmware, child process on a pty (pyserial)
``qemu-m4f``/``qemu-m3``  firmware in qemu-system-arm (mps2-an386/an385, ``-icount shift=8``),
                          UART on loopback TCP (pyserial ``socket://``); instruction counts
``qemu-nucleo-f4``        the nucleo-f4 board image on QEMU netduinoplus2; instruction counts
``unicorn-m4f``           compiled functions called in unicorn; exact per-call instruction counts
``simavr``                the arduino-uno image (ATmega328P, 16 MHz) in libsimavr; cycle counts
``qemu-hifive1``          the hifive1 image (FE310-G002, RV32IMAC) on QEMU sifive_e; minstret
                          instruction counts
``unicorn-rv32``          the RV32IMC (or IMAC) build's functions called in unicorn; exact
                          per-call instruction counts, core only (ESP32-C3 class)
``unicorn-rv32ec``        the same for the ch32v003 image (RV32EC, 2 KB SRAM), core only
``serial:URL``            a real board on any pyserial URL or port
========================  ==================================================================
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from sensorbudget.firmware_gen.boards import DEFAULT_BOARD, measurers

from ..costs import get_cost_profile
from ..errors import DeviceError
from .base import Backend, ProtocolBackend
from .firmware import FirmwareBackend
from .local import PythonBackend, SerialBackend
from .unicorn import UnicornBackend
from .unicorn_rv32 import MARCHES, UnicornRV32Backend

__all__ = ["BACKENDS", "Backend", "ProtocolBackend", "PythonBackend", "SerialBackend",
           "FirmwareBackend", "UnicornBackend", "UnicornRV32Backend", "make_backend",
           "available_backends", "best_backend"]

#: every backend: the in-process reference, the measuring backends of the board registry (each
#: names the board whose image it measures), a board on a serial port
BACKENDS = ("python", *measurers(), "serial:URL")


def costed_board(board=None, profile=None, default: str = DEFAULT_BOARD) -> str:
    """The canonical name of the board a backend's figures are costed with: ``board`` (or the
    older ``profile``, the same thing), else ``default``. DeviceError when the name is no board
    of the registry, or ``board`` and ``profile`` name two different boards."""
    names = {get_cost_profile(n).name for n in (board, profile) if n is not None}
    if len(names) > 1:
        raise DeviceError(f"board={board!r} and profile={profile!r} name two boards; give one")
    return names.pop() if names else get_cost_profile(default).name


def make_backend(spec: str, *, model=None, workdir=None, profile=None, board=None,
                 **options) -> Backend:
    """The backend called ``spec`` (see the module docstring) for ``model``, a
    :class:`~sensorbudget.device_sim.reference.ReferenceModel` (the firmware backends generate
    their firmware from its bundle and plan).

    ``workdir`` holds generated and compiled firmware for the firmware-based backends;
    ``board`` (or ``profile``) is the board the figures are costed with: by default the board
    whose image a measuring backend runs, and
    :data:`~sensorbudget.firmware_gen.boards.DEFAULT_BOARD` for the python and serial backends.
    The backend measures; the board only prices what it measured (``backend.profile`` names
    it).
    """
    if spec == "python":
        return PythonBackend(model, profile=costed_board(board, profile), **options)
    if spec.startswith("serial:"):
        return SerialBackend(spec[len("serial:"):], profile=costed_board(board, profile),
                             **options)
    found = measurers().get(spec)
    if found is None:
        raise DeviceError(f"unknown backend {spec!r}; choose one of {', '.join(BACKENDS)}")
    image_board, how = found
    if how.kind == "firmware":
        backend = FirmwareBackend(spec, model=model, workdir=workdir, **options)
    elif image_board.arch == "riscv":
        own = next(m for m, (_, flags, name) in MARCHES.items() if name == spec and not flags)
        options.setdefault("march", how.march or own)
        backend = UnicornRV32Backend(model=model, workdir=workdir, **options)
    else:
        backend = UnicornBackend(model=model, workdir=workdir, **options)
    backend.profile = costed_board(board, profile, default=image_board.name)
    return backend


def available_backends() -> dict:
    """{backend: None if usable here, else the reason it is not} (tools on PATH, modules)."""
    out = {"python": None}
    for name, (_, how) in measurers().items():
        missing = [t for t in how.tools if shutil.which(t) is None]
        out[name] = f"{missing[0]} is not installed" if missing else None
        for mod in ("unicorn", "elftools") if how.kind == "unicorn" else ():
            if out[name] is None and importlib.util.find_spec(mod) is None:
                out[name] = (f"python module {mod} is not installed "
                             f"(pip install 'sensorbudget[sim]')")
        if how.emulator == "simavr" and out[name] is None and not _has_simavr_headers():
            out[name] = "libsimavr-dev (simavr headers) is not installed"
    return out


def _has_simavr_headers() -> bool:
    return any(Path(p, "simavr", "sim_avr.h").is_file() for p in ("/usr/include",
                                                                  "/usr/local/include"))


def best_backend() -> str:
    """The most informative backend usable here (measured costs preferred)."""
    usable = available_backends()
    for name in ("qemu-m4f", "unicorn-m4f", "simavr", "qemu-m3", "host", "python"):
        if usable.get(name) is None:
            return name
    return "python"
