"""The window pass: one loop over the window computes every statistic the extractors need.

The per-channel kinds (mean, min, max, ptp, energy, rms, std, last) and the magnitude kinds
(mag_mean, mag_max, mag_std) are grouped: one group per channel, one per magnitude channel set.
:func:`window_pass` reads each row of the window once, oldest first, in the two segments of the
ring buffer (``start .. WINDOW-1``, then ``0 .. start-1``: no wrap test, no per-sample call), loads
each channel's sample once for all its groups, and keeps one accumulator per statistic and group,
updated in the order of the documented float32 definitions of
:mod:`sensorbudget.trainer.sensing.extractors`, so the values stay bit for bit those of
:mod:`sensorbudget.firmware_gen.reference`:

- ``sum``: ``s = s + x`` (mean); ``sq``: ``s = s + x * x`` (energy, rms) with the product rounded
  before the sum (``<name>_mla``: ``vmla.f32`` on Cortex-M4F, which is not fused);
- ``min`` / ``max``: ``if (x < m) m = x`` from ``m = x[0]`` (comparing ``x[0]`` with itself
  changes nothing, so the loop may start at 0);
- ``dev``: ``d = x - x[0]; s1 = s1 + d; s2 = s2 + d * d`` (std);
- a magnitude is ``sqrtf(c0*c0 + c1*c1 ...)`` per row (the first product is the sum: ``0 + y == y``
  for ``y >= 0``), then ``sum``, ``max`` or ``dev`` of it;
- integer (Q15) statistics ``qsum`` (int32), ``qmin`` / ``qmax`` (int16) and ``qsq`` (the sum
  of squares, int64: each square a uint32, added with a carry rather than a sign extension; on
  AVR a uint32 with a uint16 carry word and the squares by ``mul``: ``<NAME>_SQ_*`` of
  :func:`sensorbudget.firmware_gen.q15_c.squares`) are exact, so their order is free; ``rms``
  is one integer root of ``qsq / N`` per window;
- a Q15 magnitude set (``mag_mean``, ``mag_max``) reads the per-sample magnitudes cached by
  :mod:`sensorbudget.firmware_gen.q15_c` (``mmax``: their maximum; the mean needs no pass: its
  sum is kept).

One loop for every channel rather than one per channel: on the issue-22 set (six extractors on
five channels, 64-sample windows, Cortex-M4F float32, ``sensorbudget simulate`` on unicorn) the
per-channel passes cost a median 2 237 instructions per window, the single pass 1 656 (the
ring-buffer split and the loop control are paid once, and a sample two groups share is loaded
once). Loops carry ``<NAME>_UNROLL`` (``#pragma GCC unroll 8`` where GCC >= 8 has it): unrolling
repeats the body in order, one accumulator per statistic, so nothing reassociates. A pass that
reads rows only walks them by a pointer to the row (no index, no row address computed per
sample: on the issue-28 bundle, Cortex-M4F float32, 1 653 -> 1 626 instructions per pass).
"""

from __future__ import annotations

import re

from sensorbudget.export import cgen
from sensorbudget.trainer.sensing.q15 import energy_shift

from . import q15_c
from .ctemplate import macro

#: the statistics in the order a pass computes them; the per-sample lines of each are the macro
#: ``stat_<name>`` of ``templates/stream.c.j2`` (on the float sample x / int16 sample q,
#: accumulators suffixed with the group number g)
_ORDER = ("sum", "min", "max", "sq", "dev", "qsum", "qmin", "qmax", "qsq", "mmax")
#: statistic -> (C type, initial value) of its accumulator ("dev" has two floats at 0)
#: (the initial value "first" / "qfirst" is suffixed with the group number)
_INIT = {"sum": ("float", "0.0f"), "min": ("float", "first"), "max": ("float", "first"),
         "sq": ("float", "0.0f"), "qsum": ("int32_t", "0"), "qmin": ("int_fast16_t", "qfirst"),
         "qmax": ("int_fast16_t", "qfirst"), "qsq": ("int64_t", "0"), "mmax": ("uint16_t", "0u")}
_FLOAT = {"sum", "min", "max", "sq", "dev"}
#: accumulator variable(s) and the stats-struct field(s) of a statistic
_VARS = {"sum": ("sum",), "min": ("lo",), "max": ("hi",), "sq": ("sq",), "dev": ("s1", "s2"),
         "qsum": ("qsum",), "qmin": ("qlo",), "qmax": ("qhi",), "qsq": ("qsq",),
         "mmax": ("mhi",)}

#: per-channel kind -> statistics (float definition, integer definition)
FLOAT_STATS = {"mean": ("sum",), "min": ("min",), "max": ("max",), "ptp": ("min", "max"),
               "energy": ("sq",), "rms": ("sq",), "std": ("dev",), "last": ()}
FIXED_STATS = {"mean": ("qsum",), "min": ("qmin",), "max": ("qmax",), "ptp": ("qmin", "qmax"),
               "energy": ("qsq",), "rms": ("qsq",), "last": ()}
MAG_KINDS = {"mag_mean": "sum", "mag_max": "max", "mag_std": "dev"}
#: fixed-point magnitude kind -> statistics of its pass over the magnitude cache
FIXED_MAG_STATS = {"mag_mean": (), "mag_max": ("mmax",)}


def pass_stats(ext) -> tuple:
    """Statistics extractor ``ext`` (an ExtractorPlan) takes from a pass, or None (own routine)."""
    if ext.on_series:
        return None
    if ext.kind in MAG_KINDS:
        return FIXED_MAG_STATS[ext.kind] if ext.fixed else (MAG_KINDS[ext.kind],)
    table = FIXED_STATS if ext.fixed else FLOAT_STATS
    return table.get(ext.kind) if ext.per_channel else None


def stats_struct(p: str) -> str:
    """The struct every pass fills (only the fields of its statistics)."""
    return macro("stream.c.j2", "stats_struct", p)


def _magnitude(p: str, xs, m2: str) -> list:
    """``sqrtf(x0*x0 + x1*x1 + ...)`` of the values ``xs`` into ``m2`` (the first product is the
    sum: ``0 + y == y`` for ``y >= 0``); returns the lines, the root is ``sqrtf(m2)``."""
    return [f"float {m2} = {xs[0]} * {xs[0]};",
            *(f"{m2} = {p}_mla({m2}, {x}, {x});" for x in xs[1:])]


def _group_parts(p: str, P: str, g: int, key, stats, names, pairs) -> tuple:
    """(decls, body, stores, what) of group ``g``; with ``pairs`` (a packed pass: see
    :func:`_pairs`) its qmin / qmax are the pair's and qsq reads the pair's word."""
    kind, chans, *m = key
    # packed: this channel is read as half of a pair's word (an odd channel count leaves the
    # last channel alone, read as an int16 like the scalar pass)
    packed = kind == "ch" and chans[0] // 2 in pairs
    decls, body, stores = [], [], []
    stat_names = [x for x in _ORDER if x in stats]
    if kind in ("qmag", "mag"):
        chan_names = ", ".join(cgen.c_comment(names[c]) for c in chans)
        what = f"|{chan_names}|{' (Q15, cached)' if kind == 'qmag' else ''}: "
    else:
        what = f"{cgen.c_comment(names[chans[0]])}: "
    what += ", ".join(stat_names)
    if kind == "qmag":
        x, q = f"s->mag[i][{m[0]}u]", None
    elif kind == "mag":
        if stats & {"min", "max", "dev"}:
            first = [f"{P}_X(s, start, {c}u)" for c in chans]
            decls += [f"    float first{g};", "    {",
                      *(f"        const float f{k} = {v};" for k, v in enumerate(first)),
                      *("        " + line for line in
                        _magnitude(p, [f"f{k}" for k in range(len(chans))], "n2")),
                      f"        first{g} = sqrtf(n2);", "    }"]
        body += _magnitude(p, [f"x{c}" for c in chans], f"m2_{g}")
        body.append(f"const float a{g} = sqrtf(m2_{g});")
        x, q = f"a{g}", None
    else:
        (c,) = chans
        if stats & {"min", "max", "dev"}:
            decls.append(f"    const float first{g} = {P}_X(s, start, {c}u);")
        if stats & {"qmin", "qmax"} and not packed:
            decls.append(f"    const int16_t qfirst{g} = s->buf[start][{c}u];")
        x, q = f"x{c}", f"q{c}"
    for n in stat_names:
        if packed and n == "qsq":
            half = "hi" if chans[0] % 2 else "lo"
            decls.append(f"    int64_t qsq{g} = 0;")
            body.append(f"qsq{g} = {p}_sq_{half}(qsq{g}, w{chans[0] // 2});")
            stores.append(f"    st[{g}].qsq = qsq{g};")
            continue
        if packed and n in ("qmin", "qmax"):
            half = "" if chans[0] % 2 == 0 else " >> 16"
            stores.append(f"    st[{g}].{_VARS[n][0]} = (int16_t)(p{n[1:]}{chans[0] // 2}{half});")
            continue
        if n == "dev":
            decls.append(f"    float s1{g} = 0.0f, s2{g} = 0.0f;")
        elif n == "qsq":      # the sum of squares by <P>_SQ_* (q15_c.squares: 48 bits on AVR)
            decls.append(f"    {P}_SQ_DECL(qsq{g});")
            body += macro("stream.c.j2", "stat_qsq", g, x, q, p, P).splitlines()
            stores.append(f"    st[{g}].qsq = {P}_SQ_SUM(qsq{g});")
            continue
        else:
            ctype, init = _INIT[n]
            init = f"{init}{g}" if init.endswith("first") else init
            decls.append(f"    {ctype} {_VARS[n][0]}{g} = {init};")
        body += macro("stream.c.j2", f"stat_{n}", g, x, q, p, P).splitlines()
        stores += [f"    st[{g}].{v} = {v}{g};" for v in _VARS[n]]
    return decls, body, stores, what


def _pairs(groups, n_channels: int) -> dict:
    """{pair: (min needed, max needed)} of the channel pairs (2j, 2j+1) a packed pass loads as
    one word: those of every channel whose pair lies in the row."""
    out = {}
    for (kind, chans, *_), stats in groups:
        if kind == "qmag":
            continue
        for c in chans:
            if c // 2 * 2 + 1 < n_channels:
                lo, hi = out.get(c // 2, (False, False))
                one = kind == "ch"
                out[c // 2] = (lo or (one and "qmin" in stats), hi or (one and "qmax" in stats))
    return out


def _parts(p: str, P: str, groups, fixed_plan: bool, names, packed: bool) -> tuple:
    """(decls, per-row lines, stores, descriptions) of the pass (scalar or packed)."""
    used = sorted({c for key, _ in groups if key[0] != "qmag" for c in key[1]})
    need_f = {c for (kind, chans, *_), stats in groups for c in chans
              if kind == "mag" or stats & _FLOAT}
    pairs = _pairs(groups, len(names)) if packed else {}
    decls, fetch, body, stores, what = [], [], [], [], []
    for j, (lo, hi) in pairs.items():
        fetch += [f"uint32_t w{j};", f"memcpy(&w{j}, row + {2 * j}u, 4u);"]
        for name, need in (("pmin", lo), ("pmax", hi)):
            if need:
                decls += [f"    uint32_t {name}{j};",
                          f"    memcpy(&{name}{j}, s->buf[start] + {2 * j}u, 4u);"]
        body += [f"pmin{j} = {p}_min2(pmin{j}, w{j});"] * lo
        body += [f"pmax{j} = {p}_max2(pmax{j}, w{j});"] * hi
    scalar_q = {c for (kind, chans, *_), stats in groups if kind == "ch"
                for c in chans if stats - {"qmin", "qmax", "qsq"}} | need_f
    for c in used:
        if fixed_plan:
            if c // 2 in pairs and c not in scalar_q:
                continue
            if c // 2 in pairs:
                half = "" if c % 2 == 0 else " >> 16"
                fetch.append(f"const int16_t q{c} = (int16_t)(w{c // 2}{half});")
            else:
                fetch.append(f"const int16_t q{c} = row[{c}u];")
            if c in need_f:
                fetch.append(f"const float x{c} = (float)q{c} *{cgen.BREAK}"
                             f"{p}_sample_scale[{c}];")
        else:
            fetch.append(f"const float x{c} = row[{c}u];")
    for g, (key, stats) in enumerate(groups):
        d, b, st, w = _group_parts(p, P, g, key, stats, names, pairs)
        decls, body, stores, what = decls + d, body + b, stores + st, what + [w]
    return decls, fetch + body, stores, what


def _part(decls, lines, stores) -> dict:
    """A pass's parts for the macro ``pass_body``: a pass over cached magnitudes only reads no
    row of the ring buffer (``row`` false); one that reads rows and no per-index array walks
    the rows by pointer (``ptr``)."""
    row = any(re.search(r"\brow\b", x) for x in lines)
    return {"decls": decls, "lines": lines, "stores": stores, "row": row,
            "ptr": row and not any("[i]" in x for x in lines)}


#: integer statistics the AVR row macros (``<P>_ROW_*``, :func:`q15_c.avr_rows`) compute
_AVR_STATS = {"qsum", "qmin", "qmax", "qsq"}


def _avr_part(P: str, groups) -> dict | None:
    """The AVR form of a Q15 pass (``<P>_AVR_ROWS``): each statistic one inline-assembly macro
    that loads its channel's sample itself (``ldd`` from the row pointer at byte offset 2c), so
    that only the accumulators live across the loop (avr-gcc kept every sample of the row and
    spilled accumulators to the stack). The sum is kept as the sum of ``q + 32768`` (unsigned:
    no sign extension), the sum of squares as 48 bits (:func:`q15_c.squares`). None when a
    group is not a channel's integer statistics (magnitudes, float statistics) or a channel
    lies past the ``ldd`` displacement. :func:`q15_c.avr_asm_pass` makes the loop one block
    of assembly where the registers allow."""
    decls, lines, stores = [], [], []
    for g, ((kind, chans, *_), stats) in enumerate(groups):
        if kind != "ch" or not stats <= _AVR_STATS or 2 * chans[0] + 1 > q15_c.AVR_MAX_OFFSET:
            return None
        c, off = chans[0], 2 * chans[0]
        first = f"s->buf[start][{c}u]"
        if "qsum" in stats:
            decls.append(f"    uint32_t qsum{g} = 0u;")
            lines.append(f"{P}_ROW_SUM(qsum{g}, row, {off});")
            stores.append(f"    st[{g}].qsum ={cgen.BREAK}(int32_t)(qsum{g} -{cgen.BREAK}"
                          f"(uint32_t){P}_WINDOW * 32768u);")
        if "qmin" in stats:
            decls.append(f"    int16_t qlo{g} = {first};")
            stores.append(f"    st[{g}].qlo = qlo{g};")
        if "qmax" in stats:
            decls.append(f"    int16_t qhi{g} = {first};")
            stores.append(f"    st[{g}].qhi = qhi{g};")
        if {"qmin", "qmax"} <= stats:
            lines.append(f"{P}_ROW_MINMAX(qlo{g}, qhi{g}, row, {off});")
        elif "qmin" in stats:
            lines.append(f"{P}_ROW_MIN(qlo{g}, row, {off});")
        elif "qmax" in stats:
            lines.append(f"{P}_ROW_MAX(qhi{g}, row, {off});")
        if "qsq" in stats:
            decls.append(f"    {P}_SQ_DECL(qsq{g});")
            lines.append(f"{P}_ROW_SQ(qsq{g}, row, {off});")
            stores.append(f"    st[{g}].qsq = {P}_SQ_SUM(qsq{g});")
    return ({"decls": decls, "lines": lines, "stores": stores, "row": True, "ptr": True}
            if lines else None)


def window_pass(p: str, P: str, groups, fixed_plan: bool, names, window: int = 0) -> str:
    """``<p>_window_pass``: one loop over the window (two ring-buffer segments) computing the
    statistics of every group: ``(("ch", (c,)) | ("mag", channels) | ("qmag", channels, m),
    statistics)`` (m: the set's index in the magnitude cache); group g's results go to
    ``st[g]``. Each sample of a channel is loaded once for all its groups. ``window`` (rows;
    0: unknown) lets the AVR pass keep its row count and carry words in one byte.

    Q15 passes have a second form for cores with the 32-bit SIMD instructions (Cortex-M4): the
    row is read a channel pair (one word) at a time, and the minimum / maximum of both
    channels of a pair are kept in one word (``SSUB16`` + ``SEL``: two instructions for two
    compares). The integer results are the same."""
    decls, lines, stores, what = _parts(p, P, groups, fixed_plan, names, False)
    packed = None
    if fixed_plan and _pairs(groups, len(names)):
        packed = _part(*_parts(p, P, groups, fixed_plan, names, True)[:3])
    avr = _avr_part(P, groups) if fixed_plan else None
    if avr is not None:
        avr = q15_c.avr_asm_pass(p, P, groups, len(names), avr, window) or avr
    comment = cgen.block_comment(["One pass over the window, oldest sample first; per group "
                                  "(a channel or a |magnitude|), its statistics:",
                                  *what])
    return macro("stream.c.j2", "window_pass", p, P, comment.rstrip("\n"),
                 _part(decls, lines, stores), packed, avr)


def simd(p: str, P: str) -> str:
    """The Cortex-M4 SIMD helpers of the Q15 passes (``<P>_SIMD32``, halfword min / max),
    from ``templates/stream.c.j2``, and the AVR row statistics (:func:`q15_c.avr_rows`)."""
    return macro("stream.c.j2", "simd", p, P) + q15_c.avr_rows(P)


def raw(p: str, P: str, ext, st: str = "st", mag: int = 0, window: int = 0) -> str:
    """C expression (int32) of the integer value of the fixed-point ``ext`` from the statistics
    ``st`` (or the newest sample); ``mag`` is the index of a Q15 magnitude set in the cache;
    energy is shifted right by :func:`sensorbudget.trainer.sensing.q15.energy_shift` of the
    ``window``."""
    br = cgen.BREAK
    if ext.kind == "mag_mean":
        return f"(int32_t)(s->mag_sum[{mag}u] /{br}{P}_WINDOW)"
    if ext.kind == "mag_max":
        return f"(int32_t){st}.mhi"
    if ext.kind == "rms":
        return f"(int32_t){p}_rms_q15({st}.qsq)"
    if ext.kind == "energy":
        return f"(int32_t)({st}.qsq >> {energy_shift(window)})"
    return {"mean": f"{st}.qsum /{br}(int32_t){P}_WINDOW", "min": f"(int32_t){st}.qlo",
            "max": f"(int32_t){st}.qhi", "ptp": f"(int32_t){st}.qhi -{br}(int32_t){st}.qlo",
            "last": f"(int32_t){P}_Q(s, newest, {ext.channels[0]}u)"}[ext.kind]


def value(p: str, P: str, ext, scale: str, st: str = "st", mag: int = 0,
          window: int = 0) -> str:
    """C expression of ``ext``'s float value from the statistics ``st`` (or the newest sample);
    for a fixed-point ``ext`` its :func:`raw` value times ``scale`` (its unit)."""
    n = f"(float){P}_WINDOW"
    kind = ext.kind.removeprefix("mag_") if ext.kind in MAG_KINDS else ext.kind
    if ext.fixed:
        return f"(float)({raw(p, P, ext, st, mag, window)}) *{cgen.BREAK}{scale}"
    return {"mean": f"{st}.sum / {n}", "min": f"{st}.lo", "max": f"{st}.hi",
            "ptp": f"{st}.hi - {st}.lo", "energy": f"{st}.sq", "rms": f"sqrtf({st}.sq / {n})",
            "std": f"{p}_std_of(&{st})", "last": f"{P}_X(s, newest, {ext.channels[0]}u)"}[kind]


def std_of(p: str, P: str) -> str:
    """The std epilogue of the ``dev`` sums (``m = s1 / N; v = s2 / N - m * m``)."""
    return macro("stream.c.j2", "std_of", p, P)


def unroll(P: str) -> str:
    """``<P>_UNROLL`` (GCC's unroll-8 pragma where it has it), from
    ``templates/stream.c.j2``."""
    return macro("stream.c.j2", "unroll", P)
