"""Spectral and autocorrelation extractors with exact float32 definitions (issue 18).

The spectrum of a channel's window (``N`` samples, rate ``fs``) is one transform, shared by every
spectral feature of that channel (the cost model's transform level). Its float32 definition, in
the order the generated C must follow (no fused multiply-add):

1. ``m = mean(x)`` (the library's sequential mean); ``d[i] = x[i] - m``.
2. Window: Hann ``d[i] = d[i] * h[i]`` with the table ``h[i] = (float)(0.5 - 0.5 cos(2 pi i / N))``
   (periodic Hann, each entry rounded once from double), or rectangular (nothing).
3. ``d`` zero-padded to ``M``, the smallest power of two >= max(N, 2); ``H = M / 2``.
4. A real FFT as an ``H``-point complex one (what CMSIS-DSP's ``arm_rfft_fast_f32`` does): the
   pairs ``z[j] = d[2j] + i d[2j+1]`` in bit-reversed order of ``H`` (``re[rev[j]] = d[2j]``,
   ``im[rev[j]] = d[2j+1]``), then radix-2 decimation-in-time stages of length ``L = 2, 4, .. H``
   (:func:`twiddles`: ``wr[j] = (float)cos(2 pi j / M)``, ``wi[j] = (float)-sin(2 pi j / M)``,
   exact ``(1, 0)`` at ``j = 0`` and ``(0, -1)`` at ``j = M/4``); for every block and ``k < L/2``,
   ``i`` the block's ``k``-th, ``j = i + L/2`` and the twiddle index ``t = k M / L``: ``(tr, ti) =
   (re[j], im[j])`` if ``t = 0``, ``(im[j], -re[j])`` if ``t = M/4``, else ``tr = wr * re[j] - wi *
   im[j]; ti = wr * im[j] + wi * re[j]``; then ``re[j] = re[i] - tr; im[j] = im[i] - ti; re[i] =
   re[i] + tr; im[i] = im[i] + ti``. (The C runs two stages per pass, radix 2^2, the same
   operations: a pass's four-point groups are closed under its two stages.)
5. The split into the spectrum of ``d``, twice scaled (exact: a power of two): ``X0 = re[0] +
   im[0]``, ``XH = re[0] - im[0]``, ``P[0] = X0 * X0``, ``P[H] = XH * XH``; for ``k = 1 .. H/2``
   with ``q = H - k``, ``(ar, ai) = Z[k]``, ``(cr, ci) = Z[q]`` and ``(wr, wi)`` the twiddle ``k``:
   ``er = ar + cr; ei = ai - ci; or = ai + ci; oi = cr - ar; A = wr * or - wi * oi; B = wr * oi +
   wi * or``; ``xr = er + A; xi = ei + B; P[k] = 0.25 * (xr * xr + xi * xi)`` and, if ``q != k``
   (bin ``q``'s twiddle is ``(-wr, wi)``: its ``A`` is ``-A``, its ``B`` is ``B``), ``xr = er - A;
   xi = B - ei; P[q] = 0.25 * (xr * xr + xi * xi)``. Bin ``k`` is the frequency ``k fs / M``.

One FFT buffer per channel (``M`` floats used of ``2 M``) and three tables (``N + M`` floats
and ``H`` indices); the butterflies are ``(M/4) log2(M/2)``, the split ``M/4`` steps of two
bins. Goertzel computes one bin in ``N`` multiply-adds with no buffer, so it is cheaper only for
fewer than about ``log2 M`` bins (a 3-8 Hz band at 64 Hz and N = 64 spans 5 bins, log2 64 = 6;
one bin, such as a cadence line, is a Goertzel case): the extractors here take bands
and whole-spectrum statistics, so they read the shared FFT.

Bands ``[lo, hi)`` select the bins ``k = 1 .. M/2`` with ``lo <= k fs / M < hi`` (exact
rationals; DC, bin 0, is never in a band: the mean is removed anyway).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

F32 = np.float32
#: log2 on float32 (for the entropy): frexp, then this polynomial in t = 2 m - 1 (m in [0.5, 1)),
#: Horner from the highest coefficient, each step rounded: the least-squares degree-6 fit of
#: log2(1 + t) on [0, 1] (max error 5e-6), fixed here so the C computes the same bits with any libm
LOG2_POLY = tuple(F32(c) for c in (-0.024825984612107277, 0.11790686100721359,
                                   -0.2723558247089386, 0.4538581967353821, -0.7169875502586365,
                                   1.442395567893982, 5.060328021500027e-06))


def fft_size(n: int) -> int:
    """``M``: the smallest power of two >= max(n, 2)."""
    return max(2, 1 << (max(n, 2) - 1).bit_length())


def hann(n: int) -> np.ndarray:
    """The periodic Hann table ``(float)(0.5 - 0.5 cos(2 pi i / n))``."""
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(F32)


def _bit_reverse(m: int) -> np.ndarray:
    bits = m.bit_length() - 1
    return np.array([int(format(i, f"0{bits}b")[::-1], 2) if bits else 0 for i in range(m)])


def bit_reverse(m: int) -> list:
    """The ``m``-point bit-reversal permutation (an involution), as ints."""
    return [int(v) for v in _bit_reverse(m)]


def twiddles(m: int) -> tuple:
    """``(wr, wi)``, float32 arrays of ``M/2`` entries: ``wr[j] = (float)cos(2 pi j / M)``,
    ``wi[j] = (float)-sin(2 pi j / M)``, exactly ``(1, 0)`` at ``j = 0`` and ``(0, -1)`` at
    ``j = M/4`` (the values the butterflies' shortcuts stand for)."""
    j = np.arange(m // 2)
    wr = np.cos(2 * np.pi * j / m).astype(F32)
    wi = (-np.sin(2 * np.pi * j / m)).astype(F32)
    wr[0], wi[0] = F32(1), F32(0)
    if m >= 4:
        wr[m // 4], wi[m // 4] = F32(0), F32(-1)
    return wr, wi


def butterfly_groups(m):
    """The radix-2 stages of the H = m/2-point complex FFT on bit-reversed data, in order (the
    float and the Q15 transform share them): for each stage length L = 2, 4, ..., H and each
    k < L/2, ``(i, j, t)``: the pairs' index arrays ``i = k, k + L, ...``, ``j = i + L/2`` and the
    twiddle index ``t = k m / L`` (w = exp(-2 pi i t / m))."""
    h = m // 2
    length = 2
    while length <= h:
        half = length // 2
        for k in range(half):
            i = np.arange(k, h, length)
            yield i, i + half, k * m // length
        length *= 2


def _butterflies(re, im, m):
    """Step 4's stages on bit-reversed ``re``, ``im`` (H x windows), in place."""
    cos, sin = twiddles(m)
    for i, j, t in butterfly_groups(m):
        if t == 0:
            tr, ti = re[j], im[j]
        elif 4 * t == m:
            tr, ti = im[j], -re[j]
        else:
            tr = cos[t] * re[j] - sin[t] * im[j]
            ti = cos[t] * im[j] + sin[t] * re[j]
        re[j], im[j] = re[i] - tr, im[i] - ti
        re[i], im[i] = re[i] + tr, im[i] + ti


def _split_power(re, im, m) -> np.ndarray:
    """Step 5: ``P`` (H + 1 x windows) from the ``H``-point spectrum ``re``, ``im``."""
    h = m // 2
    P = np.empty((h + 1, re.shape[1]), dtype=F32)
    x0, xh = re[0] + im[0], re[0] - im[0]
    P[0], P[h] = x0 * x0, xh * xh
    k = np.arange(1, h // 2 + 1)
    q = h - k
    cos, sin = twiddles(m)
    wr, wi = cos[k][:, None], sin[k][:, None]
    ar, ai, cr, ci = re[k], im[k], re[q], im[q]
    er, ei, odd_r, odd_i = ar + cr, ai - ci, ai + ci, cr - ar
    a = wr * odd_r - wi * odd_i
    b = wr * odd_i + wi * odd_r
    quarter = F32(0.25)
    xr, xi = er + a, ei + b
    P[k] = quarter * (xr * xr + xi * xi)
    xr, xi = er - a, b - ei
    pairs = q != k
    P[q[pairs]] = (quarter * (xr * xr + xi * xi))[pairs]
    return P


def power_spectrum(w: np.ndarray, window: str = "hann") -> np.ndarray:
    """``P`` of shape (M/2 + 1, n_windows), float32, by the module's definition."""
    n = w.shape[0]
    s = np.zeros(w.shape[1], dtype=F32)
    for row in w:
        s = s + row
    d = w - s / F32(n)
    if window == "hann":
        d = d * hann(n)[:, None]
    m = fft_size(n)
    x = np.zeros((m, w.shape[1]), dtype=F32)
    x[:n] = d
    rev = _bit_reverse(m // 2)           # an involution: re[rev[j]] = x[2j] is re = x[0::2][rev]
    re, im = x[0::2][rev], x[1::2][rev]
    _butterflies(re, im, m)
    return _split_power(re, im, m)


def band_bins(lo: float, hi: float, n: int, rate: float) -> range:
    """Bins ``k`` in 1..M/2 with ``lo <= k rate / M < hi`` (exact rational comparison)."""
    m = fft_size(n)
    step = Fraction(rate) / m
    first = max(1, math.ceil(Fraction(lo) / step))
    last = min(m // 2, math.ceil(Fraction(hi) / step) - 1)
    return range(first, last + 1)


def _sum(P, bins) -> np.ndarray:
    s = np.zeros(P.shape[1], dtype=F32)
    for k in bins:
        s = s + P[k]
    return s


def bandpower(P, band, n: int, rate: float) -> np.ndarray:
    """``s = 0; for k in band bins (ascending): s = s + P[k]; return s``."""
    return _sum(P, band_bins(*band, n, rate))


def bandratio(P, bands, n: int, rate: float) -> np.ndarray:
    """``a = bandpower(band 1); b = bandpower(band 2); return b > 0 ? a / b : 0``."""
    a = bandpower(P, bands[:2], n, rate)
    b = bandpower(P, bands[2:], n, rate)
    return np.where(b > 0, a / np.where(b > 0, b, F32(1)), F32(0))


def _freqs(n: int, rate: float) -> np.ndarray:
    m = fft_size(n)
    return (np.arange(m // 2 + 1) * (rate / m)).astype(F32)


def domfreq(P, n: int, rate: float) -> np.ndarray:
    """``b = 1; for k in 2..M/2: if (P[k] > P[b]) b = k; return f[b]`` with the table
    ``f[k] = (float)(k * fs / M)`` (the first of equal peaks)."""
    best = np.ones(P.shape[1], dtype=np.intp)
    for k in range(2, P.shape[0]):
        best = np.where(P[k] > P[best, np.arange(P.shape[1])], k, best)
    return _freqs(n, rate)[best]


def centroid(P, n: int, rate: float) -> np.ndarray:
    """``num = 0; den = 0; for k in 1..M/2: { num = num + f[k] * P[k]; den = den + P[k]; }``
    ``return den > 0 ? num / den : 0``."""
    f = _freqs(n, rate)
    num = np.zeros(P.shape[1], dtype=F32)
    den = np.zeros(P.shape[1], dtype=F32)
    for k in range(1, P.shape[0]):
        num = num + f[k] * P[k]
        den = den + P[k]
    return np.where(den > 0, num / np.where(den > 0, den, F32(1)), F32(0))


def log2f(x: np.ndarray) -> np.ndarray:
    """log2 of positive float32 by :data:`LOG2_POLY`: ``x = m 2**e`` (frexp, exact, m in [0.5,
    1)); ``t = 2 m - 1``; Horner ``p = c0; p = p * t + c1; ...``; ``return p + (float)(e - 1)``."""
    m, e = np.frexp(np.asarray(x, dtype=F32))
    t = F32(2) * m.astype(F32) - F32(1)
    p = np.full_like(t, LOG2_POLY[0])
    for c in LOG2_POLY[1:]:
        p = p * t + c
    return p + (e - 1).astype(F32)


def entropy(P, n: int, rate: float) -> np.ndarray:
    """Normalised spectral entropy over bins 1..M/2 (0 for a flat-zero spectrum):
    ``den = sum P[k]`` (ascending); ``h = 0; for k: { p = P[k] / den; if (p > 0) h = h - p *
    log2f(p); } return h / (float)log2(M/2)`` (``log2f`` of :func:`log2f`; M/2 >= 2)."""
    den = _sum(P, range(1, P.shape[0]))
    ok = den > 0
    safe = np.where(ok, den, F32(1))
    h = np.zeros(P.shape[1], dtype=F32)
    for k in range(1, P.shape[0]):
        p = P[k] / safe
        pos = p > 0
        h = np.where(pos, h - p * log2f(np.where(pos, p, F32(1))), h)
    bins = P.shape[0] - 1
    norm = F32(math.log2(bins)) if bins > 1 else F32(1)
    return np.where(ok, h / norm, F32(0))


def _centred(w):
    s = np.zeros(w.shape[1], dtype=F32)
    for row in w:
        s = s + row
    return w - s / F32(w.shape[0])


def autocorr(w: np.ndarray, lag: int) -> np.ndarray:
    """Normalised autocorrelation at ``lag`` samples (N > lag), ``d = x - mean(x)``:
    ``num = 0; for i in 0..N-1-lag: num = num + d[i] * d[i+lag]; den = 0; for i: den = den +
    d[i] * d[i]; return den > 0 ? num / den : 0``."""
    d = _centred(w)
    return _acf(d, lag, _energy(d))


def _energy(d):
    den = np.zeros(d.shape[1], dtype=F32)
    for row in d:
        den = den + row * row
    return den


def _acf(d, lag, den):
    num = np.zeros(d.shape[1], dtype=F32)
    for i in range(d.shape[0] - lag):
        num = num + d[i] * d[i + lag]
    return np.where(den > 0, num / np.where(den > 0, den, F32(1)), F32(0))


def cadence(w: np.ndarray, lags) -> np.ndarray:
    """Lag (samples, as float) of the highest autocorrelation in ``[lo, hi]`` (``autocorr`` of
    each lag, ascending; the first of equal values): a step or stride period."""
    d = _centred(w)
    den = _energy(d)
    lo, hi = (int(v) for v in lags)
    best = _acf(d, lo, den)
    where = np.full(w.shape[1], lo, dtype=F32)
    for lag in range(lo + 1, hi + 1):
        r = _acf(d, lag, den)
        where = np.where(r > best, F32(lag), where)
        best = np.where(r > best, r, best)
    return where
