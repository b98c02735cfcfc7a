"""The values of a ``sensors.toml`` (:mod:`.sensors`): checked numbers and key sets, and the
``[[calibration]]`` entries that ``sensorbudget calibrate`` writes, a sensor's ``rates_hz``
with its cost per rate, and the window in seconds of a multi-rate file. Every check raises a
:class:`DataError` naming the entry, the key, the value and the limit."""

from __future__ import annotations

import math
from dataclasses import replace

from ..errors import DataError
from .specs import parse_spec

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


def parse_rates(table: dict, recorded: float, energy, power, where: str) -> tuple:
    """((rate, energy per reading), ...) ascending from ``rates_hz`` and its cost list, or ()."""
    listed = table.get("rates_hz")
    by_energy, by_current = (table.get("energy_per_reading_j_by_rate"),
                             table.get("current_a_by_rate"))
    if listed is None:
        extra = next((k for k in ("energy_per_reading_j_by_rate", "current_a_by_rate",
                                  "supply_v") if k in table), None)
        if extra:
            raise DataError(f"{where}: {extra} needs rates_hz")
        return ()
    if not isinstance(listed, list) or not listed:
        raise DataError(f"{where}: rates_hz must be a non-empty list of rates in Hz")
    rates = [number({"rates_hz": v}, "rates_hz", where, positive=True) for v in listed]
    if len(set(rates)) != len(rates):
        raise DataError(f"{where}: rates_hz lists a rate twice ({listed!r})")
    for r in rates:
        factor = recorded / r
        if abs(factor - round(factor)) > 1e-9 * factor or round(factor) < 1:
            raise DataError(f"{where}: rate {r:g} Hz in rates_hz does not divide the recorded "
                            f"sample_rate_hz={recorded:g} (decimation keeps every n-th sample: "
                            f"{recorded:g} / {r:g} = {factor:g} is not a whole number >= 1)")
    if (by_energy is None) == (by_current is None):
        raise DataError(f"{where}: with rates_hz give exactly one of "
                        f"energy_per_reading_j_by_rate and current_a_by_rate (+ supply_v)")
    if energy is not None or power is not None:
        raise DataError(f"{where}: with rates_hz the cost per rate replaces "
                        f"energy_per_reading_j / power_w")
    key = "energy_per_reading_j_by_rate" if by_energy is not None else "current_a_by_rate"
    values = by_energy if by_energy is not None else by_current
    if not isinstance(values, list) or len(values) != len(rates):
        raise DataError(f"{where}: {key} must list one number per rate in rates_hz "
                        f"({len(rates)}; got {values!r:.80})")
    values = [number({key: v}, key, where) for v in values]
    if by_current is not None:
        volts = number(table, "supply_v", where, positive=True)
        if volts is None:
            raise DataError(f"{where}: current_a_by_rate needs supply_v (V)")
        values = [bounded(i * volts / r, "current x supply_v / rate", where)
                  for i, r in zip(values, rates)]
    elif "supply_v" in table:
        raise DataError(f"{where}: supply_v is only for current_a_by_rate")
    return tuple(sorted(zip(rates, values)))


def with_seconds(spec, window: dict, where: str, max_window: int):
    """A multi-rate spec: the window and hop in seconds, a whole number of samples at every
    rate a feature is computed at (each sensor's window ends at the same instant)."""
    if "length_s" not in window or "length" in window or "hop" in window:
        raise DataError(f"{where}: sensors at several rates need length_s and hop_s (seconds), "
                        f"not length/hop in samples")
    window_s = number(window, "length_s", where, positive=True)
    hop_s = number(window, "hop_s", where, positive=True) or window_s
    by_name = {s.name: s for s in spec.sensors}
    for f in spec.features:
        rate = f.rate or by_name[f.sensors[0]].sample_rate_hz
        for key, seconds in (("length_s", window_s), ("hop_s", hop_s)):
            count = seconds * rate
            if abs(count - round(count)) > 1e-6 * max(1.0, count) or round(count) < 1:
                raise DataError(f"{where}: {key}={seconds:g} s is not a whole number of samples "
                                f"at {rate:g} Hz ({count:g}; feature {f.name!r})")
        if round(window_s * rate) > max_window or round(hop_s * rate) > max_window:
            raise DataError(f"{where}: length_s={window_s:g} s and hop_s={hop_s:g} s at "
                            f"{rate:g} Hz exceed {max_window} samples")
        need = parse_spec(f.kind).min_window
        if round(window_s * rate) < need:
            raise DataError(f"feature {f.name!r}: extractor {f.kind!r} needs window >= {need} "
                            f"samples ({round(window_s * rate)} at {rate:g} Hz)")
    return replace(spec, window_s=window_s, hop_s=hop_s)
