"""The consistency checks of a feature table (:class:`~sensorbudget.trainer.sensing.feature_set.FeatureSet`)
read back from an NPZ: every member a later command uses is of the right kind and range, so a
damaged or hand-edited file gives one :class:`DataError` naming the member, never a traceback
in ``train``, ``evaluate`` or ``predict``."""

from __future__ import annotations

import math

import numpy as np

from ..bundle.model import TASKS
from ..errors import DataError
from .sensors import MAX_WINDOW
from .spec_values import MAX_QUANTITY
from .specs import parse_spec

#: sensors_json entries: numbers every consumer reads (the cost models, the bundle)
SENSOR_NUMBERS = ("unit_price", "energy_per_reading_j", "sample_rate_hz")
#: compute_costs_json: {extractor: {"energy": J, "time": s}} per prediction
COMPUTE_KEYS = ("energy", "time")


def _quantity(value) -> bool:
    """A number (not a bool) in 0..MAX_QUANTITY."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and 0 <= value <= MAX_QUANTITY)


def _rate(value) -> bool:
    """A sample rate in 1/MAX_QUANTITY..MAX_QUANTITY Hz (window / rate stays finite)."""
    return _quantity(value) and value >= 1 / MAX_QUANTITY


def check_arrays(fs, source: str) -> None:
    """Finite X (Y may hold NaN: missing targets), one row per window everywhere, one name per
    column and no name twice."""
    X, Y = np.asarray(fs.X), np.asarray(fs.Y)
    if X.ndim != 2 or Y.ndim != 2:
        raise DataError(f"{source}: X and Y must be 2-D (got {X.shape} and {Y.shape})")
    n = X.shape[0]
    if Y.shape[1] == 0 or X.shape[1] == 0:
        raise DataError(f"{source}: {'Y' if Y.shape[1] == 0 else 'X'} has no columns")
    for name in ("Y", "groups", "window_start"):
        rows = len(np.asarray(getattr(fs, name)))
        if rows != n:
            raise DataError(f"{source}: {name} has {rows} rows; X has {n}")
    bad = ~np.isfinite(X)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise DataError(f"{source}: X holds {X[r, c]} at window {r}, feature {c}; feature "
                        f"values must be finite")
    if np.isinf(Y).any():
        raise DataError(f"{source}: Y holds an infinite value (NaN marks a missing target)")
    for name, count in (("feature_names", X.shape[1]), ("target_names", Y.shape[1]),
                        ("feature_extractors", X.shape[1]), ("feature_sensors", X.shape[1]),
                        ("feature_kinds", X.shape[1]), ("feature_channels", X.shape[1])):
        entries = getattr(fs, name)
        if len(entries) != count:
            raise DataError(f"{source}: {name} has {len(entries)} entries; expected {count}")
        if name in ("feature_names", "target_names") and len(set(entries)) != len(entries):
            twice = next(e for i, e in enumerate(entries) if e in entries[:i])
            raise DataError(f"{source}: {name} holds {twice!r} twice")


def check_structure(fs, source: str) -> None:
    """Window and hop in 1..MAX_WINDOW samples, a finite sample rate > 0, a known task and
    known kinds, sensors a list of objects with a name, channels and the cost numbers, compute
    costs an object of {"energy", "time"} numbers."""
    for name in ("window", "hop"):
        value = getattr(fs, name)
        if not 1 <= value <= MAX_WINDOW:
            raise DataError(f"{source}: {name}={value} must be in 1..{MAX_WINDOW} samples")
    if not _rate(fs.sample_rate):
        raise DataError(f"{source}: sample_rate={fs.sample_rate:g} must be a number of Hz in "
                        f"{1 / MAX_QUANTITY:g}..{MAX_QUANTITY:g}")
    if fs.task not in TASKS:
        raise DataError(f"{source}: task={fs.task!r} is not one of {TASKS}")
    for kind in sorted(set(fs.feature_kinds)):
        parse_spec(kind, f"{source}: unknown feature kind {kind!r}: ")
    if not isinstance(fs.sensors, list):
        raise DataError(f"{source}: sensors_json must be a list of sensor objects")
    for i, entry in enumerate(fs.sensors):
        if not (isinstance(entry, dict) and isinstance(entry.get("name"), str)
                and isinstance(entry.get("channels"), list)
                and all(isinstance(c, str) for c in entry["channels"])):
            raise DataError(f"{source}: sensors_json entry {i} must be an object with a name "
                            f"and a list of channel names")
        for key in SENSOR_NUMBERS:
            if not (_rate if key == "sample_rate_hz" else _quantity)(entry.get(key)):
                low = 1 / MAX_QUANTITY if key == "sample_rate_hz" else 0
                raise DataError(f"{source}: sensors_json sensor {entry['name']!r}: "
                                f"{key}={entry.get(key)!r} must be a number in "
                                f"{low:g}..{MAX_QUANTITY:g}")
    if not isinstance(fs.compute_costs, dict):
        raise DataError(f"{source}: compute_costs_json must be a JSON object")
    for name, cost in fs.compute_costs.items():
        if not (isinstance(cost, dict) and set(cost) <= set(COMPUTE_KEYS)
                and all(_quantity(v) for v in cost.values())):
            raise DataError(f"{source}: compute_costs_json[{name!r}]={cost!r:.60} must be an "
                            f"object of energy and time numbers in 0..{MAX_QUANTITY:g}")
    check_rates(fs, source)


def check_rates(fs, source: str) -> None:
    """A multi-rate table's ``feature_rates``: one rate per feature, each a rate in Hz whose
    window and hop are whole numbers of samples, at most ``sample_rate``; a sensor's
    ``rates_hz`` with one energy per rate, ascending."""
    rates = fs.feature_rates
    if not rates:
        return
    if len(rates) != len(fs.feature_names):
        raise DataError(f"{source}: feature_rates has {len(rates)} entries; expected "
                        f"{len(fs.feature_names)}")
    for name, rate in zip(fs.feature_names, rates):
        ok = _rate(rate) and rate <= fs.sample_rate * (1 + 1e-12)
        whole = ok and all(abs(n * rate / fs.sample_rate - round(n * rate / fs.sample_rate))
                           <= 1e-6 * max(1.0, n) for n in (fs.window, fs.hop))
        if not whole:
            raise DataError(f"{source}: feature_rates gives {name!r} {rate!r} Hz; it must be at "
                            f"most sample_rate={fs.sample_rate:g} Hz with whole window and hop")
    for entry in fs.sensors:
        listed, energy = entry.get("rates_hz"), entry.get("energy_per_reading_j_by_rate")
        if listed is None and energy is None:
            continue
        if not (isinstance(listed, list) and isinstance(energy, list) and listed
                and len(listed) == len(energy) and all(_rate(r) for r in listed)
                and all(_quantity(e) for e in energy) and listed == sorted(set(listed))):
            raise DataError(f"{source}: sensors_json sensor {entry['name']!r}: rates_hz and "
                            f"energy_per_reading_j_by_rate must be ascending rates with one "
                            f"energy each")
