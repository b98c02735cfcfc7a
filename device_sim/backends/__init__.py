"""Backends: one interface over every way of running the model; the factory :func:`make_backend`.

- :mod:`~sensorbudget.device_sim.backends.base`: :class:`Backend` (what the replay needs) and
  :class:`ProtocolBackend` (a device behind the framed protocol and its link);
- :mod:`~sensorbudget.device_sim.backends.local`: ``python`` and ``serial:URL`` (no firmware is built);
- :mod:`~sensorbudget.device_sim.backends.firmware`: ``host``, ``qemu-m4f``, ``qemu-m3``,
  ``qemu-nucleo-f4`` and ``simavr``:
  the generated firmware built and run as a child process (:func:`~.firmware.launch`);
- :mod:`~sensorbudget.device_sim.backends.unicorn`: ``unicorn-m4f``, the Cortex-M4F firmware's functions
  called in unicorn (optional dependency ``sensorbudget[sim]``);
- :mod:`~sensorbudget.device_sim.backends.unicorn_rv32`: ``unicorn-rv32``, the same for an RV32IMC/IMAC
  build of the hifive1 firmware.

========================  ==================================================================
``python``                :class:`~sensorbudget.device_sim.fake.FakeDevice` in-process (reference pipeline;
                          costs are op-count estimates)
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

from ..errors import DeviceError
from .base import Backend, ProtocolBackend
from .firmware import SPECS, FirmwareBackend
from .local import PythonBackend, SerialBackend
from .unicorn import UnicornBackend
from .unicorn_rv32 import UnicornRV32Backend

__all__ = ["BACKENDS", "Backend", "ProtocolBackend", "PythonBackend", "SerialBackend",
           "FirmwareBackend", "UnicornBackend", "UnicornRV32Backend", "make_backend",
           "available_backends", "best_backend"]

BACKENDS = ("python", "host", "qemu-m4f", "qemu-m3", "qemu-nucleo-f4", "unicorn-m4f", "simavr",
            "qemu-hifive1", "unicorn-rv32", "unicorn-rv32ec", "serial:URL")


def make_backend(spec: str, *, model=None, workdir=None, profile=None, **options) -> Backend:
    """The backend called ``spec`` (see the module docstring) for ``model``, a
    :class:`~sensorbudget.device_sim.reference.ReferenceModel` (the firmware backends generate their firmware
    from its bundle and plan).

    ``workdir`` holds generated and compiled firmware for the firmware-based backends;
    ``profile`` is the cost profile of the python and serial backends (default cortex-m4f).
    """
    if spec == "python":
        return PythonBackend(model, profile=profile or "cortex-m4f", **options)
    if spec.startswith("serial:"):
        return SerialBackend(spec[len("serial:"):], profile=profile or "cortex-m4f", **options)
    if spec in SPECS:
        return FirmwareBackend(spec, model=model, workdir=workdir, **options)
    if spec == "unicorn-m4f":
        return UnicornBackend(model=model, workdir=workdir, **options)
    if spec == "unicorn-rv32":
        return UnicornRV32Backend(model=model, workdir=workdir, **options)
    if spec == "unicorn-rv32ec":
        return UnicornRV32Backend(model=model, workdir=workdir, march="rv32ec", **options)
    raise DeviceError(f"unknown backend {spec!r}; choose one of {', '.join(BACKENDS)}")


def available_backends() -> dict:
    """{backend: None if usable here, else the reason it is not} (tools on PATH, modules)."""
    need = {"host": ["gcc"], "qemu-m4f": ["arm-none-eabi-gcc", "qemu-system-arm"],
            "qemu-m3": ["arm-none-eabi-gcc", "qemu-system-arm"],
            "qemu-nucleo-f4": ["arm-none-eabi-gcc", "qemu-system-arm"],
            "unicorn-m4f": ["arm-none-eabi-gcc"], "simavr": ["avr-gcc", "gcc"],
            "qemu-hifive1": ["riscv64-unknown-elf-gcc", "qemu-system-riscv32"],
            "unicorn-rv32": ["riscv64-unknown-elf-gcc"],
            "unicorn-rv32ec": ["riscv64-unknown-elf-gcc"]}
    out = {"python": None}
    for name, tools in need.items():
        missing = [t for t in tools if shutil.which(t) is None]
        out[name] = f"{missing[0]} is not installed" if missing else None
    for uni in ("unicorn-m4f", "unicorn-rv32", "unicorn-rv32ec"):
        for mod in ("unicorn", "elftools"):
            if out.get(uni) is None and importlib.util.find_spec(mod) is None:
                out[uni] = (f"python module {mod} is not installed "
                            f"(pip install 'sensorbudget[sim]')")
    if out.get("simavr") is None and not _has_simavr_headers():
        out["simavr"] = "libsimavr-dev (simavr headers) is not installed"
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
