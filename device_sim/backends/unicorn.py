"""``unicorn-m4f``: exact per-call instruction counts of the compiled Cortex-M4F firmware.

The firmware is built for the board the registry names for ``unicorn-m4f`` (the MPS2 AN386
image, the same ELF ``qemu-m4f`` runs; :func:`sensorbudget.firmware_gen.boards.board_of_backend`).
Its PT_LOAD segments are mapped into a unicorn Cortex-M4 (flash at 0, RAM at 0x20000000, FPU on)
and the firmware's own functions are called directly, as ``main.c`` calls them for every pushed
sample:

- ``<name>_stream_add_rows(&fw_stream, rows, count, &stored)`` on a request's rows, as main.c
  calls it: it stores rows up to one that completes a window (then returns 1), and is called
  again on the rest (an image without it: ``<name>_stream_add(&fw_stream, frame)`` per
  sample). The *pushes* cost of a window: those calls since the previous ready window, the one
  that completed it included (what main.c times);
- ``<name>_stream_compute(&fw_stream)``: every extractor of the window (the *extractors* cost);
- the model kernel (``fw_model``, through ``fw_model_ptr``) on the stream's model inputs (the
  *model* cost).

Every executed instruction of those two calls is counted (a code hook), so the figures are exact
and deterministic per call, with no 40-instruction SysTick granularity. The firmware computes
every extractor of a window in one pass over it (``sensorbudget.firmware_gen.passes_c``: shared loads and
loops), so no instruction belongs to one extractor alone: the report splits the measured
extractor total by the op-count model and says so (``per_extractor`` is None here); fair
per-extractor figures come from firmware built with one extractor at a time
(``benchmarks/device_costs.py``).

Counting: a block hook, not a code hook. unicorn calls it once per translated block it runs,
with the block's address and size; the block's instructions are counted once from their
encodings (16- or 32-bit, :func:`thumb_size`) and cached. A translated block runs whole (it ends
at a branch), so this counts every instruction the core retires, those of IT blocks whose
condition fails (executed as NOPs) included, as QEMU ``-icount`` counts them. A code hook costs a
Python call per instruction (about 150 M an hour for the issue-29 device: 1.5 k samples/s);
the block hook, one per block (a fifth as many), and the cached count. (unicorn's code hook is
moreover not called for a skipped IT-block instruction: the counts it gave were low, e.g. the
float32 extractors of the BasicMotions test bundle (gcc 12.2) are 2042 instructions per call,
where the code-hook calls alone gave 1849 to 1865.)
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from sensorbudget.firmware_gen import q15_c
from sensorbudget.firmware_gen.boards import board_of_backend, measurer

from ..client import SCORE_DTYPES, DeviceInfo
from ..errors import DeviceError
from ..protocol import VERSION
from .base import Backend
from .firmware import build_firmware

# unicorn and elftools (pyelftools) are imported where they are used: they are the optional
# dependency ``sensorbudget[sim]``, and this module is imported with every backend.

FLASH, RAM, SIZE = 0x00000000, 0x20000000, 4 << 20
STOP = FLASH + SIZE - 0x100          # return address (zeros; emulation stops there)
SCRATCH = RAM + SIZE - 0x10000       # frame, inputs and scores buffers
STACK_TOP = SCRATCH - 16
STORED, ROWS = 0x800, 0x1000         # in the scratch: add_rows's *stored, a request's rows


def thumb_size(halfword: int) -> int:
    """Bytes of the Thumb instruction whose first halfword is ``halfword`` (2 or 4)."""
    return 4 if halfword >> 11 in (0b11101, 0b11110, 0b11111) else 2


def block_instructions(code: bytes) -> int:
    """Instructions in a block of Thumb code (each 2 or 4 bytes, by its first halfword)."""
    i = n = 0
    while i + 1 < len(code):
        i += thumb_size(code[i] | code[i + 1] << 8)
        n += 1
    return n


class CortexM4:
    """A unicorn Cortex-M4 (FPU on) holding an ELF's PT_LOAD segments (flash at 0, RAM at
    0x20000000); :meth:`call` runs one of its functions and counts the instructions it executes,
    the instructions of IT blocks whose condition fails included (a block hook: see the module
    docstring)."""

    def __init__(self, elf_path) -> None:
        from elftools.elf.elffile import ELFFile
        from unicorn import UC_ARCH_ARM, UC_HOOK_BLOCK, UC_MODE_MCLASS, UC_MODE_THUMB, Uc
        from unicorn.arm_const import UC_ARM_REG_FPEXC, UC_CPU_ARM_CORTEX_M4

        uc = Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS)
        uc.ctl_set_cpu_model(UC_CPU_ARM_CORTEX_M4)
        uc.mem_map(FLASH, SIZE)
        uc.mem_map(RAM, SIZE)
        with open(elf_path, "rb") as fh:
            elf = ELFFile(fh)
            for seg in elf.iter_segments():
                if seg["p_type"] == "PT_LOAD" and seg["p_memsz"]:
                    data = seg.data()
                    uc.mem_write(seg["p_vaddr"], data + bytes(seg["p_memsz"] - len(data)))
            self.symbols = {s.name: s for s in elf.get_section_by_name(".symtab").iter_symbols()
                            if s.name}
        uc.reg_write(UC_ARM_REG_FPEXC, 0x40000000)
        self.uc = uc
        self.count = 0                   # instructions executed by the current call so far
        self._blocks = {}                # (address, size) -> instructions of that block
        uc.hook_add(UC_HOOK_BLOCK, self._on_block)

    def symbol(self, name: str) -> int:
        sym = self.symbols.get(name)
        if sym is None:
            raise DeviceError(f"the ELF has no symbol {name!r} (firmware_gen changed?)")
        return sym["st_value"]

    def _on_block(self, uc, address, size, data):
        n = self._blocks.get((address, size))
        if n is None:
            n = self._blocks[(address, size)] = block_instructions(bytes(uc.mem_read(address,
                                                                                   size)))
        self.count += n

    def call(self, fn: int, *args: int) -> tuple:
        """(r0, instructions) of a call to the Thumb function at ``fn`` with up to four integer
        arguments (r0-r3), on a fresh stack, returning to a stop address."""
        from unicorn.arm_const import UC_ARM_REG_LR, UC_ARM_REG_R0, UC_ARM_REG_SP

        uc = self.uc
        for i, a in enumerate(args):
            uc.reg_write(UC_ARM_REG_R0 + i, a)
        uc.reg_write(UC_ARM_REG_SP, STACK_TOP)
        uc.reg_write(UC_ARM_REG_LR, STOP | 1)
        self.count = 0
        uc.emu_start(fn | 1, STOP, count=50_000_000)
        return uc.reg_read(UC_ARM_REG_R0), self.count


class UnicornBackend(Backend):
    name = "unicorn-m4f"
    measured = True
    cost_method = measurer(name).method
    target = board_of_backend(name).name    # the firmware target whose ELF is loaded
    profile = target                        # the costed board (make_backend's board=)
    scratch = SCRATCH            # frame, inputs and scores buffers in the emulated memory

    def __init__(self, *, model, workdir, firmware_dir=None, **_link_options):
        self.model = model
        self.out_dir = (Path(firmware_dir) if firmware_dir else
                        Path(workdir) / f"fw-{self.target}-{model.numeric}")
        self.uc = self.cpu = None
        self.last = None

    # -- setup -------------------------------------------------------------------------------
    def open(self) -> DeviceInfo:
        fw = build_firmware(self.model, self.target, self.out_dir, make_vars=self.make_vars)
        self.fw_name = fw["name"]
        self._load(self.out_dir / "firmware.elf")
        m = self.model
        return DeviceInfo(VERSION, m.numeric, m.k, m.t, len(m.channels), m.window, m.hop,
                          fw["name"], tuple(getattr(m, "sensors", ())))

    def _load(self, elf_path) -> None:
        self.cpu = self.make_cpu(elf_path)
        self.uc, self.symbols = self.cpu.uc, self.cpu.symbols
        symbols = self.symbols
        p = self.fw_name
        if getattr(self.model, "multi_rate", False):
            self._load_multirate(p)
            return
        rows = f"{p}_stream_add_rows"
        self.fn = {"reset": self._sym(f"{p}_stream_reset"),
                   **({"add_rows": self._sym(rows)} if rows in symbols else
                      {"add": self._sym(f"{p}_stream_add")}),
                   "compute": self._sym(f"{p}_stream_compute"), "model": self._model_fn()}
        self.stream = self._sym("fw_stream")
        self._layout(symbols["fw_stream"]["st_size"], symbols["fw_scores"]["st_size"])

    make_vars = None             # Makefile variables of the build (build_firmware)

    def _load_multirate(self, p: str) -> None:
        """A multi-rate image: main.c's ``fw_event`` (through ``fw_event_ptr``: one event into
        ``<p>_mr_push``; on a ready window its count, the model inputs in ``fw_inputs``) and the
        model kernel on ``fw_inputs``."""
        m = self.model
        self.fn = {"reset": self._sym(f"{p}_mr_reset"), "event": self._pointer("fw_event_ptr"),
                   "model": self._model_fn()}
        self.stream = self._sym("fw_stream")
        self.inputs = self._sym("fw_inputs")
        self.input_dtype = np.dtype({"float32": "<f4", "q15": "<i2", "q31": "<i4"}[m.numeric])
        self.score_dtype = np.dtype(SCORE_DTYPES[m.numeric] if m.numeric == "float32" else
                                    {"q15": "<i2", "q31": "<i4"}[m.numeric])
        size = self.symbols["fw_scores"]["st_size"]
        if size != self.score_dtype.itemsize * m.t:
            raise DeviceError(f"fw_scores has {size} bytes; expected {m.t} scores of "
                              f"{self.score_dtype.itemsize} (firmware_gen changed?)")

    def _pointer(self, name: str) -> int:
        return struct.unpack("<I", self.uc.mem_read(self._sym(name), 4))[0]

    def _completes_group(self, sensor: int, i: int) -> bool:
        """Sample ``i`` of ``sensor`` completes a window of one of its groups (main.c's
        ``fw_completes_group``)."""
        return any(g.sensor == sensor and i % g.factor == 0
                   and (i // g.factor + 1 - g.plan.window) >= 0
                   and (i // g.factor + 1 - g.plan.window) % g.plan.hop == 0
                   for g in self.model.plan.groups)

    def push_events(self, events) -> list:
        """Answers of a PUSH_EVENTS request's events ((count, bytes): sensor u8 and its values
        each), one ``fw_event`` call per event; a window's extractor cost is the sum of the
        calls that completed a group's window since the last ready one (as main.c times
        them), the kernel call its model cost."""
        m = self.model
        count, data = events
        size = m.sample_dtype.itemsize
        out, pos = [], 0
        for _ in range(count):
            sensor = data[pos]
            n = 1 + m.sensors[sensor].channels * size
            self.uc.mem_write(self.scratch, bytes(data[pos + 1:pos + n]))
            pos += n
            completes = self._completes_group(sensor, self.seen[sensor])
            self.seen[sensor] += 1
            ready, cost = self._call(self.fn["event"], sensor, self.scratch)
            if completes:
                self.pending += cost
            else:
                self.pending_pushes += cost
            ready = ready - (1 << 32) if ready >= 1 << 31 else ready
            if ready <= 0:
                continue
            ext, pushes, self.pending, self.pending_pushes = (self.pending,
                                                              self.pending_pushes, 0, 0)
            _, model = self._call(self.fn["model"], self.inputs, self.scratch + 0x400)
            raw = bytes(self.uc.mem_read(self.scratch + 0x400, self.score_dtype.itemsize * m.t))
            scores = np.frombuffer(raw, self.score_dtype).astype(SCORE_DTYPES[m.numeric])
            out.append((ready - 1, scores))
            self.last = (ext, model, pushes)
        return out

    @staticmethod
    def make_cpu(elf_path):
        return CortexM4(elf_path)

    def _sym(self, name: str) -> int:
        return self.cpu.symbol(name)

    def _model_fn(self) -> int:
        ptr = self.symbols.get("fw_model_ptr")
        if ptr is not None:
            return struct.unpack("<I", self.uc.mem_read(ptr["st_value"], 4))[0]
        return self._sym("fw_model")

    def _layout(self, stream_size: int, scores_size: int) -> None:
        """Offsets in ``<name>_stream_t`` (buf, pos, n_seen, next_end, windows, features,
        [inputs]) and the score type; checked against the symbol sizes."""
        m = self.model
        sample = m.sample_dtype.itemsize
        head = -(-m.window * len(m.channels) * sample // 4) * 4
        self.windows_at = self.stream + head + 12
        self.features = self.stream + head + 16
        in_dtype = {"float32": "<f4", "q15": "<i2", "q31": "<i4"}[m.numeric]
        self.input_dtype = np.dtype(in_dtype)
        self.inputs = self.features + (0 if m.numeric == "float32" else 4 * m.k)
        size = head + 16 + 4 * m.k + (0 if m.numeric == "float32" else
                                       self.input_dtype.itemsize * m.k)
        cache = q15_c.cache_bytes(m.plan)      # the Q15 magnitude cache follows, 4-aligned
        size = -(-size // 4) * 4 + cache if cache else size
        if -(-size // 4) * 4 != stream_size:
            raise DeviceError(f"fw_stream has {stream_size} bytes; the expected layout has "
                              f"{size} (firmware_gen changed its stream struct?)")
        self.score_dtype = np.dtype({4: "<f4", 2: "<i2", 8: "<i8"}.get(scores_size // m.t)
                                    if m.numeric == "float32" else
                                    {2: "<i2", 4: "<i4", 8: "<i8"}[scores_size // m.t])

    # -- execution ---------------------------------------------------------------------------
    def _call(self, fn: int, *args) -> tuple:
        """(r0, instructions) of a call to ``fn`` with integer arguments."""
        return self.cpu.call(fn, *args)

    def reset(self) -> None:
        self._call(self.fn["reset"], self.stream)
        self.seen = [0] * len(getattr(self.model, "sensors", ()))   # multi-rate: per sensor
        self.pending = self.pending_pushes = 0

    def push(self, samples) -> list:
        """[(window, scores)] of a request's rows: stored as main.c stores them (module
        notes), each completed window's extractors and model run."""
        m = self.model
        samples = np.ascontiguousarray(samples, dtype=m.sample_dtype)
        if "add_rows" not in self.fn:           # an image before the rows function
            return [w for row in samples for w in self._store(row[None, :])]
        return self._store(samples)

    def _store(self, rows) -> list:
        """Store ``rows`` (one call per completed window and one for the rest; one row per
        call for an image without the rows function) and compute each completed window."""
        out, left, at, stored_at = [], len(rows), self.scratch + ROWS, self.scratch + STORED
        self.uc.mem_write(at, rows.tobytes())
        while left:
            if "add_rows" in self.fn:
                done, cost = self._call(self.fn["add_rows"], self.stream, at, left, stored_at)
                stored = struct.unpack("<I", self.uc.mem_read(stored_at, 4))[0]
            else:
                (done, cost), stored = self._call(self.fn["add"], self.stream, at), 1
            self.pending_pushes += cost
            at, left = at + stored * rows.strides[0], left - stored
            if done:
                pushes, self.pending_pushes = self.pending_pushes, 0
                out.append(self._window(pushes))
        return out

    def _window(self, pushes) -> tuple:
        """(window, scores) of the window the last stored row completed: its extractors and
        model run (their instructions and the pushes are the last STATS)."""
        m = self.model
        _, ext = self._call(self.fn["compute"], self.stream)
        inputs = bytes(self.uc.mem_read(self.inputs, self.input_dtype.itemsize * m.k))
        self.uc.mem_write(self.scratch + 0x100, inputs)
        _, model = self._call(self.fn["model"], self.scratch + 0x100, self.scratch + 0x400)
        raw = bytes(self.uc.mem_read(self.scratch + 0x400, self.score_dtype.itemsize * m.t))
        (windows,) = struct.unpack("<I", self.uc.mem_read(self.windows_at, 4))
        scores = np.frombuffer(raw, self.score_dtype).astype(SCORE_DTYPES[m.numeric])
        self.last = (ext, model, pushes)
        return windows - 1, scores

    def stats(self):
        """(unit, extractors, model, pushes) of the last ready window, or None."""
        return None if self.last is None else ("instructions", *self.last)

    def close(self) -> None:
        self.uc = self.cpu = None
