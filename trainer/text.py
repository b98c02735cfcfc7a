"""Text written for people and spreadsheets: names shown on a terminal or in a log
(:func:`printable`), and cells of the CSV files the tool writes (:func:`csv_cell`).

Names come from users' files (sensors.toml, table headers, bundles, report folders), so they
may hold what a terminal or a spreadsheet acts on: an escape sequence (``\\x1b]0;title\\x07``
retitles the window, ``\\x1b[2J`` clears it), a bidirectional override that reorders what is
shown, or a formula (``=HYPERLINK(...)``) that a spreadsheet runs when the CSV is opened.
(The command line's :mod:`sensorbudget.text_out` re-exports both.)
"""

from __future__ import annotations

import re

#: C0 controls (but newline and tab), DEL, C1 controls, and the Unicode bidirectional
#: embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069)
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: a spreadsheet reads a cell starting with one of these as a formula (OWASP: CSV injection)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|nan)", re.IGNORECASE)


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text, keep_newlines: bool = True) -> str:
    """``text`` with every control character written as its Python escape (``\\x1b``,
    ``\\u202e``), so that printing it cannot move the cursor, retitle or clear the terminal,
    or reorder what is shown. Newlines are kept (multi-line tables) unless ``keep_newlines`` is
    false; tabs are kept.

    >>> printable("\\x1b]0;owned\\x07b")
    '\\\\x1b]0;owned\\\\x07b'
    >>> printable("a\\nb", keep_newlines=False)
    'a\\\\x0ab'
    """
    text = CONTROL.sub(_escape, str(text))
    return text if keep_newlines else text.replace("\n", "\\x0a")


def brief(kind: str, **fields) -> str:
    """The one-line ``repr`` of a typed object of the API: ``kind(name=value, ...)``, its
    counts and names rather than its arrays, files or reports (which print as megabytes). A
    list longer than three shows its first three and its length; ``None`` fields are left out.

    >>> brief("Bundle", task="regression", selected=["a", "b", "c", "d"], path=None)
    "Bundle(task='regression', selected=['a', 'b', 'c', ... 4 in all])"
    """
    def show(value) -> str:
        if isinstance(value, (list, tuple)) and len(value) > 3:
            return "[" + ", ".join(map(repr, value[:3])) + f", ... {len(value)} in all]"
        return repr(value)

    return kind + "(" + ", ".join(f"{k}={show(v)}" for k, v in fields.items()
                                  if v is not None) + ")"


def csv_cell(text) -> str:
    """One CSV cell that a spreadsheet shows as written: text starting with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return gets a leading apostrophe (the usual rule; the
    spreadsheet then shows it as text and hides the apostrophe). Numbers (``-1.5``, ``+2e3``,
    ``-inf``) are left as they are.

    >>> csv_cell("=HYPERLINK(1)"), csv_cell("-1.5"), csv_cell("co_gt")
    ("'=HYPERLINK(1)", '-1.5', 'co_gt')
    """
    text = str(text)
    if text.startswith(FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text
