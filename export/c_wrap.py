"""Generated C kept within :data:`~sensorbudget.export.cgen.MAX_LINE` columns whatever the names' lengths.

Names repeat the user's prefix (``<name>_model_...``) several times a line, so a long name pushes
declarations, signatures and comments past the limit. :func:`wrap_c` rewraps only the lines that
are too long, without changing what the compiler sees:

- a trailing ``/* comment */`` moves to its own line above the code;
- a one-line comment becomes ``/* ...`` / `` * ...`` / `` */``-style lines, broken at blanks;
- a `` * `` line of a block comment breaks at blanks, continued 4 columns deeper;
- code breaks after a separator (``, `` ``&& `` ``|| `` ``? `` ``: `` ``> `` ``= `` or an
  opening parenthesis or bracket; else at the last blank), continued 8 columns deeper; a
  preprocessor line continues with a backslash. Lines holding a string literal are left alone
  (the generators split their literals themselves: :func:`sensorbudget.export.cgen.wrap_literal`).

Being replaced by lines short by construction (issue 28 item 6: marks where a line may break,
:func:`sensorbudget.export.cgen.fit`): the model header, main.c, the kernel and stream headers,
the C library's API and Arduino example no longer go through it; still rewrapped here: the
stream source only (:func:`sensorbudget.firmware_gen.extractors_c.stream_source`).
"""

from __future__ import annotations

import textwrap

from .cgen import MAX_LINE

_SEPARATORS = (", ", " && ", " || ", " ? ", " : ", " > ", " = ", "(", "[")


def _comment(lead: str, body: str, width: int) -> list:
    """``/* body */`` at indentation ``lead`` as lines of at most ``width`` characters."""
    lines = textwrap.wrap(body, width - len(lead) - 3, break_long_words=False,
                          break_on_hyphens=False) or [""]
    out = [f"{lead}/* {lines[0]}"] + [f"{lead} * {line}" for line in lines[1:]]
    if len(out[-1]) + 3 <= width:
        out[-1] += " */"
    else:
        out.append(f"{lead} */")
    return out


def _break_at(code: str, limit: int) -> int:
    """Index just after the last separator ending at or before ``limit`` (0: none)."""
    best = 0
    for sep in _SEPARATORS:
        stop = limit
        while True:
            i = code.rfind(sep, 0, stop)
            if i <= 0:
                break
            end = i + len(sep.rstrip()) if sep not in "([" else i + 1
            if end <= limit and code[:end].strip():
                best = max(best, end)
                break
            stop = i
    return best


def _code(line: str, width: int) -> list:
    lead = line[:len(line) - len(line.lstrip())]
    macro = line.lstrip().startswith("#")
    room = width - (2 if macro else 0)
    out, rest, indent = [], line, lead
    while len(rest) > room:
        cut = _break_at(rest, room)
        if cut <= len(indent):                      # last resort: the last blank
            cut = rest.rfind(" ", len(indent) + 1, room + 1)
        if cut <= len(indent):
            break
        out.append(rest[:cut].rstrip() + (" \\" if macro else ""))
        indent = lead + " " * 8
        rest = indent + rest[cut:].lstrip()
    return out + [rest]


def wrap_c_line(line: str, width: int = MAX_LINE) -> list:
    """``line`` as one or more lines of at most ``width`` characters (module notes)."""
    if len(line) <= width or '"' in line:
        return [line]
    lead = line[:len(line) - len(line.lstrip())]
    stripped = line.strip()
    if stripped.startswith("/*") and stripped.endswith("*/") and stripped.count("*/") == 1:
        return _comment(lead, stripped[2:-2].strip(), width)
    at = line.find("/*")
    if at > 0 and line.rstrip().endswith("*/") and not line.lstrip().startswith("*"):
        code, note = line[:at].rstrip(), line[at + 2:].rstrip()[:-2].strip()
        return _comment(lead, note, width) + wrap_c_line(code, width)
    closes = stripped.endswith("*/") and stripped.count("*/") == 1
    if stripped.startswith("* ") and ("*/" not in stripped or closes):
        body = stripped[2:-2].rstrip() if closes else stripped[2:]
        out = textwrap.wrap(body, width - (3 if closes else 0), initial_indent=lead + "* ",
                            subsequent_indent=lead + "*     ", break_long_words=False,
                            break_on_hyphens=False)
        return out[:-1] + [out[-1] + " */"] if closes else out
    if stripped.startswith("*") or stripped.startswith("//"):
        return [line]
    return _code(line, width)


def wrap_c(text: str, width: int = MAX_LINE) -> str:
    """``text`` with every line longer than ``width`` rewrapped (:func:`wrap_c_line`)."""
    lines = [part for line in text.split("\n") for part in wrap_c_line(line, width)]
    return "\n".join(lines)
