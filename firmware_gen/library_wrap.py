"""Lines of the C library's build files (CMake, make, Kconfig, Zephyr, README) kept within
:data:`sensorbudget.export.cgen.MAX_LINE` for any name (its C files' lines are short by
construction: :func:`sensorbudget.export.cgen.fit`).
"""

from __future__ import annotations

import textwrap

from sensorbudget.export.cgen import MAX_LINE


def wrap_text(text: str, width: int = MAX_LINE, prefixes=("# ", "- ", "\t  ")) -> str:
    """Long lines of a build file or README broken at blanks: a line starting with one of
    ``prefixes`` (after its indentation) continues with that prefix's indentation ("# " stays a
    comment); other lines continue unindented (Markdown prose)."""
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        lead = line[:len(line) - len(line.lstrip(" "))]
        body = line[len(lead):]
        first = next((p for p in prefixes if body.startswith(p)), "")
        if first == "# ":
            first = body[:len(body) - len(body[1:].lstrip(" ")) ]
        follow = (first + "    " if first.startswith("#") else first if first == "\t  "
                  else " " * len(first))
        out += textwrap.wrap(body[len(first):], width, initial_indent=lead + first, subsequent_indent=lead + follow,
                             break_long_words=False, break_on_hyphens=False, expand_tabs=False,
                             replace_whitespace=False)
    return "\n".join(out)
