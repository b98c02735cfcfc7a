"""The real-board targets: nucleo-f4 (STM32F401RE register-level HAL) on QEMU netduinoplus2 and
arduino-uno on simavr and qemu-system-avr, against the Python reference on a real recording;
target names and aliases; the fit check; weights in flash on AVR."""

import json
import shutil
import struct
import subprocess

import numpy as np
import pytest

from sensorbudget.device_sim.backends.firmware import launch
from sensorbudget.device_sim.protocol import Cmd, FrameDecoder
from sensorbudget.firmware_gen import TARGETS, FirmwareGenError, generate_firmware, reference
from sensorbudget.firmware_gen.build import build, footprint
from sensorbudget.firmware_gen.targets import ALIASES, get_target, run_command
from tests.firmware_gen.conftest import bm_full_scale, need_tools
from tests.firmware_gen.helpers import (
    Session,
    check_replay,
    device_samples,
    push_samples,
    same_bits,
)


def test_old_names_are_aliases_of_the_canonical_targets(bm_bundle):
    assert sorted(TARGETS) == ["arduino-uno", "ch32v003", "hifive1", "host", "mps2-an385",
                               "mps2-an386", "nucleo-f4"]
    for old, new in ALIASES.items():
        assert get_target(old) is TARGETS[new]
        assert generate_firmware(bm_bundle, target=old).files == \
            generate_firmware(bm_bundle, target=new).files
    with pytest.raises(FirmwareGenError, match=r"target='stm32' is not one of .*nucleo-f4"):
        get_target("stm32")
    assert get_target("nucleo-f4").flash_bytes == 512 * 1024
    assert get_target("nucleo-f4").ram_bytes == 96 * 1024


def test_run_commands():
    nucleo = run_command(get_target("nucleo-f4"), "fw", 5555)
    assert nucleo[:3] == ["qemu-system-arm", "-M", "netduinoplus2"]
    # USART2 is QEMU's second serial port: the first one goes nowhere
    assert nucleo[-4:] == ["-serial", "null", "-serial",
                           "tcp:127.0.0.1:5555,server=on,wait=on,nodelay=on"]
    uno = run_command(get_target("avr"), "fw", 5555, "qemu")
    assert uno[:3] == ["qemu-system-avr", "-M", "arduino-uno"] and "-icount" not in uno
    assert run_command(get_target("avr"), "fw")[1:] == ["fw/firmware.elf", "atmega328p",
                                                       "16000000"]
    with pytest.raises(FirmwareGenError, match="cannot run nucleo-f4"):
        run_command(get_target("nucleo-f4"), "fw", emulator="simavr")


def _nucleo(bundle, numeric, tmp_path, full_scale=None, make_vars=None):
    need_tools("make", "arm-none-eabi-gcc")
    from sensorbudget.firmware_gen.build import write_firmware

    fw = generate_firmware(bundle, target="nucleo-f4", numeric=numeric, full_scale=full_scale)
    out = write_firmware(fw, tmp_path / f"nucleo-{numeric}")
    return fw, out, build(out, make_vars=make_vars)


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_nucleo_image_on_netduinoplus2_matches_the_reference(kinds_bundle, bm_recordings,
                                                             numeric, tmp_path):
    """The F401RE image (flash at 0x08000000, USART2 on PA2/PA3) unchanged on QEMU's STM32F405:
    every extractor kind and the model bit for bit; costs in instructions (SysTick: QEMU has no
    DWT) including a model region far shorter than a SysTick tick at shift=0."""
    need_tools("qemu-system-arm")
    fw, out, fp = _nucleo(kinds_bundle, numeric, tmp_path, bm_full_scale(bm_recordings))
    assert fp["flash_bytes"] < 512 * 1024 and fp["ram_bytes"] + 2048 < 96 * 1024
    assert fp["ram_headroom"] > 0.75 and fp["warnings"] == []
    with Session(out) as dev:
        assert dev.name == "qemu netduinoplus2"
        check_replay(dev, fw.plan, kinds_bundle, bm_recordings.recordings[12].columns)
        assert dev.quit(5) == 5                            # semihosting exit under QEMU


def test_nucleo_and_mps2_images_count_the_same_instructions(bm_bundle, bm_recordings,
                                                            firmware, tmp_path):
    """Same compiler, flags and CPU: the model and the extractors execute the same instructions
    on the nucleo-f4 image (SysTick at 168 MHz, -icount shift=5) and the mps2-an386 image
    (SysTick at 25 MHz, shift=8); only the HALs' timer overheads (calibrated away at boot)
    differ, so the counts agree to a constant of a few instructions."""
    need_tools("qemu-system-arm")
    fw, out, _ = _nucleo(bm_bundle, "float32", tmp_path)
    mps2 = firmware(bm_bundle, "cortex-m4f", "float32")
    samples = device_samples(fw.plan, bm_recordings.recordings[3].columns)
    counts = []
    for start in (lambda: Session(out), mps2.start):
        with start() as dev:
            per_window = []
            for i in range(0, len(samples), 10):
                push_samples(dev, fw.plan, samples[i:i + 10], 10)
                per_window.append(struct.unpack("<BIII", dev.call(Cmd.STATS))[1:])
            counts.append(np.array(per_window, dtype=np.int64))
            dev.quit(0)
    timed = counts[1][:, 0] > 0                        # a window completed in that push
    assert timed.sum() >= 5 and ((counts[0][:, 0] > 0) == timed).all()
    diff = counts[0][timed] - counts[1][timed]
    assert len({tuple(d) for d in diff}) == 1, diff
    assert np.abs(diff).max() <= 6, diff


def test_fit_check_refuses_what_the_part_cannot_hold(bm_bundle, tmp_path):
    """Receive buffers of 60 KB + 40 KB do not fit the F401RE's 96 KB of RAM (the linker's
    overflow becomes one line naming both); 60 KB + 15 KB fit but leave under 25 % after the
    2 KB stack reserve: a warning."""
    with pytest.raises(FirmwareGenError, match=r"^the firmware needs \d+ bytes of RAM; "
                                               r"nucleo-f4 \(STM32F401RE\) has 98304 \(try"):
        _nucleo(bm_bundle, "float32", tmp_path, make_vars={"RX_PAYLOAD": 60000,
                                                           "TX_PAYLOAD": 40000})
    _, out, fp = _nucleo(bm_bundle, "float32", tmp_path, make_vars={"RX_PAYLOAD": 60000,
                                                                     "TX_PAYLOAD": 15000})
    assert fp["ram_bytes"] > 70000 and fp["stack_reserve"] == 2048
    assert fp["ram_headroom"] == pytest.approx(1 - (fp["ram_bytes"] + 2048) / 98304, abs=1e-4)
    assert len(fp["warnings"]) == 1 and "under 25%" in fp["warnings"][0]


def test_uno_fit_check_counts_the_stack_reserve(firmware, bm_bundle, tmp_path):
    out = tmp_path / "uno"
    shutil.copytree(firmware(bm_bundle, "avr", "float32").out, out)
    base = footprint(out)["ram_bytes"]
    rx = 2048 - 256 - base + 256 + 1                 # one byte over 2048 with the reserve
    with pytest.raises(FirmwareGenError, match=r"needs 2049 bytes \(\d+ static \+ 256 stack "
                                               r"reserve\) of RAM; arduino-uno \(ATmega328P\)"):
        build(out, make_vars={"RX_PAYLOAD": rx})


def _avr_symbols(elf) -> dict:
    text = subprocess.run(["avr-nm", "-S", str(elf)], capture_output=True, text=True,
                          check=True).stdout
    return {f[3]: int(f[0], 16) for f in (line.split() for line in text.splitlines())
            if len(f) == 4}


@pytest.mark.parametrize("numeric", ["float32", "q15", "q31"])
def test_uno_loop_kernel_keeps_the_weights_in_flash(firmware, bm_bundle, bm_recordings,
                                                    numeric):
    """The loop kernel (big models) on AVR reads PROGMEM tables: the weights are in .text (AVR
    data addresses start at 0x800000), RAM does not grow with them, and the scores are those of
    the unrolled kernel (weights in the instructions) bit for bit, and of the reference for
    float32 and q15. (Q31 on AVR would differ from the reference by a few units with either
    kernel: avr-gcc's double is 32-bit, and Q31 quantises its inputs in double; it is refused
    before compiling, issue 28.)"""
    need_tools("avr-nm")
    fs = bm_full_scale(bm_recordings) if numeric != "float32" else None
    if numeric == "q31":
        with pytest.raises(FirmwareGenError, match="q31 needs a 64-bit double"):
            firmware(bm_bundle, "avr", numeric, kernel="loop", full_scale=fs)
        return
    loop = firmware(bm_bundle, "avr", numeric, kernel="loop", full_scale=fs)
    unrolled = firmware(bm_bundle, "avr", numeric, kernel="unrolled", full_scale=fs)
    symbols = _avr_symbols(loop.out / "firmware.elf")
    assert symbols["sbmodel_flash_w"] < 0x800000 and symbols["sbmodel_flash_b"] < 0x800000
    assert footprint(loop.out)["ram_bytes"] == footprint(unrolled.out)["ram_bytes"]
    plan = loop.plan
    samples = device_samples(plan, bm_recordings.recordings[30].columns)[:50]
    _, _, expected = reference.stream(plan, bm_bundle, samples)
    got = []
    for built in (loop, unrolled):
        with built.start() as dev:
            windows, scores = push_samples(dev, plan, samples, 10)
            dev.quit(0)
        assert windows == list(range(len(expected)))
        got.append(scores)
    assert same_bits(got[0], got[1])
    if numeric != "q31":
        assert same_bits(got[0], np.asarray(expected).astype(got[0].dtype))


def test_uno_image_runs_on_qemu_system_avr(firmware, kinds_bundle, bm_recordings):
    """The same .elf simavr runs, once on qemu-system-avr -machine arduino-uno (no -icount:
    QEMU aborts on Timer1 reads under it): READY banner, HELLO, a recording bit for bit (avr-libc
    soft float). A functional check: its costs are not measured."""
    need_tools("qemu-system-avr")
    built = firmware(kinds_bundle, "avr", "float32")
    manifest = json.loads((built.out / "firmware.json").read_text())
    assert manifest["target"] == "arduino-uno"
    plan = built.plan
    samples = device_samples(plan, bm_recordings.recordings[7].columns)[:60]
    _, _, expected = reference.stream(plan, kinds_bundle, samples)
    session = Session.__new__(Session)
    session.process = launch(built.out, emulator="qemu", poll=0.005)
    session.port, session.name = session.process.port, session.process.name
    session.decoder, session.pending, session.seq = FrameDecoder(), [], 0
    with session as dev:
        assert dev.name == "qemu arduino-uno"
        assert dev.call(Cmd.HELLO)[12:] == b"sbmodel"
        windows, scores = push_samples(dev, plan, samples, 10)
        assert windows == list(range(len(expected)))
        assert same_bits(scores, np.asarray(expected).astype(scores.dtype))


# -- the board registry: a board's name is spelled in its entry only ----------------------------

LIBRARY = ("trainer", "export", "firmware_gen", "device_sim", "sensorbudget")


def _board_names() -> list:
    """The registry's board names and aliases that name nothing else: ``host`` is also an
    architecture and a backend, ``avr`` an architecture (each a noun of its own)."""
    from sensorbudget.firmware_gen.boards import ARCHES, BOARD_NAMES, measurers

    shared = set(BOARD_NAMES) & (set(ARCHES) | set(measurers()))
    assert shared == {"host", "avr"}
    return sorted(set(BOARD_NAMES) - shared)


def _spellings(source: str, names) -> list:
    """(line, name, text) of every string constant of ``source`` (f-string parts included,
    docstrings and bare string statements excluded: prose) that spells one of ``names`` as a
    word (``qemu-nucleo-f4`` spells ``nucleo-f4``; ``-mcpu=cortex-m3`` is a compiler flag)."""
    import ast
    import re

    pattern = re.compile(r"(?<![\w=])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")
    tree = ast.parse(source)
    prose = {id(node.value) for node in ast.walk(tree)
             if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return [(node.lineno, m.group(1), node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in prose for m in pattern.finditer(node.value)]


def test_the_check_finds_a_spelled_board_name():
    names = _board_names()
    found = _spellings('"""A nucleo-f4 docstring."""\nX = {"nucleo-f4": 1}\n'
                       'Y = f"qemu-{1}", "qemu-hifive1", "-mcpu=cortex-m3"\n'
                       'Z = f"run on {X} cortex-m4f"\n', names)
    assert [(line, name) for line, name, _ in sorted(found)] == \
        [(2, "nucleo-f4"), (3, "hifive1"), (4, "cortex-m4f")]
    assert _generated('"""Generated by ``python -m x``; do not edit by hand."""\nT = {}\n')
    assert not _generated('"""A nucleo-f4 docstring."""\n')


def _generated(source: str) -> bool:
    """A module written by a measuring script (its docstring says "Generated by ... do not
    edit"): a table of measurements keyed by the boards they were measured on."""
    import ast

    doc = ast.get_docstring(ast.parse(source)) or ""
    return "Generated by" in doc and "do not edit" in doc


def test_no_board_name_is_spelled_in_library_code_outside_the_registry():
    """Library code asks the registry (firmware_gen/boards/) for boards, their limits, power,
    toolchain, flashing and backends; a name spelled elsewhere is a second table. HAL templates,
    tests and docs may name boards; a generated table of measurements may key them, by their
    canonical names only (checked here)."""
    from sensorbudget.firmware_gen.boards import BOARDS
    from tests.paths import REPO

    registry = REPO / "firmware_gen" / "boards"
    names, found = _board_names(), []
    files = [f for pkg in LIBRARY for f in sorted((REPO / pkg).rglob("*.py"))
             if registry not in f.parents]
    assert len(files) > 100
    for f in files:
        source = f.read_text(encoding="utf-8")
        spelled = _spellings(source, names)
        if _generated(source):
            spelled = [s for s in spelled if s[1] not in BOARDS or s[2] != s[1]]
        found += [f"{f.relative_to(REPO)}:{line}: {name!r} in {text[:60]!r}"
                  for line, name, text in spelled]
    assert found == []
