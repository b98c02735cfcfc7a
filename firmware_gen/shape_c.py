"""C routines of the extractors computed on a linear array ``x[0..n-1]`` (:mod:`.series_c`):
the per-channel window statistics (for a preprocessed window), the shape kinds, autocorrelation
and cadence, and the selection of a percentile (float32 and Q15). Each is a literal
transcription of its docstring in :mod:`sensorbudget.trainer.sensing.extractors` / :mod:`~sensorbudget.trainer.sensing.shape`
/ :mod:`~sensorbudget.trainer.sensing.spectral` (same float32 operation order, no fused multiply-add).
``@p@`` is the model prefix; :data:`ROUTINES` maps a name to (dependencies, C text).
"""

from __future__ import annotations

# name -> (dependencies, C text); @p@ / @P@ are the prefix, x / n the array and its length
_HEAD = "static float @p@_s_{0}(const float *x, unsigned n)\n{{\n"
_LOOP = "    for (i = {0}; i < n; ++i) {{\n{1}    }}\n"


def _routine(name, decls, first, body, tail):
    return _HEAD.format(name) + decls + "    unsigned i;\n" + _LOOP.format(first, body) + tail + "}\n"


ROUTINES = {
    "mean": ((), _routine("mean", "    float acc = 0.0f;\n", "0u", "        acc = acc + x[i];\n",
                          "    return acc / (float)n;\n")),
    "std": ((), _routine("std", "    float s1 = 0.0f, s2 = 0.0f, m, v;\n", "0u",
                         "        const float d = x[i] - x[0];\n        s1 = s1 + d;\n"
                         "        s2 = s2 + d * d;\n",
                         "    m = s1 / (float)n;\n    v = s2 / (float)n - m * m;\n"
                         "    return v > 0.0f ? sqrtf(v) : 0.0f;\n")),
    "min": ((), _routine("min", "    float m = x[0];\n", "1u",
                         "        if (x[i] < m) {\n            m = x[i];\n        }\n",
                         "    return m;\n")),
    "max": ((), _routine("max", "    float m = x[0];\n", "1u",
                         "        if (x[i] > m) {\n            m = x[i];\n        }\n",
                         "    return m;\n")),
    "ptp": (("min", "max"), "static float @p@_s_ptp(const float *x, unsigned n)\n{\n"
            "    return @p@_s_max(x, n) - @p@_s_min(x, n);\n}\n"),
    "energy": ((), _routine("energy", "    float acc = 0.0f;\n", "0u",
                            "        acc = acc + x[i] * x[i];\n", "    return acc;\n")),
    "rms": (("energy",), "static float @p@_s_rms(const float *x, unsigned n)\n{\n"
            "    return sqrtf(@p@_s_energy(x, n) / (float)n);\n}\n"),
    "mad": ((), _routine("mad", "    float acc = 0.0f;\n", "1u",
                         "        const float d = x[i] - x[i - 1u];\n"
                         "        acc = acc + (d < 0.0f ? -d : d);  /* fabsf */\n",
                         "    return acc / (float)(n - 1u);\n")),
    "zcr": (("mean",), _routine("zcr", "    const float m = @p@_s_mean(x, n);\n"
                                "    unsigned count = 0u;\n", "1u",
                                "        if ((x[i - 1u] < m) != (x[i] < m)) {\n"
                                "            ++count;\n        }\n",
                                "    return (float)count / (float)(n - 1u);\n")),
    "last": ((), "static float @p@_s_last(const float *x, unsigned n)\n{\n"
             "    return x[n - 1u];\n}\n"),
    "moments": (("mean",), """\
/* Central sums after the mean: d = x[i] - m; d2 = d * d; s2 += d2; s3 += d2 * d; s4 += d2 * d2. */
static void @p@_s_moments(const float *x, unsigned n,
    float *s2, float *s3, float *s4)
{
    const float m = @p@_s_mean(x, n);
    unsigned i;
    *s2 = 0.0f;
    *s3 = 0.0f;
    *s4 = 0.0f;
    for (i = 0u; i < n; ++i) {
        const float d = x[i] - m;
        const float d2 = d * d;
        *s2 = *s2 + d2;
        *s3 = *s3 + d2 * d;
        *s4 = *s4 + d2 * d2;
    }
}
"""),
    "skew": (("moments",), """\
/* Skewness m3 / m2^1.5 (0 for a constant window). */
static float @p@_s_skew(const float *x, unsigned n)
{
    float s2, s3, s4, v;
    @p@_s_moments(x, n, &s2, &s3, &s4);
    v = s2 / (float)n;
    return v > 0.0f ? (s3 / (float)n) / (v * sqrtf(v)) : 0.0f;
}
"""),
    "kurtosis": (("moments",), """\
/* Excess kurtosis m4 / m2^2 - 3 (0 for a constant window). */
static float @p@_s_kurtosis(const float *x, unsigned n)
{
    float s2, s3, s4, v;
    @p@_s_moments(x, n, &s2, &s3, &s4);
    v = s2 / (float)n;
    return v > 0.0f ? (s4 / (float)n) / (v * v) - 3.0f : 0.0f;
}
"""),
    "slope": ((), """\
/* Least-squares slope against the sample index:
 * t = i - (n - 1) / 2; sum t (x[i] - x[0]) / sum t^2. */
static float @p@_s_slope(const float *x, unsigned n)
{
    const float c = ((float)n - 1.0f) / 2.0f;
    float s = 0.0f, q = 0.0f;
    unsigned i;
    for (i = 0u; i < n; ++i) {
        const float t = (float)i - c;
        s = s + t * (x[i] - x[0]);
        q = q + t * t;
    }
    return q > 0.0f ? s / q : 0.0f;
}
"""),
    "peaks": (("mean", "std"), """\
/* Local maxima above mean + k std (a plateau counts once, at its first sample). */
static float @p@_s_peaks(const float *x, unsigned n, float k)
{
    const float m = @p@_s_mean(x, n);
    const float thr = m + k * @p@_s_std(x, n);
    unsigned i, count = 0u;
    for (i = 1u; i + 1u < n; ++i) {
        if (x[i] > thr && x[i] > x[i - 1u] && x[i] >= x[i + 1u]) {
            ++count;
        }
    }
    return (float)count;
}
"""),
    "acf": ((), """\
/* Autocorrelation at a lag of the centred x (d = x - m), normalised by den = sum d * d. */
static float @p@_s_acf(const float *x, unsigned n, float m,
    unsigned lag, float den)
{
    float num = 0.0f;
    unsigned i;
    for (i = 0u; i + lag < n; ++i) {
        num = num + (x[i] - m) * (x[i + lag] - m);
    }
    return den > 0.0f ? num / den : 0.0f;
}

/* sum (x[i] - m)^2, in order. */
static float @p@_s_centred_energy(const float *x, unsigned n, float m)
{
    float den = 0.0f;
    unsigned i;
    for (i = 0u; i < n; ++i) {
        den = den + (x[i] - m) * (x[i] - m);
    }
    return den;
}
"""),
    "autocorr": (("mean", "acf"), """\
static float @p@_s_autocorr(const float *x, unsigned n, unsigned lag)
{
    const float m = @p@_s_mean(x, n);
    const float den = @p@_s_centred_energy(x, n, m);
    return @p@_s_acf(x, n, m, lag, den);
}
"""),
    "cadence": (("mean", "acf"), """\
/* Lag in [lo, hi] of the highest autocorrelation (the first of equal values), as a float. */
static float @p@_s_cadence(const float *x, unsigned n,
    unsigned lo, unsigned hi)
{
    const float m = @p@_s_mean(x, n);
    const float den = @p@_s_centred_energy(x, n, m);
    float best = @p@_s_acf(x, n, m, lo, den), where = (float)lo;
    unsigned lag;
    for (lag = lo + 1u; lag <= hi; ++lag) {
        const float r = @p@_s_acf(x, n, m, lag, den);
        if (r > best) {
            where = (float)lag;
            best = r;
        }
    }
    return where;
}
"""),
}
_SELECT = """\
/* The k-th smallest (0-based) of v[0..n-1], reordering v (Wirth's selection). */
static @T@ @p@_@S@select(@T@ *v, unsigned n, unsigned k)
{
    int32_t lo = 0, hi = (int32_t)n - 1;
    const int32_t kk = (int32_t)k;
    while (lo < hi) {
        const @T@ pivot = v[kk];
        int32_t i = lo, j = hi;
        do {
            while (v[i] < pivot) {
                ++i;
            }
            while (pivot < v[j]) {
                --j;
            }
            if (i <= j) {
                const @T@ t = v[i];
                v[i] = v[j];
                v[j] = t;
                ++i;
                --j;
            }
        } while (i <= j);
        if (j < kk) {
            lo = i;
        }
        if (kk < i) {
            hi = j;
        }
    }
    return v[kk];
}
"""
ROUTINES["percentile"] = ((), _SELECT.replace("@T@", "float").replace("@S@", "s_"))
ROUTINES["qpercentile"] = ((), _SELECT.replace("@T@", "int16_t").replace("@S@", "q_"))
