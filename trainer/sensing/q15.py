"""Integer building blocks of the Q15 extractor definitions (square roots, magnitudes).

A Q15 sample ``q`` (int16) of a channel with full scale ``fs`` has the real value
``q * fs / 32768``. Everything here is exact integer arithmetic, so the generated C reproduces
it exactly whatever order or method it uses (the C may, for example, update a sum as the window
slides, or take one root of the largest squared magnitude instead of the largest root).
"""

from __future__ import annotations

import math

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
