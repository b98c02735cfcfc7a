"""The confusion matrices of binary and multi-class runs on the report page (issue 27 item 6).

Runs on labelled recordings whose class names are hostile (markup, an ampersand and quotes, an
escape sequence): train, ``simulate --backend python``, ``evaluate``, then ``report``. In
Chromium, every matrix on the page (the simulation's, each evaluated method and budget's, the
design panels') is read cell by cell and compared with the runs' JSON: report.json's
``accuracy.device.confusion`` and the sum over the outer folds of results.json's records
(summed here with numpy). The names show as text: no element comes from them, control
characters are escaped. Without a browser the same comparison runs on the HTML source
(``test_matrix_cells_in_the_html``), and the reader of the stored matrices has unit tests.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re

import numpy as np
import pytest

from sensorbudget.device_sim.html.confusion import (
    NAME_LIMIT,
    evaluation_confusions,
    simulation_confusion,
    table,
)
from tests.fixtures import write_sensors_toml

from .conftest import invoke, load

NAMES = {"binary": ["<i>walk</i>", "sit\x1b[31m"],
         "multiclass": ["<i>walk</i>", 'run & "jog"', "sit\x1b[31m"]}
#: how the page shows each name: as text, the escape sequence written out
SHOWN = {"<i>walk</i>": "<i>walk</i>", 'run & "jog"': 'run & "jog"',
         "sit\x1b[31m": "sit\\x1b[31m"}


def write_recordings(root, names, seed=5):
    """Three recordings per class of the tiny device (tests/fixtures.py), each class with its
    own amplitude and temperature, and an index.csv naming each recording's class."""
    rng = np.random.default_rng(seed)
    root.mkdir()
    index = io.StringIO()
    writer = csv.writer(index, lineterminator="\n")
    writer.writerow(["file", "activity"])
    for i in range(3 * len(names)):
        k = i // 3
        n = 100 + 9 * i
        t = np.arange(n) / 20
        amp = (1.0, 0.2, 2.0)[k]
        ax = amp * np.sin(t * (3 + i % 3)) + 0.3 * rng.normal(size=n)
        ay = amp * np.cos(t * 2) + 0.3 * rng.normal(size=n)
        temp = 20 + (0.5, 0.0, 1.0)[k] + 0.3 * rng.normal(size=n)
        (root / f"r{i}.csv").write_text("time,ax,ay,t\n" + "".join(
            f"{t[j]:.2f},{ax[j]:.6f},{ay[j]:.6f},{temp[j]:.4f}\n" for j in range(n)))
        writer.writerow([f"r{i}.csv", names[k]])
    (root / "index.csv").write_text(index.getvalue())
    return root


@pytest.fixture(scope="module", params=["binary", "multiclass"])
def classified(request, tmp_path_factory):
    """(task, page, report.json, results.json) of one labelled run set."""
    base = tmp_path_factory.mktemp(f"confusion-{request.param}")
    toml = write_sensors_toml(base / "sensors.toml")
    recs = write_recordings(base / "recs", NAMES[request.param])
    invoke("train", recs, "--sensors", toml, "--budget", 3, "-o", base / "bundle")
    invoke("simulate", base / "bundle", "--recordings", recs, "--backend", "python",
           "--report", base / "sim")
    invoke("evaluate", recs, "--sensors", toml, "--budgets", "1,2", "--folds", "3",
           "--methods", "greedy-joint,greedy-separate", "--report", base / "ev")
    invoke("report", base / "bundle", base / "sim", base / "ev", "-o", base / "r.html")
    report = json.loads((base / "sim" / "report.json").read_text(encoding="utf-8"))
    results = json.loads((base / "ev" / "results.json").read_text(encoding="utf-8"))
    return request.param, base / "r.html", report, results


def expected_tables(report: dict, results: dict) -> list:
    """[(source, name, method, budget, shown class names, counts)] the page must hold, from
    the runs' JSON: the device's matrix, and per method and budget the folds' sum (once in the
    evaluation section and once in that design's panel)."""
    device = report["accuracy"]["device"]
    out = [("simulation", "sim", "", "", [SHOWN[c] for c in device["classes"]],
            device["confusion"])]
    for method in results["methods"]:
        for budget in map(str, results["budgets"]):
            rows = [r for r in results["records"]
                    if r["method"] == method and str(r["budget"]) == budget]
            assert len(rows) == results["config"]["folds"]
            M = np.sum([np.asarray(r["confusion"]) for r in rows], axis=0).tolist()
            shown = [SHOWN[c] for c in rows[0]["classes"]]
            out += [(source, "ev", method, budget, shown, M)
                    for source in ("evaluation", "design")]
    return sorted(out, key=repr)


READ_TABLES = """
return Array.from(document.querySelectorAll("table.confusion")).map(function (t) {
  var cells = function (row) {
    return Array.from(row.children).map(function (c) { return c.textContent; });
  };
  return {source: t.dataset.source, name: t.dataset.name, method: t.dataset.method || "",
          budget: t.dataset.budget || "", head: cells(t.tHead.rows[0]),
          rows: Array.from(t.tBodies[0].rows).map(cells),
          elements: t.querySelectorAll("i, script, img").length};
});"""


def test_the_page_shows_every_matrix_of_the_runs(classified, browser):
    task, page, report, results = classified
    driver, log = load(browser, page)
    assert not [e for e in log if e["level"] == "SEVERE"], log
    found = driver.execute_script(READ_TABLES)
    got = []
    for t in found:
        assert t["elements"] == 0                        # the names made no element
        assert t["head"][0] == "true \\ decided"
        names = t["head"][1:]
        assert [r[0] for r in t["rows"]] == names         # one row per true class
        got.append((t["source"], t["name"], t["method"], t["budget"], names,
                    [[int(v) for v in r[1:]] for r in t["rows"]]))
    assert sorted(got, key=repr) == expected_tables(report, results)
    assert len(got[0][4]) == len(NAMES[task])
    # the design the page opens on is an evaluated design or the bundle's; a click on the
    # list shows an evaluated design's panel with its matrix, visible
    driver.execute_script(
        "var s = document.getElementById('design-select');"
        "var o = Array.from(s.options).find(function (o) { return /greedy-joint at budget 2/"
        ".test(o.text); }); s.value = o.value; s.dispatchEvent(new Event('change'));")
    visible = driver.execute_script(
        "return Array.from(document.querySelectorAll('table.confusion[data-source=design]'))"
        ".filter(function (t) { return t.offsetParent !== null; })"
        ".map(function (t) { return [t.dataset.method, t.dataset.budget]; });")
    assert visible == [["greedy-joint", "2"]]


def test_matrix_cells_in_the_html(classified):
    """The same comparison on the page's source (runs where Chromium is missing too)."""
    _, page, report, results = classified
    text = page.read_text(encoding="utf-8")
    got = []
    for attrs, body in re.findall(r'<table class="confusion numbers" ([^>]*)>(.*?)</table>',
                                  text, re.DOTALL):
        a = dict(re.findall(r'data-(\w+)="([^"]*)"', attrs))
        rows = [[html.unescape(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r)]
                for r in re.findall(r"<tr>(.*?)</tr>", body, re.DOTALL)]
        assert "<i>" not in body and "\x1b" not in body
        got.append((a["source"], html.unescape(a["name"]), a.get("method", ""),
                    a.get("budget", ""), rows[0][1:], [[int(v) for v in r[1:]]
                                                       for r in rows[1:]]))
    assert sorted(got, key=repr) == expected_tables(report, results)


# -- reading the stored matrices --------------------------------------------------------------

@pytest.mark.parametrize("bad", [
    None, [], [[1, 2]], [[1, 2], [3]], [[1, -1], [0, 0]], [[True, 0], [0, 1]],
    [[1.0, 0], [0, 1]], [["1", 0], [0, 1]], [[2 ** 53, 0], [0, 1]], {"a": 1},
    [[0] * 101 for _ in range(101)]])
def test_a_matrix_that_is_not_counts_is_left_out(bad):
    assert table(bad, None) is None
    assert simulation_confusion({"device": {"confusion": bad, "classes": None}}) is None


@pytest.mark.parametrize("classes", [["a"], ["a", "b", "c"], "ab", [None, "b"], [True, "b"]])
def test_classes_that_do_not_name_the_rows_are_left_out(classes):
    assert table([[1, 0], [0, 1]], classes) is None


def test_names_are_printable_and_cut():
    long = "x" * (NAME_LIMIT + 5)
    got = table([[1, 0, 0], [0, 1, 0], [0, 0, 1]], ["a\u202eb\x07", long, 3])
    assert got["classes"] == ["a\\u202eb\\x07", "x" * (NAME_LIMIT - 1) + "…", "3"]
    assert got["n"] == 3
    assert table([[4, 1], [2, 3]], None)["classes"] == ["0", "1"]


def test_an_evaluation_sums_its_folds_and_skips_disagreeing_records():
    rng = np.random.default_rng(0)
    Ms = [rng.integers(0, 20, size=(3, 3)) for _ in range(4)]
    records = [{"method": "m", "budget": 2, "confusion": M.tolist(), "classes": ["a", "b", "c"]}
               for M in Ms[:3]]
    records += [{"method": "m", "budget": "2", "confusion": Ms[3].tolist(),
                 "classes": ["a", "b", "z"]},                       # other classes: left out
                {"method": "m", "budget": "2", "confusion": [[1]], "classes": ["a"]},
                {"method": "other", "budget": "2", "confusion": Ms[3].tolist(),
                 "classes": None}]
    (got,) = evaluation_confusions(records, ["m", "absent"], ["2", "9"])
    assert got["counts"] == np.sum(Ms[:3], axis=0).tolist()
    assert (got["method"], got["budget"], got["folds"]) == ("m", "2", 3)
    assert got["n"] == int(np.sum(Ms[:3]))
