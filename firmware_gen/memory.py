"""Static RAM of a firmware computed from its plan, before the compiler runs (issue 28).

:func:`ram_parts` adds what the generated code allocates, with the struct layout of the target
(``unsigned`` is 2 bytes on AVR, where nothing is aligned; 4 elsewhere, 4-byte alignment):

- the stream context ``<name>_stream_t``: the ring buffer (``window x channels`` samples of 4
  bytes in float32, 2 in Q15), four counters, the features (4 bytes each), the quantised inputs
  (fixed point: 2 or 4 bytes each) and the Q15 magnitude cache (``4 + 4 m + 2 window m`` for
  m magnitude sets);
- the series scratch (:mod:`.series_c`): a float copy of the window (``4 window``) for the
  float series kinds, an int16 one (``2 window``) for the Q15 percentile, and the FFT buffer
  (``8 M`` for an ``M``-point spectrum);
- the model inputs and scores of ``main.c`` and, on AVR (whose ``static const`` data live in
  RAM unless ``SB_CONST``), the quantiser's offsets and scales (``2 x 4 k``) and the name;
- the runtime: protocol buffers (payloads + 8 bytes of framing each), the link state, cost
  counters and the C library's own data: :data:`RUNTIME_RAM`, measured from linked images of
  this generator (``size -A``; ``tests/firmware_gen/test_memory.py`` compares every estimate
  with the linker over the generated cases, within :data:`RAM_MARGIN`).

:func:`check_ram` refuses a design whose estimate less the margin, plus the board's stack
reserve, exceeds the part's RAM, naming the bytes needed and available and what would fit.
"""

from __future__ import annotations

import dataclasses
import re

from . import fft_c, q15_c, series_c
from .errors import FirmwareGenError

#: static RAM of the runtime besides the plan's parts (protocol buffers included), per target
RUNTIME_RAM = {"arduino-uno": 520, "mps2-an386": 2166, "mps2-an385": 2166, "nucleo-f4": 2174,
               "host": None}
#: the C library's reentrancy data that soft-float libm (errno) pulls in on the Cortex-M3
LIBM_ERRNO_RAM = {"mps2-an385": 104}
#: |estimate - linked RAM| stays within this many bytes (tested over the generated cases)
RAM_MARGIN = 32
_INPUT = {"float32": 4, "q15": 2, "q31": 4}
_SCORE = {"float32": 4, "q15": 2, "q31": 4}


def _align(offset: int, size: int, avr: bool) -> int:
    a = 1 if avr else min(size, 4)
    return -(-offset // a) * a


def stream_bytes(plan, avr: bool) -> int:
    """``sizeof(<name>_stream_t)`` on the target (AVR: packed; else 4-byte aligned)."""
    sample = 2 if plan.fixed else 4
    fields = [(sample, plan.window * len(plan.channels)), (2 if avr else 4, 1), (4, 3),
              (4, plan.k)]
    if plan.fixed:
        fields.append((_INPUT[plan.numeric], plan.k))
    sets = len(q15_c.mag_sets(plan))
    if sets:
        fields += [(4, 1 + sets), (2, plan.window * sets)]
    offset = 0
    for size, count in fields:
        offset = _align(offset, size, avr) + size * count
    return _align(offset, 4, avr)


def series_bytes(plan) -> int:
    """The series extractors' scratch: float and int16 window copies, the FFT buffer."""
    exts = [e for _, members in series_c.groups(plan) for e in members]
    out = 4 * plan.window if any(not e.fixed for e in exts) else 0
    out += 2 * plan.window if any(e.fixed for e in exts) else 0
    spectral = [e for e in exts if fft_c.is_spectral(e)]
    if spectral:
        out += 8 * max(series_c.fft_size(series_c.series_length(plan, e)) for e in spectral)
    return out


def ram_parts(plan, target, stream_c: str | None = None) -> dict:
    """{part: bytes} of the static RAM (``.data`` + ``.bss``) of ``plan``'s firmware on
    ``target`` (a :class:`~firmware_gen.targets.Target`); {} for the host. ``stream_c``, the
    generated ``<name>_stream.c`` (default: generated here), tells whether libm is called."""
    base = RUNTIME_RAM.get(target.name)
    if base is None:
        return {}
    avr = target.arch == "avr"
    parts = {"runtime and protocol buffers": base, "stream context": stream_bytes(plan, avr),
             "series scratch": series_bytes(plan),
             "model inputs and scores": _INPUT[plan.numeric] * plan.k
             + _SCORE[plan.numeric] * plan.t}
    if avr:
        parts["constants in RAM (AVR)"] = (8 * plan.k if plan.fixed else 0) + len(plan.name) + 1
    if target.name in LIBM_ERRNO_RAM:
        if stream_c is None:
            from .extractors_c import stream_source
            stream_c = stream_source(plan)
        # sqrtf outside the FPU-only integer root (q15_c.isqrt: "#if <P>_ISQRT_FPU")
        plain = re.sub(r"#if \w+_ISQRT_FPU\n.*?#else\n", "", stream_c, flags=re.S)
        if re.search(r"\bsqrtf\(", plain):
            parts["libm errno (soft float)"] = LIBM_ERRNO_RAM[target.name]
    return parts


def ram_estimate(plan, target, stream_c: str | None = None) -> int | None:
    """Static RAM bytes of :func:`ram_parts` (None for the host)."""
    parts = ram_parts(plan, target, stream_c)
    return sum(parts.values()) if parts else None


def _what_fits(plan, target, limit: int) -> list:
    """Variants of the plan that would fit: q15, a shorter window, fewer channels."""
    reserve = target.profile.stack_reserve
    out = []
    if plan.numeric != "q15":
        q15 = dataclasses.replace(plan, numeric="q15")
        if plan.full_scale is None:
            q15 = dataclasses.replace(q15, full_scale=(1.0,) * len(plan.channels))
        need = ram_estimate(q15, target) + reserve
        if need <= limit:
            out.append(f"--numeric q15 ({need} bytes)")
    for window in (plan.window * 3 // 4, plan.window // 2, plan.window // 4):
        short = dataclasses.replace(plan, window=max(1, window), hop=min(plan.hop, window or 1))
        need = ram_estimate(short, target) + reserve
        if window >= 1 and need <= limit:
            out.append(f"a window of {window} samples ({need} bytes)")
            break
    per_channel = plan.window * (2 if plan.fixed else 4)
    over = ram_estimate(plan, target) + reserve - limit
    drop = -(-over // per_channel) if per_channel else 0
    if 0 < drop < len(plan.channels):
        out.append(f"{len(plan.channels) - drop} of the {len(plan.channels)} channels "
                   f"({per_channel} bytes each)")
    return out


def check_ram(plan, target, stream_c: str | None = None) -> None:
    """FirmwareGenError when the estimate (less :data:`RAM_MARGIN`) plus the stack reserve
    exceeds the part's RAM: the bytes per part, the part's RAM and what would fit."""
    parts = ram_parts(plan, target, stream_c)
    if not parts or target.ram_bytes is None:
        return
    reserve, total = target.profile.stack_reserve, sum(parts.values())
    if total - RAM_MARGIN + reserve <= target.ram_bytes:
        return
    detail = ", ".join(f"{k} {v}" for k, v in parts.items() if v)
    fits = _what_fits(plan, target, target.ram_bytes)
    raise FirmwareGenError(
        f"the firmware needs {total + reserve} bytes ({total} static: {detail}; + "
        f"{reserve} stack reserve) of RAM; {target.name} ({target.profile.part}) has "
        f"{target.ram_bytes} (estimated from the plan before compiling, within "
        f"{RAM_MARGIN} bytes); would fit: {', '.join(fits) or 'a smaller bundle'}")
