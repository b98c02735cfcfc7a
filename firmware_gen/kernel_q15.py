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
    n_acc = min(4, t)
    rows = [f"static inline void {p}_predict_q15_unrolled(const int16_t *x, int16_t *scores)\n{{"]
    rows += [f"    int32_t {', '.join(f'acc{r}' for r in range(n_acc))};", "    int16_t xv;",
             "    const int16_t *xp;", "    uint8_t zero;"]
    for j in range(0, t, 4):
        n = min(4, t - j)
        rows += [f"    acc{r} = {cgen.c_int(B[j + r], 'int32_t')};" for r in range(n)]
        rows.append("    xp = x;")
        for i in range(k):
            rows += _avr_macn(m[i, j:j + n])
        rows += [f"    scores[{j + r}] = {p}_q15_round(acc{r});" for r in range(n)]
    rows += ["    (void)zero;", "    (void)xv;", "    (void)xp;"]
    return "\n".join(rows) + "\n}\n"


def _pack(lo: int, hi: int) -> str:
    return f"UINT32_C(0x{((hi & 0xFFFF) << 16) | (lo & 0xFFFF):08x})"


def _dual_q15(p, fx) -> str:
    """The Q15 kernel with SMLAD: inputs in pairs, weights packed two per word (per target)."""
    m, B = fx.weights, fx.intercepts
    k, t = m.shape
    pairs = k // 2
    rows = []
    if pairs:
        table = [[_pack(int(m[2 * i, j]), int(m[2 * i + 1, j])) for i in range(pairs)]
                 for j in range(t)]
        rows.append(cgen.block_comment(["Weights of inputs 2i (low half) and 2i+1 (high half), "
                                        "per target."]).rstrip("\n"))
        rows.append(f"static const uint32_t {p}_q15_wpairs[{t}][{pairs}] = {{")
        for j in range(t):
            rows.append(f"    {{  /* target {j} */")
            rows += [f"        {', '.join(table[j][i:i + 4])}," for i in range(0, pairs, 4)]
            rows.append("    },")
        rows.append("};\n")
    rows.append(f"static inline void {p}_predict_q15_unrolled(const int16_t *x, int16_t *scores)"
                f"\n{{")
    if pairs:
        rows.append(f"    const uint32_t *w = &{p}_q15_wpairs[0][0];")
    rows += [f"    const uint32_t x{2 * i}_{2 * i + 1} = {p}_pair(x + {2 * i});"
             for i in range(pairs)]
    if k % 2:
        rows.append(f"    const int16_t x{k - 1} = x[{k - 1}];")
    rows.append("    int32_t acc;")
    for j in range(t):
        rows.append(f"    acc = {cgen.c_int(B[j], 'int32_t')};")
        for i in range(0, pairs, 2):
            xs = ", ".join(f"x{2 * r}_{2 * r + 1}" for r in range(i, min(pairs, i + 2)))
            rows.append(f"    acc = {p}_dual{min(2, pairs - i)}(acc, &w, {xs});")
        if k % 2:
            rows.append(f"    acc = {p}_mac16(acc, x{k - 1}, (int16_t)({int(m[k - 1, j])}));")
        rows.append(f"    scores[{j}] = {p}_q15_rescale_dsp(acc);")
    return "\n".join(rows) + "\n}\n"


def _round_c(p, shift: int) -> str:
    """The header's rescale in shifts: round half away from zero is ``(acc - (acc < 0) + half)
    >> shift`` (an arithmetic shift floors); saturation to int16 (a no-op for shift >= 16, where
    any int32 shifted fits)."""
    return macro(TEMPLATE, "q15_round", p, shift)


def _generic_q15(p, fx) -> str:
    """Plain C / AVR: targets in pairs (one input load for both), the last one alone."""
    m, B = fx.weights, fx.intercepts
    k, t = m.shape
    rows = [_round_c(p, fx.shift)
            + f"static inline void {p}_predict_q15_unrolled(const int16_t *x, int16_t *scores)\n{{"]
    rows += [f"    const int16_t x{i} = x[{i}];" for i in range(k)]
    rows.append("    int32_t acc, acc2;" if t > 1 else "    int32_t acc;")
    for j in range(0, t, 2):
        rows.append(f"    acc = {cgen.c_int(B[j], 'int32_t')};")
        if j + 1 < t:
            rows.append(f"    acc2 = {cgen.c_int(B[j + 1], 'int32_t')};")
            rows += [f"    {p}_mac16_2(&acc, &acc2, x{i}, (int16_t)({int(m[i, j])}), "
                     f"(int16_t)({int(m[i, j + 1])}));" for i in range(k)]
        else:
            rows += [f"    acc = {p}_mac16(acc, x{i}, (int16_t)({int(m[i, j])}));"
                     for i in range(k)]
        rows.append(f"    scores[{j}] = {p}_q15_round(acc);")
        if j + 1 < t:
            rows.append(f"    scores[{j + 1}] = {p}_q15_round(acc2);")
    return "\n".join(rows) + "\n}\n"


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
