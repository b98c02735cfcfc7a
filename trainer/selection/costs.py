"""The cost model of budgeted selection: extractors, the sensors they need, budgets, moves.

Selection units are *extractors*. Feature column i needs the extractors ``needs[i]`` (one for a
one-to-many group, several for a "fusion" feature such as a Cartesian pair); it enters the
model as soon as all of them are chosen. An extractor has its own costs (``price`` paid once per
device, ``energy`` and ``time`` paid per prediction) and needs sensors; a sensor's costs are
paid once, when the first extractor needing it is chosen (shared sensors are paid once).
Totals of a chosen set E with sensors U(E) (``TOTALS``)::

    extractors = |E|,  sensors = |U(E)|,
    kind = sum_{e in E} cost_e[kind] + sum_{s in U(E)} cost_s[kind]

for kind in price, energy, time, ram, flash. Budgets limit any of the seven totals (hard
constraints).

Transforms are a level between sensors and extractors: ``sensor -> transform -> extractor``.
A transform (the FFT of a channel's window, a filter, a derivative) is computation shared by
the extractors that read it, paid once per window when the first of them is chosen (its
energy and time add to the totals like a sensor's; it is not counted among the sensors)::

    kind = sum_{e in E} cost_e[kind] + sum_{s in U(E)} cost_s[kind] + sum_{t in T(E)} cost_t[kind]

A *move* is one greedy step: a single extractor that makes at least one new feature available,
or, when no single extractor does (the first step of the Cartesian case), a smallest set of
extractors that does. Moves are ordered by their lowest feature index (ties in the greedy go
to the first move), so one feature per extractor reproduces plain feature selection exactly.

A sensor with listed rates is paid at the rate the device reads it (:mod:`.rate_closure`): the
transforms of a set are those its extractors read plus the rate steps up to that rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import TrainerError
from . import rate_closure
from .cost_params import KINDS, MEMORY_KINDS, cost_rows, limit, listing, resources, structure

TOTALS = ("extractors", "sensors") + KINDS
#: The estimator parameter that limits each total.
LIMIT_PARAMS = {"extractors": "budget", "sensors": "max_sensors", "price": "max_cost",
                "energy": "max_energy", "time": "max_time", "ram": "max_ram",
                "flash": "max_flash"}


@dataclass
class State:
    """Mutable selection state: chosen extractors, paid sensors, available features, totals,
    computed transforms."""

    chosen: np.ndarray
    paid: np.ndarray
    taken: np.ndarray
    totals: np.ndarray
    computed: np.ndarray = None


@dataclass
class Moves:
    """Candidate moves of one step: extractor ids, feature ids (CSR) and added costs (k x 5)."""

    extractors: list
    sizes: np.ndarray
    flat: np.ndarray
    added: np.ndarray
    ptr: np.ndarray = field(init=False)

    def __post_init__(self):
        self.ptr = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.intp)

    def features(self, k: int) -> np.ndarray:
        return self.flat[self.ptr[k]:self.ptr[k + 1]]

    def index_matrix(self, sel: np.ndarray, m: int) -> np.ndarray:
        """Feature ids of the moves ``sel`` (all of size m) as a (len(sel), m) array."""
        return self.flat[self.ptr[sel][:, None] + np.arange(m)]

    def subset(self, keep: np.ndarray) -> "Moves":
        sel = np.flatnonzero(keep)
        flat = [self.features(k) for k in sel]
        return Moves([self.extractors[k] for k in sel], self.sizes[sel],
                     np.concatenate(flat) if flat else np.zeros(0, np.intp), self.added[sel])


@dataclass(frozen=True)
class CostPlan:
    """Extractor structure, costs and budgets (``limits`` over ``TOTALS``; inf = no limit);
    the transforms (``transform_uses``: extractors x transforms) as the sensors; the rate
    ladders of sensors with listed rates and each extractor's factor on them
    (:func:`.rate_closure.ladders`)."""

    extractor_names: tuple
    needs: tuple
    extractor_cost: np.ndarray
    uses: np.ndarray
    sensor_names: tuple
    sensor_cost: np.ndarray
    limits: np.ndarray
    named_extractors: bool = False
    transform_names: tuple = ()
    transform_uses: np.ndarray = None
    transform_cost: np.ndarray = None
    rate_ladders: tuple = ()
    rate_factors: np.ndarray = None

    def __post_init__(self):
        if self.transform_uses is None:
            object.__setattr__(self, "transform_uses",
                               np.zeros((len(self.extractor_names), 0), bool))
            object.__setattr__(self, "transform_cost", np.zeros((0, len(KINDS))))

    @property
    def n_extractors(self) -> int:
        return len(self.extractor_names)

    @property
    def static(self) -> bool:
        """Every feature needs exactly one extractor (one-to-many groups)."""
        cached = self.__dict__.get("_static_cache")
        if cached is None:
            cached = all(len(n) == 1 for n in self.needs)
            object.__setattr__(self, "_static_cache", cached)
        return cached

    def with_limit(self, kind: str, value) -> "CostPlan":
        limits = self.limits.copy()
        limits[TOTALS.index(kind)] = np.inf if value is None else float(value)
        return replace(self, limits=limits)

    def start(self) -> State:
        return State(np.zeros(self.n_extractors, bool), np.zeros(len(self.sensor_names), bool),
                     np.zeros(len(self.needs), bool), np.zeros(len(TOTALS)),
                     np.zeros(len(self.transform_names), bool))

    def transforms_of(self, ext_ids) -> list:
        """Names of the transforms the extractor set ``ext_ids`` computes (in plan order)."""
        ids = np.asarray(sorted(set(int(e) for e in ext_ids)), dtype=np.intp)
        if not ids.size:
            return []
        return [self.transform_names[t] for t in np.flatnonzero(self._transform_mask(ids))]

    def _transform_mask(self, ids: np.ndarray) -> np.ndarray:
        """The transforms the extractors ``ids`` compute: those they read, plus the rate steps
        up to the rate each sensor with listed rates is read at (:mod:`.rate_closure`)."""
        mask = self.transform_uses[ids].any(axis=0)
        if self.rate_ladders:
            mask |= rate_closure.step_mask(self.rate_ladders,
                                           rate_closure.state_gcds(self.rate_factors, ids),
                                           len(self.transform_names))[0]
        return mask

    def totals_of(self, ext_ids) -> np.ndarray:
        """The five totals of the extractor set ``ext_ids``."""
        ids = np.asarray(sorted(set(int(e) for e in ext_ids)), dtype=np.intp)
        sensors = self.uses[ids].any(axis=0) if ids.size else np.zeros(len(self.sensor_names), bool)
        out = np.zeros(len(TOTALS))
        out[0], out[1] = ids.size, sensors.sum()
        out[2:] = self.extractor_cost[ids].sum(axis=0) + self.sensor_cost[sensors].sum(axis=0)
        if ids.size and self.transform_names:
            out[2:] += self.transform_cost[self._transform_mask(ids)].sum(axis=0)
        return out

    def counts(self, kind: str) -> bool:
        """The memory kind ``kind`` (ram, flash) is priced or limited (``train --board``);
        else it stays out of the totals' dicts (plans without a memory model are unchanged)."""
        r = TOTALS.index(kind)
        return bool(np.isfinite(self.limits[r]) or self.extractor_cost[:, r - 2].any()
                    or self.sensor_cost[:, r - 2].any() or self.transform_cost[:, r - 2].any())

    def cost_dict(self, totals) -> dict:
        skip = tuple(k for k in MEMORY_KINDS if not self.counts(k))
        return {k: (int(v) if k in ("extractors", "sensors") else float(v))
                for k, v in zip(TOTALS, totals) if k not in skip}

    # -- moves ------------------------------------------------------------------------------
    def moves(self, state: State) -> Moves:
        """The candidate moves from ``state`` (see the module notes), with their added costs."""
        if self.static:
            ids = np.flatnonzero(~state.chosen)
            ext = [(e,) for e in ids.tolist()]
            single = self._single_feature
            if single is not None:            # one feature per extractor: no per-move lists
                return Moves(ext, np.ones(ids.size, dtype=np.intp), single[ids],
                             self._added(state, ext, ids))
            feats = [self._ext_features[e] for e in ids]
        else:
            ext, feats = self._generic_moves(state)
        sizes = np.array([len(f) for f in feats], dtype=np.intp)
        flat = np.concatenate(feats).astype(np.intp) if feats else np.zeros(0, np.intp)
        return Moves(ext, sizes, flat, self._added(state, ext))

    @property
    def _single_feature(self):
        """Feature index of every extractor when each yields exactly one feature, else None."""
        if "_single_cache" not in self.__dict__:
            lists = self._ext_features
            single = (np.array([v[0] for v in lists], dtype=np.intp)
                      if all(v.size == 1 for v in lists) else None)
            object.__setattr__(self, "_single_cache", single)
        return self.__dict__["_single_cache"]

    @property
    def _rate_keys(self) -> tuple:
        """Each extractor's (ladder, factor) group (:func:`.rate_closure.move_keys`), cached."""
        if "_rate_keys_cache" not in self.__dict__:
            object.__setattr__(self, "_rate_keys_cache",
                               rate_closure.move_keys(self.rate_factors))
        return self.__dict__["_rate_keys_cache"]

    @property
    def _ext_features(self) -> list:
        cached = self.__dict__.get("_ext_features_cache")
        if cached is None:
            lists = [[] for _ in self.extractor_names]
            for i, need in enumerate(self.needs):
                lists[need[0]].append(i)
            cached = [np.asarray(v, dtype=np.intp) for v in lists]
            object.__setattr__(self, "_ext_features_cache", cached)
        return cached

    def _generic_moves(self, state: State):
        groups = {}
        for i in np.flatnonzero(~state.taken):
            miss = tuple(e for e in self.needs[i] if not state.chosen[e])
            groups.setdefault(miss, []).append(int(i))
        if not groups:
            return [], []
        size = min(len(k) for k in groups)
        keys = sorted((k for k in groups if len(k) == size), key=lambda k: groups[k][0])
        return keys, [np.asarray(groups[k], dtype=np.intp) for k in keys]

    def _added(self, state: State, ext: list, ids=None) -> np.ndarray:
        """Costs each move adds; ``ids``: the extractor of every move when each adds one."""
        added = np.zeros((len(ext), len(TOTALS)))
        if not ext:
            return added
        if ids is not None or all(len(e) == 1 for e in ext):
            if ids is None:
                ids = np.fromiter((e[0] for e in ext), dtype=np.intp, count=len(ext))
            new = self.uses[ids] & ~state.paid
            added[:, 0] = 1
            added[:, 2:] = self.extractor_cost[ids]
            tr = self.transform_uses[ids]
            if self.rate_ladders:
                steps, bad = rate_closure.move_steps(
                    self.rate_ladders, self.rate_factors,
                    rate_closure.state_gcds(self.rate_factors, state.chosen), ids,
                    len(self.transform_names), self._rate_keys)
                tr = tr | steps
        else:
            new = np.array([self.uses[list(e)].any(axis=0) for e in ext]) & ~state.paid
            added[:, 0] = [len(e) for e in ext]
            added[:, 2:] = [self.extractor_cost[list(e)].sum(axis=0) for e in ext]
            tr = np.array([self.transform_uses[list(e)].any(axis=0) for e in ext])
            if self.rate_ladders:
                chosen = np.flatnonzero(state.chosen).tolist()
                closed = [rate_closure.step_mask(
                    self.rate_ladders, rate_closure.state_gcds(self.rate_factors, chosen + list(e)),
                    len(self.transform_names)) for e in ext]
                tr = tr | np.array([mask for mask, _ in closed])
                bad = np.array([unreadable for _, unreadable in closed])
        added[:, 1] = new.sum(axis=1)
        added[:, 2:] += new.astype(float) @ self.sensor_cost
        if self.transform_names:
            done = state.computed if state.computed is not None else False
            added[:, 2:] += (tr & ~done).astype(float) @ self.transform_cost
        if self.rate_ladders:
            added[bad] = np.nan            # unreadable at a listed rate: never affordable
        return added

    def affordable(self, state: State, moves: Moves) -> np.ndarray:
        """Moves whose totals after the move stay within every limit (relative slack 1e-9)."""
        slack = 1e-9 * np.maximum(1.0, np.abs(np.where(np.isfinite(self.limits), self.limits, 0)))
        return ((state.totals + moves.added) <= self.limits + slack).all(axis=1)

    def take(self, state: State, ext: tuple, features) -> list:
        """Apply a move; returns the ids of the sensors it adds."""
        ids = list(ext)
        new = np.flatnonzero(self.uses[ids].any(axis=0) & ~state.paid)
        state.chosen[ids] = True
        state.paid[new] = True
        if state.computed is not None and self.transform_names:
            state.computed |= self._transform_mask(np.flatnonzero(state.chosen))
        state.taken[np.asarray(features, dtype=np.intp)] = True
        state.totals = self.totals_of(np.flatnonzero(state.chosen))
        return [int(s) for s in new]

    # -- strategies ---------------------------------------------------------------------------
    def ratio_weights(self) -> np.ndarray:
        """Weights turning an added-cost vector into one number: 1 / limit of each limited total.

        The cost-ratio strategy divides the LOO error decrease by ``added @ weights`` (the
        fraction of the budgets a move uses up). Without any finite positive limit the unit
        price is the cost.
        """
        ok = np.isfinite(self.limits) & (self.limits > 0)
        with np.errstate(over="ignore"):              # a subnormal limit: weight capped below
            w = np.where(ok, 1.0 / np.where(ok, self.limits, 1.0), 0.0)
        np.minimum(w, np.finfo(np.float64).max, out=w)
        if not w.any():
            w[TOTALS.index("price")] = 1.0
        return w

    def uniform(self) -> bool:
        """True when every move of a step has the same weighted cost (cost-ratio = error).

        Moves of one step always have the same number of extractors, so this holds when
        sensors add nothing to the weighted cost and every extractor weighs the same.
        """
        w = self.ratio_weights()
        per_ext = self.extractor_cost @ w[2:]
        per_sensor = self.sensor_cost @ w[2:] + w[1]
        sensors_free = not self.uses.any() or np.allclose(per_sensor, 0.0)
        transforms_free = (not self.transform_uses.any()
                           or np.allclose(self.transform_cost @ w[2:], 0.0))
        return bool(sensors_free and transforms_free and np.allclose(per_ext, per_ext[0]))

    # -- messages -----------------------------------------------------------------------------
    def describe_move(self, ext: tuple) -> str:
        names = " + ".join(repr(self.extractor_names[e]) for e in ext)
        sensors = [self.sensor_names[s] for s in np.flatnonzero(self.uses[list(ext)].any(0))]
        transforms = self.transforms_of(ext)
        what = "extractor" if len(ext) == 1 else "extractors"
        return (f"{what} {names}" + (f" (sensors: {', '.join(sensors)})" if sensors else "")
                + (f" (transforms: {', '.join(transforms)})" if transforms else ""))

    def infeasible_error(self, moves: Moves) -> TrainerError:
        """The error for a budget that admits no first move, naming the cheapest option."""
        limited = [i for i, v in enumerate(self.limits) if np.isfinite(v)]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            frac = moves.added[:, limited] / self.limits[limited]
        frac = np.where(moves.added[:, limited] == 0, 0.0, frac)
        k = int(np.argmin(frac.max(axis=1)))
        costs = ", ".join(f"{name}={_fmt(v)}" for name, v in zip(TOTALS, moves.added[k]))
        over = [(TOTALS[i], moves.added[k, i]) for i in limited
                if moves.added[k, i] > self.limits[i] * (1 + 1e-9)]
        raise_to = "; ".join(f"raise {LIMIT_PARAMS[kind]} to at least {_fmt(v)}"
                             for kind, v in over)
        limits = ", ".join(f"{LIMIT_PARAMS[TOTALS[i]]}={_fmt(self.limits[i])}" for i in limited)
        return TrainerError(f"no extractor fits the budget ({limits}): the cheapest option is "
                            f"{self.describe_move(moves.extractors[k])} with {costs}; {raise_to}")


def _fmt(v) -> str:
    return f"{float(v):g}"


def build_plan(n_features: int, *, feature_names=None, extractors=None, extractor_costs=None,
               extractor_sensors=None, sensor_costs=None, budget=None, max_sensors=None,
               max_cost=None, max_energy=None, max_time=None, max_ram=None,
               max_flash=None) -> CostPlan:
    """Validate the cost parameters of the estimators and build the :class:`CostPlan`.

    ``extractor_costs`` defaults to a unit price of 1 per extractor without ``sensor_costs``
    and 0 with them (the sensors carry the price); when given it must cover every extractor.
    Raises :class:`TrainerError` naming the offending entry.
    """
    if feature_names is None:
        feature_names = [f"x{i}" for i in range(n_features)]
    names, needs = structure(n_features, extractors, feature_names)
    (sensor_names, uses, sensor_cost), transforms = resources(names, extractor_sensors,
                                                              sensor_costs)
    ext_cost = np.zeros((len(names), len(KINDS)))
    if extractor_costs is None:
        ext_cost[:, 0] = 1.0 if sensor_costs is None else 0.0
    else:
        ext_cost = cost_rows(extractor_costs, list(names), "extractor_costs", "extractor",
                             f"which is not an extractor (extractors: {listing(names)})")
    limits = np.array([np.inf, limit(max_sensors, "max_sensors"), limit(max_cost, "max_cost"),
                       limit(max_energy, "max_energy"), limit(max_time, "max_time"),
                       limit(max_ram, "max_ram"), limit(max_flash, "max_flash")])
    rungs, factors = rate_closure.ladders(sensor_costs, sensor_names, transforms[0], uses,
                                          transforms[1])
    plan = CostPlan(names, needs, ext_cost, uses, sensor_names, sensor_cost, limits,
                    named_extractors=extractors is not None, transform_names=transforms[0],
                    transform_uses=transforms[1], transform_cost=transforms[2],
                    rate_ladders=rungs, rate_factors=factors)
    return plan.with_limit("extractors", budget)


def singleton_plan(n_features: int) -> CostPlan:
    """One unit-price extractor per feature, no sensors, no limits (plain feature selection)."""
    return build_plan(n_features)
