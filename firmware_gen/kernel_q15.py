"""The Q15 model kernel (unrolled, weights as constants): exact int32 accumulation, any order.

- Cortex-M4 (``__ARM_FEATURE_DSP``): two inputs per word and two weights per word of a packed
  table, one ``SMLAD`` per two multiply-adds, one ``LDRD`` per four weights, and the header's
  rescale (round half away from zero, saturate) as ``add`` + ``SSAT``.
- AVR (``__AVR_HAVE_MUL__``): the hardware multiplier (AVR201 signed 16 x 16 -> 32
  multiply-accumulate, 22 cycles + 2 for the weight's LDI), up to four targets per pass over the
  inputs (each input loaded once per pass, one zero register per input), and the rescale as a
  shift (round half away from zero: ``acc - (acc < 0) + half``).
- Elsewhere: plain C, two targets per input (``acc + (int32_t)x * w``).

Every path computes the same integers as :func:`sensorbudget.export.fixed_point.predict_int`.
"""

from __future__ import annotations

from sensorbudget.export import cgen

from .ctemplate import macro

TEMPLATE = "kernel_q15.c.j2"   # mac16, the SMLAD helpers (dual<n>), the rescales


def _avr_ops(acc: str, w_lo: str, w_hi: str) -> list:
    """The AVR201 signed 16 x 16 -> 32 multiply-accumulate of ``acc += x * w`` (instructions)."""
    return [f"muls %B[x], {w_hi}", f"add %C[{acc}], r0", f"adc %D[{acc}], r1",
            f"mul %A[x], {w_lo}", f"add %A[{acc}], r0", f"adc %B[{acc}], r1",
            f"adc %C[{acc}], %[z]", f"adc %D[{acc}], %[z]",
            f"mulsu %B[x], {w_lo}", f"sbc %D[{acc}], %[z]", f"add %B[{acc}], r0",
            f"adc %C[{acc}], r1", f"adc %D[{acc}], %[z]",
            f"mulsu {w_hi}, %A[x]", f"sbc %D[{acc}], %[z]", f"add %B[{acc}], r0",
            f"adc %C[{acc}], r1", f"adc %D[{acc}], %[z]"]


def _avr_macn(weights) -> list:
    """One asm block: accumulators ``acc0..`` (up to four) += the next input (``*xp++``, loaded
    once) * constant weights (LDI into r22:r23), one zero register (n x 24 + 6 cycles)."""
    ops = ["ld %A[x], %a[p]+", "ld %B[x], %a[p]+", "clr %[z]"]
    names = "abcd"[:len(weights)]
    for acc, w in zip(names, weights):
        w = int(w) & 0xFFFF
        ops += [f"ldi r22, 0x{w & 0xFF:02x}", f"ldi r23, 0x{w >> 8:02x}",
                *_avr_ops(acc, "r22", "r23")]
    ops.append("clr r1")
    accs = ", ".join(f'[{a}] "+r"(acc{r})' for r, a in enumerate(names))
    lines = [f'    __asm__("{ops[0]}\\n\\t"']
    lines += [f'            "{op}\\n\\t"' for op in ops[1:-1]]
    lines += [f'            "{ops[-1]}"', f"            : {accs},",
              '              [z] "=&r"(zero), [x] "=&a"(xv), [p] "+e"(xp)',
              '            : : "r0", "r22", "r23");']
    return lines


def _avr_q15(p, fx) -> str:
    """AVR: up to four targets per pass over the inputs (``_avr_macn``): each input is loaded
    once per pass, straight from ``x``."""
    m, B = fx.weights, fx.intercepts
    k, t = m.shape
    blocks = [{"j": j, "inits": [cgen.c_int(B[r], "int32_t") for r in range(j, min(t, j + 4))],
               "asm": [line for i in range(k) for line in _avr_macn(m[i, j:j + 4])]}
              for j in range(0, t, 4)]
    return macro(TEMPLATE, "avr_q15", p, min(4, t), blocks)


def _pack(lo: int, hi: int) -> str:
    return f"UINT32_C(0x{((hi & 0xFFFF) << 16) | (lo & 0xFFFF):08x})"


def _dual_q15(p, fx) -> str:
    """The Q15 kernel with SMLAD: inputs in pairs, weights packed two per word (per target)."""
    m, B = fx.weights, fx.intercepts
    k, t = m.shape
    pairs = k // 2
    table = [[_pack(int(m[2 * i, j]), int(m[2 * i + 1, j])) for i in range(pairs)]
             for j in range(t)]
    comment = cgen.block_comment(["Weights of inputs 2i (low half) and 2i+1 (high half), "
                                  "per target."]).rstrip("\n")
    return macro(TEMPLATE, "dual_q15", p, k, pairs, comment, table,
                 [cgen.c_int(B[j], "int32_t") for j in range(t)],
                 [int(m[k - 1, j]) for j in range(t)])


def _round_c(p, shift: int) -> str:
    """The header's rescale in shifts: round half away from zero is ``(acc - (acc < 0) + half)
    >> shift`` (an arithmetic shift floors); saturation to int16 (a no-op for shift >= 16, where
    any int32 shifted fits)."""
    return macro(TEMPLATE, "q15_round", p, shift)


def _generic_q15(p, fx) -> str:
    """Plain C / AVR: targets in pairs (one input load for both), the last one alone."""
    return macro(TEMPLATE, "generic_q15", p, fx.shift,
                 [[int(v) for v in row] for row in fx.weights],
                 [cgen.c_int(v, "int32_t") for v in fx.intercepts])


def unrolled_q15(p, fx) -> str:
    """``<p>_predict_q15_unrolled`` and its helpers: the SMLAD form under ``__ARM_FEATURE_DSP``,
    the four-target asm form on AVR, the two-target C form elsewhere."""
    k = fx.weights.shape[0]
    pairs = k // 2
    chunks = sorted({min(2, pairs - i) for i in range(0, pairs, 2)})
    smlad = macro(TEMPLATE, "smlad", p, p.upper(), fx.shift, chunks)
    avr = "#elif defined(__AVR_HAVE_MUL__)\n" + _round_c(p, fx.shift) + _avr_q15(p, fx)
    return (macro(TEMPLATE, "mac16", p) + "\n" + smlad + "\n"
            + f"#if {p.upper()}_KERNEL_DUAL_MAC\n" + _dual_q15(p, fx) + avr
            + "#else\n" + _generic_q15(p, fx) + "#endif\n")
