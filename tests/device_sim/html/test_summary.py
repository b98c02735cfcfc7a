"""The summary the report opens on (issue 32), read from the page's HTML: an evaluation alone
opens on its best design (lowest mean held-out MSE, recomputed here from the records), a built
firmware adds its flash and RAM (as footprint.json holds them), and what is missing says how
to get it. The browser test (test_browser.py) checks the same summary as drawn."""

from __future__ import annotations

import html
import json
import shutil
from html.parser import HTMLParser

from click.testing import CliRunner

from .conftest import Runs, invoke, need_host_compiler


class _Cards(HTMLParser):
    """Summary cards: {"design", "title", "rows": {key: {"value", "text", "kind"}}}."""

    def __init__(self):
        super().__init__()
        self.cards, self._row, self._into = [], None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        cls = attrs.get("class", "")
        if tag == "div" and cls == "card":
            self.cards.append({"design": int(attrs["data-design"]), "title": "", "rows": {}})
        elif self.cards and tag == "h3" and not self.cards[-1]["title"]:
            self._into = "title"
        elif self.cards and tag == "tr" and "data-key" in attrs:
            self._row = {"value": None, "text": "", "kind": ""}
            self.cards[-1]["rows"][attrs["data-key"]] = self._row
        elif self._row is not None and tag == "span" and cls in ("value", "kind"):
            self._into = "text" if cls == "value" else "kind"
            if cls == "value":
                self._row["value"] = attrs.get("data-value")

    def handle_endtag(self, tag):
        if tag in ("span", "h3"):
            self._into = None
        elif tag == "tr":
            self._row = None
        elif tag == "section":
            self._row = self._into = None

    def handle_data(self, data):
        if self._into == "title":
            self.cards[-1]["title"] += data
        elif self._into and self._row is not None:
            self._row[self._into] += data


def cards(path) -> list:
    parser = _Cards()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.cards


def test_an_evaluation_alone_opens_on_its_best_design(runs: Runs, tmp_path):
    results = runs.json(runs.evaluation, "results.json")
    means = {}
    for method in results["methods"]:
        for budget in results["budgets"]:
            vals = [r["mse"] for r in results["records"]
                    if r["method"] == method and str(r["budget"]) == str(budget)]
            means[(method, str(budget))] = sum(vals) / len(vals)
    best = min(means, key=means.get)
    invoke("report", runs.evaluation, "-o", tmp_path / "r.html")
    (card,) = cards(tmp_path / "r.html")
    assert card["title"] == f"{runs.evaluation.name}: {best[0]} at budget {best[1]}"
    error = card["rows"]["error"]
    assert abs(float(error["value"]) - means[best]) <= 1e-12 * means[best]
    assert "nested CV" in error["kind"] and "held-out" in error["kind"]
    assert "each fold selects its own" in card["rows"]["features"]["text"]


def test_a_built_firmware_gives_flash_and_ram(runs: Runs, tmp_path):
    need_host_compiler()
    invoke("firmware", runs.bundle, "--target", "host", "--build", "-o", tmp_path / "fw")
    footprint = json.loads((tmp_path / "fw" / "footprint.json").read_text())
    invoke("report", runs.bundle, runs.sim, tmp_path / "fw", "-o", tmp_path / "r.html")
    (card,) = cards(tmp_path / "r.html")
    rows = card["rows"]
    assert int(rows["flash"]["value"]) == footprint["flash_bytes"]
    assert int(rows["ram"]["value"]) == footprint["ram_bytes"]
    assert "fw" in rows["flash"]["kind"] and "host" in rows["flash"]["kind"]
    path = runs.json(runs.bundle, "model.json")["path"]
    assert float(rows["error"]["value"]) == path[-1]["loo_mse"]


def test_without_simulation_or_firmware_the_summary_says_how_to_get_them(runs: Runs,
                                                                         tmp_path):
    invoke("report", runs.small, "-o", tmp_path / "r.html")
    (card,) = cards(tmp_path / "r.html")
    assert "sensorbudget simulate" in card["rows"]["compute"]["text"]
    assert "sensorbudget firmware" in card["rows"]["flash"]["text"]
    assert card["rows"]["compute"]["value"] is None


def test_a_firmware_without_footprint_is_one_error_line(runs: Runs, tmp_path):
    from sensorbudget.cli import main

    invoke("firmware", runs.bundle, "--target", "host", "-o", tmp_path / "fw")
    result = CliRunner().invoke(main, ["report", str(tmp_path / "fw"), "-o",
                                       str(tmp_path / "r.html")])
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    assert line.startswith("Error:") and "footprint.json" in line and "--build" in line
    assert not (tmp_path / "r.html").exists()


def test_a_damaged_footprint_is_one_error_line(runs: Runs, tmp_path):
    from sensorbudget.cli import main

    need_host_compiler()
    invoke("firmware", runs.bundle, "--target", "host", "--build", "-o", tmp_path / "fw")
    bad = tmp_path / "bad"
    shutil.copytree(tmp_path / "fw", bad)
    footprint = json.loads((bad / "footprint.json").read_text())
    footprint["flash_bytes"] = "4 kB"
    (bad / "footprint.json").write_text(json.dumps(footprint))
    result = CliRunner().invoke(main, ["report", str(bad), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    assert line.startswith("Error:") and "flash_bytes='4 kB'" in line


def test_the_device_accuracy_says_whether_it_is_in_sample(runs: Runs, tmp_path):
    """The replayed recordings are the training stream (in-sample) or other recordings (a
    test split), decided on their bytes: another stream under the training stream's own file
    name is a test split, the training stream's copy elsewhere in-sample."""
    from tests.fixtures import write_stream

    other = write_stream(tmp_path / "other" / runs.recordings.name, seed=1)
    copy = tmp_path / "copy" / runs.recordings.name
    copy.parent.mkdir()
    shutil.copyfile(runs.recordings, copy)
    for name, rec in (("sim_other", other), ("sim_copy", copy)):
        invoke("simulate", runs.bundle, "--recordings", rec, "--backend", "python", "--report",
               tmp_path / name)
    invoke("report", runs.bundle, tmp_path / "sim_copy", tmp_path / "sim_other", "-o",
           tmp_path / "r.html")
    text = html.unescape(tmp_path.joinpath("r.html").read_text(encoding="utf-8"))
    name = runs.recordings.name
    assert runs.json(runs.bundle, "model.json")["data"]["recordings"] == name
    assert (f"{copy}</code> (in-sample: {name} is what the bundle was trained on, so "
            f"optimistic)") in text
    assert f"{other}</code> (a test split if none of these recordings were trained on)" in text
