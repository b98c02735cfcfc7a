"""Fixed-point (Q15/Q31) version of the sparse linear model, its integer reference and error bound.

The arithmetic, which the generated C implements and :func:`predict_int` replicates exactly:

1. Inputs. ``q[i] = sat(round((x[i] - offset[i]) * inv_scale[i]))`` with ``|q| <= QMAX``
   (32767 / 2147483647), computed in float32 for Q15 and double for Q31, NaN -> 0, rounding half
   away from zero. ``offset`` is the centre of the training range of feature i and ``inv_scale``
   maps its half-width (plus a 2^-20 margin) to QMAX, so training inputs never saturate.
2. Weights. The per-feature scale is folded into the weights, ``v[i][j] = w[i][j] / inv_scale[i]``,
   the offset into the intercept, ``b'[j] = b[j] + sum_i w[i][j] * offset[i]``, so the float model
   is exactly ``b'[j] + sum_i v[i][j] * u[i]`` with ``u[i] = (x[i] - offset[i]) * inv_scale[i]``.
   Both are scaled by ``2^F`` and rounded half away from zero: ``m = round(v 2^F)``,
   ``B = round(b' 2^F)``; ``|m| <= QMAX`` (int16/int32 weights).
3. Accumulate ``acc[j] = B[j] + sum_i m[i][j] * q[i]`` exactly in a wide accumulator (int32 for
   Q15, int64 for Q31). ``F`` is chosen so that no input of the integer type can overflow it.
4. Output ``score_q[j] = sat(round(acc[j] / 2^SHIFT))`` (half away from zero), ``SHIFT = F - G``;
   the score is ``score_q * 2^-G`` with ``G`` the largest exponent whose range still holds every
   score reachable from training-range inputs.

Error bound against the float64 model, for inputs in the training range (per target j)::

    |e_B[j]| + (1/2 + 2^-6) sum_i |v[i][j]| + QMAX sum_i |e_m[i][j]| + 2^-(G+1) + eps

where ``e_B``, ``e_m`` are the rounding errors of ``B 2^-F`` and ``m 2^-F``, ``1/2 + 2^-6`` input
LSB covers rounding plus the float arithmetic of the quantiser, and ``eps`` (2^-40 relative) the
float64 arithmetic of the reference. Saturation never happens inside the training range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import ExportError


@dataclass(frozen=True)
class QFormat:
    name: str
    bits: int            # width of inputs, weights and scores
    acc_bits: int        # width of the accumulator
    ctype: str           # C type of inputs, weights and scores
    acc_ctype: str
    float_ctype: str     # C type of the quantiser arithmetic
    float_dtype: type

    @property
    def qmax(self) -> int:
        return (1 << (self.bits - 1)) - 1

    @property
    def qmin(self) -> int:
        return -(1 << (self.bits - 1))


FORMATS = {
    "q15": QFormat("q15", 16, 32, "int16_t", "int32_t", "float", np.float32),
    "q31": QFormat("q31", 32, 64, "int32_t", "int64_t", "double", np.float64),
}
RANGE_MARGIN = 2.0 ** -20   # relative widening of the training half-range
QUANT_SLACK = 2.0 ** -6     # input LSBs allowed beyond 1/2 for the quantiser's float rounding
FP_EPS = 2.0 ** -40         # relative slack for float64 rounding in the reference


@dataclass(frozen=True)
class FixedPointModel:
    """Integer model of the sparse linear model; arrays are as written into the C header."""

    fmt: QFormat
    input_offset: np.ndarray      # (k,) float32 (q15) / float64 (q31)
    input_inv_scale: np.ndarray   # (k,) same dtype
    x_lo: np.ndarray              # (k,) float32 training range the bound holds for
    x_hi: np.ndarray
    weights: np.ndarray           # (k, t) int64 values (fit the format's integer type)
    intercepts: tuple             # (t,) Python ints (fit the accumulator)
    weight_frac_bits: int         # F
    score_frac_bits: int          # G
    score_max: float              # largest |score| reachable from the training range
    error_bounds: np.ndarray      # (t,) bound per target, in score units

    @property
    def shift(self) -> int:
        return self.weight_frac_bits - self.score_frac_bits

    @property
    def error_bound(self) -> float:
        return float(np.max(self.error_bounds))


def round_half_away(x: float) -> int:
    """Nearest integer to the float ``x``, ties away from zero (exact for |x| < 2^52)."""
    if not math.isfinite(x):
        raise OverflowError(x)
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def float32_down(x):
    """Largest float32 <= x (elementwise)."""
    x32 = np.asarray(x, dtype=np.float32)
    return np.where(x32.astype(np.float64) > x, np.nextafter(x32, np.float32(-np.inf)), x32)


def float32_up(x):
    """Smallest float32 >= x (elementwise)."""
    x32 = np.asarray(x, dtype=np.float32)
    return np.where(x32.astype(np.float64) < x, np.nextafter(x32, np.float32(np.inf)), x32)


def _input_scaling(x_min, x_max, fmt):
    """(offset, inv_scale, lo, hi): centre and QMAX/half-width of each float32 training range."""
    lo, hi = float32_down(x_min), float32_up(x_max)
    offset = ((lo.astype(np.float64) + hi) / 2).astype(fmt.float_dtype)
    half = np.maximum(hi - offset.astype(np.float64), offset.astype(np.float64) - lo)
    half = np.where(half > 0, half, np.maximum(np.abs(offset.astype(np.float64)), 1.0))
    inv = (fmt.qmax / (half * (1 + RANGE_MARGIN))).astype(fmt.float_dtype)
    return offset, inv, lo, hi


def _quantize_weights(V, b_prime, F, fmt):
    """(m, B) or None when a weight or the worst-case accumulator does not fit at exponent F."""
    try:
        m = [[round_half_away(math.ldexp(v, F)) for v in row] for row in V]
        B = [round_half_away(math.ldexp(v, F)) for v in b_prime]
    except OverflowError:
        return None
    if max(abs(x) for row in m for x in row) > fmt.qmax:
        return None
    return m, B


def _acc_fits(m, B, shift, fmt) -> bool:
    """No int input (|q| <= 2^(bits-1)) can overflow acc, including the rounding constant."""
    if shift > fmt.acc_bits - 2:
        return False
    half = (1 << (shift - 1)) if shift > 0 else 0
    worst = max(abs(B[j]) + sum(abs(row[j]) for row in m) * (1 << (fmt.bits - 1))
                for j in range(len(B)))
    return worst + half <= (1 << (fmt.acc_bits - 1)) - 1


def _choose_weight_exponent(V, b_prime, G, fmt):
    vmax = float(np.max(np.abs(V)))
    F = G + 62 if vmax == 0 else min(G + 62, math.frexp(fmt.qmax / vmax)[1])
    while True:
        if F < G:
            raise ExportError(f"cannot fit the model into {fmt.name}: the intercepts "
                              f"(max |b'|={np.max(np.abs(b_prime)):.3g}) leave no accumulator "
                              f"headroom for the weights (max |v|={vmax:.3g})")
        q = _quantize_weights(V, b_prime, F, fmt)
        if q is not None and _acc_fits(*q, F - G, fmt):
            return F, q
        F -= 1


def _error_bounds(V, b_prime, m, B, F, G, fmt, W, lo, hi, b):
    e_b = np.abs(np.ldexp(np.asarray(B, dtype=np.float64), -F) - b_prime)
    e_m = np.abs(np.ldexp(np.asarray(m, dtype=np.float64), -F) - V)
    out_round = 2.0 ** -(G + 1) if F > G else 0.0
    xmax = np.maximum(np.abs(lo), np.abs(hi)).astype(np.float64)
    eps = FP_EPS * (np.abs(b) + np.abs(W).T @ xmax)
    return (e_b + (0.5 + QUANT_SLACK) * np.abs(V).sum(axis=0) + fmt.qmax * e_m.sum(axis=0)
            + out_round + eps)


def quantize_model(W, b, x_min, x_max, numeric: str) -> FixedPointModel:
    """Quantise weights ``W`` (k x t) and intercepts ``b`` (t,) for inputs in [x_min, x_max]."""
    if numeric not in FORMATS:
        raise ExportError(f"numeric={numeric!r} is not a fixed-point format; use one of "
                          f"{sorted(FORMATS)}")
    fmt = FORMATS[numeric]
    W, b = np.asarray(W, dtype=np.float64), np.asarray(b, dtype=np.float64)
    offset, inv, lo, hi = _input_scaling(np.asarray(x_min, np.float64),
                                         np.asarray(x_max, np.float64), fmt)
    V = W / inv.astype(np.float64)[:, None]
    b_prime = b + offset.astype(np.float64) @ W
    score_max = float(np.max(np.abs(b_prime) + fmt.qmax * np.abs(V).sum(axis=0)))
    G = fmt.bits - 2 if score_max == 0 else math.frexp(fmt.qmax / score_max)[1] - 1
    while True:
        F, (m, B) = _choose_weight_exponent(V, b_prime, G, fmt)
        bounds = _error_bounds(V, b_prime, m, B, F, G, fmt, W, lo, hi, b)
        if math.ldexp(score_max + float(np.max(bounds)), G) <= fmt.qmax:
            break
        G -= 1
    return FixedPointModel(fmt=fmt, input_offset=offset, input_inv_scale=inv, x_lo=lo, x_hi=hi,
                           weights=np.asarray(m, dtype=np.int64), intercepts=tuple(B),
                           weight_frac_bits=F, score_frac_bits=G, score_max=score_max,
                           error_bounds=bounds)


def quantize_inputs(model: FixedPointModel, X) -> np.ndarray:
    """The header's ``<name>_quantize_<fmt>`` in numpy: float features (n x k) to integers."""
    fmt = model.fmt
    ft = fmt.float_dtype
    X = np.asarray(X, dtype=np.float32).astype(ft)
    with np.errstate(invalid="ignore", over="ignore"):
        v = (X - model.input_offset.astype(ft)) * model.input_inv_scale.astype(ft)
    v = np.where(np.isnan(v), ft(0), v)
    v = np.clip(v, ft(-fmt.qmax), ft(fmt.qmax))
    half = ft(0.5)
    q = np.where(v >= 0, np.trunc(v + half), -np.trunc(half - v))
    return q.astype(np.int64)


def _round_shift(acc: int, shift: int) -> int:
    if shift == 0:
        return acc
    half, div = 1 << (shift - 1), 1 << shift
    return (acc + half) // div if acc >= 0 else -((-acc + half) // div)


def predict_int(model: FixedPointModel, Q) -> np.ndarray:
    """The header's ``<name>_predict_<fmt>`` with Python integers: integer inputs to scores.

    Raises :class:`ExportError` if an accumulator leaves its type's range (it cannot, by design).
    """
    fmt = model.fmt
    Q = np.asarray(Q).astype(object)
    acc = Q @ model.weights.astype(object) + np.asarray(model.intercepts, dtype=object)
    lim = 1 << (fmt.acc_bits - 1)
    out = np.empty(acc.shape, dtype=np.int64)
    for idx, a in np.ndenumerate(acc):
        if not -lim <= a < lim:
            raise ExportError(f"accumulator {a} overflows {fmt.acc_ctype}")
        out[idx] = min(max(_round_shift(int(a), model.shift), fmt.qmin), fmt.qmax)
    return out


def dequantize_scores(model: FixedPointModel, S) -> np.ndarray:
    """Integer scores to float64 scores: ``S * 2^-G``."""
    return np.ldexp(np.asarray(S, dtype=np.float64), -model.score_frac_bits)
