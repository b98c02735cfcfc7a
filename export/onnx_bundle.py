"""ONNX models built from a bundle (no estimator needed), their metadata, and a checked runner.

Graph input ``features`` (n x d, float32 or float64): with ``inputs="all"`` the full candidate
feature vector (the graph gathers the selected columns), with ``inputs="selected"`` only the k
selected features in selection order (what a device computes). The first output is the
decision, the one rule of :func:`sensorbudget.trainer.bundle.decision.decide_scores` (what ``predict``,
``simulate`` and the C ``decide`` give); the raw scores follow, by name:

- regression: ``scores`` (n x t): the prediction is the score;
- multi-label: ``decisions`` (int64 n x t: score > the label's calibrated threshold from the
  bundle's ``decision`` entry, 0 without one), ``scores`` (n x t) and, with Platt
  coefficients, ``probabilities`` (n x t, 1 / (1 + exp(-(a score + b))));
- multi-class (and binary): ``label`` (int64 n, the index into ``classes`` of the largest
  score, the first on ties), ``scores`` (n x classes).

Metadata (``metadata_props``, JSON strings) says which extractors, with which parameters, and
which sensors produce the inputs, and ``decision`` which output to use and what it means;
:func:`describe_onnx` prints it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from sensorbudget.trainer.version import package_version

from .c_header import required_inputs
from .errors import ExportError
from .onnx_convert import finite_in, linear_nodes, op_version

INPUT_NAME = "features"
DEFAULT_OPSET = 13
MIN_OPSET = 13
DTYPES = {"float32": (np.float32, TensorProto.FLOAT), "float64": (np.float64, TensorProto.DOUBLE)}
INPUTS = ("all", "selected")
METADATA_KEYS = ("task", "inputs", "input_features", "selected_features", "required_extractors",
                 "required_sensors", "required_transforms", "targets", "classes", "costs",
                 "decision", "bundle_sha256", "sensorbudget_version")



def output_names(task: str, meta: dict | None = None) -> list:
    """Graph output names for a task, in order: the decision first (``decisions`` or
    ``label``; a regression's ``scores``), then the raw ``scores``, then, for a multi-label
    bundle with Platt coefficients (``meta["decision"]["platt"]``), ``probabilities``."""
    names = {"regression": ["scores"], "multilabel": ["decisions", "scores"],
             "multiclass": ["label", "scores"]}[task]
    entry = (meta or {}).get("decision") if task == "multilabel" else None
    if entry and entry.get("platt"):
        names = names + ["probabilities"]
    return names


def decision_text(meta: dict) -> str:
    """Which output is the decision and what it is (the ONNX metadata ``decision``)."""
    from sensorbudget.trainer.bundle.decision import describe

    first = output_names(meta["task"], meta)[0]
    return f"output {first!r}: {describe(meta)}"


def platt_nodes(meta: dict, dtype) -> tuple:
    """Initializers and nodes of ``probabilities`` = Sigmoid(scores * a + b) (Platt), the
    coefficients cast to the input's float type."""
    ab = np.asarray(meta["decision"]["platt"], dtype=np.float64)
    inits = [("platt_a", finite_in(ab[:, 0], dtype, "Platt slope")),
             ("platt_b", finite_in(ab[:, 1], dtype, "Platt offset"))]
    nodes = [("Mul", ["scores", "platt_a"], ["platt_scaled"], {}),
             ("Add", ["platt_scaled", "platt_b"], ["platt_logit"], {}),
             ("Sigmoid", ["platt_logit"], ["probabilities"], {})]
    return inits, nodes


def costs(meta: dict) -> dict:
    """Costs of what the model needs: per required extractor, per required sensor, and total."""
    extractors, sensors = required_inputs(meta)
    ext = {e["name"]: float(e.get("cost", 1.0)) for e in extractors}
    sen = {s["name"]: float(s["cost"]) for s in sensors if "cost" in s}
    path = meta.get("path") or []
    total = float(path[-1]["cost"]) if path and "cost" in path[-1] else sum(ext.values())
    return {"extractors": ext, "sensors": sen, "total": total}


def onnx_metadata(bundle, inputs: str = "all") -> dict:
    """``metadata_props`` for a bundle's ONNX model: {key: JSON string}."""
    meta = bundle.meta
    extractors, sensors = required_inputs(meta)
    values = {
        "task": meta["task"], "inputs": inputs,
        "input_features": list(meta["features"] if inputs == "all" else meta["selected"]),
        "selected_features": list(meta["selected"]),
        "required_extractors": extractors, "required_sensors": sensors,
        "required_transforms": meta.get("required_transforms"),
        "targets": list(meta["targets"]), "classes": meta.get("classes"),
        "costs": costs(meta), "decision": decision_text(meta),
        "bundle_sha256": bundle.bundle_sha256(),
        "sensorbudget_version": package_version(),
    }
    return {k: json.dumps(v, sort_keys=True, ensure_ascii=False) for k, v in values.items()
            if v is not None}


def _check_options(inputs, dtype, opset):
    if inputs not in INPUTS:
        raise ExportError(f"inputs={inputs!r} is not one of {INPUTS}")
    if dtype not in DTYPES:
        raise ExportError(f"dtype={dtype!r} is not one of {tuple(DTYPES)}")
    top = onnx.defs.onnx_opset_version()
    if not isinstance(opset, int) or isinstance(opset, bool) or not MIN_OPSET <= opset <= top:
        raise ExportError(f"opset={opset!r} is outside {MIN_OPSET}..{top} (the range this onnx "
                          f"{onnx.__version__} supports)")


def bundle_to_onnx(bundle, *, inputs: str = "all", dtype: str = "float32",
                   opset: int = DEFAULT_OPSET) -> onnx.ModelProto:
    """Build and check the ONNX model of a :class:`sensorbudget.trainer.bundle.model.Bundle`."""
    _check_options(inputs, dtype, opset)
    meta, arrays = bundle.meta, bundle.arrays
    np_dtype, proto = DTYPES[dtype]
    task, k, t = meta["task"], len(meta["selected"]), len(meta["targets"])
    n_inputs = len(meta["features"]) if inputs == "all" else k
    selected = meta["selected_index"] if inputs == "all" else range(k)
    names = {name: name for name in output_names(task)}
    thresholds = None
    if task == "multilabel" and meta.get("decision"):
        thresholds = meta["decision"]["thresholds"]
    inits, nodes = linear_nodes(INPUT_NAME, names, selected=list(selected), W=arrays["W"],
                                b=arrays["b"], n_inputs=n_inputs, dtype=np_dtype, task=task,
                                sequential=True, thresholds=thresholds)
    score_info = helper.make_tensor_value_info("scores", proto, ["N", t])
    if task == "multilabel":
        graph_outputs = [helper.make_tensor_value_info("decisions", TensorProto.INT64,
                                                       ["N", t]), score_info]
        if (meta.get("decision") or {}).get("platt"):
            more_inits, more_nodes = platt_nodes(meta, np_dtype)
            inits, nodes = inits + more_inits, nodes + more_nodes
            graph_outputs.append(helper.make_tensor_value_info("probabilities", proto,
                                                               ["N", t]))
    elif task == "multiclass":
        graph_outputs = [helper.make_tensor_value_info("label", TensorProto.INT64, ["N"]),
                         score_info]
    else:
        graph_outputs = [score_info]
    graph = helper.make_graph(
        [helper.make_node(op, ins, outs, name=f"{op}_{i}", **attrs)
         for i, (op, ins, outs, attrs) in enumerate(nodes)],
        f"sensorbudget_{task}",
        [helper.make_tensor_value_info(INPUT_NAME, proto, ["N", n_inputs])], graph_outputs,
        initializer=[numpy_helper.from_array(np.asarray(v), name) for name, v in inits],
        doc_string=f"scores = b + sum_i features[:, selected_i] * W_i, summed in selection "
                   f"order; {k} selected features, {t} targets")
    used = max(op_version(op, opset) for op, *_ in nodes)
    opsets = [helper.make_opsetid("", used)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="sensorbudget",
                              producer_version=package_version(), model_version=1,
                              ir_version=helper.find_min_ir_version_for(opsets),
                              doc_string=f"sensorbudget {task} model, bundle "
                                         f"{bundle.bundle_sha256()}")
    helper.set_model_props(model, onnx_metadata(bundle, inputs))
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        raise ExportError(f"the generated ONNX model fails onnx.checker: {exc}") from None
    return model


def load_onnx(path) -> onnx.ModelProto:
    """Read an ONNX file, with :class:`ExportError` for a missing or unreadable file."""
    path = Path(path)
    if not path.is_file():
        raise ExportError(f"{str(path)!r} does not exist or is not a file")
    try:
        return onnx.load(str(path))
    except Exception as exc:  # onnx raises DecodeError and others for non-ONNX bytes
        raise ExportError(f"{str(path)!r} is not a readable ONNX model: "
                          f"{type(exc).__name__}") from None


def _decode(props: dict) -> dict:
    out = {}
    for key, value in props.items():
        try:
            out[key] = json.loads(value)
        except (ValueError, RecursionError):  # bad JSON, non-UTF-8 bytes, too deeply nested
            out[key] = value
    return out


def read_metadata(model: onnx.ModelProto) -> dict:
    """``metadata_props`` decoded: JSON values parsed, anything else kept as a string."""
    return _decode({p.key: p.value for p in model.metadata_props})


_ELEM = {v: k for k, v in TensorProto.DataType.items()}


def _tensor_text(vi) -> str:
    tt = vi.type.tensor_type
    dims = [d.dim_param or str(d.dim_value) for d in tt.shape.dim]
    return f"{vi.name}: {_ELEM.get(tt.elem_type, '?').lower()}[{', '.join(dims)}]"


_METADATA_TYPES = {   # key -> (check, what); values describe_onnx formats
    "input_features": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
                       "a list of strings"),
    "selected_features": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
                          "a list of strings"),
    "targets": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
                "a list of strings"),
    "required_extractors": (lambda v: isinstance(v, list) and all(
        isinstance(x, dict) and isinstance(x.get("params", {}), dict) for x in v),
        "a list of objects"),
    "required_sensors": (lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v),
                         "a list of objects"),
    "classes": (lambda v: v is None or isinstance(v, list), "a list"),
    "costs": (lambda v: isinstance(v, dict), "an object"),
}


def _check_metadata(md: dict, path) -> None:
    """ExportError when a sensorbudget metadata value has a type describe_onnx cannot show."""
    for key, (check, what) in _METADATA_TYPES.items():
        if key in md and not check(md[key]):
            shown = repr(md[key])
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            raise ExportError(f"{str(path)!r}: sensorbudget metadata {key}={shown} must be "
                              f"{what}")


def describe_onnx(path) -> str:
    """Human-readable summary of an ONNX model file, including sensorbudget metadata."""
    model = load_onnx(path)
    md = read_metadata(model)
    opsets = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import)
    lines = [f"ONNX model {Path(path).name}: producer {model.producer_name or '?'} "
             f"{model.producer_version}, IR {model.ir_version}, opset {opsets}",
             "inputs:  " + "; ".join(_tensor_text(v) for v in model.graph.input),
             "outputs: " + "; ".join(_tensor_text(v) for v in model.graph.output)]
    if "task" not in md:
        lines.append("no sensorbudget metadata")
        lines += [f"{k}: {v}" for k, v in sorted(md.items())]
        return "\n".join(lines) + "\n"
    _check_metadata(md, path)
    lines += [f"task: {md['task']} (sensorbudget {md.get('sensorbudget_version', '?')}, bundle "
              f"sha256 {md.get('bundle_sha256', '?')})",
              f"input features ({len(md.get('input_features', []))}, inputs={md.get('inputs')}): "
              + ", ".join(md.get("input_features", [])[:20])
              + (" ..." if len(md.get("input_features", [])) > 20 else ""),
              f"selected features ({len(md.get('selected_features', []))}): "
              + ", ".join(md.get("selected_features", []))]
    if isinstance(md.get("decision"), str):
        lines.append(f"decision: {md['decision']}")
    exts = md.get("required_extractors", [])
    lines.append(f"required extractors ({len(exts)}):")
    for e in exts:
        params = json.dumps(e.get("params", {}), sort_keys=True, ensure_ascii=False)
        lines.append(f"  {e.get('name')}: cost {e.get('cost', '?')}, sensors "
                     f"{e.get('sensors', [])}, params {params}")
    sens = md.get("required_sensors", [])
    lines.append(f"required sensors ({len(sens)}): "
                 + ", ".join(str(s.get("name", "?")) for s in sens))
    lines.append(f"targets ({len(md.get('targets', []))}): " + ", ".join(md.get("targets", [])))
    if md.get("classes") is not None:
        lines.append("classes: " + ", ".join(str(c) for c in md["classes"]))
    if "costs" in md:
        lines.append(f"total cost: {md['costs'].get('total')}")
    return "\n".join(lines) + "\n"


class OnnxModel:
    """An onnxruntime session that checks its input and names its outputs.

    ``OnnxModel(path_or_bytes).run(X)`` returns {output name: array}. A wrong dtype, rank or
    width raises :class:`ExportError` with one line naming what was given and what is expected
    (onnxruntime's own message is ``INVALID_ARGUMENT : Unexpected input data type``).
    """

    def __init__(self, model):
        import onnxruntime as ort
        data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
        if isinstance(data, (str, Path)):
            data = load_onnx(data).SerializeToString()
        try:
            self.session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph classes
            first = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise ExportError(f"onnxruntime cannot load the model: {first}") from None
        inp = self.session.get_inputs()[0]
        self.input_name = inp.name
        self.dtype = {"tensor(float)": np.dtype(np.float32),
                      "tensor(double)": np.dtype(np.float64)}.get(inp.type)
        width = inp.shape[1] if len(inp.shape) == 2 else None
        self.n_inputs = width if isinstance(width, int) else None
        self.output_names = [o.name for o in self.session.get_outputs()]
        self.metadata = _decode(self.session.get_modelmeta().custom_metadata_map)

    def run(self, X) -> dict:
        """Outputs for ``X`` (n x n_inputs, exactly the model's dtype)."""
        X = np.asarray(X)
        if self.dtype is not None and X.dtype != self.dtype:
            hint = f" or export with --dtype {X.dtype}" if X.dtype.name in DTYPES else ""
            raise ExportError(f"input {self.input_name!r} has dtype {X.dtype}; this model takes "
                              f"{self.dtype} (convert with X.astype(np.{self.dtype}){hint})")
        if X.ndim != 2 or (self.n_inputs is not None and X.shape[1] != self.n_inputs):
            raise ExportError(f"input {self.input_name!r} has shape {X.shape}; this model takes "
                              f"(n, {self.n_inputs})")
        values = self.session.run(None, {self.input_name: np.ascontiguousarray(X)})
        return dict(zip(self.output_names, values))
