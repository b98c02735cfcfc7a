"""Fuzz target: ``report.json`` as ``compare`` and ``calibrate`` read it.

A real report (the pure-Python backend replaying the stream of the fuzz regression bundle,
:mod:`fuzz._bundles`, made once at start)
is mutated node by node (deleted, or replaced by any JSON value: deep nests, NaN, huge numbers,
strings with control characters), written, and loaded by
:func:`sensorbudget.device_sim.report.load_report`; a report that loads then goes through
:func:`sensorbudget.device_sim.compare.compare_rows` / ``format_table`` and
:func:`sensorbudget.device_sim.calibrate.calibration_entries` + ``render_block``, whose TOML must parse.

Input: a count of mutations (0-3), the mutations, then (mode bit) raw bytes instead of JSON.
"""

from __future__ import annotations

import copy
import json
import tomllib

from fuzz._bundles import make_bundles
from fuzz._harness import Input, expected_errors, instrumented, mutate_tree, run, scratch_dir

with instrumented():
    from sensorbudget.device_sim.calibrate import calibration_entries, render_block
    from sensorbudget.device_sim.compare import compare_rows, format_table
    from sensorbudget.device_sim.report import load_report
    from sensorbudget.device_sim.simulate import simulate

_DIR = None
_BASE = None


def _base_report(d) -> dict:
    """A real report: the python backend replaying the fuzz regression bundle's stream
    (seconds: done once per process)."""
    bundle = make_bundles(d)["regression"]
    report, _ = simulate(bundle, d / "stream.csv", backend="python", bench=False)
    report["cost"]["per_extractor_measured"] = True      # so calibrate reads further
    return json.loads(json.dumps(report))


def test_one_input(data: bytes) -> None:
    inp = Input(data)
    raw = inp.int(0, 7) == 0
    if raw:
        text = inp.rest()
    else:
        report = copy.deepcopy(_BASE)
        for _ in range(inp.int(0, 3)):
            mutate_tree(report, inp)
        text = json.dumps(report).encode()
    path = _DIR / "report.json"
    path.write_bytes(text)
    try:
        loaded = load_report(path)
    except expected_errors():
        return
    try:
        table = format_table(compare_rows(_BASE, loaded))
        assert "metric" in table
        entries = calibration_entries(loaded, "fuzz")
        tomllib.loads(render_block(entries))           # what calibrate writes must parse
    except expected_errors():
        pass


def seeds() -> list:
    return [bytes([1, 0]), bytes([1, 1, 3, 2, 1]), bytes([0]) + b"{}", bytes([1, 2, 0, 0, 5])]


def main() -> None:
    global _DIR, _BASE
    with scratch_dir() as d:
        _DIR = d
        (d / "base").mkdir()
        _BASE = _base_report(d / "base")
        run(test_one_input, seeds())


if __name__ == "__main__":
    main()
