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


def _summary(driver) -> list:
    """Per summary card, as drawn: its design, title, whether it is on the first screen, and
    per row its value (data-value), text, kind, listed names and whether they are displayed."""
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('#summary .card')).map(card => ({
          design: card.getAttribute('data-design'),
          title: card.querySelector('h3').textContent,
          onFirstScreen: card.getBoundingClientRect().top < window.innerHeight,
          rows: Object.fromEntries(Array.from(card.querySelectorAll('tr[data-key]')).map(
            tr => [tr.getAttribute('data-key'), {
              value: tr.querySelector('.value').getAttribute('data-value'),
              text: tr.querySelector('.value').textContent,
              kind: (tr.querySelector('.kind') || {textContent: ''}).textContent,
              names: Array.from(tr.querySelectorAll('li')).map(li => li.textContent),
              shown: Array.from(tr.querySelectorAll('.value, li')).every(
                e => e.getClientRects().length > 0 && getComputedStyle(e).visibility
                     === 'visible')}]))}));""")


def test_the_page_opens_on_each_bundles_chosen_design_with_its_summary(page, runs: Runs):
    """No click: the summary comes first, on the first screen, and shows every selected
    feature, the sensors, the error with its kind and the costs of each bundle as its
    model.json holds them, the simulation's numbers as its report.json holds them, and the
    evaluation's nested-CV error of the same design (method and budget) as results.json."""
    driver, _ = page
    cards = _summary(driver)
    assert [c["title"] for c in cards] == [
        f"{f.name}: step {runs.json(f, 'model.json')['path'][-1]['step']}"
        for f in (runs.bundle, runs.small)]
    assert cards[0]["onFirstScreen"]
    assert driver.execute_script(                          # before the first plot
        "return document.getElementById('summary').compareDocumentPosition("
        "document.querySelector('.fig')) === Node.DOCUMENT_POSITION_FOLLOWING")
    for card, folder, sim in zip(cards, (runs.bundle, runs.small), (runs.sim, runs.sim_small)):
        model, report = runs.json(folder, "model.json"), runs.json(sim, "report.json")
        rows = card["rows"]
        assert all(r["shown"] for r in rows.values())
        assert rows["features"]["names"] == model["selected"]
        assert sorted(rows["sensors"]["names"]) == sorted(model["required_sensors"])
        assert float(rows["error"]["value"]) == model["path"][-1]["loo_mse"]
        assert rows["error"]["text"] == f"{model['path'][-1]['loo_mse']:.4g}"
        assert "in-sample LOO" in rows["error"]["kind"]
        for key in ("price", "energy", "time"):
            assert float(rows[key]["value"]) == model["costs"]["total"][key], key
        energy = report["energy"]
        want = {"compute": report["cost"]["total"]["median"],
                "compute_time": energy["compute_time_s"]["median"],
                "energy_sensors": energy["energy_per_prediction_j"]["sensors"],
                "energy_compute": energy["energy_per_prediction_j"]["compute"],
                "battery_life": energy["battery_life_days"]}
        assert {k: float(rows[k]["value"]) for k in want} == want
        assert float(rows["energy"]["value"]) == pytest.approx(     # one cost model (issue
            float(rows["energy_sensors"]["value"]), rel=1e-12)        # 27): train = simulate
        assert sim.name in rows["battery_life"]["kind"]
        assert report["profile"]["name"] in rows["battery_life"]["kind"]
        assert all(r["kind"] for r in rows.values() if r["value"] is not None)
    results = runs.json(runs.evaluation, "results.json")  # the same design by nested CV
    for card, folder in zip(cards, (runs.bundle, runs.small)):
        budget = str(runs.json(folder, "model.json")["budget"])
        vals = [r["mse"] for r in results["records"] if r["method"] == "greedy-joint"
                and str(r["budget"]) == budget]
        if not vals:
            assert "nested_cv" not in card["rows"]
            continue
        row = card["rows"]["nested_cv"]
        assert float(row["value"]) == pytest.approx(sum(vals) / len(vals), rel=1e-12)
        assert "nested CV" in row["kind"] and runs.evaluation.name in row["kind"]
    assert "nested_cv" in cards[1]["rows"]                # the budget-2 bundle has one
    opened = int(cards[0]["design"])              # its panel is open, the list says which
    assert driver.execute_script("return document.getElementById('design-select').value") \
        == str(opened)
    shown = [e for e in driver.find_elements("css selector", ".design") if e.is_displayed()]
    assert [e.get_attribute("data-design") for e in shown] == [str(opened)]


def test_training_path_and_nested_cv_points_are_told_apart(page):
    """Different markers, and legend entries (as drawn) that say which is which."""
    driver, _ = page
    for kind in ("price", "sensors", "energy", "time"):
        drawn = driver.execute_script(
            "const gd = document.getElementById(arguments[0]); return {traces: gd._fullData.map("
            "t => ({name: t.name, symbol: t.marker && t.marker.symbol, mode: t.mode})), legend:"
            " Array.from(gd.querySelectorAll('.legendtext')).map(e => e.textContent), axis:"
            " gd.querySelector('.ytitle').textContent};", f"pareto-{kind}")
        loo = [t for t in drawn["traces"] if "in-sample LOO" in t["name"]]
        cv = [t for t in drawn["traces"] if "nested CV" in t["name"]]
        assert len(loo) == 2 and len(cv) == 2, drawn["traces"]
        assert {t["symbol"] for t in loo} == {"circle"}
        assert {t["symbol"] for t in cv} == {"diamond-open"}
        assert all("training path" in t["name"] and "optimistic" in t["name"] for t in loo)
        assert all(t["name"] in drawn["legend"] for t in loo + cv)
        assert "in-sample" in drawn["axis"] and "nested CV" in drawn["axis"]


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
        assert f"MSE (in-sample LOO): {entry['loo_mse']:.4g}" in text
        assert all(name in text for name in entry["added_extractors"])
        assert all(name in text for name in entry["added_sensors"])
    evaluation = [t for name, t in zip(traces(driver, "pareto-price"), hovers)
                  if "nested CV" in name["name"]]
    assert evaluation and all("criterion: held-out folds (2-fold nested cross-validation)"
                              in text and "MSE (nested CV): " in text
                              for t in evaluation for text in t)


def test_clicking_a_point_shows_that_design(page, runs: Runs):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver, _ = page
    path = runs.json(runs.bundle, "model.json")["path"]
    last = len(path) - 1
    driver.execute_script("window.sensorbudgetReport.show(null)")      # none shown
    assert not [e for e in driver.find_elements(By.CSS_SELECTOR, ".design") if e.is_displayed()]
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
