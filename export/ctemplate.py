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
may break with ``{{ br }}`` (a blank when the line is not broken; ``{{ join }}``: nothing) and
passes the line through the ``fit`` filter (:func:`sensorbudget.export.cgen.fit`), which keeps
it on one line when it fits and otherwise breaks it at those marks only. The filter fits each
line of its block on its own (a line without marks stays as it is), so a routine's macro may
pass its whole body through one ``{% filter fit %}`` and mark only its long lines; a trailing
comment after ``{{ note }}`` moves above the code when the line does not fit.

Jinja2 (a well-kept engine, also the HTML report's) replaces the ad hoc substitutions
(``str.replace`` of at-sign keys, ``re.sub``, ``str.format`` with doubled braces), which failed
silently on a misspelt key or a brace.
"""

from __future__ import annotations

from functools import lru_cache

from .cgen import BREAK, JOIN, NOTE, fit
from .errors import ExportError

PACKAGE = "sensorbudget.export"


@lru_cache(maxsize=None)
def environment(package: str = PACKAGE):
    """The Jinja2 environment of the C templates in ``package``'s ``templates`` folder."""
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    # C, not HTML: nothing is escaped (HTML-escaping would corrupt `&`, `<` in the code); an
    # .html template here would be escaped, which no C template is
    env = Environment(loader=PackageLoader(package, "templates"),
                      undefined=StrictUndefined, keep_trailing_newline=True,
                      trim_blocks=True, lstrip_blocks=True,
                      autoescape=select_autoescape(("html", "htm", "xml"), default=False,
                                                   default_for_string=False))
    env.filters["fit"] = fit
    env.globals["br"] = BREAK
    env.globals["join"] = JOIN
    env.globals["note"] = NOTE
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
