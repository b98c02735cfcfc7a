"""The HTML report in headless Chromium (Debian chromium + chromium-driver, driven by selenium):
it loads with no console error, the plotted data equal the runs' JSON files, hovering a point
names its design and criterion, and clicking one shows that design.

The browser comes from conftest.py (it skips without Chromium, and fails under CI).
"""

from __future__ import annotations

import pytest

from .conftest import Runs, invoke, load


@pytest.fixture(scope="module")
def page(browser, runs: Runs, tmp_path_factory):
    """The report of both bundles, both simulations and the evaluation, loaded and drawn."""
    out = tmp_path_factory.mktemp("page") / "report.html"
    invoke("report", runs.bundle, runs.small, runs.sim, runs.sim_small, runs.evaluation,
           "-o", out)
    return load(browser, out)


def traces(driver, fig_id: str) -> list:
    return driver.execute_script(
        "return document.getElementById(arguments[0]).data.map(t => ({name: t.name, "
        "x: Array.from(t.x || []), y: Array.from(t.y || [])}));", fig_id)


def test_the_page_loads_without_console_errors(page):
    _, log = page
    assert [e for e in log if e["level"] in ("SEVERE", "WARNING")] == []


@pytest.mark.parametrize("kind", ["price", "sensors", "energy", "time"])
def test_pareto_points_are_the_bundles_paths(page, runs: Runs, kind):
    driver, _ = page
    by_name = {t["name"]: t for t in traces(driver, f"pareto-{kind}")}
    for folder in (runs.bundle, runs.small):
        path = runs.json(folder, "model.json")["path"]
        t = by_name[f"{folder.name}: training path, in-sample LOO (optimistic)"]
        assert t["x"] == [e["costs"][kind] for e in path]
        assert t["y"] == [e["loo_mse"] for e in path]


def test_evaluation_curves_are_the_fold_means(page, runs: Runs):
    driver, _ = page
    results = runs.json(runs.evaluation, "results.json")
    for m, measure in enumerate(results["measures"]):
        by_name = {t["name"]: t for t in traces(driver, f"eval-0-{m}")}
        for method in results["methods"]:
            want = []
            for budget in results["budgets"]:
                vals = [r[measure] for r in results["records"]
                        if r["method"] == method and str(r["budget"]) == str(budget)]
                want.append(sum(vals) / len(vals))
            assert by_name[method]["x"] == [str(b) for b in results["budgets"]]
            assert by_name[method]["y"] == pytest.approx(want, rel=1e-12)


def test_timeline_is_device_and_ground_truth_of_the_report(page, runs: Runs):
    driver, _ = page
    for k, folder in enumerate((runs.sim, runs.sim_small)):
        s = runs.json(folder, "report.json")["series"]
        scale = driver.execute_script(
            f"return document.getElementById('sim-{k}-time-0').layout.meta.time_scale")
        truth, device = traces(driver, f"sim-{k}-time-0")
        assert truth["name"] == "ground truth (recordings)"
        assert truth["y"] == s["truth"][0]
        assert device["y"] == s["device"][0]
        assert device["x"] == pytest.approx([t / scale for t in s["time_s"]], rel=1e-12)


def test_cost_histogram_counts_every_measured_prediction(page, runs: Runs):
    driver, _ = page
    costs = [c for c in runs.json(runs.sim, "report.json")["series"]["cost"] if c is not None]
    (hist,) = traces(driver, "sim-0-hist")
    if len(set(costs)) <= 30:          # one bar per distinct cost
        assert hist["x"] == [f"{v:g}" for v in sorted(set(costs))]
        assert sum(hist["y"]) == len(costs)
    else:
        assert sorted(hist["x"]) == sorted(costs)


def _point(driver, fig_id: str, trace: int, index: int):
    return driver.execute_script(
        "return document.getElementById(arguments[0]).querySelectorAll("
        "'.scatterlayer .trace')[arguments[1]].querySelectorAll('path.point')[arguments[2]];",
        fig_id, trace, index)


def test_hover_names_the_design_and_its_criterion(page, runs: Runs):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.support.ui import WebDriverWait

    driver, _ = page
    path = runs.json(runs.bundle, "model.json")["path"]
    ActionChains(driver).move_to_element(_point(driver, "pareto-price", 0, 0)).perform()
    text = WebDriverWait(driver, 10).until(lambda d: d.execute_script(
        "const h = document.querySelector('#pareto-price .hovertext');"
        "return h ? h.textContent : null;"))
    # the budget-2 bundle's path starts the same and the evaluation's budget-1 designs lie
    # there too: one point is on top, the tooltip names every design on that spot
    assert f"{runs.bundle.name}: step 1" in text and f"{runs.small.name}: step 1" in text
    hovers = driver.execute_script(
        "return document.getElementById('pareto-price').data.map(t => t.hovertext || []);")
    for entry, text in zip(path, hovers[0]):
        assert f"{runs.bundle.name}: step {entry['step']}" in text
        assert "criterion: LOO (leave-one-out" in text
        assert all(name in text for name in entry["added_extractors"])
        assert all(name in text for name in entry["added_sensors"])
    evaluation = [t for name, t in zip(traces(driver, "pareto-price"), hovers)
                  if "nested CV" in name["name"]]
    assert evaluation and all("criterion: held-out folds (2-fold nested cross-validation)"
                              in text for t in evaluation for text in t)


def test_clicking_a_point_shows_that_design(page, runs: Runs):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver, _ = page
    path = runs.json(runs.bundle, "model.json")["path"]
    last = len(path) - 1
    ActionChains(driver).move_to_element(_point(driver, "pareto-price", 0, last)).click() \
        .perform()
    shown = WebDriverWait(driver, 10).until(lambda d: [
        e for e in d.find_elements(By.CSS_SELECTOR, ".design") if e.is_displayed()])
    assert len(shown) == 1
    text = shown[0].text
    assert f"{runs.bundle.name}: step {path[-1]['step']}" in text
    for entry in path:                                   # the selection path up to it
        assert ", ".join(entry["added_extractors"]) in text
    sim = runs.json(runs.sim, "report.json")             # its simulation on the host board
    assert runs.sim.name in text and sim["profile"]["name"] in text
    assert "battery life" in text
