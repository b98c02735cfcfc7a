"""Strict compilation for every target and numeric format, the compile-time consistency checks,
and the footprint report."""

import re
import shutil

import pytest

from sensorbudget.firmware_gen import FirmwareGenError
from sensorbudget.firmware_gen.build import build, footprint, format_footprint, parse_size
from tests.firmware_gen.conftest import bm_full_scale


@pytest.mark.parametrize("target", ["host", "cortex-m4f", "cortex-m3", "avr", "nucleo-f4"])
@pytest.mark.parametrize("numeric", ["float32", "q15", "q31"])
def test_every_target_compiles_with_strict_warnings(firmware, kinds_bundle, bm_recordings,
                                                    target, numeric):
    """-std=c99 -Wall -Wextra -Werror -pedantic -Wdouble-promotion -Wconversion, all kinds;
    Q31 on the Uno is refused before compiling (avr-gcc's double has 32 bits)."""
    if (target, numeric) == ("avr", "q31"):
        with pytest.raises(FirmwareGenError, match="q31 needs a 64-bit double"):
            firmware(kinds_bundle, target, numeric, full_scale=bm_full_scale(bm_recordings))
        return
    built = firmware(kinds_bundle, target, numeric, full_scale=bm_full_scale(bm_recordings))
    makefile = built.firmware.files["Makefile"]
    for flag in ("-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wdouble-promotion",
                 "-Wconversion", "-ffp-contract=off"):
        assert flag in makefile
    fp = footprint(built.out)
    assert fp["flash_bytes"] > 0 and fp["ram_bytes"] > 0
    if target != "host":
        assert set(fp["artifacts"]) == {"elf", "hex", "bin"}
        assert (built.out / "firmware.bin").stat().st_size > 0
    if target == "avr":        # the Uno: 0.5 KB of flash is optiboot's, 256 B kept for the stack
        assert fp["flash_bytes"] <= 32256 and fp["ram_bytes"] + 256 <= 2048
    if target == "nucleo-f4":
        assert fp["flash_bytes"] <= 512 * 1024 and fp["ram_bytes"] + 2048 <= 96 * 1024
        assert fp["flash_limit"] == 512 * 1024 and 0.75 < fp["ram_headroom"] < 1


def _copy(built, tmp_path):
    out = tmp_path / "fw"
    shutil.copytree(built.out, out)
    return out


@pytest.mark.parametrize("file,pattern,replacement,message", [
    ("sbmodel_kernel.h", r"(SBMODEL_KERNEL_BUNDLE_ID UINT32_C\(0x)\w+", r"\g<1>12345678",
     "different bundles"),
    ("sbmodel_stream.h", r"(SBMODEL_STREAM_FORMAT_VERSION) 1", r"\1 2", "another firmware_gen"),
    ("sbmodel.h", r"(SBMODEL_FORMAT_VERSION) 1", r"\1 7", "another export header format"),
    ("sbmodel.h", r"(SBMODEL_N_TARGETS) 4", r"\1 5", "model size"),
])
def test_parts_that_disagree_fail_at_compile_time(firmware, bm_bundle, tmp_path, file, pattern,
                                                  replacement, message):
    out = _copy(firmware(bm_bundle, "host"), tmp_path)
    path = out / file
    text, n = re.subn(pattern, replacement, path.read_text())
    assert n >= 1
    path.write_text(text)
    with pytest.raises(FirmwareGenError, match=message):
        build(out)


def test_footprint_report(firmware, bm_bundle):
    built = firmware(bm_bundle, "cortex-m4f")
    fp = footprint(built.out)
    assert fp["sections"][".text"] > 1000 and ".bss" in fp["sections"]
    assert fp["flash_bytes"] == sum(v for k, v in fp["sections"].items() if k != ".bss")
    assert fp["ram_bytes"] == fp["sections"][".bss"] + fp["sections"].get(".data", 0)
    text = format_footprint(fp)
    assert "flash" in text and "RAM" in text and ".text" in text


def test_parse_size():
    text = ("firmware.elf  :\nsection     size        addr\n.text        5256           0\n"
            ".data           8   536870912\n.bss         2760   536870920\n"
            ".comment       30           0\n.debug_info  999           0\nTotal 8054\n")
    assert parse_size(text) == {".text": 5256, ".data": 8, ".bss": 2760}


def test_build_needs_a_firmware_directory(tmp_path):
    with pytest.raises(FirmwareGenError, match="firmware.json"):
        build(tmp_path)
