"""Runs for the HTML report tests: two bundles of the tiny device, a measured (host firmware)
and an estimated (python) simulation, and a small evaluation; all through the CLI. And the
browser: headless Chromium through selenium (``browser``), a page loaded and drawn (``load``).

The browser skips (with the reason) where Chromium, its driver or selenium is missing; under CI
(``CI`` set) a missing browser is a failure, since .ci/run installs it."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from ..conftest import train


def invoke(*args) -> str:
    from sensorbudget.cli import main

    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@dataclass
class Runs:
    bundle: Path          # budget 4, simulated on the host firmware (measured)
    small: Path           # budget 2, simulated on the python backend (estimated)
    sim: Path
    sim_small: Path
    evaluation: Path
    recordings: Path

    def json(self, folder: Path, name: str) -> dict:
        return json.loads((folder / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def runs(tiny, tmp_path_factory) -> Runs:
    bundle, rec, sensors = tiny
    base = tmp_path_factory.mktemp("html-runs")
    small = train(rec, sensors, base / "small", 2)
    invoke("simulate", bundle, "--recordings", rec, "--backend", "host", "--report",
           base / "sim")
    invoke("simulate", small, "--recordings", rec, "--backend", "python", "--report",
           base / "sim_small")
    invoke("evaluate", rec, "--sensors", sensors, "--budgets", "1,2", "--folds", "2",
           "--methods", "greedy-joint,greedy-separate", "--report", base / "evaluation")
    return Runs(bundle, small, base / "sim", base / "sim_small", base / "evaluation", rec)


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,1000")


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install 'sensorbudget[test]')"
    if not CHROMIUM or not CHROMEDRIVER:
        return ("Chromium or its driver is missing (apt-get install chromium chromium-driver, "
                "or make deps-embedded)")
    return None


@pytest.fixture(scope="session")
def browser():
    reason = _missing()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser test: {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="sensorbudget-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def load(driver, path: Path) -> tuple:
    """(driver, the browser log of the page): ``path`` opened and every figure drawn."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("browser")                         # drop anything before this page
    driver.get(path.as_uri())
    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script("return document.body.getAttribute('data-ready')") == "1")
    return driver, driver.get_log("browser")


def need_host_compiler() -> None:
    """Skip (with the reason) where the host firmware cannot be built (no gcc)."""
    from sensorbudget.device_sim.backends import available_backends

    reason = available_backends()["host"]
    if reason is not None:
        pytest.skip(f"building host firmware: {reason}")
