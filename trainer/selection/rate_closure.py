"""A sensor with ``rates_hz`` priced at the rate the device reads it (the plan's rate closure).

A sensor recorded at ``r`` Hz with listed rates ``q_0 < ... < q_k`` (each ``q_j = r / m_j``,
``m_j`` whole) reaches the plan as a sensor costing ``E_0`` (its cost per prediction at
``q_0``) and steps ``<sensor>@<q_j>`` (j >= 1, shared resources of level "transform") costing
``E_j - E_{j-1}`` (:func:`sensorbudget.trainer.sensing.sensor_budget.rate_steps`). Their
``sensor_costs`` entries carry the rates: the sensor's ``rate_hz`` (``q_0``) and
``sample_rate_hz`` (``r``), each step's ``sensor`` and ``rate_hz``. An extractor reading the
sensor runs at one rate ``q(e) = r / m(e)``: that of the highest step it reads, else ``q_0``.

The closure. Plain decimation makes ``q(e)`` of a stream at ``r / G`` only when ``G`` divides
``m(e)``, so chosen extractors with factors ``M`` need the sensor read at::

    read = r / gcd(M)        (sensing.rates.read_rate: 10 Hz for 5 and 2 Hz of 10 Hz)

and it runs at the slowest listed rate that is a whole multiple of ``read``::

    paid = q_{j*},  j* = min {j : m_j divides gcd(M)}      (q_j / read = gcd(M) / m_j),

paying ``E_{j*}`` = the sensor and every step ``q_j <= q_{j*}``. A chain of rates (each
dividing the next) pays its fastest rate, as each extractor's own steps already did; 5 and 2 Hz
of ``[2, 5, 10]`` pay 10 Hz. When no listed rate is a multiple of ``read`` (2 and 3 Hz of a
12 Hz sensor listing ``[2, 3]``: read at 6 Hz) the set is *unreadable*: the greedy never forms
it (a move into it is not affordable), and a set given from outside (the union of separate
per-target selections) is priced at the highest listed rate, below what it draws
(``sensing.rates.read_above_paid`` flags such a bundle).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import TrainerError

#: the keys of a ``sensor_costs`` entry that place it on a rate ladder (not cost kinds)
RATE_KEYS = ("sensor", "rate_hz", "sample_rate_hz")


@dataclass(frozen=True)
class RateLadder:
    """One sensor with listed rates in a plan: its index among the plan's sensors, the factors
    ``m_j = r / q_j`` of its listed rates (ascending rates: descending factors) and the
    transform index of each step ``q_1 .. q_k``."""

    sensor: int
    factors: tuple
    steps: tuple


def paid_level(factors, gcd: int) -> int:
    """``j*`` = the first ``j`` with ``factors[j]`` dividing ``gcd`` (the slowest listed rate
    that is a multiple of the read rate ``r / gcd``; module notes); 0 for ``gcd`` 0 (nothing
    chosen), -1 when no listed rate is (unreadable).

    >>> paid_level((5, 2, 1), 2), paid_level((5, 2, 1), 1), paid_level((6, 4), 2)
    (1, 2, -1)
    """
    if gcd == 0:
        return 0
    return next((j for j, m in enumerate(factors) if gcd % m == 0), -1)


def ladders(sensor_costs, sensor_names, transform_names, uses, transform_uses) -> tuple:
    """(ladders, factors): the :class:`RateLadder` of every sensor whose ``sensor_costs``
    entry gives ``rate_hz`` and ``sample_rate_hz``, and each extractor's factor ``m(e)`` per
    ladder (n_extractors x n_ladders ints, 0 where it does not read the sensor). Without rate
    keys: ``((), None)`` (the plan is as before)."""
    if not isinstance(sensor_costs, Mapping):
        return (), None
    out, factors = [], []
    for s, name in enumerate(sensor_names):
        entry = sensor_costs.get(name)
        if not isinstance(entry, Mapping) or "sample_rate_hz" not in entry:
            continue
        recorded = _rate(entry, "sample_rate_hz", name)
        rungs = [(_rate(entry, "rate_hz", name), -1)]
        for t, step in enumerate(transform_names):
            e = sensor_costs.get(step)
            if isinstance(e, Mapping) and e.get("sensor") == name:
                rungs.append((_rate(e, "rate_hz", step), t))
        base, above = rungs[0][0], sorted(q for q, _ in rungs[1:])
        if above and above[0] <= base:
            raise TrainerError(f"sensor_costs[{name!r}]: rate_hz={base:g} must be below the "
                               f"rate_hz of each of its steps (one gives {above[0]:g})")
        if len(set(above)) != len(above):
            raise TrainerError(f"sensor_costs[{name!r}]: two of its steps give one rate_hz "
                               f"({', '.join(f'{q:g}' for q in above)})")
        rungs.sort()
        m = tuple(_factor(recorded, q, name) for q, _ in rungs)
        steps = tuple(t for _, t in rungs[1:])
        level = np.zeros(uses.shape[0], dtype=np.int64)
        for j, t in enumerate(steps, start=1):
            level[transform_uses[:, t]] = np.maximum(level[transform_uses[:, t]], j)
        factors.append(np.where(uses[:, s], np.asarray(m, dtype=np.int64)[level], 0))
        out.append(RateLadder(s, m, steps))
    if not out:
        return (), None
    return tuple(out), np.stack(factors, axis=1)


def _rate(entry, key: str, name: str) -> float:
    v = entry.get(key)
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not v > 0:
        raise TrainerError(f"sensor_costs[{name!r}]: {key}={v!r} must be a rate in Hz > 0")
    return float(v)


def _factor(recorded: float, rate: float, name: str) -> int:
    m = round(recorded / rate)
    if m < 1 or abs(recorded / rate - m) > 1e-9 * m:
        raise TrainerError(f"sensor_costs[{name!r}]: rate {rate:g} Hz is not the recorded "
                           f"{recorded:g} Hz divided by a whole number")
    return m


def state_gcds(factors: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """gcd of the chosen extractors' factors per ladder (0: none of them reads the sensor)."""
    return np.gcd.reduce(factors[chosen], axis=0)


def step_mask(rungs: tuple, gcds, n_transforms: int) -> tuple:
    """(transforms paid by the rate closure at ``gcds`` (one per ladder), unreadable)."""
    mask = np.zeros(n_transforms, dtype=bool)
    unreadable = False
    for ladder, g in zip(rungs, gcds):
        j = paid_level(ladder.factors, int(g))
        unreadable |= j < 0
        mask[list(ladder.steps[:len(ladder.steps) if j < 0 else j])] = True
    return mask, unreadable


def move_keys(factors: np.ndarray) -> tuple:
    """(key per extractor, [(ladder, factor), ...]): the (ladder, factor) group of each
    extractor reading one ladder (-1: none, -2: several, priced move by move)."""
    reads = (factors > 0).sum(axis=1)
    ladder = factors.argmax(axis=1)                  # the one ladder it reads (when one)
    base = int(factors.max()) + 1
    codes = ladder * base + factors[np.arange(factors.shape[0]), ladder]
    groups, at = np.unique(codes[reads == 1], return_inverse=True)
    key = np.where(reads == 0, -1, -2).astype(np.intp)
    key[reads == 1] = at
    return key, [(int(c) // base, int(c) % base) for c in groups]


def move_steps(rungs: tuple, factors: np.ndarray, gcds, ids: np.ndarray, n_transforms: int,
               keys: tuple) -> tuple:
    """(rate steps each single-extractor move ``ids`` pays beyond the state's
    (len(ids) x n_transforms), unreadable per move), for the state's ``gcds``. A move
    changes only the ladder it reads, to gcd(G, m(e)) (a level only rises: it divides G), so
    its steps are computed once per (ladder, factor) group (``keys``: :func:`move_keys`) and
    gathered to the moves; an extractor reading several ladders is priced by itself."""
    key, pairs = keys
    table = np.zeros((len(pairs) + 1, n_transforms), dtype=bool)     # last row: no ladder
    unreadable = np.zeros(len(pairs) + 1, dtype=bool)
    for k, (i, m) in enumerate(pairs):
        j = paid_level(rungs[i].factors, int(np.gcd(int(gcds[i]), m)))
        table[k, list(rungs[i].steps[:len(rungs[i].steps) if j < 0 else j])] = True
        unreadable[k] = j < 0
    at = key[ids]
    rows, bad = table[at], unreadable[at]
    for r in np.flatnonzero(at == -2):
        e = ids[r]
        rows[r], bad[r] = step_mask(rungs, np.gcd(gcds, factors[e]), n_transforms)
    return rows, bad
