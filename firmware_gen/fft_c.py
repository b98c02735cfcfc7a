"""C for the power spectrum and the spectral extractors (issue 18), following
:mod:`sensorbudget.trainer.sensing.spectral` operation for operation.

``<name>_power_spectrum`` is that module's definition: the mean removed (the library's
sequential mean), the periodic Hann table (or nothing: rectangular), the sample pairs (even into
``re``, odd into ``im``) scattered to their bit-reversed positions of an ``M/2``-point buffer
(``M`` the power of two >= N; only the pairs past the window zeroed), the radix-2
decimation-in-time butterflies of that ``M/2``-point complex FFT run two stages per pass
(radix 2^2: a pass's four-point groups are closed under its two stages, so the operations and
their values are the reference's; the twiddle-1 and twiddle -i butterflies without multiplies,
as the reference defines them; a lone first stage when log2(M/2) is odd; on AVR one stage per
pass, whose few live floats keep the stack frame small: 56 bytes against 140), then the split into
the real window's spectrum with its power ``P[k]`` for ``k <= M/2`` into ``re`` (bins ``k`` and
``M/2 - k`` from one set of sums; step 5 of the reference). Within 1.0x of CMSIS-DSP's
``arm_rfft_fast_f32`` (its FFT and split) on the Cortex-M4F and M3, counting our split with the
power (``benchmarks/bench_fft_cmsis.py``). The tables (bit-reversal ``uint16_t`` of ``M/2``
entries, twiddles ``cos`` / ``-sin`` of ``M/2`` entries,
:func:`sensorbudget.trainer.sensing.spectral.twiddles`, Hann of ``N`` entries, bin frequencies
``k fs / M``) are ``static const SB_CONST``: flash on AVR (read with ``pgm_read_*``), plain
constants elsewhere; each value is the float32 the Python reference uses. One buffer (``re``,
``im``: ``2 M`` floats) serves every channel in turn; a channel's spectrum is computed once per
window and read by all its spectral features.

The entropy's log2 is :data:`sensorbudget.trainer.sensing.spectral.LOG2_POLY` after ``frexpf``
(exact), the same polynomial in the same Horner order, so no libm's ``log2f`` is involved.
"""

from __future__ import annotations

import math

from functools import partial

import numpy as np

from sensorbudget.export import cgen
from sensorbudget.trainer.sensing import spectral

from .ctemplate import macro

SPECTRAL = ("bandpower", "bandratio", "domfreq", "centroid", "entropy")


def is_spectral(ext) -> bool:
    return ext.kind in SPECTRAL


TEMPLATE = "spectrum.c.j2"

#: name -> the routines it calls (emitted before it; ``mean`` is :mod:`.shape_c`'s)
DEPENDENCIES = {"spectrum": ("mean",), "bandpower": (), "bandratio": ("bandpower",), "domfreq": (),
                "centroid": (), "entropy": ()}


def routine(name: str, p: str) -> str:
    """The C of routine ``name`` (``templates/spectrum.c.j2``) for the model prefix ``p``; the
    log2 polynomial's coefficients are
    :data:`sensorbudget.trainer.sensing.spectral.LOG2_POLY`."""
    if name == "entropy":
        return macro(TEMPLATE, name, p, cgen.c_float(spectral.LOG2_POLY[0]),
                     [cgen.c_float(c) for c in spectral.LOG2_POLY[1:]])
    return macro(TEMPLATE, name, p)


# name -> (dependencies, text(p))
ROUTINES = {name: (deps, partial(routine, name)) for name, deps in DEPENDENCIES.items()}


def tables(plan, exts, series_length) -> str:
    """The ``SB_CONST`` tables of the spectra of ``exts``: per FFT size the bit-reversal and
    twiddles (and bin frequencies when domfreq / centroid read them), per length the Hann."""
    p = plan.name
    out = []
    sizes = sorted({spectral.fft_size(series_length(plan, e)) for e in exts})
    for m in sizes:
        wr, wi = spectral.twiddles(m)
        out.append(cgen.array_declare("uint16_t", f"{p}_rev_{m}", spectral.bit_reverse(m // 2),
                                      per_line=12, storage="SB_CONST"))
        out.append(cgen.array_declare("float", f"{p}_twr_{m}", wr, storage="SB_CONST"))
        out.append(cgen.array_declare("float", f"{p}_twi_{m}", wi, storage="SB_CONST"))
        if any(e.kind in ("domfreq", "centroid") and
               spectral.fft_size(series_length(plan, e)) == m for e in exts):
            freq = (np.arange(m // 2 + 1) * (plan.sample_rate_hz / m)).astype(np.float32)
            out.append(cgen.array_declare("float", f"{p}_freq_{m}", freq, storage="SB_CONST"))
    for n in sorted({series_length(plan, e) for e in exts if not e.full_spec.rect}):
        out.append(cgen.array_declare("float", f"{p}_hann_{n}", spectral.hann(n),
                                      storage="SB_CONST"))
    return "/* Spectrum tables (trainer.sensing.spectral), in flash on AVR. */\n" + "\n".join(out)


def _bins(band, length, rate) -> tuple:
    r = spectral.band_bins(band[0], band[1], length, rate)
    return (r.start, r.stop - 1) if len(r) else (1, 0)


def spectrum_lines(plan, exts, length: int, n: str, rect: bool) -> list:
    """Lines of a series group: the spectrum of ``<p>_x`` once, then each spectral feature."""
    p, rate = plan.name, plan.sample_rate_hz
    m = spectral.fft_size(length)
    hann = "0" if rect else f"{p}_hann_{length}"
    br, j = cgen.BREAK, cgen.JOIN
    args = [f"{p}_x", n, hann, f"{m}u", f"{p}_rev_{m}", f"{p}_twr_{m}", f"{p}_twi_{m}",
            f"{p}_re", f"{p}_im"]
    lines = [f"    {p}_power_spectrum({cgen.JOIN}" + f",{br}".join(args) + ");"]
    for e in exts:
        arg = e.full_spec.arg
        if e.kind == "bandpower":
            a, b = _bins(arg, length, rate)
            expr = f"{p}_band_power({j}{p}_re,{br}{a}u,{br}{b}u)"
        elif e.kind == "bandratio":
            (a0, a1), (b0, b1) = _bins(arg[:2], length, rate), _bins(arg[2:], length, rate)
            expr = f"{p}_band_ratio({j}{p}_re,{br}{a0}u,{br}{a1}u,{br}{b0}u,{br}{b1}u)"
        elif e.kind == "domfreq":
            expr = f"{p}_dominant_frequency({j}{p}_re,{br}{m}u,{br}{p}_freq_{m})"
        elif e.kind == "centroid":
            expr = f"{p}_spectral_centroid({j}{p}_re,{br}{m}u,{br}{p}_freq_{m})"
        else:
            norm = math.log2(m // 2) if m // 2 > 1 else 1.0
            expr = f"{p}_spectral_entropy({j}{p}_re,{br}{m}u,{br}{cgen.c_float(norm)})"
        lines += [f"    s->features[{slot}] ={br}{expr};" for slot in e.slots]
    return lines
