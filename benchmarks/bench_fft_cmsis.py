"""Our power spectra's FFTs beside Arm CMSIS-DSP's real FFTs, in instructions (issue 29).

Usage: python benchmarks/bench_fft_cmsis.py [--work DIR] [--sizes 64 128 256 512] [--before REV]

CMSIS-DSP (Apache-2.0) is not vendored: its source distribution is downloaded with pip
(``pip download --no-binary cmsisdsp --no-deps cmsisdsp``; ``--no-binary :all:`` would also
build the build dependencies from source) into a temporary directory, and its
``arm_rfft_fast_f32`` and ``arm_rfft_q15`` (with their complex FFTs, bit reversal and tables)
are compiled with the flags of our firmware (``sensorbudget.firmware_gen.targets``: ``-O2
-ffp-contract=off -fno-math-errno`` and the target's ``-mcpu``/FPU flags, without our warning
flags) for the Cortex-M4F (``mps2-an386``) and the Cortex-M3 (``mps2-an385``, soft float). The
sdist has no CMSIS-Core, so a small ``cmsis_compiler.h`` maps the DSP intrinsics CMSIS uses
(``__SSAT``, ``__QADD16``, ``__SMUAD`` ...) to GCC's ACLE (``arm_acle.h``) or one instruction
each: the M4F runs CMSIS's SIMD paths.

Ours are the texts the firmware compiles: ``firmware_gen.fft_c``'s float32 ``power_spectrum``
and ``firmware_gen.fft_q15_c``'s ``power_spectrum_q15`` (on the M4F its DSP-extension
butterflies), counted in parts: the window copy (a ring-buffer loop, as the stream's series
copy), the preparation (padding, mean, Hann, bit-reversed scatter of the sample pairs), the
butterflies of the N/2-point complex FFT (``FFT``) and the split into the real window's
spectrum with the power (``split+P``); the Hann part alone is (preparation) - (preparation with
a rectangular window). Each part is a copy of the routine cut after it, so the parts add up to
the whole. ``+split`` (FFT + split + power) is what compares with CMSIS's real FFT, which
includes its split (not the power). ``--before REV`` adds the float32 transform of a commit
(its C and its Python reference read with ``git show``), measured in the same run on the same
windows: before this work, Q15 firmware computed its spectra with it, in float32.

Counting: each function is called in unicorn (``device_sim.backends.unicorn.CortexM4``, the
``unicorn-m4f`` backend's counter: every retired instruction, those of IT blocks included; the
same counts as QEMU ``-icount``, ``tests/device_sim/test_backends.py``). Checks: our spectra
equal their references (``trainer.sensing.spectral.power_spectrum``, ``spectral_q15.
power_spectrum_q15``) bit for bit on a seeded random window, and CMSIS's outputs equal numpy's
``rfft`` (float32: relative error < 1e-4; Q15: < 2 % of the largest bin after its documented
down-scaling). AVR cycles (no CMSIS port): ``benchmarks/fft_avr.py``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np

import fft_avr  # benchmarks/ (this script's directory) is on sys.path

TARGETS = {"M4F": "mps2-an386", "M3": "mps2-an385"}
CMSIS_SOURCES = [
    "TransformFunctions/arm_rfft_fast_f32.c", "TransformFunctions/arm_rfft_fast_init_f32.c",
    "TransformFunctions/arm_cfft_f32.c", "TransformFunctions/arm_cfft_init_f32.c",
    "TransformFunctions/arm_cfft_radix8_f32.c", "TransformFunctions/arm_bitreversal2.c",
    "TransformFunctions/arm_rfft_q15.c", "TransformFunctions/arm_rfft_init_q15.c",
    "TransformFunctions/arm_cfft_q15.c", "TransformFunctions/arm_cfft_init_q15.c",
    "TransformFunctions/arm_cfft_radix4_q15.c", "TransformFunctions/arm_bitreversal.c",
    "CommonTables/arm_common_tables.c", "CommonTables/arm_const_structs.c",
    "BasicMathFunctions/arm_shift_q15.c",
]

# Our stand-in for CMSIS-Core's cmsis_compiler.h: only what the FFT sources use.
CMSIS_COMPILER_H = r"""
#ifndef SB_CMSIS_COMPILER_H
#define SB_CMSIS_COMPILER_H
#include <stdint.h>
#include <arm_acle.h>
#define __ASM __asm
#define __INLINE inline
#define __STATIC_INLINE static inline
#define __STATIC_FORCEINLINE static inline __attribute__((always_inline))
#define __ALIGNED(x) __attribute__((aligned(x)))
#define __WEAK __attribute__((weak))
#define __PACKED __attribute__((packed))
#define __RESTRICT __restrict
#define __SSAT(x, y) __ssat((x), (y))
#define __USAT(x, y) __usat((x), (y))
#define __CLZ(x) ((uint8_t)__builtin_clz(x))
static inline uint32_t __ROR(uint32_t x, uint32_t n)
{ n %= 32u; return n == 0u ? x : (x >> n) | (x << (32u - n)); }
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define __QADD16(a, b) ((uint32_t)__qadd16((int16x2_t)(a), (int16x2_t)(b)))
#define __QSUB16(a, b) ((uint32_t)__qsub16((int16x2_t)(a), (int16x2_t)(b)))
#define __SHADD16(a, b) ((uint32_t)__shadd16((int16x2_t)(a), (int16x2_t)(b)))
#define __SHSUB16(a, b) ((uint32_t)__shsub16((int16x2_t)(a), (int16x2_t)(b)))
#define __QASX(a, b) ((uint32_t)__qasx((int16x2_t)(a), (int16x2_t)(b)))
#define __QSAX(a, b) ((uint32_t)__qsax((int16x2_t)(a), (int16x2_t)(b)))
#define __SHASX(a, b) ((uint32_t)__shasx((int16x2_t)(a), (int16x2_t)(b)))
#define __SHSAX(a, b) ((uint32_t)__shsax((int16x2_t)(a), (int16x2_t)(b)))
#define __QADD8(a, b) ((uint32_t)__qadd8((int8x4_t)(a), (int8x4_t)(b)))
#define __QSUB8(a, b) ((uint32_t)__qsub8((int8x4_t)(a), (int8x4_t)(b)))
#define __SMUAD(a, b) ((uint32_t)__smuad((int16x2_t)(a), (int16x2_t)(b)))
#define __SMUADX(a, b) ((uint32_t)__smuadx((int16x2_t)(a), (int16x2_t)(b)))
#define __SMUSD(a, b) ((uint32_t)__smusd((int16x2_t)(a), (int16x2_t)(b)))
#define __SMUSDX(a, b) ((uint32_t)__smusdx((int16x2_t)(a), (int16x2_t)(b)))
#define __SMLAD(a, b, c) ((uint32_t)__smlad((int16x2_t)(a), (int16x2_t)(b), (int32_t)(c)))
#define __SMLADX(a, b, c) ((uint32_t)__smladx((int16x2_t)(a), (int16x2_t)(b), (int32_t)(c)))
#define __SMLSDX(a, b, c) ((uint32_t)__smlsdx((int16x2_t)(a), (int16x2_t)(b), (int32_t)(c)))
#define __SMLALD(a, b, c) ((uint64_t)__smlald((int16x2_t)(a), (int16x2_t)(b), (int64_t)(c)))
#define __SMLALDX(a, b, c) ((uint64_t)__smlaldx((int16x2_t)(a), (int16x2_t)(b), (int64_t)(c)))
#define __SXTB16(x) ((uint32_t)__sxtb16((int8x4_t)(x)))
#define __QADD(a, b) __qadd((a), (b))
#define __QSUB(a, b) __qsub((a), (b))
static inline int32_t __SMMLA(int32_t a, int32_t b, int32_t c)
{ int32_t r; __asm("smmla %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
#define __PKHBT(a, b, s) \
    ((uint32_t)(((uint32_t)(a) & 0xFFFFu) | (((uint32_t)(b) << (s)) & 0xFFFF0000u)))
#define __PKHTB(a, b, s) \
    ((uint32_t)(((uint32_t)(a) & 0xFFFF0000u) | (((uint32_t)(b) >> (s)) & 0xFFFFu)))
#endif
#endif
"""


def _flash(text: str) -> str:
    """A table in flash on AVR (SB_CONST), as fft_c.tables declares them."""
    return text.replace("static const ", "static const SB_CONST ", 1)


def fetch_cmsis(work: Path) -> Path:
    """Download and unpack the cmsisdsp sdist; returns its Source/.. directory."""
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", "cmsisdsp",
                           "--no-deps", "cmsisdsp", "-d", str(work)], capture_output=True,
                          text=True)
    sdists = sorted(work.glob("cmsisdsp-*.tar.gz"))
    if done.returncode != 0 or not sdists:
        raise SystemExit(f"pip download cmsisdsp failed:\n{done.stdout[-800:]}{done.stderr[-800:]}")
    with tarfile.open(sdists[-1]) as tar:
        tar.extractall(work, filter="data")
    root = work / sdists[-1].name[:-len(".tar.gz")]
    (work / "shim").mkdir(exist_ok=True)
    (work / "shim" / "cmsis_compiler.h").write_text(CMSIS_COMPILER_H)
    return root


def our_source(sizes, avr: bool = False) -> str:
    """Our routine (firmware_gen's text), its cut copies, tables and per-N entry points
    (``avr``: tables in flash with the firmware's SB_CONST macros, buffers of max(sizes))."""
    from sensorbudget.export import cgen
    from sensorbudget.firmware_gen import fft_c, kernel_c, shape_c
    from sensorbudget.trainer.sensing import spectral

    spectrum = fft_c.routine("spectrum", "sb")
    scatter_end, fft_end = "#if defined(__AVR__)  ", "#endif\n    /* the split"
    assert scatter_end in spectrum and fft_end in spectrum
    cuts = {"prep": spectrum.replace(scatter_end, "    return;\n" + scatter_end, 1),
            "upto_fft": spectrum.replace(fft_end, "#endif\n    return;\n" + fft_end[7:], 1)}
    macros = ([kernel_c._FLASH_MACROS] if avr else
              ["#define SB_CONST", "#define SB_READ_F32(p) (*(p))",
               "#define SB_READ_I16(p) (*(p))"])
    out = ["#include <stdint.h>", "#include <string.h>", "#include <math.h>", *macros,
           shape_c.ROUTINES["mean"][1]("sb"), spectrum]
    flash = _flash if avr else (lambda text: text)
    buf = max(sizes)
    for name, text in cuts.items():
        text = text.replace("sb_power_spectrum(", f"sb_ps_{name}(", 1)
        out.append(text.replace("static void", "static void __attribute__((unused))", 1))
    out.append(f"float sb_x[{buf}], sb_re[{buf}], sb_im[{buf}];" + (
        "\n#define sb_ring sb_re  /* AVR RAM: the copy reads the window from re */" if avr
        else f"\nfloat sb_ring[{buf}];"))
    for n in sizes:
        m = spectral.fft_size(n)
        wr, wi = spectral.twiddles(m)
        out += [flash(cgen.array_declare("uint16_t", f"sb_rev_{m}",        # as fft_c.tables
                                         spectral.bit_reverse(m // 2))),
                flash(cgen.array_declare("float", f"sb_twr_{m}", wr)),
                flash(cgen.array_declare("float", f"sb_twi_{m}", wi)),
                flash(cgen.array_declare("float", f"sb_hann_{n}", spectral.hann(n)))]
        args = f"sb_x, {n}u, @H@, {m}u, sb_rev_{m}, sb_twr_{m}, sb_twi_{m}, sb_re, sb_im"
        for name, fn, hann in (("full", "sb_power_spectrum", True), ("prep", "sb_ps_prep", True),
                               ("prep_rect", "sb_ps_prep", False),
                               ("upto_fft", "sb_ps_upto_fft", True)):
            call = args.replace("@H@", f"sb_hann_{n}" if hann else "0")
            out.append(f"void __attribute__((noinline)) ours_{name}_{n}(void)\n"
                       f"{{\n    {fn}({call});\n}}")
        out.append(f"void __attribute__((noinline)) ours_copy_{n}(unsigned start)\n{{\n"
                   f"    unsigned i, j = start;\n    for (i = 0u; i < {n}u; ++i) {{\n"
                   f"        sb_x[i] = sb_ring[j];\n        if (++j == {n}u) {{\n"
                   f"            j = 0u;\n        }}\n    }}\n}}")
    return "\n\n".join(out) + "\n"



def load_before(rev: str) -> dict:
    """The float32 transform of commit ``rev``: its C routine (firmware_gen/fft_c.py) and its
    Python reference (trainer/sensing/spectral.py), read with ``git show``."""
    def module(path):
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], check=True,
                              capture_output=True, text=True).stdout
        namespace = {"__name__": f"before_{Path(path).stem}"}
        exec(compile(text, f"{rev}:{path}", "exec"), namespace)     # our own repository
        return namespace

    spectral = module("trainer/sensing/spectral.py")
    return {"rev": rev, "routine": module("firmware_gen/fft_c.py")["ROUTINES"]["spectrum"][1],
            "reference": spectral["power_spectrum"]}


def before_source(before: dict, sizes, avr: bool = False) -> str:
    """The ``before`` routine (prefix ``sbb``), cut after its preparation and its butterflies,
    with the tables it was generated with (float32 of numpy's cos / -sin; in flash on AVR) and
    entry points ``before_<part>_<n>`` on our buffers (to follow :func:`our_source`)."""
    from sensorbudget.export import cgen
    from sensorbudget.firmware_gen import shape_c
    from sensorbudget.trainer.sensing import spectral

    flash = _flash if avr else (lambda text: text)

    text = before["routine"].replace("@p@", "sbb")
    starts = [mark for mark in ("    for (half = 1u;", "    len = 1u;") if mark in text]
    out = [shape_c.ROUTINES["mean"][1]("sbb"), text]
    for name, cut in (("prep", starts[0]), ("upto_fft", "    /* the split")):
        part = text.replace(cut, "    return;\n" + cut, 1)
        part = part.replace("sbb_power_spectrum(", f"sbb_ps_{name}(", 1)
        out.append(part.replace("static void", "static void __attribute__((unused))", 1))
    for n in sizes:
        m = spectral.fft_size(n)
        j = np.arange(m // 2)
        out += [flash(cgen.array_declare("uint16_t", f"sbb_rev_{m}",
                                         spectral.bit_reverse(m // 2))),
                flash(cgen.array_declare("float", f"sbb_twr_{m}",
                                         np.cos(2 * np.pi * j / m).astype(np.float32))),
                flash(cgen.array_declare("float", f"sbb_twi_{m}",
                                         (-np.sin(2 * np.pi * j / m)).astype(np.float32)))]
        args = f"sb_x, {n}u, @H@, {m}u, sbb_rev_{m}, sbb_twr_{m}, sbb_twi_{m}, sb_re, sb_im"
        for name, fn, hann in (("full", "sbb_power_spectrum", True),
                               ("prep", "sbb_ps_prep", True), ("prep_rect", "sbb_ps_prep", False),
                               ("upto_fft", "sbb_ps_upto_fft", True)):
            call = args.replace("@H@", f"sb_hann_{n}" if hann else "0")
            out.append(f"void __attribute__((noinline)) before_{name}_{n}(void)\n"
                       f"{{\n    {fn}({call});\n}}")
        out.append(f"void before_copy_{n}(unsigned start) {{ ours_copy_{n}(start); }}")
    return "\n\n".join(out) + "\n"


def our_q15_source(sizes, avr: bool = False) -> str:
    """Our Q15 routine (firmware_gen.fft_q15_c's text), its cut copies, tables and entry points
    (buffers of max(sizes): the window, the interleaved complex values, the power; the copy's
    ring is the complex values)."""
    from sensorbudget.firmware_gen import fft_q15_c, kernel_c
    from sensorbudget.trainer.sensing import spectral

    text = fft_q15_c.routine("sb")
    scatter_end, fft_end = "    len = 1u;", "    /* the split"
    assert scatter_end in text and fft_end in text
    out = ["#include <stdint.h>\n#include <string.h>", kernel_c._FLASH_MACROS] if avr else []
    head = text[:text.index("/* Power spectrum of the Q15")]    # the butterflies' macros
    func = text[len(head):text.index("#undef SB_QBF1")]
    out += [head, func]
    for name, cut in (("prep", scatter_end), ("upto_fft", fft_end)):
        part = func.replace(cut, "    return;\n" + cut, 1)
        part = part.replace("sb_power_spectrum_q15(", f"sb_pq_{name}(", 1)
        out.append(part.replace("static void", "static void __attribute__((unused))", 1))
    out.append(text[len(head) + len(func):])
    buf = spectral.fft_size(max(sizes))
    out.append(f"int16_t sb_qx[{buf}], sb_qbuf[{buf}];\nuint32_t sb_qP[{buf // 2 + 1}];\n"
               f"#define sb_qring sb_qbuf")
    for n in sizes:
        m = spectral.fft_size(n)
        out += fft_q15_c.tables("sb", m, [n])
        args = f"sb_qx, {n}u, @H@, {m}u, sb_qrev_{m}, sb_qtwr_{m}, sb_qtwi_{m}, sb_qbuf, sb_qP"
        for name, fn, hann in (("full", "sb_power_spectrum_q15", True),
                               ("prep", "sb_pq_prep", True), ("prep_rect", "sb_pq_prep", False),
                               ("upto_fft", "sb_pq_upto_fft", True)):
            call = args.replace("@H@", f"sb_qhann_{n}" if hann else "0")
            out.append(f"void __attribute__((noinline)) ours_q15_{name}_{n}(void)\n"
                       f"{{\n    {fn}({call});\n}}")
        out.append(f"void __attribute__((noinline)) ours_q15_copy_{n}(unsigned start)\n{{\n"
                   f"    unsigned i, j = start;\n    for (i = 0u; i < {n}u; ++i) {{\n"
                   f"        sb_qx[i] = sb_qring[j];\n        if (++j == {n}u) {{\n"
                   f"            j = 0u;\n        }}\n    }}\n}}")
    return "\n\n".join(out) + "\n"

HARNESS = r"""
#include "arm_math.h"
float32_t cm_in_f[512], cm_out_f[512];
q15_t cm_in_q[512], cm_out_q[1024];
static arm_rfft_fast_instance_f32 cm_f;
static arm_rfft_instance_q15 cm_q;
int cm_init_f32(int n) { return (int)arm_rfft_fast_init_f32(&cm_f, (uint16_t)n); }
void __attribute__((noinline)) cm_run_f32(void) { arm_rfft_fast_f32(&cm_f, cm_in_f, cm_out_f, 0); }
int cm_init_q15(int n) { return (int)arm_rfft_init_q15(&cm_q, (uint32_t)n, 0u, 1u); }
void __attribute__((noinline)) cm_run_q15(void) { arm_rfft_q15(&cm_q, cm_in_q, cm_out_q); }
void Reset_Handler(void) { }
"""


def build(root: Path, work: Path, key: str, sizes, before: dict | None) -> Path:
    from sensorbudget.firmware_gen.targets import WARNINGS, get_target

    target = get_target(TARGETS[key])
    flags = [f for f in target.cflags if f not in WARNINGS]
    out = work / key
    out.mkdir(exist_ok=True)
    (out / "ours.c").write_text(our_source(sizes) + our_q15_source(sizes)
                                + (before_source(before, sizes) if before else ""))
    (out / "harness.c").write_text(HARNESS)
    ld = ROOT / "firmware_gen" / "templates" / "sbfw_cortex_m.ld"
    src = [str(root / "Source" / s) for s in CMSIS_SOURCES]
    cmd = ["arm-none-eabi-gcc", "-std=c99", *flags, "-ffunction-sections", "-fdata-sections",
           f"-I{root / 'Include'}", f"-I{root / 'PrivateInclude'}", f"-I{work / 'shim'}",
           str(out / "harness.c"), str(out / "ours.c"), *src, "-T", str(ld), "-nostartfiles",
           "-specs=nano.specs", "-specs=nosys.specs", "-lm",
           "-o", str(out / "fft.elf")]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"building the {key} FFT harness failed:\n{done.stderr[-2000:]}")
    return out / "fft.elf"


def put(cpu, name, values):
    cpu.uc.mem_write(cpu.symbol(name), np.ascontiguousarray(values).tobytes())


def get(cpu, name, dtype, n):
    return np.frombuffer(bytes(cpu.uc.mem_read(cpu.symbol(name), n * np.dtype(dtype).itemsize)),
                         dtype)


def measure(elf: Path, n: int, rng, before: dict | None) -> dict:
    from sensorbudget.device_sim.backends.unicorn import CortexM4
    from sensorbudget.trainer.sensing import spectral, spectral_q15

    cpu = CortexM4(elf)
    x = rng.normal(size=n).astype(np.float32)
    call = lambda fn, *a: cpu.call(cpu.symbol(fn), *a)[1]      # noqa: E731
    # CMSIS float32 (the input is overwritten: written before each call)
    assert call("cm_init_f32", n) == call("cm_init_f32", n)       # init is not timed
    assert cpu.call(cpu.symbol("cm_init_f32"), n)[0] == 0
    put(cpu, "cm_in_f", x)
    f32 = call("cm_run_f32")
    got = get(cpu, "cm_out_f", np.float32, n)
    ref = np.fft.rfft(x.astype(np.float64))
    want = np.concatenate([[ref[0].real, ref[-1].real],
                           np.column_stack([ref[1:-1].real, ref[1:-1].imag]).ravel()])
    f32_ok = np.max(np.abs(got - want)) < 1e-4 * np.max(np.abs(want))
    # CMSIS Q15
    assert cpu.call(cpu.symbol("cm_init_q15"), n)[0] == 0
    q = np.clip(np.round(x / 4 * 32768), -32768, 32767).astype(np.int16)
    put(cpu, "cm_in_q", q)
    q15 = call("cm_run_q15")
    gq = get(cpu, "cm_out_q", np.int16, n + 2).astype(np.float64)
    rq = np.fft.rfft(q.astype(np.float64))
    cq = gq[0::2] + 1j * gq[1::2]
    scale = np.vdot(cq, rq).real / max(np.vdot(cq, cq).real, 1e-30)     # its down-scaling
    q15_ok = np.max(np.abs(cq * scale - rq)) < 0.02 * np.max(np.abs(rq))
    # ours, in parts
    put(cpu, "sb_ring", np.roll(x, 3))
    copy = call(f"ours_copy_{n}", 3)            # ring[3 + i] = x[i]
    assert np.array_equal(get(cpu, "sb_x", np.float32, n), x)
    parts = {name: call(f"ours_{name}_{n}") for name in ("prep", "prep_rect", "upto_fft")}
    full = call(f"ours_full_{n}")
    P = get(cpu, "sb_re", np.float32, n // 2 + 1)
    exact = np.array_equal(P.view(np.uint32),
                           spectral.power_spectrum(x[:, None])[:, 0].view(np.uint32))
    was = None
    if before:       # the same window through the transform of before["rev"]
        put(cpu, "sb_x", x)
        bparts = {name: call(f"before_{name}_{n}") for name in ("prep", "upto_fft", "full")}
        bP = get(cpu, "sb_re", np.float32, n // 2 + 1)
        was = {"fft": bparts["upto_fft"] - bparts["prep"],
               "power": bparts["full"] - bparts["upto_fft"],
               "exact": np.array_equal(bP.view(np.uint32), before["reference"](
                   x[:, None])[:, 0].view(np.uint32))}
    # ours in Q15, on CMSIS's Q15 input
    put(cpu, "sb_qbuf", np.roll(q, 3))
    qcopy = call(f"ours_q15_copy_{n}", 3)
    assert np.array_equal(get(cpu, "sb_qx", np.int16, n), q)
    qparts = {name: call(f"ours_q15_{name}_{n}") for name in ("prep", "prep_rect", "upto_fft")}
    qfull = call(f"ours_q15_full_{n}")
    qP = get(cpu, "sb_qP", np.uint32, n // 2 + 1).astype(np.int64)
    qexact = np.array_equal(qP, spectral_q15.power_spectrum_q15(q[:, None])[:, 0])
    return {"cmsis_f32": f32, "cmsis_q15": q15, "copy": copy, "prep": parts["prep"],
            "hann": parts["prep"] - parts["prep_rect"], "fft": parts["upto_fft"] - parts["prep"],
            "power": full - parts["upto_fft"], "full": full, "exact": exact,
            "cmsis_ok": bool(f32_ok and q15_ok), "before": was,
            "q15": {"copy": qcopy, "prep": qparts["prep"],
                    "hann": qparts["prep"] - qparts["prep_rect"],
                    "fft": qparts["upto_fft"] - qparts["prep"],
                    "power": qfull - qparts["upto_fft"], "full": qfull, "exact": qexact}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256, 512])
    ap.add_argument("--before", default=None, metavar="REV",
                    help="also measure the float32 transform of this commit (its C and its "
                         "reference, from git): the 'before' columns")
    args = ap.parse_args()
    before = load_before(args.before) if args.before else None
    with tempfile.TemporaryDirectory(prefix="bench-fft-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        root = fetch_cmsis(work)
        print(f"CMSIS-DSP: {root.name} (pip sdist); instructions per call (unicorn, = QEMU "
              f"-icount); ours = firmware_gen.fft_c / fft_q15_c power spectra in parts")
        print("FFT: our N/2-point butterflies; +split: with the split and the power, as "
              "CMSIS's real FFTs include their split (not the power)")
        if before:
            print(f"before: the float32 transform of {before['rev']} (FFT+split+power / CMSIS; "
                  f"then Q15 firmware computed its spectra with it, in float32)")
        ok = True
        rows = {}
        for key in TARGETS:
            elf = build(root, work, key, args.sizes, before)
            for n in args.sizes:
                rows[key, n] = measure(elf, n, np.random.default_rng(n), before)
                ok &= rows[key, n]["cmsis_ok"]
        for title, cm, sub in (("float32", "cmsis_f32", None), ("Q15", "cmsis_q15", "q15")):
            print(f"\n{title}: {'core':4} {'N':>4} {'CMSIS rfft':>10} {'FFT':>7} {'/CMSIS':>6} "
                  f"{'+split':>7} {'/CMSIS':>6} {'before':>7} {'copy':>6} {'prep':>6} "
                  f"{'(Hann)':>7} {'split+P':>7} {'all':>7}  checks")
            for (key, n), row in rows.items():
                r = row if sub is None else row[sub]
                ok &= r["exact"]
                both = r["fft"] + r["power"]
                was = row["before"]
                then = (f"{(was['fft'] + was['power']) / row[cm]:6.2f}x"
                        + ("" if was["exact"] else "!")) if was else f"{'-':>7}"
                print(f"{'':{len(title) + 1}} {key:4} {n:4d} {row[cm]:10d} {r['fft']:7d} "
                      f"{r['fft'] / row[cm]:5.2f}x {both:7d} {both / row[cm]:5.2f}x {then} "
                      f"{r['copy']:6d} {r['prep']:6d} {r['hann']:7d} {r['power']:7d} "
                      f"{r['copy'] + r['full']:7d}  "
                      f"{'bit-exact' if r['exact'] else 'NOT bit-exact'} vs reference, CMSIS "
                      f"{'= numpy' if row['cmsis_ok'] else 'WRONG'}", flush=True)
        ok &= fft_avr.report(work, args.sizes, our_source, our_q15_source, before and (
            lambda sizes, avr: our_source(sizes, avr) + before_source(before, sizes, avr),
            before["reference"], before["rev"]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
