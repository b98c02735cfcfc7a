"""The Python reference of what a device computes, for replaying and for the fake device.

The arithmetic is pinned by ``firmware_gen/PROTOCOL.md`` and implemented bit for bit by
:mod:`sensorbudget.firmware_gen.reference` on a :class:`sensorbudget.firmware_gen.plan.FirmwarePlan` (the same plan the
generated C is built from); this module wraps it for streams:

- the device reads the plan's *channels* (those of the required extractors, in the order of the
  bundle's sensors and their channels);
- window ``m`` since the last RESET covers samples ``[m * hop, m * hop + window)``;
- ``float32``: float32 samples, the float32 extractors of :mod:`sensorbudget.trainer.sensing.extractors`, then
  ``acc = b[j]; acc = acc + W[i][j] * x[i]`` in selection order, every operation rounded to
  float32 (the C header's ``<name>_predict``);
- ``q15`` / ``q31``: the host sends Q15 samples (``x * 32768 / full_scale``, rounded and
  clamped), the fixed-point kinds run the integer definitions, the others float32 on the
  dequantised samples; features are quantised and fed to the integer model of
  :mod:`sensorbudget.export.fixed_point`; scores are integers (``score * 2^-G``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sensorbudget.export.cgen import DEFAULT_NAME, NUMERICS
from sensorbudget.export.fixed_point import dequantize_scores
from sensorbudget.firmware_gen.errors import FirmwareGenError
from sensorbudget.firmware_gen.plan import make_plan
from sensorbudget.firmware_gen.reference import (
    fixed_model,
    model_inputs,
    quantize_samples,
    scores,
    window_features,
)

from .errors import DeviceError

F32 = np.float32


@dataclass(frozen=True)
class FeatureSpec:
    """One required extractor: its name, kind and indices into the device channels."""

    name: str
    kind: str
    channels: tuple


class ReferenceModel:
    """Extractors + model of a bundle in the device's exact arithmetic.

    Parameters
    ----------
    bundle : trainer.bundle.model.Bundle
        A bundle trained from recordings.
    numeric : {"float32", "q15", "q31"}
    full_scale : dict, optional
        {channel or "*": full scale} of the Q15 samples (fixed point; see ``firmware_gen``).
    name : str
        Model name (as the firmware reports it in HELLO).
    fft : {"float32", "q15"}
        The spectra's transform (q15/q31: ``firmware_gen.fft_c.check_fft``).
    """

    def __init__(self, bundle, numeric: str = "float32", *, full_scale=None,
                 name: str = DEFAULT_NAME, fft: str = "float32"):
        if numeric not in NUMERICS:
            raise DeviceError(f"numeric={numeric!r} is not one of {NUMERICS}")
        try:
            self.plan = make_plan(bundle, name=name, numeric=numeric, full_scale=full_scale,
                                  fft=fft)
        except FirmwareGenError as exc:
            raise DeviceError(f"cannot simulate this bundle: {exc}") from None
        self.bundle, self.meta, self.numeric = bundle, bundle.meta, numeric
        self.window, self.hop = self.plan.window, self.plan.hop
        self.sample_rate = float(bundle.meta.get("sample_rate_hz", 0.0))
        if not self.sample_rate > 0:
            raise DeviceError("the bundle has no sample_rate_hz: it was not trained from "
                              "recordings (sensorbudget train RECORDINGS --sensors ...)")
        self.channels = list(self.plan.channels)
        self.features = [FeatureSpec(e.name, e.kind, tuple(e.channels))
                         for e in self.plan.extractors]
        self.fixed = fixed_model(self.plan, bundle)

    @property
    def k(self) -> int:
        return self.plan.k

    @property
    def t(self) -> int:
        return self.plan.t

    @property
    def period_s(self) -> float:
        """Time between predictions (the deadline of each one)."""
        return self.hop / self.sample_rate

    @property
    def sample_dtype(self) -> np.dtype:
        return np.dtype("<i2" if self.plan.fixed else "<f4")

    def window_starts(self, n_samples: int) -> np.ndarray:
        return np.arange(0, max(0, n_samples - self.window + 1), self.hop)

    def wire_samples(self, samples) -> np.ndarray:
        """Samples as the host sends them: float32, or Q15 int16 for fixed-point firmware."""
        if self.plan.fixed:
            return quantize_samples(self.plan, samples)
        return np.asarray(samples, dtype=F32)

    def features_of(self, wire, starts=None) -> np.ndarray:
        """Float32 features (windows x k) of the windows of ``wire`` samples at ``starts``
        (default: every window of the stream)."""
        wire = np.asarray(wire)
        X = window_features(self.plan, wire)
        if starts is None:
            return X
        return X[np.asarray(starts, dtype=np.intp) // self.hop]

    def inputs(self, X) -> np.ndarray:
        """Model inputs as the device's PREDICT takes them (floats, or Q15/Q31 integers)."""
        return model_inputs(self.plan, self.fixed, X)

    def scores(self, X) -> np.ndarray:
        """Scores (n x t) of features X: float32, or the fixed-point integer scores."""
        return self.scores_of_inputs(self.inputs(X))

    def scores_of_inputs(self, inputs) -> np.ndarray:
        """Scores (n x t) of model inputs (what PREDICT computes)."""
        return scores(self.plan, self.bundle, self.fixed, np.asarray(inputs).reshape(-1, self.k))

    def real_scores(self, S) -> np.ndarray:
        """Scores as floats (fixed-point scores times 2^-G)."""
        if self.fixed is None:
            return np.asarray(S, dtype=np.float64)
        return dequantize_scores(self.fixed, S)

    def thresholds(self) -> np.ndarray | None:
        """Multi-label: the bundle's label thresholds in the units of the scores (float32, or
        floor(threshold 2^G) for fixed-point scores, as the C ``decide``); else None."""
        if self.meta["task"] != "multilabel":
            return None
        from sensorbudget.export.c_decisions import integer_thresholds
        from sensorbudget.trainer.bundle.decision import thresholds

        values = thresholds(self.meta)
        if self.fixed is None:
            return values.astype(F32)
        return np.asarray(integer_thresholds(values, self.fixed), dtype=np.int64)

    def labels(self, S) -> np.ndarray:
        """The task's decision from scores (:func:`sensorbudget.trainer.bundle.decision.decide_scores`, the
        one rule): class index, 0/1 labels (score > the bundle's threshold, in the scores'
        units) or the scores."""
        from sensorbudget.trainer.bundle.decision import decide_scores

        task = self.meta["task"]
        if task == "regression":
            return self.real_scores(S)
        return decide_scores(np.asarray(S), task, self.thresholds())
