"""Runs for the HTML report tests: two bundles of the tiny device, a measured (host firmware)
and an estimated (python) simulation, and a small evaluation; all through the CLI."""

from __future__ import annotations

import json
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
