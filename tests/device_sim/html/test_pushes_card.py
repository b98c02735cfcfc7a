"""The HTML report's summary card shows a simulation's compute per prediction by part, as its
report.json holds it (issue 28 item 5): pushes, window pass, model, their total and the first
window, each with its unit and the predictions it is over; in headless Chromium (conftest.py),
on the same ``simulate --backend unicorn-m4f`` run that tests/device_sim/test_pushes.py checks
against the function-by-function measurement."""

from __future__ import annotations

import json

from .conftest import invoke, load
from .test_browser import _summary

ROWS = {"pushes": "pushes", "window_pass": "extractors", "model": "model",
        "first_window": "first_window", "compute": "total"}


def test_the_card_shows_each_part_of_the_compute_as_the_report(browser, tiny, unicorn_sim,
                                                                tmp_path):
    bundle, _, _ = tiny
    sim, _, _ = unicorn_sim
    out = tmp_path / "report.html"
    invoke("report", bundle, sim, "-o", out)
    driver, log = load(browser, out)
    assert [e for e in log if e["level"] in ("SEVERE", "WARNING")] == []
    (card,) = _summary(driver)
    cost = json.loads((sim / "report.json").read_text())["cost"]
    rows = card["rows"]
    for key, part in ROWS.items():
        row = rows[key]
        assert row["shown"]
        assert float(row["value"]) == cost[part]["median"], key
        assert row["text"] == f"{cost[part]['median']:.4g} instructions (measured)", key
        assert "unicorn-m4f" in row["kind"]
    assert cost["predictions"] in rows["pushes"]["kind"]
    assert "each segment's first prediction" in rows["first_window"]["kind"]


def test_the_card_of_an_older_image_says_pushes_not_measured(tiny, tmp_path):
    """A report of an image that answers STATS in 9 bytes (no pushes): the card's pushes and
    first-window rows say why instead of a number; the compute row is window pass + model."""
    from sensorbudget.device_sim.backends import PythonBackend
    from sensorbudget.device_sim.fake import FakeDevice
    from sensorbudget.device_sim.replay import replay
    from sensorbudget.device_sim.report import build_report, write_report

    from ..conftest import model_of, recordings_of
    from .test_summary import cards

    bundle, rec, _ = tiny
    model = model_of(bundle)
    rset = recordings_of(rec, model)
    backend = PythonBackend(model, device=FakeDevice(model, costs=(500, 40)))
    report = build_report(replay(backend, model, rset), backend, model, rset,
                          bundle_path=bundle, recordings_path=rec, battery_wh=3.7)
    write_report(tmp_path / "old", report)
    invoke("report", bundle, tmp_path / "old", "-o", tmp_path / "r.html")
    (card,) = cards(tmp_path / "r.html")
    rows = card["rows"]
    note = report["cost"]["pushes_note"]
    assert note.startswith("pushes not measured (image built before")
    for key in ("pushes", "first_window"):
        assert rows[key]["value"] is None and rows[key]["text"] == note, key
    assert float(rows["window_pass"]["value"]) == 500 and float(rows["model"]["value"]) == 40
    assert float(rows["compute"]["value"]) == 540
