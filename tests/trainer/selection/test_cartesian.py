"""Cartesian (fusion) features: pairs of a row and a column extractor (publication VI)."""

import numpy as np
import pytest

from tests.trainer.reference import convention_transform, loo_sse_bruteforce
from sensorbudget.trainer import GreedyRLS, TrainerError


def cartesian_data(n, p, q, t, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p * q))
    Y = X[:, [1, p * q - 2, q + 2]] @ rng.normal(size=(3, t)) + 0.4 * rng.normal(size=(n, t))
    pairs = [(f"row{i}", f"col{j}") for i in range(p) for j in range(q)]
    return X, Y, pairs


def cartesian_greedy_bruteforce(X, Y, lam, p, q, steps, intercept=True):
    """Step 1: the best pair; then the best new row (all chosen columns) or new column."""
    col = lambda i, j: i * q + j  # noqa: E731
    scores = [loo_sse_bruteforce(X[:, [c]], Y, lam, intercept) for c in range(p * q)]
    first = int(np.argmin(scores))
    rows, cols = [first // q], [first % q]
    selected, path = [first], [(("row", rows[0]), ("col", cols[0]), scores[first])]
    for _ in range(steps - 1):
        cands = []
        for i in range(p):
            if i not in rows:
                cands.append((("row", i), [col(i, j) for j in cols]))
        for j in range(q):
            if j not in cols:
                cands.append((("col", j), [col(i, j) for i in rows]))
        cands.sort(key=lambda c: min(c[1]))           # moves ordered by their first feature
        sse = [loo_sse_bruteforce(X[:, selected + sorted(f)], Y, lam, intercept) for _, f in cands]
        k = int(np.argmin(sse))
        (kind, idx), feats = cands[k]
        (rows if kind == "row" else cols).append(idx)
        selected += sorted(feats)
        path.append(((kind, idx), sse[k]))
    return selected, path


@pytest.mark.parametrize("n,p,q", [(14, 3, 4), (9, 4, 3)])
@pytest.mark.parametrize("lam", [0.5, 3.0])
def test_cartesian_equals_bruteforce_cartesian_greedy(n, p, q, lam):
    X, Y, pairs = cartesian_data(n, p, q, 2, seed=n + p)
    est = GreedyRLS(budget=5, lam=lam, extractors=pairs).fit(X, Y)
    Xt, Yt = convention_transform(X, Y, True, True)
    selected, path = cartesian_greedy_bruteforce(Xt, Yt, lam, p, q, steps=4)
    assert est.selected_.tolist() == selected
    first = est.path_[0]["added_extractors"]
    assert first == [f"row{selected[0] // q}", f"col{selected[0] % q}"]
    assert all(len(e["added_extractors"]) == 1 for e in est.path_[1:])
    for entry, ref in zip(est.path_[1:], path[1:]):
        kind, idx = ref[0]
        assert entry["added_extractors"] == [f"{kind}{idx}"]
    np.testing.assert_allclose([e["loo_mse"] for e in est.path_],
                               [r[-1] / Y.size for r in path], rtol=1e-9)
    assert [e["costs"]["extractors"] for e in est.path_] == [2, 3, 4, 5]


def test_cartesian_needs_two_extractors_for_the_first_step():
    X, Y, pairs = cartesian_data(12, 3, 3, 1, seed=1)
    with pytest.raises(TrainerError, match="cheapest option is extractors 'row0' \\+ 'col0'"):
        GreedyRLS(budget=1, lam=1.0, extractors=pairs).fit(X, Y)


def test_cartesian_cost_of_rows_and_columns():
    X, Y, pairs = cartesian_data(20, 3, 4, 1, seed=2)
    costs = {f"row{i}": 2.0 for i in range(3)} | {f"col{j}": 1.0 for j in range(4)}
    est = GreedyRLS(budget=None, lam=1.0, extractors=pairs, extractor_costs=costs,
                    max_cost=6.0).fit(X, Y)
    chosen = est.selected_extractors_
    assert est.costs_["price"] == sum(costs[c] for c in chosen) <= 6.0
    rows = sum(c.startswith("row") for c in chosen)
    assert len(est.selected_) == rows * (len(chosen) - rows)
