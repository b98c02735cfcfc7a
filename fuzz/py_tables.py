"""Fuzz target: feature-table loaders (CSV, ARFF dense/sparse, NPZ, Mulan XML) via
``sensorbudget.trainer.data.load_table``, and ``FeatureSet.load`` for NPZ.

Input: a format byte, an options byte, option choices, then the file content. NPZ content is
either raw bytes or (options bit 7) a zip built member by member (:func:`npz_blob`).
"""

from __future__ import annotations

import re

from fuzz._harness import Input, expected_errors, instrumented, npz_blob, run, scratch_dir

with instrumented():
    import numpy as np

    from sensorbudget.trainer.bulk_parse import mulan_labels
    from sensorbudget.trainer.data import load_table
    from sensorbudget.trainer.sensing.feature_set import FeatureSet

FORMATS = ["csv", "arff", "npz", "txt", "xml"]
SEPS = [",", ";", "\t", " ", "|", ".", "", "ab", "\"", "\n"]
DECIMALS = [".", ",", ";"]
NA_VALUES = [-200.0, 0.0, float("nan"), float("inf"), 1.0]

_DIR = None


def _names(content: bytes) -> list:
    head = content[:400].decode("utf-8", errors="replace")
    return sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", head)))[:16] + ["y", "nope"]


def _check(table) -> None:
    """Postconditions of a loaded table (an AssertionError here is a finding)."""
    n = table.X.shape[0]
    assert table.X.ndim == 2 and table.Y.ndim == 2 and table.Y.shape[0] == n >= 2
    assert table.X.shape[1] == len(table.feature_names) > 0
    assert table.Y.shape[1] == len(table.target_names) > 0
    assert np.isfinite(table.X).all()
    assert table.groups is None or len(table.groups) == n


def test_one_input(data: bytes) -> None:
    inp = Input(data)
    fmt, flags = inp.pick(FORMATS), inp.int(0, 255)
    picks = [inp.int(0, 255) for _ in range(6)]
    content = npz_blob(inp) if (fmt == "npz" and flags & 128) else inp.rest()
    names = _names(content)
    options = {"drop_missing": bool(flags & 1), "keep_missing_targets": bool(flags & 2)}
    if flags & 4:
        options["labels"] = picks[0] % 6
    else:
        options["targets"] = [names[picks[0] % len(names)]]
    if flags & 8:
        options["na_value"] = NA_VALUES[picks[1] % len(NA_VALUES)]
    if flags & 16:
        options["groups"] = names[picks[2] % len(names)]
    if flags & 32:
        options["ignore"] = (names[picks[3] % len(names)],)
    if flags & 64:
        options["sep"], options["decimal"] = SEPS[picks[4] % len(SEPS)], DECIMALS[picks[5] % 3]
    path = _DIR / f"table.{fmt}"
    path.write_bytes(content)
    try:
        if fmt == "xml":
            labels = mulan_labels(path)
            assert labels and all(isinstance(n, str) for n in labels)
            return
        if fmt == "npz":
            try:
                FeatureSet.load(path)
            except expected_errors():
                pass
        _check(load_table(path, **options))
    except expected_errors():
        pass


def seeds() -> list:
    csv = b"a,b,y\n1,2,3\n4,5,6\n7,8.5,9\n"
    arff = (b"@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute y {0,1}\n"
            b"@data\n1,2,0\n3,4,1\n5,6,1\n")
    sparse = b"@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n{0 1,1 1}\n{0 2}\n"
    xml = b'<labels xmlns="http://mulan.sourceforge.net/labels"><label name="y"/></labels>'
    return [bytes([0, 0, 0]) + bytes(5) + csv, bytes([0, 64 | 8, 0, 0]) + bytes(4)
            + b"a;y\n1,5;2\n3;-200\n4;5\n", bytes([1, 4, 1]) + bytes(5) + arff,
            bytes([1, 4, 1]) + bytes(5) + sparse, bytes([4, 0]) + bytes(6) + xml,
            bytes([2, 128]) + bytes(6) + bytes([2, 0, 0, 2, 2, 2]) + bytes(32)]


def main() -> None:
    global _DIR
    with scratch_dir() as d:
        _DIR = d
        run(test_one_input, seeds())


if __name__ == "__main__":
    main()
