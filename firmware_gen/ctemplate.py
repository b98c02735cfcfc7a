"""firmware_gen's C templates (``templates/*.j2``) through the one Jinja2 environment of
:mod:`sensorbudget.export.ctemplate` (issue 28 item 6: StrictUndefined, keep_trailing_newline,
trim_blocks / lstrip_blocks, no autoescaping). A template file holds one macro per routine
(:func:`macro`) or a whole file (:func:`render`)."""

from __future__ import annotations

from sensorbudget.export import ctemplate as _base

from .errors import FirmwareGenError

PACKAGE = "sensorbudget.firmware_gen"


def environment():
    """The Jinja2 environment of firmware_gen's templates."""
    return _base.environment(PACKAGE)


def render(template: str, **values) -> str:
    """The text of the template file ``template`` (``"name.c.j2"``) with ``values``."""
    return _base.render(template, PACKAGE, **values)


def macro(template: str, name: str, /, *args, **kwargs) -> str:
    """The text of macro ``name`` of the template file ``template`` called with the arguments."""
    routine = _base.find_macro(PACKAGE, template, name)
    if routine is None:
        raise FirmwareGenError(f"template {template!r} has no macro {name!r}")
    return str(routine(*args, **kwargs))
