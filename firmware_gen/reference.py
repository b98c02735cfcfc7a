"""What the generated firmware computes, in numpy, bit for bit (the oracle of the C code).

Float32 firmware: every extractor is the float32 definition of :mod:`sensorbudget.trainer.sensing.extractors` on
the float32 samples. Fixed-point firmware (q15/q31) receives Q15 samples (:func:`quantize_samples`);
the kinds with a fixed-point definition run :func:`sensorbudget.trainer.sensing.extractors.extract_q15` and are
turned into float32 real values, the float-only kinds (std, mag_std, corr) run the float32 definitions on the samples
``(float)q * (full_scale / 32768)``; the features are then quantised by the header's quantiser
(:func:`sensorbudget.export.fixed_point.quantize_inputs`) and fed to the integer model
(:func:`sensorbudget.export.fixed_point.predict_int`); in Q15 the integer kinds skip the float
quantiser (:func:`model_inputs`). See PROTOCOL.md. Extractors with an argument,
preprocessing or a spectrum (:mod:`sensorbudget.trainer.sensing.specs`) run their spec's float32 definition
(the integer one for a Q15 ``percentile`` without preprocessing) at the bundle's sample rate.
A plan with ``fft="q15"`` takes the spectra of its raw windows from the Q15 FFT instead
(:func:`_q15_spectral_value`, :mod:`sensorbudget.firmware_gen.fft_c`).
"""

from __future__ import annotations

import numpy as np

from sensorbudget.export.fixed_point import predict_int, quantize_inputs, quantize_model
from sensorbudget.trainer.sensing.extractors import KINDS, extract_q15
from sensorbudget.trainer.sensing.spectral_q15 import block_shift, power_spectrum_q15
from sensorbudget.trainer.sensing.q15 import energy_shift, magnitude_shifts

from .errors import FirmwareGenError
from .fft_c import on_q15_fft, q15_scale
from .q15_c import int_inputs, raw_unit

F32 = np.float32


def quantize_samples(plan, samples) -> np.ndarray:
    """Q15 samples (n x channels, int16) the host sends to fixed-point firmware:
    ``clamp(round_half_away(x * 32768 / full_scale[c]), -32768, 32767)``, NaN -> 0."""
    x = np.asarray(samples, dtype=np.float64)
    scale = 32768.0 / np.asarray(plan.full_scale, dtype=np.float64)
    v = np.nan_to_num(x * scale, nan=0.0, posinf=32767.0, neginf=-32768.0)
    q = np.sign(v) * np.floor(np.abs(v) + 0.5)
    return np.clip(q, -32768, 32767).astype(np.int16)


def sample_scale(plan) -> np.ndarray:
    """Float32 real value of one Q15 step per channel (``full_scale / 32768``, exact)."""
    return (np.asarray(plan.full_scale, dtype=np.float64) / 32768.0).astype(F32)


def _windows(column, starts, window) -> np.ndarray:
    index = np.arange(window)[:, None] + np.asarray(starts, dtype=np.intp)[None, :]
    return np.asarray(column)[index]


def _fixed_value(plan, ext, q, starts) -> np.ndarray:
    """Float32 real value of a fixed-point extractor (the firmware's conversion)."""
    if not ext.per_channel:
        scales = [plan.full_scale[c] for c in ext.channels]
        raw = extract_q15(ext.kind, [_windows(q[:, c], starts, plan.window).astype(np.int16)
                                     for c in ext.channels], scales)
        return raw.astype(F32) * F32(magnitude_shifts(scales)[2])
    (c,) = ext.channels
    raw = extract_q15(ext.kind, _windows(q[:, c], starts, plan.window).astype(np.int16),
                      arg=ext.full_spec.arg)
    if ext.kind == "zcr":
        return raw.astype(F32) / F32(plan.window - 1)
    if ext.kind == "energy":
        raw = raw >> energy_shift(plan.window)
    return raw.astype(F32) * F32(raw_unit(plan, ext))


def _q15_spectral_value(plan, ext, q, starts) -> np.ndarray:
    """A spectral feature of a ``fft="q15"`` plan: the block-normalised Q15 FFT's integer power
    (:func:`sensorbudget.trainer.sensing.spectral_q15.power_spectrum_q15`) as float32 times the
    exact scale :func:`~sensorbudget.firmware_gen.fft_c.q15_scale` / ``4^k`` (``k`` of
    :func:`~sensorbudget.trainer.sensing.spectral_q15.block_shift`), then the kind's float32
    definition on it (the firmware's ``<name>_power_from_q15``)."""
    (c,) = ext.channels
    spec = ext.full_spec
    w = _windows(q[:, c], starts, plan.window)
    scale = q15_scale(plan, ext) * F32(0.25) ** block_shift(w).astype(F32)   # exact: 2^-2k
    P = power_spectrum_q15(w, "rect" if spec.rect else "hann", normalize=True).astype(F32)
    P = P * scale[None, :].astype(F32)
    compute = KINDS[ext.kind].compute
    if spec.arg is None:
        return compute(P, plan.window, plan.sample_rate_hz)
    return compute(P, spec.arg, plan.window, plan.sample_rate_hz)


def window_features(plan, samples) -> np.ndarray:
    """Real float32 features (n_windows x k, model input order) of every complete window of a
    stream of ``samples`` (n x channels; float for float32 firmware, int16 Q15 otherwise)."""
    samples = np.asarray(samples)
    starts = np.arange(0, max(0, len(samples) - plan.window + 1), plan.hop)
    if plan.fixed:
        q = samples.astype(np.int16)
        values = q.astype(F32) * sample_scale(plan)[None, :]
    else:
        q, values = None, samples.astype(F32)
    X = np.empty((len(starts), plan.k), dtype=F32)
    for ext in plan.extractors:
        if ext.fixed:
            column = _fixed_value(plan, ext, q, starts)
        elif on_q15_fft(plan, ext):
            column = _q15_spectral_value(plan, ext, q, starts)
        else:
            ws = [_windows(values[:, c], starts, plan.window) for c in ext.channels]
            column = ext.full_spec.compute(ws[0] if ext.per_channel else ws,
                                           rate=plan.sample_rate_hz)
        for slot in ext.slots:
            X[:, slot] = column
    return X


def fixed_model(plan, bundle):
    """The header's :class:`~sensorbudget.export.fixed_point.FixedPointModel` (None for float32)."""
    if not plan.fixed:
        return None
    a = bundle.arrays
    return quantize_model(a["W"], a["b"], a["x_min"], a["x_max"], plan.numeric)


def model_inputs(plan, fixed, features) -> np.ndarray:
    """What PREDICT takes: the features (float32) or their quantised integers; in a Q15 plan
    the inputs of :func:`sensorbudget.firmware_gen.q15_c.int_inputs` come from the integer
    features (``feature / unit``, exact: an integer below 2**24 times a power of two) through
    their :class:`~sensorbudget.trainer.sensing.q15.IntQuantizer`."""
    if fixed is None:
        return np.asarray(features, dtype=F32)
    X = np.asarray(features, dtype=F32)
    Q = quantize_inputs(fixed, X)
    for slot, (ext, quant) in int_inputs(plan, fixed).items():
        raw = X[:, slot].astype(np.float64) / raw_unit(plan, ext)
        if not np.array_equal(raw, np.rint(raw)):
            raise FirmwareGenError(f"model input {slot} ({ext.name}) of a Q15 plan takes the "
                                   f"integer {ext.kind} feature; these features are not its "
                                   f"multiples of {raw_unit(plan, ext)!r}")
        Q[:, slot] = quant.apply(raw.astype(np.int64))
    return Q


def scores(plan, bundle, fixed, inputs) -> np.ndarray:
    """Scores of model inputs (n x k): float32 in the header's order, or integer scores."""
    inputs = np.asarray(inputs)
    if fixed is not None:
        return predict_int(fixed, inputs.astype(np.int64))
    W, b = np.asarray(bundle.W, dtype=F32), np.asarray(bundle.b, dtype=F32)
    acc = np.repeat(b[None, :], len(inputs), axis=0)
    x = inputs.astype(F32)
    for i in range(W.shape[0]):
        acc = acc + x[:, i:i + 1] * W[i]
    return acc


def stream(plan, bundle, samples):
    """(window features, model inputs, scores) the firmware reports for a sample stream."""
    fixed = fixed_model(plan, bundle)
    X = window_features(plan, samples)
    inputs = model_inputs(plan, fixed, X)
    return X, inputs, scores(plan, bundle, fixed, inputs)
