"""Checking the cost parameters of the estimators (the pieces :func:`costs.build_plan` uses).

Resources an extractor needs are sensors or, when their cost entry says so, transforms
(:func:`resources`): both are paid once, when the first extractor needing them is chosen;
only sensors count towards ``max_sensors``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np

from ..errors import TrainerError
from .rate_closure import RATE_KEYS

#: ``ram``: static bytes of the firmware (a channel's ring buffer, a scratch array: shared
#: resources of level "transform"), the budget ``max_ram`` (``train --board``); ``flash``:
#: bytes of code and constant data (an extractor kind's code, a spectrum's tables: shared
#: the same way), the budget ``max_flash``
KINDS = ("price", "energy", "time", "ram", "flash")
#: the memory kinds: in the totals' dicts only when priced or limited (a board's memory model)
MEMORY_KINDS = ("ram", "flash")
#: what a shared resource is (``sensor_costs[name]["level"]``)
LEVELS = ("sensor", "transform")


def cost_vector(value, where: str) -> np.ndarray:
    """A price number, or a {price, energy, time} mapping (absent kinds are 0), checked (a
    resource's mapping may also hold its ``level``, see :func:`resources`, and its place on a
    sensor's rate ladder, ``RATE_KEYS``: :mod:`.rate_closure`)."""
    if isinstance(value, Mapping):
        value = {k: v for k, v in value.items() if k != "level" and k not in RATE_KEYS}
        unknown = sorted(set(value) - set(KINDS))
        if unknown:
            raise TrainerError(f"{where}: unknown cost kind {unknown[0]!r} (kinds: "
                               f"{', '.join(KINDS)})")
        items = [(k, value.get(k, 0.0)) for k in KINDS]
    else:
        items = [("price", value)] + [(k, 0.0) for k in KINDS[1:]]
    out = []
    for kind, v in items:
        if (isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v)
                or v < 0):
            raise TrainerError(f"{where}: {kind}={v!r} must be a finite number >= 0")
        out.append(float(v))
    return np.asarray(out)


def limit(value, name: str):
    if value is None:
        return np.inf
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not math.isfinite(value) or value < 0):
        raise TrainerError(f"{name}={value!r} must be a finite number >= 0 (or None)")
    return float(value)


def structure(n_features: int, extractors, feature_names):
    """(extractor names in order of first appearance, per-feature tuples of extractor ids)."""
    if extractors is None:
        names = [str(f) for f in feature_names]
        return tuple(names), tuple((i,) for i in range(n_features))
    if isinstance(extractors, (str, bytes)) or not hasattr(extractors, "__len__"):
        raise TrainerError(f"extractors must be a sequence of {n_features} names (one per "
                           f"feature column); got {type(extractors).__name__}")
    if len(extractors) != n_features:
        raise TrainerError(f"extractors has {len(extractors)} entries; X has {n_features} "
                           f"feature columns")
    index, needs = {}, []
    for i, entry in enumerate(extractors):
        parts = (entry,) if isinstance(entry, (str, np.str_)) else entry
        if (isinstance(parts, (bytes, Mapping)) or not hasattr(parts, "__iter__")
                or not all(isinstance(p, (str, np.str_)) for p in parts) or not len(parts)):
            raise TrainerError(f"extractors[{i}]={entry!r} must be a name or a non-empty tuple "
                               f"of names")
        needs.append(tuple(dict.fromkeys(index.setdefault(str(p), len(index)) for p in parts)))
    return tuple(index), tuple(needs)


def resources(names, extractor_sensors, sensor_costs) -> tuple:
    """(sensors, transforms) of the plan, each (names, uses (n_ext x n), costs (n x 3)).

    ``extractor_sensors`` lists the shared resources each extractor needs, paid once however
    many chosen extractors need them. A resource is a sensor unless its ``sensor_costs`` entry
    says ``"level": "transform"``: a transform (the FFT of a channel's window, a filter, a
    derivative) is computed once per window when any extractor needing it is chosen, and is
    not counted among the sensors.
    """
    position = {n: i for i, n in enumerate(names)}
    none = ((), np.zeros((len(names), 0), bool), np.zeros((0, len(KINDS))))
    if extractor_sensors is None:
        if sensor_costs is not None:
            raise TrainerError("sensor_costs is given but extractor_sensors is not: say which "
                               "sensors each extractor needs")
        return none, none
    if not isinstance(extractor_sensors, Mapping):
        raise TrainerError("extractor_sensors must be a dict {extractor: [sensor, ...]}")
    sensor_index, pairs = {}, []
    for ext, sensors in extractor_sensors.items():
        if ext not in position:
            raise TrainerError(f"extractor_sensors names {ext!r}, which is not an extractor "
                               f"(extractors: {listing(names)})")
        sensors = [sensors] if isinstance(sensors, str) else sensors
        if not all(isinstance(s, str) for s in sensors):
            raise TrainerError(f"extractor_sensors[{ext!r}]={sensors!r} must be a list of "
                               f"sensor names")
        pairs += [(position[ext], sensor_index.setdefault(s, len(sensor_index))) for s in sensors]
    all_names = tuple(sensor_index)
    uses = np.zeros((len(names), len(all_names)), bool)
    for e, s in pairs:
        uses[e, s] = True
    cost = np.zeros((len(all_names), len(KINDS)))
    level = np.zeros(len(all_names), bool)            # True: a transform
    if sensor_costs is not None:
        cost[list(sensor_index.values())] = cost_rows(
            sensor_costs, list(sensor_index), "sensor_costs", "sensor",
            f"which no extractor uses (sensors in extractor_sensors: {listing(all_names)})")
        for s, i in sensor_index.items():
            kind = sensor_costs[s].get("level", "sensor") if isinstance(
                sensor_costs[s], Mapping) else "sensor"
            if kind not in LEVELS:
                raise TrainerError(f"sensor_costs[{s!r}]: level={kind!r} must be one of "
                                   f"{LEVELS}")
            level[i] = kind == "transform"
    return tuple((tuple(n for n, t in zip(all_names, level) if t == want), uses[:, level == want],
                  cost[level == want]) for want in (False, True))


def listing(names, limit=8) -> str:
    names = list(names)
    more = f", ... ({len(names)} in all)" if len(names) > limit else ""
    return ", ".join(repr(n) for n in names[:limit]) + more


def cost_rows(costs, names, what: str, noun: str, unknown_text: str) -> np.ndarray:
    """(len(names), len(KINDS)) cost vectors of ``costs`` ({name: price or {price, energy,
    time}}, the parameter ``what``), which must name every one of ``names`` and nothing else
    (``unknown_text`` says why an extra name is wrong)."""
    if not isinstance(costs, Mapping):
        raise TrainerError(f"{what} must be a dict {{{noun}: price or {{price, energy, time}}}}")
    unknown = [c for c in costs if c not in set(names)]
    if unknown:
        raise TrainerError(f"{what} names {unknown[0]!r}, {unknown_text}")
    rows = np.zeros((len(names), len(KINDS)))
    for i, name in enumerate(names):
        if name not in costs:
            raise TrainerError(f"{what} has no entry for {noun} {name!r}")
        rows[i] = cost_vector(costs[name], f"{what}[{name!r}]")
    return rows
