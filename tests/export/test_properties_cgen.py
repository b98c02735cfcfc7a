"""Property-based tests (hypothesis): generated C identifiers are always valid C, and names
from user data can never break out of a C string or comment.

- ``sanitize_identifier`` gives ASCII identifier characters (or ""), and the name that
  ``check_identifier`` suggests for a bad one is accepted;
- ``check_identifier`` accepts only identifiers that are not reserved and fit the length limit;
- ``macro_names`` gives valid macro names, unique within C99's 63 significant characters;
- ``c_string`` is a literal whose bytes are exactly the UTF-8 text, ``c_comment`` never closes
  the comment or forms a trigraph;
- a whole header generated for a bundle with hostile feature/target names and a random model
  name defines only valid, distinct identifiers and compiles with ``-std=c99 -pedantic -Werror``.
"""

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from sensorbudget.export import cgen
from sensorbudget.export.c_header import c_header
from sensorbudget.export.errors import ExportError
from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.bundle.model import bundle_contents, load_bundle, save_bundle

EXPLORE = int(os.environ.get("SB_HYPOTHESIS_EXAMPLES", "0"))
SETTINGS = settings(max_examples=EXPLORE or 60, deadline=None, derandomize=not EXPLORE,
                    database=None, suppress_health_check=[HealthCheck.too_slow])
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
SIGNIFICANT = 63          # C99 5.2.4.1: significant initial characters of a macro name
HOSTILE = st.one_of(st.text(max_size=50), st.sampled_from([
    "*/ int x; /*", "??/", "a\\", '"', "\n#define X 1\n", "x" * 70, "N_FEATURES", "é", "_", "1",
    "int", "__x", "a b", "%s", "\x00"]))
NAMES = st.one_of(st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,45}", fullmatch=True),
                  st.sampled_from(["sbmodel", "int", "main", "m", "A" * 40, "a__b", "Model_1"]))


def _valid_macro(name: str) -> bool:
    return (bool(IDENT.match(name)) and not name.startswith("__")
            and not re.match(r"_[A-Z]", name) and name not in cgen.C_RESERVED)


@SETTINGS
@given(st.text())
def test_sanitized_text_continues_an_identifier(text):
    out = cgen.sanitize_identifier(text)
    assert out == "" or re.fullmatch(r"[A-Za-z0-9]+(_[A-Za-z0-9]+)*", out)


@SETTINGS
@given(st.one_of(st.text(max_size=60), st.sampled_from(["0", " int ", "9lives", "__"])))
def test_the_suggested_name_is_accepted(text):
    try:
        cgen.check_identifier(text)
    except ExportError as exc:
        suggestion = re.search(r"try '([^']*)'", str(exc))
        if suggestion:
            assert cgen.check_identifier(suggestion.group(1))


@SETTINGS
@given(st.one_of(NAMES, st.text(max_size=50)))
def test_checked_names_are_valid_and_not_reserved(name):
    try:
        ok = cgen.check_identifier(name)
    except ExportError:
        return
    assert IDENT.match(ok) and len(ok) <= cgen.MAX_NAME
    assert ok not in cgen.C_RESERVED and ok.lower() not in cgen.C_RESERVED


@SETTINGS
@given(NAMES, st.lists(HOSTILE, max_size=12))
@example("A" * 40, ["x" * 70, "x" * 70 + "y"])          # found by hypothesis (header test)
def test_macro_names_are_valid_and_distinct_within_63_characters(name, labels):
    assume(_try_check(name))
    names = cgen.macro_names(f"{name.upper()}_F", labels)
    assert len(names) == len(labels)
    assert all(_valid_macro(m) for m in names), names
    assert len({m[:SIGNIFICANT] for m in names}) == len(names), names


def _try_check(name) -> bool:
    try:
        cgen.check_identifier(name)
        return True
    except ExportError:
        return False


def _c_literal_bytes(literal: str) -> bytes:
    """The bytes a C compiler makes of a string literal written by c_string (a small parser)."""
    assert literal[0] == literal[-1] == '"'
    body, out, i = literal[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        assert ch != '"' and ch.isascii() and (ch.isprintable() or ch == " ")
        if ch == "\\":
            nxt = body[i + 1]
            if nxt in "01234567":
                digits = re.match(r"[0-7]{1,3}", body[i + 1:]).group()
                out.append(int(digits, 8))
                i += 1 + len(digits)
                continue
            assert nxt in '"\\?'
            out.append(ord(nxt))
            i += 2
            continue
        out.append(ord(ch))
        i += 1
    return bytes(out)


@SETTINGS
@given(HOSTILE)
def test_string_literals_hold_exactly_the_utf8_text(text):
    literal = cgen.c_string(text)
    assert "??" not in literal                          # no trigraphs
    assert _c_literal_bytes(literal) == text.encode("utf-8")


@SETTINGS
@given(st.one_of(HOSTILE, st.lists(HOSTILE, max_size=3), st.dictionaries(HOSTILE, HOSTILE,
                                                                          max_size=3)))
def test_comments_never_close_or_form_trigraphs(value):
    text = cgen.c_comment(value)
    assert "*/" not in text and "/*" not in text and "??" not in text
    assert text.isascii() and "\n" not in text and "\r" not in text


def _bundle(directory: Path, features, targets):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, len(features)))
    Y = X @ rng.normal(size=(len(features), len(targets))) + rng.normal(size=(30, len(targets)))
    est = GreedyRLS(budget=len(features), lam=1.0).fit(X, Y)
    meta, arrays = bundle_contents(est, X, features, targets, task="regression")
    save_bundle(directory / "b", meta, arrays)
    return load_bundle(directory / "b")


DEFINED = re.compile(r"#define\s+([A-Za-z_0-9]+)|\b(?:static\s+(?:const\s+|inline\s+)*[\w ]+?"
                     r"[\s*]+)([A-Za-z_]\w*)\s*[\[(=]")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
@settings(max_examples=EXPLORE or 12, deadline=None, derandomize=not EXPLORE, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(NAMES, st.lists(HOSTILE, min_size=1, max_size=4), st.lists(HOSTILE, min_size=1,
                                                                   max_size=3),
       st.sampled_from(["float32", "q15", "q31"]))
@example("A" * 40, ["x" * 70, "x" * 70 + "y"], ["t"], "q31")
def test_generated_header_defines_valid_identifiers_and_compiles(name, features, targets,
                                                                 numeric):
    assume(_try_check(name))
    with tempfile.TemporaryDirectory() as d:
        header = c_header(_bundle(Path(d), features, targets), name=name, numeric=numeric)
        defined = [a or b for a, b in DEFINED.findall(header.text)]
        assert defined and all(_valid_macro(n) for n in defined), defined
        assert len({n[:SIGNIFICANT] for n in defined}) == len(set(defined))
        src = Path(d) / "use.c"
        (Path(d) / f"{name}.h").write_text(header.text, encoding="ascii")
        src.write_text(f'#include "{name}.h"\nint {name}_use(void);\n'
                       f"int {name}_use(void) {{ return {name.upper()}_N_TARGETS; }}\n")
        done = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                               "-fsyntax-only", str(src)], capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0, done.stderr[:2000]
