"""Put a built firmware onto a board: avrdude (AVR serial bootloader), pyocd or OpenOCD
(Cortex-M debug probes), or a copy of ``firmware.bin`` to a mass-storage (drag-and-drop) board.

:func:`flash_plan` decides what to do and builds the command without running anything (unit
tested); :func:`flash` carries it out.

The Cortex-M firmware is built for the ARM MPS2 boards (code at 0x0, CMSDK UART); on another
Cortex-M board it needs that board's linker script and UART in its HAL (``sbfw_hal.h``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .build import read_manifest
from .errors import FirmwareGenError
from .targets import get_target

PROGRAMMERS = ("auto", "avrdude", "pyocd", "openocd", "copy")
AVR_PART = "atmega328p"


@dataclass(frozen=True)
class FlashPlan:
    """What :func:`flash` will do: run ``argv``, or copy ``source`` to ``destination``."""

    tool: str
    argv: list = field(default_factory=list)
    source: Path | None = None
    destination: Path | None = None
    message: str = ""


def _artifact(out: Path, manifest: dict, kind: str) -> Path:
    artifacts = manifest.get("artifacts")
    name = artifacts.get(kind) if isinstance(artifacts, dict) else None
    if name is not None and not (isinstance(name, str) and PLAIN_NAME.fullmatch(name)):
        # a tampered firmware.json must not make flash read (and copy) a file outside out_dir
        raise FirmwareGenError(f"firmware.json artifact {kind}={name!r} is not a plain file "
                               f"name in {str(out)!r}")
    path = out / name if name else None
    if path is None or not path.is_file():
        raise FirmwareGenError(f"{str(out / (name or 'firmware.' + kind))!r} is missing: build "
                               f"the firmware first (sensorbudget firmware ... --build)")
    return path


PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def _need(tool: str, hint: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise FirmwareGenError(f"{tool} is not installed; {hint}")
    return tool


def _serial_port(port: str | None) -> str:
    if not port:
        raise FirmwareGenError("--port is required for an AVR board: its serial port, e.g. "
                               "/dev/ttyACM0 or /dev/ttyUSB0 (or net:HOST:PORT)")
    if not port.startswith("net:") and not os.path.exists(port):
        raise FirmwareGenError(f"serial port {port!r} does not exist (is the board plugged in? "
                               f"ls /dev/ttyACM* /dev/ttyUSB*)")
    return port


def _avr_plan(out, manifest, port, baud, avrdude_programmer) -> FlashPlan:
    hex_file = _artifact(out, manifest, "hex")
    tool = _need("avrdude", "install it (Debian/Ubuntu: apt-get install avrdude)")
    argv = [tool, "-p", AVR_PART, "-c", avrdude_programmer, "-P", _serial_port(port),
            "-b", str(baud), "-D", "-U", f"flash:w:{hex_file}:i"]
    return FlashPlan("avrdude", argv, message=f"flashing {hex_file.name} through the serial "
                                             f"bootloader on {port}")


def _cortex_plan(out, manifest, port, programmer, chip, openocd_config) -> FlashPlan:
    if programmer == "auto":
        if port and Path(port).is_dir():
            programmer = "copy"
        elif shutil.which("pyocd"):
            programmer = "pyocd"
        elif shutil.which("openocd"):
            programmer = "openocd"
        else:
            bin_file = _artifact(out, manifest, "bin")
            raise FirmwareGenError(
                f"no Cortex-M flashing tool found (pyocd or openocd); for a drag-and-drop "
                f"(mass-storage) board copy {bin_file} to the board's drive, or pass its mount "
                f"point: --port /media/$USER/BOARD")
    if programmer == "copy":
        bin_file = _artifact(out, manifest, "bin")
        if not port or not Path(port).is_dir():
            raise FirmwareGenError(f"--port must be the mounted drive of a mass-storage board "
                                   f"(a directory) to copy {bin_file.name} to; got {port!r}")
        return FlashPlan("copy", source=bin_file, destination=Path(port) / bin_file.name,
                         message=f"copying {bin_file.name} to the drive {port}")
    if programmer == "pyocd":
        hex_file = _artifact(out, manifest, "hex")
        tool = _need("pyocd", "install it (pip install pyocd) or use --programmer openocd/copy")
        if not chip:
            raise FirmwareGenError("pyocd needs the target chip: --chip NAME (see 'pyocd list "
                                   "--targets', e.g. stm32f411re)")
        argv = [tool, "flash", "-t", chip] + (["-u", port] if port else []) + [str(hex_file)]
        return FlashPlan("pyocd", argv, message=f"flashing {hex_file.name} with pyocd ({chip})")
    if programmer == "openocd":
        elf = _artifact(out, manifest, "elf")
        tool = _need("openocd", "install it (apt-get install openocd) or use --programmer "
                                "pyocd/copy")
        if openocd_config:
            configs = ["-f", str(openocd_config)]
        elif chip:
            configs = ["-f", "interface/cmsis-dap.cfg", "-f", f"target/{chip}.cfg"]
        else:
            raise FirmwareGenError("openocd needs --openocd-config BOARD.cfg or --chip NAME "
                                   "(an OpenOCD target/NAME.cfg, e.g. stm32f4x)")
        argv = [tool, *configs, "-c", f"program {elf} verify reset exit"]
        return FlashPlan("openocd", argv, message=f"flashing {elf.name} with OpenOCD")
    raise FirmwareGenError(f"--programmer {programmer} cannot flash a Cortex-M board; use "
                           f"pyocd, openocd or copy")


def flash_plan(out_dir, *, port=None, programmer="auto", baud=115200, chip=None,
               avrdude_programmer="arduino", openocd_config=None) -> FlashPlan:
    """The flashing step for the built firmware in ``out_dir`` (nothing is run)."""
    if programmer not in PROGRAMMERS:
        raise FirmwareGenError(f"programmer={programmer!r} is not one of {PROGRAMMERS}")
    out = Path(out_dir)
    manifest = read_manifest(out)
    target = get_target(manifest["target"])
    if target.name == "host":
        raise FirmwareGenError("host firmware is not flashed: run ./firmware in the output "
                               "directory")
    if target.name == "avr":
        if programmer not in ("auto", "avrdude"):
            raise FirmwareGenError(f"AVR boards are flashed with avrdude, not {programmer}")
        return _avr_plan(out, manifest, port, baud, avrdude_programmer)
    return _cortex_plan(out, manifest, port, programmer, chip, openocd_config)


def flash(out_dir, *, timeout: float = 300, **options) -> FlashPlan:
    """Carry out :func:`flash_plan`; raises FirmwareGenError with the tool's output on failure."""
    plan = flash_plan(out_dir, **options)
    if plan.tool == "copy":
        shutil.copyfile(plan.source, plan.destination)
        return plan
    proc = subprocess.run(plan.argv, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr + proc.stdout).strip().splitlines()[-15:])
        raise FirmwareGenError(f"{plan.tool} failed (exit {proc.returncode}): "
                               f"{' '.join(plan.argv)}\n{tail}")
    return plan
