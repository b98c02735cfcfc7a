"""Integer building blocks of the Q15 extractor definitions (square roots, magnitudes).

A Q15 sample ``q`` (int16) of a channel with full scale ``fs`` has the real value
``q * fs / 32768``. Everything here is exact integer arithmetic, so the generated C reproduces
it exactly whatever order or method it uses (the C may, for example, update a sum as the window
slides, or take one root of the largest squared magnitude instead of the largest root).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import DataError

#: largest argument of :func:`isqrt32` (its root, 65535, fits 16 bits)
ISQRT_MAX = 65535 * 65535


def isqrt32(v) -> np.ndarray:
    """Integer square root: ``floor(sqrt(v))`` elementwise, for integers ``0 <= v <= 65535**2``.

    The identity: the result ``r`` is the unique integer with ``r*r <= v < (r+1)*(r+1)``.
    (Float64 ``sqrt`` of an integer below 2**32 is within 1e-5 of the true root, and the two
    integer comparisons correct any rounding to that unique ``r``.)

    >>> isqrt32(np.array([0, 1, 3, 4, 15, 16, 65535 ** 2])).tolist()
    [0, 1, 1, 2, 3, 4, 65535]
    """
    v = np.asarray(v, dtype=np.int64)
    r = np.floor(np.sqrt(v.astype(np.float64))).astype(np.int64)
    r = r - (r * r > v)
    return r + ((r + 1) * (r + 1) <= v)


def magnitude_shifts(full_scale) -> tuple:
    """(shift per channel, extra shift ``e``, real value of one unit) of a Q15 magnitude.

    ``F = max(full_scale)``; channel ``j`` with full scale ``F / 2**r_j`` contributes
    ``q_j * q_j >> (2 r_j + 2 e)``, where ``e >= 0`` is the smallest with ``k * 2**(30 - 2e) <
    2**32`` (``e = 0`` for up to 3 channels), so the sum of ``k`` terms fits a uint32 and its
    root 16 bits. One unit of the root is ``2**e * F / 32768``. Full scales are powers of two.

    >>> magnitude_shifts([4.0, 4.0, 2.0])
    ((0, 0, 2), 0, 0.0001220703125)
    """
    scales = [float(f) for f in full_scale]
    top = max(scales)
    r = [int(round(math.log2(top / f))) for f in scales]
    if any(top / 2.0 ** rj != f for rj, f in zip(r, scales)):
        raise DataError(f"full scales {scales} are not powers of two apart")
    e = 0
    while len(scales) * 2 ** (30 - 2 * e) >= 2 ** 32:
        e += 1
    return tuple(2 * rj + 2 * e for rj in r), e, 2.0 ** e * top / 32768.0


def magnitude_q15(qs, full_scale) -> np.ndarray:
    """Per-sample Q15 magnitude ``a[i] = isqrt32(sum_j ((int32)q_j[i] * q_j[i] >> s_j))`` (uint32
    sum, shifts ``s_j`` from :func:`magnitude_shifts`), int64 of the windows' shape.

    >>> magnitude_q15([np.array([3]), np.array([-4])], [1.0, 1.0]).tolist()
    [5]
    """
    shifts, _, _ = magnitude_shifts(full_scale)
    m2 = sum((np.asarray(q, dtype=np.int64) ** 2) >> s for q, s in zip(qs, shifts))
    return isqrt32(m2)


#: range of the integer value of each Q15 kind quantised from integers (a superset is enough:
#: it only bounds the clamp); energy is the shifted sum of :func:`energy_shift`
RAW_RANGE = {"mean": (-32768, 32767), "min": (-32768, 32767), "max": (-32768, 32767),
             "last": (-32768, 32767), "percentile": (-32768, 32767), "ptp": (0, 65535),
             "mad": (0, 65535), "rms": (0, 32768), "mag_mean": (0, 65535),
             "mag_max": (0, 65535), "energy": (0, 2 ** 24 - 1)}


def energy_shift(window: int) -> int:
    """Right shift that takes a window's Q30 energy (``<= window * 2**30``) below ``2**24``, so
    the shifted value converts to float32 exactly: ``window.bit_length() + 6``.

    >>> energy_shift(64), (64 * 2 ** 30) >> energy_shift(64) < 2 ** 24
    (13, True)
    """
    return int(window).bit_length() + 6


@dataclass(frozen=True)
class IntQuantizer:
    """A model input quantised straight from an integer feature ``r`` (no float arithmetic).

    The float quantiser of the header computes ``q = sat(round(u))`` with ``u = (r * unit -
    offset) * inv_scale``. This one computes, in 32-bit integers and one high-word multiply::

        x = (clamp(r, lo, hi) - mid) * 2**pre          (|x| < 2**30)
        w = (x * mult) >> 32                           (the high word of a 32 x 32 product)
        q = sat((w + add) >> frac)                     (>> floors)

    with ``mult = round(unit * inv_scale * 2**(32 + frac - pre))`` and ``add = round(u(mid) *
    2**frac) + 2**(frac-1)``, i.e. ``floor(v + 1/2)`` (a tie rounds up) of ``v = (w + add -
    2**(frac-1)) / 2**frac``, an approximation of ``u`` with ``|v - u| < (1 + 1/8 + 1/2) /
    2**frac <= 2**-7`` (``frac`` = 8: the floor of ``w``, the rounding of ``mult`` times
    ``|x| / 2**32 < 1/4``, the rounding of ``add``). So ``|q - u| <= 1/2 + 2**-7`` inside the
    saturation limits, within the ``1/2 + 2**-6`` input step the header's error bound allows its
    float quantiser (:data:`sensorbudget.export.fixed_point.QUANT_SLACK`). ``lo``, ``hi``: the
    integers beyond which ``u`` saturates anyway (``u(lo) <= -qmax``, ``u(hi) >= qmax``, cut to
    the kind's range); ``mid`` their middle; ``pre`` the largest shift with ``|x| < 2**30``.
    """

    lo: int
    hi: int
    mid: int
    pre: int
    mult: int
    add: int
    frac: int
    qmax: int = 32767

    def apply(self, raw) -> np.ndarray:
        """The integer inputs (int64) of the integer features ``raw``.

        >>> q = int_quantizer(1 / 32768, 0.0, 32767 / 2.0, (-32768, 32767))
        >>> q.apply(np.array([-32768, -16384, 0, 1, 16384])).tolist()   # -16383.5: a tie
        [-16384, -8192, 0, 0, 8192]
        """
        x = (np.clip(np.asarray(raw, dtype=np.int64), self.lo, self.hi) - self.mid) << self.pre
        w = (x * self.mult) >> 32
        return np.clip((w + self.add) >> self.frac, -self.qmax, self.qmax)


def int_quantizer(unit, offset, inv_scale, raw_range, qmax: int = 32767, frac: int = 8):
    """The :class:`IntQuantizer` of an integer feature whose real value is ``r * unit``, for
    the header's float ``offset`` and ``inv_scale``; None when it does not fit 32 bits (a
    training range narrower than about 2**-5 of one integer step)."""
    from fractions import Fraction

    a = Fraction(float(unit)) * Fraction(float(inv_scale))
    oi = Fraction(float(offset)) * Fraction(float(inv_scale))
    rmin, rmax = raw_range
    lo = min(max(math.floor((oi - qmax) / a), rmin), rmax)
    hi = min(max(math.ceil((oi + qmax) / a), rmin), rmax)
    mid = (lo + hi) // 2
    span = max(hi - mid, mid - lo, 1)
    pre = 30 - span.bit_length()
    if pre < 0:
        return None
    mult = math.floor(a * 2 ** (32 + frac - pre) + Fraction(1, 2))
    add = math.floor((mid * a - oi) * 2 ** frac + Fraction(1, 2)) + (1 << (frac - 1))
    w_max = (span << pre) * mult // 2 ** 32 + 1
    if not 0 < mult < 2 ** 31 or w_max + abs(add) >= 2 ** 31:
        return None
    return IntQuantizer(lo, hi, mid, pre, mult, add, frac, qmax)
