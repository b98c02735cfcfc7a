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

With ``fft="q15"`` (a q15/q31 plan's opt-in, :func:`check_fft`) the spectrum of a raw window
comes from the Q15 FFT instead (:mod:`.fft_q15_c`, ``<name>_power_spectrum_q15`` on the window's
int16 copy ``<name>_q``), its integer ``P[k]`` turned into the float32 power the features read by
``(float)P[k] * S / 4^k`` with ``S = (4 H F / 32768)^2``
(:func:`sensorbudget.trainer.sensing.spectral_q15.real_scale`, ``F`` the channel's full scale)
and ``k`` the window's block normalisation (the centred samples are scaled by ``2^k`` before the
transform, :func:`~sensorbudget.trainer.sensing.spectral_q15.block_shift`, so a quiet window
keeps its low bits): powers of two, so the products are exact and only the conversion rounds;
every feature after it is the float32 code below. Spectra after preprocessing (a float series)
keep the float32 FFT.

The entropy's log2 is :data:`sensorbudget.trainer.sensing.spectral.LOG2_POLY` after ``frexpf``
(exact), the same polynomial in the same Horner order, so no libm's ``log2f`` is involved.
"""

from __future__ import annotations

import math

from functools import partial

import numpy as np

from sensorbudget.export import cgen
from sensorbudget.trainer.sensing import spectral, spectral_q15

from . import fft_q15_c
from .ctemplate import macro
from .errors import FirmwareGenError

SPECTRAL = ("bandpower", "bandratio", "domfreq", "centroid", "entropy")
#: the transforms a plan's spectra may come from (``FirmwarePlan.fft``)
FFTS = ("float32", "q15")


def is_spectral(ext) -> bool:
    return ext.kind in SPECTRAL


def on_q15_fft(plan, ext) -> bool:
    """``ext``'s spectrum comes from the Q15 FFT: a spectral kind on a raw window of a plan
    with ``fft="q15"``."""
    return plan.fft == "q15" and is_spectral(ext) and not ext.full_spec.pre


def check_fft(plan):
    """``plan`` if its ``fft`` is possible (raises FirmwareGenError naming the value and what
    it needs): "float32", or "q15" for a q15/q31 plan with a spectral feature on a raw window
    (the Q15 FFT reads the Q15 samples; it loses the low bits of small signals, so it is the
    user's choice, never a default)."""
    if plan.fft not in FFTS:
        raise FirmwareGenError(f"fft={plan.fft!r} is not one of {', '.join(FFTS)}")
    if plan.fft == "float32":
        return plan
    if not plan.fixed:
        raise FirmwareGenError(f"fft={plan.fft!r} needs numeric q15 or q31 (the Q15 FFT reads "
                               f"Q15 samples); numeric is {plan.numeric}")
    if not any(on_q15_fft(plan, e) for e in plan.extractors):
        raise FirmwareGenError(f"fft={plan.fft!r}: the model has no spectral feature on a raw "
                               f"window (kinds {', '.join(SPECTRAL)}, no preprocessing), so no "
                               f"spectrum would use it; leave fft at float32")
    for e in plan.extractors:
        if on_q15_fft(plan, e):
            scale = q15_scale(plan, e)      # and / 4^15 (the largest block shift) normal
            if not (np.isfinite(scale) and float(scale) == spectral_q15.real_scale(
                    plan.window, plan.full_scale[e.channels[0]])
                    and float(scale) * 2.0 ** -30 >= 2.0 ** -126):
                raise FirmwareGenError(f"fft={plan.fft!r}: the power scale of channel "
                                       f"{plan.channels[e.channels[0]]!r} is not a float32 "
                                       f"(full scale {plan.full_scale[e.channels[0]]:g})")
    return plan


def check_single_rate(fft) -> None:
    """A multi-rate bundle's spectra keep the float32 FFT (raises for ``fft="q15"``)."""
    if fft not in (None, "float32"):
        raise FirmwareGenError(f"fft={fft!r} is for single-rate bundles; a multi-rate bundle's "
                               f"spectra use the float32 FFT (leave fft at float32)")


def arithmetic(plan, ext) -> str:
    """firmware.json's ``arithmetic`` of an extractor: "q15" (the integer definition),
    "q15 fft, float32" (a feature on the Q15 FFT's power) or "float32"."""
    if ext.fixed:
        return "q15"
    return "q15 fft, float32" if on_q15_fft(plan, ext) else "float32"


def header_note(plan, ext) -> str:
    """The stream header's note on a fixed-point plan's extractor: how it is computed."""
    if ext.fixed:
        return " (integer Q15)"
    return " (float32 on the Q15 FFT)" if on_q15_fft(plan, ext) else " (float32)"


def manifest_fields(plan) -> dict:
    """What firmware.json / c_library.json record of the choice: nothing for the float32 FFT
    (the default, so those files stay as they were), else ``{"fft": "q15", "fft_spectra":
    [the extractors reading the Q15 FFT]}``."""
    if plan.fft == "float32":
        return {}
    return {"fft": plan.fft, "fft_spectra": [e.name for e in plan.extractors
                                             if on_q15_fft(plan, e)]}


def q15_scale(plan, ext) -> np.float32:
    """``S``: float32 real power of one unit of the Q15 spectrum of ``ext``'s channel
    (:func:`sensorbudget.trainer.sensing.spectral_q15.real_scale`; exact)."""
    return np.float32(spectral_q15.real_scale(plan.window, plan.full_scale[ext.channels[0]]))


TEMPLATE = "spectrum.c.j2"

#: name -> the routines it calls (emitted before it; ``mean`` is :mod:`.shape_c`'s)
DEPENDENCIES = {"spectrum": ("mean",), "bandpower": (), "bandratio": ("bandpower",), "domfreq": (),
                "centroid": (), "entropy": (), "spectrum_q15": ()}


def routine(name: str, p: str) -> str:
    """The C of routine ``name`` (``templates/spectrum.c.j2``) for the model prefix ``p``; the
    log2 polynomial's coefficients are
    :data:`sensorbudget.trainer.sensing.spectral.LOG2_POLY`."""
    if name == "entropy":
        return macro(TEMPLATE, name, p, cgen.c_float(spectral.LOG2_POLY[0]),
                     [cgen.c_float(c) for c in spectral.LOG2_POLY[1:]])
    if name == "spectrum_q15":
        return (fft_q15_c.routine(p, normalize=True)
                + macro(fft_q15_c.TEMPLATE, "power_float", p))
    return macro(TEMPLATE, name, p)


# name -> (dependencies, text(p))
ROUTINES = {name: (deps, partial(routine, name)) for name, deps in DEPENDENCIES.items()}


def tables(plan, exts, series_length) -> str:
    """The ``SB_CONST`` tables of the spectra of ``exts``: per FFT size the bit-reversal and
    twiddles (and bin frequencies when domfreq / centroid read them), per length the Hann; for
    the spectra of the Q15 FFT (:func:`on_q15_fft`) the Q15 tables of :mod:`.fft_q15_c`."""
    p = plan.name
    out = []
    qexts = [e for e in exts if on_q15_fft(plan, e)]
    fexts = [e for e in exts if not on_q15_fft(plan, e)]
    freqs = {spectral.fft_size(series_length(plan, e)) for e in exts
             if e.kind in ("domfreq", "centroid")}
    sizes = sorted({spectral.fft_size(series_length(plan, e)) for e in fexts})
    for m in sizes:
        wr, wi = spectral.twiddles(m)
        out.append(cgen.array_declare("uint16_t", f"{p}_rev_{m}", spectral.bit_reverse(m // 2),
                                      per_line=12, storage="SB_CONST"))
        out.append(cgen.array_declare("float", f"{p}_twr_{m}", wr, storage="SB_CONST"))
        out.append(cgen.array_declare("float", f"{p}_twi_{m}", wi, storage="SB_CONST"))
        if m in freqs:
            out.append(_freq_table(plan, m))
    for n in sorted({series_length(plan, e) for e in fexts if not e.full_spec.rect}):
        out.append(cgen.array_declare("float", f"{p}_hann_{n}", spectral.hann(n),
                                      storage="SB_CONST"))
    for m in sorted({spectral.fft_size(series_length(plan, e)) for e in qexts}):
        hanns = sorted({series_length(plan, e) for e in qexts if not e.full_spec.rect})
        out += fft_q15_c.tables(p, m, hanns)
        if m in freqs and m not in sizes:
            out.append(_freq_table(plan, m))
    head = "/* Spectrum tables (trainer.sensing.spectral), in flash on AVR. */\n"
    if qexts:
        head = ("/* Spectrum tables (trainer.sensing.spectral, spectral_q15 for fft=q15), in "
                "flash on AVR. */\n")
    return head + "\n".join(out)


def _freq_table(plan, m) -> str:
    freq = (np.arange(m // 2 + 1) * (plan.sample_rate_hz / m)).astype(np.float32)
    return cgen.array_declare("float", f"{plan.name}_freq_{m}", freq, storage="SB_CONST")


def q15_buffers(plan, exts, series_length) -> list:
    """Declarations of the Q15 FFT's buffers (none without :func:`on_q15_fft` extractors): the
    ``M/2`` complex int16 values ``<p>_qz`` and the power ``<p>_qp``, ``M/2 + 1`` values held
    as uint32 (the transform's) then float32 (the features'), in one union, and the block
    shift ``<p>_qshift``: ``4 M + 8`` bytes for the largest ``M`` (:func:`q15_buffer_bytes`)."""
    qexts = [e for e in exts if on_q15_fft(plan, e)]
    if not qexts:
        return []
    m = max(spectral.fft_size(series_length(plan, e)) for e in qexts)
    return [macro(fft_q15_c.TEMPLATE, "buffers", plan.name, m).rstrip("\n")]


def q15_buffer_bytes(plan, exts, series_length) -> int:
    """RAM of :func:`q15_buffers`: ``2 M + 4 (M/2 + 1)`` and the shift (4)."""
    qexts = [e for e in exts if on_q15_fft(plan, e)]
    if not qexts:
        return 0
    m = max(spectral.fft_size(series_length(plan, e)) for e in qexts)
    return 2 * m + 4 * (m // 2 + 1) + 4


def _bins(band, length, rate) -> tuple:
    r = spectral.band_bins(band[0], band[1], length, rate)
    return (r.start, r.stop - 1) if len(r) else (1, 0)


def spectrum_lines(plan, exts, length: int, n: str, rect: bool) -> list:
    """Lines of a series group: the spectrum of ``<p>_x`` once, then each spectral feature."""
    p = plan.name
    m = spectral.fft_size(length)
    hann = "0" if rect else f"{p}_hann_{length}"
    br = cgen.BREAK
    args = [f"{p}_x", n, hann, f"{m}u", f"{p}_rev_{m}", f"{p}_twr_{m}", f"{p}_twi_{m}",
            f"{p}_re", f"{p}_im"]
    lines = [f"    {p}_power_spectrum({cgen.JOIN}" + f",{br}".join(args) + ");"]
    return lines + _feature_lines(plan, exts, length, f"{p}_re")


def q15_spectrum_lines(plan, exts, length: int, n: str, rect: bool) -> list:
    """Lines of a series group whose ``exts`` read the Q15 FFT (:func:`on_q15_fft`): the
    spectrum of the int16 copy ``<p>_q`` once, its power as float32, then each feature."""
    p = plan.name
    m = spectral.fft_size(length)
    hann = "0" if rect else f"{p}_qhann_{length}"
    br = cgen.BREAK
    args = [f"{p}_q", n, hann, f"{m}u", f"{p}_qrev_{m}", f"{p}_qtwr_{m}", f"{p}_qtwi_{m}",
            f"{p}_qz", f"{p}_qp.u", f"&{p}_qshift"]
    scale = cgen.c_float(q15_scale(plan, exts[0]))
    return [f"    {p}_power_spectrum_q15({cgen.JOIN}" + f",{br}".join(args) + ");",
            f"    {p}_power_from_q15({cgen.JOIN}&{p}_qp,{br}{m}u,{br}{scale},{br}{p}_qshift);",
            *_feature_lines(plan, exts, length, f"{p}_qp.f")]


def _feature_lines(plan, exts, length: int, power: str) -> list:
    """``s->features[slot] = ...`` of each spectral extractor reading the power ``power``."""
    p, rate = plan.name, plan.sample_rate_hz
    m = spectral.fft_size(length)
    br, j = cgen.BREAK, cgen.JOIN
    lines = []
    for e in exts:
        arg = e.full_spec.arg
        if e.kind == "bandpower":
            a, b = _bins(arg, length, rate)
            expr = f"{p}_band_power({j}{power},{br}{a}u,{br}{b}u)"
        elif e.kind == "bandratio":
            (a0, a1), (b0, b1) = _bins(arg[:2], length, rate), _bins(arg[2:], length, rate)
            expr = f"{p}_band_ratio({j}{power},{br}{a0}u,{br}{a1}u,{br}{b0}u,{br}{b1}u)"
        elif e.kind == "domfreq":
            expr = f"{p}_dominant_frequency({j}{power},{br}{m}u,{br}{p}_freq_{m})"
        elif e.kind == "centroid":
            expr = f"{p}_spectral_centroid({j}{power},{br}{m}u,{br}{p}_freq_{m})"
        else:
            norm = math.log2(m // 2) if m // 2 > 1 else 1.0
            expr = f"{p}_spectral_entropy({j}{power},{br}{m}u,{br}{cgen.c_float(norm)})"
        lines += [f"    s->features[{slot}] ={br}{expr};" for slot in e.slots]
    return lines
