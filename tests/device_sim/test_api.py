"""sensorbudget.device_sim.api: simulate, report, compare and load against the commands they stand
under. The command, run on the same data, is the reference: the API's ``.save`` writes the same
bytes (wall-clock fields aside: report.json's ``round_trip_s``), and every saved kind read back
with ``load`` saves the same bytes again."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import sensorbudget as sb
from sensorbudget.cli import main
from sensorbudget.device_sim.api import (Comparison, Report, Simulation, calibrate, compare,
                                         kind_of)
from sensorbudget.device_sim.errors import DeviceError
from sensorbudget.firmware_gen.api import CLibrary, Firmware, OnnxModel
from sensorbudget.trainer.bundle.manifest import MANIFEST_FILE
from sensorbudget.trainer.errors import OutputError

#: report.json fields measured on the wall clock (they differ between any two runs)
WALL_CLOCK = ("round_trip_s",)


def run(*args) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def folder_bytes(path) -> dict:
    path = Path(path)
    if path.is_file():
        return {"": path.read_bytes()}
    return {p.relative_to(path).as_posix(): p.read_bytes()
            for p in sorted(path.rglob("*")) if p.is_file()}


def same_simulation(a, b) -> None:
    """Two simulation report folders hold the same files with the same bytes, report.json
    compared without its wall-clock fields (and so the manifest without its hash)."""
    fa, fb = folder_bytes(a), folder_bytes(b)
    assert sorted(fa) == sorted(fb)
    ra, rb = (json.loads(f.pop("report.json")) for f in (fa, fb))
    for field in WALL_CLOCK:
        assert ra.pop(field)["n"] == rb.pop(field)["n"] > 0
    assert ra == rb
    ma, mb = (json.loads(f.pop(MANIFEST_FILE)) for f in (fa, fb))
    assert sorted(ma["files"]) == sorted(mb["files"]) and ma["kind"] == mb["kind"]
    assert fa == fb                        # summary.md and the plots, byte for byte


def test_simulate_save_writes_what_the_command_writes(tiny, tmp_path):
    bundle, rec, _ = tiny
    output = run("simulate", bundle, "--recordings", rec, "--report", tmp_path / "cli")
    sim = sb.simulate(bundle, rec)
    assert isinstance(sim, Simulation) and sim.save(tmp_path / "api") == tmp_path / "api"
    same_simulation(tmp_path / "cli", tmp_path / "api")
    assert sim.report["bundle"]["path"] == str(bundle)
    assert f"{sim.predictions} predictions" in output and sim.mismatches == 0
    for line in sim.accuracy_lines():
        assert line in output
    assert sim.stack_line() in output
    assert (tmp_path / "api" / "summary.md").read_text() == sim.summary()


def test_simulate_refuses_a_foreign_report_folder_before_the_replay(tiny, tmp_path):
    bundle, rec, _ = tiny
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    result = CliRunner().invoke(main, ["simulate", str(bundle), "--recordings", str(rec),
                                       "--report", str(tmp_path / "mine")])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "notes.txt" in lines[0]
    assert "predictions" not in result.output                  # refused before replaying
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]
    sim = sb.simulate(bundle, rec)
    with pytest.raises(OutputError, match="not an earlier simulation report"):
        sim.save(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_simulate_of_a_bundle_object_names_its_folder_if_it_has_one(tiny, tmp_path):
    bundle, rec, _ = tiny
    loaded = sb.Bundle.load(bundle)
    in_memory = sb.Bundle(meta=loaded.meta, arrays=loaded.arrays)        # never saved
    by_path, by_loaded = sb.simulate(bundle, rec), sb.simulate(loaded, rec)
    by_memory = sb.simulate(in_memory, rec)
    assert by_path.report["bundle"]["path"] == by_loaded.report["bundle"]["path"] == str(bundle)
    assert by_memory.report["bundle"]["path"] is None
    assert "A bundle not read from a folder" in by_memory.summary()
    by_memory.report["bundle"]["path"] = str(bundle)
    for sim in (by_path, by_loaded, by_memory):
        for field in WALL_CLOCK:
            sim.report.pop(field)
    assert by_loaded.report == by_path.report == by_memory.report
    in_memory.save(tmp_path / "saved")
    assert sb.simulate(in_memory, rec).report["bundle"]["path"] == str(tmp_path / "saved")


def test_simulate_a_firmware_replays_its_bundle_numeric_and_full_scales(tiny, tmp_path):
    bundle, rec, _ = tiny
    fw = sb.firmware(bundle, target="arduino-uno", numeric="q15", full_scale={"*": 64})
    from_fw = sb.simulate(fw, rec)
    direct = sb.simulate(bundle, rec, numeric="q15", full_scale={"*": 64}, board="arduino-uno")
    from_fw.save(tmp_path / "fw")
    direct.save(tmp_path / "direct")
    same_simulation(tmp_path / "fw", tmp_path / "direct")
    assert from_fw.numeric == "q15" and from_fw.board == "arduino-uno"
    with pytest.raises(DeviceError, match="numeric='q31' differs from the firmware's 'q15'"):
        sb.simulate(fw, rec, numeric="q31")


def test_simulate_board_option_equals_the_board_parameter(tiny, tmp_path):
    bundle, rec, _ = tiny
    run("simulate", bundle, "--recordings", rec, "--report", tmp_path / "cli", "--board",
        "arduino-uno")
    sim = sb.simulate(bundle, rec, board="arduino-uno")
    sim.save(tmp_path / "api")
    same_simulation(tmp_path / "cli", tmp_path / "api")
    other = sb.simulate(bundle, rec)
    assert sim.report["profile"]["name"] == "arduino-uno" != other.report["profile"]["name"]
    assert sim.report["backend"] == other.report["backend"] == "python"


def test_measured_on_one_board_costed_on_another_both_ways(tiny, tmp_path):
    """unicorn-m4f counts the instructions of the mps2-an386 image; --board nucleo-f4 prices
    them with that board (the counts are exact, so the two runs agree to the byte)."""
    from sensorbudget.device_sim.backends import available_backends

    if available_backends()["unicorn-m4f"] is not None:
        pytest.skip(available_backends()["unicorn-m4f"])
    bundle, rec, _ = tiny
    run("simulate", bundle, "--recordings", rec, "--report", tmp_path / "cli", "--backend",
        "unicorn-m4f", "--board", "nucleo-f4")
    fw = sb.firmware(bundle, target="nucleo-f4")
    sim = sb.simulate(fw, rec, backend="unicorn-m4f")          # board: the firmware's target
    sim.save(tmp_path / "api")
    same_simulation(tmp_path / "cli", tmp_path / "api")
    assert sim.backend == "unicorn-m4f" and sim.cost["measured"] is True
    assert sim.board == sim.report["profile"]["name"] == "nucleo-f4"


def test_report_and_compare_save_what_the_commands_write(tiny, tmp_path):
    pytest.importorskip("plotly")
    bundle, rec, _ = tiny
    sim = sb.simulate(bundle, rec)
    sim.save(tmp_path / "sim")
    run("report", bundle, tmp_path / "sim", "-o", tmp_path / "cli.html", "--title", "Tiny <b>")
    page = sb.report([bundle, sim], title="Tiny <b>")
    assert isinstance(page, Report) and page.save(tmp_path / "api.html")
    assert (tmp_path / "api.html").read_bytes() == (tmp_path / "cli.html").read_bytes()
    run("compare", bundle, tmp_path / "sim", "--markdown", "-o", tmp_path / "cli.md")
    comparison = compare(bundle, tmp_path / "sim")
    assert isinstance(comparison, Comparison)
    comparison.save(tmp_path / "api.md", markdown=True)
    assert (tmp_path / "api.md").read_bytes() == (tmp_path / "cli.md").read_bytes()
    with pytest.raises(DeviceError, match="was not saved has no folder"):
        sb.report([sb.simulate(bundle, rec)])


def test_calibrate_save_writes_what_the_command_writes(tiny, tmp_path):
    bundle, rec, sensors = tiny
    sim = sb.simulate(bundle, rec)
    sim.save(tmp_path / "sim")
    output = run("calibrate", tmp_path / "sim", "--sensors", sensors, "-o", tmp_path / "cli.toml",
                 "--allow-estimated")
    done = calibrate(sensors, [sim], allow_estimated=True)
    assert done.save(tmp_path / "api.toml") == tmp_path / "api.toml"
    assert (tmp_path / "api.toml").read_bytes() == (tmp_path / "cli.toml").read_bytes()
    assert f"wrote {len(done.entries)} calibration entries" in output
    assert sensors.read_text() == (tmp_path / "api.toml").read_text()[:len(sensors.read_text())]
    with pytest.raises(DeviceError, match="estimated, not measured"):
        calibrate(sensors, [tmp_path / "sim"])


def test_report_of_an_evaluation_in_memory_is_evaluate_html(saved, tmp_path):
    pytest.importorskip("plotly")
    feats = saved["features file"]
    run("evaluate", feats, "--budgets", "1,2", "--folds", "2", "--html", tmp_path / "cli.html")
    evaluation = sb.evaluate(feats, budgets="1,2", folds=2)
    sb.report([evaluation], title=evaluation.title).save(tmp_path / "api.html")
    assert (tmp_path / "api.html").read_bytes() == (tmp_path / "cli.html").read_bytes()


@pytest.fixture(scope="module")
def saved(tiny, tmp_path_factory):
    """{kind: path} of one saved artefact of every kind, each written by its command."""
    bundle, rec, sensors = tiny
    base = tmp_path_factory.mktemp("saved")
    run("features", rec, "--sensors", sensors, "-o", base / "feats.npz")
    run("evaluate", base / "feats.npz", "--budgets", "1,2", "--folds", "2", "--report",
        base / "ev")
    run("simulate", bundle, "--recordings", rec, "--report", base / "sim")
    run("firmware", bundle, "--target", "arduino-uno", "--numeric", "q15", "-o", base / "fw")
    run("export", "c-library", bundle, "-o", base / "lib", "--name", "tiny")
    run("export", "onnx", bundle, "-o", base / "model.onnx", "--inputs", "selected")
    out = {"bundle": bundle, "features file": base / "feats.npz", "evaluation report":
           base / "ev", "simulation report": base / "sim", "firmware": base / "fw",
           "C library": base / "lib", "ONNX model": base / "model.onnx"}
    try:
        import plotly  # noqa: F401
    except ImportError:
        return out
    run("report", bundle, base / "sim", base / "ev", "-o", base / "report.html")
    return {**out, "HTML report": base / "report.html"}


TYPES = {"bundle": sb.Bundle, "features file": sb.Dataset, "evaluation report": sb.Evaluation,
         "simulation report": Simulation, "firmware": Firmware, "C library": CLibrary,
         "HTML report": Report, "ONNX model": OnnxModel}


@pytest.mark.parametrize("kind", list(TYPES))
def test_load_reads_every_kind_and_saves_the_same_bytes(saved, tmp_path, kind):
    if kind not in saved:
        pytest.skip("the HTML report needs plotly (sensorbudget[report])")
    path = saved[kind]
    assert kind_of(path) == kind
    obj = sb.load(path)
    assert type(obj) is TYPES[kind]
    again = tmp_path / ("again" + Path(path).suffix)
    obj.save(again)
    original, copy = folder_bytes(path), folder_bytes(again)
    if kind == "evaluation report":
        # report.md's title is the evaluation's (not stored in results.json); the numbers
        # are in the other files
        for files in (original, copy):
            files.pop("report.md"), files.pop(MANIFEST_FILE)
    assert copy == original


def test_a_firmware_read_back_names_the_bundle_to_simulate(saved, tiny):
    fw = sb.load(saved["firmware"])
    sha = json.loads((saved["firmware"] / "firmware.json").read_text())["bundle_sha256"]
    with pytest.raises(DeviceError, match=f"does not hold its bundle.*{sha[:12]}"):
        sb.simulate(fw, tiny[1])


def test_load_of_a_marker_file_reads_its_folder(saved):
    sim = sb.load(saved["simulation report"] / "report.json")
    assert sim.report == json.loads((saved["simulation report"] / "report.json").read_text())
    assert sb.load(saved["firmware"] / "firmware.json").numeric == "q15"


def test_load_refuses_what_sensorbudget_did_not_write(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(DeviceError, match="notes.txt' is not a file sensorbudget reads back"):
        sb.load(tmp_path / "notes.txt")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DeviceError, match="holds none of model.json"):
        sb.load(tmp_path / "empty")
    with pytest.raises(DeviceError, match="does not exist"):
        sb.load(tmp_path / "missing")
    (tmp_path / "page.html").write_text("<html><title>x</title></html>")
    with pytest.raises(DeviceError, match="not an HTML report written by sensorbudget"):
        sb.load(tmp_path / "page.html")


def test_without_plotly_the_page_is_refused_in_one_line(tiny, tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "plotly", None)    # import plotly fails
    with pytest.raises(DeviceError, match=r"needs plotly: pip install 'sensorbudget\[report\]'"):
        sb.report([tiny[0]])
    result = CliRunner().invoke(main, ["report", str(tiny[0]), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and not (tmp_path / "r.html").exists()
    assert result.output.strip().splitlines() == [
        "Error: the HTML report needs plotly: pip install 'sensorbudget[report]'"]
