"""``sensorbudget firmware`` / ``sensorbudget flash`` (click commands, before registration)."""

import json
import shutil

import click
import pytest
from click.testing import CliRunner

from sensorbudget.cli_firmware import firmware_command, flash_command, parse_full_scale
from sensorbudget.trainer.bundle.manifest import MANIFEST_FILE


@pytest.fixture
def runner():
    return CliRunner()


def test_generate_only(runner, bm_bundle, tmp_path):
    out = tmp_path / "fw"
    result = runner.invoke(firmware_command, [str(bm_bundle.path), "--target",
                                              "cortex-m3", "--numeric", "float32", "-o",
                                              str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    n_files = sum(1 for f in out.iterdir() if f.is_file() and f.name != MANIFEST_FILE)
    from sensorbudget.firmware_gen.targets import get_target

    target = get_target("cortex-m3").name       # the canonical name of the old one
    assert f"wrote {n_files} files" in result.output and "cortex-m3" in result.output
    assert json.loads((out / "firmware.json").read_text())["target"] == target
    assert not (out / "firmware.elf").exists()


def test_build_writes_binary_and_footprint(runner, bm_bundle, tmp_path):
    if shutil.which("gcc") is None or shutil.which("make") is None:
        pytest.skip("gcc/make are not installed")
    out = tmp_path / "fw"
    result = runner.invoke(firmware_command, [str(bm_bundle.path), "--target", "host",
                                              "--numeric", "q15", "--full-scale", "64", "-o",
                                              str(out), "--build"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Q15 sample full scales: acc_x=64" in result.output
    assert ".text" in result.output and "flash" in result.output
    footprint = json.loads((out / "footprint.json").read_text())
    assert footprint["target"] == "host" and footprint["flash_bytes"] > 0
    assert (out / "firmware").is_file()
    # regenerate into the same directory: allowed (it holds a firmware)
    again = runner.invoke(firmware_command, [str(bm_bundle.path), "--target", "host",
                                             "-o", str(out)])
    assert again.exit_code == 0, again.output


def test_errors_are_one_line(runner, bm_bundle, tmp_path):
    bundle = str(bm_bundle.path)
    result = runner.invoke(firmware_command, [bundle, "--target", "host", "--numeric", "q15",
                                              "--full-scale", "nope=1", "-o", str(tmp_path / "a")])
    assert result.exit_code == 2 and "names channel 'nope'" in result.output
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "notes.txt").write_text("mine")
    result = runner.invoke(firmware_command, [bundle, "--target", "host", "-o",
                                              str(tmp_path / "b")])
    assert result.exit_code == 2 and "refusing" in result.output
    result = runner.invoke(firmware_command, [bundle, "--target", "pic", "-o", "x"])
    assert result.exit_code == 2 and "Usage:" in result.output
    result = runner.invoke(firmware_command, [bundle, "--target", "host", "--name", "int",
                                              "-o", str(tmp_path / "c")])
    assert result.exit_code == 2 and "reserved" in result.output
    assert "Traceback" not in result.output


def test_full_scale_option(tmp_path):
    ctx = firmware_command.make_context("firmware", [str(tmp_path), "--target", "host", "-o", "x",
                                                     "--full-scale", "acc_x=16",
                                                     "--full-scale", "8"])
    assert ctx.params["full_scale"] == {"acc_x": 16.0, "*": 8.0}
    with pytest.raises(click.BadParameter):
        parse_full_scale(None, None, ("acc_x=abc",))
    with pytest.raises(click.BadParameter):
        parse_full_scale(None, None, ("-4",))


def test_flash_dry_run_and_errors(runner, firmware, bm_bundle):
    host = firmware(bm_bundle, "host").out
    result = runner.invoke(flash_command, [str(host), "--port", "/dev/null"])
    assert result.exit_code == 2 and "not flashed" in result.output
    if shutil.which("avr-gcc") is None or shutil.which("avrdude") is None:
        return
    avr = firmware(bm_bundle, "avr").out
    result = runner.invoke(flash_command, [str(avr), "--port", "/dev/null", "--dry-run"],
                           catch_exceptions=False)
    assert result.exit_code == 0
    assert "would run: avrdude -p atmega328p -c arduino -P /dev/null -b 115200" in result.output
    result = runner.invoke(flash_command, [str(avr)])
    assert result.exit_code == 2 and "--port is required" in result.output



def test_feature_table_bundle_gets_firmware(runner, tmp_path):
    """A bundle trained on a plain table (no recordings) is no longer refused: its firmware's
    input is the feature vector (one channel per selected feature, windows of one)."""
    from tests.export.helpers import synthetic_bundle

    bundle, _ = synthetic_bundle(tmp_path, "regression")
    out = tmp_path / "fw"
    result = runner.invoke(firmware_command, [str(tmp_path / "b"), "--target", "host",
                                              "--numeric", "q15", "-o", str(out)],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "firmware.json").read_text())
    assert manifest["input_kind"] == "features" and manifest["window"] == 1
    assert manifest["channels"] == bundle.meta["selected"]
    assert "Q15 sample full scales: " + bundle.meta["selected"][0] in result.output
