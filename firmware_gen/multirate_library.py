"""The API of a multi-rate C library (``<name>.h`` / ``<name>.c``, templates
``library_api.*.j2`` with ``sensors``) on top of :mod:`.multirate_c`'s unit: pure, returns texts.

::

    <name>_t m;                               caller-owned state (a ring buffer per sensor and rate)
    <name>_init(&m);
    <name>_push_<sensor>(&m, values)          one value per channel of that sensor, at its
                                              rate, in time order across sensors; 1 when a
                                              window completed
    <name>_push(&m, <NAME>_SENSOR_<S>, values)   the same by sensor index
    <name>_ready(&m), <name>_predict(&m, scores), <name>_window_index(&m)   as single-rate

``<sensor>`` is the sensor's name made a C identifier (:func:`library_idents`: unique, within
C99's 63 significant characters after ``<name>_quantize_``). Single-rate libraries keep
``<name>_push_sample`` (:mod:`.library`).
"""

from __future__ import annotations

from sensorbudget.export import cgen
from sensorbudget.export.c_header import HEADER_FORMAT_VERSION

from . import library_decide
from .ctemplate import render
from .library_macros import quantiser_arrays, score_rows
from .multirate_c import MULTIRATE_FORMAT_VERSION
from .plan import FORMAT_VERSION, NUMERIC_CODES

_SCORE_T = {"float32": "float", "q15": "int16_t", "q31": "int32_t"}


def library_idents(name: str, mplan) -> list:
    """Per sensor, ``(index macro <NAME>_SENSOR_<S>, identifier part <s>)``."""
    names = [s.name for s in mplan.sensors]
    longest = f"{name}_quantize"
    idents = [m[len(longest) + 1:].lower() for m in cgen.macro_names(longest.upper(), names)]
    macros = [f"{name.upper()}_SENSOR_{i.upper()}" for i in idents]
    return list(zip(macros, idents))


def _usage(name: str, mplan) -> list:
    N = name.upper()
    (macro, ident), sensor = library_idents(name, mplan)[0], mplan.sensors[0]
    lines = ["Usage (no allocation; the caller owns the state):", f"    static {name}_t m;",
             f"    {name}_score_t scores[{N}_N_TARGETS];", f"    {name}_init(&m);",
             "    for each sample of any sensor, in time order across sensors (each at its "
             "rate),", f"    e.g. one of sensor {cgen.c_comment(sensor.name)} "
             f"({sensor.rate_hz:g} Hz, {macro}_N_CHANNELS values):"]
    if mplan.fixed:
        lines.append(f"        {name}_quantize_{ident}(values, sample);   (real values -> Q15)")
    arg = "sample" if mplan.fixed else "values"
    lines += [f"        if ({name}_push_{ident}(&m, {arg})) {{",
              f"            {name}_predict(&m, scores);   (window {name}_window_index(&m))",
              "        }"]
    if mplan.fixed:
        lines.append(f"A score's real value is scores[j] * {N}_SCORE_SCALE.")
    return lines


def _macros(name: str, p: str, mplan, header, stream_bound=None) -> list:
    N, P = name.upper(), p.upper()
    rows = [f"#define {N}_LIBRARY_FORMAT_VERSION 1", f"#define {N}_MULTI_RATE 1",
            f"#define {N}_N_SENSORS{cgen.BREAK}{P}_N_SENSORS",
            f"#define {N}_N_CHANNELS {len(mplan.channels)}u{cgen.NOTE}  /* every sensor's */",
            f"#define {N}_N_TARGETS {mplan.t}u{cgen.NOTE}  /* scores per prediction */",
            f"#define {N}_NUMERIC_{mplan.numeric.upper()} 1", f"#define {N}_INPUT_SAMPLES 1",
            "", "/* Each sensor (its index, channels, rate) and each channel's index in its "
            "sensor's values. */"]
    for (macro, _), s in zip(library_idents(name, mplan), mplan.sensors):
        rows += [f"#define {macro} {mplan.sensors.index(s)}u{cgen.NOTE}  /* "
                 f"{cgen.c_comment(s.name)}, {s.rate_hz:g} Hz */",
                 f"#define {macro}_N_CHANNELS {len(s.channels)}u"]
        rows += [f"#define {m} {j}u{cgen.NOTE}  /* {cgen.c_comment(c)} */"
                 for j, (m, c) in enumerate(zip(cgen.macro_names(f"{macro}_CH", s.channels),
                                                s.channels))]
    rows += ["", "/* Index of each target in scores[]. */"]
    rows += score_rows(N, P, mplan.numeric, mplan.targets, header, stream_bound,
                       "Q15 samples, every sensor's rates; firmware_gen.multirate_reference")
    return [cgen.fit(row)[:-1] if row else row for row in rows]


def api_header(name: str, p: str, mplan, header, banner: str,
               decision: dict | None = None, stream_bound=None) -> str:
    """``<name>.h`` of a multi-rate library."""
    sensors = [(macro, ident, cgen.c_comment(s.name))
               for (macro, ident), s in zip(library_idents(name, mplan), mplan.sensors)]
    return render("library_api.h.j2", n=name, N=name.upper(), p=p, banner=banner,
                  usage=cgen.block_comment(_usage(name, mplan)).rstrip("\n"),
                  macros=_macros(name, p, mplan, header, stream_bound), sensors=sensors,
                  sample="an int16_t Q15 value" if mplan.fixed else "a float",
                  score_t=_SCORE_T[mplan.numeric], fixed=mplan.fixed,
                  decide_decls=library_decide.declarations(name, mplan, decision))


def api_source(name: str, p: str, mplan, banner: str, fp_contract_off: str) -> str:
    """``<name>.c`` of a multi-rate library."""
    N = name.upper()
    firsts, n = [], 0
    for s in mplan.sensors:
        firsts.append(n)
        n += len(s.channels)
    sensors = [(macro, ident, first) for (macro, ident), first
               in zip(library_idents(name, mplan), firsts)]
    fixed = quantiser_arrays(name, N, mplan.full_scale) if mplan.fixed else {}
    return render("library_api.c.j2", n=name, N=N, p=p, P=p.upper(), banner=banner,
                  fp_contract_off=fp_contract_off, header_format=HEADER_FORMAT_VERSION,
                  multirate_format=MULTIRATE_FORMAT_VERSION, stream_format=FORMAT_VERSION,
                  bundle_id=f"UINT32_C(0x{mplan.bundle_id:08x})", k=mplan.k, t=mplan.t,
                  numeric_code=NUMERIC_CODES[mplan.numeric], sensors=sensors,
                  fixed=mplan.fixed, **fixed, **library_decide.template_values(p, mplan))


def example(name: str, mplan) -> str:
    """The Arduino example sketch of a multi-rate library: each line on Serial is a sensor
    index and that sensor's values; one line per completed window (as the single-rate one)."""
    from sensorbudget.trainer.version import package_version

    from .library_arduino import BAUD, MAX_DECIMALS, SCORE_DIGITS, arduino_name

    Name = arduino_name(name)
    p = f"{name}_model"
    idents = library_idents(name, mplan)
    head = [f"{Name}.ino: example of the multi-rate {name} library, generated by sensorbudget "
            f"{package_version()} (sensorbudget export c-library). Generated file.", "",
            f"Send one sample per line on Serial ({BAUD} baud), in time order across sensors: "
            "the sensor's index, then its values, as decimal numbers separated by commas or "
            "blanks:"]
    head += [f"  {i} ({macro}): {cgen.c_comment(s.name)} at {s.rate_hz:g} Hz, "
             + ", ".join(cgen.c_comment(c) for c in s.channels)
             for i, ((macro, _), s) in enumerate(zip(idents, mplan.sensors))]
    head += ["For every completed window it prints one line: the window number, then the score "
             "of each target (" + ", ".join(cgen.c_comment(t) for t in mplan.targets) + ").",
             "Lines starting with '#' are comments."]
    if mplan.fixed:
        head.append(f"{mplan.numeric}: values are quantised to Q15 with each channel's full "
                    f"scale ({name}_full_scale); scores are printed as real values.")
    on = [f"{t}:on" for t in mplan.targets] if mplan.task == "multilabel" else []
    hello = "\n".join(cgen.wrap_literal(cgen.c_string(
        f"# {name}: send sensor,values per line; prints "
        + ",".join(["window", *mplan.targets, *on])), "        ", cgen.MAX_LINE - 3))
    text = render("arduino_example.ino.j2", name=name, NAME=name.upper(), p=p, P=p.upper(),
                  n=None, sensors=idents, line_chars=min(1024, 24 * mplan.max_sensor_channels + 24),
                  digits=SCORE_DIGITS, baud=BAUD, hello=hello, fixed=mplan.fixed,
                  decide=bool(on), max_decimals=MAX_DECIMALS)
    return cgen.block_comment(head) + text
