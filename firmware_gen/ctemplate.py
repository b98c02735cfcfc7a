"""The one way the emitters write C (issue 28 item 6): Jinja2 templates in ``templates/*.c.j2``.

:func:`environment` is the single Jinja2 environment of every C template: ``StrictUndefined``
(a missing value is an error, never an empty string), ``keep_trailing_newline``, and
``trim_blocks`` / ``lstrip_blocks`` so a line holding only a ``{% ... %}`` tag leaves no trace
in the output. No autoescaping: the values are C text already made safe by
:mod:`sensorbudget.export.cgen` (identifiers are checked, strings are C literals). A template
file holds one macro per routine; :func:`macro` renders one of them with its arguments.
Jinja2 (a well-kept engine, also the HTML report's) replaces the ad hoc placeholder
substitutions (``str.replace`` of at-sign keys), which failed silently on a misspelt key.
"""

from __future__ import annotations

from functools import lru_cache

from .errors import FirmwareGenError


@lru_cache(maxsize=1)
def environment():
    """The Jinja2 environment of the C templates (package folder ``templates``)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(loader=PackageLoader("sensorbudget.firmware_gen", "templates"),
                       undefined=StrictUndefined, keep_trailing_newline=True,
                       trim_blocks=True, lstrip_blocks=True, autoescape=False)


def render(template: str, **values) -> str:
    """The text of the template file ``template`` (``"name.c.j2"``) with ``values``."""
    return environment().get_template(template).render(**values)


@lru_cache(maxsize=None)
def _module(template: str):
    return environment().get_template(template).module


def macro(template: str, name: str, *args) -> str:
    """The text of macro ``name`` of the template file ``template`` called with ``args``."""
    routine = getattr(_module(template), name, None)
    if routine is None:
        raise FirmwareGenError(f"template {template!r} has no macro {name!r}")
    return str(routine(*args))
