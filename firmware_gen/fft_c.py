"""C for the power spectrum and the spectral extractors (issue 18), following
:mod:`sensorbudget.trainer.sensing.spectral` operation for operation.

``<name>_power_spectrum`` is that module's definition: the mean removed (the library's
sequential mean), the periodic Hann table (or nothing: rectangular), the sample pairs (even into
``re``, odd into ``im``) scattered to their bit-reversed positions of an ``M/2``-point buffer
(``M`` the power of two >= N; only the pairs past the window zeroed), the radix-2
decimation-in-time butterflies of that ``M/2``-point complex FFT run two stages per pass
(radix 2^2: a pass's four-point groups are closed under its two stages, so the operations and
their values are the reference's; the twiddle-1 and twiddle -i butterflies without multiplies,
as the reference defines them; a lone first stage when log2(M/2) is odd; on AVR one stage per
pass, whose few live floats keep the stack frame small: 56 bytes against 140), then the split into
the real window's spectrum with its power ``P[k]`` for ``k <= M/2`` into ``re`` (bins ``k`` and
``M/2 - k`` from one set of sums; step 5 of the reference). Within 1.0x of CMSIS-DSP's
``arm_rfft_fast_f32`` (its FFT and split) on the Cortex-M4F and M3, counting our split with the
power (``benchmarks/bench_fft_cmsis.py``). The tables (bit-reversal ``uint16_t`` of ``M/2``
entries, twiddles ``cos`` / ``-sin`` of ``M/2`` entries,
:func:`sensorbudget.trainer.sensing.spectral.twiddles`, Hann of ``N`` entries, bin frequencies
``k fs / M``) are ``static const SB_CONST``: flash on AVR (read with ``pgm_read_*``), plain
constants elsewhere; each value is the float32 the Python reference uses. One buffer (``re``,
``im``: ``2 M`` floats) serves every channel in turn; a channel's spectrum is computed once per
window and read by all its spectral features.

The entropy's log2 is :data:`sensorbudget.trainer.sensing.spectral.LOG2_POLY` after ``frexpf``
(exact), the same polynomial in the same Horner order, so no libm's ``log2f`` is involved.
"""

from __future__ import annotations

import math

import numpy as np

from sensorbudget.export import cgen
from sensorbudget.trainer.sensing import spectral

SPECTRAL = ("bandpower", "bandratio", "domfreq", "centroid", "entropy")


def is_spectral(ext) -> bool:
    return ext.kind in SPECTRAL


_LOG2 = "\n".join(f"    p = p * t + {cgen.c_float(c)};" for c in spectral.LOG2_POLY[1:])

ROUTINES = {
    "spectrum": (("mean",), """\
/* One radix-2 butterfly of trainer.sensing.spectral step 4 on (ar, ai) and (br, bi): the twiddle
 * (wr, wi), or 1 (SB_BF1), or -i (SB_BFJ); t1, t2 are scratch. */
#define SB_BF1(ar, ai, br, bi, t1, t2) \\
    t1 = br; t2 = bi; br = ar - t1; bi = ai - t2; ar = ar + t1; ai = ai + t2
#define SB_BFJ(ar, ai, br, bi, t1, t2) \\
    t1 = bi; t2 = br; br = ar - t1; bi = ai + t2; ar = ar + t1; ai = ai - t2
#define SB_BFW(ar, ai, br, bi, wr, wi, t1, t2) \\
    t1 = wr * br - wi * bi; t2 = wr * bi + wi * br; \\
    br = ar - t1; bi = ai - t2; ar = ar + t1; ai = ai + t2

/* Power spectrum of x[0..n-1] into re[0..m/2] (trainer.sensing.spectral.power_spectrum): a real
 * FFT as an m/2-point complex one (radix-2 stages run two per pass: each four-point group of a
 * pass is closed under its two stages), then the split; hann is the window table (0:
 * rectangular), rev the m/2-point bit-reversal, twr / twi the m-point twiddles (m/2 entries;
 * tables in SB_CONST storage, read with SB_READ_*). re and im hold m floats each. */
static void @p@_power_spectrum(const float *x, unsigned n, const float *hann,
    unsigned m, const uint16_t *rev, const float *twr, const float *twi, float *re, float *im)
{
    const float mean = @p@_s_mean(x, n);
    const unsigned h = m / 2u;
    unsigned i, k, len;
    float t1, t2;
    for (i = n / 2u; i < h; ++i) {         /* the pairs past the window: zero padding */
        const unsigned r = (uint16_t)SB_READ_I16(&rev[i]);
        re[r] = 0.0f;
        im[r] = 0.0f;
    }
    for (i = 0u; i < n; ++i) {
        float d = x[i] - mean;
        const unsigned r = (uint16_t)SB_READ_I16(&rev[i >> 1]);
        if (hann != 0) {
            d = d * SB_READ_F32(&hann[i]);
        }
        if (i & 1u) {
            im[r] = d;
        } else {
            re[r] = d;
        }
    }
#if defined(__AVR__)                           /* little RAM: one stage per pass, few locals */
    for (len = 1u; len < h; len *= 2u) {       /* the stage L = 2 len */
        const unsigned step = m / (2u * len);
        for (k = 0u; k < len; ++k) {
            const float wr = SB_READ_F32(&twr[k * step]), wi = SB_READ_F32(&twi[k * step]);
            for (i = k; i < h; i += 2u * len) {
                const unsigned j = i + len;
                if (k == 0u) {
                    SB_BF1(re[i], im[i], re[j], im[j], t1, t2);
                } else if (4u * k * step == m) {
                    SB_BFJ(re[i], im[i], re[j], im[j], t1, t2);
                } else {
                    SB_BFW(re[i], im[i], re[j], im[j], wr, wi, t1, t2);
                }
            }
        }
    }
#else
    len = 1u;                                  /* blocks of len points are transformed */
    if ((h & 0x5555u) == 0u && h > 1u) {       /* log2 h odd: the stage L = 2 alone */
        for (i = 0u; i < h; i += 2u) {
            float ar = re[i], ai = im[i], br = re[i + 1u], bi = im[i + 1u];
            SB_BF1(ar, ai, br, bi, t1, t2);
            re[i] = ar; im[i] = ai; re[i + 1u] = br; im[i + 1u] = bi;
        }
        len = 2u;
    }
    for (; len < h; len *= 4u) {               /* stages L = 2 len, 4 len */
        const unsigned step = m / (4u * len), quarter = m / 4u;
        for (i = 0u; i < h; i += 4u * len) {   /* k = 0: twiddles 1, 1 and -i */
            float a0r = re[i], a0i = im[i], a1r = re[i + len], a1i = im[i + len];
            float a2r = re[i + 2u * len], a2i = im[i + 2u * len];
            float a3r = re[i + 3u * len], a3i = im[i + 3u * len];
            SB_BF1(a0r, a0i, a1r, a1i, t1, t2);
            SB_BF1(a2r, a2i, a3r, a3i, t1, t2);
            SB_BF1(a0r, a0i, a2r, a2i, t1, t2);
            SB_BFJ(a1r, a1i, a3r, a3i, t1, t2);
            re[i] = a0r; im[i] = a0i; re[i + len] = a1r; im[i + len] = a1i;
            re[i + 2u * len] = a2r; im[i + 2u * len] = a2i;
            re[i + 3u * len] = a3r; im[i + 3u * len] = a3i;
        }
        for (k = 1u; k < len; ++k) {           /* twiddles t = 2 k step, k step, k step + m/4 */
            const float war = SB_READ_F32(&twr[2u * k * step]);
            const float wai = SB_READ_F32(&twi[2u * k * step]);
            const float wbr = SB_READ_F32(&twr[k * step]), wbi = SB_READ_F32(&twi[k * step]);
            const float wcr = SB_READ_F32(&twr[k * step + quarter]);
            const float wci = SB_READ_F32(&twi[k * step + quarter]);
            const int minus_i = 2u * k * step == quarter;
            for (i = k; i < h; i += 4u * len) {
                float a0r = re[i], a0i = im[i], a1r = re[i + len], a1i = im[i + len];
                float a2r = re[i + 2u * len], a2i = im[i + 2u * len];
                float a3r = re[i + 3u * len], a3i = im[i + 3u * len];
                if (minus_i) {
                    SB_BFJ(a0r, a0i, a1r, a1i, t1, t2);
                    SB_BFJ(a2r, a2i, a3r, a3i, t1, t2);
                } else {
                    SB_BFW(a0r, a0i, a1r, a1i, war, wai, t1, t2);
                    SB_BFW(a2r, a2i, a3r, a3i, war, wai, t1, t2);
                }
                SB_BFW(a0r, a0i, a2r, a2i, wbr, wbi, t1, t2);
                SB_BFW(a1r, a1i, a3r, a3i, wcr, wci, t1, t2);
                re[i] = a0r; im[i] = a0i; re[i + len] = a1r; im[i + len] = a1i;
                re[i + 2u * len] = a2r; im[i + 2u * len] = a2i;
                re[i + 3u * len] = a3r; im[i + 3u * len] = a3i;
            }
        }
    }
#endif
    /* the split, bins k and h - k together (each reads both), P[k] into re[k] */
    for (k = 1u; 2u * k <= h; ++k) {
        const unsigned q = h - k;
        const float ar = re[k], ai = im[k], cr = re[q], ci = im[q];
        const float er = ar + cr, ei = ai - ci, odd_r = ai + ci, odd_i = cr - ar;
        const float wr = SB_READ_F32(&twr[k]), wi = SB_READ_F32(&twi[k]);
        const float a = wr * odd_r - wi * odd_i, b = wr * odd_i + wi * odd_r;
        float xr = er + a, xi = ei + b;
        re[k] = 0.25f * (xr * xr + xi * xi);
        if (q != k) {                          /* bin q: twiddle (-wr, wi), so -a and b */
            xr = er - a;
            xi = b - ei;
            re[q] = 0.25f * (xr * xr + xi * xi);
        }
    }
    {
        const float x0 = re[0] + im[0], xh = re[0] - im[0];
        re[h] = xh * xh;
        re[0] = x0 * x0;
    }
}
#undef SB_BF1
#undef SB_BFJ
#undef SB_BFW
"""),
    "bandpower": ((), """\
/* Sum of P[first..last] in ascending order (a band's bins). */
static float @p@_band_power(const float *P, unsigned first, unsigned last)
{
    float s = 0.0f;
    unsigned k;
    for (k = first; k <= last; ++k) {
        s = s + P[k];
    }
    return s;
}
"""),
    "bandratio": (("bandpower",), """\
static float @p@_band_ratio(const float *P,
    unsigned a0, unsigned a1, unsigned b0, unsigned b1)
{
    const float a = @p@_band_power(P, a0, a1);
    const float b = @p@_band_power(P, b0, b1);
    return b > 0.0f ? a / b : 0.0f;
}
"""),
    "domfreq": ((), """\
/* Frequency of the highest bin in 1..m/2 (the first of equal peaks). */
static float @p@_dominant_frequency(const float *P, unsigned m,
    const float *freq)
{
    unsigned k, b = 1u;
    for (k = 2u; k <= m / 2u; ++k) {
        if (P[k] > P[b]) {
            b = k;
        }
    }
    return SB_READ_F32(&freq[b]);
}
"""),
    "centroid": ((), """\
/* Spectral centroid: sum f[k] P[k] / sum P[k] over bins 1..m/2 (0 for a zero spectrum). */
static float @p@_spectral_centroid(const float *P, unsigned m,
    const float *freq)
{
    float num = 0.0f, den = 0.0f;
    unsigned k;
    for (k = 1u; k <= m / 2u; ++k) {
        num = num + SB_READ_F32(&freq[k]) * P[k];
        den = den + P[k];
    }
    return den > 0.0f ? num / den : 0.0f;
}
"""),
    "entropy": ((), f"""\
/* log2 of a positive float: frexpf (exact), then the fixed polynomial in t = 2 mant - 1
 * (trainer.sensing.spectral.log2f; no libm log2f). */
static float @p@_log2(float v)
{{
    int e;
    const float t = 2.0f * (float)frexpf(v, &e) - 1.0f;  /* avr-libc: a double */
    float p = {cgen.c_float(spectral.LOG2_POLY[0])};
{_LOG2}
    return p + (float)(e - 1);
}}

/* Normalised spectral entropy over bins 1..m/2 (0 for a zero spectrum). */
static float @p@_spectral_entropy(const float *P, unsigned m, float norm)
{{
    float den = 0.0f, h = 0.0f;
    unsigned k;
    for (k = 1u; k <= m / 2u; ++k) {{
        den = den + P[k];
    }}
    if (!(den > 0.0f)) {{
        return 0.0f;
    }}
    for (k = 1u; k <= m / 2u; ++k) {{
        const float p = P[k] / den;
        if (p > 0.0f) {{
            h = h - p * @p@_log2(p);
        }}
    }}
    return h / norm;
}}
"""),
}


def _flash(text: str) -> str:
    return text.replace("static const ", "static const SB_CONST ", 1)


def tables(plan, exts, series_length) -> str:
    """The ``SB_CONST`` tables of the spectra of ``exts``: per FFT size the bit-reversal and
    twiddles (and bin frequencies when domfreq / centroid read them), per length the Hann."""
    p = plan.name
    out = []
    sizes = sorted({spectral.fft_size(series_length(plan, e)) for e in exts})
    for m in sizes:
        wr, wi = spectral.twiddles(m)
        out.append(_flash(cgen.array_declare("uint16_t", f"{p}_rev_{m}",
                                             spectral.bit_reverse(m // 2), per_line=12)))
        out.append(_flash(cgen.array_declare("float", f"{p}_twr_{m}", wr)))
        out.append(_flash(cgen.array_declare("float", f"{p}_twi_{m}", wi)))
        if any(e.kind in ("domfreq", "centroid") and
               spectral.fft_size(series_length(plan, e)) == m for e in exts):
            freq = (np.arange(m // 2 + 1) * (plan.sample_rate_hz / m)).astype(np.float32)
            out.append(_flash(cgen.array_declare("float", f"{p}_freq_{m}", freq)))
    for n in sorted({series_length(plan, e) for e in exts if not e.full_spec.rect}):
        out.append(_flash(cgen.array_declare("float", f"{p}_hann_{n}", spectral.hann(n))))
    return "/* Spectrum tables (trainer.sensing.spectral), in flash on AVR. */\n" + "\n".join(out)


def _bins(band, length, rate) -> tuple:
    r = spectral.band_bins(band[0], band[1], length, rate)
    return (r.start, r.stop - 1) if len(r) else (1, 0)


def spectrum_lines(plan, exts, length: int, n: str, rect: bool) -> list:
    """Lines of a series group: the spectrum of ``<p>_x`` once, then each spectral feature."""
    p, rate = plan.name, plan.sample_rate_hz
    m = spectral.fft_size(length)
    hann = "0" if rect else f"{p}_hann_{length}"
    lines = [f"    {p}_power_spectrum({p}_x, {n}, {hann}, {m}u, {p}_rev_{m}, {p}_twr_{m}, "
             f"{p}_twi_{m}, {p}_re, {p}_im);"]
    for e in exts:
        arg = e.full_spec.arg
        if e.kind == "bandpower":
            a, b = _bins(arg, length, rate)
            expr = f"{p}_band_power({p}_re, {a}u, {b}u)"
        elif e.kind == "bandratio":
            (a0, a1), (b0, b1) = _bins(arg[:2], length, rate), _bins(arg[2:], length, rate)
            expr = f"{p}_band_ratio({p}_re, {a0}u, {a1}u, {b0}u, {b1}u)"
        elif e.kind == "domfreq":
            expr = f"{p}_dominant_frequency({p}_re, {m}u, {p}_freq_{m})"
        elif e.kind == "centroid":
            expr = f"{p}_spectral_centroid({p}_re, {m}u, {p}_freq_{m})"
        else:
            norm = math.log2(m // 2) if m // 2 > 1 else 1.0
            expr = f"{p}_spectral_entropy({p}_re, {m}u, {cgen.c_float(norm)})"
        lines += [f"    s->features[{slot}] = {expr};" for slot in e.slots]
    return lines
