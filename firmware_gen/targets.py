"""Build targets: toolchain, flags, HAL sources, memory limits, and the generated Makefile."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from sensorbudget.export.cgen import MAX_LINE

from .errors import FirmwareGenError
from .profiles import PROFILES, BoardProfile

WARNINGS = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wdouble-promotion",
            "-Wconversion")
#: -ffp-contract=off: never fuse a*b+c (float32 must round the product); -fno-math-errno lets
#: sqrtf be one instruction where the FPU has it (errno is never read).
FP_FLAGS = ("-ffp-contract=off", "-fno-math-errno")
SIZE_FLAGS = ("-ffunction-sections", "-fdata-sections")


@dataclass(frozen=True)
class Target:
    """One firmware target (a canonical name of :data:`TARGETS`; aliases: :data:`ALIASES`).

    ``qemu`` is ``(qemu-system binary, machine, -icount shift or None, serial port index)``:
    the emulator that runs this target's image (the UART on that QEMU serial port; the ones
    before it are ``null``). ``emulators`` names every way of running the image here.
    """

    name: str
    description: str
    arch: str                 # host | cortex-m | avr | riscv
    prefix: str               # toolchain prefix ("" for the host)
    arch_flags: tuple
    opt: str
    ld_flags: tuple
    hal: tuple                # static runtime files besides the protocol
    linker_script: str | None
    exe: str
    rx_payload: int
    tx_payload: int
    cost_unit: str
    qemu: tuple | None = None
    emulators: tuple = ()
    counter: str = ""         # how the firmware counts costs (for reports and docs)

    @property
    def cc(self) -> str:
        return f"{self.prefix}gcc"

    @property
    def mcu(self) -> bool:
        return self.arch != "host"

    @property
    def qemu_machine(self) -> str | None:
        return None if self.qemu is None else self.qemu[1]

    @property
    def profile(self) -> BoardProfile:
        return PROFILES[self.name]

    @property
    def flash_bytes(self) -> int | None:
        return self.profile.flash_bytes

    @property
    def ram_bytes(self) -> int | None:
        return self.profile.ram_bytes

    @property
    def cflags(self) -> tuple:
        return (*WARNINGS, self.opt, *FP_FLAGS, *self.arch_flags,
                *(SIZE_FLAGS if self.mcu else ()))


_CM_LD = ("-nostartfiles", "-specs=nano.specs", "-specs=nosys.specs", "-Wl,--gc-sections")
_MPS2_HAL = ("sbfw_hal_cortex_m.c", "sbfw_startup_cortex_m.c", "sbfw_systick.h")
_F4_HAL = ("sbfw_hal_stm32f4.c", "sbfw_startup_cortex_m.c", "sbfw_systick.h")
_M4F = ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16")
_M3 = ("-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft")
#: -icount shifts: one instruction is 2**shift ns of virtual time, so SysTick (25 MHz on MPS2,
#: 168 MHz on netduinoplus2) ticks 6.4 / 5.376 times per instruction and the HALs convert ticks
#: back to exact instruction counts (sbfw_hal_cortex_m.c, sbfw_hal_stm32f4.c).
MPS2_ICOUNT_SHIFT = 8
NETDUINO_ICOUNT_SHIFT = 5
_SYSTICK = "SysTick under QEMU -icount shift={}: exact instruction counts"

#: RISC-V (sbfw_hal_fe310.c, sbfw_startup_riscv.c): Debian's GCC 12 picks its multilib (picolibc,
#: libgcc's soft float) by -march, and "rv32imac_zicsr" matches none (it falls back to the rv64
#: default and the link fails); ISA spec 2.2 keeps Zicsr inside "I", so "-march=rv32imac
#: -misa-spec=2.2" is the same instruction set with the rv32imac/ilp32 multilib.
_RV_LD = ("-nostartfiles", "--specs=picolibc.specs", "-Wl,--gc-sections")
_RV32IMAC = ("-march=rv32imac", "-mabi=ilp32", "-misa-spec=2.2", "-mcmodel=medany")
_FE310_HAL = ("sbfw_hal_fe310.c", "sbfw_startup_riscv.c")
_RV32EC = ("-march=rv32ec", "-mabi=ilp32e", "-misa-spec=2.2", "-mcmodel=medlow")
_CH32_HAL = ("sbfw_hal_ch32v003.c", "sbfw_startup_riscv.c")
_MINSTRET = ("minstret under QEMU -icount shift=0: exact instruction counts; mcycle cycles on "
             "the chip (minstret with -DSBFW_COST_INSTRET)")

TARGETS = {t.name: t for t in (
    Target("host", "this computer (gcc); protocol on stdin/stdout", "host", "", (), "-O2", (),
           ("sbfw_hal_host.c",), None, "firmware", 1024, 1024, "nanoseconds",
           emulators=("native",), counter="CLOCK_MONOTONIC nanoseconds"),
    Target("mps2-an386", "Cortex-M4F, hard float, MPS2 AN386 FPGA board (emulation only)",
           "cortex-m", "arm-none-eabi-", _M4F, "-O2",
           ("-T", "sbfw_cortex_m.ld", *_CM_LD), _MPS2_HAL, "sbfw_cortex_m.ld", "firmware.elf",
           1024, 1024, "instructions", ("qemu-system-arm", "mps2-an386", MPS2_ICOUNT_SHIFT, 0),
           ("qemu",), _SYSTICK.format(MPS2_ICOUNT_SHIFT)),
    Target("mps2-an385", "Cortex-M3, soft float, MPS2 AN385 FPGA board (emulation only)",
           "cortex-m", "arm-none-eabi-", _M3, "-O2",
           ("-T", "sbfw_cortex_m.ld", *_CM_LD), _MPS2_HAL, "sbfw_cortex_m.ld", "firmware.elf",
           1024, 1024, "instructions", ("qemu-system-arm", "mps2-an385", MPS2_ICOUNT_SHIFT, 0),
           ("qemu",), _SYSTICK.format(MPS2_ICOUNT_SHIFT)),
    Target("nucleo-f4", "Nucleo-64 STM32F401RE/F411RE/F446RE, USART2 = ST-LINK USB serial",
           "cortex-m", "arm-none-eabi-", _M4F, "-O2",
           ("-T", "sbfw_stm32f4.ld", *_CM_LD), _F4_HAL,
           "sbfw_stm32f4.ld", "firmware.elf", 1024, 1024, "cycles",
           ("qemu-system-arm", "netduinoplus2", NETDUINO_ICOUNT_SHIFT, 1), ("qemu",),
           "DWT CYCCNT cycles on the board; " + _SYSTICK.format(NETDUINO_ICOUNT_SHIFT)
           + " in QEMU (DWT reads 0 there)"),
    Target("arduino-uno", "Arduino Uno, ATmega328P at 16 MHz, USART0 = USB serial", "avr", "avr-",
           ("-mmcu=atmega328p", "-DF_CPU=16000000UL"), "-O2", ("-Wl,--gc-sections",),
           ("sbfw_hal_avr.c",), None, "firmware.elf", 256, 160, "cycles",
           ("qemu-system-avr", "arduino-uno", None, 0), ("simavr", "qemu"),
           "Timer1 at clk/1: cycles (exact in simavr; qemu-system-avr is a functional check)"),
    Target("hifive1", "SiFive HiFive1 Rev B, FE310-G002 (RV32IMAC, no FPU), 16 MHz, UART0 = USB",
           "riscv", "riscv64-unknown-elf-", _RV32IMAC, "-O2",
           ("-T", "sbfw_fe310.ld", *_RV_LD), _FE310_HAL, "sbfw_fe310.ld", "firmware.elf",
           1024, 1024, "cycles", ("qemu-system-riscv32", "sifive_e,revb=true", 0, 0),
           ("qemu",), _MINSTRET),
    Target("ch32v003", "WCH CH32V003 (RV32EC, no FPU, 2 KB SRAM, 16 KB flash) at 48 MHz, "
           "USART1", "riscv",
           "riscv64-unknown-elf-", _RV32EC, "-Os", ("-T", "sbfw_ch32v003.ld", *_RV_LD),
           _CH32_HAL, "sbfw_ch32v003.ld", "firmware.elf", 256, 160, "cycles", None, (),
           "SysTick (STK) HCLK cycles on the chip; unicorn-rv32ec instruction counts (core "
           "only)"),
)}
#: Older names, kept working: they resolve to these canonical targets (the same image).
ALIASES = {"cortex-m4f": "mps2-an386", "cortex-m3": "mps2-an385", "avr": "arduino-uno"}
TARGET_NAMES = (*TARGETS, *ALIASES)


def get_target(name: str) -> Target:
    """The target called ``name`` (a canonical name or an alias)."""
    try:
        return TARGETS[ALIASES.get(name, name)]
    except (KeyError, TypeError):
        raise FirmwareGenError(f"target={name!r} is not one of "
                               f"{', '.join(TARGET_NAMES)}") from None


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
        return [str(Path(out_dir) / "sbfw_simavr"), exe, "atmega328p", "16000000"]
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
