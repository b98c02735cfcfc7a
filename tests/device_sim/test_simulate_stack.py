"""The stack measured on the emulator where users see it (issue 28 item 2): ``simulate`` on a
firmware backend whose image paints its stack (QEMU Cortex-M, simavr) puts the high-water mark
into report.json, summary.md, the printed lines and the firmware's footprint.json, and each is
what :func:`sensorbudget.firmware_gen.build.stack_high_water` reads from the same run's log;
a backend without a painted image says the stack was not measured."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sensorbudget.device_sim.backends import available_backends
from sensorbudget.firmware_gen.build import stack_high_water
from sensorbudget.firmware_gen.targets import get_target


@pytest.mark.parametrize("backend,target,numeric", [("qemu-m4f", "mps2-an386", "float32"),
                                                    ("simavr", "arduino-uno", "q15")])
def test_simulate_reports_the_stack_high_water_mark_of_its_run(tiny, tmp_path, backend, target,
                                                               numeric):
    reason = available_backends().get(backend)
    if reason is not None:
        pytest.skip(f"backend {backend}: {reason}")
    from sensorbudget.cli import main

    bundle, rec, _ = tiny
    work, report_dir = tmp_path / "work", tmp_path / "report"
    args = ["simulate", str(bundle), "--recordings", str(rec), "--backend", backend,
            "--numeric", numeric, "--report", str(report_dir), "--workdir", str(work)]
    if numeric != "float32":
        args += ["--full-scale", "*=64"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    fw = work / f"fw-{backend}-{numeric}"
    measured = stack_high_water(fw, fw / f"{backend}.stderr.log")
    reserve = get_target(target).profile.stack_reserve
    assert measured is not None and 0 < measured < reserve
    report = json.loads((report_dir / "report.json").read_text())
    assert report["stack"]["high_water_bytes"] == measured
    assert report["stack"]["reserve_bytes"] == reserve
    line = f"stack high-water mark: {measured} bytes of a {reserve}-byte reserve, measured on"
    assert line in (report_dir / "summary.md").read_text()
    assert line in result.output
    footprint = json.loads((fw / "footprint.json").read_text())
    assert footprint["stack_high_water"] == measured
    assert footprint["stack_measured"].startswith(f"measured on {backend}")
    # the load check accepts the new field, and refuses a wrong type
    from sensorbudget.device_sim.errors import DeviceError
    from sensorbudget.device_sim.report import load_report

    assert load_report(report_dir)["stack"]["high_water_bytes"] == measured
    report["stack"]["high_water_bytes"] = -1
    (report_dir / "report.json").write_text(json.dumps(report))
    with pytest.raises(DeviceError, match="stack.high_water_bytes=-1 must be a count"):
        load_report(report_dir)


def test_a_backend_without_a_painted_image_says_not_measured(tiny, tmp_path):
    from sensorbudget.device_sim.simulate import simulate

    bundle, rec, _ = tiny
    report, _ = simulate(bundle, rec, backend="python", report_dir=tmp_path / "r", bench=False)
    assert report["stack"]["high_water_bytes"] is None
    assert report["stack"]["measured"].startswith("not measured: backend python")
    assert "not measured: backend python" in (tmp_path / "r" / "summary.md").read_text()


def test_footprint_of_a_build_says_the_stack_is_not_measured_yet(tiny, tmp_path):
    """The build runs nothing, so its footprint has no high-water mark (an old run's log in
    the folder is not read as this image's)."""
    from tests.firmware_gen.conftest import need_tools

    need_tools("make", "arm-none-eabi-gcc")
    from sensorbudget.firmware_gen import generate_firmware
    from sensorbudget.firmware_gen.build import build, format_footprint, write_firmware
    from sensorbudget.trainer.bundle.model import load_bundle

    out = write_firmware(generate_firmware(load_bundle(tiny[0]), target="mps2-an386"),
                         tmp_path / "fw")
    (out / "mps2-an386.stderr.log").write_text("sbfw stack high-water 123 bytes\n")
    fp = build(out)
    assert fp["stack_high_water"] is None and fp["stack_measured"].startswith("not measured")
    assert "stack not measured" in format_footprint(fp)
