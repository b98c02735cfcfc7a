"""Build targets: the boards of the registry (:mod:`sensorbudget.firmware_gen.boards`) as firmware
targets, and the generated Makefile and run command of a target's image.

A target *is* its :class:`~sensorbudget.firmware_gen.boards.Board` (toolchain, flags, HAL files,
memory limits, emulator): ``Target`` is the same class, ``TARGETS`` the same registry.
"""

from __future__ import annotations

import textwrap

from sensorbudget.export.cgen import MAX_LINE

from .boards import (
    ALIASES,
    BOARD_NAMES,
    BOARDS,
    FP_FLAGS,
    SIZE_FLAGS,
    WARNINGS,
    Board,
    get_board,
)
from .errors import FirmwareGenError

__all__ = ["Target", "TARGETS", "ALIASES", "TARGET_NAMES", "WARNINGS", "FP_FLAGS", "SIZE_FLAGS",
           "get_target", "runtime_files", "makefile", "run_command"]

#: a firmware target is a board of the registry
Target = Board
TARGETS = BOARDS
TARGET_NAMES = BOARD_NAMES


def get_target(name: str) -> Target:
    """The target called ``name`` (a canonical name or an alias)."""
    return get_board(name)


def runtime_files(target: Target) -> tuple:
    """Static runtime files (from ``templates/``) the target's firmware needs."""
    files = ("sbfw_hal.h", "sbfw_protocol.h", "sbfw_protocol.c", *target.hal)
    files += (target.linker_script,) if target.linker_script else ()
    return files + (("sbfw_simavr.c",) if target.arch == "avr" else ())


def _variable(name: str, words) -> str:
    """``NAME = words`` as a Makefile assignment, continued with backslashes past MAX_LINE."""
    lines = textwrap.wrap(" ".join(words), MAX_LINE - 2, initial_indent=f"{name} = ",
                          subsequent_indent="    ", break_long_words=False,
                          break_on_hyphens=False)
    return " \\\n".join(lines) if lines else f"{name} ="


def makefile(target: Target, sources, headers, banner: str) -> str:
    """The generated Makefile: ``make`` builds, ``make size`` prints the sections."""
    t = target
    lines = [*textwrap.wrap(banner, MAX_LINE, initial_indent="# ", subsequent_indent="#   "),
             "# make          build the firmware" + (
             " (.elf, .hex and .bin)" if t.mcu else ""), "# make size     sections (flash/RAM)",
             "# make clean", "", f"CC = {t.cc}", f"SIZE = {t.prefix}size"]
    if t.mcu:
        lines.append(f"OBJCOPY = {t.prefix}objcopy")
    lines += ["# payload bytes a request / an answer may carry (device buffers)",
              f"RX_PAYLOAD = {t.rx_payload}", f"TX_PAYLOAD = {t.tx_payload}",
              _variable("CFLAGS", [*t.cflags, "-DSBFW_RX_PAYLOAD=$(RX_PAYLOAD)u",
                                   "-DSBFW_TX_PAYLOAD=$(TX_PAYLOAD)u"]),
              "EXTRA_CFLAGS =",
              _variable("LDFLAGS", t.ld_flags), "LDLIBS = -lm",
              _variable("SRCS", sources), _variable("HDRS", headers), ""]
    outputs = [t.exe] + (["firmware.hex", "firmware.bin"] if t.mcu else [])
    deps = "$(SRCS) $(HDRS)" + (f" {t.linker_script}" if t.linker_script else "")
    strip = " -R .eeprom" if t.arch == "avr" else ""
    lines += [f"all: {' '.join(outputs)}", "",
              f"{t.exe}: {deps}",
              "\t$(CC) $(CFLAGS) $(EXTRA_CFLAGS) $(SRCS) -o $@ $(LDFLAGS) $(LDLIBS)", ""]
    if t.mcu:
        lines += [f"firmware.hex: {t.exe}", f"\t$(OBJCOPY) -O ihex{strip} $< $@", "",
                  f"firmware.bin: {t.exe}", f"\t$(OBJCOPY) -O binary{strip} $< $@", ""]
    phony = "all size clean"
    if t.arch == "avr":
        outputs.append("sbfw_simavr")
        phony += " sim"
        lines += ["# the simulator harness: ./sbfw_simavr firmware.elf (needs libsimavr-dev)",
                  "sim: sbfw_simavr", "", "sbfw_simavr: sbfw_simavr.c",
                  "\tgcc -std=gnu99 -O2 $< -o $@ -lsimavr", ""]
    lines += [f"size: {t.exe}", "\t$(SIZE) -A $<", "", "clean:",
              f"\trm -f {' '.join(outputs)}", "", f".PHONY: {phony}", ""]
    return "\n".join(lines)


def run_command(target: Target, out_dir=".", port: int | None = None,
                emulator: str | None = None) -> list:
    """argv that runs the built firmware here: the host executable, QEMU (its UART on loopback
    TCP ``port``) or the simavr harness. ``emulator`` picks one of ``target.emulators``
    (default: the first; ``"qemu"`` runs the Uno image on qemu-system-avr, a functional check
    without -icount, where reading Timer1 would abort QEMU)."""
    from pathlib import Path

    if not target.emulators:          # a part no emulator here runs (ch32v003): flash it
        return []
    emulator = emulator or target.emulators[0]
    if emulator not in target.emulators:
        raise FirmwareGenError(f"emulator={emulator!r} cannot run {target.name}; it runs on "
                               f"{', '.join(target.emulators)}")
    exe = str(Path(out_dir) / target.exe)
    if emulator == "native":
        return [exe if Path(exe).parent != Path(".") else f"./{exe}"]
    if emulator == "simavr":
        mcu = next(f.split("=", 1)[1] for f in target.arch_flags if f.startswith("-mmcu="))
        return [str(Path(out_dir) / "sbfw_simavr"), exe, mcu, str(int(target.clock_hz))]
    binary, machine, shift, index = target.qemu
    serial = f"tcp:127.0.0.1:{port or 4321},server=on,wait=on,nodelay=on"
    argv = [binary, "-M", machine, "-display", "none", "-monitor", "none"]
    if target.arch == "avr":
        argv += ["-bios", exe]
    else:
        argv += ["-kernel", exe, "-semihosting-config", "enable=on,target=native"]
    if shift is not None:
        argv += ["-icount", f"shift={shift}"]
    for _ in range(index):
        argv += ["-serial", "null"]
    return argv + ["-serial", serial]
