"""Per-prediction extractor cost where it is paid, beside a per-core lower bound (issue 28, item 5).

Usage: python benchmarks/bench_issue28.py [--recordings N] [--runs simavr:q15,...] [--profile]
[--per-extractor] [--sqrt] [--before REV]

The bundle is the issue's: six features (``leg_acc.mag_mean``, ``leg_horiz_fwd.mean``,
``ankle_vert.min``, ``leg_horiz_lateral.ptp``, ``ankle_horiz_lateral.rms``,
``leg_horiz_fwd.last``) of the synthetic 9-channel 64 Hz stream (window 64, hop 32;
``tests/firmware_gen/generative.py``: the stream writer and ``issue_case``), fitted by greedy RLS.
Each run is ``simulate`` itself (the Python API) on simavr (Uno, Q15: cycles) or
qemu-m4f / unicorn-m4f (Cortex-M4F, float32 and Q15: instructions), with a report folder. The
per-prediction figures are that report.json's: ``cost.pushes`` + ``cost.extractors`` (medians
over the predictions after the first of each recording: a steady prediction) and
``cost.first_window`` (pushes of a whole window + the pass, the first prediction after a
reset, with the Q15 magnitude cache filled).

The check: the ELF that ``simulate`` built is loaded again, function by function
(``avr_fncycles.c`` on libsimavr for the AVR, :class:`~sensorbudget.device_sim.backends.unicorn.
CortexM4` for the M4F), and the same recordings are stored as ``main.c`` stores the replay's
requests: blocks of at most one request's rows that end where a window completes, one
``<name>_stream_add_rows`` call each (the *pushes*; an image without it: ``<name>_stream_add``
per sample), then ``<name>_stream_compute`` when a window completed (the *pass*). Per
prediction, report minus calls is 0 on unicorn (the same calls) and a constant on simavr and
QEMU (the firmware's timer read and call set-up in each timed region): printed, and asserted
constant.

Lower bound, per core, per prediction: per-sample loads and arithmetic of each extractor over
the window (or over the ``hop`` new samples where the firmware keeps a running cache), plus a
per-window epilogue, plus the push: each used channel's sample stored into its ring buffer per
new sample. Branches, loop control, call overhead and the window bookkeeping are left out.

- Cortex-M4F (instructions): :mod:`device_costs`'s counts (float32 mean 2, min 4, ptp 7, rms 2,
  magnitude 8 per sample of the window, last 1 per window; Q15 mean 2, min 3, ptp 5, rms 2 +
  10 per window, magnitude 17 per new sample + 2 per window, last 4 per window); push 2 (ldr,
  str) per used channel per new sample.
- ATmega328P (cycles; ``device_costs.AVR_Q15``; 2-cycle loads and stores, 1-cycle 8-bit ALU ops,
  2-cycle multiplies, 3-cycle ``lpm``), Q15, from these building blocks: load of an int16 (2
  ``ld``) 4, store 4; add of a sign-extended int16 to an int32 7 (4 add/adc + 3 for the sign
  byte); 16-bit compare 2, 16-bit move (``movw``) 1; signed 16x16->32 multiply 16 (4
  ``mul``/``muls``/``mulsu`` = 8, 6 add/adc of the cross products, 2 ``movw``); add of an int32
  to an int64 11 (8 add/adc + 3); 32-bit add 4; integer square root of a 32-bit value 68 (the
  firmware's table method without normalising: 2 table words by ``lpm`` 12, the interpolation
  multiply 16, the two floor checks ``r*r > v`` and ``(r+1)^2 <= v`` 2 x (16 + 4); the AVR build
  uses this table method with byte-wise normalising and an 8 x 8 interpolation,
  ``<P>_ISQRT_BYTES``; before issue 28 it used the bit-by-bit root). Per sample of the window:
  ``mean`` 11 (load + add), ``min`` 7 (load, compare, move), ``ptp`` 10 (load, two compares
  and moves), ``rms`` 31 (load, square, int64 add); per window: ``rms`` 132 (the int64 sum
  shifted by 6: 6 x 8 shifts 48, the root 68, the scale multiply 16), ``last`` 8 (load,
  store), ``mag_mean`` 24 (the int32 running sum shifted by 6); per new sample: ``mag_mean`` 144
  (3 loads 12, 3 squares 48, 2 int32 adds 8, the root 68, the cache update: old value loaded,
  subtracted, new added and stored 16); push 8 per used channel.

``--profile`` adds, per run, where the time of one steady prediction goes: per function, the
cycles (simavr) or instructions (unicorn) of the pushes and the pass.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
RUNS = (("simavr", "q15"), ("qemu-m4f", "float32"), ("unicorn-m4f", "float32"),
        ("qemu-m4f", "q15"), ("unicorn-m4f", "q15"))
#: the issue's targets: steady prediction / lower bound
TARGET_RATIO = {("avr", "q15"): 1.5, ("m4f", "float32"): 1.25}
CORE = {"simavr": "avr", "qemu-m4f": "m4f", "unicorn-m4f": "m4f"}


def lower_bound(core: str, numeric: str, kinds, n_channels: int, window: int, new: int) -> int:
    """Loads + arithmetic of one prediction whose window has ``new`` samples not seen by the
    previous one (``hop``; ``window`` for the first): sum over the extractor kinds of per-sample
    x window + per-new x new + per-window (``device_costs.bound_table``), plus the push of
    ``n_channels`` used channels x new."""
    import device_costs

    t = device_costs.bound_table(core, numeric)
    if t is None:
        raise ValueError(f"no {core} lower bound for {numeric}")
    return int(sum(device_costs.lower_bound(k, numeric, core, window, new) for k in kinds)
               + t["push"] * n_channels * new)


# -- the bundle and its stream --------------------------------------------------------------
def issue_bundle(work: Path, n_recordings: int):
    """(bundle folder, recordings folder, channel arrays, full scales) of the issue's bundle."""
    from sensorbudget.device_sim.reference import ReferenceModel
    from tests.firmware_gen import gen_runner, generative

    rec = generative.write_recordings(work / "recordings", 2026, n_recordings=n_recordings)
    case = generative.issue_case()
    generative.case_bundle(case, generative.feature_set(case, rec, work), work / "bundle")
    data = gen_runner.recordings_arrays(rec)
    from sensorbudget.trainer.bundle.model import load_bundle

    plan = ReferenceModel(load_bundle(work / "bundle"), "float32").plan
    return work / "bundle", rec, data, gen_runner.full_scale(case, plan.channels, data)


# -- function-by-function callers ------------------------------------------------------------
def _symbols(elf_path: Path) -> dict:
    from elftools.elf.elffile import ELFFile

    with open(elf_path, "rb") as fh:
        tab = ELFFile(fh).get_section_by_name(".symtab")
        return {s.name: (s["st_value"], s["st_size"], s["st_info"]["type"])
                for s in tab.iter_symbols() if s.name}


class AvrCaller:
    """Calls of one AVR ELF's functions in libsimavr (``avr_fncycles``), cycles per call."""

    def __init__(self, elf: Path, exe: Path):
        self.sym = _symbols(elf)
        self.proc = subprocess.Popen([str(exe), str(elf), f"{self.sym['main'][0]:x}"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def data(self, name: str) -> int:
        return self.sym[name][0] & 0xFFFF           # data space is 0x800000 in the ELF

    def write(self, addr: int, raw: bytes) -> None:
        self.proc.stdin.write(f"w {addr:x} {raw.hex()}\n")

    def call(self, fn: str, a0: int = 0, a1: int = 0, a2: int = 0, a3: int = 0) -> tuple:
        self.proc.stdin.write(f"c {self.sym[fn][0]:x} {a0:x} {a1:x} {a2:x} {a3:x}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        while not line[:1].isdigit():                # simavr's own messages ("Loaded ...")
            if not line:
                raise RuntimeError("avr_fncycles ended")
            line = self.proc.stdout.readline()
        r, cycles = line.split()
        return int(r), int(cycles)

    def read(self, addr: int, n: int) -> bytes:
        self.proc.stdin.write(f"r {addr:x} {n:x}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        while line.startswith("Loaded") or not line.strip() and n:
            line = self.proc.stdout.readline()
        return bytes.fromhex(line.strip())

    def profile(self) -> Counter:
        """Cycles per function since the last call of this method."""
        self.proc.stdin.write("p\n")
        self.proc.stdin.flush()
        funcs = sorted((v, s, n) for n, (v, s, t) in self.sym.items()
                       if t in ("STT_FUNC", "STT_NOTYPE") and v < 0x800000)
        out = Counter()
        for line in iter(self.proc.stdout.readline, ".\n"):
            pc, cycles = (int(x, 16) if i == 0 else int(x) for i, x in enumerate(line.split()))
            out[_owner(funcs, pc)] += cycles
        return out

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


class M4Caller:
    """Calls of one Cortex-M4F ELF's functions in unicorn, instructions per call."""

    def __init__(self, elf: Path):
        from sensorbudget.device_sim.backends.unicorn import CortexM4, block_instructions

        self.cpu = CortexM4(elf)
        self.sym = {n: (v, s, t) for n, (v, s, t) in _symbols(elf).items()}
        self._per_block = Counter()
        self._size = block_instructions
        self.cpu.uc.hook_add(__import__("unicorn").UC_HOOK_BLOCK, self._on_block)

    def _on_block(self, uc, address, size, data):
        self._per_block[address] += self.cpu._blocks.get((address, size), 0)

    def data(self, name: str) -> int:
        return self.sym[name][0]

    def write(self, addr: int, raw: bytes) -> None:
        self.cpu.uc.mem_write(addr, raw)

    def call(self, fn: str, a0: int = 0, a1: int = 0, a2: int = 0, a3: int = 0) -> tuple:
        return self.cpu.call(self.sym[fn][0] & ~1, a0, a1, a2, a3)

    def read(self, addr: int, n: int) -> bytes:
        return bytes(self.cpu.uc.mem_read(addr, n))

    def profile(self) -> Counter:
        funcs = sorted(((v & ~1), s, n) for n, (v, s, t) in self.sym.items()
                       if t == "STT_FUNC")
        out = Counter()
        for addr, n in self._per_block.items():
            out[_owner(funcs, addr)] += n
        self._per_block.clear()
        return out

    def close(self) -> None:
        pass


def _owner(funcs, addr: int) -> str:
    """The function holding ``addr``; else the nearest function symbol below it (libgcc's
    helpers have no size), marked with a ``?``."""
    below = None
    for start, size, name in funcs:
        if start <= addr < start + max(size, 1):
            return name
        if start <= addr:
            below = name
    return f"{below}?" if below else f"0x{addr:x}"


def paid(caller, prefix: str, samples: list, profile: bool, window: int, hop: int,
         chunk: int | None = None) -> tuple:
    """Per recording, per prediction: (pushes since the previous window, pass, timed push
    calls), the rows stored as main.c stores a replay's requests (module notes; ``chunk``: rows
    per request, None: a window's new rows in one); and the per-function profile of the second
    prediction of the first recording."""
    rows_fn, add = f"{prefix}_stream_add_rows", f"{prefix}_stream_add"
    compute, reset = f"{prefix}_stream_compute", f"{prefix}_stream_reset"
    batched = rows_fn in caller.sym
    stream, scratch = caller.data("fw_stream"), caller.data("fw_rx")
    out, prof = [], None
    for rec_i, rec in enumerate(samples):
        caller.call(reset, stream)
        rows, pushes, pos, end, calls = [], 0, 0, window, 0
        while pos < len(rec):
            stop = min(end, len(rec), pos + (chunk or len(rec)))
            block = np.ascontiguousarray(rec[pos:stop])
            stored_at = scratch + -(-block.nbytes // 4) * 4
            if batched:
                caller.write(scratch, block.tobytes())
                done, n = caller.call(rows_fn, stream, scratch, len(block), stored_at)
                stored = int.from_bytes(caller.read(stored_at, 2), "little")
                assert stored == len(block), (stored, len(block))
            else:
                done, n = 0, 0
                for row in block:
                    caller.write(scratch, row.tobytes())
                    d, c = caller.call(add, stream, scratch)
                    done, n = done or d, n + c
            pushes, pos, calls = pushes + n, stop, calls + 1
            if stop == end:
                end += hop
            if done:
                rows.append((pushes, caller.call(compute, stream)[1], calls))
                pushes = calls = 0
                if profile and rec_i == 0 and len(rows) == 2:
                    prof = caller.profile()
                elif profile and rec_i == 0 and len(rows) == 1:
                    caller.profile()                     # drop the first window's
        out.append(rows)
    return out, prof


def request_rows(backend: str, elf: Path, model) -> int:
    """Rows of one PUSH_SAMPLES request in ``simulate``'s replay of ``backend``: what one
    request of the backend's size carries (the firmware's receive payload, firmware.json;
    unicorn: the host's default request size)."""
    from sensorbudget.device_sim.backends.base import Backend
    from sensorbudget.device_sim.client import DeviceInfo

    size = Backend.max_request
    if not backend.startswith("unicorn"):
        size = json.loads((elf.parent / "firmware.json").read_text())["max_request_payload"]
    info = DeviceInfo(2, model.numeric, model.k, model.t, len(model.channels), model.window,
                      model.hop, "")
    return info.max_push(size)


# -- one run -----------------------------------------------------------------------------------
def one_run(backend: str, numeric: str, bundle: Path, rec: Path, data, scales, work: Path,
            harness, profile: bool) -> dict:
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.device_sim.simulate import simulate
    from sensorbudget.firmware_gen import reference
    from sensorbudget.trainer.bundle.model import load_bundle
    from tests.firmware_gen import generative

    fs = None if numeric == "float32" else scales
    run_dir = work / f"{backend}-{numeric}"
    _, result = simulate(bundle, rec, backend=backend, numeric=numeric, full_scale=fs,
                         workdir=run_dir / "sim", report_dir=run_dir / "report", bench=False)
    rep = json.loads((run_dir / "report" / "report.json").read_text())
    elf = next((run_dir / "sim").rglob("firmware.elf"))
    model = ReferenceModel(load_bundle(bundle), numeric, full_scale=fs)
    plan = model.plan
    cols = [[d[:, generative.CHANNELS.index(c)] for c in plan.channels] for d in data]
    samples = [reference.quantize_samples(plan, np.column_stack(c)) if plan.fixed
               else np.column_stack(c).astype("<f4") for c in cols]
    caller = AvrCaller(elf, harness) if CORE[backend] == "avr" else M4Caller(elf)
    try:
        per_rec, prof = paid(caller, plan.name, samples, profile, plan.window, plan.hop,
                             request_rows(backend, elf, model))
    finally:
        caller.close()
    # the report's predictions, in replay order (one recording after another), and the calls'
    recs = [r for r in result.records if r.extractors is not None]
    assert len(recs) == sum(len(r) for r in per_rec), (len(recs), [len(r) for r in per_rec])
    cost = rep["cost"]
    got = np.array([(r.pushes, r.extractors) for r in recs], dtype=float)
    calls = np.array([c[:2] for rows in per_rec for c in rows], dtype=float)
    timed = np.array([[c[2], 1] for rows in per_rec for c in rows], dtype=float)
    offset = (got - calls) / timed
    # the firmware's own count (Timer1 / SysTick / unicorn) and the function calls' differ by a
    # constant per timed call (its timer read and call set-up), never by the data
    assert (offset.max(axis=0) == offset.min(axis=0)).all(), (backend, numeric, offset)
    first = np.cumsum([0] + [len(r) for r in per_rec[:-1]])
    kinds = sorted({e.kind for e in plan.extractors})
    core = CORE[backend]
    return {"backend": backend, "numeric": numeric, "unit": cost["unit"],
            "push_steady": cost["pushes"]["median"], "pass_report": cost["extractors"]["median"],
            "first_report": cost["first_window"]["median"],
            "predictions": cost["predictions"],
            "push_first": float(np.median(got[first, 0])),
            "pass_first_report": float(np.median(got[first, 1])),
            "offset_pushes": float(offset[0, 0]), "offset_pass": float(offset[0, 1]),
            "push_calls": float(np.median(timed[:, 0])),
            "bound": lower_bound(core, numeric, kinds, len(plan.channels), plan.window, plan.hop),
            "bound_first": lower_bound(core, numeric, kinds, len(plan.channels), plan.window,
                                       plan.window),
            "target": TARGET_RATIO.get((core, numeric)), "profile": prof, "kinds": kinds,
            "channels": len(plan.channels)}


PER_EXTRACTOR = (("avr", "avr", "q15"), ("m4f", "cortex-m4f", "float32"),
                 ("m4f", "cortex-m4f", "q15"))


def _plans(bundle, scales, harness):
    """(core, target, numeric, plan) of the bundle per :data:`PER_EXTRACTOR` row (AVR only with
    the simavr harness)."""
    from sensorbudget.firmware_gen.plan import make_plan

    for core, target, numeric in PER_EXTRACTOR:
        if core != "avr" or harness is not None:
            yield core, target, numeric, make_plan(
                bundle, name="sbmodel", numeric=numeric,
                full_scale=None if numeric == "float32" else scales)


def per_extractor(work: Path, bundle_dir: Path, data, scales, harness) -> list:
    """Per core and numeric format, the firmware built with one extractor of the plan at a time
    (``dataclasses.replace`` on the plan, as ``device_costs.py`` does), with none and with all:
    the steady pushes and pass per prediction, by function calls; rows (core, numeric, label,
    kind, pushes, pass, bound of the kind's pass)."""
    import dataclasses

    from sensorbudget.firmware_gen import generate_firmware, reference
    from sensorbudget.firmware_gen.build import build, write_firmware
    from sensorbudget.trainer.bundle.model import load_bundle
    from tests.firmware_gen import generative

    bundle = load_bundle(bundle_dir)
    rows = []
    for core, target, numeric, plan in _plans(bundle, scales, harness):
        cols = [np.column_stack([d[:, generative.CHANNELS.index(c)] for c in plan.channels])
                for d in data]
        samples = [reference.quantize_samples(plan, c) if plan.fixed else c.astype("<f4")
                   for c in cols]
        subsets = [("all six", None, plan.extractors), ("(empty)", None, ())]
        subsets += [(f"{e.kind}({','.join(plan.channels[c] for c in e.channels)})", e.kind,
                     (e,)) for e in plan.extractors]
        for i, (label, kind, exts) in enumerate(subsets):
            sub = dataclasses.replace(plan, extractors=tuple(exts))
            fw = generate_firmware(bundle, target=target, numeric=numeric, name="sbmodel",
                                   plan=sub)
            out = write_firmware(fw, work / f"pe-{core}-{numeric}-{i}")
            build(out)
            elf = out / "firmware.elf"
            caller = AvrCaller(elf, harness) if core == "avr" else M4Caller(elf)
            try:
                per_rec, _ = paid(caller, "sbmodel", samples, False, plan.window, plan.hop)
            finally:
                caller.close()
            steady = [r for rows_ in per_rec for r in rows_[1:]]
            bound = (lower_bound(core, numeric, [kind], 0, plan.window, plan.hop)
                     if kind else None)
            rows.append((core, numeric, label, kind, float(np.median([r[0] for r in steady])),
                         float(np.median([r[1] for r in steady])), bound))
    print("\nper extractor (steady prediction; each firmware built with that extractor only, "
          "the empty firmware's pass taken off; bound = that kind's loads + arithmetic)")
    print("| core | numeric | extractor | pushes | pass | pass - empty | bound | ratio |\n"
          "|---|---|---|---|---|---|---|---|")
    empty = {(c, n): ps for c, n, lab, _, _, ps, _ in rows if lab == "(empty)"}
    for core, numeric, label, kind, push, ps, bound in rows:
        net = ps - empty[(core, numeric)]
        ratio = f"{net / bound:.2f}" if bound else "-"
        print(f"| {core} | {numeric} | {label} | {push:.0f} | {ps:.0f} | "
              f"{net:.0f} | {bound if bound else '-'} | {ratio} |")
    return rows


def table_sqrt(work: Path, bundle_dir: Path, data, scales, harness):
    """AVR Q15 built as simulate builds it (the byte-normalised table root,
    ``<P>_ISQRT_BYTES``), with the 32-bit cores' table root (``-DSBMODEL_ISQRT_BYTES=0
    -DSBMODEL_ISQRT_TABLE=1``) and with the bit-by-bit root (``-DSBMODEL_ISQRT_BYTES=0``, the
    AVR default before issue 28): the stream state after every recording (features included)
    must be equal; prints the steady pass of each."""
    from sensorbudget.firmware_gen import generate_firmware, reference
    from sensorbudget.firmware_gen.build import build, write_firmware
    from sensorbudget.firmware_gen.plan import make_plan
    from sensorbudget.trainer.bundle.model import load_bundle
    from tests.firmware_gen import generative

    if harness is None:
        return None
    bundle = load_bundle(bundle_dir)
    plan = make_plan(bundle, name="sbmodel", numeric="q15", full_scale=scales)
    samples = [reference.quantize_samples(plan, np.column_stack(
        [d[:, generative.CHANNELS.index(c)] for c in plan.channels])) for d in data]
    out = {}
    for label, flags in (("byte table (default)", ""),
                         ("32-bit table", "-DSBMODEL_ISQRT_BYTES=0 -DSBMODEL_ISQRT_TABLE=1"),
                         ("bit-by-bit", "-DSBMODEL_ISQRT_BYTES=0")):
        fw_dir = write_firmware(generate_firmware(bundle, target="avr", numeric="q15",
                                                  name="sbmodel", plan=plan),
                                work / f"sqrt-{len(out)}")
        build(fw_dir, make_vars={"EXTRA_CFLAGS": flags} if flags else None)
        caller = AvrCaller(fw_dir / "firmware.elf", harness)
        try:
            per_rec, _ = paid(caller, "sbmodel", samples, False, plan.window, plan.hop)
            state = caller.read(caller.data("fw_stream"), caller.sym["fw_stream"][1])
        finally:
            caller.close()
        out[label] = (float(np.median([r[1] for rows in per_rec for r in rows[1:]])), state)
    states = {v[1] for v in out.values()}
    assert len(states) == 1, "a root changed the stream state"
    print("\nexperiment: AVR Q15 integer square root (steady pass, cycles; same stream state)")
    for label, (cost, _) in out.items():
        print(f"  {label:22s} {cost:.0f}")
    return out


def print_rows(rows) -> None:
    print("\nissue-28 bundle, per prediction, as simulate's report.json gives it: steady = "
          "cost.pushes + cost.extractors (medians over the predictions after each recording's "
          "first), first = cost.first_window (a whole window's pushes + the pass); bound = "
          "per-core loads + arithmetic (bench_issue28.py docstring); report - calls = the "
          "report's pushes and pass minus the function-by-function calls', per timed call "
          "(constant over every prediction: asserted)")
    head = ("backend", "numeric", "unit", "pushes", "pass", "steady total", "bound", "ratio",
            "target", "first window", "first bound", "first ratio",
            "report - calls per timed call (pushes, pass)")
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for r in rows:
        steady = r["push_steady"] + r["pass_report"]
        first = r["first_report"]
        tgt = "-" if r["target"] is None else (
            f"<= {r['target']} " + ("held" if steady / r["bound"] <= r["target"] else "MISSED"))
        print(f"| {r['backend']} | {r['numeric']} | {r['unit']} | {r['push_steady']:.0f} | "
              f"{r['pass_report']:.0f} | {steady:.0f} | {r['bound']} | "
              f"{steady / r['bound']:.2f} | {tgt} | {first:.0f} | {r['bound_first']} | "
              f"{first / r['bound_first']:.2f} | {r['offset_pushes']:.0f}, "
              f"{r['offset_pass']:.0f} |")
    for r in rows:
        if r["profile"]:
            total = sum(r["profile"].values())
            print(f"\nwhere one steady prediction's {total} {r['unit']} go ({r['backend']} "
                  f"{r['numeric']}, pushes + pass by function calls):")
            for name, n in r["profile"].most_common(12):
                print(f"  {name:40s} {n:8d}  {100 * n / total:5.1f}%")


def before_rows(rev: str, args) -> list:
    """The rows of this benchmark at git revision ``rev``: its tree (``git archive``) in a
    temporary folder, run there with the same runs and recordings (its own ``sensorbudget``
    first on the path, so the generator of ``rev`` emits the C)."""
    with tempfile.TemporaryDirectory(prefix="bench-issue28-before-") as tmp:
        tree = Path(tmp) / "tree"
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        out = Path(tmp) / "rows.json"
        cmd = [sys.executable, str(tree / "benchmarks" / "bench_issue28.py"), "--recordings",
               str(args.recordings), "--json", str(out)]
        if args.runs:
            cmd += ["--runs", args.runs]
        subprocess.run(cmd, cwd=tree, check=True, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())


def print_before_after(rev: str, before: list, after: list) -> None:
    """Per run, the steady prediction (pushes + pass) and its ratio to the bound at ``rev``
    and now, side by side (same bundle, recordings and bound)."""
    print(f"\nbefore ({rev}) / after (this tree), one run: steady prediction = pushes + pass "
          "(simulate's report), ratio to the same bound")
    head = ("backend", "numeric", "unit", "bound", "pushes before", "pushes after",
            "pass before", "pass after", "total before", "total after", "ratio before",
            "ratio after", "target")
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    old = {(r["backend"], r["numeric"]): r for r in before}
    for r in after:
        b = old.get((r["backend"], r["numeric"]))
        if b is None:
            continue
        tb, ta = b["push_steady"] + b["pass_report"], r["push_steady"] + r["pass_report"]
        tgt = "-" if r["target"] is None else (
            f"<= {r['target']} " + ("held" if ta / r["bound"] <= r["target"] else "MISSED"))
        print(f"| {r['backend']} | {r['numeric']} | {r['unit']} | {r['bound']} | "
              f"{b['push_steady']:.0f} | {r['push_steady']:.0f} | {b['pass_report']:.0f} | "
              f"{r['pass_report']:.0f} | {tb:.0f} | {ta:.0f} | {tb / b['bound']:.2f} | "
              f"{ta / r['bound']:.2f} | {tgt} |")


def main(argv=None) -> list:
    from sensorbudget.device_sim.backends import available_backends

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recordings", type=int, default=2, help="synthetic recordings (420 "
                    "samples, 12 predictions each)")
    ap.add_argument("--runs", default="", help="comma-separated backend:numeric (default all)")
    ap.add_argument("--profile", action="store_true", help="per-function counts per run")
    ap.add_argument("--per-extractor", action="store_true",
                    help="also each extractor alone, per core (function calls, no simulate)")
    ap.add_argument("--sqrt", action="store_true",
                    help="also the experiment: the AVR Q15 integer square roots side by side")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    ap.add_argument("--before", metavar="REV", help="also run this benchmark as it was at git "
                    "revision REV (its tree from git archive; same runs and recordings) and "
                    "print its ratios beside these")
    args = ap.parse_args(argv)
    wanted = [tuple(r.split(":")) for r in args.runs.split(",") if r] or list(RUNS)
    usable = available_backends()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-issue28-") as tmp:
        work = Path(tmp)
        bundle, rec, data, scales = issue_bundle(work, args.recordings)
        harness = None
        for backend, numeric in wanted:
            if usable.get(backend) is not None:
                print(f"skip {backend}: {usable[backend]}", file=sys.stderr)
                continue
            if CORE[backend] == "avr" and harness is None:
                cc = shutil.which("gcc")
                harness = work / "avr_fncycles"
                subprocess.run([cc, "-std=gnu99", "-O2", "-Wall", "-Wextra", "-Werror",
                                str(HERE / "avr_fncycles.c"), "-o", str(harness), "-lsimavr"],
                               check=True)
            rows.append(one_run(backend, numeric, bundle, rec, data, scales, work, harness,
                                args.profile))
        print_rows(rows)
        if args.per_extractor:
            per_extractor(work, bundle, data, scales, harness)
        if args.sqrt:
            table_sqrt(work, bundle, data, scales, harness)
    if args.before:
        print_before_after(args.before, before_rows(args.before, args), rows)
    if args.json:
        args.json.write_text(json.dumps([{k: v for k, v in r.items() if k != "profile"}
                                         for r in rows], indent=1, sort_keys=True))
    return rows


if __name__ == "__main__":
    main()
