"""C for the extractors computed on a linear copy of a channel's window (issue 18).

The shape kinds (skew, kurtosis, slope, peaks, percentile), autocorrelation and cadence, the
spectral kinds (:mod:`.fft_c`) and every per-channel kind after a preprocessing step (``jerk``,
``highpass:ALPHA``) read the window as one array, oldest sample first. For each (channel,
preprocessing) pair a plan needs, ``<name>_stream_compute`` calls one generated function, named
for the channel and the step (``<name>_series_acc_x_jerk``), that

1. fills the scratch array ``<name>_x`` once: the ring buffer unrolled (a plain copy), or the
   preprocessing (:mod:`sensorbudget.trainer.sensing.shape`: ``d[i] = x[i+1] - x[i]``;
   ``y[i] = ALPHA * (y[i-1] + (x[i] - x[i-1]))``), computed once however many features read it
   (the transform level of the cost model);
2. computes every non-spectral feature of that array, then, per spectrum window (Hann,
   rectangular), the power spectrum once (:mod:`.fft_c`) and every spectral feature reading it;
3. last, the percentiles: a selection (Wirth's, about ``2 N`` compares) reorders the array in
   place, which no later feature reads (several percentiles select in the same array: a
   permutation of the window has the same order statistics).

Every routine is a literal transcription of its docstring in
:mod:`sensorbudget.trainer.sensing.extractors`, :mod:`~sensorbudget.trainer.sensing.shape` and
:mod:`~sensorbudget.trainer.sensing.spectral` (same float32 operation order, no fused
multiply-add), so the values equal :mod:`sensorbudget.firmware_gen.reference` bit for bit. A Q15
``percentile`` without preprocessing selects on an ``int16_t`` copy (``<name>_q``): exact.
Scratch arrays are file ``static`` (one set, however many channels: each group consumes them
before the next fills them); nothing is allocated.
"""

from __future__ import annotations

import math

from sensorbudget.export import cgen
from sensorbudget.trainer.sensing.spectral import fft_size

from . import fft_c, q15_c, shape_c
from .ctemplate import macro
from .kernel_c import _FLASH_MACROS

ROUTINES = {**shape_c.ROUTINES, **fft_c.ROUTINES}
#: where a generated line may break (:func:`sensorbudget.export.cgen.fit`)
BR, JOIN = cgen.BREAK, cgen.JOIN

#: preprocessing -> the macro of ``templates/series.c.j2`` that fills the scratch array
_FILL = {"": "fill_copy", "jerk": "fill_jerk", "highpass": "fill_highpass", "qcopy": "fill_qcopy"}




def needed(table, roots) -> list:
    """The routines of ``table`` ({name: (dependencies, C text)}) needed for ``roots``,
    dependencies first, each once (also for the routine tables of :mod:`.extractors_c`)."""
    out = []

    def visit(name):
        for dep in table[name][0]:
            visit(dep)
        if name not in out:
            out.append(name)

    for name in sorted(roots):
        visit(name)
    return out


def series_length(plan, ext) -> int:
    """Values of the extractor's array: the window, one fewer after ``jerk``."""
    return plan.window - (1 if ext.full_spec.pre == "jerk" else 0)


def groups(plan) -> list:
    """[((channel, pre, pre_arg), extractors)] of the plan's series extractors, first use order."""
    out = {}
    for e in plan.extractors:
        if e.on_series:
            s = e.full_spec
            out.setdefault((e.channels[0], s.pre, s.pre_arg), []).append(e)
    return list(out.items())


def _percentile_rank(p: float, n: int) -> int:
    """``r`` of :func:`sensorbudget.trainer.sensing.shape.percentile` (1-based)."""
    return max(1, min(n, math.ceil(round(p * n, 9) / 100)))


def _qpercentile(plan, e, n: str, length: int) -> str:
    """C expression (int32) of a Q15 percentile: the order statistic of ``<p>_q`` (breaks
    marked for :func:`sensorbudget.export.cgen.fit`, as in every expression here)."""
    r = _percentile_rank(float(e.full_spec.arg), length) - 1
    return f"(int32_t){plan.name}_q_select({JOIN}{plan.name}_q,{BR}{n},{BR}{r}u)"


def _value(plan, e, n: str, length: int) -> str:
    """C expression of a non-spectral series extractor on ``<p>_x`` of length ``n``."""
    p, s = plan.name, e.full_spec
    if e.kind == "percentile":
        r = _percentile_rank(float(s.arg), length) - 1
        if e.fixed:
            return (f"(float)({_qpercentile(plan, e, n, length)}) *{BR}"
                    f"{p}_sample_scale[{e.channels[0]}]")
        return f"{p}_s_select({JOIN}{p}_x,{BR}{n},{BR}{r}u) + 0.0f"
    if e.kind == "peaks":
        return f"{p}_s_peaks({JOIN}{p}_x,{BR}{n},{BR}{cgen.c_float(s.arg)})"
    if e.kind == "autocorr":
        return f"{p}_s_autocorr({JOIN}{p}_x,{BR}{n},{BR}{int(s.arg)}u)"
    if e.kind == "cadence":
        return f"{p}_s_cadence({JOIN}{p}_x,{BR}{n},{BR}{int(s.arg[0])}u,{BR}{int(s.arg[1])}u)"
    return f"{p}_s_{e.kind}({JOIN}{p}_x,{BR}{n})"


#: longest name of a series group's function (``static void <name>(`` and a call fit in 100
#: columns; a long channel name is cut, leaving room for a ``_<k>`` suffix that keeps it unique)
MAX_FUNCTION_NAME = 80


def _function_names(plan) -> list:
    names, seen = [], set()
    for (c, pre, pre_arg), _ in groups(plan):
        channel = cgen.sanitize_identifier(plan.channels[c])
        step = f"_{pre}" if pre else ""
        head = f"{plan.name}_series_"
        base = head + channel[:MAX_FUNCTION_NAME - 4 - len(head) - len(step)].rstrip("_") + step
        name, k = base, 2
        while name in seen:
            name, k = f"{base}_{k}", k + 1
        seen.add(name)
        names.append(name)
    return names


def _group_function(plan, fname, key, members, ints) -> str:
    p, P = plan.name, plan.name.upper()
    c, pre, pre_arg = key
    length = plan.window - (1 if pre == "jerk" else 0)
    n = f"{P}_WINDOW - 1u" if pre == "jerk" else f"{P}_WINDOW"
    floats = [e for e in members if not e.fixed and not fft_c.on_q15_fft(plan, e)]
    qspectra = [e for e in members if fft_c.on_q15_fft(plan, e)]    # fft=q15: the Q15 FFT
    lines = []
    if floats:
        fill = {"": "copy", "jerk": "jerk", "highpass": "highpass"}[pre]
        alpha = f"{cgen.c_float(pre_arg)},{BR}" if pre == "highpass" else ""
        lines.append(f"    {p}_series_{fill}(s, start, {c}u,{BR}{alpha}{p}_x);")
    plain = [e for e in floats if e.kind != "percentile" and not fft_c.is_spectral(e)]
    lines += [f"    s->features[{slot}] ={BR}{_value(plan, e, n, length)};"
              for e in plain for slot in e.slots]
    for rect in (False, True):
        spectral = [e for e in floats if fft_c.is_spectral(e) and e.full_spec.rect == rect]
        if spectral:
            lines += fft_c.spectrum_lines(plan, spectral, length, n, rect)
    lines += [f"    s->features[{slot}] ={BR}{_value(plan, e, n, length)};"
              for e in floats if e.kind == "percentile" for slot in e.slots]
    fixed = [e for e in members if e.fixed]
    if fixed or qspectra:
        lines.append(f"    {p}_series_qcopy(s, start, {c}u,{BR}{p}_q);")
    for rect in (False, True):       # before the percentiles' selection reorders <p>_q
        spectral = [e for e in qspectra if e.full_spec.rect == rect]
        if spectral:
            lines += fft_c.q15_spectrum_lines(plan, spectral, length, n, rect)
    if fixed:
        lines += [f"    s->features[{slot}] ={BR}{_value(plan, e, n, length)};"
                  for e in fixed for slot in e.slots if slot not in ints]
    what = cgen.c_comment(plan.channels[c]) + (f" {pre}" if pre else "")
    kinds = ", ".join(e.full_spec.text for e in members)
    # Q15 inputs straight from the integer order statistic (q15_c.int_inputs)
    lines += [q15_c.qin_call(p, slot, _qpercentile(plan, e, n, length), ints[slot][1])
              for e in fixed for slot in e.slots if slot in ints]
    note = ["spectra: the Q15 FFT (fft=q15: trainer.sensing.spectral_q15), P[k] as float32"]
    head = cgen.block_comment([f"{what}: {kinds}", *(note if qspectra else [])])
    return head + cgen.fit("\n".join([
        f"static void {fname}({JOIN}{p}_stream_t *s,", "    unsigned start)", "{",
        *lines, "}"]))


def compute_calls(plan) -> list:
    """Lines of ``<name>_stream_compute``: one call per series group."""
    return [f"    {name}(s, start);" for name in _function_names(plan)]


def source_parts(plan, ints=None) -> list:
    """Scratch arrays, routines, tables and group functions of the plan's series extractors;
    ``ints``: the Q15 inputs quantised from integers (:func:`.q15_c.int_inputs`)."""
    found = groups(plan)
    if not found:
        return []
    p, P = plan.name, plan.name.upper()
    exts = [e for _, members in found for e in members]
    roots = {("qpercentile" if e.fixed else "percentile") if e.kind == "percentile"
             else e.kind for e in exts}
    roots = {r for r in roots if r in ROUTINES} | ({"spectrum"} if any(
        fft_c.is_spectral(e) for e in exts if not fft_c.on_q15_fft(plan, e)) else set()) | (
        {"spectrum_q15"} if any(fft_c.on_q15_fft(plan, e) for e in exts) else set())
    fills = {"qcopy" if e.fixed or fft_c.on_q15_fft(plan, e)
             else ("copy" if not e.full_spec.pre else e.full_spec.pre) for e in exts}
    floats = [e for e in exts if not e.fixed and not fft_c.on_q15_fft(plan, e)]
    spectral = [e for e in exts if fft_c.is_spectral(e)]
    out = ["/* Scratch of the series extractors (one window, refilled by every group). */"]
    if floats:
        out.append(f"static float {p}_x{JOIN}[{P}_WINDOW];")
    if "qcopy" in fills:
        out.append(f"static int16_t {p}_q{JOIN}[{P}_WINDOW];")
    fspectra = [e for e in floats if fft_c.is_spectral(e)]
    if fspectra:
        m = max(fft_size(series_length(plan, e)) for e in fspectra)
        out += [f"/* FFT buffer, {m} points */", f"static float {p}_re[{m}],{BR}{p}_im[{m}];"]
    out += fft_c.q15_buffers(plan, exts, series_length)
    out = [cgen.fit("\n".join(out))]
    if spectral:
        out += [_FLASH_MACROS, fft_c.tables(plan, spectral, series_length)]
    for key in ("", "jerk", "highpass", "qcopy"):
        if (key or "copy") in fills:
            out.append(macro(shape_c.TEMPLATE, _FILL[key], p, P))
    out += [ROUTINES[r][1](p) for r in needed(ROUTINES, roots)]
    out += [_group_function(plan, fname, key, members, ints or {})
            for fname, (key, members) in zip(_function_names(plan), found)]
    return out
