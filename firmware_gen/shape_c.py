"""C routines of the extractors computed on a linear array ``x[0..n-1]`` (:mod:`.series_c`):
the per-channel window statistics (for a preprocessed window), the shape kinds, autocorrelation
and cadence, and the selection of a percentile (float32 and Q15). Each is a literal
transcription of its docstring in :mod:`sensorbudget.trainer.sensing.extractors` /
:mod:`~sensorbudget.trainer.sensing.shape` / :mod:`~sensorbudget.trainer.sensing.spectral` (same
float32 operation order, no fused multiply-add).
The C text is the template ``templates/series.c.j2`` (one macro per routine, rendered by
:mod:`.ctemplate`); :data:`ROUTINES` maps a name to (dependencies, ``text(p)``: the C of the
routine for the model prefix ``p``).
"""

from __future__ import annotations

from functools import partial

from .ctemplate import macro

TEMPLATE = "series.c.j2"

#: name -> the routines it calls (emitted before it)
DEPENDENCIES = {
    "mean": (), "std": (), "min": (), "max": (), "ptp": ("min", "max"), "energy": (),
    "rms": ("energy",), "mad": (), "zcr": ("mean",), "last": (), "moments": ("mean",),
    "skew": ("moments",), "kurtosis": ("moments",), "slope": (), "peaks": ("mean", "std"),
    "acf": (), "autocorr": ("mean", "acf"), "cadence": ("mean", "acf"),
    "percentile": (), "qpercentile": (),
}


def routine(name: str, p: str) -> str:
    """The C of routine ``name`` for the model prefix ``p``."""
    if name == "percentile":
        return macro(TEMPLATE, "select", p, "float", "s_")
    if name == "qpercentile":
        return macro(TEMPLATE, "select", p, "int16_t", "q_")
    return macro(TEMPLATE, name, p)


# name -> (dependencies, text(p))
ROUTINES = {name: (deps, partial(routine, name)) for name, deps in DEPENDENCIES.items()}
