"""Fuzz target: feature NPZ files (``sensorbudget features`` output) with damaged members.

A real feature table (the fuzz bundles' stream and ``sensors.toml``, :mod:`fuzz._bundles`)
has one to three of its members replaced: by any ``.npy`` member (any dtype, shape, lying
header), by arbitrary JSON for the ``*_json`` members or one node of their JSON replaced
(a sensor without its energy, a compute cost that is text), by NaN/inf in X or Y, by an edge
value for a scalar (``sample_rate = 0``, NaN, ``window = 2^40``), by fewer rows or names, or
is dropped. :meth:`sensorbudget.trainer.sensing.feature_set.FeatureSet.load` must either refuse it with a
``DataError`` or return a table whose members agree (finite X, one row per window everywhere,
one name per column) and that ``train`` can use: its bundle structure is strict JSON and its
cost plan (every selection unit) is built without any other exception.

Input: a count of changes (1-3), then per change a member choice and its replacement.
"""

from __future__ import annotations

import json

from fuzz._bundles import make_bundles
from fuzz._harness import (
    Input,
    expected_errors,
    instrumented,
    mutate_tree,
    npy_member,
    run,
    scratch_dir,
)

with instrumented():
    import io
    import zipfile

    import numpy as np

    from sensorbudget.trainer.bundle import npz_bytes
    from sensorbudget.trainer.sensing.feature_set import FeatureSet, load_feature_set
    from sensorbudget.trainer.sensing.sensor_budget import cost_kwargs_from_feature_set

SCALARS = [0, -1, 1, 2 ** 31, 2 ** 40, 0.0, -0.0, float("nan"), float("inf"), 1e-320, 1e300]

_BASE = None


def _base(d) -> dict:
    """The feature table of the fuzz bundles' stream and sensors.toml (:mod:`fuzz._bundles`),
    with a compute cost per extractor (as a calibrated sensors.toml gives it)."""
    make_bundles(d)
    fs = load_feature_set(d / "stream.csv", d / "sensors.toml")
    fs.compute_costs = {e: {"energy": 1e-7, "time": 1e-5} for e in fs.feature_extractors}
    return fs.to_arrays()


def _replace(arrays: dict, inp: Input) -> None:
    name = inp.pick(sorted(arrays))
    action = inp.int(0, 5)
    value = np.asarray(arrays[name])
    if action == 0:
        del arrays[name]
    elif action == 1:                                     # any .npy member
        with np.load(io.BytesIO(_npz_of(npy_member(inp))), allow_pickle=False) as npz:
            arrays[name] = npz["m"]
    elif action == 2 and name.endswith("_json"):
        if inp.int(0, 1):                                   # one node of the JSON replaced
            tree = json.loads(str(value))
            arrays[name] = np.array(json.dumps(mutate_tree(tree, inp), allow_nan=True))
        else:
            arrays[name] = np.array(json.dumps(inp.value(), allow_nan=True))
    elif action == 2 and value.ndim == 0:                  # an edge value for a scalar
        arrays[name] = np.array(inp.pick(SCALARS))
    elif action == 3 and value.dtype.kind == "f" and value.size:
        flat = value.astype(np.float64).ravel().copy()
        flat[inp.int(0, flat.size - 1)] = inp.pick([np.nan, np.inf, -np.inf, 1e308, -0.0])
        arrays[name] = flat.reshape(value.shape)
    elif value.ndim >= 1 and value.shape[0]:             # fewer rows / names
        arrays[name] = value[:inp.int(0, value.shape[0] - 1)]


def _npz_of(member: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("m.npy", member)
    return out.getvalue()


def _check(fs) -> None:
    X, Y = np.asarray(fs.X), np.asarray(fs.Y)
    assert X.ndim == 2 and np.isfinite(X).all()
    assert Y.shape[0] == X.shape[0] == len(fs.groups) == len(fs.window_start)
    assert len(fs.feature_names) == X.shape[1] == len(set(fs.feature_names))
    assert len(fs.target_names) == Y.shape[1]


def test_one_input(data: bytes) -> None:
    inp = Input(data)
    arrays = {k: np.array(v) for k, v in _BASE.items()}
    for _ in range(inp.int(1, 3)):
        try:
            _replace(arrays, inp)
        except (ValueError, OSError, EOFError, zipfile.BadZipFile, MemoryError):
            return                                        # not a loadable .npy: not a case
    try:
        fs = FeatureSet.load(npz_bytes(arrays))
        _check(fs)
        _use(fs)
    except expected_errors():
        pass


def _use(fs) -> None:
    """What train does with a loaded table before the selection: the bundle structure (to be
    written as strict JSON) and the cost plan of every selection unit."""
    extractors, sensors, extra = fs.bundle_structure()
    json.dumps([extractors, sensors, extra], allow_nan=False)
    for unit in ("feature", "channel", "sensor"):
        cost_kwargs_from_feature_set(fs, unit=unit)


def seeds() -> list:
    return [bytes([0, 0, 0]), bytes([1, 3, 3, 0]), bytes([2, 5, 2, 7]), bytes([0, 1, 1, 2, 9]),
            bytes([0, 14, 2, 0]), bytes([0, 11, 2, 1, 0, 0]), bytes([0, 4, 2, 1, 2, 1, 0])]


def main() -> None:
    global _BASE
    with scratch_dir() as d:
        _BASE = _base(d)
        run(test_one_input, seeds())


if __name__ == "__main__":
    main()
