"""Fuzz target: the HTML report page (:mod:`device_sim.html`) with hostile strings.

A real bundle, its simulation (python backend) and an evaluation (nested CV), made once at
start, are read by :func:`device_sim.html.runs.collect`. Each input puts hostile strings
(markup, ``</script>``, event attributes, entities, U+2028, template and Plotly syntax, fuzzed
text; each behind a unique marker ``sbX<n>;``) into string fields: either into the report data
(any string leaf, key or list entry) or into the run files (every string of ``results.json`` or
``report.json`` equal to a chosen one), then renders the page and checks it structurally with
:func:`check_page`: only the known elements and attributes, exactly the four known scripts,
the JSON blocks valid and free of ``<``, and every marker only in text or inside the JSON.

Input: mode (data or files), a count of injections, then per injection a pick of the field and
of the hostile fragment (or fuzzed text). plotly.js (4.8 MB, the same for every page) is
replaced by a stub so a run renders in milliseconds; the page around it is the real one.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
from html.parser import HTMLParser

from fuzz._harness import Input, expected_errors, instrumented, run, scratch_dir

with instrumented():
    from device_sim.html import page as page_module
    from device_sim.html.page import render
    from device_sim.html.runs import collect

#: Hostile fragments: each breaks out of one HTML, script, attribute or Plotly context.
HOSTILE = (
    '<img src=x onerror="document.documentElement.dataset.xss=1">',
    "</script><script>document.documentElement.dataset.xss=2</script>",
    "\"'><svg onload=\"document.documentElement.dataset.xss=3\">",
    "</title></textarea></style><script>document.documentElement.dataset.xss=4</script>",
    "<b>bold</b><br><a href=\"javascript:document.documentElement.dataset.xss=5\">link</a>",
    "&amp;&lt;&#60;&#x3c; <!-- --> <![CDATA[ ]]>",
    "\u2028\u2029 line separators",
    "{{ 7*7 }}{% raw %}%{y}%{hovertext}",
    "javascript:void(0)",
    " x\" onmouseover=\"document.documentElement.dataset.xss=6\" y=\"",
)
ALLOWED_TAGS = frozenset(["html", "head", "meta", "title", "style", "script", "body", "h1",
                          "h2", "h3", "h4", "p", "b", "code", "div", "section", "table", "thead",
                          "tbody", "tr", "th", "td", "span", "ul", "li", "select", "option",
                          "label", "details", "summary", "dl", "dt", "dd", "footer"])
ALLOWED_ATTRS = frozenset(["lang", "charset", "class", "id", "data-design", "data-key",
                           "data-value", "value", "selected", "hidden", "type"])
MARKER = re.compile(r"sbX\d+;")
#: Dicts of the report data keyed by user names (extractors, sensors).
NAMED = ("per_extractor", "sensor_energy_j", "per_sensor")

_DIR = None
_BASE = None          # {"data": the collected report data, "files": {name: dict}}


class _Scan(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems, self.text, self.scripts, self.styles = [], [], [], []
        self._script = None

    def handle_starttag(self, tag, attrs):
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"element <{tag}>")
        for name, value in attrs:
            if name not in ALLOWED_ATTRS:
                self.problems.append(f"attribute {name}= on <{tag}>")
            if value and MARKER.search(value):
                self.problems.append(f"a marker in the attribute {name}= of <{tag}>")
        if tag in ("script", "style"):
            self._script = [dict(attrs).get("type"), dict(attrs).get("id"), ""]
            (self.scripts if tag == "script" else self.styles).append(self._script)

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._script = None
        elif tag not in ALLOWED_TAGS:
            self.problems.append(f"end tag </{tag}>")

    def handle_data(self, data):
        if self._script is not None:
            self._script[2] += data
        else:
            self.text.append(data)

    def handle_comment(self, data):
        self.problems.append("a comment")

    def handle_pi(self, data):
        self.problems.append("a processing instruction")

    def unknown_decl(self, data):
        self.problems.append("a declaration")


def check_page(text: str, plotly: str, script: str) -> dict:
    """Check a rendered page's structure; returns {"text": the page's text outside scripts,
    "json": the parsed JSON blocks by id}. AssertionError names the first problem: an
    element or attribute the template does not write, a marker (``sbX<n>;``) outside text and
    the JSON blocks, a JSON block with a raw ``<``, scripts other than plotly.js, the two JSON
    blocks and ``report.js``."""
    scan = _Scan()
    scan.feed(text)
    scan.close()
    assert not scan.problems, scan.problems[:5]
    kinds = [(s[0], s[1]) for s in scan.scripts]
    assert kinds == [(None, None), ("application/json", "sb-figures"),
                     ("application/json", "sb-data"), (None, None)], kinds
    assert scan.scripts[0][2] == plotly and scan.scripts[3][2] == script, "a script changed"
    assert len(scan.styles) == 1 and not MARKER.search(scan.styles[0][2]), "the style changed"
    blocks = {}
    for _, name, body in scan.scripts[1:3]:
        assert not re.search("[<>&\u2028\u2029]", body), f"a raw character in {name}"
        blocks[name] = json.loads(body)
    shown = "".join(scan.text)
    in_json = sum(len(MARKER.findall(s[2])) for s in scan.scripts[1:3])       # "style" has none
    assert len(MARKER.findall(text)) == len(MARKER.findall(shown)) + in_json, \
        "a marker outside text and JSON"
    return {"text": shown, "json": blocks}


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


def rename(tree, mapping: dict):
    """``tree`` with every string (value or key) in ``mapping`` replaced by its image."""
    if isinstance(tree, dict):
        return {mapping.get(k, k) if isinstance(k, str) else k: rename(v, mapping)
                for k, v in tree.items()}
    if isinstance(tree, list):
        return [rename(v, mapping) for v in tree]
    return mapping.get(tree, tree) if isinstance(tree, str) else tree


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
