"""How far a fixed-point firmware's scores may be from the float64 model on the float32 features
of the same samples: the model's bound plus what the extractors add (issue 28).

The header's bound (:mod:`sensorbudget.export.fixed_point`) covers the integer model for *features* within
the training ranges. From *samples*, the fixed-point extractors see Q15 samples (rounded: at
most ``d = full_scale / 65536`` off) and compute with integer sums, truncating divisions and
floor roots, so a feature ``x_q`` differs from the float32 feature ``x``. With ``x`` in the
training range ``[lo, hi]`` and the quantiser clamping ``x_q`` to that range (plus its margin),
the model sees ``c = clamp(x_q)`` with ``|c - x| <= min(|x_q - x|, hi - lo)``, so per target j::

    |score_j - model_j(x)| <= |score_j - model_j(c)| + |model_j(c) - model_j(x)|
                           <= bound_j + sum_i |W[i, j]| * min(e_i, (hi_i - lo_i) (1 + 2^-18))

with ``e_i`` the extractor's error bound of :func:`feature_error` (samples in ``[-M, M - s/2]``,
which quantise without clamping; ``M`` the full scale, ``s = M / 32768`` one step, ``d = s / 2``,
``N`` the window): ``min``, ``max``, ``last``, ``percentile``: ``d``; ``ptp``: ``2 d``; ``mean``:
``d + s`` (the division truncates); ``mad``: ``2 d + s``; ``rms``: ``d + 2 s`` (rms is
1-Lipschitz in the samples; the division and the floor root lose less than a step each);
``energy``: ``N (2 M d + d^2)`` plus ``M^2 2^(b - 30)``, the low ``b`` bits it drops
(:func:`sensorbudget.trainer.sensing.q15.energy_shift`); ``mag_max`` over m channels (unit
``u``): ``sqrt(m) (d + u) + u``, ``mag_mean`` one ``u`` more. Each adds ``(N + 2) 2^-24`` of its magnitude (``M``;
``N M^2`` for energy) for the float32 rounding of the reference and of the conversion. The
kinds computed in float32 on the Q15 samples (std, corr, shape, spectral, after preprocessing)
and ``zcr`` (a crossing may flip) get only the range term.
"""

from __future__ import annotations

import math

import numpy as np

from sensorbudget.trainer.sensing.q15 import energy_shift, magnitude_shifts

U = 2.0 ** -24            # float32 unit roundoff
RANGE_SLACK = 2.0 ** -18  # the quantiser's range margin (2^-20) and float32 rounding of lo, hi


def feature_error(plan, ext) -> float | None:
    """Bound on |fixed-point feature - float32 feature| of ``ext`` (an ExtractorPlan of a
    fixed-point ``plan``) for samples that quantise without clamping (``[-M, M - s/2]``);
    None: no bound below its range."""
    if not ext.fixed or ext.kind == "zcr":
        return None
    n = plan.window
    if ext.kind in ("mag_mean", "mag_max"):
        scales = [plan.full_scale[c] for c in ext.channels]
        m, unit = len(scales), magnitude_shifts(scales)[2]
        d = max(scales) / 65536.0
        err = math.sqrt(m) * (d + unit) + unit * (2 if ext.kind == "mag_mean" else 1)
        return err + (n + 2) * U * math.sqrt(m) * max(scales)
    fs = plan.full_scale[ext.channels[0]]
    s, d = fs / 32768.0, fs / 65536.0
    if ext.kind == "energy":     # the sum, then its low energy_shift bits dropped
        return (n * (2 * fs * d + d * d) + (n + 2) * U * n * fs * fs
                + fs * fs * 2.0 ** (energy_shift(n) - 30))
    err = {"min": d, "max": d, "last": d, "percentile": d, "ptp": 2 * d, "mean": d + s,
           "mad": 2 * d + s, "rms": d + 2 * s}[ext.kind]
    return err + (n + 2) * U * fs


def input_bounds(k: int, fixed, W, errors) -> np.ndarray:
    """Per target, ``fixed.error_bounds + sum_i |W[i]| min(e_i, width_i)`` over the ``k`` model
    inputs (``width_i`` the training range, with its slack): ``errors`` gives ``(input, e)``
    pairs, ``e`` an extractor's bound (:func:`feature_error`) or None (the range term only); an
    input not named gets the range term."""
    W = np.abs(np.asarray(W, dtype=np.float64).reshape(k, -1))
    width = (fixed.x_hi.astype(np.float64) - fixed.x_lo.astype(np.float64)) * (1 + RANGE_SLACK)
    err = width.copy()
    for slot, e in errors:
        err[slot] = width[slot] if e is None else min(e, width[slot])
    return fixed.error_bounds + err @ W


def stream_error_bounds(plan, fixed, W, *, samples_in_full_scale: bool = True) -> np.ndarray:
    """Per target, the bound of the module docstring for the plan's fixed-point model
    ``fixed`` (:class:`sensorbudget.export.fixed_point.FixedPointModel`) and weights ``W`` (k x t); without
    ``samples_in_full_scale`` (samples may clamp at the Q15 limits) only the range terms."""
    errors = [(slot, feature_error(plan, ext) if samples_in_full_scale else None)
              for ext in plan.extractors for slot in ext.slots]
    return input_bounds(plan.k, fixed, W, errors)


def stated_stream_bound(plan, header, W, bounds=stream_error_bounds) -> float | None:
    """The largest per-target bound of ``bounds`` (:func:`stream_error_bounds`, or the
    multi-rate one), rounded up to two digits as the header states its own (None for
    float32)."""
    from sensorbudget.export.c_header import stated_bound

    if header.fixed is None:
        return None
    return float(stated_bound(float(np.max(bounds(plan, header.fixed, W)))))