"""C99 streaming extractors: ``<name>_stream.h`` / ``<name>_stream.c`` for a :class:`FirmwarePlan`.

Only the kinds the plan needs are emitted. Every float routine is a literal transcription of the
docstring of its :mod:`sensorbudget.trainer.sensing.extractors` function (same operation order, float32, no fused
multiply-add), every integer routine of :func:`sensorbudget.trainer.sensing.extractors.extract_q15`, so the
results equal :mod:`sensorbudget.firmware_gen.reference` bit for bit. (``mad`` writes ``fabsf`` as
``d < 0 ? -d : d``: avr-libc's fabsf is the double fabs, and the two differ only in the sign of
a zero, which cannot change the sum.) State lives in ``<name>_stream_t`` (a ring
buffer of the last ``window`` samples of every channel); nothing is allocated.
"""

from __future__ import annotations

from sensorbudget.export import cgen
from sensorbudget.export.c_wrap import wrap_c
from sensorbudget.trainer.sensing.q15 import energy_shift
from sensorbudget.trainer.version import package_version

from . import passes_c, q15_c, series_c
from .kernel_c import _MLA
from .plan import FORMAT_VERSION

_LOOP = "    for (i = 0u; i < {P}_WINDOW; ++i) {{\n{body}        j = {P}_NEXT(j);\n    }}\n"
_LOOP1 = "    for (i = 1u; i < {P}_WINDOW; ++i) {{\n{body}        j = {P}_NEXT(j);\n    }}\n"


def _fn(ret, name, args, decls, body):
    return f"static {ret} {{p}}_{name}({args})\n{{{{\n{decls}{body}}}}}\n"


_ONE = "const {p}_stream_t *s, unsigned start, unsigned c"
_MULTI = "const {p}_stream_t *s, unsigned start,\n    const unsigned char *ch, unsigned n"

# kind -> (dependencies, C function); "{p}"/"{P}" are the prefix, X/Q fetch float/int samples.
_FLOAT = {
    "mean": ((), _fn("float", "f_mean", _ONE, "    float acc = 0.0f;\n    unsigned i, j = start;\n",
                     _LOOP.replace("{body}", "        acc = acc + {P}_X(s, j, c);\n")
                     + "    return acc / (float){P}_WINDOW;\n")),
    "mad": ((), _fn("float", "f_mad", _ONE,
                    "    float acc = 0.0f, prev = {P}_X(s, start, c);\n"
                    "    unsigned i, j = {P}_NEXT(start);\n",
                    _LOOP1.replace("{body}", "        const float x = {P}_X(s, j, c);\n"
                                   "        const float d = x - prev;\n"
                                   "        acc = acc + (d < 0.0f ? -d : d);  /* fabsf */\n"
                                   "        prev = x;\n")
                    + "    return acc / (float)({P}_WINDOW - 1u);\n")),
    "zcr": (("mean",), _fn("float", "f_zcr", _ONE,
                           "    const float m = {p}_f_mean(s, start, c);\n"
                           "    int prev = {P}_X(s, start, c) < m;\n"
                           "    unsigned i, j = {P}_NEXT(start), count = 0u;\n",
                           _LOOP1.replace("{body}",
                                          "        const int below = {P}_X(s, j, c) < m;\n"
                                          "        if (below != prev) {{\n            ++count;\n"
                                          "        }}\n        prev = below;\n")
                           + "    return (float)count / (float)({P}_WINDOW - 1u);\n")),
    "corr": ((), _fn("float", "f_corr",
                     "const {p}_stream_t *s, unsigned start, unsigned a, unsigned b",
                     "    const float x0 = {P}_X(s, start, a), y0 = {P}_X(s, start, b);\n"
                     "    const float n = (float){P}_WINDOW;\n"
                     "    float sx = 0.0f, sy = 0.0f, sxx = 0.0f, syy = 0.0f, sxy = 0.0f;\n"
                     "    float mx, my, cxx, cyy, cxy, r;\n    unsigned i, j = start;\n",
                     _LOOP.replace("{body}", "        const float dx = {P}_X(s, j, a) - x0;\n"
                                   "        const float dy = {P}_X(s, j, b) - y0;\n"
                                   "        sx = sx + dx;\n        sy = sy + dy;\n"
                                   "        sxx = sxx + dx * dx;\n        syy = syy + dy * dy;\n"
                                   "        sxy = sxy + dx * dy;\n")
                     + "    mx = sx / n;\n    my = sy / n;\n    cxx = sxx / n - mx * mx;\n"
                     "    cyy = syy / n - my * my;\n    cxy = sxy / n - mx * my;\n"
                     "    if (!(cxx > 0.0f) || !(cyy > 0.0f)) {{\n        return 0.0f;\n    }}\n"
                     "    r = cxy / (sqrtf(cxx) * sqrtf(cyy));\n"
                     "    return r > 1.0f ? 1.0f : (r < -1.0f ? -1.0f : r);\n")),
}

_FIXED = {
    "sum": ((), _fn("int32_t", "q_sum", _ONE, "    int32_t acc = 0;\n    unsigned i, j = start;\n",
                    _LOOP.replace("{body}", "        acc += {P}_Q(s, j, c);\n")
                    + "    return acc;\n")),
    "mad": ((), _fn("int32_t", "q_mad", _ONE,
                    "    int32_t acc = 0, prev = {P}_Q(s, start, c);\n"
                    "    unsigned i, j = {P}_NEXT(start);\n",
                    _LOOP1.replace("{body}", "        const int32_t x = {P}_Q(s, j, c);\n"
                                   "        const int32_t d = x - prev;\n"
                                   "        acc += d < 0 ? -d : d;\n        prev = x;\n")
                    + "    return acc / (int32_t)({P}_WINDOW - 1u);\n")),
    "zcr": (("sum",), _fn("int32_t", "q_zcr", _ONE,
                          "    const int32_t total = {p}_q_sum(s, start, c);\n"
                          "    int prev = (int32_t){P}_WINDOW * {P}_Q(s, start, c) < total;\n"
                          "    unsigned i, j = {P}_NEXT(start);\n    int32_t count = 0;\n",
                          _LOOP1.replace("{body}", "        const int below = (int32_t){P}_WINDOW *"
                                         " {P}_Q(s, j, c) < total;\n"
                                         "        if (below != prev) {{\n            ++count;\n"
                                         "        }}\n        prev = below;\n")
                          + "    return count;\n")),
}


def _types(plan) -> tuple:
    sample = "int16_t" if plan.fixed else "float"
    inp = {"float32": "float", "q15": "int16_t", "q31": "int32_t"}[plan.numeric]
    return sample, inp


def _banner(plan, fname, what) -> str:
    return cgen.block_comment([
        f"{fname}: {what}, generated by sensorbudget {package_version()} (sensorbudget firmware).",
        f"Generated file, do not edit. Format version {FORMAT_VERSION}; bundle sha256 "
        f"{plan.bundle_sha256}."])


def stream_header(plan) -> str:
    """:func:`_stream_header`, its long lines rewrapped (:func:`sensorbudget.export.c_wrap.wrap_c`)."""
    return wrap_c(_stream_header(plan))


def _stream_header(plan) -> str:
    """``<name>_stream.h``: configuration, the context struct and the streaming API."""
    p, P = plan.name, plan.name.upper()
    sample, inp = _types(plan)
    chan = []
    for i, (c, m) in enumerate(zip(plan.channels, cgen.macro_names(f"{P}_CH", plan.channels))):
        scale = "" if not plan.fixed else f"  /* full scale {plan.full_scale[i]:g} */"
        chan.append(f"#define {m} {i}u  /* {cgen.c_comment(c)} */{scale}")
    ext = [f"  [{i}] {cgen.c_comment(e.name)} {e.full_spec.text}"
           f"{'' if not plan.fixed else (' (integer Q15)' if e.fixed else ' (float32)')}"
           f" -> model input {', '.join(map(str, e.slots))}" for i, e in enumerate(plan.extractors)]
    inputs = "features" if not plan.fixed else "inputs"
    inputs_field = "" if not plan.fixed else \
        f"    {inp} inputs[{P}_N_INPUTS];    /* model inputs: features quantised by the header */\n"
    return "\n".join([
        _banner(plan, f"{p}_stream.h", "streaming feature extractors"),
        f"#ifndef {P}_STREAM_H\n#define {P}_STREAM_H\n\n#include <stdint.h>\n",
        f"#define {P}_STREAM_FORMAT_VERSION {FORMAT_VERSION}",
        f"#define {P}_BUNDLE_ID UINT32_C(0x{plan.bundle_id:08x})",
        f"#define {P}_WINDOW {plan.window}u  /* samples per window */",
        f"#define {P}_HOP {plan.hop}u  /* samples between window starts */",
        f"#define {P}_N_CHANNELS {len(plan.channels)}u",
        f"#define {P}_N_INPUTS {plan.k}u",
        f"#define {P}_NUMERIC_CODE {['float32', 'q15', 'q31'].index(plan.numeric)}",
        "", "/* Channels: one sample of each, in this order, per push. */", *chan, "",
        cgen.block_comment(["Extractors, computed when a window completes:", *ext]),
        f"typedef {sample} {p}_sample_t;  /* one sample of one channel */",
        f"typedef {inp} {p}_input_t;  /* one model input */", "",
        "typedef struct {",
        f"    {p}_sample_t buf[{P}_WINDOW][{P}_N_CHANNELS];  /* ring buffer, oldest at pos */",
        "    unsigned pos;          /* next write index (= oldest sample once full) */",
        "    uint32_t n_seen;       /* samples added since reset */",
        "    uint32_t next_end;     /* n_seen at which the next window completes */",
        "    uint32_t windows;      /* windows completed since reset */",
        f"    float features[{P}_N_INPUTS];  /* real feature values, model input order */",
        inputs_field + q15_c.stream_fields(plan) + f"}} {p}_stream_t;", "",
        f"/* Model inputs of the last computed window "
        f"({'features' if not plan.fixed else 'quantised'}). */",
        f"#define {P}_STREAM_INPUTS(s) ((s)->{inputs})", "",
        "/* Forget every sample: the next window starts with the next sample. */",
        f"void {p}_stream_reset({p}_stream_t *s);",
        "/* Store one sample per channel; returns 1 when this sample completes a window (window",
        f" * number s->windows - 1), whose features {p}_stream_compute then computes. */",
        f"int {p}_stream_add({p}_stream_t *s, const {p}_sample_t *frame);",
        "/* Features (and model inputs) of the window ending at the newest sample. */",
        f"void {p}_stream_compute({p}_stream_t *s);",
        f"/* {p}_stream_add, then {p}_stream_compute when a window completed: returns 1 when the",
        " * features are ready. */",
        f"int {p}_stream_push({p}_stream_t *s, const {p}_sample_t *frame);", "",
        f"#endif /* {P}_STREAM_H */", ""])


def _call(plan, e) -> str:
    """C expression of extractor ``e`` (float real value) computed by its own routine."""
    p = plan.name
    (c, *_) = e.channels
    if e.kind == "corr":
        return f"{p}_f_corr(s, start, {e.channels[0]}u, {e.channels[1]}u)"
    if not e.fixed:
        return f"{p}_f_{e.kind}(s, start, {c}u)"
    raw = f"(float){p}_q_{e.kind}(s, start, {c}u)"
    if e.kind == "zcr":
        return f"{raw} / (float)({p.upper()}_WINDOW - 1u)"
    return f"{raw} * {p}_sample_scale[{c}]"


def _groups(plan) -> list:
    """[(key, statistics, extractors)]: one pass per channel (per channel set for the magnitude
    kinds), in order of first use; key None for an extractor with its own routine."""
    groups, sets = {}, q15_c.mag_sets(plan)
    for e in plan.extractors:
        if e.on_series:
            continue
        stats = passes_c.pass_stats(e)
        if stats is None:
            groups[("own", e.name)] = (None, [e])
            continue
        key = ("mag", e.channels) if e.kind in passes_c.MAG_KINDS else ("ch", e.channels)
        if e.fixed and e.kind in q15_c.FIXED_MAG:
            key = ("qmag", e.channels, sets.index(e.channels))
        have, members = groups.get(key, (set(), []))
        groups[key] = (have | set(stats), members + [e])
    return [(key, stats, members) for key, (stats, members) in groups.items()]


def _compute(plan, ints: dict, per_input: bool) -> str:
    """``<name>_stream_compute``: each pass, then the features it yields; the model inputs of
    ``ints`` (:func:`sensorbudget.firmware_gen.q15_c.int_inputs`) from their integer values,
    the others quantised from their float features (one by one with ``per_input``)."""
    p, P = plan.name, plan.name.upper()
    groups = _groups(plan)
    head = [f"void {p}_stream_compute({p}_stream_t *s)", "{",
            "    const unsigned start = s->pos;  /* oldest sample of the window */"]
    if any(e.kind == "last" and not e.on_series for e in plan.extractors):
        head.append(f"    const unsigned newest = start == 0u ? {P}_WINDOW - 1u : start - 1u;")
    n_pass = sum(1 for _, stats, _ in groups if stats)
    if n_pass:
        head.append(f"    {p}_stats_t st[{n_pass}];")
    if q15_c.mag_sets(plan):
        head.append(f"    {p}_mag_update(s);")
    if n_pass:
        head.append(f"    {p}_window_pass(s, start, st);")
    else:
        head.append("    (void)start;")
    lines = []
    for key, stats, members in groups:
        if key[0] == "own":
            (e,) = members
            lines += [q15_c.qin_call(p, slot, f"{p}_q_mad(s, start, {e.channels[0]}u)",
                                     ints[slot][1]) if slot in ints else
                      f"    s->features[{slot}] = {_call(plan, e)};" for slot in e.slots]
            continue
        chans = ", ".join(plan.channels[c] for c in key[1])
        kinds = ", ".join(e.kind for e in members)
        lines.append(f"    /* {cgen.c_comment(chans)}: {kinds} */")
        g = sum(1 for k2, st2, _ in groups[:groups.index((key, stats, members))] if st2)
        for e in members:
            scale = f"{p}_{'energy' if e.kind == 'energy' else 'sample'}_scale[{e.channels[0]}]"
            if key[0] == "qmag":
                scale = cgen.c_float(q15_c.mag_unit(plan, key[1]))
            expr = passes_c.value(p, P, e, scale, f"st[{g}]", mag=key[-1], window=plan.window)
            if any(slot in ints for slot in e.slots):
                raw = passes_c.raw(p, P, e, f"st[{g}]", mag=key[-1], window=plan.window)
            lines += [q15_c.qin_call(p, slot, raw, ints[slot][1]) if slot in ints else
                      f"    s->features[{slot}] = {expr};" for slot in e.slots]
    lines += series_c.compute_calls(plan)
    if per_input:
        lines += [f"    {p}_quantize_span(s, {lo}u, {hi}u);"
                  for lo, hi in _spans(_float_inputs(plan, ints))]
    elif plan.fixed:
        lines.append(f"    {p}_quantize_{plan.numeric}(s->features, s->inputs);")
    return "\n".join(head + lines + ["}", ""])


def _float_inputs(plan, ints: dict) -> list:
    """Model inputs an extractor feeds with a float feature (not from an integer), in order."""
    return sorted(slot for e in plan.extractors for slot in e.slots if slot not in ints)


def _spans(slots) -> list:
    """Runs of consecutive model inputs, as half-open (first, end) pairs."""
    out = []
    for slot in slots:
        if out and out[-1][1] == slot:
            out[-1] = (out[-1][0], slot + 1)
        else:
            out.append((slot, slot + 1))
    return out


def _pass_functions(plan) -> list:
    p, P = plan.name, plan.name.upper()
    out = []
    rms = any(e.fixed and e.kind == "rms" for e in plan.extractors)
    if q15_c.mag_sets(plan) or rms:
        out.append(q15_c.isqrt(p, P, rms))
    if q15_c.mag_sets(plan):
        out.append(q15_c.mag_update(plan))
    groups = [(key, stats) for key, stats, _ in _groups(plan) if stats]
    if not groups:
        return out
    out.append(passes_c.UNROLL.format(P=P))
    if any(key[0] == "mag" or stats & {"sq", "dev"} for key, stats in groups):
        out.append(_MLA.format(p=p))     # only when used: clang warns on unused statics
    out.append(passes_c.stats_struct(p))
    if plan.fixed:
        out.append(passes_c.SIMD.format(p=p, P=P))
    if any("dev" in stats for _, stats in groups):
        out.append(passes_c.std_of(p, P))
    out.append(passes_c.window_pass(p, P, groups, plan.fixed, plan.channels))
    return out


def _constants(plan, ints: dict) -> list:
    p, P = plan.name, plan.name.upper()
    out = []
    if not plan.fixed:
        return out
    as_float = [e for e in plan.extractors if any(slot not in ints for slot in e.slots)]
    uses_scale = any(not e.fixed or e.kind not in ("zcr", "energy", *q15_c.FIXED_MAG)
                     for e in as_float)
    if uses_scale:
        out.append(cgen.array_declare("float", f"{p}_sample_scale",
                                      [fs / 32768.0 for fs in plan.full_scale],
                                      size_macros=(f"{P}_N_CHANNELS",)))
    if any(e.fixed and e.kind == "energy" for e in as_float):
        # the unit of the energy shifted right by energy_shift(window) (passes_c.raw)
        unit = 2.0 ** (energy_shift(plan.window) - 30)
        out.append(cgen.array_declare("float", f"{p}_energy_scale",
                                      [fs * fs * unit for fs in plan.full_scale],
                                      size_macros=(f"{P}_N_CHANNELS",)))
    return out


def stream_source(plan, fixed=None) -> str:
    """:func:`_stream_source`, its long lines rewrapped (:func:`sensorbudget.export.c_wrap.wrap_c`)."""
    return wrap_c(_stream_source(plan, fixed))


def _stream_source(plan, fixed=None) -> str:
    """``<name>_stream.c``: the extractors the plan needs, and the streaming API. ``fixed``
    (the header's FixedPointModel) lets a Q15 plan quantise its integer features without float
    arithmetic (:func:`sensorbudget.firmware_gen.q15_c.int_inputs`); without it every feature
    goes through the header's float quantiser."""
    p, P = plan.name, plan.name.upper()
    ints = q15_c.int_inputs(plan, fixed)
    per_input = fixed is not None and plan.numeric == "q15"
    own = [e for e in plan.extractors if passes_c.pass_stats(e) is None and not e.on_series]
    float_kinds = {e.kind for e in own if not e.fixed}
    fixed_kinds = {e.kind for e in own if e.fixed}
    routines = [_FLOAT[k][1] for k in series_c.needed(_FLOAT, float_kinds)]
    routines += [_FIXED[k][1] for k in series_c.needed(_FIXED, fixed_kinds)]
    fetch = (f"#define {P}_X(s, j, c) ((s)->buf[(j)][(c)])" if not plan.fixed else
             f"#define {P}_X(s, j, c) ((float)(s)->buf[(j)][(c)] * {p}_sample_scale[(c)])\n"
             f"#define {P}_Q(s, j, c) ((s)->buf[(j)][(c)])")
    compute = _compute(plan, ints, per_input)
    quantizers = q15_c.quantizers(p, bool(ints), per_input and bool(_float_inputs(plan, ints)))
    api = f"""\
void {p}_stream_reset({p}_stream_t *s)
{{
    memset(s, 0, sizeof *s);
    s->next_end = {P}_WINDOW;
}}

int {p}_stream_add({p}_stream_t *s, const {p}_sample_t *frame)
{{
    /* one row, copied whole: a constant-size copy (word moves), no per-channel loop */
    memcpy(s->buf[s->pos], frame, sizeof s->buf[0]);
    s->pos = {P}_NEXT(s->pos);
    s->n_seen++;
    if (s->n_seen != s->next_end) {{
        return 0;
    }}
    s->next_end += {P}_HOP;
    s->windows++;
    return 1;
}}

int {p}_stream_push({p}_stream_t *s, const {p}_sample_t *frame)
{{
    if (!{p}_stream_add(s, frame)) {{
        return 0;
    }}
    {p}_stream_compute(s);
    return 1;
}}
"""
    body = [_banner(plan, f"{p}_stream.c", "streaming feature extractors"),
            "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n",
            f'#include "{p}.h"\n#include "{p}_stream.h"\n',
            f"#if {P}_STREAM_FORMAT_VERSION != {FORMAT_VERSION}\n"
            '#error "this stream header is from another firmware_gen version: regenerate"\n'
            "#endif\n"
            f"#if {P}_N_INPUTS != {P}_N_FEATURES\n"
            '#error "the stream and the model header disagree on the number of inputs: regenerate"\n'
            "#endif\n",
            f"#define {P}_NEXT(j) ((j) + 1u == {P}_WINDOW ? 0u : (j) + 1u)\n{fetch}\n",
            *_constants(plan, ints), *([quantizers] if quantizers else []),
            *_pass_functions(plan), *(r.format(p=p, P=P) for r in routines),
            *series_c.source_parts(plan, ints), compute, api]
    return "\n".join(body)
