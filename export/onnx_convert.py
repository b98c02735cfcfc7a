"""skl2onnx converters for :class:`sensorbudget.trainer.GreedyRLS` and :class:`sensorbudget.trainer.GreedyRLSClassifier`.

Importing this module registers a parser, a shape calculator and a converter for both
estimators, so ``skl2onnx.to_onnx(estimator, X)`` works, also inside a scikit-learn Pipeline.
The graph is built by :func:`linear_nodes`, which the bundle exporter
(:mod:`sensorbudget.export.onnx_bundle`) shares:

``Gather(X, selected, axis=1)`` (left out when the input already is the selected features) ->
``MatMul(weights)`` -> ``Add(intercepts)`` = ``scores`` (n x t, the input's float type), then
the decision of :func:`sensorbudget.trainer.bundle.decision.decide_scores`: for multi-label
``Cast(Greater(scores, thresholds), INT64)`` (n x t; the estimator's ``thresholds_`` or the
bundle's calibrated thresholds, 0 without them) and for multi-class ``ArgMax(scores, axis=1)``
(first index on ties), mapped through ``classes_`` by ``Gather`` = ``label`` (n,).

Outputs: a GreedyRLS gives one output, ``scores`` (n x t; (n, 1) for a 1-D y, as skl2onnx does
for regressors). A GreedyRLSClassifier gives the decision first (``labels``: what ``predict``
returns) and ``scores`` second (skl2onnx's label-then-scores order; the scores are the raw
regression scores of every label/class, for a binary problem both columns). The converters
convert the predictor: a GreedyRLS used as a feature-selecting transformer in the middle of a
Pipeline is not supported.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto
from skl2onnx import update_registered_converter
from skl2onnx.common.data_types import (
    DoubleTensorType,
    FloatTensorType,
    Int64TensorType,
    StringTensorType,
)

from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier

from .errors import ExportError

REGRESSOR_ALIAS = "SensorbudgetGreedyRLS"
CLASSIFIER_ALIAS = "SensorbudgetGreedyRLSClassifier"
_PROTO = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
          np.dtype(np.int64): TensorProto.INT64}


def op_version(op_type: str, opset: int) -> int:
    """The version of ``op_type`` in effect at ``opset`` (the ``since_version`` of its schema)."""
    return onnx.defs.get_schema(op_type, max_inclusive_version=opset, domain="").since_version


def class_values(classes):
    """``classes_`` as an ONNX-friendly array: int64, float64 or str."""
    classes = np.asarray(classes)
    if classes.dtype.kind in "iub":
        return classes.astype(np.int64)
    if classes.dtype.kind == "f":
        return classes.astype(np.float64)
    return np.array([str(c) for c in classes], dtype=object)


def finite_in(values, dtype, what: str) -> np.ndarray:
    """``values`` cast to ``dtype``; a value that is not finite there (overflow, NaN) is an
    :class:`ExportError` naming it and the type's limit."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        cast = values.astype(dtype)
    bad = ~np.isfinite(cast)
    if bad.any():
        value = values[np.unravel_index(int(np.argmax(bad)), values.shape)]
        limit = float(np.finfo(dtype).max)
        raise ExportError(f"{what} {value:g} is not finite as {np.dtype(dtype).name} (limit "
                          f"{limit:.3g}); rescale the targets or export with --dtype float64")
    return cast


def _sequential_sum(input_name, scores, sel, W, b, dtype, unique):
    """Nodes computing acc = b; acc = acc + x[:, sel_i:sel_i+1] * W[i:i+1] for i = 0..k-1."""
    bias = unique("intercepts")
    inits, nodes, acc = [(bias, np.asarray(b, dtype=dtype))], [], bias
    for i, column in enumerate(sel):
        idx, w = unique(f"column_{i}_index"), unique(f"weights_{i}")
        col, prod = unique(f"column_{i}"), unique(f"product_{i}")
        out = scores if i == len(sel) - 1 else unique(f"partial_sum_{i}")
        inits += [(idx, np.array([column], dtype=np.int64)),
                  (w, np.asarray(W[i:i + 1], dtype=dtype))]
        nodes += [("Gather", [input_name, idx], [col], {"axis": 1}),
                  ("Mul", [col, w], [prod], {}), ("Add", [acc, prod], [out], {})]
        acc = out
    return inits, nodes


def linear_nodes(input_name, outputs, *, selected, W, b, n_inputs, dtype, task, classes=None,
                 unique=lambda s: s, sequential=False, thresholds=None):
    """Initializers and nodes of the sparse linear model, independent of the graph builder.

    Parameters
    ----------
    input_name : str
        Graph name of the (n x n_inputs) float input.
    outputs : dict
        Graph names: ``scores``, plus ``decisions`` (multilabel) or ``label`` (multiclass).
    selected : sequence of int
        Input columns used, in the row order of ``W``.
    dtype : numpy float dtype of the input; weights are cast to it.
    classes : array or None
        Multi-class label values (``label`` = classes[argmax]); None gives the index.
    unique : callable
        Maps a suggested intermediate name to a unique one.
    thresholds : sequence of float or None
        Multi-label: label j is on when scores[:, j] > thresholds[j] (cast to ``dtype``; None:
        0 for every label).
    sequential : bool
        Unroll the weighted sum into the bundle's reference order (``acc = b``; then for each
        selected feature i in order ``acc = acc + x_i * W_i``, each a separately rounded Mul and
        Add) instead of one MatMul, so the result is bit-identical to
        :meth:`sensorbudget.trainer.bundle.model.Bundle.decision_scores` and the C header's float order.

    Returns
    -------
    (initializers, nodes) : ([(name, ndarray)], [(op_type, inputs, outputs, attributes)])
    """
    sel = np.asarray(selected, dtype=np.int64)
    W, b = finite_in(W, dtype, "weight"), finite_in(b, dtype, "intercept")
    inits, nodes, x = [], [], input_name
    if sequential:
        inits, nodes = _sequential_sum(input_name, outputs["scores"], sel, W, b, dtype, unique)
    elif not np.array_equal(sel, np.arange(n_inputs)):
        idx, x = unique("selected_index"), unique("selected_features")
        inits.append((idx, sel))
        nodes.append(("Gather", [input_name, idx], [x], {"axis": 1}))
    if not sequential:
        w, bias, mm = unique("weights"), unique("intercepts"), unique("weighted_sum")
        inits += [(w, np.asarray(W, dtype=dtype)), (bias, np.asarray(b, dtype=dtype))]
        nodes += [("MatMul", [x, w], [mm], {}), ("Add", [mm, bias], [outputs["scores"]], {})]
    if task == "multilabel":
        th, above = unique("thresholds"), unique("above_threshold")
        values = np.zeros(W.shape[1]) if thresholds is None else thresholds
        inits.append((th, finite_in(values, dtype, "threshold")))
        nodes += [("Greater", [outputs["scores"], th], [above], {}),
                  ("Cast", [above], [outputs["decisions"]], {"to": TensorProto.INT64})]
    elif task == "multiclass":
        target = outputs["label"] if classes is None else unique("class_index")
        nodes.append(("ArgMax", [outputs["scores"]], [target], {"axis": 1, "keepdims": 0}))
        if classes is not None:
            values = unique("classes")
            inits.append((values, class_values(classes)))
            nodes.append(("Gather", [values, target], [outputs["label"]], {"axis": 0}))
    return inits, nodes


def _input_dtype(variable):
    if isinstance(variable.type, FloatTensorType):
        return np.float32
    if isinstance(variable.type, DoubleTensorType):
        return np.float64
    raise ExportError(f"input {variable.onnx_name!r} has type {variable.type}; the GreedyRLS "
                      "converter takes float or double tensors")


def _task(model):
    return getattr(model, "task_", "regression")


def _label_type(model, n):
    if _task(model) == "multilabel":
        return Int64TensorType([n, model.coef_.shape[1]])
    kind = class_values(model.classes_).dtype.kind
    return {"i": Int64TensorType, "f": DoubleTensorType}.get(kind, StringTensorType)([n])


def _parse_regressor(scope, model, inputs, custom_parsers=None):
    op = scope.declare_local_operator(REGRESSOR_ALIAS, model)
    op.inputs = inputs
    op.outputs.append(scope.declare_local_variable("scores", inputs[0].type.__class__()))
    return op.outputs


def _parse_classifier(scope, model, inputs, custom_parsers=None):
    op = scope.declare_local_operator(CLASSIFIER_ALIAS, model)
    op.inputs = inputs
    name = "labels" if _task(model) == "multilabel" else "label"
    op.outputs.append(scope.declare_local_variable(name, Int64TensorType()))
    op.outputs.append(scope.declare_local_variable("scores", inputs[0].type.__class__()))
    return op.outputs


def _shape(operator):
    model = operator.raw_operator
    if len(operator.inputs) != 1:
        raise ExportError(f"the GreedyRLS converter takes 1 input, got {len(operator.inputs)}")
    _input_dtype(operator.inputs[0])
    n = operator.inputs[0].get_first_dimension()
    scores_type = operator.inputs[0].type.__class__([n, model.coef_.shape[1]])
    if isinstance(model, GreedyRLSClassifier):
        operator.outputs[0].type = _label_type(model, n)
    operator.outputs[-1].type = scores_type


def _convert(scope, operator, container):
    model = operator.raw_operator
    dtype = _input_dtype(operator.inputs[0])
    task = _task(model)
    names = {"scores": operator.outputs[-1].full_name}
    if task != "regression":
        names["decisions" if task == "multilabel" else "label"] = operator.outputs[0].full_name
    inits, nodes = linear_nodes(
        operator.inputs[0].full_name, names, selected=model.selected_, W=model.coef_,
        b=model.intercept_, n_inputs=model.n_features_in_, dtype=dtype, task=task,
        classes=getattr(model, "classes_", None) if task == "multiclass" else None,
        unique=scope.get_unique_variable_name,
        thresholds=getattr(model, "thresholds_", None) if task == "multilabel" else None)
    for name, value in inits:
        if value.dtype == object:
            container.add_initializer(name, TensorProto.STRING, list(value.shape),
                                      [v.encode("utf-8") for v in value])
        else:
            container.add_initializer(name, _PROTO[value.dtype], list(value.shape),
                                      value.ravel().tolist())
    for op_type, ins, outs, attrs in nodes:
        container.add_node(op_type, ins, outs, name=scope.get_unique_operator_name(op_type),
                           op_version=op_version(op_type, container.target_opset), **attrs)


def register() -> None:
    """Register both converters with skl2onnx (idempotent; runs on ``import export``)."""
    update_registered_converter(GreedyRLS, REGRESSOR_ALIAS, _shape, _convert,
                                parser=_parse_regressor)
    update_registered_converter(GreedyRLSClassifier, CLASSIFIER_ALIAS, _shape, _convert,
                                parser=_parse_classifier, options={"zipmap": [True, False]})


register()
