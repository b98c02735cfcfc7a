"""Static RAM of a firmware computed from its plan, before the compiler runs (issue 28).

:func:`ram_parts` adds what the generated code allocates, with the struct layout of the target
(``unsigned`` is 2 bytes on AVR, where nothing is aligned; 4 elsewhere, 4-byte alignment):

- the stream context ``<name>_stream_t``: the ring buffer (``window x channels`` samples of 4
  bytes in float32, 2 in Q15), four counters, the features (4 bytes each), the quantised inputs
  (fixed point: 2 or 4 bytes each) and the Q15 magnitude cache (``4 + 4 m + 2 window m`` for
  m magnitude sets);
- the series scratch (:mod:`.series_c`): a float copy of the window (``4 window``) for the
  float series kinds, an int16 one (``2 window``) for the Q15 percentile and the Q15 FFT, and
  the FFT buffer (``8 M`` for an ``M``-point spectrum; ``4 M + 8`` for the Q15 FFT's, fft=q15);
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
from .boards import BOARDS
from .errors import FirmwareGenError

#: static RAM of the runtime besides the plan's parts (protocol buffers included), per target
#: (the registry's ``runtime_ram``, measured from linked images)
RUNTIME_RAM = {b.name: b.runtime_ram for b in BOARDS.values()}
#: the C library's reentrancy data that soft-float libm (errno) pulls in (the Cortex-M3)
LIBM_ERRNO_RAM = {b.name: b.libm_errno_ram for b in BOARDS.values() if b.libm_errno_ram}
#: |estimate - linked RAM| stays within this many bytes (tested over the generated cases)
RAM_MARGIN = 32
_INPUT = {"float32": 4, "q15": 2, "q31": 4}
#: float kinds whose code calls sqrtf (soft-float libm's errno data on the Cortex-M3)
_SQRT_KINDS = ("std", "rms", "mag_mean", "mag_std", "mag_max", "corr", "skew", "kurtosis",
               "peaks")
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
    floats = [e for e in exts if not e.fixed and not fft_c.on_q15_fft(plan, e)]
    out = 4 * plan.window if floats else 0
    out += 2 * plan.window if len(floats) < len(exts) else 0
    spectral = [e for e in floats if fft_c.is_spectral(e)]
    if spectral:
        out += 8 * max(series_c.fft_size(series_c.series_length(plan, e)) for e in spectral)
    return out + fft_c.q15_buffer_bytes(plan, exts, series_c.series_length)   # fft=q15


def ram_parts(plan, target, stream_c: str | None = None) -> dict:
    """{part: bytes} of the static RAM (``.data`` + ``.bss``) of ``plan``'s firmware on
    ``target`` (a :class:`~sensorbudget.firmware_gen.targets.Target`); {} for the host. ``stream_c``, the
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
        if plan.fixed and stream_c is None:
            from .extractors_c import stream_source
            stream_c = stream_source(plan)
        # the header's input offsets and scales, linked only when a float feature is quantised
        # (none when every Q15 input comes from an integer: q15_c.int_inputs)
        floats = plan.fixed and re.search(r"_quantize_(q15|q31|span)\(", stream_c)
        parts["constants in RAM (AVR)"] = (8 * plan.k if floats else 0) + len(plan.name) + 1
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
        f"the firmware needs {total + reserve} bytes of RAM ({total} static: {detail}; + "
        f"{reserve} stack reserve); {target.name} ({target.profile.part}) has "
        f"{target.ram_bytes} (estimated from the plan before compiling, within "
        f"{RAM_MARGIN} bytes); would fit: {', '.join(fits) or 'a smaller bundle'}")


def selection_ram(fs, target, numeric: str) -> tuple:
    """The RAM of each candidate of the feature set ``fs`` (one extractor per feature, as
    ``train --unit feature`` selects them) on ``target`` in ``numeric``, as cost-plan entries:
    (``{extractor: bytes}``, ``{resource: bytes}``, ``{extractor: [resource, ...]}``, base).

    An extractor adds its feature and model input (:func:`ram_parts`' stream context and
    inputs); shared resources are paid once, like transforms: each channel's ring buffer
    (``window`` samples), the float and int16 series scratch, the FFT buffer of each size and
    each Q15 magnitude set's cache. ``base`` is the rest (runtime, counters, scores), so a
    design's :func:`ram_estimate` is ``base`` plus its selected costs (up to alignment)."""
    from sensorbudget.trainer.sensing.extractors import KINDS
    from sensorbudget.trainer.sensing.spectral import fft_size
    from sensorbudget.trainer.sensing.specs import parse_spec

    from .plan import SERIES_KINDS

    fixed_numeric, w, avr = numeric != "float32", int(fs.window), target.arch == "avr"
    sample, inp = (2 if fixed_numeric else 4), _INPUT[numeric]
    # the quantiser's offset and scale of each input: RAM on AVR (static const data)
    per_feature = 4 + inp + (inp if fixed_numeric else 0) + (8 if avr and fixed_numeric else 0)
    own, resources, uses = {}, {}, {}
    for ext, text, chans in zip(fs.feature_extractors, fs.feature_kinds, fs.feature_channels):
        spec, channels = parse_spec(text), str(chans).split("+")
        fixed = fixed_numeric and KINDS[spec.kind].fixed_point and not spec.pre
        need = {f"ram:ring:{c}": w * sample for c in channels}
        if spec.pre or spec.kind in SERIES_KINDS:
            need["ram:series:q15" if fixed else "ram:series:float"] = (2 if fixed else 4) * w
            if KINDS[spec.kind].spectral or spec.kind in ("bandpower", "bandratio"):
                m = fft_size(w - (1 if spec.pre == "jerk" else 0))
                need[f"ram:fft:{m}"] = 8 * m
        if fixed and spec.kind in ("mag_mean", "mag_max"):
            need["ram:magcache"] = 4
            need[f"ram:mag:{'+'.join(channels)}"] = 2 * w + 4
        if target.name in LIBM_ERRNO_RAM and not fixed and spec.kind in _SQRT_KINDS:
            need["ram:libm"] = LIBM_ERRNO_RAM[target.name]
        own[str(ext)] = per_feature
        resources.update(need)
        uses.setdefault(str(ext), [])
        uses[str(ext)] += [r for r in need if r not in uses[str(ext)]]
    return own, resources, uses, _base(target, numeric, w)


@dataclasses.dataclass(frozen=True)
class _EmptyPlan:
    """A plan with no channel and no feature: the stream context's counters alone."""

    numeric: str
    window: int
    channels: tuple = ()
    k: int = 0
    extractors: tuple = ()
    full_scale: tuple | None = None

    @property
    def fixed(self) -> bool:
        return self.numeric != "float32"


def add_memory_costs(kwargs: dict, fs, target, numeric: str, n_targets: int,
                     max_ram: int | None = None, max_flash: int | None = None) -> dict:
    """``kwargs`` (GreedyRLS cost keyword arguments from the feature set) with the RAM of
    :func:`selection_ram` and the flash of :func:`.memory_flash.selection_flash` added, and
    the budgets set to what the board leaves: ``max_ram`` its RAM (or ``max_ram``, static bytes
    plus stack) less the stack reserve, ``base``, the scores and :data:`RAM_MARGIN`;
    ``max_flash`` its flash (or ``max_flash``) less the runtime and the flash margin (a part
    without a flash model: no flash budget). Raises FirmwareGenError when nothing is left."""
    own, resources, uses, base = selection_ram(fs, target, numeric)
    total = target.ram_bytes if max_ram is None else min(max_ram, target.ram_bytes or max_ram)
    left = total - target.profile.stack_reserve - base - _SCORE[numeric] * n_targets - RAM_MARGIN
    if left <= 0:
        raise FirmwareGenError(f"{target.name} ({target.profile.part}) leaves no RAM for "
                               f"features: {total} bytes less a {target.profile.stack_reserve}-"
                               f"byte stack reserve and {base} bytes of runtime")
    out = _with_costs(dict(kwargs), "ram", own, resources, uses)
    out["max_ram"] = float(left)
    from .memory_flash import FLASH_BYTES, flash_margin, selection_flash

    if target.flash_bytes is None or not FLASH_BYTES.get(target.name):
        return out
    own, resources, uses, base = selection_flash(fs, target, numeric)
    total = target.flash_bytes if max_flash is None else min(max_flash, target.flash_bytes)
    left = total - base - flash_margin(target)
    if left <= 0:
        raise FirmwareGenError(f"{target.name} ({target.profile.part}) leaves no flash for "
                               f"features: {total} bytes less {int(base)} bytes of runtime and "
                               f"a {flash_margin(target)}-byte estimation margin")
    out = _with_costs(out, "flash", own, resources, uses)
    out["max_flash"] = float(left)
    return out


def _with_costs(out: dict, kind: str, own: dict, resources: dict, uses: dict) -> dict:
    """The cost kind ``kind`` of each extractor (``own``) and of each shared resource (a
    transform, paid once) added to the GreedyRLS cost keyword arguments ``out``."""
    ext_costs = {e: dict(c) if isinstance(c, dict) else {"price": float(c)}
                 for e, c in (out.get("extractor_costs") or {}).items()}
    for e, b in own.items():
        ext_costs.setdefault(e, {"price": 0.0 if out.get("sensor_costs") else 1.0})[kind] = b
    out["extractor_costs"] = ext_costs
    out["sensor_costs"] = {**(out.get("sensor_costs") or {}),
                           **{r: {kind: b, "level": "transform"} for r, b in resources.items()}}
    needs = {e: list(v) for e, v in (out.get("extractor_sensors") or {}).items()}
    for e, rs in uses.items():
        needs.setdefault(e, [])
        needs[e] += [r for r in rs if r not in needs[e]]
    out["extractor_sensors"] = needs
    return out


def _base(target, numeric: str, window: int) -> int:
    """The static bytes no candidate adds: runtime, stream counters (and the name on AVR)."""
    avr = target.arch == "avr"
    return (RUNTIME_RAM[target.name] + stream_bytes(_EmptyPlan(numeric, window), avr)
            + (len("sbmodel") + 1 if avr else 0))


def memory_budget_lines(meta: dict, board: str, numeric: str) -> list:
    """Lines of a bundle trained with ``--board``: per path step the estimated static RAM of
    the design (base + scores + the path's ``ram`` total) against the board's RAM, and its
    flash (runtime + the path's ``flash`` total, :mod:`.memory_flash`) against the board's."""
    from .memory_flash import flash_base, flash_margin
    from .targets import get_target

    target = get_target(board)
    window = int(meta.get("window") or 1)
    t = len(meta.get("classes") or meta["targets"])
    fixed = _base(target, numeric, window) + _SCORE[numeric] * t
    path = [e for e in meta.get("path", []) if isinstance(e.get("costs"), dict)]
    steps = [f"{e['step']}: {fixed + int(round(e['costs'].get('ram', 0.0)))}" for e in path]
    reserve = target.profile.stack_reserve
    lines = [f"static RAM per step on {target.name} ({numeric}, estimated from the plan by "
             f"firmware_gen.memory, within {RAM_MARGIN} bytes; the board has "
             f"{target.ram_bytes} bytes, {reserve} kept for the stack): " + ", ".join(steps)]
    if path and all("flash" in e["costs"] for e in path):
        base = flash_base(target, numeric, t)
        steps = [f"{e['step']}: {int(round(base + e['costs']['flash']))}" for e in path]
        lines.append(f"flash per step on {target.name} ({numeric}, code and constant data "
                     f"estimated from the plan by firmware_gen.memory_flash, within "
                     f"{flash_margin(target)} bytes; the board has {target.flash_bytes} "
                     f"bytes): " + ", ".join(steps))
    return lines
