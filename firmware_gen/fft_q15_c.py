"""C for the Q15 power spectrum (issue 29), following
:mod:`sensorbudget.trainer.sensing.spectral_q15` integer for integer.

``<name>_power_spectrum_q15`` takes a window of int16 samples, removes the truncated integer
mean, applies the Q15 Hann table (or the rectangular shift), scatters the pairs to their bit-
reversed positions of one int16 buffer (re, im interleaved) and runs the ``M/2``-point complex
FFT's radix-2 stages two per pass (radix 2^2, as :mod:`.fft_c`: a pass's four-point groups are
closed under its two stages, so the integers are the reference's), every butterfly halving its
outputs like CMSIS-DSP's ``arm_rfft_q15``, then the split into ``P[k]`` (uint32, ``k <= M/2``).
Only integer operations: ``>>`` of a negative int32 is the arithmetic shift (GCC and Clang
define it so; the reference's floor shift). Tables (``static const SB_CONST``, flash on AVR):
the bit reversal (uint16), the Q15 twiddles (int16,
:func:`~sensorbudget.trainer.sensing.spectral_q15.twiddles_q15`) and the Q15 Hann (uint16,
0..32768). Buffers: ``z``, the ``M/2`` complex values interleaved (``M`` int16), and ``P`` of
``M/2 + 1`` uint32: ``4 M + 4`` bytes beside the window (the float32 transform's: ``8 M``). On a
core with the DSP extension (``__ARM_FEATURE_DSP``: Cortex-M4/M7/M33) the butterflies run on
packed (re, im) words with its halving lanes and dual multiplies (``arm_acle.h``), the same
integers as the portable C (bit for bit with the reference on the M4F, QEMU/unicorn); on AVR one
radix-2 stage per pass (few live values: a small stack frame); elsewhere (M3, RISC-V, the host)
the portable C.
"""

from __future__ import annotations

from sensorbudget.export import cgen
from sensorbudget.trainer.sensing import spectral, spectral_q15

ROUTINE = """\
/* Butterflies of trainer.sensing.spectral_q15 step 3, each output halved: twiddle 1 (SB_QBF1),
 * -i (SB_QBFJ) or (wr, wi) in Q15 (SB_QBFW); int32 operands, t1 and t2 scratch. */
#define SB_QBF1(ar, ai, br, bi, t1, t2) \\
    t1 = br; t2 = bi; br = (ar - t1) >> 1; bi = (ai - t2) >> 1; \\
    ar = (ar + t1) >> 1; ai = (ai + t2) >> 1
#define SB_QBFJ(ar, ai, br, bi, t1, t2) \\
    t1 = bi; t2 = br; br = (ar - t1) >> 1; bi = (ai + t2) >> 1; \\
    ar = (ar + t1) >> 1; ai = (ai - t2) >> 1
#define SB_QBFW(ar, ai, br, bi, wr, wi, t1, t2) \\
    t1 = (wr * br - wi * bi) >> 15; t2 = (wr * bi + wi * br) >> 15; \\
    br = (ar - t1) >> 1; bi = (ai - t2) >> 1; ar = (ar + t1) >> 1; ai = (ai + t2) >> 1
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
/* The same butterflies on (re | im << 16) words with the DSP extension's halving lanes (exact:
 * a 17-bit sum shifted) and dual multiplies (exact int32): t = w b packed, then a +- t. */
#include <arm_acle.h>
static inline int16x2_t @p@_qld(const int16_t *z, unsigned i)
{
    int16x2_t v;
    memcpy(&v, &z[2u * i], sizeof v);
    return v;
}
static inline void @p@_qst(int16_t *z, unsigned i, int16x2_t v)
{
    memcpy(&z[2u * i], &v, sizeof v);
}
static inline int16x2_t @p@_qmul(int16x2_t b, int16x2_t w)
{
    const uint32_t lo = (uint32_t)(__smusd(b, w) >> 15) & 0xFFFFu;
    const uint32_t hi = ((uint32_t)__smuadx(b, w) << 1) & 0xFFFF0000u;
    return (int16x2_t)(hi | lo);
}
#define SB_QDBF1(a, b, t) t = b; b = __shsub16(a, t); a = __shadd16(a, t)
#define SB_QDBFJ(a, b, t) t = b; b = __shasx(a, t); a = __shsax(a, t)
#define SB_QDBFW(a, b, w, t) t = @p@_qmul(b, w); b = __shsub16(a, t); a = __shadd16(a, t)
#endif

/* Power spectrum of the Q15 window x[0..n-1] into P[0..m/2] (trainer.sensing.spectral_q15):
 * hann the Q15 window table (0: rectangular), rev the m/2-point bit reversal, twr / twi the Q15
 * twiddles (m/2 entries), z the m/2 complex values (re, im) interleaved (m int16). */
static void @p@_power_spectrum_q15(const int16_t *x, unsigned n, const uint16_t *hann,
    unsigned m, const uint16_t *rev, const int16_t *twr, const int16_t *twi,
    int16_t *z, uint32_t *P)
{
    const unsigned h = m / 2u;
    int32_t s = 0;
    unsigned i, k, len;
    for (i = 0u; i < n; ++i) {
        s += x[i];
    }
    s = s / (int32_t)n;
    for (i = n / 2u; i < h; ++i) {             /* the pairs past the window: zero padding */
        const unsigned r = (uint16_t)SB_READ_I16(&rev[i]);
        z[2u * r] = 0;
        z[2u * r + 1u] = 0;
    }
    for (i = 0u; i < n; ++i) {
        const int32_t d = (int32_t)x[i] - s;
        const unsigned r = (uint16_t)SB_READ_I16(&rev[i >> 1]);
        z[2u * r + (i & 1u)] = (int16_t)(hann != 0
            ? (d * (int32_t)(uint16_t)SB_READ_I16(&hann[i])) >> 17 : d >> 2);
    }
    len = 1u;                                  /* blocks of len points are transformed */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
    if ((h & 0x5555u) == 0u && h > 1u) {       /* log2 h odd: the stage L = 2 alone */
        for (i = 0u; i < h; i += 2u) {
            int16x2_t a = @p@_qld(z, i), b = @p@_qld(z, i + 1u), t;
            SB_QDBF1(a, b, t);
            @p@_qst(z, i, a);
            @p@_qst(z, i + 1u, b);
        }
        len = 2u;
    }
    for (; len < h; len *= 4u) {               /* stages L = 2 len, 4 len */
        const unsigned step = m / (4u * len), quarter = m / 4u;
        for (k = 0u; k < len; ++k) {           /* twiddles t = 2 k step, k step, k step + m/4 */
            const unsigned ta = 2u * k * step, tb = k * step, tc = k * step + quarter;
            const int16x2_t wa = (int16x2_t)(((uint32_t)(uint16_t)twi[ta] << 16)
                                             | (uint16_t)twr[ta]);
            const int16x2_t wb = (int16x2_t)(((uint32_t)(uint16_t)twi[tb] << 16)
                                             | (uint16_t)twr[tb]);
            const int16x2_t wc = (int16x2_t)(((uint32_t)(uint16_t)twi[tc] << 16)
                                             | (uint16_t)twr[tc]);
            for (i = k; i < h; i += 4u * len) {
                int16x2_t a0 = @p@_qld(z, i), a1 = @p@_qld(z, i + len), t;
                int16x2_t a2 = @p@_qld(z, i + 2u * len), a3 = @p@_qld(z, i + 3u * len);
                if (k == 0u) {
                    SB_QDBF1(a0, a1, t);
                    SB_QDBF1(a2, a3, t);
                    SB_QDBF1(a0, a2, t);
                    SB_QDBFJ(a1, a3, t);
                } else {
                    if (ta == quarter) {
                        SB_QDBFJ(a0, a1, t);
                        SB_QDBFJ(a2, a3, t);
                    } else {
                        SB_QDBFW(a0, a1, wa, t);
                        SB_QDBFW(a2, a3, wa, t);
                    }
                    SB_QDBFW(a0, a2, wb, t);
                    SB_QDBFW(a1, a3, wc, t);
                }
                @p@_qst(z, i, a0);
                @p@_qst(z, i + len, a1);
                @p@_qst(z, i + 2u * len, a2);
                @p@_qst(z, i + 3u * len, a3);
            }
        }
    }
#elif defined(__AVR__)                         /* little RAM: one stage per pass, few locals */
    for (len = 1u; len < h; len *= 2u) {       /* the stage L = 2 len */
        const unsigned step = m / (2u * len);
        for (k = 0u; k < len; ++k) {
            const int32_t wr = SB_READ_I16(&twr[k * step]), wi = SB_READ_I16(&twi[k * step]);
            for (i = 2u * k; i < 2u * h; i += 4u * len) {
                int16_t *const pa = &z[i], *const pb = pa + 2u * len;
                int32_t ar = pa[0], ai = pa[1], br = pb[0], bi = pb[1], t1, t2;
                if (k == 0u) {
                    SB_QBF1(ar, ai, br, bi, t1, t2);
                } else if (4u * k * step == m) {
                    SB_QBFJ(ar, ai, br, bi, t1, t2);
                } else {
                    SB_QBFW(ar, ai, br, bi, wr, wi, t1, t2);
                }
                pa[0] = (int16_t)ar; pa[1] = (int16_t)ai; pb[0] = (int16_t)br; pb[1] = (int16_t)bi;
            }
        }
    }
#else
    {
        int32_t t1, t2;
        if ((h & 0x5555u) == 0u && h > 1u) {   /* log2 h odd: the stage L = 2 alone */
            for (i = 0u; i < h; i += 2u) {
                int32_t ar = z[2u * i], ai = z[2u * i + 1u];
                int32_t br = z[2u * i + 2u], bi = z[2u * i + 3u];
                SB_QBF1(ar, ai, br, bi, t1, t2);
                z[2u * i] = (int16_t)ar; z[2u * i + 1u] = (int16_t)ai;
                z[2u * i + 2u] = (int16_t)br; z[2u * i + 3u] = (int16_t)bi;
            }
            len = 2u;
        }
        for (; len < h; len *= 4u) {           /* stages L = 2 len, 4 len */
            const unsigned step = m / (4u * len), quarter = m / 4u, d1 = 2u * len;
            for (k = 0u; k < len; ++k) {       /* twiddles t = 2 k step, k step, k step + m/4 */
                const int32_t war = SB_READ_I16(&twr[2u * k * step]);
                const int32_t wai = SB_READ_I16(&twi[2u * k * step]);
                const int32_t wbr = SB_READ_I16(&twr[k * step]);
                const int32_t wbi = SB_READ_I16(&twi[k * step]);
                const int32_t wcr = SB_READ_I16(&twr[k * step + quarter]);
                const int32_t wci = SB_READ_I16(&twi[k * step + quarter]);
                const int kind = k == 0u ? 0 : (2u * k * step == quarter ? 1 : 2);
                for (i = 2u * k; i < 2u * h; i += 4u * d1) {
                    int16_t *const p0 = &z[i], *const p1 = p0 + d1;
                    int16_t *const p2 = p1 + d1, *const p3 = p2 + d1;
                    int32_t a0r = p0[0], a0i = p0[1], a1r = p1[0], a1i = p1[1];
                    int32_t a2r = p2[0], a2i = p2[1], a3r = p3[0], a3i = p3[1];
                    if (kind == 0) {
                        SB_QBF1(a0r, a0i, a1r, a1i, t1, t2);
                        SB_QBF1(a2r, a2i, a3r, a3i, t1, t2);
                        SB_QBF1(a0r, a0i, a2r, a2i, t1, t2);
                        SB_QBFJ(a1r, a1i, a3r, a3i, t1, t2);
                    } else {
                        if (kind == 1) {
                            SB_QBFJ(a0r, a0i, a1r, a1i, t1, t2);
                            SB_QBFJ(a2r, a2i, a3r, a3i, t1, t2);
                        } else {
                            SB_QBFW(a0r, a0i, a1r, a1i, war, wai, t1, t2);
                            SB_QBFW(a2r, a2i, a3r, a3i, war, wai, t1, t2);
                        }
                        SB_QBFW(a0r, a0i, a2r, a2i, wbr, wbi, t1, t2);
                        SB_QBFW(a1r, a1i, a3r, a3i, wcr, wci, t1, t2);
                    }
                    p0[0] = (int16_t)a0r; p0[1] = (int16_t)a0i;
                    p1[0] = (int16_t)a1r; p1[1] = (int16_t)a1i;
                    p2[0] = (int16_t)a2r; p2[1] = (int16_t)a2i;
                    p3[0] = (int16_t)a3r; p3[1] = (int16_t)a3i;
                }
            }
        }
    }
#endif
    /* the split, bins k and h - k together (each reads both) */
    for (k = 1u; 2u * k <= h; ++k) {
        const unsigned q = h - k;
        const int32_t ar = z[2u * k], ai = z[2u * k + 1u], cr = z[2u * q], ci = z[2u * q + 1u];
        const int32_t er = ar + cr, ei = ai - ci, odd_r = ai + ci, odd_i = cr - ar;
        const int32_t wr = SB_READ_I16(&twr[k]), wi = SB_READ_I16(&twi[k]);
        const int32_t a = (wr * odd_r - wi * odd_i) >> 15, b = (wr * odd_i + wi * odd_r) >> 15;
        uint32_t xr = (uint32_t)((er + a) >> 1), xi = (uint32_t)((ei + b) >> 1);
        P[k] = xr * xr + xi * xi;
        if (q != k) {                          /* bin q: twiddle (-wr, wi), so -a and b */
            xr = (uint32_t)((er - a) >> 1);
            xi = (uint32_t)((b - ei) >> 1);
            P[q] = xr * xr + xi * xi;
        }
    }
    {
        const uint32_t x0 = (uint32_t)((int32_t)z[0] + z[1]);
        const uint32_t xh = (uint32_t)((int32_t)z[0] - z[1]);
        P[0] = x0 * x0;
        P[h] = xh * xh;
    }
}
#undef SB_QBF1
#undef SB_QBFJ
#undef SB_QBFW
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#undef SB_QDBF1
#undef SB_QDBFJ
#undef SB_QDBFW
#endif
"""


def routine(prefix: str) -> str:
    """The routine's C text with the symbol prefix ``prefix``."""
    return ROUTINE.replace("@p@", prefix)


def tables(prefix: str, m: int, hann_lengths=()) -> list:
    """C declarations (``static const SB_CONST``) of the tables of an ``m``-point transform:
    ``<prefix>_qrev_<m>``, ``<prefix>_qtwr_<m>``, ``<prefix>_qtwi_<m>`` and a
    ``<prefix>_qhann_<n>`` per window length ``n``."""
    wr, wi = spectral_q15.twiddles_q15(m)
    out = [cgen.array_declare("uint16_t", f"{prefix}_qrev_{m}", spectral.bit_reverse(m // 2),
                              per_line=12),
           cgen.array_declare("int16_t", f"{prefix}_qtwr_{m}", wr.tolist(), per_line=12),
           cgen.array_declare("int16_t", f"{prefix}_qtwi_{m}", wi.tolist(), per_line=12)]
    out += [cgen.array_declare("uint16_t", f"{prefix}_qhann_{n}",
                               spectral_q15.hann_q15(n).tolist(), per_line=12)
            for n in hann_lengths]
    return [t.replace("static const ", "static const SB_CONST ", 1) for t in out]
