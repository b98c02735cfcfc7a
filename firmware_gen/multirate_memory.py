"""Static RAM and flash of a multi-rate firmware, from its :class:`~.multirate.MultiRatePlan`
before the compiler runs (issue 30), by the single-rate models of :mod:`.memory` and
:mod:`.memory_flash` applied to each group.

RAM (:func:`multirate_ram_parts`): the runtime (and ``main.c``'s multi-rate loop: its pending
cost, the event pointer, on AVR its constant tables), ``<p>_mr_t`` (:func:`context_bytes`: every
group's ``<g>_stream_t`` by :func:`.memory.stream_bytes`, then the per-sensor sample counters,
the per-group phases, two counters, the features and, in fixed point, the inputs: the target's
layout, packed on AVR), each group's series scratch (its own static buffers), the model inputs
and scores of ``main.c``, on AVR the quantiser's constants (:func:`_quantiser_constants`) and
the name, and soft-float libm's errno data when a group calls sqrtf.

Flash (:func:`multirate_flash_parts`): the runtime and the model once, each group's extractor
terms (:func:`.memory_flash.flash_terms`: every group's stream is its own code, so a kind used
at two rates is paid twice) and its spectrum tables, and the unit (one ``channel`` term per
pushed channel, one ``input`` term per gathered feature). The flash terms are those calibrated
on single-rate images: the multi-rate estimate is not calibrated against linked multi-rate
images (no margin is claimed for it).
"""

from __future__ import annotations

import re

from .errors import FirmwareGenError
from .memory import (
    _INPUT,
    _SCORE,
    LIBM_ERRNO_RAM,
    RAM_MARGIN,
    RUNTIME_RAM,
    _align,
    series_bytes,
    stream_bytes,
)
from .memory_flash import FLASH_BYTES, const_bytes, flash_terms, term_bytes

_EXTRACTOR_TERMS = ("channel", "has:", "each:", "series", "pre:", "mag_set", "fft", "sqrt")


def context_bytes(mplan, avr: bool) -> int:
    """``sizeof(<p>_mr_t)`` on the target (AVR: packed; else 4-byte aligned)."""
    offset = 0
    for g in mplan.groups:
        offset = _align(offset, 4, avr) + stream_bytes(g.plan, avr)
    fields = [(4, len(mplan.sensors)), (4, len(mplan.groups)), (4, 2), (4, mplan.k)]
    if mplan.fixed:
        fields.append((_INPUT[mplan.numeric], mplan.k))
    for size, count in fields:
        offset = _align(offset, size, avr) + size * count
    return _align(offset, 4, avr)


def multirate_ram_parts(mplan, target, sources: dict | None = None) -> dict:
    """{part: bytes} of the static RAM of ``mplan``'s firmware on ``target``; {} for the host.
    ``sources`` (:func:`.multirate_c.multirate_sources`) tells whether libm is called."""
    base = RUNTIME_RAM.get(target.name)
    if base is None:
        return {}
    avr = target.arch == "avr"
    pointer = 2 if avr else 4
    parts = {"runtime and protocol buffers": base,
             # main.c's multi-rate loop: the pending extractor cost (uint64) and the event
             # function's pointer; on AVR its per-group tables (sensor u8, factor, window and
             # hop u16) and the unit's per-sensor tables (channels u8, rate float) are RAM too
             "multi-rate runtime": 8 + pointer + (7 * len(mplan.groups)
                                                  + 5 * len(mplan.sensors) if avr else 0),
             "multi-rate context": context_bytes(mplan, avr),
             "series scratch": sum(series_bytes(g.plan) for g in mplan.groups),
             "model inputs and scores": _INPUT[mplan.numeric] * mplan.k
             + _SCORE[mplan.numeric] * mplan.t}
    if avr:
        parts["constants in RAM (AVR)"] = _quantiser_constants(mplan, sources) + len(mplan.name) + 1
    if target.name in LIBM_ERRNO_RAM:
        if sources is None:
            from .extractors_c import stream_source
            sources = {g.plan.name: stream_source(g.plan, None) for g in mplan.groups}
        plain = [re.sub(r"#if \w+_ISQRT_FPU\n.*?#else\n", "", text, flags=re.S)
                 for name, text in sources.items() if name.endswith("_stream.c")
                 or name in {g.plan.name for g in mplan.groups}]
        if any(re.search(r"\bsqrtf\(", text) for text in plain):
            parts["libm errno (soft float)"] = LIBM_ERRNO_RAM[target.name]
    return parts


def _quantiser_constants(mplan, sources) -> int:
    """Bytes of the quantiser's offsets and scales a fixed-point unit links (RAM on AVR): Q31
    the model header's (every input); Q15 each group's own whose stream quantises float
    features in two or more runs (``<g>_quantize_span`` called twice or more: measured,
    avr-gcc -Os inlines a single call and folds the constants of its run; all groups without
    ``sources``)."""
    if mplan.numeric == "q31":
        return 8 * mplan.k
    if mplan.numeric != "q15":
        return 0
    calls = {g.plan.name: 2 if sources is None else
             sources.get(f"{g.plan.name}_stream.c", "").count(f"{g.plan.name}_quantize_span(s,")
             for g in mplan.groups}
    return sum(8 * g.plan.k for g in mplan.groups if calls[g.plan.name] >= 2)


def multirate_ram_estimate(mplan, target, sources: dict | None = None) -> int | None:
    """Static RAM bytes of :func:`multirate_ram_parts` (None for the host)."""
    parts = multirate_ram_parts(mplan, target, sources)
    return sum(parts.values()) if parts else None


def check_multirate_ram(mplan, target, sources: dict | None = None) -> None:
    """FirmwareGenError when the estimate (less :data:`.memory.RAM_MARGIN`) plus the stack
    reserve exceeds the part's RAM, naming the bytes per part and per group."""
    parts = multirate_ram_parts(mplan, target, sources)
    if not parts or target.ram_bytes is None:
        return
    reserve, total = target.profile.stack_reserve, sum(parts.values())
    if total - RAM_MARGIN + reserve <= target.ram_bytes:
        return
    avr = target.arch == "avr"
    detail = ", ".join(f"{k} {v}" for k, v in parts.items() if v)
    groups = ", ".join(f"{mplan.sensors[g.sensor].name} at {g.rate_hz:g} Hz "
                       f"{stream_bytes(g.plan, avr)}" for g in mplan.groups)
    raise FirmwareGenError(
        f"the firmware needs {total + reserve} bytes of RAM ({total} static: {detail}; + "
        f"{reserve} stack reserve); {target.name} ({target.profile.part}) has "
        f"{target.ram_bytes} (estimated from the plan before compiling, within {RAM_MARGIN} "
        f"bytes); the ring buffers per sensor and rate: {groups}; would fit: lower rates, a "
        f"shorter window, fewer channels or --numeric q15")


def multirate_flash_parts(mplan, target, kernel: str = "auto") -> dict:
    """{part: bytes} of the flash of ``mplan``'s firmware on ``target``; {} without a model."""
    table = FLASH_BYTES.get(target.name)
    if not table:
        return {}
    extractors, tables = 0.0, 0
    for g in mplan.groups:
        terms = flash_terms(g.plan, kernel)
        extractors += sum(n * term_bytes(table, t) for t, n in terms.items()
                          if t.startswith(_EXTRACTOR_TERMS))
        tables += const_bytes(g.plan)
    first = flash_terms(mplan.groups[0].plan, kernel)
    from .kernel_c import choose_kernel

    mac = f"mac:{choose_kernel(kernel, mplan.k, mplan.t)}"
    model = (mplan.k * term_bytes(table, "input") + mplan.t * term_bytes(table, "target")
             + mplan.k * mplan.t * term_bytes(table, mac))
    unit = (len(mplan.channels) * term_bytes(table, "channel")
            + mplan.k * term_bytes(table, "input"))
    base = next(t for t in first if t.startswith("base:"))
    return {"runtime and C library": int(round(term_bytes(table, base))),
            "extractors (per sensor and rate)": int(round(extractors)),
            "spectrum tables": tables, "multi-rate unit": int(round(unit)),
            "model": int(round(model))}


def multirate_flash_estimate(mplan, target, kernel: str = "auto") -> int | None:
    """Flash bytes of :func:`multirate_flash_parts` (None without a flash model)."""
    parts = multirate_flash_parts(mplan, target, kernel)
    return sum(parts.values()) if parts else None
