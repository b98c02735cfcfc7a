"""The Arduino example of the C library: ``examples/<Name>/<Name>.ino`` (pure, returns text).

The sketch reads one sample per line from ``Serial`` (decimal numbers separated by commas,
blanks or semicolons; lines starting with ``#`` are ignored) and prints one line per completed
window: the window number and every score (real values, :data:`SCORE_DIGITS` decimals).
A number is read as ``(float)m / 10^d`` (``m`` its digits as an integer, ``d`` the number of
decimals): one correctly rounded division, so a value whose ``m`` is below 2^24 (any value of
up to 7 significant digits) arrives as exactly the float32 nearest to the text; above, ``m`` is
rounded first (:func:`parse_like_the_example` mirrors it either way).
"""

from __future__ import annotations

import re

import numpy as np

from sensorbudget.export import cgen
from sensorbudget.export.c_wrap import wrap_c
from sensorbudget.export.cgen import MAX_LINE
from sensorbudget.trainer.version import package_version

BAUD = 115200
SCORE_DIGITS = 6
MAX_DECIMALS = 10        # 10^d is exact in float32 up to d = 10


def arduino_name(name: str) -> str:
    """``<Name>``: the library and example name for Arduino (first letter upper case)."""
    return name[:1].upper() + name[1:]


def parse_like_the_example(text: str) -> np.float32:
    """The float32 the example reads from the decimal ``text`` ([+-]digits[.digits])."""
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    whole, _, frac = digits.partition(".")
    m = int((whole + frac) or "0")
    value = np.float32(m) / np.float32(10 ** len(frac))
    return np.float32(sign * value)


_READ_NUMBER = """\
/* A decimal number "[+-]digits[.digits]" at *p: (float)m / 10^d, m the digits as an integer
 * and d the number of decimals: one correctly rounded division, so the float nearest to the
 * text when m < 2^24 (up to 7 significant digits). Returns 0 if there is none (or too many
 * digits). */
static int read_number(const char **p, float *out)
{
    static const float pow10[] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f, 1e8f, 1e9f,
                                  1e10f};
    const char *s = *p;
    uint32_t m = 0;
    unsigned digits = 0, decimals = 0;
    int negative = 0, point = 0;
    float v;
    if (*s == '-' || *s == '+') {
        negative = *s == '-';
        ++s;
    }
    for (;; ++s) {
        if (*s >= '0' && *s <= '9') {
            if (m > 429496728UL) {
                return 0;
            }
            m = m * 10u + (uint32_t)(*s - '0');
            ++digits;
            decimals += (unsigned)point;
        } else if (*s == '.' && !point) {
            point = 1;
        } else {
            break;
        }
    }
    if (digits == 0u || decimals > @MAX_DECIMALS@u) {
        return 0;
    }
    v = (float)m / pow10[decimals];
    *out = negative ? -v : v;
    *p = s;
    return 1;
}
"""

_SKETCH = """\
#include <@name@.h>

#define LINE_CHARS @line_chars@u

static @name@_t model;
static char line[LINE_CHARS];
static unsigned line_len;
static int line_too_long;

@read_number@
static int is_separator(char c)
{
    return c == ' ' || c == '\\t' || c == ',' || c == ';';
}

/* The values of one line (@NAME@_N_CHANNELS of them), or 0 with an error line. */
static int parse_line(float *values)
{
    const char *p = line;
    unsigned n = 0;
    while (is_separator(*p)) {
        ++p;
    }
    if (*p == '\\0' || *p == '#') {
        return 0;
    }
    while (*p != '\\0') {
        if (n == @NAME@_N_CHANNELS || !read_number(&p, &values[n])) {
            Serial.println(F("# error: not a line of @n@ numbers"));
            return 0;
        }
        ++n;
        while (is_separator(*p)) {
            ++p;
        }
    }
    if (n != @NAME@_N_CHANNELS) {
        Serial.println(F("# error: not a line of @n@ numbers"));
        return 0;
    }
    return 1;
}

static void print_prediction(void)
{
    @name@_score_t scores[@NAME@_N_TARGETS];
@decide_decl@    unsigned j;
    if (@name@_predict(&model, scores) != @NAME@_OK) {
        return;
    }
    Serial.print((unsigned long)@name@_window_index(&model));
    for (j = 0; j < @NAME@_N_TARGETS; ++j) {
        Serial.print(',');
        Serial.print((float)scores[j] * @NAME@_SCORE_SCALE, @digits@);
    }
@decide@    Serial.println();
}

static void handle_line(void)
{
    float values[@NAME@_N_CHANNELS];
@push_decl@    if (!parse_line(values)) {
        return;
    }
@push@}

void setup()
{
    Serial.begin(@baud@UL);
    @name@_init(&model);
    Serial.println(F(
@hello@));
}

void loop()
{
    while (Serial.available() > 0) {
        const int c = Serial.read();
        if (c == '\\n' || c == '\\r') {
            line[line_len] = '\\0';
            if (line_too_long) {
                Serial.println(F("# error: line too long"));
            } else if (line_len > 0u) {
                handle_line();
            }
            line_len = 0;
            line_too_long = 0;
        } else if (line_len + 1u < LINE_CHARS) {
            line[line_len++] = (char)c;
        } else {
            line_too_long = 1;
        }
    }
}
"""


def example(name: str, plan, header) -> str:
    """The example sketch's text."""
    Name = arduino_name(name)
    sample_kind = "feature vector" if plan.input_kind == "features" else "sample"
    head = [f"{Name}.ino: example of the {name} library, generated by sensorbudget "
            f"{package_version()} (sensorbudget export c-library). Generated file.", "",
            f"Send one {sample_kind} per line on Serial ({BAUD} baud): the "
            f"{len(plan.channels)} values " + ", ".join(cgen.c_comment(c) for c in plan.channels)
            + ", as decimal numbers separated by commas or blanks.",
            "For every completed window it prints one line: the window number, then the score "
            "of each target (" + ", ".join(cgen.c_comment(t) for t in plan.targets) + ").",
            "Lines starting with '#' are comments (the first line names the columns)."]
    if plan.fixed:
        head.append(f"{plan.numeric}: values are quantised to Q15 with each channel's full "
                    f"scale ({name}_full_scale); scores are printed as real values.")
        push_decl = f"    {name}_sample_t sample[{name.upper()}_N_CHANNELS];\n"
        push = (f"    {name}_quantize_sample(values, sample);\n"
                f"    if ({name}_push_sample(&model, sample)) {{\n"
                "        print_prediction();\n    }\n")
    else:
        push_decl = ""
        push = (f"    if ({name}_push_sample(&model, values)) {{\n"
                "        print_prediction();\n    }\n")
    decide_decl, decide, on = _decisions(name, plan)
    if on:
        head.insert(4, "Then the label decisions, 0 or 1 each (" + ", ".join(
            cgen.c_comment(c) for c in on) + f"): {name}_decide with the bundle's thresholds.")
    hello = "\n".join(cgen.wrap_literal(cgen.c_string(
        f"# {name}: send " + ",".join(plan.channels) + " per line; prints "
        + ",".join(["window", *plan.targets, *on])), "        ", MAX_LINE - 3))
    values = {"name": name, "NAME": name.upper(), "n": str(len(plan.channels)),
              "line_chars": str(min(1024, 24 * len(plan.channels) + 16)),
              "digits": str(SCORE_DIGITS), "baud": str(BAUD), "hello": hello,
              "push_decl": push_decl, "push": push, "decide_decl": decide_decl,
              "decide": decide,
              "read_number": _READ_NUMBER.replace("@MAX_DECIMALS@", str(MAX_DECIMALS))}
    text = re.sub(r"@(\w+)@", lambda m: values[m.group(1)], _SKETCH)   # one pass
    return cgen.block_comment(head) + wrap_c(text)


def _decisions(name: str, plan) -> tuple:
    """(declaration, printing code, column names) of a multi-label sketch's decisions (each
    label's 0/1 after its score, from ``<name>_decide``); empty otherwise."""
    if plan.task != "multilabel":
        return "", "", []
    N = name.upper()
    decl = f"    unsigned char decisions[{N}_N_TARGETS];\n"
    code = (f"    if ({name}_decide(scores, decisions) == {N}_OK) {{\n"
            f"        for (j = 0; j < {N}_N_TARGETS; ++j) {{\n"
            "            Serial.print(',');\n"
            "            Serial.print((unsigned)decisions[j]);\n"
            "        }\n    }\n")
    return decl, code, [f"{t}:on" for t in plan.targets]
