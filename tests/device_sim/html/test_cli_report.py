"""``sensorbudget report`` and ``--html`` on train, evaluate, simulate and compare: one
self-contained, deterministic page; bad input is one ``Error:`` line with exit code 2."""

from __future__ import annotations

import json
import sys
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from .conftest import Runs, invoke


class _Scan(HTMLParser):
    """Elements that would load something (src/href) and the JSON script blocks."""

    def __init__(self):
        super().__init__()
        self.loads, self.blocks, self._id = [], {}, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.loads += [(tag, attrs[a]) for a in ("src", "href") if a in attrs]
        self._id = attrs.get("id") if attrs.get("type") == "application/json" else None

    def handle_data(self, data):
        if self._id:
            self.blocks[self._id] = self.blocks.get(self._id, "") + data

    def handle_endtag(self, tag):
        self._id = None


def scan(path) -> _Scan:
    s = _Scan()
    s.feed(path.read_text(encoding="utf-8"))
    return s


def run(*args):
    from sensorbudget.cli import main

    return CliRunner().invoke(main, [str(a) for a in args])


def test_the_page_loads_nothing_and_is_the_same_every_time(runs: Runs, tmp_path):
    args = (runs.bundle, runs.small, runs.sim, runs.sim_small, runs.evaluation)
    invoke("report", *args, "-o", tmp_path / "a.html")
    invoke("report", *args, "-o", tmp_path / "b.html")
    a = (tmp_path / "a.html").read_bytes()
    assert a == (tmp_path / "b.html").read_bytes()
    page = scan(tmp_path / "a.html")
    assert page.loads == []                       # no script src, no stylesheet link
    assert b"Plotly" in a and b"<script src" not in a
    data = json.loads(page.blocks["sb-data"])
    assert [r["name"] for r in data["runs"]] == [runs.bundle.name, runs.small.name]
    assert [s["name"] for s in data["simulations"]] == [runs.sim.name, runs.sim_small.name]
    assert [e["name"] for e in data["evaluations"]] == [runs.evaluation.name]
    final = [d for d in data["designs"] if d["run"] == runs.bundle.name][-1]
    assert final["simulations"] == [0]            # the simulated bundle's last step


def test_a_simulation_brings_in_its_bundle(runs: Runs, tmp_path):
    invoke("report", runs.sim, "-o", tmp_path / "r.html")
    data = json.loads(scan(tmp_path / "r.html").blocks["sb-data"])
    assert [r["path"] for r in data["runs"]] == [str(runs.bundle)]
    assert data["simulations"][0]["design"] == len(data["designs"]) - 1


@pytest.mark.parametrize("make_args, message", [
    (lambda r, t: [t / "missing"], "does not exist"),
    (lambda r, t: [t], "holds none of model.json"),
    (lambda r, t: [r.bundle, "-o", "/dev/null"], "/dev/null"),
])
def test_bad_input_is_one_error_line(runs: Runs, tmp_path, make_args, message):
    args = make_args(runs, tmp_path)
    if "-o" not in args:
        args += ["-o", tmp_path / "r.html"]
    result = run("report", *args)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:") and message in lines[0]
    assert not (tmp_path / "r.html").exists()


def test_a_damaged_report_json_is_one_error_line(runs: Runs, tmp_path):
    bad = tmp_path / "sim"
    bad.mkdir()
    report = runs.json(runs.sim, "report.json")
    report["cost"]["unit"] = "furlongs"
    (bad / "report.json").write_text(json.dumps(report))
    result = run("report", bad, "-o", tmp_path / "r.html")
    assert result.exit_code == 2 and result.output.startswith("Error:")
    assert "cost.unit" in result.output


def test_without_plotly_the_error_says_what_to_install(runs: Runs, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "plotly", None)
    result = run("report", runs.bundle, "-o", tmp_path / "r.html")
    assert result.exit_code == 2
    assert "sensorbudget[report]" in result.output


@pytest.mark.parametrize("command", ["train", "simulate", "compare", "evaluate"])
def test_a_bad_html_target_is_refused_before_anything_is_written(runs: Runs, tiny, tmp_path,
                                                                  command):
    _, rec, sensors = tiny
    args = {"train": ["train", rec, "--sensors", sensors, "--budget", 2, "-o", tmp_path / "b"],
            "simulate": ["simulate", runs.bundle, "--recordings", rec, "--report",
                         tmp_path / "s"],
            "compare": ["compare", runs.sim, runs.sim_small, "-o", tmp_path / "c.txt"],
            "evaluate": ["evaluate", rec, "--sensors", sensors, "--budgets", "1", "--folds", 2,
                         "--report", tmp_path / "e"]}[command]
    result = run(*args, "--html", "/dev/null")
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1].startswith("Error: output '/dev/null' is a device")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_html_option_of_train_simulate_compare_evaluate(runs: Runs, tiny, tmp_path):
    _, rec, sensors = tiny
    invoke("train", rec, "--sensors", sensors, "--budget", 2, "-o", tmp_path / "b",
           "--html", tmp_path / "train.html")
    invoke("simulate", tmp_path / "b", "--recordings", rec, "--report", tmp_path / "s",
           "--html", tmp_path / "sim.html")
    invoke("compare", runs.sim, runs.sim_small, "--html", tmp_path / "compare.html")
    invoke("evaluate", rec, "--sensors", sensors, "--budgets", "1", "--folds", 2,
           "--methods", "greedy-joint", "--html", tmp_path / "eval.html")
    blocks = {n: json.loads(scan(tmp_path / f"{n}.html").blocks["sb-data"])
              for n in ("train", "sim", "compare", "eval")}
    assert [r["name"] for r in blocks["train"]["runs"]] == ["b"]
    assert [s["name"] for s in blocks["sim"]["simulations"]] == ["s"]
    assert blocks["sim"]["runs"][0]["path"] == str(tmp_path / "b")
    assert [s["name"] for s in blocks["compare"]["simulations"]] == [runs.sim.name,
                                                                     runs.sim_small.name]
    (ev,) = blocks["eval"]["evaluations"]
    assert ev["methods"] == ["greedy-joint"] and ev["budgets"] == ["1"]


def test_a_plain_table_bundle_is_plotted_against_its_feature_cost(tmp_path):
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 6))
    np.savez(tmp_path / "t.npz", X=X, Y=X[:, :2] + 0.1 * rng.normal(size=(60, 2)))
    invoke("train", tmp_path / "t.npz", "--budget", 3, "-o", tmp_path / "b",
           "--html", tmp_path / "r.html")
    figures = json.loads(scan(tmp_path / "r.html").blocks["sb-figures"])
    path = json.loads((tmp_path / "b" / "model.json").read_text())["path"]
    (pareto,) = [f for f in figures if f.get("pareto")]    # no sensors: no sensor-cost plots
    assert pareto["layout"]["xaxis"]["title"]["text"].startswith("feature cost")
    assert pareto["data"][0]["x"] == [e["costs"]["price"] for e in path]
    assert pareto["data"][0]["y"] == [e["loo_mse"] for e in path]


def test_nan_in_a_report_is_drawn_as_a_gap(runs: Runs, tmp_path):
    sim = tmp_path / "sim"
    sim.mkdir()
    text = (runs.sim / "report.json").read_text()
    report = json.loads(text)
    report["series"]["truth"][0][0] = float("nan")            # json writes it as NaN
    (sim / "report.json").write_text(json.dumps(report))
    invoke("report", sim, "-o", tmp_path / "r.html")
    figures = json.loads(scan(tmp_path / "r.html").blocks["sb-figures"])
    truth = next(f for f in figures if f["id"] == "sim-0-time-0")["data"][0]["y"]
    assert truth[0] is None and truth[1:] == report["series"]["truth"][0][1:]
