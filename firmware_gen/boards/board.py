"""The typed board: :class:`Board` (one per board of the registry), how its image is flashed
(:class:`Flashing`) and which backends measure it (:class:`Measurer`)."""

from __future__ import annotations

from dataclasses import dataclass

#: compiler flags every target builds with (the part's own flags are ``Board.arch_flags``)
WARNINGS = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wdouble-promotion",
            "-Wconversion")
#: -ffp-contract=off: never fuse a*b+c (float32 must round the product); -fno-math-errno lets
#: sqrtf be one instruction where the FPU has it (errno is never read).
FP_FLAGS = ("-ffp-contract=off", "-fno-math-errno")
SIZE_FLAGS = ("-ffunction-sections", "-fdata-sections")
#: architectures (``Board.arch``): a board's C layout, HAL family and flashing follow from it
ARCHES = ("host", "cortex-m", "avr", "riscv")


@dataclass(frozen=True)
class Measurer:
    """A backend (``sensorbudget simulate --backend NAME``) that measures a board's image.

    ``kind``: ``"firmware"`` runs the whole image as a process (host, QEMU, simavr) and speaks
    the protocol to it; ``"unicorn"`` calls the image's functions in unicorn (core only).
    ``emulator`` is one of the board's ``emulators`` (firmware kind) or ``"unicorn"``;
    ``method`` says how it counts (the report's ``cost.method``); ``timeout_s`` is the default
    answer timeout; ``march`` the ``-march`` a unicorn build overrides ("" keeps the board's);
    ``tools`` the executables it needs besides the board's compiler.
    """

    name: str
    kind: str
    emulator: str
    method: str
    timeout_s: float = 5.0
    march: str = ""
    tools: tuple = ()


@dataclass(frozen=True)
class Flashing:
    """How a built image gets onto the board (:mod:`sensorbudget.firmware_gen.flash`).

    ``kind``: ``"avrdude"`` (serial bootloader), ``"cortex-m"`` (ST-LINK drive, st-flash,
    pyocd, OpenOCD), ``"riscv"`` (J-Link drive, OpenOCD, J-Link Commander), ``"manual"`` (a
    part sensorbudget does not flash: ``note`` says how), ``"none"`` (emulation only or the
    host: ``note`` says how to run it). ``tools``: the programmers it accepts.
    """

    kind: str
    tools: tuple = ()
    chip: str = ""             # avrdude part / pyocd target
    openocd_config: str = ""   # OpenOCD board script
    base: int = 0              # flash base address (st-flash writes the .bin there)
    jlink_device: str = ""
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class Board:
    """One board: the part and its limits, power with the source of every figure, toolchain,
    HAL templates, emulator, flashing and the backends that measure it.

    Currents are typical values at 25 C of the microcontroller alone (a development board's
    debugger, LEDs and regulator draw more). A source is a document and its table or section,
    or ``"estimate: <why>"``; ``estimated_power`` is True when either current is one.
    """

    name: str
    aliases: tuple = ()
    description: str            # one line (the firmware manifest's target_description)
    board: str                  # the product
    part: str
    cpu: str
    ops: str                    # op-count class of the estimates (device_sim.costs)
    clock_hz: float
    flash_bytes: int | None     # None: no limit (the host)
    ram_bytes: int | None
    stack_reserve: int          # bytes of RAM kept free for the stack in the fit check
    memory_source: str
    supply_v: float
    active_current_a: float
    active_source: str
    sleep_current_a: float
    sleep_mode: str
    sleep_source: str
    estimated_power: bool
    arch: str                   # one of ARCHES
    prefix: str                 # toolchain prefix ("" for the host)
    arch_flags: tuple
    opt: str
    ld_flags: tuple
    hal: tuple                  # static runtime files (templates/) besides the protocol
    linker_script: str | None
    exe: str
    rx_payload: int             # payload bytes a request / an answer may carry
    tx_payload: int
    cost_unit: str              # what the image's own counter counts on the board
    counter: str                # how it counts (reports, docs)
    runtime_ram: int | None     # static RAM of the runtime besides the plan (memory.py)
    libm_errno_ram: int = 0     # soft-float libm's errno data, when sqrtf pulls it in
    qemu: tuple | None = None   # (qemu-system binary, machine, -icount shift, serial index)
    emulators: tuple = ()       # ways of running the image here (first: the default)
    emulated_by: str = ""
    flashing: Flashing
    measured_by: tuple = ()     # Measurer, ...

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
    def cflags(self) -> tuple:
        return (*WARNINGS, self.opt, *FP_FLAGS, *self.arch_flags,
                *(SIZE_FLAGS if self.mcu else ()))

    @property
    def profile(self) -> Board:
        """The board itself (its part, limits and power: what ``Target.profile`` was)."""
        return self

    @property
    def target(self) -> str:
        """The board's name (the firmware target ``--target`` builds)."""
        return self.name

    @property
    def power_source(self) -> str:
        return f"active: {self.active_source}; sleep: {self.sleep_source}"

    @property
    def backends(self) -> tuple:
        """Names of the backends that measure this board's image."""
        return tuple(m.name for m in self.measured_by)

    def as_dict(self) -> dict:
        """The part, limits, power and sources as plain JSON values (``targets --json``)."""
        keys = ("board", "cpu", "part", "clock_hz", "flash_bytes", "ram_bytes",
                "stack_reserve", "supply_v", "active_current_a", "active_source",
                "sleep_current_a", "sleep_mode", "sleep_source", "memory_source",
                "emulated_by", "estimated_power")
        out = {k: getattr(self, k) for k in keys}
        out.update(target=self.name, power_source=self.power_source,
                   backends=list(self.backends), flash_tools=list(self.flashing.tools))
        return out
