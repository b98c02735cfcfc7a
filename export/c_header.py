"""A self-contained C99 header for a bundle: sparse weights, required inputs, predict functions.

:func:`c_header` returns the header text (plus the fixed-point model and its error bound); it
never writes files. The header holds only ``static const`` data and ``static inline`` functions,
so it can be included from several ``.c`` files; it needs ``<stddef.h>`` and ``<stdint.h>`` only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

from sensorbudget.trainer.version import package_version

from . import cgen
from .c_decisions import decide_part
from .cgen import DEFAULT_NAME, NUMERICS
from .ctemplate import macro
from .errors import ExportError
from .fixed_point import FORMATS, FixedPointModel, float32_down, float32_up, quantize_model

HEADER_FORMAT_VERSION = 1
TEMPLATE = "header.h.j2"   # the functions' C (export/templates)


@dataclass(frozen=True)
class CHeader:
    """A generated header: ``text``, the symbol prefix and, for Q15/Q31, the integer model."""

    text: str
    name: str
    numeric: str
    fixed: FixedPointModel | None = None

    @property
    def error_bound(self) -> float | None:
        """Stated bound on |fixed-point score - float64 score| over the training input ranges
        (the computed bound rounded up to 2 significant digits, as written in the header)."""
        return None if self.fixed is None else float(stated_bound(self.fixed.error_bound))


def stated_bound(x: float) -> str:
    """``x`` rounded up to 2 significant digits, as decimal text (e.g. ``"1.3e-04"``)."""
    if x <= 0:
        return "0.0"
    exp = Decimal(x).adjusted() - 1
    step = Decimal(1).scaleb(exp)
    value = (Decimal(x) / step).to_integral_value(rounding=ROUND_CEILING) * step
    return f"{value:.1e}"



def required_inputs(meta: dict):
    """(required extractor dicts, required sensor dicts) in the bundle's order."""
    by_name = {e["name"]: e for e in meta.get("extractors", [])}
    extractors = [by_name.get(n, {"name": n}) for n in meta["required_extractors"]]
    sensors_by_name = {s["name"]: s for s in meta.get("sensors", []) if isinstance(s, dict)}
    sensors = [sensors_by_name.get(n, {"name": n}) for n in meta["required_sensors"]]
    return extractors, sensors


def feature_extractor_index(meta: dict) -> list:
    """For each selected feature, the index of its extractor in required_extractors (or -1)."""
    owner = {f: e["name"] for e in meta.get("extractors", []) for f in e.get("features", [])}
    req = list(meta["required_extractors"])
    return [req.index(owner[f]) if owner.get(f) in req else -1 for f in meta["selected"]]


def _g(x) -> str:
    return "%.6g" % float(x)


def _banner(bundle, name, numeric) -> str:
    meta = bundle.meta
    extractors, sensors = required_inputs(meta)
    ext_index = feature_extractor_index(meta)
    arrays, task = bundle.arrays, meta["task"]
    lines = [f"{name}.h: sparse linear model exported by sensorbudget {package_version()} "
             "(sensorbudget export c-header). Generated file, do not edit.",
             f"Header format version {HEADER_FORMAT_VERSION}; "
             f"bundle sha256 {bundle.bundle_sha256()}.",
             f"Task {task}; {len(meta['selected'])} selected features of {len(meta['features'])} "
             f"candidates; {len(meta['targets'])} targets; numeric {numeric}.", "",
             f"Required sensors ({len(sensors)}):"]
    lines += [f"  [{i}] {cgen.c_comment(s['name'])} {cgen.c_comment(s)}"
              for i, s in enumerate(sensors)]
    lines.append(f"Required extractors ({len(extractors)}), to compute on the device:")
    for i, e in enumerate(extractors):
        lines.append(f"  [{i}] {cgen.c_comment(e['name'])} sensors "
                     f"{cgen.c_comment(e.get('sensors', []))} cost {_g(e.get('cost', 1.0))} "
                     f"params {cgen.c_comment(e.get('params', {}))}")
    lines.append(f"Input features, in the order {name}_predict expects them:")
    for i, f in enumerate(meta["selected"]):
        lines.append(f"  [{i}] {cgen.c_comment(f)} candidate column {meta['selected_index'][i]}, "
                     f"extractor [{ext_index[i]}], training range [{_g(arrays['x_min'][i])}, "
                     f"{_g(arrays['x_max'][i])}]")
    label = "Classes" if task == "multiclass" else "Targets"
    lines.append(f"{label} (scores[j]):")
    lines += [f"  [{j}] {cgen.c_comment(t)}" for j, t in enumerate(_targets(meta))]
    return cgen.block_comment(lines)


def _targets(meta):
    return [str(c) for c in meta.get("classes") or meta["targets"]]


def _common_macros(bundle, name, numeric) -> str:
    meta, up = bundle.meta, name.upper()
    rows = [f"#define {up}_FORMAT_VERSION {HEADER_FORMAT_VERSION}",
            f"#define {up}_N_FEATURES {len(meta['selected'])}",
            f"#define {up}_N_TARGETS {len(meta['targets'])}",
            f"#define {up}_N_CANDIDATES {len(meta['features'])}",
            f"#define {up}_N_REQUIRED_EXTRACTORS {len(meta['required_extractors'])}",
            f"#define {up}_N_REQUIRED_SENSORS {len(meta['required_sensors'])}",
            f"#define {up}_TASK_{meta['task'].upper()} 1",
            f"#define {up}_NUMERIC_{numeric.upper()} 1", "",
            "/* Index of each input feature in features[] and of each target in scores[]. */"]
    for prefix, labels in ((f"{up}_F", meta["selected"]), (f"{up}_T", _targets(meta))):
        rows += [f"#define {m} {i}" for i, m in enumerate(cgen.macro_names(prefix, labels))]
    return "\n".join(rows) + "\n"


def _tables(bundle, name) -> str:
    meta, up, arr = bundle.meta, name.upper(), bundle.arrays
    extractors, sensors = required_inputs(meta)
    fnames = [cgen.c_comment(f) for f in meta["selected"]]
    params = [json.dumps(e.get("params", {}), sort_keys=True, ensure_ascii=False)
              for e in extractors]
    k_dim = (f"{up}_N_FEATURES",)
    parts = [
        cgen.array_declare("const char *", f"{name}_feature_names", meta["selected"],
                           size_macros=(f"{up}_N_FEATURES",)),
        cgen.array_declare("unsigned", f"{name}_feature_columns", meta["selected_index"],
                           size_macros=(f"{up}_N_FEATURES",), row_comments=fnames),
        cgen.array_declare("int", f"{name}_feature_extractor", feature_extractor_index(meta),
                           size_macros=(f"{up}_N_FEATURES",), row_comments=fnames),
        cgen.array_declare("const char *", f"{name}_target_names", _targets(meta),
                           size_macros=(f"{up}_N_TARGETS",)),
        cgen.array_declare("const char *", f"{name}_required_extractors",
                           [e["name"] for e in extractors]),
        cgen.array_declare("const char *", f"{name}_extractor_params_json", params),
        cgen.array_declare("const char *", f"{name}_required_sensors",
                           [s["name"] for s in sensors]),
        "/* Training range of each input feature (float32, rounded outwards). */\n",
        cgen.array_declare("float", f"{name}_x_min", float32_down(arr["x_min"]), size_macros=k_dim),
        cgen.array_declare("float", f"{name}_x_max", float32_up(arr["x_max"]), size_macros=k_dim),
    ]
    return "\n".join(parts)


def _row_comments(meta):
    return [f"[{i}] {cgen.c_comment(f)}" for i, f in enumerate(meta["selected"])]


def _float_part(bundle, name) -> str:
    up, meta = name.upper(), bundle.meta
    return "\n".join([
        "/* Weights (selected features x targets, selection order) and intercepts, float32. */\n",
        cgen.array_declare("float", f"{name}_weights", bundle.arrays["W"],
                           row_comments=_row_comments(meta),
                           size_macros=(f"{up}_N_FEATURES", f"{up}_N_TARGETS")),
        cgen.array_declare("float", f"{name}_intercepts", bundle.arrays["b"],
                           size_macros=(f"{up}_N_TARGETS",)),
        macro(TEMPLATE, "float_predict", name, up)])


def _fixed_part(bundle, name, fx: FixedPointModel) -> str:
    up, meta, fmt = name.upper(), bundle.meta, fx.fmt
    q, Q = fmt.name, fmt.name.upper()
    ft = fmt.float_ctype
    lit = cgen.c_float if ft == "float" else cgen.c_double
    bound = stated_bound(fx.error_bound)
    dims = (f"{up}_N_FEATURES",)
    macros = "\n".join([
        f"/* {Q}: score = scores_q * 2^-{up}_{Q}_SCORE_FRAC_BITS;\n"
        f" * accumulators hold score * 2^{up}_{Q}_WEIGHT_FRAC_BITS. */",
        f"#define {up}_{Q}_WEIGHT_FRAC_BITS {fx.weight_frac_bits}",
        f"#define {up}_{Q}_SCORE_FRAC_BITS {fx.score_frac_bits}",
        f"#define {up}_{Q}_SHIFT {fx.shift}",
        f"/* |score - float64 model score| <= {up}_{Q}_ERROR_BOUND\n"
        f" * for inputs in [x_min, x_max] (largest reachable |score| {_g(fx.score_max)}). */",
        f"#define {up}_{Q}_ERROR_BOUND {bound}f", ""])
    if ft == "double":       # avr-gcc's double is a float: the quantiser would round otherwise
        macros += ("#if defined(__SIZEOF_DOUBLE__) && __SIZEOF_DOUBLE__ < 8\n"
                   f'#error "{Q} needs a 64-bit double (avr-gcc has 32 bits): use q15 or float32"'
                   "\n#endif\n")
    rescale = macro(TEMPLATE, "rescale", fmt.acc_ctype, up, Q) if fx.shift > 0 else ""
    code = macro(
        TEMPLATE, "quantize",
        name=name, up=up, q=q, Q=Q, ft=ft, ct=fmt.ctype, acc=fmt.acc_ctype, qmax=fmt.qmax,
        qmax_lit=lit(fmt.qmax), zero=lit(0.0), half=lit(0.5), rescale=rescale,
        cast="" if ft == "float" else "(double)",
        omax=cgen.c_int(fmt.qmax, fmt.acc_ctype), omin=cgen.c_int(fmt.qmin, fmt.acc_ctype))
    return "\n".join([
        macros,
        "/* Input quantisation: centre and QMAX / half-width of each training range. */\n",
        cgen.array_declare(ft, f"{name}_{q}_input_offset", fx.input_offset, size_macros=dims),
        cgen.array_declare(ft, f"{name}_{q}_input_inv_scale", fx.input_inv_scale, size_macros=dims),
        f"/* Weights with the input scales folded in, times 2^{fx.weight_frac_bits};\n"
        " * intercepts with the offsets folded in, same scale. */\n",
        cgen.array_declare(fmt.ctype, f"{name}_{q}_weights", fx.weights,
                           row_comments=_row_comments(meta),
                           size_macros=(f"{up}_N_FEATURES", f"{up}_N_TARGETS")),
        cgen.array_declare(fmt.acc_ctype, f"{name}_{q}_intercepts", list(fx.intercepts),
                           size_macros=(f"{up}_N_TARGETS",), per_line=3),
        code])


def _labels_part(task, name, numeric) -> str:
    if task == "regression":
        return ""
    if numeric == "float32":
        kw = dict(sfx="", it="float", st="float", qs="")
    else:
        ct = FORMATS[numeric].ctype
        kw = dict(sfx=f"_{numeric}", it=ct, st=ct, qs="_q")
    return macro(TEMPLATE, task if task == "multilabel" else "multiclass", name=name,
                 up=name.upper(), **kw)


def c_header(bundle, *, name: str = DEFAULT_NAME, numeric: str = "float32") -> CHeader:
    """Generate the C99 header for ``bundle`` (a :class:`sensorbudget.trainer.bundle.model.Bundle`).

    Parameters
    ----------
    name : str
        Prefix of every symbol (``<name>_predict``, ``<NAME>_N_FEATURES``); a C identifier that is
        not a reserved word.
    numeric : {"float32", "q15", "q31"}
        float32 weights and ``<name>_predict(const float *, float *)``, or fixed point with
        ``<name>_quantize_<q>``, ``<name>_predict_<q>`` on int16_t/int32_t. Multi-label headers
        also get the label thresholds and ``<name>_decide[_<q>]`` (:mod:`sensorbudget.export.c_decisions`).
    """
    cgen.check_identifier(name, "name")
    if numeric not in NUMERICS:
        raise ExportError(f"numeric={numeric!r} is not one of {NUMERICS}")
    meta, arrays = bundle.meta, bundle.arrays
    if not meta["selected"] or not meta["targets"]:
        raise ExportError(f"the bundle has {len(meta['selected'])} selected features and "
                          f"{len(meta['targets'])} targets; at least 1 of each is needed")
    fixed = None
    if numeric != "float32":
        fixed = quantize_model(arrays["W"], arrays["b"], arrays["x_min"], arrays["x_max"], numeric)
    up = name.upper()
    body = _float_part(bundle, name) if fixed is None else _fixed_part(bundle, name, fixed)
    text = "\n".join([
        _banner(bundle, name, numeric),
        f"#ifndef {up}_H\n#define {up}_H\n",
        "#include <stddef.h>\n#include <stdint.h>\n",
        _common_macros(bundle, name, numeric),
        _tables(bundle, name),
        macro(TEMPLATE, "select", name, up),
        body,
        _labels_part(meta["task"], name, numeric),
        decide_part(meta, name, numeric, fixed),
        f"#endif /* {up}_H */\n"])
    return CHeader(text=text.replace("\n\n\n", "\n\n"), name=name, numeric=numeric,
                   fixed=fixed)
