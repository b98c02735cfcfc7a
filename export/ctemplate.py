"""The one way the C emitters write C (issue 28 item 6): Jinja2 templates, one environment.

:func:`environment` is the Jinja2 environment of every C template of a package (``export``'s
``templates/`` here, ``firmware_gen``'s through :mod:`sensorbudget.firmware_gen.ctemplate`; it
lives in the lowest C-emitting layer so both can use it): ``StrictUndefined`` (a missing value
is an error, never an empty string), ``keep_trailing_newline``, and ``trim_blocks`` /
``lstrip_blocks`` so a line holding only a ``{% ... %}`` tag leaves no trace in the output. No
autoescaping: the values are C text already made safe by :mod:`sensorbudget.export.cgen`
(identifiers are checked, strings are C literals). A template file holds one macro per routine
(:func:`macro`) or a whole file (:func:`render`).

Lines are short by construction (no rewrap pass afterwards): where a line holds a user's name
and may pass :data:`~sensorbudget.export.cgen.MAX_LINE`, the template marks the blanks where it
may break with ``{{ br }}`` and passes the line through the ``fit`` filter (:func:`fit`), which
keeps it on one line when it fits and otherwise breaks it at those marks only.

Jinja2 (a well-kept engine, also the HTML report's) replaces the ad hoc substitutions
(``str.replace`` of at-sign keys, ``re.sub``, ``str.format`` with doubled braces), which failed
silently on a misspelt key or a brace.
"""

from __future__ import annotations

from functools import lru_cache

from .cgen import MAX_LINE
from .errors import ExportError

PACKAGE = "sensorbudget.export"

#: the mark of a blank where :func:`fit` may break a line (``{{ br }}`` in a template)
BREAK = "\x01"


def fit(text: str, width: int = MAX_LINE) -> str:
    """``text`` (one line of C, its blanks that may break marked :data:`BREAK`) as lines of at
    most ``width`` characters, ending in a newline.

    Each mark is a blank when the line fits; otherwise the pieces between marks are packed
    greedily, continuation lines indented 8 columns deeper than the first (4 and ending in a
    backslash on a preprocessor line). A piece longer than the room stays whole (the template
    puts the marks; test_line_length checks the result for the longest names).
    """
    text = text.rstrip("\n")
    lead = text[:len(text) - len(text.lstrip())]
    pieces = text.strip().split(BREAK)
    macro = pieces[0].startswith("#")
    joined = lead + " ".join(pieces)
    if len(joined) <= width:
        return joined + "\n"
    room = width - (2 if macro else 0)
    indent = lead + " " * (4 if macro else 8)
    lines, line = [], lead + pieces[0]
    for piece in pieces[1:]:
        if len(line) + 1 + len(piece) <= room:
            line += " " + piece
        else:
            lines.append(line)
            line = indent + piece
    lines.append(line)
    return (" \\\n" if macro else "\n").join(lines) + "\n"


@lru_cache(maxsize=None)
def environment(package: str = PACKAGE):
    """The Jinja2 environment of the C templates in ``package``'s ``templates`` folder."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader(package, "templates"),
                      undefined=StrictUndefined, keep_trailing_newline=True,
                      trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters["fit"] = fit
    env.globals["br"] = BREAK
    return env


def render(template: str, package: str = PACKAGE, **values) -> str:
    """The text of the template file ``template`` (``"name.c.j2"``) of ``package``."""
    return environment(package).get_template(template).render(**values)


@lru_cache(maxsize=None)
def _module(package: str, template: str):
    return environment(package).get_template(template).module


def find_macro(package: str, template: str, name: str):
    """Macro ``name`` of ``template`` in ``package``, or None."""
    return getattr(_module(package, template), name, None)


def macro(template: str, name: str, /, *args, **kwargs) -> str:
    """The text of macro ``name`` of ``export``'s template ``template`` called with the
    arguments."""
    routine = find_macro(PACKAGE, template, name)
    if routine is None:
        raise ExportError(f"template {template!r} has no macro {name!r}")
    return str(routine(*args, **kwargs))
