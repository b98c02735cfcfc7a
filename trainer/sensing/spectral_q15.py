"""The power spectrum of a Q15 window in integers, scaled per stage like CMSIS-DSP's
``arm_rfft_q15`` (issue 29).

The float32 definition is :mod:`.spectral`; this one runs on the int16 samples ``q`` of a window
(``N`` samples, ``M`` the power of two >= max(N, 2), ``H = M / 2``) with only integer operations,
so the generated C (:mod:`sensorbudget.firmware_gen.fft_c`, ``power_spectrum_q15``) computes the
same integers whatever its loop order. ``>>`` is the arithmetic (floor) shift, ``/`` C99's
truncating division; every intermediate fits the C type named:

1. ``s = sum q`` (int32), ``mean = s / N``, ``d[i] = q[i] - mean`` (|d| <= 65535).
2. ``u[i] = (d[i] * hq[i]) >> 17`` (int32 product, |u| <= 16384) with the Q15 Hann table
   ``hq[i] = round(32768 (0.5 - 0.5 cos(2 pi i / N)))`` in 0..32768 (:func:`hann_q15`), or
   ``u[i] = d[i] >> 2`` (rectangular: ``hq = 32768``). The two bits of headroom keep every
   butterfly's complex modulus below 2^15 (a butterfly halves ``|a| + |w b| <= 2 max``).
3. ``u`` zero-padded to ``M``; the pairs ``re[rev[j]] = u[2j]``, ``im[rev[j]] = u[2j+1]``
   (int16), then radix-2 decimation-in-time stages ``L = 2, 4, .. H`` as :mod:`.spectral`'s step
   4, each butterfly scaled by 1/2: twiddle index ``t = k M / L``; ``(tr, ti) = (re[j], im[j])``
   if ``t = 0``, ``(im[j], -re[j])`` if ``t = M/4``, else ``tr = (wr * re[j] - wi * im[j]) >>
   15; ti = (wr * im[j] + wi * re[j]) >> 15`` (int32; Q15 twiddles :func:`twiddles_q15`); then
   ``re[j] = (re[i] - tr) >> 1; im[j] = (im[i] - ti) >> 1; re[i] = (re[i] + tr) >> 1; im[i] =
   (im[i] + ti) >> 1``. The ``H``-point spectrum comes out scaled by ``1/H``.
4. The split (int32), :mod:`.spectral`'s step 5 with ``A = (wr * or - wi * oi) >> 15`` and
   ``B = (wr * oi + wi * or) >> 15``: ``P[0] = (re[0] + im[0])^2``, ``P[H] = (re[0] - im[0])^2``,
   ``P[k] = (xr >> 1)^2 + (xi >> 1)^2`` (uint32) for ``xr = er + A; xi = ei + B`` and, for bin
   ``q = H - k != k``, ``xr = er - A; xi = B - ei``.

So ``P[k]`` is ``|DFT(u)[k]|^2 / H^2`` within the roundings (at most about ``2^30``); in the
channel's units (full scale ``F``) the power of :mod:`.spectral` is ``P * (4 H F / 32768)^2``
(:func:`real_scale`). The shifts lose the low bits of small signals, as ``arm_rfft_q15`` does.

Block normalisation (``normalize=True``, what the firmware's ``fft="q15"`` runs): after step 1,
``a = max |d[i]|`` and ``k = 15 - floor(log2 a)`` (``k = 0`` for ``a = 0``), the largest shift
with ``a 2^k <= 65535``; steps 2-4 then run on ``d[i] 2^k`` (the same bound on ``|d|``, so the
same headroom), and the power in the channel's units is ``P * (4 H F / 32768)^2 / 4^k``
(:func:`block_shift`): a quiet window keeps its bits instead of losing them stage by stage.
"""

from __future__ import annotations

import numpy as np

from .spectral import bit_reverse, butterfly_groups, fft_size


def hann_q15(n: int) -> np.ndarray:
    """``round(32768 (0.5 - 0.5 cos(2 pi i / n)))``, int64 in 0..32768 (the C stores int32)."""
    return np.rint(32768.0 * (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n))).astype(np.int64)


def twiddles_q15(m: int) -> tuple:
    """``(wr, wi)``, int64 of ``M/2`` entries in int16 range: ``round(32768 cos(2 pi j / M))``
    and ``round(-32768 sin(2 pi j / M))`` clipped to -32768..32767 (entries 0 and ``M/4`` are
    never multiplied: the butterflies' shortcuts)."""
    j = np.arange(m // 2)
    wr = np.rint(32768.0 * np.cos(2 * np.pi * j / m))
    wi = np.rint(-32768.0 * np.sin(2 * np.pi * j / m))
    return (np.clip(wr, -32768, 32767).astype(np.int64),
            np.clip(wi, -32768, 32767).astype(np.int64))


def real_scale(n: int, full_scale: float) -> float:
    """Real power (the channel's units squared, as :func:`.spectral.power_spectrum`) of one
    unit of :func:`power_spectrum_q15`: ``(4 H F / 32768)^2``, exact in float64."""
    h = fft_size(n) // 2
    return (4.0 * h * float(full_scale) / 32768.0) ** 2


def _centred(q: np.ndarray) -> np.ndarray:
    """Step 1: ``d`` (N x windows, int64)."""
    q = np.asarray(q, dtype=np.int64)
    n = q.shape[0]
    s = q.sum(axis=0)
    return q - np.where(s < 0, -(-s // n), s // n)


def block_shift(q: np.ndarray) -> np.ndarray:
    """``k`` per window (int64): ``15 - floor(log2 max |d|)``, 0 for a constant window."""
    a = np.abs(_centred(q)).max(axis=0)
    return np.where(a > 0, 15 - np.floor(np.log2(np.maximum(a, 1))).astype(np.int64), 0)


def _prepare(q: np.ndarray, window: str, normalize: bool = False) -> np.ndarray:
    """Steps 1-2: ``u`` (N x windows, int64), with ``d`` scaled by ``2^k`` if ``normalize``."""
    d = _centred(q)
    if normalize:
        d = d << block_shift(q)[None, :]
    if window == "hann":
        return (d * hann_q15(d.shape[0])[:, None]) >> 17
    return d >> 2


def _butterflies(re, im, m):
    """Step 3's stages on bit-reversed ``re``, ``im`` (H x windows, int64), in place: the float
    transform's stages (:func:`~sensorbudget.trainer.sensing.spectral.butterfly_groups`), each
    product rounded down to Q15 and each output halved."""
    cos, sin = twiddles_q15(m)
    for i, j, t in butterfly_groups(m):
        if t == 0:
            tr, ti = re[j], im[j]
        elif 4 * t == m:
            tr, ti = im[j], -re[j]
        else:
            tr = (cos[t] * re[j] - sin[t] * im[j]) >> 15
            ti = (cos[t] * im[j] + sin[t] * re[j]) >> 15
        re[j], im[j] = (re[i] - tr) >> 1, (im[i] - ti) >> 1
        re[i], im[i] = (re[i] + tr) >> 1, (im[i] + ti) >> 1


def _split_power(re, im, m) -> np.ndarray:
    """Step 4: ``P`` (H + 1 x windows, int64 holding uint32 values)."""
    h = m // 2
    P = np.empty((h + 1, re.shape[1]), dtype=np.int64)
    P[0], P[h] = (re[0] + im[0]) ** 2, (re[0] - im[0]) ** 2
    k = np.arange(1, h // 2 + 1)
    q = h - k
    cos, sin = twiddles_q15(m)
    wr, wi = cos[k][:, None], sin[k][:, None]
    ar, ai, cr, ci = re[k], im[k], re[q], im[q]
    er, ei, odd_r, odd_i = ar + cr, ai - ci, ai + ci, cr - ar
    a = (wr * odd_r - wi * odd_i) >> 15
    b = (wr * odd_i + wi * odd_r) >> 15
    P[k] = ((er + a) >> 1) ** 2 + ((ei + b) >> 1) ** 2
    pairs = q != k
    P[q[pairs]] = (((er - a) >> 1) ** 2 + ((b - ei) >> 1) ** 2)[pairs]
    return P


def power_spectrum_q15(q: np.ndarray, window: str = "hann",
                       normalize: bool = False) -> np.ndarray:
    """``P`` of shape (M/2 + 1, n_windows), int64 (uint32 values), by the module's definition,
    of int16 windows ``q`` of shape (N, n_windows); ``normalize``: block normalised (each
    window's ``P`` then in units of ``real_scale / 4^k``, ``k`` of :func:`block_shift`)."""
    u = _prepare(q, window, normalize)
    n = u.shape[0]
    m = fft_size(n)
    x = np.zeros((m, u.shape[1]), dtype=np.int64)
    x[:n] = u
    rev = np.asarray(bit_reverse(m // 2), dtype=np.intp)
    re, im = x[0::2][rev], x[1::2][rev]
    _butterflies(re, im, m)
    return _split_power(re, im, m)
