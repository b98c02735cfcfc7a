"""``unicorn-rv32``: exact per-call instruction counts of a compiled RV32IMC / RV32IMAC firmware.

The ``hifive1`` firmware (the same ELF QEMU's sifive_e runs) is built, by default for RV32IMC
(``-march=rv32imc``: the ISA of ESP32-C3-class cores, a subset of the FE310's RV32IMAC; the
``unicorn-rv32ec`` spec builds the ``ch32v003`` image, RV32EC, which no emulator here runs), and
its PT_LOAD segments are mapped into a unicorn RV32 core; the firmware's own functions are
called directly, as for ``unicorn-m4f`` (:class:`~sensorbudget.device_sim.backends.unicorn.UnicornBackend`):
``<name>_stream_add`` per sample, ``<name>_stream_compute`` per window (the *extractors* cost)
and the model kernel (the *model* cost). Every executed instruction of those calls is counted by
a code hook (RISC-V has no conditionally skipped instructions, so the hook sees each one once):
the counts are the instructions retired, what ``minstret`` counts on the chip and QEMU
``-icount`` counts in emulation.

These are **core only** figures: instructions of the RV32 core, no caches, flash wait states,
bus or peripherals (an ESP32-C3 runs from a flash cache at 160 MHz; its cycles per instruction
are not modelled). The report turns instructions into time with the profile of the image's
target (hifive1 or ch32v003: one cycle per instruction at its clock); the instruction counts are
the portable figure.
"""

from __future__ import annotations

from sensorbudget.firmware_gen.boards import measurers

from .unicorn import UnicornBackend

STACK_BASE, STACK_SIZE = 0x90000000, 1 << 20   # a region of its own: the part's RAM stays as is
SCRATCH = STACK_BASE + STACK_SIZE - 0x10000    # frame, inputs and scores buffers
STACK_TOP = SCRATCH - 16
STOP = STACK_BASE                              # return address (emulation stops there)


def _marches() -> dict:
    """march -> (firmware target, EXTRA_CFLAGS, backend name), read off the board registry:
    each RISC-V board's own ``-march`` (no extra flags) and the ``march`` of each unicorn
    backend measuring it (RV32IMC and RV32IMAC builds of the hifive1 image; RV32EC is the
    ch32v003 image, its own memory map and HAL, 16 registers)."""
    out = {}
    for name, (board, how) in measurers().items():
        if how.kind != "unicorn" or board.arch != "riscv":
            continue
        own = next(f.split("=", 1)[1] for f in board.arch_flags if f.startswith("-march="))
        march = how.march or own
        out[march] = (board.name, "" if march == own else f"-march={march}", name)
        out.setdefault(own, (board.name, "", name))
    return out


#: march -> (firmware target, EXTRA_CFLAGS, backend name)
MARCHES = _marches()


def _merged_pages(segments, page: int = 0x1000) -> list:
    """[(start, size)] of whole pages covering every (vaddr, memsz, data) segment, overlapping
    or touching spans merged (unicorn maps pages, and a page can be mapped once)."""
    spans = sorted((v & ~(page - 1), -(-(v + n) // page) * page) for v, n, _ in segments)
    merged = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return [(lo, hi - lo) for lo, hi in merged]


class RV32:
    """A unicorn RV32 core holding an ELF's PT_LOAD segments (in page-aligned mappings) and a
    separate stack/scratch region; :meth:`call` runs one function and counts its
    instructions."""

    def __init__(self, elf_path) -> None:
        from elftools.elf.elffile import ELFFile
        from unicorn import UC_ARCH_RISCV, UC_HOOK_CODE, UC_MODE_RISCV32, Uc

        uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV32)
        with open(elf_path, "rb") as fh:
            elf = ELFFile(fh)
            segments = [(s["p_vaddr"], s["p_memsz"], s.data()) for s in elf.iter_segments()
                        if s["p_type"] == "PT_LOAD" and s["p_memsz"]]
            self.symbols = {s.name: s for s in elf.get_section_by_name(".symtab").iter_symbols()
                            if s.name}
        for lo, size in _merged_pages(segments):
            uc.mem_map(lo, size)
        for vaddr, memsz, data in segments:
            uc.mem_write(vaddr, data + bytes(memsz - len(data)))
        uc.mem_map(STACK_BASE, STACK_SIZE)
        self.uc = uc
        self.count = 0
        uc.hook_add(UC_HOOK_CODE, self._on_code)

    def _on_code(self, uc, address, size, data):
        self.count += 1

    def symbol(self, name: str) -> int:
        from ..errors import DeviceError

        sym = self.symbols.get(name)
        if sym is None:
            raise DeviceError(f"the ELF has no symbol {name!r} (firmware_gen changed?)")
        return sym["st_value"]

    def call(self, fn: int, *args: int) -> tuple:
        """(a0, instructions) of a call to the function at ``fn`` with up to four integer
        arguments (a0-a3), on a fresh stack, returning to a stop address; gp is the ELF's."""
        from unicorn.riscv_const import (
            UC_RISCV_REG_A0,
            UC_RISCV_REG_GP,
            UC_RISCV_REG_RA,
            UC_RISCV_REG_SP,
        )

        uc = self.uc
        for i, a in enumerate(args):
            uc.reg_write(UC_RISCV_REG_A0 + i, a)
        gp = self.symbols.get("__global_pointer$")
        if gp is not None:
            uc.reg_write(UC_RISCV_REG_GP, gp["st_value"])
        uc.reg_write(UC_RISCV_REG_SP, STACK_TOP)
        uc.reg_write(UC_RISCV_REG_RA, STOP)
        self.count = 0
        uc.emu_start(fn, STOP, count=50_000_000)
        return uc.reg_read(UC_RISCV_REG_A0), self.count


class UnicornRV32Backend(UnicornBackend):
    """``unicorn-rv32``: the hifive1 firmware built for ``march`` (``rv32imc``, default, or
    ``rv32imac``), or ``unicorn-rv32ec`` (``march="rv32ec"``): the ch32v003 firmware, with its
    functions called in unicorn; instruction counts, core only."""

    name = "unicorn-rv32"
    measured = True
    target = MARCHES["rv32imc"][0]
    profile = target
    scratch = SCRATCH

    def __init__(self, *, model, workdir, firmware_dir=None, march: str = "rv32imc",
                 **_link_options):
        from ..errors import DeviceError

        if march not in MARCHES:
            raise DeviceError(f"march={march!r} is not one of {', '.join(MARCHES)}")
        self.march = march
        self.target, flags, self.name = MARCHES[march]
        self.profile = self.target
        self.make_vars = {"EXTRA_CFLAGS": flags} if flags else None
        self.cost_method = (f"unicorn per-call instruction count of <name>_stream_compute and "
                            f"the model kernel ({march.upper()} ELF, core only: no caches, "
                            f"flash wait states or bus)")
        super().__init__(model=model, workdir=workdir, firmware_dir=firmware_dir)
        if firmware_dir is None:
            self.out_dir = self.out_dir.with_name(f"{self.out_dir.name}-{march}")

    @staticmethod
    def make_cpu(elf_path):
        return RV32(elf_path)
