"""The report page names the outer folds evaluate made: stratified group K-fold for the
recordings of a classification task (issue 27: StratifiedGroupKFold), group K-fold otherwise,
as results.json's config says (the page reads the flag; it is not guessed from the task)."""

from __future__ import annotations

import html
import json

from tests.fixtures import sensor_spec, write_sensors_toml
from tests.sensorbudget.test_newuser_api import _write_ts

from .conftest import invoke


def _folds_sentence(page):
    text = html.unescape(page.read_text(encoding="utf-8"))
    return text.split("-fold nested cross-validation (", 1)[1].split(")", 1)[0]


def test_the_page_names_stratified_group_folds_as_results_json_says(tmp_path):
    ts = _write_ts(tmp_path / "tiny.ts")
    spec = sensor_spec(sensors=({"name": "imu", "channels": ["dim0", "dim1"],
                                 "unit_price": 1.0, "energy_per_reading_j": 1e-6},),
                       features=[{"channels": ["imu"], "extractors": ["mean", "std"]}],
                       window=10, hop=10, rate_hz=10)
    toml = write_sensors_toml(tmp_path / "ts.sensors.toml", spec)
    invoke("evaluate", ts, "--sensors", toml, "--budgets", "1", "--folds", 3, "--methods",
           "greedy-joint", "--report", tmp_path / "ev")
    results = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert results["config"]["grouped"] is True and results["config"]["stratified"] is True
    invoke("report", tmp_path / "ev", "-o", tmp_path / "a.html")
    assert _folds_sentence(tmp_path / "a.html") == "stratified group K-fold"
    results["config"]["stratified"] = False               # the same run, unstratified folds
    (tmp_path / "ev" / "results.json").write_text(json.dumps(results))
    invoke("report", tmp_path / "ev", "-o", tmp_path / "b.html")
    assert _folds_sentence(tmp_path / "b.html") == "group K-fold"
