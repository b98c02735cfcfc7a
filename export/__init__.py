"""Export a bundle as deployable model files: ONNX (hosts, gateways) and a C99 header (firmware).

Importing this package registers the skl2onnx converters for :class:`trainer.GreedyRLS` and
:class:`trainer.GreedyRLSClassifier`, so ``skl2onnx.to_onnx(estimator, X)`` works.
"""

from . import onnx_convert  # noqa: F401  (registers the skl2onnx converters on import)
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
from .onnx_bundle import OnnxModel, bundle_to_onnx, describe_onnx, onnx_metadata, read_metadata

__all__ = [
    "ExportError", "bundle_to_onnx", "describe_onnx", "onnx_metadata", "read_metadata",
    "OnnxModel", "c_header", "CHeader", "NUMERICS", "DEFAULT_NAME", "HEADER_FORMAT_VERSION",
    "FixedPointModel", "quantize_model", "quantize_inputs", "predict_int", "dequantize_scores",
]
