"""Text the command line writes for people and spreadsheets: names shown on a terminal or in a
log (:func:`printable`), and cells of the CSV files it writes (:func:`csv_cell`).

Names come from users' files (sensors.toml, table headers, bundles, report folders), so they
may hold what a terminal or a spreadsheet acts on: an escape sequence (``\\x1b]0;title\\x07``
retitles the window, ``\\x1b[2J`` clears it), a bidirectional override that reorders what is
shown, or a formula (``=HYPERLINK(...)``) that a spreadsheet runs when the CSV is opened.
"""

from __future__ import annotations

from sensorbudget.trainer.text import CONTROL, FORMULA_START, csv_cell, printable

__all__ = ["CONTROL", "FORMULA_START", "PrintableStream", "csv_cell", "printable"]


class PrintableStream:
    """A text stream whose writes go through :func:`printable`: the command line's standard
    output (:func:`sensorbudget.entry.main`), so that every line it prints (``wrote PATH``, a
    table, a device's answer) shows a name's control characters escaped, whichever module
    printed it. Newlines and tabs pass; anything else (``buffer`` for bytes, ``isatty``,
    ``flush``) is the wrapped stream's. Escaping is idempotent: escaped text has no control
    characters left."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text) -> int:
        if not isinstance(text, str):       # as a text stream does (click probes with b"")
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._stream.write(printable(text))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._stream, name)
