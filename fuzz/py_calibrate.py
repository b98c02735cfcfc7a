"""Fuzz target: ``sensorbudget calibrate``'s TOML: a sensors.toml (with or without an earlier
calibrate block) and a simulation report from a folder of any name, merged by
:func:`sensorbudget.device_sim.calibrate.calibrate`.

The sensors.toml is the fuzz bundles' one (:data:`fuzz._bundles.SENSORS`) plus, by the input,
an earlier ``[[calibration]]`` entry whose values are mutated node by node (``target = 5``, a
method with a newline or a control character, text costs, nested tables), written with
``tomli_w``, or raw text appended. The report is the real one of :mod:`fuzz.py_reports`, mutated
node by node, in a folder whose name may hold a newline, ``\\x01``, quotes, backslashes or TOML
syntax. Contract: calibrate returns or raises the project's own error; when it returns, what it
wrote is a sensors.toml that parses and loads (:func:`sensorbudget.trainer.sensing.sensors.load_sensor_spec`),
its text outside the block is the input's, byte for byte, and every report entry it wrote
carries the folder's name in ``source`` exactly.

Input: a sensors.toml mode (0 none, 1 structured entry, 2 raw text), its bytes, a folder-name
choice, an ``allow_estimated`` bit, a count of report mutations (0-2), the mutations.
"""

from __future__ import annotations

import copy
import json
import shutil
import tomllib

from fuzz._bundles import SENSORS
from fuzz._harness import Input, expected_errors, instrumented, mutate_tree, run, scratch_dir
from fuzz.py_reports import _base_report

with instrumented():
    import tomli_w

    from sensorbudget.device_sim.calibrate import BEGIN, calibrate, strip_block
    from sensorbudget.trainer.sensing.sensors import load_sensor_spec

FOLDERS = ["sim", "run\nnext", "run\x01x", 'run"quote', "run\\back", "[[calibration]]",
           "# comment", "é ü", "run\x7f", "a = 1\n[x]"]
ENTRY = {"extractor": "ax.mean", "target": "cortex-m4f", "compute_instructions": 120.0,
         "compute_time_s": 1e-6, "compute_energy_j": 1e-8, "method": "measured per call",
         "source": "earlier/report.json", "measured": True}

_DIR = None
_BASE = None


def _sensors_text(inp: Input) -> str:
    mode = inp.int(0, 2)
    if mode == 0:
        return SENSORS
    if mode == 1:
        entry = copy.deepcopy(ENTRY)
        for _ in range(inp.int(1, 3)):
            mutate_tree(entry, inp)
        try:
            block = tomli_w.dumps({"calibration": [entry]})
        except (TypeError, ValueError):          # a value TOML cannot hold (None): not a case
            block = ""
        return SENSORS + "\n" + BEGIN + "\n" + block + "# <<< sensorbudget calibrate\n"
    return SENSORS + inp.text(inp.int(0, 255))


def _check(written, original: str, folder, loaded_report: dict) -> None:
    text = written.read_bytes().decode("utf-8")       # no newline translation
    tomllib.loads(text)
    load_sensor_spec(written)               # a DataError here is a finding (not caught)
    assert text.startswith(strip_block(original).rstrip("\n"))
    backend = loaded_report["backend"]
    entries = tomllib.loads(text).get("calibration", [])
    from_report = [e for e in entries if str(e.get("source")).endswith(f"(backend {backend})")]
    assert all(e["source"] == f"{folder} (backend {backend})" for e in from_report)


def test_one_input(data: bytes) -> None:
    inp = Input(data)
    original = _sensors_text(inp)
    folder = _DIR / inp.pick(FOLDERS)
    allow_estimated = bool(inp.int(0, 1))
    report = copy.deepcopy(_BASE)
    for _ in range(inp.int(0, 2)):
        mutate_tree(report, inp)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    (folder / "report.json").write_text(json.dumps(report))
    toml, out = _DIR / "sensors.toml", _DIR / "out.toml"
    toml.write_bytes(original.encode("utf-8"))
    out.unlink(missing_ok=True)
    try:
        calibrate(toml, [folder], output=out, allow_estimated=allow_estimated)
    except expected_errors():
        assert not out.exists()
        return
    _check(out, original, folder, report)


def seeds() -> list:
    return [bytes([0, 0, 1, 0]), bytes([0, 1, 0, 0]), bytes([1, 1, 0, 0, 1, 5, 1, 0]),
            bytes([0, 2, 0, 0]), bytes([0, 3, 1, 0]), bytes([2, 8]) + b"\n[x]\nb = 1" + bytes(4)]


def main() -> None:
    global _DIR, _BASE
    with scratch_dir() as d:
        _DIR = d
        (d / "base").mkdir()
        _BASE = _base_report(d / "base")
        run(test_one_input, seeds())


if __name__ == "__main__":
    main()
