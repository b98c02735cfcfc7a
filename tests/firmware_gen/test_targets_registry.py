"""The board registry (firmware_gen.boards) and what derives from it: ``sensorbudget targets``
lists every board with its limits and the source of each current; the firmware targets, the fit
check's runtime RAM, the cost profiles and the backends' specs cover exactly the registry's
boards; every entry is complete (HAL files present, sources given, estimates flagged)."""

import json
from functools import partial

import pytest
from click.testing import CliRunner

from sensorbudget.firmware_gen.boards import (
    ALIASES,
    ARCHES,
    BOARDS,
    DEFAULT_BOARD,
    get_board,
    measurers,
)


@pytest.fixture
def invoke():
    from sensorbudget.cli import main

    return partial(CliRunner().invoke, main)


def _size(n):
    return "no limit" if n is None else f"{n // 1024} KiB ({n} bytes)"


def test_targets_lists_every_registry_board_with_limits_and_power_sources(invoke):
    result = invoke(["targets"], catch_exceptions=False)
    assert result.exit_code == 0
    blocks = result.output.strip().split("\n\n")
    assert [b.split(":", 1)[0] for b in blocks] == list(BOARDS)
    for block, board in zip(blocks, BOARDS.values()):
        assert block.startswith(f"{board.name}: {board.board}\n")
        assert f"flash {_size(board.flash_bytes)}, RAM {_size(board.ram_bytes)}" in block
        assert f"active power source: {board.active_source}" in block
        assert f"sleep power source: {board.sleep_source}" in block
        assert ("power (estimated)" in block) == board.estimated_power
        assert f"measured by: {', '.join(board.backends)}" in block
        assert f"toolchain: {board.cc}" in block and all(f in block for f in board.hal)
        assert f"{board.clock_hz / 1e6:g} MHz" in block and board.part in block
    data = json.loads(invoke(["targets", "--json"], catch_exceptions=False).output)
    assert list(data) == sorted(BOARDS)
    for name, entry in data.items():
        board = BOARDS[name]
        for key, value in board.as_dict().items():
            assert entry[key] == (list(value) if isinstance(value, tuple) else value), key
        assert entry["aliases"] == [a for a, n in ALIASES.items() if n == name]
    assert "FE310-G002 Datasheet v1p2" in data["hifive1"]["active_source"]
    assert data["hifive1"]["sleep_source"].startswith("estimate:")
    assert "DS10086" in data["nucleo-f4"]["active_source"]


def test_one_board_per_name():
    """An alias is its board everywhere: the target it builds, the profile it is costed with
    (cortex-m4f is the MPS2 AN386 image at 25 MHz in both; no 168 MHz STM32F407 elsewhere)."""
    from sensorbudget.device_sim.costs import PROFILES
    from sensorbudget.firmware_gen.targets import TARGETS, get_target

    assert TARGETS is BOARDS
    for alias, name in ALIASES.items():
        assert get_target(alias) is get_board(alias) is BOARDS[name]
        assert PROFILES[alias] is PROFILES[name]
        assert PROFILES[alias].clock_hz == BOARDS[name].clock_hz
    assert len(set(BOARDS) | set(ALIASES)) == len(BOARDS) + len(ALIASES)


def test_every_table_covers_exactly_the_registry():
    from sensorbudget.device_sim.backends import BACKENDS
    from sensorbudget.device_sim.backends.firmware import SPECS
    from sensorbudget.device_sim.costs import PROFILES
    from sensorbudget.firmware_gen.memory import RUNTIME_RAM

    assert set(RUNTIME_RAM) == set(BOARDS)
    assert set(PROFILES) == set(BOARDS) | set(ALIASES)
    assert set(BACKENDS) == {"python", "serial:URL", *measurers()}
    assert {spec: target for spec, (target, *_) in SPECS.items()} == \
        {name: b.name for name, (b, m) in measurers().items() if m.kind == "firmware"}
    assert get_board("cortex-m4f") is BOARDS[DEFAULT_BOARD]     # the older default's board


@pytest.mark.parametrize("name", list(BOARDS))
def test_each_entry_is_complete(name):
    from sensorbudget.firmware_gen.flash import PROGRAMMERS
    from sensorbudget.firmware_gen.firmware import template

    b = BOARDS[name]
    assert b.arch in ARCHES and b.cc.endswith("gcc")
    for f in (*b.hal, *((b.linker_script,) if b.linker_script else ())):
        assert template(f), f                         # the HAL, startup and linker script exist
    assert b.memory_source and b.active_source and b.sleep_source
    estimate = b.active_source.startswith("estimate") or b.sleep_source.startswith("estimate")
    assert b.estimated_power == estimate
    assert set(b.flashing.tools) <= set(PROGRAMMERS)
    for m in b.measured_by:
        assert m.kind in ("firmware", "unicorn") and m.method and m.tools
        assert m.emulator in (*b.emulators, "unicorn")
    if b.mcu:
        assert b.flash_bytes and b.ram_bytes and b.stack_reserve and b.runtime_ram
        assert b.active_current_a > b.sleep_current_a > 0


ADD_A_BOARD = r'''
import dataclasses, json, sys

import sensorbudget.firmware_gen.boards.entries as entries

base = entries.NUCLEO_F4
new = dataclasses.replace(base, name="test-f4", board="a test board", measured_by=(
    dataclasses.replace(base.measured_by[0], name="qemu-test-f4"),))
entries.ENTRIES = entries.ENTRIES + (new,)          # the one entry
for name in [m for m in sys.modules if m.startswith(("sensorbudget.firmware_gen",
                                                     "sensorbudget.device_sim",
                                                     "sensorbudget.cli"))]:
    if name not in ("sensorbudget.firmware_gen.boards.entries",
                    "sensorbudget.firmware_gen.boards.board"):
        del sys.modules[name]                       # everything else reads the registry again

from click.testing import CliRunner

from sensorbudget.cli import main
from sensorbudget.cli_simulate import simulate_command
from sensorbudget.device_sim.backends import BACKENDS, make_backend
from sensorbudget.device_sim.costs import PROFILES
from sensorbudget.firmware_gen import generate_firmware
from sensorbudget.firmware_gen.memory import RUNTIME_RAM
from sensorbudget.firmware_gen.targets import get_target
from sensorbudget.trainer.bundle.model import load_bundle

targets = json.loads(CliRunner().invoke(main, ["targets", "test-f4", "--json"]).output)
backend = make_backend("qemu-test-f4", model=None, workdir=".", firmware_dir=".")
ctx = simulate_command.make_context("simulate", [sys.argv[1], "--recordings", sys.argv[1],
                                                 "--report", "r", "--backend", "qemu-test-f4",
                                                 "--board", "test-f4"])
bundle = load_bundle(sys.argv[1])
files = {t: generate_firmware(bundle, target=t).files for t in ("test-f4", "nucleo-f4")}
print(json.dumps({
    "board": get_target("test-f4").board, "targets": targets["test-f4"]["board"],
    "clock": PROFILES["test-f4"].clock_hz, "runtime_ram": RUNTIME_RAM["test-f4"],
    "backend": [backend.target, backend.profile], "listed": "qemu-test-f4" in BACKENDS,
    "cli": [ctx.params["backend"], ctx.params["board"]],
    "same_files": sorted(files["test-f4"]) == sorted(files["nucleo-f4"]),
    "same_hal": all(files["test-f4"][f] == files["nucleo-f4"][f]
                    for f in get_target("test-f4").hal)}))
'''


def test_adding_a_board_is_one_entry(bm_bundle, tmp_path):
    """A new entry (a copy of the Nucleo's under another name, with its own backend) is a
    target, a costed profile, a fit check, a backend and a CLI choice with nothing else edited
    (run in a fresh interpreter: the registry is read at import)."""
    import os
    import subprocess
    import sys

    from tests.paths import REPO

    script = tmp_path / "add_a_board.py"
    script.write_text(ADD_A_BOARD)
    run = subprocess.run([sys.executable, str(script), str(bm_bundle.path)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    base = BOARDS["nucleo-f4"]
    assert got == {"board": "a test board", "targets": "a test board", "clock": base.clock_hz,
                   "runtime_ram": base.runtime_ram, "backend": ["test-f4", "test-f4"],
                   "listed": True, "cli": ["qemu-test-f4", "test-f4"], "same_files": True,
                   "same_hal": True}
