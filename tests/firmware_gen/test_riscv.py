"""The hifive1 target (SiFive HiFive1 Rev B, FE310-G002, RV32IMAC, no FPU): the image is the
part's (an RV32 soft-float ELF linked at the Rev B's flash and 16 KB RAM, checked by reading the
ELF, not the linker script), boots on QEMU sifive_e (revb), replays an excerpt of the real Air
Quality recording bit for bit against firmware_gen.reference, counts instructions (minstret
under -icount), costs a Q15 MAC in so many instructions, and is flashed by the board's tools
(a copy to the J-Link drive, J-Link Commander through a stand-in JLinkExe)."""

import os
import stat
import struct

import numpy as np
import pytest

from sensorbudget.device_sim.protocol import Cmd, Unit
from sensorbudget.firmware_gen import reference
from sensorbudget.firmware_gen.build import footprint
from sensorbudget.firmware_gen.profiles import PROFILES
from tests.firmware_gen.conftest import AIR_QUALITY, need_tools
from tests.firmware_gen.helpers import device_samples, predict, push_samples, same_bits

EXCERPT = 200          # samples of the Air Quality recording replayed on QEMU
FLASH = (0x20010000, 0x20000000 + (4 << 20))       # Rev B: 4 MB flash, bootloader's 64 KB off
RAM = (0x80000000, 0x80000000 + 16 * 1024)


@pytest.fixture(autouse=True)
def _riscv():
    need_tools("riscv64-unknown-elf-gcc")


@pytest.fixture(scope="module")
def aq_excerpt(aq_features):
    from sensorbudget.trainer.sensing.recordings import load_recordings

    rec = load_recordings(AIR_QUALITY, aq_features.sample_rate).recordings[0]
    return {c: np.asarray(v)[:EXCERPT] for c, v in rec.columns.items()}


def _segments(elf_path):
    from elftools.elf.elffile import ELFFile

    with open(elf_path, "rb") as fh:
        elf = ELFFile(fh)
        header = (elf.elfclass, elf["e_machine"], elf["e_flags"], elf["e_entry"])
        loads = [(s["p_vaddr"], s["p_paddr"], s["p_filesz"], s["p_memsz"])
                 for s in elf.iter_segments() if s["p_type"] == "PT_LOAD" and s["p_memsz"]]
    return header, loads


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_image_is_rv32imac_soft_float_inside_the_parts_memories(firmware, aq_bundle, numeric):
    pytest.importorskip("elftools")
    built = firmware(aq_bundle, "hifive1", numeric)
    (cls, machine, flags, entry), loads = _segments(built.out / "firmware.elf")
    assert (cls, machine) == (32, "EM_RISCV")
    assert flags & 0x1 and flags & 0x6 == 0        # EF_RISCV_RVC; float ABI soft (ilp32)
    assert entry == FLASH[0]                       # where the Rev B bootloader jumps
    flash_end = ram_end = 0
    for vaddr, paddr, filesz, memsz in loads:
        if FLASH[0] <= vaddr < FLASH[1]:
            flash_end = max(flash_end, vaddr + memsz)
        else:                                      # .data / .bss: in the 16 KB DTIM
            assert RAM[0] <= vaddr and vaddr + memsz <= RAM[1], hex(vaddr)
            ram_end = max(ram_end, vaddr + memsz)
            if filesz:                             # .data's initial values are in flash
                assert FLASH[0] <= paddr and paddr + filesz <= FLASH[1]
                flash_end = max(flash_end, paddr + filesz)
    p = PROFILES["hifive1"]
    fp = footprint(built.out)
    # size -A against the ELF's own program headers, and both against the part
    assert fp["flash_bytes"] <= flash_end - FLASH[0] <= fp["flash_bytes"] + 16
    assert fp["ram_bytes"] <= ram_end - RAM[0] <= fp["ram_bytes"] + 16
    assert (fp["flash_limit"], fp["ram_limit"]) == (p.flash_bytes, p.ram_bytes)
    assert fp["ram_bytes"] + p.stack_reserve <= p.ram_bytes


def test_soft_float_runs_through_libgcc_and_no_fpu_instruction_is_emitted(firmware, aq_bundle):
    """RV32IMAC has no F extension: the float32 image calls libgcc's soft-float routines and
    holds no F-extension opcode (OP-FP, FLW/FSW, FMADD...)."""
    import subprocess

    built = firmware(aq_bundle, "hifive1", "float32")
    dump = subprocess.run(["riscv64-unknown-elf-objdump", "-d", "-M", "no-aliases",
                           str(built.out / "firmware.elf")], capture_output=True, text=True,
                          check=True).stdout
    assert "<__addsf3>:" in dump and "<__mulsf3>:" in dump
    mnemonics = {line.split("\t")[2].split()[0] for line in dump.splitlines()
                 if line.count("\t") >= 2 and line.split("\t")[2].strip()}
    assert not {m for m in mnemonics if m.startswith(("fadd.", "fmul.", "flw", "fsw", "fmadd.",
                                                      "fcvt.", "fsqrt."))}


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_boots_on_qemu_sifive_e_and_replays_air_quality_exactly(firmware, aq_bundle, aq_excerpt,
                                                                numeric):
    need_tools("qemu-system-riscv32")
    built = firmware(aq_bundle, "hifive1", numeric)
    plan = built.plan
    samples = device_samples(plan, aq_excerpt)
    _, inputs, expected = reference.stream(plan, aq_bundle, samples)
    assert len(expected) > 100
    with built.start() as dev:
        hello = dev.call(Cmd.HELLO)
        assert struct.unpack_from("<BBHHHHH", hello)[:4] == (
            2, ["float32", "q15", "q31"].index(numeric), plan.k, plan.t)
        windows, scores = push_samples(dev, plan, samples, 20)
        assert windows == list(range(len(expected)))
        assert same_bits(scores, np.asarray(expected).astype(scores.dtype))
        assert same_bits(predict(dev, plan, inputs[7]), scores[7])
        unit, extract, model, pushes = struct.unpack("<BIII", dev.call(Cmd.STATS))
        assert unit == Unit.INSTRUCTIONS and extract > 0 and model > 0 and pushes > 0
        # minstret under -icount is exact: 2000 runs of the model are 2000 x one run (the
        # counter's own instructions, start and stop, are calibrated away in both)
        bunit, total = dev.bench(2000, 0)
        assert bunit == Unit.INSTRUCTIONS and abs(total - 2000 * model) <= 2000 * 2
        assert dev.quit(7) == 7                    # semihosting SYS_EXIT_EXTENDED


@pytest.mark.parametrize("numeric,per_mac_at_most", [("q15", 6.0), ("float32", 250.0)])
def test_model_instructions_per_mac(firmware, aq_bundle, numeric, per_mac_at_most):
    """The unrolled model: Q15 without the Cortex-M4's SMLAD (lh/mul/add per MAC, constants in
    immediates), float32 through libgcc. Measured: q15 ~5.3, float32 ~190 instructions per MAC
    on the 6 x 4 Air Quality model, call and rescale included."""
    need_tools("qemu-system-riscv32")
    built = firmware(aq_bundle, "hifive1", numeric)
    plan = built.plan
    x = np.linspace(-1, 1, plan.k).astype("<f4") if numeric == "float32" else \
        np.arange(-3, plan.k - 3, dtype="<i2") * 1000
    with built.start() as dev:
        predict(dev, plan, x)
        unit, total = dev.bench(5000, 0)
        dev.quit(0)
    assert unit == Unit.INSTRUCTIONS
    per_mac = total / 5000 / (plan.k * plan.t)
    assert 1.0 < per_mac <= per_mac_at_most, per_mac


def test_does_not_fit_a_design_larger_than_16_kb_of_ram():
    from sensorbudget.firmware_gen import FirmwareGenError
    from sensorbudget.firmware_gen.build import check_fit
    from sensorbudget.firmware_gen.targets import get_target

    t = get_target("hifive1")
    check_fit(t, {"flash_bytes": 100_000, "ram_bytes": 16 * 1024 - 2048})
    with pytest.raises(FirmwareGenError, match=r"16384.*FE310|FE310.*16384"):
        check_fit(t, {"flash_bytes": 100_000, "ram_bytes": 16 * 1024 - 2047})


def test_targets_lists_the_riscv_board_with_its_limits_and_sources():
    from click.testing import CliRunner

    from sensorbudget.cli import main

    out = CliRunner().invoke(main, ["targets"]).output
    block = out[out.index("hifive1:"):].split("\n\n")[0]
    p = PROFILES["hifive1"]
    assert "FE310-G002" in block and "RV32IMAC" in block
    assert f"RAM {p.ram_bytes // 1024} KiB ({p.ram_bytes} bytes)" in block
    assert f"flash {p.flash_bytes // 1024} KiB" in block
    assert "power (estimated)" in block and "power source:" in block
    assert "minstret" in block


def test_flash_copies_the_hex_to_the_jlink_drive(firmware, aq_bundle, tmp_path):
    from sensorbudget.firmware_gen.flash import flash

    built = firmware(aq_bundle, "hifive1", "q15")
    drive = tmp_path / "HiFive"
    drive.mkdir()
    plan = flash(built.out, port=str(drive))
    assert plan.tool == "copy"
    assert (drive / "firmware.hex").read_bytes() == (built.out / "firmware.hex").read_bytes()


def test_flash_runs_jlink_commander_with_a_load_and_reset_script(firmware, aq_bundle, tmp_path,
                                                                  monkeypatch):
    """A stand-in JLinkExe on PATH records its argv and the command file it was given."""
    from sensorbudget.firmware_gen.flash import flash

    built = firmware(aq_bundle, "hifive1", "q15")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "jlink.log"
    fake = bindir / "JLinkExe"
    fake.write_text(f'#!/bin/sh\necho "$@" > {log}\neval last=\\${{$#}}\ncat "$last" >> {log}\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    plan = flash(built.out, programmer="jlink")
    args, *script = log.read_text().splitlines()
    assert plan.tool == "jlink"
    assert args.split()[:4] == ["-device", "FE310", "-if", "JTAG"]
    assert script == [f"loadfile {built.out / 'firmware.hex'}", "rnh", "exit"]


# -- ch32v003 (RV32EC, 2 KB SRAM, 16 KB flash): built and fit-checked; no emulator runs it ------
def test_ch32v003_image_is_rv32e_without_m_inside_16_kb_flash_and_2_kb_ram(firmware,
                                                                            aq_bundle):
    pytest.importorskip("elftools")
    import subprocess

    built = firmware(aq_bundle, "ch32v003", "q15")
    (cls, machine, flags, entry), loads = _segments(built.out / "firmware.elf")
    assert (cls, machine, entry) == (32, "EM_RISCV", 0)      # the core starts at 0x0
    assert flags & 0x8 and flags & 0x1                       # EF_RISCV_RVE, RVC
    for vaddr, paddr, filesz, memsz in loads:
        assert (vaddr + memsz <= 16 * 1024) or \
            (0x20000000 <= vaddr and vaddr + memsz <= 0x20000000 + 2048)
    dump = subprocess.run(["riscv64-unknown-elf-objdump", "-d", str(built.out / "firmware.elf")],
                          capture_output=True, text=True, check=True).stdout
    # no M extension on the QingKe V2A: multiplies are libgcc calls, registers x16+ unused
    assert "<__mulsi3>:" in dump
    assert not [ln for ln in dump.splitlines() if "\tmul" in ln or "\tdiv" in ln]
    assert not any(f"a{i}" in ln.split("\t")[-1].split("#")[0].replace(",", " ").split()
                   for ln in dump.splitlines() if ln.count("\t") >= 3 for i in (6, 7))
    fp = footprint(built.out)
    assert fp["flash_bytes"] <= 16 * 1024 and fp["ram_bytes"] + 256 <= 2048
    assert json_run(built.out) == []                  # firmware.json: nothing runs it here


def json_run(out):
    import json

    return json.loads((out / "firmware.json").read_text())["run"]


def test_ch32v003_fit_check_shows_which_designs_fit_its_2_kb_of_ram(tmp_path):
    """Windows of 160 samples of 3 channels: 1920 bytes of float32 samples do not fit the
    part's 2 KB of SRAM (one line naming the bytes needed and the part's); as Q15 samples (960
    bytes) the same design fits."""
    from click.testing import CliRunner

    from sensorbudget.cli import main
    from tests.fixtures import sensor_spec, sensors_toml, write_stream

    need_tools("make")
    (tmp_path / "s.toml").write_text(sensors_toml(sensor_spec(window=160, hop=40)))
    rec = write_stream(tmp_path / "rec.csv", n=1200)
    run = CliRunner().invoke
    result = run(main, ["train", str(rec), "--sensors", str(tmp_path / "s.toml"), "--budget",
                        "3", "-o", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    result = run(main, ["firmware", str(tmp_path / "b"), "--target", "ch32v003", "-o",
                        str(tmp_path / "f32"), "--build"])
    assert result.exit_code == 2, result.output
    line = result.output.strip().splitlines()[-1]
    assert line.startswith("Error: the firmware needs ") and "bytes of RAM" in line
    assert "ch32v003 (CH32V003) has 2048" in line and "Traceback" not in result.output
    result = run(main, ["firmware", str(tmp_path / "b"), "--target", "ch32v003", "--numeric",
                        "q15", "-o", str(tmp_path / "q15"), "--build"])
    assert result.exit_code == 0, result.output
    fp = footprint(tmp_path / "q15")
    assert fp["ram_bytes"] + 256 <= 2048 and fp["ram_bytes"] > 160 * 3 * 2


def test_ch32v003_flash_says_which_tools_write_it(firmware, aq_bundle):
    from sensorbudget.firmware_gen import FirmwareGenError
    from sensorbudget.firmware_gen.flash import flash_plan

    built = firmware(aq_bundle, "ch32v003", "q15")
    with pytest.raises(FirmwareGenError, match=r"firmware\.bin.*0x08000000.*WCH-LinkE"):
        flash_plan(built.out)
