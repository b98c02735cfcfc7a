"""Build targets: toolchain, flags, HAL sources, memory limits, and the generated Makefile."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from export.cgen import MAX_LINE

from .errors import FirmwareGenError

WARNINGS = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wdouble-promotion",
            "-Wconversion")
#: -ffp-contract=off: never fuse a*b+c (float32 must round the product); -fno-math-errno lets
#: sqrtf be one instruction where the FPU has it (errno is never read).
FP_FLAGS = ("-ffp-contract=off", "-fno-math-errno")
SIZE_FLAGS = ("-ffunction-sections", "-fdata-sections")


@dataclass(frozen=True)
class Target:
    """One firmware target."""

    name: str
    description: str
    prefix: str               # toolchain prefix ("" for the host)
    arch_flags: tuple
    opt: str
    ld_flags: tuple
    hal: tuple                # static runtime files besides the protocol
    linker_script: str | None
    exe: str
    rx_payload: int
    tx_payload: int
    flash_bytes: int | None   # limits for the footprint check (None: no limit)
    ram_bytes: int | None
    cost_unit: str
    qemu_machine: str | None = None

    @property
    def cc(self) -> str:
        return f"{self.prefix}gcc"

    @property
    def mcu(self) -> bool:
        return self.name != "host"

    @property
    def cflags(self) -> tuple:
        return (*WARNINGS, self.opt, *FP_FLAGS, *self.arch_flags,
                *(SIZE_FLAGS if self.mcu else ()))


_CM_LD = ("-T", "sbfw_cortex_m.ld", "-nostartfiles", "-specs=nano.specs", "-specs=nosys.specs",
          "-Wl,--gc-sections")
_CM_HAL = ("sbfw_hal_cortex_m.c", "sbfw_startup_cortex_m.c")

TARGETS = {t.name: t for t in (
    Target("host", "this computer (gcc); protocol on stdin/stdout", "", (), "-O2", (),
           ("sbfw_hal_host.c",), None, "firmware", 1024, 1024, None, None, "nanoseconds"),
    Target("cortex-m4f", "Cortex-M4F, ARM MPS2 AN386 (QEMU mps2-an386), hard float",
           "arm-none-eabi-", ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard",
                              "-mfpu=fpv4-sp-d16"), "-O2", _CM_LD, _CM_HAL, "sbfw_cortex_m.ld",
           "firmware.elf", 1024, 1024, 4 << 20, 4 << 20, "instructions", "mps2-an386"),
    Target("cortex-m3", "Cortex-M3, ARM MPS2 AN385 (QEMU mps2-an385), soft float",
           "arm-none-eabi-", ("-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"), "-O2", _CM_LD,
           _CM_HAL, "sbfw_cortex_m.ld", "firmware.elf", 1024, 1024, 4 << 20, 4 << 20,
           "instructions", "mps2-an385"),
    Target("avr", "ATmega328P at 16 MHz (Arduino Uno class; simavr)", "avr-",
           ("-mmcu=atmega328p", "-DF_CPU=16000000UL"), "-O2", ("-Wl,--gc-sections",),
           ("sbfw_hal_avr.c",), None, "firmware.elf", 256, 160, 32768, 2048, "cycles"),
)}


def get_target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise FirmwareGenError(f"target={name!r} is not one of {', '.join(TARGETS)}") from None


def runtime_files(target: Target) -> tuple:
    """Static runtime files (from ``templates/``) the target's firmware needs."""
    files = ("sbfw_hal.h", "sbfw_protocol.h", "sbfw_protocol.c", *target.hal)
    return files + ((target.linker_script,) if target.linker_script else ())


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
    strip = " -R .eeprom" if t.name == "avr" else ""
    lines += [f"all: {' '.join(outputs)}", "",
              f"{t.exe}: {deps}",
              "\t$(CC) $(CFLAGS) $(EXTRA_CFLAGS) $(SRCS) -o $@ $(LDFLAGS) $(LDLIBS)", ""]
    if t.mcu:
        lines += [f"firmware.hex: {t.exe}", f"\t$(OBJCOPY) -O ihex{strip} $< $@", "",
                  f"firmware.bin: {t.exe}", f"\t$(OBJCOPY) -O binary{strip} $< $@", ""]
    phony = "all size clean"
    if t.name == "avr":
        outputs.append("sbfw_simavr")
        phony += " sim"
        lines += ["# the simulator harness: ./sbfw_simavr firmware.elf (needs libsimavr-dev)",
                  "sim: sbfw_simavr", "", "sbfw_simavr: sbfw_simavr.c",
                  "\tgcc -std=gnu99 -O2 $< -o $@ -lsimavr", ""]
    lines += [f"size: {t.exe}", "\t$(SIZE) -A $<", "", "clean:",
              f"\trm -f {' '.join(outputs)}", "", f".PHONY: {phony}", ""]
    return "\n".join(lines)


def run_command(target: Target, out_dir=".", port: int | None = None) -> list:
    """argv that runs the built firmware (QEMU serial on loopback TCP ``port``)."""
    from pathlib import Path

    exe = str(Path(out_dir) / target.exe)
    if target.name == "host":
        return [exe if Path(exe).parent != Path(".") else f"./{exe}"]
    if target.qemu_machine:
        serial = f"tcp:127.0.0.1:{port or 4321},server=on,wait=on,nodelay=on"
        return ["qemu-system-arm", "-M", target.qemu_machine, "-display", "none", "-monitor",
                "none", "-kernel", exe, "-semihosting-config", "enable=on,target=native",
                "-icount", "shift=0", "-serial", serial]
    return [str(Path(out_dir) / "sbfw_simavr"), exe, "atmega328p", "16000000"]
