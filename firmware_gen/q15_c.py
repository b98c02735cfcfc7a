"""Q15 square roots, the per-sample magnitude cache and the integer input quantiser of
``<name>_stream.c``.

``<name>_isqrt32`` is :func:`sensorbudget.trainer.sensing.q15.isqrt32` (``floor(sqrt(v))``,
``v <= 65535**2``).
Where the core has a single-precision FPU (Cortex-M4F) it is ``r = (uint32_t)sqrtf((float)v)``
and one correction: the conversion and ``vsqrt`` each round to nearest, which keeps ``sqrtf`` of a
perfect square ``r*r`` exactly ``r`` (both errors stay below half a float step of the root), so
the integer part is the root ``r`` or ``r + 1``, and ``r*r > v`` tells which (the tests check
every square and its neighbours up to ``65535**2``). On a core with a multiplier and no FPU
(RV32IMC/IMAC, Cortex-M3: ``<NAME>_ISQRT_TABLE``) the argument is scaled by ``4^k`` into
``[2^30, 2^32)`` (four even shifts), its root read off a 193-entry table of ``sqrt(j 2^24)`` by
linear interpolation (within 3 of the root: the interpolation error of the root over one step is
below 1/4), shifted back by ``k`` and corrected to the floor root with a multiply per step:
about 35 instructions on RV32 against about 70 for the digits. On AVR (GCC,
``<NAME>_ISQRT_BYTES``) the same table in flash, normalised a byte and two bits at a time,
interpolated by one 8 x 8 ``mul``, in inline assembly. Elsewhere (RV32E without a multiplier,
the host) it is the digit-by-digit integer root, two bits per step, skipping the leading zero
pairs.

The fixed-point magnitude kinds (``mag_mean``, ``mag_max``) need one root per sample. Each
sample's magnitude is computed once, by the first ``<name>_stream_compute`` after it arrived,
and kept beside the ring buffer (``mag[WINDOW][sets]``, uint16, at the sample's ring position);
the window's sum of magnitudes is updated by ``new - old`` as a position is overwritten (uint32,
exact, so the sum always equals the sum of the cached values: the arithmetic of
:mod:`sensorbudget.trainer.sensing.q15` is integer, so this order gives the same value as
summing the window). A prediction therefore pays ``hop`` roots, not ``window`` (all of them
for the first window after a reset, or when ``hop >= window``); ``mag_max`` is the largest
cached value (one pass over the cache). Each compute redoes at least the newest ``hop``
samples (a cached value recomputed is the same, so the sum does not move): a compute repeated
on one window (BENCH) costs what the window's own compute did, and the features stay the
same.

Integer inputs (Q15 model, :func:`int_inputs`): an extractor of :data:`INT_KINDS` feeds its model
input straight from its integer value (``<name>_qin``, the
:class:`sensorbudget.trainer.sensing.q15.IntQuantizer` of the input: a clamp, a shift, the high
word of one 32 x 32 multiply, an add and a shift) instead of converting it to a float feature
and running the header's float quantiser: on a core without an FPU (RV32IMC, AVR, Cortex-M3)
those were a soft-float conversion, two soft-float multiplies, a subtraction and a rounding per
input. The float feature of such an input is not computed (``features[i]`` stays 0); the other
inputs an extractor feeds are quantised by the header's arithmetic in runs of consecutive
inputs (``<name>_quantize_span``). On AVR (GCC) the calls' constant parameters select an
inline-assembly ``<name>_qin``: the int48 product by eight ``mul`` and an unrolled shift of at
most 4 bits (no library multiply, no shift loop); :func:`avr_asm_pass` writes the AVR window
pass as one assembly loop.
"""

from __future__ import annotations

import math

from sensorbudget.export import cgen
from sensorbudget.trainer.sensing.q15 import (
    RAW_RANGE,
    energy_shift,
    int_quantizer,
    magnitude_shifts,
)

from .ctemplate import macro

TEMPLATE = "q15.c.j2"   # isqrt, the magnitude cache, the quantisers
#: the largest ``ldd`` displacement (bytes): AVR row macros read channels up to 31 of a row
AVR_MAX_OFFSET = 63
FIXED_MAG = ("mag_mean", "mag_max")
#: Q15 kinds whose model input is quantised straight from their integer value (:func:`int_inputs`)
INT_KINDS = ("mean", "min", "max", "ptp", "last", "energy", "rms", "mad", "mag_mean", "mag_max",
             "percentile")


def mag_sets(plan) -> list:
    """Channel tuples of the plan's fixed-point magnitude extractors, in order of first use."""
    out = []
    for e in plan.extractors:
        if e.fixed and e.kind in FIXED_MAG and e.channels not in out:
            out.append(e.channels)
    return out


def mag_unit(plan, channels) -> float:
    """Real value of one unit of the Q15 magnitude of ``channels`` (a power of two)."""
    return magnitude_shifts([plan.full_scale[c] for c in channels])[2]


def stream_fields(plan) -> str:
    """Lines of ``<name>_stream_t`` after the inputs: the magnitude cache (or nothing)."""
    sets = mag_sets(plan)
    if not sets:
        return ""
    P = plan.name.upper()
    return (f"    uint32_t mag_upto;     /* n_seen when the magnitude cache was last updated */\n"
            f"    uint32_t mag_sum[{len(sets)}];    /* sum of the cached magnitudes, per set */\n"
            + cgen.fit(f"    uint16_t mag[{P}_WINDOW][{len(sets)}];{cgen.NOTE}"
                       f"  /* Q15 magnitude of each buffered sample */"))


def cache_bytes(plan) -> int:
    """Bytes of the magnitude cache fields (they start 4-aligned, after the inputs)."""
    n = len(mag_sets(plan))
    return 0 if n == 0 else 4 + 4 * n + 2 * plan.window * n


def _sqrt_table() -> str:
    """The ``<p>_sqrt_tab`` rows: ``round(sqrt(j * 2**24)) - 32768``, j = 64 .. 256."""
    vals = [math.isqrt(j << 26) // 2 + (math.isqrt(j << 26) & 1) - 32768 for j in range(64, 257)]
    return "\n".join("    " + ", ".join(f"{v}u" for v in vals[i:i + 12]) + ","
                     for i in range(0, len(vals), 12))


def isqrt(p: str, P: str, rms: bool = False) -> str:
    """The ``<p>_isqrt32`` routine (see the module docstring), and with ``rms`` the Q15 rms of
    an energy (``isqrt32(energy / N)``)."""
    return macro(TEMPLATE, "isqrt", p, P, rms, _sqrt_table())


def _square(P: str, c: int, shift: int) -> str:
    sq = f"{P}_SQ16(row[{c}u])"
    return f"({sq} >> {shift})" if shift else sq


def squares(p: str, P: str) -> str:
    """``<P>_SQ16`` / ``<P>_USQ16`` (a Q15 sample's / a uint16's square, uint32) and
    ``<P>_SQ_DECL`` / ``_ADD`` / ``_SUM`` (a window's sum of squares): on AVR three 8 x 8
    ``mul`` of the magnitude and a 48-bit sum by ``add`` / ``adc`` (no library call), elsewhere
    the C product and an int64 sum; from ``templates/q15.c.j2``."""
    return macro(TEMPLATE, "squares", p, P)


def _avr_square(P: str, c: int, shift: int, first: bool) -> str:
    """The AVR statement setting (``first``) or adding to ``a`` the square of ``row[c]``:
    ``<P>_ROW_SQ32SET`` / ``<P>_ROW_SQ32`` (ldd at byte offset 2c, below 63), or C for a
    shifted square or a channel past the ldd displacement."""
    if shift == 0 and 2 * c + 1 <= AVR_MAX_OFFSET:
        return f"{P}_ROW_SQ32{'SET' if first else ''}(a, row, {2 * c});"
    return f"a {'=' if first else '+='} {_square(P, c, shift)};"


def mag_update(plan) -> str:
    """``<p>_mag_rows`` and ``<p>_mag_update`` (the cache of the magnitude sets), or ''."""
    sets = mag_sets(plan)
    if not sets:
        return ""
    out = []
    P = plan.name.upper()
    for chans in sets:
        shifts = magnitude_shifts([plan.full_scale[c] for c in chans])[0]
        out.append({"names": ", ".join(cgen.c_comment(plan.channels[c]) for c in chans),
                    "terms": [_square(P, c, s) for c, s in zip(chans, shifts)],
                    "avr": [_avr_square(P, c, s, i == 0)
                            for i, (c, s) in enumerate(zip(chans, shifts))]})
    return macro(TEMPLATE, "mag_update", plan.name, plan.name.upper(), out)


def avr_rows(P: str) -> str:
    """``<P>_AVR_ROWS`` and the AVR window-pass row statistics (``<P>_ROW_MIN`` / ``_MAX`` /
    ``_MINMAX`` / ``_SUM``; GCC inline assembly, 1 only with avr-gcc), from
    ``templates/q15.c.j2``."""
    return macro(TEMPLATE, "avr_rows", P)


#: register bytes the AVR assembly loop may ask for (accumulators, row pointer, row counter,
#: sample and square temporaries) of the 28 besides r0, r1 and the frame pointer
AVR_ASM_BYTES = 24


def _avr_row_asm(g: int, stats, off: int, carry8: bool = False, shift: str = "") -> list:
    """The assembly lines of group ``g``'s statistics on the int16 sample at byte offset
    ``off`` of the row (operands: ``rw`` the row pointer in Y or Z, ``t`` an upper register
    pair, ``sq`` four bytes; the accumulators ``s<g>``, ``l<g>``, ``h<g>``, ``q<g>`` and
    ``e<g>``: the macros of :func:`avr_rows` / :func:`squares` in one block); ``carry8``: the
    sum of squares' carry word ``e<g>`` is one byte (windows below 1024 rows); ``shift``: text
    after each byte offset (an assembler macro's argument, ``+\\o``)."""
    lo, hi = f"%a[rw]+{off}{shift}", f"%a[rw]+{off + 1}{shift}"
    ld = [f"ldd %A[t], {lo}", f"ldd %B[t], {hi}"]
    out = []
    if "qsq" in stats:        # |q| by neg, three mul, added to the 48-bit sum q:e
        out += [*ld, "sbrs %B[t], 7", "rjmp 1f", "neg %B[t]", "neg %A[t]",
                "sbc %B[t], __zero_reg__", "1:", "mul %A[t], %A[t]", "movw %A[sq], r0",
                "mul %B[t], %B[t]", "movw %C[sq], r0", "mul %A[t], %B[t]", "clr %B[t]",
                "add %B[sq], r0", "adc %C[sq], r1", "adc %D[sq], %B[t]", "add %B[sq], r0",
                "adc %C[sq], r1", "adc %D[sq], %B[t]", "clr __zero_reg__",
                f"add %A[q{g}], %A[sq]", f"adc %B[q{g}], %B[sq]", f"adc %C[q{g}], %C[sq]",
                f"adc %D[q{g}], %D[sq]",
                *([f"adc %[e{g}], __zero_reg__"] if carry8 else
                  [f"adc %A[e{g}], __zero_reg__", f"adc %B[e{g}], __zero_reg__"])]
    if "qsum" in stats:       # the sum of q + 32768 (uint32)
        out += [f"ldd %B[t], {hi}", "subi %B[t], 0x80",
                f"ldd __tmp_reg__, {lo}", f"add %A[s{g}], __tmp_reg__",
                f"adc %B[s{g}], %B[t]", f"adc %C[s{g}], __zero_reg__",
                f"adc %D[s{g}], __zero_reg__"]
    if "qmin" in stats:
        out += [*ld, f"cp %A[t], %A[l{g}]", f"cpc %B[t], %B[l{g}]", "brge 1f",
                f"movw %A[l{g}], %A[t]", "1:"]
    if "qmax" in stats:
        out += ([] if "qmin" in stats else ld) + [
            f"cp %A[h{g}], %A[t]", f"cpc %B[h{g}], %B[t]", "brge 2f", f"movw %A[h{g}], %A[t]",
            "2:"]
    return out


def avr_asm_pass(p: str, P: str, groups, n_channels: int, part: dict,
                 window: int = 0) -> str | None:
    """The AVR Q15 pass (``part``: the declarations and stores of
    :func:`sensorbudget.firmware_gen.passes_c._avr_part`) as one inline-assembly loop per
    ring-buffer segment: each row's statistics, the row pointer advanced, a row counter counted
    down. The accumulators stay in registers across the loop (avr-gcc spilled one to the stack
    per row around the macros' C loop) and the loop control is 6 cycles a row, 3.5 where two
    rows go a turn (the second row's ldd offsets below 64; the T flag keeps an odd row for
    the end). Issue-28 bundle on simavr: the pass 75 -> 63 -> 61 cycles a row. None when the
    operands need more than :data:`AVR_ASM_BYTES` register bytes (then the macros' C loop).
    A ``window`` below 256 rows counts rows in one byte, below 1024 keeps the carry word of
    a sum of squares in one byte (0: unknown, two bytes each)."""
    short, carry8 = 0 < window < 256, 0 < window < 1024
    outs, size, decls, stores = [], 2 + (1 if short else 2) + 2, [], []
    for g, ((_, chans, *_), stats) in enumerate(groups):
        for n, var, nbytes in (("qsq", "q", 4), ("qsq", "e", 1 if carry8 else 2),
                               ("qsum", "s", 4), ("qmin", "l", 2), ("qmax", "h", 2)):
            if n in stats:
                c = {"q": f"qsq{g}", "e": f"qsq{g}_{'e' if carry8 else 'hi'}",
                     "s": f"qsum{g}", "l": f"qlo{g}", "h": f"qhi{g}"}[var]
                outs.append(f'[{var}{g}] "+r"({c})')
                size += nbytes
        if "qsq" in stats and carry8:
            decls.append(f"    uint8_t qsq{g}_e = 0u;")
            stores.append(f"    qsq{g}_hi = qsq{g}_e;")
    if any("qsq" in stats for _, stats in groups):
        size += 4
    if size > AVR_ASM_BYTES:
        return None
    stride = 2 * n_channels

    count = ["dec %[n]"] if short else ["subi %A[n], 1", "sbci %B[n], 0"]

    def rows(at: int, shift: str = "") -> list:
        return [x for g, ((_, chans, *_), stats) in enumerate(groups)
                for x in _avr_row_asm(g, stats, 2 * chans[0] + at, carry8, shift)]

    if 2 * stride <= 63 and max(2 * c for (_, cs, *_), _ in groups for c in cs) + stride < 63:
        # two rows a turn (the second at ldd offset + stride); T keeps the odd row
        head = (["bst %[n], 0", "lsr %[n]"] if short else
                ["bst %A[n], 0", "lsr %B[n]", "ror %A[n]", "cp %A[n], __zero_reg__",
                 "cpc %B[n], __zero_reg__"])
        # the row once, as an assembler macro of its byte shift o (three uses), purged after
        row = rows(0, "+\\\\o")
        text = [".macro sbrow o", *row, ".endm", *head, "brne 9f", "rjmp 7f", "9:",
                "sbrow 0", f"sbrow {stride}", f"adiw %[rw], {2 * stride}", *count, "breq 7f",
                "rjmp 9b", "7:", "brts 6f", "rjmp 8f", "6:", "sbrow 0", "8:", ".purgem sbrow"]
    else:
        step = ([f"adiw %[rw], {stride}"] if stride <= 63 else
                [f"subi %A[rw], lo8(-({stride}))", f"sbci %B[rw], hi8(-({stride}))"])
        lines = [*rows(0), *step, *count]
        # brne reaches 64 words back: every line here is one word
        text = ["9:", *lines, *(["brne 9b"] if len(lines) < 62 else ["breq 8f", "rjmp 9b", "8:"])]
    asm, cur = ["        __asm__ __volatile__("], ""
    for i, line in enumerate(text):     # a few instructions per C string, within 100 columns
        piece = line + ("" if i == len(text) - 1 else
                        "\\n" if line.endswith(":") else "\\n\\t")
        if cur and len(cur) + len(piece) > 78:
            asm.append(f'                "{cur}"')
            cur = ""
        cur += piece
    asm.append(f'                "{cur}"')
    br = cgen.BREAK
    operands = ['[rw] "+b"(row)', f'[n] "+{"r" if short else "d"}"(n)', *outs, '[t] "=&d"(t)']
    if any("qsq" in stats for _, stats in groups):
        operands.append('[sq] "=&r"(sq)')
    asm.append("                : " + f",{br}".join(operands))
    asm.append('                : : "r0", "cc", "memory");')
    temps = ["        uint16_t t;"]
    if any("qsq" in stats for _, stats in groups):
        temps.append("        uint32_t sq;")
    return "\n".join([
        *part["decls"], *decls,
        f"    const {p}_sample_t *row = s->buf[start];",
        f"    uint16_t left ={br}(uint16_t)({P}_WINDOW - start),{br}next = (uint16_t)start;",
        "    /* the rows start .. WINDOW-1, then 0 .. start-1 (none when start is 0) */",
        "    do {",
        f"        {'uint8_t n = (uint8_t)left' if short else 'uint16_t n = left'};",
        *temps,
        *asm,
        "        row = s->buf[0];",
        "        left = next;",
        "        next = 0u;",
        "    } while (left != 0u);",
        *stores, *part["stores"]]) + "\n"


def raw_unit(plan, ext) -> float:
    """Real value of one unit of the integer value of the fixed-point extractor ``ext`` (a power
    of two; energy: after its :func:`sensorbudget.trainer.sensing.q15.energy_shift`)."""
    if ext.kind in FIXED_MAG:
        return mag_unit(plan, ext.channels)
    fs = plan.full_scale[ext.channels[0]]
    if ext.kind == "energy":
        return fs * fs / 2.0 ** 30 * 2.0 ** energy_shift(plan.window)
    return fs / 32768.0


def int_inputs(plan, fixed) -> dict:
    """{model input: (extractor, IntQuantizer)} of the inputs quantised from integers: in a Q15
    plan with its header's model ``fixed`` (a FixedPointModel), every input of a fixed-point
    extractor of :data:`INT_KINDS` whose quantiser fits (:func:`sensorbudget.trainer.sensing.q15.
    int_quantizer`); {} for float32, Q31 or without ``fixed``."""
    if fixed is None or plan.numeric != "q15":
        return {}
    out = {}
    for e in plan.extractors:
        if not e.fixed or e.kind not in INT_KINDS:
            continue
        rng = RAW_RANGE[e.kind]
        if e.kind == "energy":
            rng = (0, (plan.window << 30) >> energy_shift(plan.window))
        for slot in e.slots:
            q = int_quantizer(raw_unit(plan, e), fixed.input_offset[slot],
                              fixed.input_inv_scale[slot], rng)
            if q is not None:
                out[slot] = (e, q)
    return out


def qin_call(p: str, slot: int, raw: str, q) -> str:
    """The statement setting model input ``slot`` from the integer C expression ``raw`` (its
    breaks marked for :func:`sensorbudget.export.cgen.fit`, as are the statement's)."""
    args = [raw, q.lo, q.hi, q.mid, f"{q.pre}u", q.mult, q.add, f"{q.frac}u"]
    return (f"    s->inputs[{slot}] ={cgen.BREAK}{p}_qin({cgen.JOIN}"
            + f",{cgen.BREAK}".join(map(str, args)) + ");")


def quantizers(p: str, integer: bool, one: bool, P: str | None = None) -> str:
    """``<p>_qin`` (with ``integer``) and ``<p>_quantize_span`` (with ``one``)."""
    P = P or p.upper()
    return ((macro(TEMPLATE, "qin", p, P) if integer else "")
            + (macro(TEMPLATE, "quantize_span", p) if one else ""))
