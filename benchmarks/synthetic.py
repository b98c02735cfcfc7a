"""Seeded synthetic stand-ins of the large public multi-label sets (not in the shared data).

delicious (Mulan): 12920 training rows, 500 binary features at ~4 % density, 983 labels at
~2 % density; its sparse ARFF file is about 3 MB. tmc2007-500: 21519 rows, 500 binary features
(~5 %), 22 labels (~10 %). Labels follow a few features (so selection has something to find).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SHAPES = {"delicious": (12920, 500, 983, 0.04, 0.02), "tmc": (21519, 500, 22, 0.05, 0.10)}


def multilabel(name: str, seed: int = 0, rows: int | None = None):
    """(X, Y) 0/1 float64 arrays of the named shape (``rows`` overrides the row count)."""
    n, d, t, fx, fy = SHAPES[name]
    n = rows or n
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < fx).astype(np.float64)
    W = rng.normal(size=(d, t)) * (rng.random((d, t)) < 0.02)
    score = X @ W + rng.normal(size=(n, t))
    # a per-label threshold giving the label density fy
    Y = (score > np.quantile(score, 1.0 - fy, axis=0)).astype(np.float64)
    return X, Y


def write_sparse_arff(path: Path, X, Y, relation="synthetic") -> Path:
    """A Mulan-style sparse ARFF file: numeric features f0.., nominal {0,1} labels l0.."""
    d, t = X.shape[1], Y.shape[1]
    head = [f"@relation {relation}", ""]
    head += [f"@attribute f{i} numeric" for i in range(d)]
    head += [f"@attribute l{j} {{0,1}}" for j in range(t)]
    lines = head + ["", "@data"]
    Z = np.hstack([X, Y])
    for row in Z:
        nz = np.flatnonzero(row)
        lines.append("{" + ",".join(f"{i} {row[i]:g}" for i in nz) + "}")
    path.write_text("\n".join(lines) + "\n")
    return path


def write_dense_arff(path: Path, X, Y, relation="synthetic") -> Path:
    """A dense ARFF file with the same attributes as :func:`write_sparse_arff`."""
    d, t = X.shape[1], Y.shape[1]
    lines = [f"@relation {relation}", ""] + [f"@attribute f{i} numeric" for i in range(d)]
    lines += [f"@attribute l{j} {{0,1}}" for j in range(t)] + ["", "@data"]
    lines += [",".join(f"{v:.6g}" for v in r) + "," + ",".join(f"{v:g}" for v in y)
              for r, y in zip(X, Y)]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_csv(path: Path, X, Y) -> Path:
    """A CSV file with a header row: features f0.., targets y0..."""
    header = [f"f{i}" for i in range(X.shape[1])] + [f"y{j}" for j in range(Y.shape[1])]
    lines = [",".join(header)] + [",".join(f"{v:.6g}" for v in row) for row in np.hstack([X, Y])]
    path.write_text("\n".join(lines) + "\n")
    return path
