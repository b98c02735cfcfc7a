"""The rate a multi-rate firmware pushes each sensor at is the rate the selection paid for it
(``rates.paid_rate``), checked against a loop over whole fractions written from the definition:
the slowest listed rate (``rates_hz``) that every chosen feature rate is a plain decimation of;
without one, the slowest fraction ``r / m`` of the recorded rate that is (the read rate). Before
this, 4 and 6 Hz features of a 24 Hz part with ``rates_hz = [4, 6, 24]`` were pushed at 12 Hz,
a rate the part does not run at, while the selection paid 24 Hz."""

from fractions import Fraction

import numpy as np
import pytest

from sensorbudget.firmware_gen.multirate import _pushed_rate
from sensorbudget.trainer.sensing.rates import paid_rate


def _divides(slow: Fraction, fast: Fraction) -> bool:
    return (fast / slow).denominator == 1


def pushed_by_definition(recorded: int, listed: list, chosen: list) -> Fraction:
    r = Fraction(recorded)
    fits = [Fraction(q) for q in sorted(listed) if all(_divides(Fraction(c), Fraction(q))
                                                       for c in chosen)]
    if fits:
        return fits[0]
    return next(r / m for m in range(recorded, 0, -1)
                if all(_divides(Fraction(c), r / m) for c in chosen))


def test_the_part_runs_at_a_listed_rate_it_was_paid_for():
    sensor = {"name": "acc", "sample_rate_hz": 24, "rates_hz": [4, 6, 24]}
    assert _pushed_rate(sensor, [4, 6]) == 24.0 == paid_rate(24, [4, 6, 24], [4, 6])
    assert _pushed_rate({"name": "acc", "sample_rate_hz": 24}, [4, 6]) == 12.0


@pytest.mark.parametrize("seed", range(6))
def test_the_pushed_rate_is_the_paid_rate_by_definition(seed):
    rng = np.random.default_rng(seed)
    for _ in range(60):
        recorded = int(rng.choice([10, 12, 24, 30, 60, 64]))
        fractions = [recorded // m for m in range(1, recorded + 1) if recorded % m == 0]
        listed = sorted(set(rng.choice(fractions, int(rng.integers(1, 4))).tolist()))
        chosen = sorted(set(rng.choice(listed, int(rng.integers(1, len(listed) + 1))).tolist()))
        sensor = {"name": "s", "sample_rate_hz": recorded, "rates_hz": listed}
        got = _pushed_rate(sensor, chosen)
        assert Fraction(got).limit_denominator(1000) == pushed_by_definition(
            recorded, listed, chosen), (recorded, listed, chosen)
        paid = paid_rate(recorded, listed, chosen)
        if any(all(_divides(Fraction(c), Fraction(q)) for c in chosen) for q in listed):
            assert got == paid                 # what the selection paid is what is pushed
