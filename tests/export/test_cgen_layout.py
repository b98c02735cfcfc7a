"""export.cgen's layout of generated C (issue 28 item 6: lines short by construction, no rewrap
pass): ``fit`` over several lines is ``fit_line`` of each, ``line_comment`` keeps a comment's
words within the limit whatever their length, a trailing comment too long for its own line is
wrapped, and the old rewrap module is gone (nothing imports it)."""

import ast
import importlib.util
import random
import re
from pathlib import Path

from sensorbudget.export.cgen import (
    BREAK,
    JOIN,
    MAX_LINE,
    NOTE,
    array_declare,
    block_comment,
    fit,
    fit_line,
    line_comment,
)

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("export", "firmware_gen", "device_sim", "trainer", "sensorbudget", "tests",
            "benchmarks", "examples")


def _words(text: str) -> str:
    """The comment's text without its delimiters, blanks and line layout."""
    return re.sub(r"^\s*\*(?!/)|\s|/\*|\*/", "", text, flags=re.M)


def test_fit_of_several_lines_is_fit_line_of_each():
    rng = random.Random(6)
    for _ in range(300):
        lines = []
        for _ in range(rng.randint(1, 6)):
            lead = " " * rng.choice([0, 4, 8])
            pieces = ["".join(rng.choice("xy_(*),=") for _ in range(rng.randint(0, 30)))
                      for _ in range(rng.randint(1, 7))]
            marks = [rng.choice([BREAK, JOIN]) for _ in pieces[1:]]
            lines.append(lead + pieces[0] + "".join(m + p for m, p in zip(marks, pieces[1:])))
        text = "\n".join(lines) + rng.choice(["", "\n"])
        assert fit(text) == "".join(fit_line(line) for line in lines)


def test_an_unmarked_line_passes_unchanged_whatever_its_length():
    text = "int a;\n\n" + "    x" * 40 + "\n#define A 1\n"
    assert fit(text) == text


def test_line_comment_keeps_every_word_within_the_limit():
    rng = random.Random(28)
    for _ in range(300):
        lead = " " * rng.choice([0, 4, 8, 12])
        words = ["".join(rng.choice('ab_"\\') for _ in range(rng.choice([1, 5, 30, 150])))
                 for _ in range(rng.randint(1, 12))]
        text = " ".join(words)
        out = line_comment(text, lead)
        lines = out[:-1].split("\n")
        assert out.endswith("\n") and all(len(line) <= MAX_LINE for line in lines)
        assert all(line.startswith(lead) for line in lines)
        assert _words(out) == text.replace(" ", "")
        one = f"{lead}/* {text} */"
        assert (lines == [one]) == (len(one) <= MAX_LINE)


def test_a_trailing_comment_too_long_for_its_own_line_is_wrapped_above_the_code():
    name = '"' + "leg_horiz_fwd_" * 12 + '"'
    note = f"  /* {name} */  /* full scale 64 */"
    text = fit(f"#define SB_CH_LEG 3u{NOTE}{note}")
    lines = text.splitlines()
    assert all(len(line) <= MAX_LINE for line in lines) and lines[-1] == "#define SB_CH_LEG 3u"
    assert _words("\n".join(lines[:-1])) == _words(note)
    short = f"#define SB_CH_LEG 3u{NOTE}  /* {'x' * 60} */  /* full scale 64 */"
    assert fit(short).splitlines() == [f"/* {'x' * 60} */  /* full scale 64 */",
                                       "#define SB_CH_LEG 3u"]


def test_comments_of_long_words_stay_within_the_limit():
    long = "c" * 240
    block = block_comment([f"  [0] {long} -> model input 0"])
    assert all(len(line) <= MAX_LINE for line in block.splitlines())
    assert _words(block) == f"[0]{long}->modelinput0"
    decl = array_declare("float", "sb_w", [1.0, 2.0], row_comments=[long, "b"])
    assert all(len(line) <= MAX_LINE for line in decl.splitlines())
    assert decl.count("1.0f") == 1 and decl.count("2.0f") == 1 and long[:90] in decl


def test_no_module_imports_the_old_rewrap_pass():
    assert importlib.util.find_spec("sensorbudget.export.c_wrap") is None
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if ".venv" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module or "", *(a.name for a in node.names)]
                         if isinstance(node, ast.ImportFrom) else [])
                if any(re.search(r"\bc_wrap\b|\bwrap_call\b", n) for n in names):
                    found.append(path.relative_to(ROOT).as_posix())
    assert found == []
    assert not (ROOT / "export" / "c_wrap.py").exists()
