"""Fuzz target: feature NPZ files (``sensorbudget features`` output) with damaged members.

A real feature table (the fuzz bundles' stream and ``sensors.toml``, :mod:`fuzz._bundles`)
has one to three of its members replaced: by any ``.npy`` member (any dtype, shape, lying
header), by arbitrary JSON for the ``*_json`` members, by NaN/inf in X or Y, by fewer rows or
names, or is dropped. :meth:`trainer.sensing.feature_set.FeatureSet.load` must either refuse
it with a ``DataError`` or return a table whose members agree (finite X, one row per window
everywhere, one name per column).

Input: a count of changes (1-3), then per change a member choice and its replacement.
"""

from __future__ import annotations

import json

from fuzz._bundles import make_bundles
from fuzz._harness import Input, expected_errors, instrumented, npy_member, run, scratch_dir

with instrumented():
    import io
    import zipfile

    import numpy as np

    from trainer.bundle import npz_bytes
    from trainer.sensing.feature_set import FeatureSet, load_feature_set

_BASE = None


def _base(d) -> dict:
    """The feature table of the fuzz bundles' stream and sensors.toml (:mod:`fuzz._bundles`)."""
    make_bundles(d)
    return load_feature_set(d / "stream.csv", d / "sensors.toml").to_arrays()


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
        arrays[name] = np.array(json.dumps(inp.value(), allow_nan=True))
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
        _check(FeatureSet.load(npz_bytes(arrays)))
    except expected_errors():
        pass


def seeds() -> list:
    return [bytes([0, 0, 0]), bytes([1, 3, 3, 0]), bytes([2, 5, 2, 7]), bytes([0, 1, 1, 2, 9])]


def main() -> None:
    global _BASE
    with scratch_dir() as d:
        _BASE = _base(d)
        run(test_one_input, seeds())


if __name__ == "__main__":
    main()
