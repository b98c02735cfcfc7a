"""The RISC-V backends: ``qemu-hifive1`` (the hifive1 image on QEMU sifive_e, minstret),
``unicorn-rv32`` (the RV32IMC / RV32IMAC build's functions in unicorn, core only) and
``unicorn-rv32ec`` (the ch32v003 image: RV32EC, no M extension) against the
Python reference on an excerpt of the real Air Quality recording, and against each other: two
emulators counting the same instructions. The unicorn RV32 counter itself is checked on
hand-written code whose executed-instruction count is known by construction."""

import json
import subprocess

import numpy as np
import pytest

from sensorbudget.device_sim.backends import available_backends, make_backend
from sensorbudget.device_sim.replay import replay

from .conftest import AIR_QUALITY, model_of, recordings_of

AVAILABLE = available_backends()
ROWS = 260                    # hours of the Air Quality recording replayed


def need(spec):
    reason = AVAILABLE.get(spec)
    if reason is not None:
        pytest.skip(f"backend {spec}: {reason}")


@pytest.fixture(scope="module")
def excerpt(tmp_path_factory):
    """The first ROWS rows of the Air Quality CSV (the header and its format kept)."""
    lines = AIR_QUALITY.read_text(encoding="utf-8", errors="replace").splitlines(True)
    path = tmp_path_factory.mktemp("aq") / "aq_excerpt.csv"
    path.write_text("".join(lines[:ROWS + 1]), encoding="utf-8")
    return path


def run(spec, bundle, recs, numeric, tmp_path, **kw):
    model = model_of(bundle, numeric)
    be = make_backend(spec, model=model, workdir=tmp_path, **kw)
    try:
        res = replay(be, model, recordings_of(recs, model))
        be.quit()
    finally:
        be.close()
    return res


@pytest.mark.parametrize("spec", ["qemu-hifive1", "unicorn-rv32", "unicorn-rv32ec"])
@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_matches_the_reference_on_air_quality(air, excerpt, spec, numeric, tmp_path):
    need(spec)
    res = run(spec, air[0], excerpt, numeric, tmp_path)
    assert len(res.records) > 200
    assert res.count("delivered") == len(res.records)
    assert res.mismatches == 0 and res.unexpected == 0
    assert res.cost_unit == "instructions"
    assert all(r.extractors > 0 and r.model > 0 for r in res.records)


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_unicorn_counts_what_qemu_minstret_counts(air, excerpt, numeric, tmp_path):
    """The same RV32IMAC image: unicorn's per-call count and QEMU's minstret around the same
    call differ by the HAL counter's own instructions only, a constant for every prediction
    (soft float and Q15 costs vary with the data; the difference does not)."""
    need("qemu-hifive1")
    need("unicorn-rv32")
    q = run("qemu-hifive1", air[0], excerpt, numeric, tmp_path)
    u = run("unicorn-rv32", air[0], excerpt, numeric, tmp_path, march="rv32imac")
    qc = np.array([(r.extractors, r.model) for r in q.records], dtype=np.int64)
    uc = np.array([(r.extractors, r.model) for r in u.records], dtype=np.int64)
    assert qc.shape == uc.shape and len(np.unique(uc[:, 0])) > 1      # data-dependent costs
    diff = qc - uc
    assert len(np.unique(diff[:, 0])) == 1 and len(np.unique(diff[:, 1])) == 1
    assert 0 <= diff[0, 0] <= 10 and 0 <= diff[0, 1] <= 10


def test_qemu_hifive1_counts_are_the_same_in_every_run(air, excerpt, tmp_path):
    """minstret under -icount depends on the instructions only, not on host timing: two runs
    (each a fresh QEMU, over the semihosting link) give the same count for every window."""
    need("qemu-hifive1")
    a = run("qemu-hifive1", air[0], excerpt, "float32", tmp_path / "a")
    b = run("qemu-hifive1", air[0], excerpt, "float32", tmp_path / "b")
    assert [(r.extractors, r.model) for r in a.records] == \
        [(r.extractors, r.model) for r in b.records]


def test_rv32imc_and_rv32imac_builds_cost_the_same_instructions(air, excerpt, tmp_path):
    """The A extension is never used by the firmware: the ESP32-C3-class RV32IMC build retires
    the same instructions as the FE310's RV32IMAC build."""
    need("unicorn-rv32")
    imc = run("unicorn-rv32", air[0], excerpt, "q15", tmp_path, march="rv32imc")
    imac = run("unicorn-rv32", air[0], excerpt, "q15", tmp_path, march="rv32imac")
    assert [(r.extractors, r.model) for r in imc.records] == \
        [(r.extractors, r.model) for r in imac.records]


def test_rv32ec_pays_for_the_missing_multiplier(air, excerpt, tmp_path):
    """The CH32V003's RV32EC core has no M extension: its Q15 model multiplies through libgcc's
    __mulsi3 and retires several times the RV32IMC build's instructions, on the same data."""
    need("unicorn-rv32")
    ec = run("unicorn-rv32ec", air[0], excerpt, "q15", tmp_path)
    imc = run("unicorn-rv32", air[0], excerpt, "q15", tmp_path)
    assert [r.window for r in ec.records] == [r.window for r in imc.records]
    assert min(r.model for r in ec.records) > 3 * max(r.model for r in imc.records)


def test_simulate_cli_says_core_only_and_gives_per_extractor_counts(air, excerpt, tmp_path):
    need("unicorn-rv32")
    from click.testing import CliRunner

    from sensorbudget.cli import main

    out = tmp_path / "sim"
    result = CliRunner().invoke(main, ["simulate", str(air[0]), "--recordings", str(excerpt),
                                       "--backend", "unicorn-rv32", "--numeric", "q15",
                                       "--report", str(out), "--workdir", str(tmp_path / "w")])
    assert result.exit_code == 0, result.output
    assert "0 mismatches" in result.output
    report = json.loads((out / "report.json").read_text())
    cost = report["cost"]
    assert "core only" in cost["method"] and cost["unit"] == "instructions"
    per = cost["per_extractor"]
    # every extractor of the bundle, the measured total (median) split between them
    assert len(per) == 4 and all(v > 0 for v in per.values())
    assert sum(per.values()) == pytest.approx(cost["extractors"]["median"], rel=1e-9)
    assert report["profile"]["name"] == "hifive1"


# -- the counter: hand-written RV32IMC code --------------------------------------------------
SOURCE = r"""
    .option rvc
    .text
    .globl straight
straight:                       # 6 instructions, 16- and 32-bit
    c.li a1, 3                  # 1
    addi a1, a1, 4              # 2  32-bit
    c.add a0, a1                # 3
    mul a0, a0, a1              # 4  32-bit (M)
    c.nop                       # 5
    ret                         # 6  (c.jr ra)

    .globl loop
loop:                           # a0 = n >= 1: 3 + 3 n instructions
    li a1, 0                    # 1
1:  add a1, a1, a0              # 3 per iteration
    addi a0, a0, -1
    bnez a0, 1b
    mv a0, a1                   # 2
    ret                         # 3

    .globl call
call:                           # 6 + 2 (twice) instructions
    addi sp, sp, -16            # 1
    sw ra, 12(sp)               # 2
    call twice                  # 3 (auipc+jalr relaxed to jal: 1)
    lw ra, 12(sp)               # 4
    addi sp, sp, 16             # 5
    ret                         # 6
twice:
    add a0, a0, a0              # 1
    ret                         # 2
"""
CASES = [("straight", 5, (5 + 7) * 7, 6), ("loop", 1, 1, 6), ("loop", 10, 55, 3 + 30),
         ("call", 21, 42, 8)]


@pytest.fixture(scope="module")
def rv32(tmp_path_factory):
    need("unicorn-rv32")
    from sensorbudget.device_sim.backends.unicorn_rv32 import RV32

    base = tmp_path_factory.mktemp("rv")
    (base / "c.s").write_text(SOURCE)
    subprocess.run(["riscv64-unknown-elf-gcc", "-march=rv32imc", "-mabi=ilp32",
                    "-misa-spec=2.2", "-nostdlib", "-nostartfiles", "-Wl,-Ttext=0x20010000",
                    "-Wl,--entry=straight", str(base / "c.s"), "-o", str(base / "c.elf")],
                   check=True, capture_output=True)
    return RV32(base / "c.elf")


@pytest.mark.parametrize("fn,a0,result,instructions", CASES)
def test_unicorn_rv32_counts_every_executed_instruction(rv32, fn, a0, result, instructions):
    got, count = rv32.call(rv32.symbol(fn), a0)
    assert got == result and count == instructions
