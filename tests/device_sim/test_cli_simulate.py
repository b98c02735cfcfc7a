"""``sensorbudget simulate | compare | calibrate`` end to end (CliRunner)."""

import json
import tomllib
from functools import partial

import click
import pytest
from click.testing import CliRunner

from sensorbudget.device_sim.backends import available_backends
from sensorbudget.cli_simulate import calibrate_command, compare_command, simulate_command
from sensorbudget.trainer.sensing.sensors import parse_sensor_spec

from .conftest import TINY_SENSORS


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def simulate(runner):
    return partial(runner.invoke, simulate_command)


def simulate_ok(simulate, tiny, out, *extra):
    bundle, rec, _ = tiny
    result = simulate([str(bundle), "--recordings", str(rec), "--report", str(out), *extra],
                      catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text()), result.output


def test_simulate_python_writes_the_report(simulate, tiny, tmp_path):
    report, output = simulate_ok(simulate, tiny, tmp_path / "rep")
    assert "0 mismatches" in output and f"report: {tmp_path / 'rep' / 'summary.md'}" in output
    for key in ("backend", "predictions", "mismatches", "lost", "instructions", "energy"):
        assert key in report
    assert report["backend"] == "python" and report["mismatches"] == 0 and report["lost"] == 0
    assert report["predictions"] == report["delivered"] > 40
    stats = report["instructions"]
    assert set(stats["extractors"]) >= {"min", "median", "max"} and stats["measured"] is False
    assert report["cost"]["method"].startswith("estimated")
    assert report["energy"]["deadline_s"] == pytest.approx(4 / 20)
    for png in ("cost_histogram.png", "cost_breakdown.png", "timeline.png"):
        assert (tmp_path / "rep" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "**estimated**" in (tmp_path / "rep" / "summary.md").read_text()


def test_simulate_on_the_host_firmware_measures(simulate, tiny, tmp_path):
    if available_backends()["host"] is not None:
        pytest.skip(available_backends()["host"])
    report, _ = simulate_ok(simulate, tiny, tmp_path / "rep", "--backend", "host",
                            "--numeric", "q15", "--full-scale", "64")
    assert report["backend"] == "host" and report["numeric"] == "q15"
    assert report["mismatches"] == 0 and report["cost"]["measured"] is True
    assert report["nanoseconds"]["model"]["median"] >= 0
    assert report["cost"]["bench"]["model"]["unit"] == "nanoseconds"


def test_mismatches_fail_the_command(simulate, tiny, tmp_path, monkeypatch):
    import sensorbudget.device_sim.simulate as sim

    real = sim.simulate

    def broken(*args, **kwargs):
        report, result = real(*args, **kwargs)
        return dict(report, mismatches=3), result

    monkeypatch.setattr(sim, "simulate", broken)
    bundle, rec, _ = tiny
    result = simulate([str(bundle), "--recordings", str(rec), "--report", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert "3 of" in result.output and "differ from the Python reference" in result.output


def test_option_validation(simulate, tiny, tmp_path):
    bundle, rec, _ = tiny
    result = simulate([str(bundle), "--recordings", str(rec), "--report", str(tmp_path),
                       "--backend", "fpga"])
    assert result.exit_code == 2 and "'fpga' is not one of" in result.output
    with pytest.raises(click.BadParameter, match="neither a number"):
        simulate_command.make_context("simulate", [str(bundle), "--recordings", str(rec),
                                                   "--report", "x", "--rate", "fast"])
    ctx = simulate_command.make_context("simulate", [
        str(bundle), "--recordings", str(rec), "--report", "x", "--rate", "recorded",
        "--backend", "serial:socket://127.0.0.1:9", "--full-scale", "t=8", "--full-scale", "4"])
    assert ctx.params["rate"] == "recorded" and ctx.params["backend"].startswith("serial:")
    assert ctx.params["full_scale"] == {"t": 8.0, "*": 4.0}


def test_unreachable_serial_device_is_a_clean_error(simulate, tiny, tmp_path):
    bundle, rec, _ = tiny
    result = simulate([str(bundle), "--recordings", str(rec), "--report", str(tmp_path / "r"),
                       "--backend", "serial:/dev/does-not-exist"])
    assert result.exit_code == 2 and "Error: cannot open" in result.output


def test_silent_device_is_a_clear_timeout(simulate, tiny, tmp_path):
    from sensorbudget.device_sim.fake import FakeDevice
    from sensorbudget.device_sim.transports import PtyDevice

    from .conftest import model_of

    bundle, rec, _ = tiny
    with PtyDevice(FakeDevice(model_of(bundle), stop_after=0)) as pty:
        result = simulate([str(bundle), "--recordings", str(rec), "--report", str(tmp_path),
                           "--backend", f"serial:{pty.path}", "--timeout", "0.05",
                           "--retries", "1"])
    assert result.exit_code == 2
    assert "Error: the device does not answer" in result.output
    assert "no answer to HELLO (seq 0) after 2 attempt(s) of 0.05 s each" in result.output


def test_compare_reports_and_bundles(runner, simulate, tiny, tmp_path):
    simulate_ok(simulate, tiny, tmp_path / "f32")
    simulate_ok(simulate, tiny, tmp_path / "q15", "--numeric", "q15", "--full-scale", "64")
    result = runner.invoke(compare_command, [str(tmp_path / "f32"), str(tmp_path / "q15"),
                                             "--markdown", "-o", str(tmp_path / "cmp.md")],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "| mismatches | 0 | 0 |" in result.output
    assert "python (q15)" in (tmp_path / "cmp.md").read_text()
    result = runner.invoke(compare_command, [str(tmp_path / "f32"), str(tiny[0])],
                           catch_exceptions=False)
    assert result.exit_code == 0 and "bundle (estimate)" in result.output
    result = runner.invoke(compare_command, [str(tmp_path), str(tiny[0])])
    assert result.exit_code == 2 and "neither a simulation report nor a bundle" in result.output


def test_calibrate_keeps_comments_and_replaces_its_block(runner, simulate, tiny, tmp_path):
    report, _ = simulate_ok(simulate, tiny, tmp_path / "rep")
    sensors = tmp_path / "sensors.toml"
    sensors.write_text(TINY_SENSORS)
    invoke = partial(runner.invoke, calibrate_command)
    result = invoke([str(tmp_path / "rep"), "--sensors", str(sensors)])
    assert result.exit_code == 2 and "estimated, not measured" in result.output
    assert sensors.read_text() == TINY_SENSORS
    for _ in range(2):      # a second run replaces the block instead of appending
        result = invoke([str(tmp_path / "rep"), "--sensors", str(sensors), "--allow-estimated"],
                        catch_exceptions=False)
        assert result.exit_code == 0, result.output
    text = sensors.read_text()
    assert text.startswith(TINY_SENSORS.rstrip("\n"))
    assert "a comment that calibrate must keep" in text
    assert text.count(">>> sensorbudget calibrate") == 1
    entries = tomllib.loads(text)["calibration"]
    measured = [e for e in entries if e.get("measured", True)]
    assert {e["extractor"] for e in measured} == set(report["bundle"]["required_extractors"])
    assert all(e["target"] == report["profile"]["name"] and e["compute_instructions"] > 0
               and e["compute_energy_j"] > 0 for e in entries)
    # every other extractor of the file keeps a (marked) estimate: none looks free
    names = {f.name for f in parse_sensor_spec(tomllib.loads(TINY_SENSORS)).features}
    assert names == {e["extractor"] for e in entries}
    estimated = [e for e in entries if e.get("measured") is False]
    assert estimated and all("not measured" in e["method"] for e in estimated)
    assert "not measured, op-count estimates" in result.output
    other = tmp_path / "other.toml"
    result = invoke([str(tmp_path / "rep"), "--sensors", str(sensors), "--allow-estimated",
                     "-o", str(other)], catch_exceptions=False)
    assert result.exit_code == 0 and other.read_text() == text


def test_calibrate_with_measured_unicorn_counts(runner, simulate, tiny, tmp_path):
    if available_backends()["unicorn-m4f"] is not None:
        pytest.skip(available_backends()["unicorn-m4f"])
    report, _ = simulate_ok(simulate, tiny, tmp_path / "rep", "--backend", "unicorn-m4f")
    assert report["cost"]["measured"] and report["mismatches"] == 0
    sensors = tmp_path / "sensors.toml"
    sensors.write_text(TINY_SENSORS)
    result = runner.invoke(calibrate_command, [str(tmp_path / "rep"), "--sensors", str(sensors)],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    entries = [e for e in tomllib.loads(sensors.read_text())["calibration"]
               if e.get("measured", True)]
    assert {e["extractor"] for e in entries} == set(report["bundle"]["required_extractors"])
    assert all(e["method"].startswith("apportioned: measured extractor total") for e in entries)
    total = sum(e["compute_instructions"] for e in entries)      # window pass + pushes
    steady = report["instructions"]
    assert total == pytest.approx(steady["extractors"]["median"] + steady["pushes"]["median"],
                                  rel=0.05)


def test_progress_flag_counts_every_sample_sent(simulate, tiny, tmp_path):
    """--progress draws elapsed/ETA on stderr and ends at the number of usable samples: the
    recording's rows minus its row with an empty cell (both pieces are longer than a window)."""
    bundle, rec, _ = tiny
    rows = [line.split(",") for line in rec.read_text().splitlines()[1:]]
    usable = sum(all(cell.strip() for cell in row) for row in rows)
    result = simulate([str(bundle), "--recordings", str(rec), "--report", str(tmp_path / "r"),
                       "--progress"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["segments"] == 2 and report["samples_sent"] == usable == len(rows) - 1
    assert "replaying (samples) [" in result.stderr and "ETA" in result.stderr
    assert f"{usable}/{usable} 100%" in result.stderr
    quiet = simulate([str(bundle), "--recordings", str(rec), "--report", str(tmp_path / "q")],
                     catch_exceptions=False)
    assert "ETA" not in quiet.stderr
