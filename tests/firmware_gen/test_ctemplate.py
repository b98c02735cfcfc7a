"""One way to write C (issue 28 item 6): the emitters converted to Jinja2 templates
(:mod:`sensorbudget.firmware_gen.ctemplate`) use none of the old mechanisms, and the template
environment refuses what the old ones let through. The bytes they write are pinned by the
golden files (tests/golden)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from sensorbudget.export import ctemplate as export_ctemplate
from sensorbudget.firmware_gen import (ctemplate, extractors_c, fft_c, fft_q15_c, firmware,
                                        kernel_c, kernel_q15, library, library_arduino, library_build,
                                        library_decide, library_idf, passes_c, q15_c, series_c,
                                        shape_c)

c_header_module = importlib.import_module("sensorbudget.export.c_header")
c_decisions_module = importlib.import_module("sensorbudget.export.c_decisions")

#: the emitters that use none of the old mechanisms below: their fixed C is in templates
#: (templates/*.j2 of firmware_gen and export); some still assemble generated lines (a value's
#: C expression, a table row) in plain f-strings that hold no C block. Still on an old
#: mechanism: export/cgen only (array_declare's braces; sanitize_identifier's re.sub is not
#: templating)
CONVERTED = (ctemplate, shape_c, fft_c, fft_q15_c, series_c, library_arduino, library_decide,
             library, library_build, library_idf, kernel_c, kernel_q15, extractors_c, q15_c,
             passes_c, export_ctemplate, c_header_module, firmware, c_decisions_module)


def old_mechanisms(source: str) -> list:
    """(line, kind) of each old templating mechanism in Python ``source``: placeholder
    keys ``@key@`` (literal or f-string), ``.replace("@key@", ...)``, ``re.sub``, ``str.format``
    on a literal with doubled braces or with named values (a text constant used as a template),
    f-strings with doubled braces (C blocks in f-strings)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, first = node.func.attr, node.args[0] if node.args else None
            if (attr == "replace" and isinstance(first, ast.Constant)
                    and re.fullmatch(r"@\w+@", str(first.value))):
                out.append((node.lineno, "replace of a placeholder"))
            if (attr == "sub" and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "re"):
                out.append((node.lineno, "re.sub"))
            if (attr == "format" and isinstance(node.func.value, ast.Constant)
                    and "{{" in str(node.func.value.value)):
                out.append((node.lineno, "str.format with doubled braces"))
            elif attr == "format" and node.keywords:
                out.append((node.lineno, "str.format of a named text"))
        if isinstance(node, ast.JoinedStr):
            parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
            if any("{" in v or "}" in v for v in parts):
                out.append((node.lineno, "f-string with doubled braces"))
            if any(v.endswith("@") for v in parts) and any(v.startswith("@") for v in parts):
                out.append((node.lineno, "f-string placeholder"))
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and re.search(r"@[A-Za-z_]+@", node.value)):
            out.append((node.lineno, "placeholder literal"))
    return out


@pytest.mark.parametrize("snippet, kind", [
    ('t = C.replace("@p@", p)', "replace of a placeholder"),
    ('t = "static int @p@_x;"', "placeholder literal"),
    ('t = t.replace(f"@{key}@", v)', "f-string placeholder"),
    ('t = re.sub("x", "y", t)', "re.sub"),
    ('t = "int {0}(void)\\n{{\\n}}\\n".format(n)', "str.format with doubled braces"),
    ('t = f"int {n}(void) {{ return 0; }}"', "f-string with doubled braces"),
    ('t = _SOURCE.format(p=p, P=P)', "str.format of a named text"),
])
def test_the_check_finds_each_old_mechanism(snippet, kind):
    assert kind in [k for _, k in old_mechanisms(snippet)]
    assert old_mechanisms("t = render('x.c.j2', p=p)\nu = f'{p}_x'") == []


@pytest.mark.parametrize("module", CONVERTED, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_converted_emitters_use_templates_only(module):
    assert old_mechanisms(Path(module.__file__).read_text()) == []


def test_a_missing_value_is_an_error_not_an_empty_string():
    from jinja2 import UndefinedError

    with pytest.raises(UndefinedError):
        ctemplate.environment().from_string("static int {{ p }}_x;\n").render()
    with pytest.raises(ctemplate.FirmwareGenError, match="no macro 'nope'"):
        ctemplate.macro(shape_c.TEMPLATE, "nope", "sb")


def test_block_tags_leave_no_blank_lines():
    text = ctemplate.environment().from_string(
        "a\n{% for c in xs %}\n    p = {{ c }};\n{% endfor %}\nb\n").render(xs=["1", "2"])
    assert text == "a\n    p = 1;\n    p = 2;\nb\n"


@pytest.mark.parametrize("name", sorted(series_c.ROUTINES))
def test_every_routine_is_prefixed_and_short(name):
    """Every routine renders for a prefix: no other prefix, no placeholder left, lines short
    by construction (no c_wrap)."""
    from sensorbudget.export.cgen import MAX_LINE

    text = series_c.ROUTINES[name][1]("zq")
    assert "@" not in text and "{{" not in text and "{%" not in text
    assert all(len(line) <= MAX_LINE for line in text.splitlines())
    names = re.findall(r"^static \w+(?: \w+)? \*?(\w+)\(", text, re.M)
    assert names and all(n.startswith("zq_") for n in names)
    for dep in series_c.ROUTINES[name][0]:
        assert dep in series_c.ROUTINES


def test_fit_breaks_only_at_the_marks_and_keeps_the_text():
    """ctemplate.fit on seeded random lines: every line within the width (a piece never longer
    than the room), the breaks only at marks, the text with the marks as blanks unchanged;
    a line that fits is one line; a preprocessor line continues with backslashes."""
    import random

    from sensorbudget.export.cgen import MAX_LINE
    from sensorbudget.export.ctemplate import BREAK, fit

    rng = random.Random(28)
    for _ in range(500):
        lead = " " * rng.choice([0, 4, 8, 12])
        pieces = ["".join(rng.choice("abc_(*),=") for _ in range(rng.randint(1, 40)))
                  for _ in range(rng.randint(1, 8))]
        macro = rng.random() < 0.3
        if macro:
            pieces[0] = "#if " + pieces[0]
        text = fit(lead + BREAK.join(pieces))
        assert text.endswith("\n")
        lines = text[:-1].split("\n")
        assert all(len(line) <= MAX_LINE for line in lines)
        flat = " ".join(line.rstrip("\\").strip() for line in lines)
        assert flat == " ".join(pieces)
        one = lead + " ".join(pieces)
        assert (lines == [one]) == (len(one) <= MAX_LINE)
        if len(lines) > 1:
            assert all(line.endswith(" \\") == macro for line in lines[:-1])
            assert all(line.startswith(lead + "    ") for line in lines[1:])


def test_fit_moves_a_trailing_comment_above_only_when_the_line_is_too_long():
    from sensorbudget.export.cgen import BREAK, MAX_LINE, NOTE, fit

    short = fit(f"    int x[N];{NOTE}  /* a note */")
    assert short == "    int x[N];  /* a note */\n"
    name = "v" * 60
    text = fit(f"    int {name}_values{BREAK}[{name.upper()}_N];{NOTE}  /* the values */")
    lines = text.splitlines()
    assert lines[0] == "    /* the values */" and all(len(line) <= MAX_LINE for line in lines)
    assert " ".join(line.strip() for line in lines[1:]) == f"int {name}_values [{name.upper()}_N];"
