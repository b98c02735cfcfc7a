"""Types of the ``report.json`` fields that ``compare`` and ``calibrate`` read.

:func:`check_report` runs when a report is loaded (:func:`sensorbudget.device_sim.report.load_report`), so a
damaged or hand-edited report gives one :class:`~sensorbudget.device_sim.errors.DeviceError` naming the field
and its value instead of a ``KeyError`` or ``TypeError`` deep inside a command.
"""

from __future__ import annotations

import math

from .errors import DeviceError

UNITS = ("instructions", "cycles", "nanoseconds")
TEXT = "a string without control characters"


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _text(v) -> bool:
    """A string without control characters (it may end up in a TOML file or a table)."""
    return isinstance(v, str) and not any(ord(c) < 32 or ord(c) == 127 for c in v)


def _names(v) -> bool:
    return isinstance(v, list) and all(_text(x) for x in v)


def _stats(v) -> bool:
    """A min/median/max section (or null when there are no values)."""
    return v is None or (isinstance(v, dict) and all(
        v.get(k) is None or _number(v[k]) for k in ("min", "median", "max")))


def _costs_by_name(v) -> bool:
    return v is None or (isinstance(v, dict) and all(
        _text(k) and _number(x) and x >= 0 for k, x in v.items()))


def _optional(check):
    return lambda v: v is None or check(v)


def _per_sensor(v) -> bool:
    """{sensor name: {"energy_j": number or null, ...}} (or null)."""
    return v is None or (isinstance(v, dict) and all(
        _text(k) and isinstance(x, dict) and _optional(_number)(x.get("energy_j"))
        for k, x in v.items()))


# dotted field -> (check, what it must be); a missing field counts as null
FIELDS = {
    "backend": (_text, TEXT),
    "numeric": (_optional(_text), TEXT),
    "bundle": (lambda v: isinstance(v, dict), "an object"),
    "bundle.selected": (_names, "a list of strings without control characters"),
    "bundle.required_sensors": (_optional(_names), "a list of strings without control "
                                                   "characters"),
    "bundle.price": (_optional(_number), "a number"),
    "predictions": (_optional(_count), "a count"),
    "mismatches": (_optional(_count), "a count"),
    "lost": (_optional(_count), "a count"),
    "loo_mse": (_optional(_number), "a number"),
    "accuracy": (_optional(lambda v: isinstance(v, dict) and all(
        x is None or isinstance(x, dict) for x in v.values())), "an object of objects"),
    "cost": (lambda v: isinstance(v, dict), "an object"),
    "cost.unit": (lambda v: v in UNITS, f"one of {', '.join(UNITS)}"),
    "cost.measured": (lambda v: isinstance(v, bool), "true or false"),
    "cost.extractors": (_stats, "an object with min/median/max numbers"),
    "cost.model": (_stats, "an object with min/median/max numbers"),
    "cost.pushes": (_stats, "an object with min/median/max numbers"),
    "cost.total": (_stats, "an object with min/median/max numbers"),
    "cost.first_window": (_stats, "an object with min/median/max numbers"),
    "cost.pushes_note": (_optional(_text), TEXT),
    "cost.per_channel_push": (_costs_by_name, "an object of names to numbers >= 0"),
    "cost.per_extractor_push": (_costs_by_name, "an object of names to numbers >= 0"),
    "cost.per_extractor": (_costs_by_name, "an object of names to numbers >= 0"),
    "cost.per_transform": (_costs_by_name, "an object of names to numbers >= 0"),
    "cost.per_extractor_measured": (_optional(lambda v: isinstance(v, bool)), "true or false"),
    "cost.method": (_optional(_text), TEXT),
    "cost.per_extractor_method": (_optional(_text), TEXT),
    "energy": (lambda v: isinstance(v, dict), "an object"),
    "energy.energy_per_prediction_j": (lambda v: isinstance(v, dict), "an object"),
    "energy.energy_per_prediction_j.sensors": (lambda v: _number(v) and v >= 0,
                                               "a number >= 0"),
    "energy.energy_per_prediction_j.compute": (lambda v: _number(v) and v >= 0,
                                               "a number >= 0"),
    "energy.latency_s": (_stats, "an object with min/median/max numbers"),
    "energy.deadline_misses": (_count, "a count"),
    "energy.average_power_w": (lambda v: _number(v) and v >= 0, "a number >= 0"),
    "energy.battery_life_days": (_optional(lambda v: isinstance(v, (int, float)) and v >= 0
                                           and not isinstance(v, bool)), "a number >= 0"),
    "profile": (lambda v: isinstance(v, dict), "an object"),
    "profile.name": (_text, TEXT),
    "sensors": (_optional(lambda v: isinstance(v, dict)), "an object"),
    "sensors.energy_j": (_optional(_number), "a number"),
    "sensors.per_sensor": (_per_sensor, "an object of sensor names to objects with energy_j"),
    "stack": (_optional(lambda v: isinstance(v, dict)), "an object"),
    "stack.high_water_bytes": (_optional(_count), "a count"),
    "stack.reserve_bytes": (_optional(_count), "a count"),
}


def _get(data: dict, dotted: str):
    value = data
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def check_report(data: dict, source: str) -> None:
    """Raise :class:`DeviceError` for the first field of :data:`FIELDS` of the wrong type
    (parents are checked before their children)."""
    for field, (check, what) in FIELDS.items():
        value = _get(data, field)
        if not check(value):
            shown = repr(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise DeviceError(f"{source}: {field}={shown} must be {what}")
