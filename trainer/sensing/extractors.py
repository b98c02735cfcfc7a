"""The extractor library: window statistics with exact float32 definitions (the C reference).

A window is ``N`` consecutive samples ``x[0] .. x[N-1]`` of a channel, oldest first. Every
extractor turns a window (one channel, or several channels for the multi-channel kinds) into
one float32 number. Samples are converted to float32 (round to nearest) before anything else.

Arithmetic contract
-------------------
Each extractor's docstring gives its definition as a sequence of IEEE-754 binary32 operations
(``+ - * /`` and ``sqrtf``, each rounded to nearest-even, comparisons exact), evaluated in
exactly the written order. C reproduces the values bit for bit when it does the same: no fused
multiply-add and no reassociation (``gcc -std=c99`` implies ``-ffp-contract=off``; never
``-ffast-math``), ``FLT_EVAL_METHOD == 0`` (no x87 extended precision), and correctly rounded
float operations (hardware FPUs such as Cortex-M4F; some soft-float libraries are not).
``(float)N`` is the window length converted to float (exact for ``N < 2**24``).

The implementations below loop over the sample index and vectorise over windows (arrays of
shape ``(N, n_windows)``), so every window goes through the scalar sequence exactly; the tests
compare them bit for bit with a literal scalar transcription of the docstrings.

Fixed point
-----------
``mean, min, max, ptp, last, energy, mad, zcr, rms, mag_mean, mag_max`` also have a
fixed-point definition on Q15 input (int16 ``q``, real value ``q * full_scale / 32768``), see
:func:`extract_q15` (integer sums, integer square roots: :mod:`sensorbudget.trainer.sensing.q15`);
``std``, ``mag_std`` and ``corr`` need a wide division or several roots and are float-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import DataError
from . import shape, spectral
from .q15 import isqrt32, magnitude_q15, magnitude_shifts
from .shape import mean, std

F32 = np.float32


def window_view(signal, starts, length: int) -> np.ndarray:
    """Float32 windows of shape (length, n_windows): column w is ``signal[starts[w]:+length]``."""
    x = np.asarray(signal).astype(F32)
    index = np.arange(length)[:, None] + np.asarray(starts, dtype=np.intp)[None, :]
    return x[index]


def _zeros(w: np.ndarray) -> np.ndarray:
    return np.zeros(w.shape[1], dtype=F32)


def minimum(w: np.ndarray) -> np.ndarray:
    """Minimum: ``m = x[0]; for i in 1..N-1: if (x[i] < m) m = x[i]; return m``."""
    m = w[0].copy()
    for row in w[1:]:
        m = np.where(row < m, row, m)
    return m


def maximum(w: np.ndarray) -> np.ndarray:
    """Maximum: ``m = x[0]; for i in 1..N-1: if (x[i] > m) m = x[i]; return m``."""
    m = w[0].copy()
    for row in w[1:]:
        m = np.where(row > m, row, m)
    return m


def ptp(w: np.ndarray) -> np.ndarray:
    """Peak to peak: ``max - min`` (one float subtraction of the two values above)."""
    return maximum(w) - minimum(w)


def energy(w: np.ndarray) -> np.ndarray:
    """Energy (sum of squares): ``s = 0; for i in 0..N-1: s = s + x[i] * x[i]; return s``."""
    s = _zeros(w)
    for row in w:
        s = s + row * row
    return s


def rms(w: np.ndarray) -> np.ndarray:
    """Root mean square: ``sqrtf(energy / (float)N)`` with ``energy`` as above."""
    return np.sqrt(energy(w) / F32(w.shape[0]))


def mad(w: np.ndarray) -> np.ndarray:
    """Mean absolute first difference (needs N >= 2).

    ``s = 0; for i in 1..N-1: s = s + fabsf(x[i] - x[i-1]); return s / (float)(N-1)``
    """
    s = _zeros(w)
    for i in range(1, w.shape[0]):
        s = s + np.abs(w[i] - w[i - 1])
    return s / F32(w.shape[0] - 1)


def zcr(w: np.ndarray) -> np.ndarray:
    """Zero-crossing rate around the window mean (needs N >= 2).

    ``m = mean(x)`` (as above); ``c = 0; for i in 1..N-1: if ((x[i-1] < m) != (x[i] < m)) c++;``
    ``return (float)c / (float)(N-1)`` (``c`` is an integer count, so its order is free).
    """
    below = w < mean(w)
    count = np.count_nonzero(below[1:] != below[:-1], axis=0)
    return count.astype(F32) / F32(w.shape[0] - 1)


def last(w: np.ndarray) -> np.ndarray:
    """Last value: ``x[N-1]`` (the newest sample)."""
    return w[-1].copy()


def magnitude(ws) -> np.ndarray:
    """Per-sample vector magnitude of channels c0..c(k-1), in the listed channel order.

    ``for i: { s = 0; for j in 0..k-1: s = s + c_j[i] * c_j[i]; a[i] = sqrtf(s); }``
    """
    s = np.zeros_like(ws[0])
    for w in ws:
        s = s + w * w
    return np.sqrt(s)


def mag_mean(ws) -> np.ndarray:
    """``mean`` of the magnitude sequence ``a`` (see :func:`magnitude`, :func:`mean`)."""
    return mean(magnitude(ws))


def mag_std(ws) -> np.ndarray:
    """``std`` of the magnitude sequence ``a`` (see :func:`magnitude`, :func:`std`)."""
    return std(magnitude(ws))


def mag_max(ws) -> np.ndarray:
    """``max`` of the magnitude sequence ``a`` (see :func:`magnitude`, :func:`maximum`)."""
    return maximum(magnitude(ws))


def corr(ws) -> np.ndarray:
    """Pearson correlation of two channels x, y over the window (needs N >= 2), in [-1, 1].

    ``sx = sy = sxx = syy = sxy = 0; for i in 0..N-1: { dx = x[i] - x[0]; dy = y[i] - y[0];``
    ``sx = sx + dx; sy = sy + dy; sxx = sxx + dx * dx; syy = syy + dy * dy; sxy = sxy + dx * dy; }``
    ``n = (float)N; mx = sx / n; my = sy / n; cxx = sxx / n - mx * mx; cyy = syy / n - my * my;``
    ``cxy = sxy / n - mx * my; if (cxx <= 0 || cyy <= 0) return 0;``
    ``r = cxy / (sqrtf(cxx) * sqrtf(cyy)); return r > 1 ? 1 : (r < -1 ? -1 : r)``
    """
    x, y = ws
    sx, sy, sxx, syy, sxy = (_zeros(x) for _ in range(5))
    for xi, yi in zip(x, y):
        dx, dy = xi - x[0], yi - y[0]
        sx, sy = sx + dx, sy + dy
        sxx, syy, sxy = sxx + dx * dx, syy + dy * dy, sxy + dx * dy
    n = F32(x.shape[0])
    mx, my = sx / n, sy / n
    cxx, cyy, cxy = sxx / n - mx * mx, syy / n - my * my, sxy / n - mx * my
    ok = (cxx > 0) & (cyy > 0)
    den = np.sqrt(np.where(ok, cxx, F32(1))) * np.sqrt(np.where(ok, cyy, F32(1)))
    r = cxy / den
    return np.where(ok, np.clip(r, F32(-1), F32(1)), F32(0))


@dataclass(frozen=True)
class ExtractorKind:
    """One entry of the library: how many channels it takes and the shortest window it needs.

    ``arity`` is ``"1"`` (computed per channel), ``"2"`` (exactly two channels, meant for
    channels of two different sensors) or ``"2+"`` (two or more channels, e.g. a 3-axis vector).
    ``arg`` names the argument the kind requires (``percentile:90``: ``p``), with its range
    (:data:`ARGS`); ``firmware`` says whether ``firmware_gen`` generates C for it.
    """

    name: str
    arity: str
    min_window: int
    fixed_point: bool
    compute: Callable
    arg: str = ""
    firmware: bool = True
    spectral: bool = False      # reads the channel's power spectrum (the FFT transform)

    @property
    def per_channel(self) -> bool:
        return self.arity == "1"


KINDS = {k.name: k for k in (
    ExtractorKind("mean", "1", 1, True, mean),
    ExtractorKind("std", "1", 1, False, std),
    ExtractorKind("min", "1", 1, True, minimum),
    ExtractorKind("max", "1", 1, True, maximum),
    ExtractorKind("ptp", "1", 1, True, ptp),
    ExtractorKind("rms", "1", 1, True, rms),
    ExtractorKind("mad", "1", 2, True, mad),
    ExtractorKind("zcr", "1", 2, True, zcr),
    ExtractorKind("energy", "1", 1, True, energy),
    ExtractorKind("last", "1", 1, True, last),
    ExtractorKind("mag_mean", "2+", 1, True, mag_mean),
    ExtractorKind("mag_std", "2+", 1, False, mag_std),
    ExtractorKind("mag_max", "2+", 1, True, mag_max),
    ExtractorKind("corr", "2", 2, False, corr),
    ExtractorKind("skew", "1", 1, False, shape.skew),
    ExtractorKind("kurtosis", "1", 1, False, shape.kurtosis),
    ExtractorKind("slope", "1", 1, False, shape.slope),
    ExtractorKind("peaks", "1", 3, False, shape.peaks, arg="k"),
    ExtractorKind("percentile", "1", 1, True, shape.percentile, arg="p"),
    ExtractorKind("bandpower", "1", 2, False, spectral.bandpower, arg="band",
                  spectral=True),
    ExtractorKind("bandratio", "1", 2, False, spectral.bandratio, arg="bands",
                  spectral=True),
    ExtractorKind("domfreq", "1", 2, False, spectral.domfreq, spectral=True),
    ExtractorKind("centroid", "1", 2, False, spectral.centroid, spectral=True),
    ExtractorKind("entropy", "1", 4, False, spectral.entropy, spectral=True),
    ExtractorKind("autocorr", "1", 2, False, spectral.autocorr, arg="lag"),
    ExtractorKind("cadence", "1", 3, False, spectral.cadence, arg="lags"),
)}
#: argument name -> (lowest, highest, lowest allowed, highest allowed) of the kinds that take one
ARGS = {"p": (0.0, 100.0, False, True), "k": (0.0, 100.0, True, True)}


def get_kind(name: str) -> ExtractorKind:
    """The library entry called ``name``; raises :class:`DataError` naming the known kinds."""
    try:
        return KINDS[name]
    except KeyError:
        raise DataError(f"unknown extractor {name!r}; known extractors: "
                        f"{', '.join(KINDS)}") from None


def extract(kind: str, windows, arg=None, rate=None, window: str = "hann") -> np.ndarray:
    """Values of extractor ``kind`` for every window, float32 of shape (n_windows,).

    ``windows`` is an array of shape (N, n_windows) for per-channel kinds, or a sequence of
    such arrays (one per channel, in the feature's channel order) for multi-channel kinds;
    ``arg`` is the argument of the kinds that take one (``percentile``: p, ``peaks``: k);
    spectral kinds need the sample ``rate`` (Hz) and the FFT's ``window`` (hann or rect).
    """
    entry = get_kind(kind)
    if bool(entry.arg) != (arg is not None):
        what = f"the argument {entry.arg}" if entry.arg else "no argument"
        raise DataError(f"extractor {kind!r} takes {what} (got {arg!r})")
    if entry.per_channel:
        w = np.asarray(windows, dtype=F32)
        n_channels = 1
    else:
        w = [np.asarray(c, dtype=F32) for c in windows]
        n_channels = len(w)
        if (entry.arity == "2" and n_channels != 2) or n_channels < 2:
            raise DataError(f"extractor {kind!r} takes {entry.arity} channels; got {n_channels}")
    length = (w if entry.per_channel else w[0]).shape[0]
    if length < entry.min_window:
        raise DataError(f"extractor {kind!r} needs a window of at least {entry.min_window} "
                        f"samples (window={length})")
    if entry.spectral:
        if rate is None:
            raise DataError(f"extractor {kind!r} needs the sample rate")
        P = spectral.power_spectrum(w, window)
        return (entry.compute(P, length, rate) if arg is None
                else entry.compute(P, arg, length, rate))
    return entry.compute(w) if arg is None else entry.compute(w, arg)


def _trunc_div(num: np.ndarray, den: int) -> np.ndarray:
    """C99 integer division (truncates toward zero)."""
    q = np.abs(num) // den
    return np.where(num < 0, -q, q)


def extract_q15(kind: str, q, full_scale=None, arg=None) -> np.ndarray:
    """Fixed-point value of ``kind`` on Q15 windows ``q`` (int16, shape (N, n_windows)), int64.

    Multi-channel kinds (``mag_mean``, ``mag_max``) take a sequence of such windows (the
    feature's channel order) and ``full_scale``, the channels' full scales (powers of two).
    Definitions (C types in brackets; ``/`` truncates toward zero as in C99):

    - ``mean``: ``[int32] s = sum q[i]`` (in order; no overflow for N <= 65535); ``s / N`` (Q15).
    - ``min``, ``max``, ``last``: as the float definitions, on int16 (Q15).
    - ``ptp``: ``[int32] max - min`` (Q15, up to 65535).
    - ``energy``: ``[int64] s += (int32)q[i] * q[i]`` (Q30: real = s * full_scale**2 / 2**30).
    - ``rms``: ``isqrt32(energy / N)`` (Q15, 0..32768; ``energy / N <= 2**30``), one integer
      square root per window (:func:`sensorbudget.trainer.sensing.q15.isqrt32`, ``floor(sqrt(.))``).
    - ``mag_mean``, ``mag_max``: the per-sample magnitude ``a[i]`` of
      :func:`sensorbudget.trainer.sensing.q15.magnitude_q15` (one integer root per sample, unit
      ``2**e * max(full_scale) / 32768``); ``[uint32] s = sum a[i]; s / N``, or ``max a[i]``.
    - ``mad``: ``[int32] s += abs(q[i] - q[i-1])`` (N <= 32768); ``s / (N-1)`` (Q15).
    - ``percentile`` (``arg`` = p): the nearest-rank order statistic, as the float one (Q15).
    - ``zcr``: with ``s`` the int32 sum, ``below[i] = (int64)N * q[i] < s`` (exact comparison
      with the mean); the integer crossing count ``c`` (real value ``c / (N-1)``).
    """
    entry = get_kind(kind)
    if not entry.fixed_point:
        fixed = [k for k, e in KINDS.items() if e.fixed_point]
        raise DataError(f"extractor {kind!r} has no fixed-point definition; those that do: "
                        f"{', '.join(fixed)}")
    qs = [np.asarray(q)] if entry.per_channel else [np.asarray(c) for c in q]
    if any(c.dtype != np.int16 for c in qs):
        raise DataError(f"Q15 windows must be int16 (got {qs[0].dtype})")
    n = qs[0].shape[0]
    if n < entry.min_window or n > 32768:
        raise DataError(f"window={n} samples is outside {entry.min_window}..32768 for the "
                        f"fixed-point {kind!r}")
    if not entry.per_channel:
        if full_scale is None or len(full_scale) != len(qs):
            raise DataError(f"the fixed-point {kind!r} needs the full scale of each of its "
                            f"{len(qs)} channels (got {full_scale!r})")
        a = magnitude_q15(qs, full_scale)
        return a.max(axis=0) if kind == "mag_max" else a.sum(axis=0) // n
    v = qs[0].astype(np.int64)
    if kind == "percentile":
        if arg is None:
            raise DataError("the fixed-point 'percentile' needs its argument p")
        return shape.percentile(v, arg)
    if kind in ("min", "max", "last", "ptp"):
        lo, hi = v.min(axis=0), v.max(axis=0)
        return {"min": lo, "max": hi, "last": v[-1], "ptp": hi - lo}[kind]
    if kind in ("energy", "rms"):
        e = (v * v).sum(axis=0)
        return e if kind == "energy" else isqrt32(e // n)
    if kind == "mad":
        return _trunc_div(np.abs(np.diff(v, axis=0)).sum(axis=0), n - 1)
    s = v.sum(axis=0)
    if kind == "mean":
        return _trunc_div(s, n)
    below = n * v < s
    return np.count_nonzero(below[1:] != below[:-1], axis=0).astype(np.int64)


def q15_to_real(kind: str, raw, full_scale, window: int) -> np.ndarray:
    """Real value (float64) of an :func:`extract_q15` result for a channel of ``full_scale``
    (for ``mag_mean`` / ``mag_max``: the sequence of the channels' full scales)."""
    raw = np.asarray(raw, dtype=np.float64)
    if kind in ("mag_mean", "mag_max"):
        return raw * magnitude_shifts(full_scale)[2]
    if kind == "energy":
        return raw * full_scale ** 2 / 2.0 ** 30
    if kind == "zcr":
        return raw / (window - 1)
    return raw * full_scale / 2.0 ** 15
