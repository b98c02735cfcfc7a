"""Run files the report reads that miss parts (the py_pages fuzz target's findings, issue 33):
the page is written without a traceback, the missing values shown as "-" or left out."""

from __future__ import annotations

import json
import shutil

from .conftest import Runs, invoke


def _edited(runs: Runs, tmp_path, source, name: str, edit) -> object:
    folder = tmp_path / source.name
    shutil.copytree(source, folder)
    doc = json.loads((folder / name).read_text())
    edit(doc)
    (folder / name).write_text(json.dumps(doc))
    return folder


def _data(path) -> dict:
    return json.loads(_data_block(path, "sb-data"))


def test_records_without_their_budget_give_no_design(runs: Runs, tmp_path):
    """Every record's "budget" renamed: no record belongs to a (method, budget) cell (the
    report crashed with KeyError 'mse')."""
    def edit(doc):
        doc["records"] = [{("budgets" if k == "budget" else k): v for k, v in r.items()}
                          for r in doc["records"]]

    folder = _edited(runs, tmp_path, runs.evaluation, "results.json", edit)
    invoke("report", folder, "-o", tmp_path / "r.html")
    data = _data(tmp_path / "r.html")
    assert data["designs"] == []
    assert all(c["mse"] == {"mean": None, "std": None} for c in data["evaluations"][0]["cells"])


def test_records_without_n_features_show_a_dash(runs: Runs, tmp_path):
    """No "n_features" in the records (the tooltip crashed formatting None)."""
    def edit(doc):
        for r in doc["records"]:
            del r["n_features"]

    folder = _edited(runs, tmp_path, runs.evaluation, "results.json", edit)
    invoke("report", folder, "-o", tmp_path / "r.html")
    figures = json.loads(_data_block(tmp_path / "r.html", "sb-figures"))
    hovers = [h for f in figures if f.get("pareto") for t in f["data"]
              for h in t.get("hovertext") or []]
    assert hovers and all("features: - (mean over folds)" in h for h in hovers)


def test_a_series_without_recordings_is_left_out(runs: Runs, tmp_path):
    """report.json ``series`` without its recordings' names: no timeline, the rest shown."""
    folder = _edited(runs, tmp_path, runs.sim, "report.json",
                     lambda doc: doc["series"].pop("recordings"))
    invoke("report", folder, "-o", tmp_path / "r.html")
    figures = json.loads(_data_block(tmp_path / "r.html", "sb-figures"))
    ids = [f["id"] for f in figures]
    assert "sim-0-time-0" not in ids and "sim-0-hist" in ids


def _data_block(path, block: str) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.index(f'<script type="application/json" id="{block}">')
    start = text.index(">", start) + 1
    return text[start:text.index("</script>", start)]
