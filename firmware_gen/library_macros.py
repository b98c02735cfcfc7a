"""The C library's API pieces that single-rate (:mod:`.library`) and multi-rate
(:mod:`.multirate_library`) libraries share: the target index macros with the score scale and
error bounds (:func:`score_rows`), and the Q15 quantiser's full-scale tables
(:func:`quantiser_arrays`)."""

from __future__ import annotations

from sensorbudget.export import cgen


def score_rows(N: str, P: str, numeric: str, targets, header, stream_bound,
               bound_source: str) -> list:
    """Macro rows (``cgen.fit`` marks, unfitted): each target's index in ``scores[]``, the
    score scale, the header's error bound (fixed point) and, when given, the stream bound
    ``stream_bound`` (its derivation named by ``bound_source``)."""
    rows = [f"#define {m} {j}u{cgen.NOTE}  /* {cgen.c_comment(t)} */"
            for j, (m, t) in enumerate(zip(cgen.macro_names(f"{N}_T", targets), targets))]
    if header.fixed is None:
        rows += ["", f"#define {N}_SCORE_SCALE 1.0f{cgen.NOTE}  /* scores are real values */"]
    else:
        fx = header.fixed
        rows += ["", f"/* Real score = score * {N}_SCORE_SCALE (2^-{fx.score_frac_bits});",
                 f" * |real score - float64 model| <= {N}_ERROR_BOUND",
                 " * for features within the training ranges. */",
                 f"#define {N}_SCORE_SCALE {cgen.c_float(2.0 ** -fx.score_frac_bits)}",
                 f"#define {N}_ERROR_BOUND{cgen.BREAK}{P}_{numeric.upper()}_ERROR_BOUND"]
    if stream_bound is not None:
        rows += ["/* From samples (within +-full scale) whose float32 features lie in the",
                 " * training ranges: |real score - float64 model| <= STREAM_ERROR_BOUND",
                 f" * ({bound_source}). */",
                 f"#define {N}_STREAM_ERROR_BOUND{cgen.BREAK}{stream_bound:.1e}f"]
    return rows


def quantiser_arrays(name: str, N: str, full_scale) -> dict:
    """The library's ``<name>_full_scale`` (extern) and ``<name>_per_unit`` (32768 / full
    scale) tables, one value per channel, for ``<name>_quantize_*``."""
    fs = list(full_scale)
    return {"full_scale": cgen.array_declare("float", f"{name}_full_scale", fs,
                                             size_macros=(f"{N}_N_CHANNELS",))
            .replace("static const", "const", 1),
            "per_unit": cgen.array_declare("float", f"{name}_per_unit",
                                           [32768.0 / v for v in fs],
                                           size_macros=(f"{N}_N_CHANNELS",))}
