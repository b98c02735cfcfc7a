"""Target profiles: the part each firmware target is built for, with its limits and power, and the
datasheet each figure comes from (``sensorbudget targets`` prints them).

The flash and RAM sizes are the build's fit check (:func:`sensorbudget.firmware_gen.build.build`: flash, and
RAM plus ``stack_reserve``, must fit; less than 25 % RAM headroom is a warning). Clock, supply and
currents feed the energy model (:mod:`sensorbudget.device_sim.costs`) of the target actually built. Currents
are typical values at 25 C of the microcontroller alone (a development board's debugger, LEDs and
regulator draw more); check your part.

>>> from firmware_gen.profiles import PROFILES
>>> p = PROFILES["nucleo-f4"]
>>> p.part, p.clock_hz, p.flash_bytes // 1024, p.ram_bytes // 1024
('STM32F401RE', 16000000.0, 512, 96)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

_F401 = ("ST DS10086 (STM32F401xD/E datasheet), features: Run mode 146 uA/MHz with peripherals "
         "off, Stop mode 42 uA typ (Flash in Stop mode, fast wake-up) at 25 C")


@dataclass(frozen=True)
class BoardProfile:
    """One target's part: CPU, clock, memories, supply and currents, with their sources."""

    target: str
    board: str
    cpu: str
    part: str
    clock_hz: float
    flash_bytes: int | None       # None: no limit (the host)
    ram_bytes: int | None
    stack_reserve: int            # bytes of RAM kept free for the stack in the fit check
    supply_v: float
    active_current_a: float
    sleep_current_a: float
    sleep_mode: str
    memory_source: str
    power_source: str
    emulated_by: str = ""
    estimated_power: bool = False

    def as_dict(self) -> dict:
        return asdict(self)


PROFILES = {p.target: p for p in (
    BoardProfile(
        "host", "this computer", "the host CPU", "-", 1e9, None, None, 0, 1.0, 15.0, 2.0,
        "idle", "no limits", "placeholder: a PC has no meaningful per-prediction energy "
        "(15 W active, 2 W idle)", "this computer", estimated_power=True),
    BoardProfile(
        "nucleo-f4", "ST Nucleo-64 (NUCLEO-F401RE; F411RE and F446RE are larger)",
        "Cortex-M4F (FPU, DSP)", "STM32F401RE", 16e6, 512 * 1024, 96 * 1024, 2048, 3.3,
        146e-6 * 16, 42e-6, "Stop (Flash in Stop mode)",
        "ST RM0368 section 2.3 memory map / DS10086 ordering information: 512 KB Flash at "
        "0x08000000, 96 KB SRAM at 0x20000000",
        _F401 + "; 16 MHz HSI x 146 uA/MHz = 2.3 mA (a lower bound: the static current adds "
        "at low clocks)", "QEMU netduinoplus2 (STM32F405)"),
    BoardProfile(
        "arduino-uno", "Arduino Uno R3", "AVR (8-bit, no FPU)", "ATmega328P", 16e6, 32 * 1024 - 512,
        2 * 1024, 256, 5.0, 0.010, 4.2e-6, "Power-down with watchdog",
        "Microchip DS40002061A (ATmega328P) section 8: 32 KB Flash, of which the Uno's optiboot "
        "bootloader keeps the top 0.5 KB; 2 KB SRAM",
        "Microchip DS40002061A DC characteristics: 5.2 mA typ at 8 MHz/5 V, about doubled at "
        "16 MHz per the active-supply-current-vs-frequency figure (~10 mA); power-down with "
        "watchdog 4.2 uA (tabulated at 3 V)", "simavr (cycles), qemu-system-avr arduino-uno"),
    BoardProfile(
        "mps2-an386", "ARM MPS2+ FPGA board, AN386 image (emulation only)",
        "Cortex-M4F (FPU, DSP)", "AN386 FPGA image", 25e6, 4 << 20, 4 << 20, 2048, 3.3,
        146e-6 * 25, 42e-6, "Stop (stand-in)",
        "ARM AN386 application note: 4 MB code SRAM at 0x0, 4 MB data SRAM at 0x20000000 "
        "(QEMU mps2-an386)",
        "no silicon (an FPGA): the STM32F401's " + _F401 + ", at the 25 MHz FPGA clock, as a "
        "stand-in", "QEMU mps2-an386", estimated_power=True),
    BoardProfile(
        "mps2-an385", "ARM MPS2+ FPGA board, AN385 image (emulation only)", "Cortex-M3",
        "AN385 FPGA image", 25e6, 4 << 20, 4 << 20, 2048, 3.3, 0.027 / 72 * 25, 24e-6,
        "Stop (stand-in)",
        "ARM AN385 application note: 4 MB code SRAM at 0x0, 4 MB data SRAM at 0x20000000 "
        "(QEMU mps2-an385)",
        "no silicon (an FPGA): ST DS5319 (STM32F103) Run mode ~27 mA at 72 MHz scaled to the "
        "25 MHz FPGA clock, Stop mode ~24 uA, as a stand-in", "QEMU mps2-an385",
        estimated_power=True),
    BoardProfile(
        "hifive1", "SiFive HiFive1 Rev B", "SiFive E31 (RV32IMAC, no FPU)", "FE310-G002",
        16e6, 4 * 1024 * 1024 - 64 * 1024, 16 * 1024, 2048, 3.3, 0.010, 10e-6,
        "deep sleep (AON domain and PMU on, core off)",
        "SiFive FE310-G002 manual, memory map: 16 KiB data SRAM (DTIM) at 0x80000000, off-chip "
        "QSPI flash mapped at 0x20000000; HiFive1 Rev B schematics / getting-started guide: "
        "32 Mbit (4 MiB) ISSI flash whose first 64 KiB hold the bootloader (programs at "
        "0x20010000)",
        "estimate, not checked against a datasheet table (the FE310-G002 datasheet was not "
        "at hand): ~10 mA at 3.3 V for the core at 16 MHz from HFXOSC with the "
        "QSPI flash in XIP, and ~10 uA for deep sleep (AON block, PMU, 32 kHz LFROSC) are "
        "placeholders to replace with a measurement", "QEMU sifive_e,revb=true",
        estimated_power=True),
    BoardProfile(
        "ch32v003", "any CH32V003 board (e.g. CH32V003F4P6 evaluation board)",
        "WCH QingKe V2A (RV32EC, no FPU)", "CH32V003", 48e6, 16 * 1024, 2 * 1024, 256, 3.3,
        0.005, 10e-6, "standby (AWU on)",
        "WCH CH32V003 datasheet, features / memory map: 16 KB code flash at 0x08000000 "
        "(aliased at 0x0), 2 KB SRAM at 0x20000000",
        "estimate, not checked against a datasheet table: ~5 mA at 48 MHz and ~10 uA standby "
        "at 3.3 V are placeholders to replace with a measurement",
        "nothing (unicorn-rv32ec runs its functions: core only)", estimated_power=True),
)}


def get_profile(target: str) -> BoardProfile:
    """The profile of a canonical target name (see :data:`sensorbudget.firmware_gen.targets.TARGETS`)."""
    return PROFILES[target]


def format_profile(p: BoardProfile) -> str:
    """A few lines describing one profile (``sensorbudget targets``)."""

    def size(n):
        return "no limit" if n is None else f"{n // 1024} KiB ({n} bytes)"

    sleep = f"{p.sleep_current_a * 1e6:.3g} uA" if p.sleep_current_a < 1e-3 else \
        f"{p.sleep_current_a * 1e3:.3g} mA"
    power = "placeholder" if p.target == "host" else \
        f"{p.active_current_a * 1e3:.3g} mA active, {sleep} {p.sleep_mode} at {p.supply_v:g} V"
    return "\n".join([
        f"{p.target}: {p.board}",
        f"  part {p.part}, {p.cpu}, {p.clock_hz / 1e6:g} MHz; runs on {p.emulated_by}",
        f"  flash {size(p.flash_bytes)}, RAM {size(p.ram_bytes)}"
        + (f" ({p.stack_reserve} bytes kept for the stack)" if p.stack_reserve else ""),
        f"  memory: {p.memory_source}",
        f"  power{' (estimated)' if p.estimated_power else ''}: {power}",
        f"  power source: {p.power_source}"])
