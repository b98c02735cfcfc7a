"""The cost plan's rate closure on hand-made estimator parameters: sensors with listed rates
(3, 4, 12 of 12 Hz and friends: not a chain), extractors reading one or both of them, fused
features (Cartesian moves). Checked against the definition (each sensor paid at the slowest
listed rate every chosen rate of it divides; a set no listed rate can read is out): the
greedy's picks against a brute force, and every move's added cost against the difference of
the definition's totals."""

import math

import numpy as np
import pytest

from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.errors import TrainerError
from sensorbudget.trainer.selection.costs import TOTALS, build_plan

SENSORS = {"a": (12.0, [3, 4, 12]), "b": (10.0, [2, 5, 10]), "c": (24.0, [4, 6, 8])}


def random_params(rng, n_ext):
    """(estimator cost kwargs, energy per prediction {sensor: {rate: E}}, {extractor: {sensor:
    rate}}, own energy per extractor)."""
    costs, table = {}, {}
    for s, (recorded, listed) in SENSORS.items():
        e = np.cumsum(rng.uniform(0.1, 1.0, len(listed)))
        table[s] = dict(zip(listed, e))
        costs[s] = {"price": 1.0, "energy": float(e[0]), "rate_hz": float(listed[0]),
                    "sample_rate_hz": recorded}
        for q, low, high in zip(listed[1:], e, e[1:]):
            costs[f"{s}@{q}"] = {"energy": float(high - low), "level": "transform",
                                 "sensor": s, "rate_hz": float(q)}
    names = [f"e{k}" for k in range(n_ext)]
    reads, needs, own = {}, {}, {}
    for k, name in enumerate(names):
        chosen = rng.choice(list(SENSORS), size=1 if rng.uniform() < 0.7 else 2, replace=False)
        reads[name] = {str(s): int(rng.choice(SENSORS[s][1])) for s in chosen}
        if k < len(SENSORS):                 # every step is read (sensor_costs names no other)
            s = list(SENSORS)[k]
            reads[name][s] = SENSORS[s][1][-1]
        needs[name] = list(reads[name]) + [f"{s}@{q}" for s, p in reads[name].items()
                                           for q in SENSORS[s][1][1:] if q <= p]
        own[name] = float(rng.uniform(0, 0.2))
    kwargs = {"extractor_sensors": needs, "sensor_costs": costs,
              "extractor_costs": {n: {"energy": own[n]} for n in names}}
    return kwargs, table, reads, own


def energy(ids, names, table, reads, own) -> float:
    """By definition: own energies plus each sensor at the slowest listed rate that every
    chosen rate of it divides (inf when none is)."""
    total, rates = 0.0, {}
    for i in ids:
        total += own[names[i]]
        for s, p in reads[names[i]].items():
            rates.setdefault(s, set()).add(p)
    for s, chosen in rates.items():
        fits = [q for q in SENSORS[s][1] if all(q % p == 0 for p in chosen)]
        if not fits:
            return math.inf
        total += table[s][fits[0]]
    return total


@pytest.mark.parametrize("seed", range(6))
def test_the_greedy_equals_a_brute_force_priced_by_the_read_rate(seed):
    from tests.trainer.reference import convention_transform
    from tests.trainer.selection.test_group_math import loo_sse_bruteforce
    rng = np.random.default_rng(seed)
    n, d = 24, 10
    kwargs, table, reads, own = random_params(rng, d)
    names = [f"e{k}" for k in range(d)]
    X = rng.normal(size=(n, d))
    Y = X[:, rng.choice(d, 3)] @ rng.normal(size=(3, 2)) + rng.normal(size=(n, 2))
    max_energy = float(rng.uniform(1.5, 3.0))
    est = GreedyRLS(budget=5, lam=1.0, strategy="error", max_energy=max_energy,
                    extractors=names, **kwargs).fit(X, Y)
    Xt, Yt = convention_transform(X, Y, True, True)
    chosen = []
    for _ in range(5):
        cands = [(loo_sse_bruteforce(Xt[:, chosen + [j]], Yt, 1.0, True), j) for j in range(d)
                 if j not in chosen
                 and energy(chosen + [j], names, table, reads, own) <= max_energy * (1 + 1e-9)]
        if not cands:
            break
        chosen.append(min(cands)[1])
    assert est.selected_.tolist() == chosen
    assert est.costs_["energy"] == pytest.approx(energy(chosen, names, table, reads, own))


@pytest.mark.parametrize("seed", range(12))         # seeds 4, 6-11 meet unreadable sets
def test_every_moves_added_cost_is_the_definitions_difference(seed):
    """Static moves (one extractor per feature; some read two sensors) and Cartesian ones
    (features fused from two extractors): along a random walk of affordable moves, each
    move's added energy is energy(state + move) - energy(state) by definition, NaN (never
    affordable) for a set no listed rate can read, and the totals are the definition's."""
    rng = np.random.default_rng(100 + seed)
    d = 9
    kwargs, table, reads, own = random_params(rng, d)
    names = [f"e{k}" for k in range(d)]
    fused = seed % 2 == 1
    extractors = ([(names[k], names[(k + 1) % d]) for k in range(d)] + names[:3] if fused
                  else names)
    plan = build_plan(len(extractors), extractors=extractors, **kwargs)
    assert plan.static != fused
    state = plan.start()
    e = TOTALS.index("energy")
    while True:
        moves = plan.moves(state)
        if not moves.extractors:
            break
        before = energy(np.flatnonzero(state.chosen), names, table, reads, own)
        assert state.totals[e] == pytest.approx(before)
        for k, ext in enumerate(moves.extractors):
            after = energy(list(np.flatnonzero(state.chosen)) + list(ext), names, table, reads,
                           own)
            if math.isinf(after):
                assert np.isnan(moves.added[k, e])
            else:
                assert moves.added[k, e] == pytest.approx(after - before)
        ok = np.flatnonzero(plan.affordable(state, moves))
        if not ok.size:
            break
        k = int(rng.choice(ok))
        plan.take(state, moves.extractors[k], moves.features(k))


@pytest.mark.parametrize("change, message", [
    (lambda c: c["a"].update(rate_hz=2.5), r"rate 2.5 Hz is not the recorded 12 Hz divided"),
    (lambda c: c["a"].update(rate_hz=5.0), r"rate_hz=5 must be below .* \(one gives 4\)"),
    (lambda c: c["a"].update(rate_hz=-3), r"rate_hz=-3 must be a rate in Hz > 0"),
    (lambda c: c["a@4"].update(rate_hz=3.0), r"rate_hz=3 must be below .* \(one gives 3\)"),
    (lambda c: c["a"].update(rate_hz="3"), r"rate_hz='3' must be a rate in Hz > 0"),
    (lambda c: c["c@8"].update(rate_hz=6.0), r"two of its steps give one rate_hz \(6, 6\)"),
])
def test_a_bad_rate_key_is_one_clear_error(change, message):
    kwargs, *_ = random_params(np.random.default_rng(0), 6)
    change(kwargs["sensor_costs"])
    with pytest.raises(TrainerError, match=message):
        build_plan(6, extractors=[f"e{k}" for k in range(6)], **kwargs)
