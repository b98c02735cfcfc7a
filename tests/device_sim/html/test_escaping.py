"""Hostile strings in every input the report reads (issue 33): names in a feature table (feature
and target names, the bundle folder's name), a recordings' target column (through training and
a simulation; the names of sensors.toml are identifiers by its schema), every string of a bundle's model.json (re-hashed, as
a careful forger would), of an evaluation's results.json, of a simulation's report.json and of a
firmware's firmware.json and footprint.json, and the page title. Every string a file's loader
accepts with a payload gets one; the page is checked structurally (:func:`fuzz.page_check.
check_page`) and in Chromium: no script runs, no element or attribute comes from the data, and
each payload the page shows is shown verbatim as text.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from fuzz.page_check import HOSTILE, check_page, rename

from .conftest import Runs, invoke, load, need_host_compiler

XSS = "document.documentElement.dataset.xss"
#: Fragments a file name can hold (no "/"), for the folder names.
FOLDER = '<img src=x onerror="document.documentElement.dataset.xss=7"> &amp; <b>bold'
HASH = re.compile(r"[0-9a-f]{16,64}\Z")


def payload(i: int) -> str:
    return f"sbX{i};{HOSTILE[i % len(HOSTILE)]}"


def _tail(name: str) -> str:
    """The payload of a hostile name, up to a "[" (results.json keys "measure[target]" are
    shown as their two parts)."""
    return name[name.index("sbX"):].partition("[")[0]


@dataclass
class Hostile:
    paths: list            # the run folders, hostile names and contents
    title: str
    renamed: dict          # {original string: hostile string}, every file together
    tried: dict            # {file: (strings tried, strings accepted)}
    table: Path            # the feature-table bundle (hostile feature and target names)


def _accepts(folder: Path) -> bool:
    from sensorbudget.device_sim.errors import DeviceError
    from sensorbudget.device_sim.html.runs import collect
    from sensorbudget.trainer.errors import TrainerError

    try:
        collect([folder])
    except (DeviceError, TrainerError):
        return False
    return True


def _strings(tree) -> set:
    if isinstance(tree, dict):
        return set(tree) | {s for v in tree.values() for s in _strings(v)}
    if isinstance(tree, list):
        return {s for v in tree for s in _strings(v)}
    return {tree} if isinstance(tree, str) else set()


def _write(folder: Path, name: str, doc: dict) -> None:
    from sensorbudget.trainer.bundle.model import content_sha256

    if name == "model.json":                 # re-hashed: the forger knows the format
        doc = dict(doc, content_sha256=content_sha256(doc))
    (folder / name).write_text(json.dumps(doc))


def poison(folder: Path, names: tuple, counter: list) -> tuple:
    """Give every string (value or key) of the files ``names`` in ``folder`` a payload where
    the loaders accept one, one string at a time, then all accepted ones together; the hashes
    that link runs, and strings that already hold a payload, stay. Returns ({original:
    hostile}, strings tried, strings accepted)."""
    docs = {n: json.loads((folder / n).read_text()) for n in names}
    strings = set().union(*map(_strings, docs.values())) - {"content_sha256"}
    accepted, tried = {}, 0
    for s in sorted(v for v in strings if not HASH.match(v) and "sbX" not in v):
        tried += 1
        candidate = s + payload(counter[0])
        for name, doc in docs.items():
            _write(folder, name, rename(doc, {s: candidate}))
        if _accepts(folder):
            accepted[s] = candidate
            counter[0] += 1
        for name, doc in docs.items():
            _write(folder, name, doc)
    for name, doc in docs.items():
        _write(folder, name, rename(doc, accepted))
    assert _accepts(folder), "each payload alone is accepted, all together are not"
    return accepted, tried, len(accepted)


def _table_bundle(base: Path, counter: list) -> tuple:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    Y = np.c_[X[:, 0] + 0.1 * rng.normal(size=60), X[:, 1] - X[:, 2]]
    names = {}
    for kind, count in (("feature", 5), ("target", 2)):
        names[kind] = [f"{kind}{j}" + payload(counter[0] + j) for j in range(count)]
        counter[0] += count
    np.savez(base / "t.npz", X=X, Y=Y, feature_names=np.array(names["feature"]),
             target_names=np.array(names["target"]))
    folder = base / ("table" + FOLDER)
    invoke("train", base / "t.npz", "--budget", 3, "-o", folder)
    return folder, names


def _recordings_bundle(base: Path, runs: Runs, sensors: Path, counter: list) -> tuple:
    """A bundle of recordings whose target column has a hostile name, and its simulation."""
    target = f"ysbX{counter[0]};<img src=x onerror={XSS}=8><b>b</b>"
    counter[0] += 1
    lines = runs.recordings.read_text().splitlines()
    assert lines[0].endswith(",y")
    rec = base / "rec" / "stream.csv"
    rec.parent.mkdir()
    rec.write_text("\n".join([lines[0][:-1] + target, *lines[1:]]) + "\n")
    folder = base / ("recordings" + FOLDER)
    invoke("train", rec, "--sensors", sensors, "--budget", 2, "-o", folder)
    invoke("simulate", folder, "--recordings", rec, "--backend", "python", "--report",
           base / ("simulated" + FOLDER))
    return [folder, base / ("simulated" + FOLDER)], target


@pytest.fixture(scope="module")
def hostile(runs: Runs, tiny, tmp_path_factory) -> Hostile:
    need_host_compiler()                      # the firmware run is built on the host
    base = tmp_path_factory.mktemp("hostile")
    counter, renamed, tried = [0], {}, {}
    table, names = _table_bundle(base, counter)
    renamed.update({n[:n.index("sbX")]: n for n in names["feature"] + names["target"]})
    recordings, target = _recordings_bundle(base, runs, tiny[2], counter)
    renamed["(the recordings' target column)"] = target
    invoke("firmware", table, "--target", "host", "--build", "-o", base / "fw")
    folders = {"bundle": (runs.bundle, ("model.json",)),
               "evaluation": (runs.evaluation, ("results.json",)),
               "sim": (runs.sim, ("report.json",)),
               "fw": (base / "fw", ("firmware.json", "footprint.json"))}
    paths = [table, *recordings]
    for key, (source, files) in folders.items():
        folder = base / (key + FOLDER)
        shutil.copytree(source, folder)
        got, n_tried, n_ok = poison(folder, files, counter)
        renamed.update(got)
        tried[key] = (n_tried, n_ok)
        paths.append(folder)
    return Hostile(paths, "title" + payload(999), renamed, tried, table)


def test_the_loaders_take_a_payload_in_the_strings_that_are_names(hostile: Hostile):
    """The payloads reach the page: names (methods, measures, targets, extractors, sensors,
    boards, units' owners) are free text in the files, only enumerations are refused."""
    for key, (n_tried, n_ok) in hostile.tried.items():
        assert n_ok >= 5, (key, n_tried, n_ok)
    poisoned = set(hostile.renamed)
    assert {"greedy-joint", "greedy-separate", "acc", "temp", "y", "ax.std"} <= poisoned


def _page(hostile: Hostile, out: Path) -> str:
    invoke("report", *hostile.paths, "--title", hostile.title, "-o", out)
    return out.read_text(encoding="utf-8")


def test_the_page_is_structurally_clean(hostile: Hostile, tmp_path):
    from sensorbudget.device_sim.html.page import _asset, plotly_js

    text = _page(hostile, tmp_path / "r.html")
    page = check_page(text, plotly_js(), _asset("report.js"))
    shown = page["text"]
    for name in hostile.renamed.values():            # shown as text, whole, where shown
        tail = _tail(name)
        if tail[:tail.index(";") + 1] in shown:
            assert tail in shown, name
    assert hostile.title in shown and FOLDER in shown
    data = page["json"]["sb-data"]
    assert all(r["name"].endswith(FOLDER) for r in data["runs"])        # the run names                    # the JSON blocks hold the strings as such
    assert hostile.title not in json.dumps(data)
    assert any(r["targets"] == [n for n in r["targets"] if "sbX" in n] for r in data["runs"])


def test_the_folds_of_the_issue_are_refused_in_one_line(runs: Runs, tmp_path):
    """The reproducer of issue 33: "folds" as a string with an event attribute."""
    from sensorbudget.cli import main

    folder = tmp_path / "ev"
    shutil.copytree(runs.evaluation, folder)
    results = json.loads((folder / "results.json").read_text())
    results["config"]["folds"] = "<img src=x onerror=\"alert('xss')\">"
    (folder / "results.json").write_text(json.dumps(results))
    result = CliRunner().invoke(main, ["report", str(folder), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    assert line.startswith("Error:") and "config.folds=" in line and "integer" in line
    assert not (tmp_path / "r.html").exists()


def test_script_json_cannot_close_its_block_and_keeps_the_value():
    from sensorbudget.device_sim.html.page import script_json

    value = {"a</script><!--": ["\u2028\u2029&<>", float("nan")], "b": 'x"\\'}
    text = script_json(value)
    assert not re.search("[<>&\u2028\u2029]", text)
    assert json.loads(text) == {"a</script><!--": ["\u2028\u2029&<>", None], "b": 'x"\\'}


def _shown_text(driver) -> str:
    """Every text node outside <script> and <style>, HTML and SVG (Plotly's legends, titles,
    tick labels) alike."""
    return driver.execute_script(
        "const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {acceptNode:"
        " n => n.parentElement.closest('script, style') ? NodeFilter.FILTER_REJECT :"
        " NodeFilter.FILTER_ACCEPT}); let out = []; while (w.nextNode()) out.push("
        "w.currentNode.nodeValue); return out.join('\\n');")


def _attributes(driver) -> list:
    """Event handlers, javascript: URLs and payloads in attributes (except the copy of the
    source text Plotly keeps in data-unformatted), as "tag attribute"."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('*')).flatMap(e => Array.from("
        "e.attributes).filter(a => a.name.startsWith('on') || /^\\s*javascript:/i.test("
        "a.value) || (/sbX\\d+;/.test(a.value) && a.name !== 'data-unformatted')).map("
        "a => e.tagName + ' ' + a.name));")


@pytest.fixture(scope="module")
def hostile_pages(hostile: Hostile, tmp_path_factory) -> dict:
    """The page through the command line, and through the Python API with an evaluation's
    folds replaced by a payload after reading (past the check that refuses it in a file)."""
    from sensorbudget.device_sim.html.page import render
    from sensorbudget.device_sim.html.runs import collect

    base = tmp_path_factory.mktemp("hostile-pages")
    _page(hostile, base / "cli.html")
    data = collect(hostile.paths)
    data["evaluations"][0]["folds"] = payload(998)
    (base / "api.html").write_text(render(data, hostile.title), encoding="utf-8")
    return {"cli": base / "cli.html", "api": base / "api.html"}


@pytest.mark.parametrize("which", ["cli", "api"])
def test_in_chromium_no_script_runs_and_payloads_are_text(browser, hostile, hostile_pages,
                                                          which):
    driver, log = load(browser, hostile_pages[which])
    assert driver.execute_script(f"return {XSS} === undefined")
    assert _attributes(driver) == []
    assert driver.execute_script("return document.querySelectorAll('img, svg image, iframe,"
                                 " object, embed, a[href]').length") == 0
    assert [e for e in log if e["level"] == "SEVERE"] == []
    shown = _shown_text(driver)
    seen = 0
    for name in hostile.renamed.values():
        tail = _tail(name)
        if tail[:tail.index(";") + 1] in shown:
            assert tail in shown, tail                # verbatim: no tag or entity interpreted
            seen += 1
    assert seen >= 10
    assert hostile.title in driver.title and FOLDER in shown
    selected = json.loads((hostile.table / "model.json").read_text())["selected"]
    summary = driver.find_element("css selector", "#summary").text
    assert all(name in summary for name in selected)  # the feature names, in the summary
    target = hostile.renamed["(the recordings' target column)"]
    assert _tail(target) in shown                     # in the simulation's plots and tables
    if which == "api":
        assert payload(998) in shown
    else:
        tooltip = _hover_last_point(driver, "pareto-price")
        assert driver.execute_script(f"return {XSS} === undefined")
        assert all(_tail(n) in tooltip for n in selected)   # verbatim in Plotly's tooltip


def _hover_last_point(driver, fig_id: str) -> str:
    """The tooltip text of the first trace's last point (the table bundle's chosen design)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.support.ui import WebDriverWait

    point = driver.execute_script(
        "const p = document.getElementById(arguments[0]).querySelectorAll('.scatterlayer "
        ".trace')[0].querySelectorAll('path.point'); return p[p.length - 1];", fig_id)
    ActionChains(driver).move_to_element(point).perform()
    return WebDriverWait(driver, 10).until(lambda d: d.execute_script(
        "const h = document.querySelector('#' + arguments[0] + ' .hovertext');"
        "return h ? h.textContent : null;", fig_id))
