"""Flash of a firmware computed from its plan, before the compiler runs (issue 28).

A design's flash is the static const data the generator writes, counted exactly, plus the code,
estimated as a sum of calibrated bytes per *term* of the plan (:func:`flash_terms`):

    flash = const_bytes(plan) + sum_term  count(term) * FLASH_BYTES[target][term]

- ``const_bytes``: the spectrum tables (bit reversal ``M/2`` uint16, twiddles ``2 x M/2``
  floats, bin frequencies ``M/2 + 1`` floats for domfreq/centroid) per FFT size ``M`` and the
  Hann window (``4 N``) per series length ``N``;
- the terms: the runtime of the numeric format (``base:<numeric>``: protocol, HAL, startup,
  ``main.c``, the C library and the soft-float routines it pulls in), each channel, each
  extractor kind in its arithmetic once (``has:`` its shared code and routines) and per use
  (``each:``), each series group (a channel's copy, after each preprocessing ``pre:``), each
  Q15 magnitude set, each model input and target, and the model's multiply-adds (unrolled:
  code; loop: the weight table).

:data:`FLASH_BYTES` holds the bytes per term, fitted by non-negative least squares to the
linker's ``size -A`` over generated cases (``tests/firmware_gen/flash_calibration.py``, which
writes :mod:`.flash_calibration`); ``tests/firmware_gen/test_flash_fit.py`` checks
|estimate - linked| <= :func:`flash_margin` on cases the fit did not see. :func:`check_flash`
refuses a design whose estimate less the margin exceeds the part's flash, naming the bytes per
part and what would fit; :func:`selection_flash` gives the same terms as cost-plan entries.
"""

from __future__ import annotations

import dataclasses

from .errors import FirmwareGenError
from .flash_calibration import FLASH_BYTES, FLASH_MARGIN


def _key(e) -> str:
    """An extractor's code key: kind, arithmetic (q: integer Q15 definition, f: float)."""
    return f"{e.kind}:{'q' if e.fixed else 'f'}"


#: float kinds whose code calls sqrtf (one square root routine, whichever kinds call it)
SQRT_KINDS = ("std", "rms", "mag_mean", "mag_std", "mag_max", "corr", "skew", "kurtosis",
              "peaks")
SPECTRAL = ("bandpower", "bandratio", "domfreq", "centroid", "entropy")


def _shared(kind: str, fixed: bool) -> tuple:
    """The code several kinds share, paid once: the power spectrum, the float square root."""
    return (("fft",) if kind in SPECTRAL else ()) + \
        (("sqrt",) if kind in SQRT_KINDS and not fixed else ())


def _mac_kernel(kernel: str, k: int, t: int) -> str:
    from .kernel_c import choose_kernel

    return choose_kernel(kernel, k, t)


def flash_terms(plan, kernel: str = "auto") -> dict:
    """{term: count} of ``plan``'s firmware (see the module docstring)."""
    from . import q15_c, series_c

    terms = {f"base:{plan.numeric}": 1, "channel": len(plan.channels), "input": plan.k,
             "target": plan.t}
    for e in plan.extractors:
        key = _key(e)
        terms[f"has:{key}"] = 1
        terms[f"each:{key}"] = terms.get(f"each:{key}", 0) + 1
    for (_, pre, _), members in series_c.groups(plan):
        terms["series_group"] = terms.get("series_group", 0) + 1
        if pre:
            terms[f"pre:{pre}"] = 1
        for e in members:
            terms[f"series:{'q' if e.fixed else 'f'}"] = 1
    terms.update({shared: 1 for e in plan.extractors for shared in _shared(e.kind, e.fixed)})
    sets = len(q15_c.mag_sets(plan)) if plan.fixed else 0
    if sets:
        terms["mag_set"] = sets
    terms[f"mac:{_mac_kernel(kernel, plan.k, plan.t)}"] = plan.k * plan.t
    return terms


def const_bytes(plan) -> int:
    """The spectrum tables' bytes (exact: what :func:`.fft_c.tables` declares)."""
    from . import fft_c, series_c
    from sensorbudget.trainer.sensing import spectral

    exts = [e for _, members in series_c.groups(plan) for e in members if fft_c.is_spectral(e)]
    total = 0
    for m in sorted({spectral.fft_size(series_c.series_length(plan, e)) for e in exts}):
        total += (m // 2) * 2 + 2 * (m // 2) * 4
        if any(e.kind in ("domfreq", "centroid")
               and spectral.fft_size(series_c.series_length(plan, e)) == m for e in exts):
            total += (m // 2 + 1) * 4
    total += sum(4 * n for n in {series_c.series_length(plan, e) for e in exts
                                 if not e.full_spec.rect})
    return total


def flash_parts(plan, target, kernel: str = "auto") -> dict:
    """{part: bytes} of the flash of ``plan``'s firmware on ``target``; {} for the host."""
    table = FLASH_BYTES.get(target.name)
    if not table:
        return {}
    terms = flash_terms(plan, kernel)

    def part(prefixes) -> int:
        return int(round(sum(n * term_bytes(table, t) for t, n in terms.items()
                             if t.startswith(prefixes))))

    return {"runtime and C library": part("base:"),
            "extractors": part(("channel", "has:", "each:", "series", "pre:", "mag_set", "fft",
                                "sqrt")),
            "spectrum tables": const_bytes(plan), "model": part(("input", "target", "mac:"))}


def term_bytes(table: dict, term: str) -> float:
    """The bytes of ``term`` in a target's table; a kind the calibration never saw costs the
    mean of its arithmetic's kinds (``has:*:f``), an unseen preprocessing the dearest seen."""
    if term in table:
        return table[term]
    group, _, arith = term.partition(":")
    if group in ("has", "each"):
        return table.get(f"{group}:*:{arith.rsplit(':', 1)[-1]}", 0.0)
    return max((v for t, v in table.items() if t.startswith(group + ":")), default=0.0)


def estimate_from_terms(table: dict, terms: dict) -> float:
    """sum_term count * bytes: the code part of the estimate (without the constant data)."""
    return sum(n * term_bytes(table, t) for t, n in terms.items())


def flash_estimate(plan, target, kernel: str = "auto") -> int | None:
    """Flash bytes of :func:`flash_parts` (None for the host)."""
    parts = flash_parts(plan, target, kernel)
    return sum(parts.values()) if parts else None


def flash_margin(target) -> int:
    """|estimate - linked flash| stays within this many bytes on ``target`` (measured over the
    generated cases the fit did not see, rounded up; tested)."""
    return FLASH_MARGIN.get(target.name, 0)


def check_flash(plan, target, kernel: str = "auto") -> None:
    """FirmwareGenError when the estimate less :func:`flash_margin` exceeds the part's flash:
    the bytes per part, the part's flash and what would fit."""
    parts = flash_parts(plan, target, kernel)
    if not parts or target.flash_bytes is None:
        return
    total, margin = sum(parts.values()), flash_margin(target)
    if total - margin <= target.flash_bytes:
        return
    detail = ", ".join(f"{k} {v}" for k, v in parts.items() if v)
    fits = _what_fits(plan, target, kernel)
    raise FirmwareGenError(
        f"the firmware needs {total} bytes of flash ({detail}); {target.name} "
        f"({target.profile.part}) has {target.flash_bytes} (estimated from the plan before "
        f"compiling, within {margin} bytes); would fit: {', '.join(fits) or 'a smaller bundle'}")


def _what_fits(plan, target, kernel: str) -> list:
    """Variants that would fit the flash: another numeric format, fewer features."""
    out = []
    for numeric in ("q15", "float32"):
        if numeric != plan.numeric:
            need = flash_estimate(_renumbered(plan, numeric), target, kernel)
            if need - flash_margin(target) <= target.flash_bytes:
                out.append(f"--numeric {numeric} ({need} bytes)")
    if kernel != "loop" and plan.k * plan.t > 1:
        need = flash_estimate(plan, target, "loop")
        if need - flash_margin(target) <= target.flash_bytes:
            out.append(f"--kernel loop ({need} bytes)")
    parts = flash_parts(plan, target, kernel)
    per_feature = (parts["extractors"] + parts["spectrum tables"] + parts["model"]) / plan.k
    over = sum(parts.values()) - flash_margin(target) - target.flash_bytes
    keep = plan.k - int(-(-over // per_feature)) if per_feature > 0 else 0
    if 0 < keep < plan.k:
        out.append(f"about {keep} of the {plan.k} features (~{per_feature:.0f} bytes each; "
                   f"train --board {target.name} picks a design that fits)")
    return out


def _renumbered(plan, numeric: str):
    """``plan`` in another numeric format: the kinds with a Q15 definition (and no
    preprocessing) switch arithmetic as :func:`.plan.make_plan` would switch them."""
    from sensorbudget.trainer.sensing.extractors import KINDS

    fixed = numeric != "float32"
    exts = tuple(dataclasses.replace(e, fixed=fixed and KINDS[e.kind].fixed_point
                                     and not e.full_spec.pre) for e in plan.extractors)
    scale = plan.full_scale if plan.full_scale is not None or not fixed else \
        (1.0,) * len(plan.channels)
    return dataclasses.replace(plan, numeric=numeric, extractors=exts,
                               full_scale=scale if fixed else None)


def _table(target) -> dict:
    table = FLASH_BYTES.get(target.name)
    if not table:
        raise FirmwareGenError(f"{target.name} has no flash model (no flash limit)")
    return table


def selection_flash(fs, target, numeric: str) -> tuple:
    """The flash of each candidate of the feature set ``fs`` (one extractor per feature, as
    ``train --unit feature`` selects them) on ``target`` in ``numeric``, as cost-plan entries
    like :func:`.memory.selection_ram`: (``{extractor: bytes}``, ``{resource: bytes}``,
    ``{extractor: [resource, ...]}``, base).

    A candidate adds its own terms (``each:`` its kind, its model input and its ``t``
    multiply-adds, at the larger of the unrolled and loop kernels' bytes); the shared terms are
    resources paid once: a kind's code (``has:``), a channel, a series group and its
    preprocessing, a Q15 magnitude set, and the exact spectrum tables per FFT size and Hann
    length. ``base`` is the runtime and the targets' code, so a design's
    :func:`flash_estimate` is at most ``base`` plus its selected costs."""
    from sensorbudget.trainer.sensing.extractors import KINDS
    from sensorbudget.trainer.sensing.spectral import fft_size
    from sensorbudget.trainer.sensing.specs import parse_spec

    from .plan import SERIES_KINDS

    table, w, t = _table(target), int(fs.window), len(fs.target_names)

    def cost(term: str) -> float:
        return term_bytes(table, term)

    mac = max(cost("mac:unrolled"), cost("mac:loop"))
    own, resources, uses = {}, {}, {}
    for ext, text, chans in zip(fs.feature_extractors, fs.feature_kinds, fs.feature_channels):
        spec, channels = parse_spec(text), str(chans).split("+")
        fixed = numeric != "float32" and KINDS[spec.kind].fixed_point and not spec.pre
        key = f"{spec.kind}:{'q' if fixed else 'f'}"
        need = {f"flash:has:{key}": cost(f"has:{key}"),
                **{f"flash:channel:{c}": cost("channel") for c in channels}}
        if spec.pre or spec.kind in SERIES_KINDS:
            need[f"flash:series:{channels[0]}:{spec.pre}:{spec.pre_arg}"] = cost("series_group")
            need[f"flash:series:{key[-1]}"] = cost(f"series:{key[-1]}")
            if spec.pre:
                need[f"flash:pre:{spec.pre}"] = cost(f"pre:{spec.pre}")
        for shared in _shared(spec.kind, fixed):
            need[f"flash:{shared}"] = cost(shared)
        if fixed and spec.kind in ("mag_mean", "mag_max"):
            need[f"flash:mag:{'+'.join(channels)}"] = cost("mag_set")
        if spec.kind in SPECTRAL:
            n = w - (1 if spec.pre == "jerk" else 0)
            m = fft_size(n)
            need[f"flash:fft:{m}"] = (m // 2) * 2 + 2 * (m // 2) * 4
            if spec.kind in ("domfreq", "centroid"):
                need[f"flash:freq:{m}"] = (m // 2 + 1) * 4
            if not spec.rect:
                need[f"flash:hann:{n}"] = 4 * n
        own[str(ext)] = cost(f"each:{key}") + cost("input") + t * mac
        resources.update(need)
        uses.setdefault(str(ext), [])
        uses[str(ext)] += [r for r in need if r not in uses[str(ext)]]
    return own, resources, uses, flash_base(target, numeric, t)


def flash_base(target, numeric: str, n_targets: int) -> float:
    """The flash no candidate adds: the runtime of ``numeric`` and the targets' code."""
    table = _table(target)
    return table[f"base:{numeric}"] + n_targets * table["target"]
