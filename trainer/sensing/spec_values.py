"""The values of a ``sensors.toml`` (:mod:`.sensors`): checked numbers and key sets, and the
``[[calibration]]`` entries that ``sensorbudget calibrate`` writes. Every check raises a
:class:`DataError` naming the entry, the key, the value and the limit."""

from __future__ import annotations

import math

from ..errors import DataError

#: Largest price, energy, power, time or rate read (given or derived: power_w x read_time_s,
#: 1 / sample_period_s): the budgets add them over sensors and multiply them by the readings of
#: a window (< 2^31), and those sums and products must stay finite (1e100 x 2^31 x 1e6 sensors
#: is about 1e115, far below the float64 limit 1.8e308).
MAX_QUANTITY = 1e100
_CALIBRATION_KEYS = {"extractor", "target", "compute_instructions", "compute_cycles",
                     "compute_nanoseconds", "compute_time_s", "compute_energy_j", "method",
                     "source", "measured"}


def where_in(source: str, what: str) -> str:
    return f"{source}: {what}"


def check_keys(table, allowed: set, where: str) -> None:
    if not isinstance(table, dict):
        raise DataError(f"{where} must be a table")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise DataError(f"{where}: unknown key {unknown[0]!r} "
                        f"(allowed: {', '.join(sorted(allowed))})")


def number(table: dict, key: str, where: str, positive=False):
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DataError(f"{where}: {key}={value!r} must be a finite number")
    if value < 0 or (positive and value == 0):
        raise DataError(f"{where}: {key}={value!r} must be {'> 0' if positive else '>= 0'}")
    return bounded(float(value), key, where)


def bounded(value: float, what: str, where: str) -> float:
    """``value`` when it is at most :data:`MAX_QUANTITY`, else a :class:`DataError`."""
    if not value <= MAX_QUANTITY:
        raise DataError(f"{where}: {what}={value:g} exceeds {MAX_QUANTITY:g}: sums and "
                        f"products of such costs overflow")
    return value


def parse_calibration(raw, feature_names: set, source: str) -> tuple:
    """Validated ``[[calibration]]`` entries: known extractor, a target name, costs >= 0."""
    if not isinstance(raw, list):
        raise DataError(f"{source}: calibration must be an array of tables ([[calibration]])")
    entries = []
    for i, table in enumerate(raw):
        where = where_in(source, f"[[calibration]] #{i + 1}")
        check_keys(table, _CALIBRATION_KEYS, where)
        name, target = table.get("extractor"), table.get("target")
        if not isinstance(name, str) or name not in feature_names:
            raise DataError(f"{where}: extractor={name!r:.80} is not a feature or transform of "
                            f"this file")
        if not isinstance(target, str) or not target:
            raise DataError(f"{where}: target={target!r:.80} must name the compute target")
        entry = {"extractor": name, "target": target}
        if not isinstance(table.get("measured", True), bool):
            raise DataError(f"{where}: measured={table['measured']!r:.80} must be true or false")
        for key in ("method", "source"):
            if not isinstance(table.get(key, ""), str):
                raise DataError(f"{where}: {key}={table[key]!r:.80} must be a string")
        for key in ("compute_instructions", "compute_cycles", "compute_nanoseconds",
                    "compute_time_s", "compute_energy_j"):
            value = number(table, key, where)
            if value is not None:
                entry[key] = value
        entries.append(entry)
    return tuple(entries)
