"""C for the Q15 power spectrum (issue 29), following
:mod:`sensorbudget.trainer.sensing.spectral_q15` integer for integer.

``<name>_power_spectrum_q15`` takes a window of int16 samples, removes the truncated integer
mean, applies the Q15 Hann table (or the rectangular shift), scatters the pairs to their
bit-reversed positions of two int16 buffers and runs the ``M/2``-point complex FFT's radix-2
stages two per pass (radix 2^2, as :mod:`.fft_c`: a pass's four-point groups are closed under
its two stages, so the integers are the reference's), every butterfly halving its outputs like
CMSIS-DSP's ``arm_rfft_q15``, then the split into ``P[k]`` (uint32, ``k <= M/2``). Only integer
operations: ``>>`` of a negative int32 is the arithmetic shift (GCC and Clang define it so; the
reference's floor shift). Tables (``static const SB_CONST``, flash on AVR): the bit reversal
(uint16), the Q15 twiddles (int16, :func:`~sensorbudget.trainer.sensing.spectral_q15.twiddles_q15`)
and the Q15 Hann (uint16, 0..32768). Buffers: ``re``, ``im`` of ``M/2`` int16 each and ``P`` of
``M/2 + 1`` uint32: ``2 M + 4`` bytes beside the window, half of the float32 transform's.
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

/* Power spectrum of the Q15 window x[0..n-1] into P[0..m/2] (trainer.sensing.spectral_q15):
 * hann the Q15 window table (0: rectangular), rev the m/2-point bit reversal, twr / twi the Q15
 * twiddles (m/2 entries), re and im m/2 int16 each. */
static void @p@_power_spectrum_q15(const int16_t *x, unsigned n, const uint16_t *hann,
    unsigned m, const uint16_t *rev, const int16_t *twr, const int16_t *twi,
    int16_t *re, int16_t *im, uint32_t *P)
{
    const unsigned h = m / 2u;
    int32_t s = 0, t1, t2;
    unsigned i, k, len;
    for (i = 0u; i < n; ++i) {
        s += x[i];
    }
    s = s / (int32_t)n;
    for (i = n / 2u; i < h; ++i) {             /* the pairs past the window: zero padding */
        const unsigned r = (uint16_t)SB_READ_I16(&rev[i]);
        re[r] = 0;
        im[r] = 0;
    }
    for (i = 0u; i < n; ++i) {
        const int32_t d = (int32_t)x[i] - s;
        const unsigned r = (uint16_t)SB_READ_I16(&rev[i >> 1]);
        const int16_t u = (int16_t)(hann != 0
            ? (d * (int32_t)(uint16_t)SB_READ_I16(&hann[i])) >> 17 : d >> 2);
        if (i & 1u) {
            im[r] = u;
        } else {
            re[r] = u;
        }
    }
    len = 1u;                                  /* blocks of len points are transformed */
    if ((h & 0x5555u) == 0u && h > 1u) {       /* log2 h odd: the stage L = 2 alone */
        for (i = 0u; i < h; i += 2u) {
            int32_t ar = re[i], ai = im[i], br = re[i + 1u], bi = im[i + 1u];
            SB_QBF1(ar, ai, br, bi, t1, t2);
            re[i] = (int16_t)ar; im[i] = (int16_t)ai;
            re[i + 1u] = (int16_t)br; im[i + 1u] = (int16_t)bi;
        }
        len = 2u;
    }
    for (; len < h; len *= 4u) {               /* stages L = 2 len, 4 len */
        const unsigned step = m / (4u * len), quarter = m / 4u;
        for (k = 0u; k < len; ++k) {           /* twiddles t = 2 k step, k step, k step + m/4 */
            const int32_t war = SB_READ_I16(&twr[2u * k * step]);
            const int32_t wai = SB_READ_I16(&twi[2u * k * step]);
            const int32_t wbr = SB_READ_I16(&twr[k * step]), wbi = SB_READ_I16(&twi[k * step]);
            const int32_t wcr = SB_READ_I16(&twr[k * step + quarter]);
            const int32_t wci = SB_READ_I16(&twi[k * step + quarter]);
            const int kind = k == 0u ? 0 : (2u * k * step == quarter ? 1 : 2);
            for (i = k; i < h; i += 4u * len) {
                int32_t a0r = re[i], a0i = im[i], a1r = re[i + len], a1i = im[i + len];
                int32_t a2r = re[i + 2u * len], a2i = im[i + 2u * len];
                int32_t a3r = re[i + 3u * len], a3i = im[i + 3u * len];
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
                re[i] = (int16_t)a0r; im[i] = (int16_t)a0i;
                re[i + len] = (int16_t)a1r; im[i + len] = (int16_t)a1i;
                re[i + 2u * len] = (int16_t)a2r; im[i + 2u * len] = (int16_t)a2i;
                re[i + 3u * len] = (int16_t)a3r; im[i + 3u * len] = (int16_t)a3i;
            }
        }
    }
    /* the split, bins k and h - k together (each reads both) */
    for (k = 1u; 2u * k <= h; ++k) {
        const unsigned q = h - k;
        const int32_t ar = re[k], ai = im[k], cr = re[q], ci = im[q];
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
        const uint32_t x0 = (uint32_t)((int32_t)re[0] + im[0]);
        const uint32_t xh = (uint32_t)((int32_t)re[0] - im[0]);
        P[0] = x0 * x0;
        P[h] = xh * xh;
    }
}
#undef SB_QBF1
#undef SB_QBFJ
#undef SB_QBFW
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
