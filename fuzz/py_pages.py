"""Fuzz target: the HTML report page (:mod:`sensorbudget.device_sim.html`) with hostile strings.

A real bundle, its simulation (python backend) and an evaluation (nested CV), made once at
start, are read by :func:`sensorbudget.device_sim.html.runs.collect`. Each input puts hostile strings
(markup, ``</script>``, event attributes, entities, U+2028, template and Plotly syntax, fuzzed
text; each behind a unique marker ``sbX<n>;``) into string fields: either into the report data
(any string leaf, key or list entry) or into the run files (every string of ``results.json`` or
``report.json`` equal to a chosen one), then renders the page and checks it structurally with
:func:`check_page`: only the known elements and attributes, exactly the four known scripts,
the JSON blocks valid and free of ``<``, and every marker only in text or inside the JSON
(:mod:`fuzz.page_check`, shared with the report's tests).

Input: mode (data or files), a count of injections, then per injection a pick of the field and
of the hostile fragment (or fuzzed text). plotly.js (4.8 MB, the same for every page) is
replaced by a stub so a run renders in milliseconds; the page around it is the real one.
"""

from __future__ import annotations

import copy
import json
import shutil

from fuzz._harness import Input, expected_errors, instrumented, run, scratch_dir
from fuzz.page_check import HOSTILE, check_page, rename

with instrumented():
    from sensorbudget.device_sim.html import page as page_module
    from sensorbudget.device_sim.html.page import render
    from sensorbudget.device_sim.html.runs import collect

#: Dicts of the report data keyed by user names (extractors, sensors).
NAMED = ("per_extractor", "sensor_energy_j", "per_sensor")

_DIR = None
_BASE = None          # {"data": the collected report data, "files": {name: dict}}


def hostile(inp: Input, n: int) -> str:
    """A hostile string with the marker ``sbX<n>;`` in front."""
    tail = inp.pick(HOSTILE) if inp.int(0, 3) else inp.text(inp.int(0, 24))
    return f"sbX{n};{tail}"


def _strings(tree, out: list, path=()) -> list:
    """Every (path, is_key) of a string leaf in ``tree``, and of the keys of the dicts keyed by
    names (:data:`NAMED`)."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            if path and path[-1] in NAMED:
                out.append((path + (k,), True))
            _strings(v, out, path + (k,))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            _strings(v, out, path + (i,))
    elif isinstance(tree, str) and path:
        out.append((path, False))
    return out


def inject(tree, where: tuple, is_key: bool, value: str) -> None:
    """Replace the string at ``where`` (with ``is_key``, the last key of the path) by
    ``value``."""
    node = tree
    for step in where[:-1]:
        node = node[step]
    if is_key:
        node[value] = node.pop(where[-1])
    else:
        node[where[-1]] = value


def _render_checked(data: dict, title: str) -> None:
    text = render(data, title)
    check_page(text, page_module.plotly_js(), page_module._asset("report.js"))


def _from_files(inp: Input, count: int) -> dict | None:
    """Rename strings of the evaluation's or the simulation's JSON file, then collect."""
    name = inp.pick(sorted(_BASE["files"]))
    doc = _BASE["files"][name]
    strings = sorted({v for v in _values(doc)})
    mapping = {inp.pick(strings): hostile(inp, i) for i in range(count)}
    folder = _DIR / "files" / name.split("/")[0]
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / name.split("/")[1]).write_text(json.dumps(rename(doc, mapping)))
    try:
        return collect([folder])
    except expected_errors():
        return None


def _values(tree):
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield k
            yield from _values(v)
    elif isinstance(tree, list):
        for v in tree:
            yield from _values(v)
    elif isinstance(tree, str):
        yield tree


def test_one_input(data: bytes) -> None:
    inp = Input(data)
    files, count = inp.int(0, 3) == 0, inp.int(1, 6)
    title = hostile(inp, 99) if inp.int(0, 1) else "report"
    if files:
        report = _from_files(inp, count)
        if report is None:
            return
    else:
        report = copy.deepcopy(_BASE["data"])
        leaves = _strings(report, [])
        for i in range(count):
            inject(report, *inp.pick(leaves), hostile(inp, i))
            leaves = _strings(report, [])
    try:
        _render_checked(report, title)
    except expected_errors():
        pass
    except (KeyError, StopIteration):
        # a renamed cross-reference (a design's run, an evaluation's method) no longer points
        # anywhere: the data dict is internal (collect builds it consistently), only its
        # strings are under test here
        if files:
            raise


def _base(d) -> dict:
    """A bundle, its python-backend simulation and a 2-fold evaluation of the fuzz stream."""
    from click.testing import CliRunner

    from fuzz._bundles import SENSORS, _stream
    from sensorbudget.cli import main

    (d / "sensors.toml").write_text(SENSORS)
    _stream(d / "stream.csv", 200, 0, True)
    sensors, stream = str(d / "sensors.toml"), str(d / "stream.csv")
    for args in (["train", stream, "--sensors", sensors, "--budget", "3", "-o", str(d / "b")],
                 ["simulate", str(d / "b"), "--recordings", stream, "--backend", "python",
                  "--report", str(d / "sim")],
                 ["evaluate", stream, "--sensors", sensors, "--budgets", "1,2", "--folds", "2",
                  "--methods", "greedy-joint", "--report", str(d / "ev")]):
        result = CliRunner().invoke(main, args, catch_exceptions=False)
        if result.exit_code != 0:
            raise RuntimeError(f"making the report runs failed: {result.output}")
    files = {f"{k}/{n}": json.loads((d / k / n).read_text())
             for k, n in (("ev", "results.json"), ("sim", "report.json"))}
    return {"data": collect([d / "b", d / "sim", d / "ev"]), "files": files}


def setup(d) -> None:
    """Make the base runs in ``d`` and stub plotly.js (see the module docstring)."""
    global _DIR, _BASE
    _DIR = d
    (d / "base").mkdir(exist_ok=True)
    _BASE = _base(d / "base")
    page_module.plotly_js = lambda: "/* plotly.js stub */"


def seeds() -> list:
    return [bytes([1, 1, 0, 0, 1]), bytes([1, 3, 1, 5, 1, 2, 7, 3, 1, 9]), bytes([0, 2, 0, 1, 4]),
            bytes([0, 0, 1, 1, 0, 3, 1, 2]), bytes([2, 5, 1, 40, 1, 6, 200, 1, 3])]


def main() -> None:
    with scratch_dir() as d:
        setup(d)
        run(test_one_input, seeds())


if __name__ == "__main__":
    main()
