"""Flashing without hardware: avrdude against a fake Arduino bootloader on a loopback socket
(net:HOST:PORT), and the commands built for a Nucleo-64 (st-flash, pyocd, OpenOCD, the
ST-LINK's mass-storage drive); the emulation-only MPS2 targets are refused."""

import shutil

import pytest

from sensorbudget.firmware_gen import FirmwareGenError
from sensorbudget.firmware_gen import flash as flash_mod
from sensorbudget.firmware_gen.flash import flash, flash_plan
from tests.firmware_gen.conftest import need_tools
from tests.firmware_gen.stk500 import FakeBootloader, read_hex


def test_avrdude_writes_exactly_the_hex_image(firmware, bm_bundle):
    need_tools("avrdude")
    built = firmware(bm_bundle, "avr", "float32")
    boot = FakeBootloader()
    plan = flash(built.out, port=f"net:127.0.0.1:{boot.port}", timeout=60)
    boot.thread.join(10)
    assert plan.tool == "avrdude" and boot.error is None
    image = read_hex(built.out / "firmware.hex")
    assert image and {a: boot.flash[a] for a in image} == image
    assert all(v == 0xFF for a, v in boot.flash.items() if a not in image)   # page padding
    assert 0x75 in boot.commands and 0x74 in boot.commands     # signature read, verified


@pytest.fixture
def tools(monkeypatch):
    """Pretend the given tools are installed."""
    from types import SimpleNamespace

    installed = set()
    fake = SimpleNamespace(which=lambda name: f"/usr/bin/{name}" if name in installed else None,
                           copyfile=shutil.copyfile)
    monkeypatch.setattr(flash_mod, "shutil", fake)
    return installed


@pytest.fixture(scope="module")
def cm_out(tmp_path_factory):
    """A nucleo-f4 firmware directory with stand-in artifacts (command construction only)."""
    import json

    out = tmp_path_factory.mktemp("cm")
    (out / "firmware.json").write_text(json.dumps({
        "format": "sensorbudget-firmware", "target": "nucleo-f4",
        "artifacts": {"elf": "firmware.elf", "hex": "firmware.hex", "bin": "firmware.bin"}}))
    for name in ("firmware.elf", "firmware.hex", "firmware.bin"):
        (out / name).write_bytes(b"\x00" * 16)
    return out


def test_pyocd_command(tools, cm_out):
    tools.add("pyocd")
    plan = flash_plan(cm_out, chip="stm32f411re", port="0240000034")
    assert plan.argv == ["pyocd", "flash", "-t", "stm32f411re", "-u", "0240000034",
                         str(cm_out / "firmware.hex")]
    plan = flash_plan(cm_out)                       # the smallest Nucleo-64 part by default
    assert plan.argv == ["pyocd", "flash", "-t", "stm32f401re", str(cm_out / "firmware.hex")]


def test_st_flash_command_writes_the_bin_at_the_flash_base(tools, cm_out):
    tools.update({"st-flash", "pyocd", "openocd"})
    plan = flash_plan(cm_out)                      # auto: st-flash first
    assert plan.tool == "st-flash"
    assert plan.argv == ["st-flash", "--reset", "write", str(cm_out / "firmware.bin"),
                         "0x08000000"]
    plan = flash_plan(cm_out, programmer="st-flash", port="066DFF485457")
    assert plan.argv[:3] == ["st-flash", "--serial", "066DFF485457"]


def test_emulation_boards_are_not_flashed(tools, tmp_path):
    import json

    tools.update({"st-flash", "pyocd", "openocd"})
    (tmp_path / "firmware.json").write_text(json.dumps({
        "format": "sensorbudget-firmware", "target": "cortex-m4f"}))
    with pytest.raises(FirmwareGenError, match="mps2-an386 is an emulation board.*nucleo-f4"):
        flash_plan(tmp_path)


def test_openocd_command(tools, cm_out, tmp_path):
    tools.add("openocd")
    plan = flash_plan(cm_out, chip="stm32f4x")
    assert plan.argv == ["openocd", "-f", "interface/cmsis-dap.cfg", "-f", "target/stm32f4x.cfg",
                         "-c", f"program {cm_out / 'firmware.elf'} verify reset exit"]
    cfg = tmp_path / "board.cfg"
    plan = flash_plan(cm_out, programmer="openocd", openocd_config=cfg)
    assert plan.argv[:3] == ["openocd", "-f", str(cfg)]
    plan = flash_plan(cm_out, programmer="openocd")       # OpenOCD's Nucleo-F4 board script
    assert plan.argv[:3] == ["openocd", "-f", "board/st_nucleo_f4.cfg"]


def test_mass_storage_copy(tools, cm_out, tmp_path):
    drive = tmp_path / "DAPLINK"
    drive.mkdir()
    plan = flash(cm_out, port=str(drive))
    assert plan.tool == "copy" and (drive / "firmware.bin").read_bytes() == b"\x00" * 16


def test_clear_errors(tools, cm_out, firmware, bm_bundle, tmp_path):
    with pytest.raises(FirmwareGenError, match="no Cortex-M flashing tool.*firmware.bin"):
        flash_plan(cm_out)
    with pytest.raises(FirmwareGenError, match="st-flash is not installed"):
        flash_plan(cm_out, programmer="st-flash")
    with pytest.raises(FirmwareGenError, match="pyocd is not installed"):
        flash_plan(cm_out, programmer="pyocd", chip="x")
    with pytest.raises(FirmwareGenError, match="mounted drive"):
        flash_plan(cm_out, programmer="copy", port=str(tmp_path / "nope"))
    with pytest.raises(FirmwareGenError, match="not flashed"):
        flash_plan(firmware(bm_bundle, "host").out)
    if shutil.which("avr-gcc") is None:
        return
    avr = firmware(bm_bundle, "avr", "float32").out
    with pytest.raises(FirmwareGenError, match="avrdude is not installed"):
        flash_plan(avr, port="net:x:1")
    tools.add("avrdude")
    with pytest.raises(FirmwareGenError, match="--port is required"):
        flash_plan(avr)
    with pytest.raises(FirmwareGenError, match="does not exist"):
        flash_plan(avr, port="/dev/ttyNOPE0")
    with pytest.raises(FirmwareGenError, match="avrdude, not pyocd"):
        flash_plan(avr, port="/dev/null", programmer="pyocd")
    plan = flash_plan(avr, port="/dev/null", baud=57600)
    assert plan.argv == ["avrdude", "-p", "atmega328p", "-c", "arduino", "-P", "/dev/null",
                         "-b", "57600", "-D", "-U", f"flash:w:{avr / 'firmware.hex'}:i"]
