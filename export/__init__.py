"""Export a bundle as deployable model files: ONNX (hosts, gateways) and a C99 header (firmware).

- :mod:`~sensorbudget.export.onnx_convert`: the skl2onnx converters for :class:`sensorbudget.trainer.GreedyRLS` and
  :class:`sensorbudget.trainer.GreedyRLSClassifier` (registered when that module is imported, which using any
  ONNX name of this package does: after ``from export import bundle_to_onnx`` or
  ``import export.onnx_convert``, ``skl2onnx.to_onnx(estimator, X)`` works);
- :mod:`~sensorbudget.export.onnx_bundle`: a bundle as an ONNX model, its metadata;
- :mod:`~sensorbudget.export.c_header`, :mod:`~sensorbudget.export.cgen`: the C99 header and its code-writing helpers;
  :mod:`~sensorbudget.export.c_decisions`: its calibrated label decisions (``<name>_decide``);
  every generated C line is short by construction (breaks marked for ``cgen.fit``);
- :mod:`~sensorbudget.export.fixed_point`: Q15/Q31 quantization and the integer reference;
- :mod:`~sensorbudget.export.errors`: :class:`ExportError`.
"""

from importlib import import_module

from .c_header import HEADER_FORMAT_VERSION, CHeader, c_header
from .cgen import DEFAULT_NAME, NUMERICS
from .errors import ExportError
from .fixed_point import (
    FixedPointModel,
    dequantize_scores,
    predict_int,
    quantize_inputs,
    quantize_model,
)

# The ONNX modules import skl2onnx and scikit-learn (about 0.7 s): their names load on first
# use, so that importing export.cgen (the CLI's option choices) or the header stays light.
_LAZY = {"OnnxModel": "onnx_bundle", "bundle_to_onnx": "onnx_bundle",
         "describe_onnx": "onnx_bundle", "onnx_metadata": "onnx_bundle",
         "read_metadata": "onnx_bundle"}

__all__ = [
    "ExportError", "bundle_to_onnx", "describe_onnx", "onnx_metadata", "read_metadata",
    "OnnxModel", "c_header", "CHeader", "NUMERICS", "DEFAULT_NAME", "HEADER_FORMAT_VERSION",
    "FixedPointModel", "quantize_model", "quantize_inputs", "predict_int", "dequantize_scores",
]


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
