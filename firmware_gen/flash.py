"""Put a built firmware onto its board, as its registry entry's ``flashing`` says
(:class:`sensorbudget.firmware_gen.boards.Flashing`): ``avrdude -c arduino`` through an AVR
board's serial bootloader; for a Cortex-M board (the Nucleo-64) a copy of ``firmware.bin`` to the
ST-LINK's USB drive, st-flash, pyocd or OpenOCD; for a RISC-V board (the HiFive1) a copy of
``firmware.hex`` to the J-Link's drive, OpenOCD or J-Link Commander.

:func:`flash_plan` decides what to do and builds the command without running anything (unit
tested); :func:`flash` carries it out. Emulation boards have nothing to flash (the plan's error
says how to run them). docs/boards.md has the commands per board.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .boards import BOARDS
from .build import read_manifest
from .errors import FirmwareGenError
from .targets import get_target

PROGRAMMERS = ("auto", "avrdude", "st-flash", "pyocd", "openocd", "copy", "jlink")
JLINK_SCRIPT = "flash.jlink"


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


def _avr_plan(out, manifest, target, port, baud, avrdude_programmer) -> FlashPlan:
    hex_file = _artifact(out, manifest, "hex")
    tool = _need("avrdude", "install it (Debian/Ubuntu: apt-get install avrdude)")
    argv = [tool, "-p", target.flashing.chip, "-c", avrdude_programmer, "-P", _serial_port(port),
            "-b", str(baud), "-D", "-U", f"flash:w:{hex_file}:i"]
    return FlashPlan("avrdude", argv, message=f"flashing {hex_file.name} through the serial "
                                             f"bootloader on {port}")


def _auto_programmer(out, manifest, port) -> str:
    if port and Path(port).is_dir():
        return "copy"
    for tool in ("st-flash", "pyocd", "openocd"):
        if shutil.which(tool):
            return tool
    bin_file = _artifact(out, manifest, "bin")
    raise FirmwareGenError(
        f"no Cortex-M flashing tool found (st-flash, pyocd or openocd); a Nucleo is also a USB "
        f"drive: copy {bin_file} to it, or pass its mount point: --port /media/$USER/NODE_F401RE")


def _copy_plan(image: Path, port, whose: str, drive: str) -> FlashPlan:
    """A copy of ``image`` to the mounted drive ``port`` of ``whose`` (a mass-storage board)."""
    if not port or not Path(port).is_dir():
        raise FirmwareGenError(f"--port must be the mounted drive of {whose} (a directory) to "
                               f"copy {image.name} to; got {port!r}")
    return FlashPlan("copy", source=image, destination=Path(port) / image.name,
                     message=f"copying {image.name} to the {drive} {port}")


def _cortex_plan(out, manifest, target, port, programmer, chip, openocd_config) -> FlashPlan:
    how = target.flashing
    pyocd_chip, openocd_board, base = how.chip, how.openocd_config, how.base
    if programmer == "auto":
        programmer = _auto_programmer(out, manifest, port)
    if programmer == "st-flash":
        bin_file = _artifact(out, manifest, "bin")
        tool = _need("st-flash", "install it (apt-get install stlink-tools) or use --programmer "
                                 "copy/pyocd/openocd")
        argv = [tool, *(["--serial", port] if port else []), "--reset", "write", str(bin_file),
                f"0x{base:08x}"]
        return FlashPlan("st-flash", argv, message=f"flashing {bin_file.name} with st-flash at "
                                                   f"0x{base:08x}")
    if programmer == "copy":
        return _copy_plan(_artifact(out, manifest, "bin"), port, "a mass-storage board", "drive")
    if programmer == "pyocd":
        hex_file = _artifact(out, manifest, "hex")
        tool = _need("pyocd", "install it (pip install pyocd) or use --programmer openocd/copy")
        chip = chip or pyocd_chip         # F411RE / F446RE boards: --chip stm32f411re ...
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
            configs = ["-f", openocd_board]
        argv = [tool, *configs, "-c", f"program {elf} verify reset exit"]
        return FlashPlan("openocd", argv, message=f"flashing {elf.name} with OpenOCD")
    raise FirmwareGenError(f"--programmer {programmer} cannot flash a Cortex-M board; use "
                           f"st-flash, pyocd, openocd or copy")


def _riscv_plan(out, manifest, target, port, programmer, openocd_config) -> FlashPlan:
    """HiFive1 Rev B: a copy of firmware.hex to the J-Link's drive, OpenOCD, or J-Link
    Commander (JLinkExe with a command file written next to the firmware by :func:`flash`)."""
    openocd_board, jlink_device = target.flashing.openocd_config, target.flashing.jlink_device
    if programmer == "auto":
        programmer = "copy" if port and Path(port).is_dir() else \
            next((p for p, tool in (("openocd", "openocd"), ("jlink", "JLinkExe"))
                  if shutil.which(tool)), None)
        if programmer is None:
            raise FirmwareGenError(
                f"no RISC-V flashing tool found (openocd or JLinkExe); the HiFive1 Rev B's "
                f"J-Link is also a USB drive: pass its mount point, --port /media/$USER/HiFive "
                f"(copies {_artifact(out, manifest, 'hex').name})")
    if programmer == "copy":
        return _copy_plan(_artifact(out, manifest, "hex"), port, "the board's J-Link",
                          "J-Link drive")
    if programmer == "openocd":
        elf = _artifact(out, manifest, "elf")
        tool = _need("openocd", "install it (apt-get install openocd) or use --programmer "
                                "jlink/copy")
        configs = ["-f", str(openocd_config or openocd_board)]
        argv = [tool, *configs, "-c", f"program {elf} verify reset exit"]
        return FlashPlan("openocd", argv, message=f"flashing {elf.name} with OpenOCD")
    if programmer == "jlink":
        hex_file = _artifact(out, manifest, "hex")
        tool = _need("JLinkExe", "install SEGGER's J-Link software or use --programmer "
                                 "openocd/copy")
        argv = [tool, "-device", jlink_device, "-if", "JTAG", "-speed", "4000", "-jtagconf",
                "-1,-1", "-autoconnect", "1", "-CommandFile", str(out / JLINK_SCRIPT)]
        return FlashPlan("jlink", argv, source=hex_file,
                         message=f"flashing {hex_file.name} with J-Link Commander "
                                 f"({jlink_device}; commands in {JLINK_SCRIPT})")
    raise FirmwareGenError(f"--programmer {programmer} cannot flash a RISC-V board; use "
                           f"openocd, jlink or copy")


def flash_plan(out_dir, *, port=None, programmer="auto", baud=115200, chip=None,
               avrdude_programmer="arduino", openocd_config=None) -> FlashPlan:
    """The flashing step for the built firmware in ``out_dir`` (nothing is run)."""
    if programmer not in PROGRAMMERS:
        raise FirmwareGenError(f"programmer={programmer!r} is not one of {PROGRAMMERS}")
    out = Path(out_dir)
    manifest = read_manifest(out)
    target = get_target(manifest.get("target"))
    kind = target.flashing.kind
    if kind == "avrdude":
        if programmer not in ("auto", "avrdude"):
            raise FirmwareGenError(f"AVR boards are flashed with avrdude, not {programmer}")
        return _avr_plan(out, manifest, target, port, baud, avrdude_programmer)
    if kind == "riscv":
        return _riscv_plan(out, manifest, target, port, programmer, openocd_config)
    if kind == "cortex-m":
        return _cortex_plan(out, manifest, target, port, programmer, chip, openocd_config)
    if kind == "manual":              # a part without a flashing tool integrated
        raise FirmwareGenError(f"{target.name} is not flashed by sensorbudget yet: "
                               f"{target.flashing.note} ({out / 'firmware.bin'})")
    if target.mcu:                    # an emulation board: name the boards that are flashed
        boards = ", ".join(b.name for b in BOARDS.values() if b.flashing.tools)
        raise FirmwareGenError(f"{target.name} is {target.flashing.note}; for a board use "
                               f"--target {boards}")
    raise FirmwareGenError(target.flashing.note)


def flash(out_dir, *, timeout: float = 300, **options) -> FlashPlan:
    """Carry out :func:`flash_plan`; raises FirmwareGenError with the tool's output on failure."""
    plan = flash_plan(out_dir, **options)
    if plan.tool == "copy":
        shutil.copyfile(plan.source, plan.destination)
        return plan
    if plan.tool == "jlink":            # load the .hex, reset and run, quit
        Path(plan.argv[-1]).write_text(f"loadfile {plan.source}\nrnh\nexit\n", encoding="ascii")
    proc = subprocess.run(plan.argv, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr + proc.stdout).strip().splitlines()[-15:])
        raise FirmwareGenError(f"{plan.tool} failed (exit {proc.returncode}): "
                               f"{' '.join(plan.argv)}\n{tail}")
    return plan
