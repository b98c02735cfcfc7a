"""The HTML report of a bundle trained with ``train --board`` (issue 28): the RAM and flash each
step of its path adds are plotted (``pareto-ram``, ``pareto-flash``) with the path's values."""

from __future__ import annotations

from click.testing import CliRunner

from tests.firmware_gen import generative as G
from tests.firmware_gen.test_memory import SIX


def test_report_plots_ram_and_flash_per_step_of_a_board_bundle(tmp_path):
    from sensorbudget.cli import main
    from sensorbudget.device_sim.html.figures import pareto_figures
    from sensorbudget.device_sim.html.runs import collect
    from sensorbudget.trainer.bundle.model import load_bundle

    recordings = G.write_recordings(tmp_path / "recordings", 2026)
    (tmp_path / "six.sensors.toml").write_text(G.sensors_toml(G.CHANNELS, 64, 32, SIX))
    out = tmp_path / "bundle"
    result = CliRunner().invoke(main, ["train", str(recordings), "--sensors",
                                       str(tmp_path / "six.sensors.toml"), "--budget", "6",
                                       "--board", "arduino-uno", "-o", str(out)])
    assert result.exit_code == 0, result.output
    path = load_bundle(out).meta["path"]
    figures = {f["id"]: f for f in pareto_figures(collect([out]))}
    for kind in ("ram", "flash"):
        (line,) = [t for t in figures[f"pareto-{kind}"]["data"] if t["mode"] == "lines+markers"]
        assert line["x"] == [e["costs"][kind] for e in path]
        assert figures[f"pareto-{kind}"]["layout"]["xaxis"]["title"]["text"].startswith(
            "static RAM" if kind == "ram" else "flash")
