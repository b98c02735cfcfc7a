"""``sensorbudget targets``, and ``firmware`` / ``flash`` on the board targets from the command
line: one-line errors with exit code 2, the fit report, the flash command per board."""

import json
from functools import partial

import pytest
from click.testing import CliRunner

from sensorbudget.firmware_gen.profiles import PROFILES
from sensorbudget.cli import main
from tests.firmware_gen.conftest import need_tools


@pytest.fixture
def invoke():
    return partial(CliRunner().invoke, main)


def test_targets_lists_every_target_with_its_sources(invoke):
    result = invoke(["targets"], catch_exceptions=False)
    assert result.exit_code == 0
    for name in ("host", "nucleo-f4", "arduino-uno", "mps2-an386", "mps2-an385"):
        assert f"\n{name}: " in "\n" + result.output
    assert "STM32F401RE" in result.output and "DS10086" in result.output
    assert "also called: avr" in result.output and "DWT CYCCNT" in result.output
    result = invoke(["targets", "cortex-m4f", "--json"], catch_exceptions=False)
    data = json.loads(result.output)
    assert list(data) == ["mps2-an386"] and data["mps2-an386"]["aliases"] == ["cortex-m4f"]
    assert data["mps2-an386"]["clock_hz"] == PROFILES["mps2-an386"].clock_hz


def test_unknown_target_is_one_line(invoke):
    result = invoke(["targets", "stm32"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "Error: target='stm32' is not one of host, mps2-an386, mps2-an385, nucleo-f4, "
        "arduino-uno, hifive1, ch32v003, cortex-m4f, cortex-m3, avr"]


def test_firmware_build_reports_the_fit_and_flash_copies_to_the_drive(invoke, bm_bundle,
                                                                      tmp_path):
    need_tools("make", "arm-none-eabi-gcc")
    out = tmp_path / "fw"
    result = invoke(["firmware", str(bm_bundle.path), "--target", "nucleo-f4", "-o", str(out),
                     "--build"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "of 524288, RAM" in result.output and "after a stack reserve of 2048" in result.output
    assert json.loads((out / "firmware.json").read_text())["target"] == "nucleo-f4"
    fp = json.loads((out / "footprint.json").read_text())
    assert fp["flash_limit"] == 524288 and fp["warnings"] == []
    drive = tmp_path / "NODE_F401RE"
    drive.mkdir()
    result = invoke(["flash", str(out), "--port", str(drive), "--dry-run"],
                    catch_exceptions=False)
    assert result.exit_code == 0
    assert result.output == f"would run: cp {out / 'firmware.bin'} {drive / 'firmware.bin'}\n"
