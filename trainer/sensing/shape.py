"""Shape extractors and window preprocessing, with exact float32 definitions (issue 18).

Same contract as :mod:`sensorbudget.trainer.sensing.extractors`: windows are float32 arrays of shape
``(N, n_windows)``, each docstring gives the definition as a sequence of binary32 operations in
the written order (``mean(x)`` and ``std(x)``, defined here, are also the library's ``mean`` and
``std``), and the implementations loop over the sample index so every window goes through that
sequence.

Mean-crossing rate: the library's ``zcr`` already counts crossings of the window mean.

``percentile`` is the nearest-rank order statistic: no arithmetic, so it is exact in float32
and in Q15 alike. On an MCU it needs the window's values in order: a copy of the window
(``N`` samples of RAM) and a selection (quickselect, on average about ``2 N`` compares and
swaps; a sort is ``N log2 N``), against one compare per sample for ``min``/``max``.
"""

from __future__ import annotations

import math

import numpy as np

F32 = np.float32


def _zeros(w: np.ndarray) -> np.ndarray:
    return np.zeros(w.shape[1], dtype=F32)


def mean(w: np.ndarray) -> np.ndarray:
    """Mean: ``s = 0; for i in 0..N-1: s = s + x[i]; return s / (float)N``."""
    s = _zeros(w)
    for row in w:
        s = s + row
    return s / F32(w.shape[0])


def std(w: np.ndarray) -> np.ndarray:
    """Population standard deviation, shifted by the first sample (one pass, stable).

    ``s1 = 0; s2 = 0; for i in 0..N-1: { d = x[i] - x[0]; s1 = s1 + d; s2 = s2 + d * d; }``
    ``m = s1 / (float)N; v = s2 / (float)N - m * m; return v > 0 ? sqrtf(v) : 0``
    """
    s1, s2 = _zeros(w), _zeros(w)
    for row in w:
        d = row - w[0]
        s1 = s1 + d
        s2 = s2 + d * d
    n = F32(w.shape[0])
    m = s1 / n
    v = s2 / n - m * m
    return np.where(v > 0, np.sqrt(np.maximum(v, F32(0))), F32(0))


def _central(w):
    """(m, s2, s3, s4): ``m = mean(x); for i: { d = x[i] - m; d2 = d * d; s2 = s2 + d2;
    s3 = s3 + d2 * d; s4 = s4 + d2 * d2; }``."""
    m = mean(w)
    s2, s3, s4 = _zeros(w), _zeros(w), _zeros(w)
    for row in w:
        d = row - m
        d2 = d * d
        s2 = s2 + d2
        s3 = s3 + d2 * d
        s4 = s4 + d2 * d2
    return m, s2, s3, s4


def skew(w: np.ndarray) -> np.ndarray:
    """Skewness (population, biased) ``m3 / m2**1.5``.

    With ``m, s2, s3`` from one pass after the mean (``d = x[i] - m; d2 = d * d;
    s2 = s2 + d2; s3 = s3 + d2 * d``): ``n = (float)N; v = s2 / n;``
    ``return v > 0 ? (s3 / n) / (v * sqrtf(v)) : 0``.
    """
    _, s2, s3, _ = _central(w)
    n = F32(w.shape[0])
    v = s2 / n
    ok = v > 0
    den = np.where(ok, v * np.sqrt(np.where(ok, v, F32(1))), F32(1))
    return np.where(ok, (s3 / n) / den, F32(0))


def kurtosis(w: np.ndarray) -> np.ndarray:
    """Excess kurtosis (population, biased) ``m4 / m2**2 - 3``.

    With ``s2, s4`` of the same pass (``s4 = s4 + d2 * d2``): ``n = (float)N; v = s2 / n;``
    ``return v > 0 ? (s4 / n) / (v * v) - 3 : 0``.
    """
    _, s2, _, s4 = _central(w)
    n = F32(w.shape[0])
    v = s2 / n
    ok = v > 0
    return np.where(ok, (s4 / n) / np.where(ok, v * v, F32(1)) - F32(3), F32(0))


def slope(w: np.ndarray) -> np.ndarray:
    """Least-squares slope of the window against the sample index (units per sample).

    ``c = ((float)N - 1) / 2; s = 0; q = 0; for i: { t = (float)i - c;``
    ``s = s + t * (x[i] - x[0]); q = q + t * t; } return q > 0 ? s / q : 0`` (the sum of
    ``t`` is 0, so subtracting ``x[0]`` changes the slope only by rounding, and keeps it
    accurate on a large offset).
    """
    n = w.shape[0]
    c = (F32(n) - F32(1)) / F32(2)
    s, q = _zeros(w), F32(0)
    for i, row in enumerate(w):
        t = F32(i) - c
        s = s + t * (row - w[0])
        q = F32(q + t * t)
    return s / q if q > 0 else _zeros(w)


def peaks(w: np.ndarray, k: float) -> np.ndarray:
    """Number of local maxima above ``mean + k * std`` (a float count).

    ``thr = m + (float)k * sd`` with ``m = mean(x)``, ``sd = std(x)`` (the library's
    definitions); ``c`` counts ``i`` in ``1..N-2`` with ``x[i] > thr && x[i] > x[i-1] &&
    x[i] >= x[i+1]`` (a plateau counts once, at its first sample); ``return (float)c``.
    """
    thr = mean(w) + F32(k) * std(w)
    mid = w[1:-1]
    hit = (mid > thr) & (mid > w[:-2]) & (mid >= w[2:])
    return np.count_nonzero(hit, axis=0).astype(F32)


def percentile(w: np.ndarray, p: float) -> np.ndarray:
    """Nearest-rank percentile ``p`` in (0, 100]: the ``r``-th smallest value, ``r =
    ceil(p / 100 * N)`` (1-based, at least 1). No arithmetic on the samples.

    ``r`` is computed exactly as ``ceil(p * N / 100)`` on the decimal ``p`` (``p = 50``,
    ``N = 4`` gives ``r = 2``). Float values are returned as ``v + 0.0f`` (a zero is +0).
    """
    n = w.shape[0]
    r = max(1, min(n, math.ceil(round(p * n, 9) / 100)))
    out = np.sort(w, axis=0, kind="stable")[r - 1]
    # a float zero is returned as +0: the C selection need not know which of -0 / +0 (equal
    # to the comparisons) the stable sort ranks first
    return out + out.dtype.type(0)


def jerk(w: np.ndarray) -> np.ndarray:
    """First difference ``d[i] = x[i+1] - x[i]`` for ``i in 0..N-2`` (N-1 values; per sample)."""
    return w[1:] - w[:-1]


def highpass(w: np.ndarray, alpha: float) -> np.ndarray:
    """First-order high-pass IIR restarted in each window (``0 < alpha < 1``).

    ``y[0] = 0; for i in 1..N-1: y[i] = (float)alpha * (y[i-1] + (x[i] - x[i-1]))``
    (N values; its DC gain is 0, its -3 dB corner about ``(1 - alpha) / (2 pi)`` of the
    sample rate).
    """
    a = F32(alpha)
    y = np.empty_like(w)
    y[0] = 0
    for i in range(1, w.shape[0]):
        y[i] = a * (y[i - 1] + (w[i] - w[i - 1]))
    return y
