"""RAM and flash of a multi-rate firmware from its plan (firmware_gen.multirate_memory): the
context's size equals ``sizeof(<p>_mr_t)`` as gcc, arm-none-eabi-gcc and avr-gcc lay it out
(checked at compile time), each group's series scratch equals its stream object's ``.bss``, the
RAM check refuses exactly when the estimate does not fit, and a one-group plan's flash parts
are the single-rate model's."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess

import pytest

from sensorbudget.firmware_gen.errors import FirmwareGenError
from sensorbudget.firmware_gen.memory import RAM_MARGIN, series_bytes
from sensorbudget.firmware_gen.memory_flash import flash_parts
from sensorbudget.firmware_gen.multirate import make_multirate_plan
from sensorbudget.firmware_gen.multirate_c import multirate_sources
from sensorbudget.firmware_gen.multirate_memory import (
    check_multirate_ram,
    context_bytes,
    multirate_flash_parts,
    multirate_ram_estimate,
    multirate_ram_parts,
)
from sensorbudget.firmware_gen.targets import get_target
from tests.firmware_gen.test_multirate_c import bundle, spec  # noqa: F401

#: compiler, its flags, the AVR layout, its size tool
COMPILERS = {"gcc": ((), False, "size"),
             "arm-none-eabi-gcc": (("-mthumb", "-mcpu=cortex-m4"), False, "arm-none-eabi-size"),
             "avr-gcc": (("-mmcu=atmega328p",), True, "avr-size")}


@pytest.mark.parametrize("cc", sorted(COMPILERS))
@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_context_and_scratch_are_the_compilers_sizes(bundle, cc, numeric, tmp_path):  # noqa: F811
    flags, avr, size_tool = COMPILERS[cc]
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed (make deps-embedded)")
    mplan = make_multirate_plan(bundle, name="sbmodel", numeric=numeric)
    for fname, text in multirate_sources(mplan, bundle).items():
        (tmp_path / fname).write_text(text, encoding="ascii")
    n = context_bytes(mplan, avr)
    (tmp_path / "check.c").write_text(
        '#include "sbmodel_multirate.h"\n'
        f"typedef char check_size[(sizeof(sbmodel_mr_t) == {n}u) ? 1 : -1];\n")
    done = subprocess.run([cc, *flags, "-std=c99", "-c", str(tmp_path / "check.c"), "-o",
                           str(tmp_path / "check.o")], capture_output=True, text=True)
    assert done.returncode == 0, (n, done.stderr[-1500:])
    for g in mplan.groups:
        obj = tmp_path / f"{g.plan.name}.o"
        done = subprocess.run([cc, *flags, "-std=c99", "-Os", "-c",
                               str(tmp_path / f"{g.plan.name}_stream.c"), "-o", str(obj)],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-1500:]
        table = subprocess.run([size_tool, "-A", str(obj)], capture_output=True,
                               text=True).stdout
        ram = sum(int(m.group(1)) for m in re.finditer(r"^\.(?:bss|data)\S*\s+(\d+)", table,
                                                       re.M))
        assert ram == series_bytes(g.plan), (g.plan.name, table)


@pytest.mark.parametrize("board", ["arduino-uno", "nucleo-f4"])
@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_the_ram_check_refuses_exactly_what_does_not_fit(bundle, board, numeric):  # noqa: F811
    target = get_target(board)
    mplan = make_multirate_plan(bundle, name="sbmodel", numeric=numeric)
    parts = multirate_ram_parts(mplan, target)
    total = multirate_ram_estimate(mplan, target)
    assert total == sum(parts.values()) and parts["multi-rate context"] > 0
    fits = total - RAM_MARGIN + target.profile.stack_reserve <= target.ram_bytes
    if fits:
        check_multirate_ram(mplan, target)
    else:
        with pytest.raises(FirmwareGenError, match=f"{target.ram_bytes}.*at 10 Hz"):
            check_multirate_ram(mplan, target)
    assert multirate_ram_parts(mplan, get_target("host")) == {}


def test_the_flash_of_one_group_is_the_single_rate_models(bundle):  # noqa: F811
    """One (sensor, rate) group: extractors, tables and model as the single-rate estimate of
    the group's plan; the unit adds its channel and input terms."""
    target = get_target("nucleo-f4")
    mplan = make_multirate_plan(bundle, name="sbmodel", numeric="q15")
    for g in mplan.groups:
        single = flash_parts(g.plan, target)
        one = multirate_flash_parts(dataclasses.replace(mplan, groups=(g,),
                                                        features=g.plan.features), target)
        assert one["extractors (per sensor and rate)"] == single["extractors"]
        assert one["spectrum tables"] == single["spectrum tables"]
        assert one["runtime and C library"] == single["runtime and C library"]
    every = multirate_flash_parts(mplan, target)
    assert every["extractors (per sensor and rate)"] >= max(
        flash_parts(g.plan, target)["extractors"] for g in mplan.groups)


@pytest.mark.parametrize("target,numeric,tool", [("mps2-an386", "float32", "arm-none-eabi-gcc"),
                                                 ("nucleo-f4", "q15", "arm-none-eabi-gcc"),
                                                 ("arduino-uno", "q15", "avr-gcc")])
def test_estimates_hold_against_the_linked_image(bundle, target, numeric, tool,  # noqa: F811
                                                 tmp_path):
    """The built multi-rate firmware's static RAM is within RAM_MARGIN of the plan's estimate
    (what check_multirate_ram relies on) and its flash within the single-rate flash margin."""
    import json

    from sensorbudget.firmware_gen.api import firmware
    from sensorbudget.firmware_gen.memory_flash import flash_margin

    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed (make deps-embedded)")
    fw = firmware(bundle.path, target=target, numeric=numeric, build=True)
    fw.save(tmp_path / "fw")
    foot = json.loads((tmp_path / "fw" / "footprint.json").read_text())
    mplan = make_multirate_plan(bundle, name=fw.manifest["name"], numeric=numeric)
    ram = multirate_ram_estimate(mplan, get_target(target), multirate_sources(mplan, bundle))
    flash = multirate_flash_parts(mplan, get_target(target))
    assert abs(foot["ram_bytes"] - ram) <= RAM_MARGIN, (foot["ram_bytes"], ram)
    assert abs(foot["flash_bytes"] - sum(flash.values())) <= flash_margin(get_target(target)), (
        foot["flash_bytes"], flash)
