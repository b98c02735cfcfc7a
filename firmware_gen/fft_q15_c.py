"""C for the Q15 power spectrum (issue 29), following
:mod:`sensorbudget.trainer.sensing.spectral_q15` integer for integer.

``<name>_power_spectrum_q15`` takes a window of int16 samples, removes the truncated integer
mean, applies the Q15 Hann table (or the rectangular shift), scatters the pairs to their bit-
reversed positions of one int16 buffer (re, im interleaved) and runs the ``M/2``-point complex
FFT's radix-2 stages two per pass (radix 2^2, as :mod:`.fft_c`: a pass's four-point groups are
closed under its two stages, so the integers are the reference's), every butterfly halving its
outputs like CMSIS-DSP's ``arm_rfft_q15``, then the split into ``P[k]`` (uint32, ``k <= M/2``).
Only integer operations: ``>>`` of a negative int32 is the arithmetic shift (GCC and Clang
define it so; the reference's floor shift). Tables (``static const SB_CONST``, flash on AVR):
the bit reversal (uint16), the Q15 twiddles (int16,
:func:`~sensorbudget.trainer.sensing.spectral_q15.twiddles_q15`) and the Q15 Hann (uint16,
0..32768). Buffers: ``z``, the ``M/2`` complex values interleaved (``M`` int16), and ``P`` of
``M/2 + 1`` uint32: ``4 M + 4`` bytes beside the window (the float32 transform's: ``8 M``). On a
core with the DSP extension (``__ARM_FEATURE_DSP``: Cortex-M4/M7/M33) the butterflies run on
packed (re, im) words with its halving lanes and dual multiplies (``arm_acle.h``), the same
integers as the portable C (bit for bit with the reference on the M4F, QEMU/unicorn); on AVR one
radix-2 stage per pass (few live values: a small stack frame); elsewhere (M3, RISC-V, the host)
the portable C.
"""

from __future__ import annotations

from sensorbudget.export import cgen
from sensorbudget.trainer.sensing import spectral, spectral_q15

from .ctemplate import macro

TEMPLATE = "fft_q15.c.j2"


def routine(prefix: str, normalize: bool = False) -> str:
    """The routine's C text (``templates/fft_q15.c.j2``) with the symbol prefix ``prefix``;
    ``normalize``: block normalised (spectral_q15's ``normalize=True``, one more argument:
    ``unsigned *shift``), as the firmware's ``fft="q15"`` runs it."""
    return macro(TEMPLATE, "power_spectrum_q15", prefix, normalize)


def tables(prefix: str, m: int, hann_lengths=()) -> list:
    """C declarations (``static const SB_CONST``) of the tables of an ``m``-point transform:
    ``<prefix>_qrev_<m>``, ``<prefix>_qtwr_<m>``, ``<prefix>_qtwi_<m>`` and a
    ``<prefix>_qhann_<n>`` per window length ``n``."""
    wr, wi = spectral_q15.twiddles_q15(m)
    flash = {"per_line": 12, "storage": "SB_CONST"}
    out = [cgen.array_declare("uint16_t", f"{prefix}_qrev_{m}", spectral.bit_reverse(m // 2),
                              **flash),
           cgen.array_declare("int16_t", f"{prefix}_qtwr_{m}", wr.tolist(), **flash),
           cgen.array_declare("int16_t", f"{prefix}_qtwi_{m}", wi.tolist(), **flash)]
    return out + [cgen.array_declare("uint16_t", f"{prefix}_qhann_{n}",
                                     spectral_q15.hann_q15(n).tolist(), **flash)
                  for n in hann_lengths]
