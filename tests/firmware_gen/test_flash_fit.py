"""Flash before link (issue 28 items 2 and 3, :mod:`sensorbudget.firmware_gen.memory_flash`):
the plan's flash estimate agrees with the linker's ``size -A`` within the stated margin on
generated cases the calibration never saw; a design over a part's flash is refused before any
compiler runs with the byte counts, and linking it anyway overflows; the greedy under a flash
budget equals a brute-force greedy; ``train --board --max-flash`` prints flash per step and
picks a design whose estimate is within the budget.

``SB_FLASH_SEEDS`` (default 4) generated cases from seed 5000 (the calibration used 0-119),
each for every board target and numeric format the fit checks let through.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.firmware_gen import FirmwareGenError, generate_firmware
from sensorbudget.firmware_gen.memory import add_memory_costs
from sensorbudget.firmware_gen.memory_flash import (FLASH_BYTES, flash_estimate, flash_margin,
                                                    selection_flash)
from sensorbudget.firmware_gen.plan import make_plan
from sensorbudget.firmware_gen.targets import get_target
from tests.firmware_gen import gen_runner as R
from tests.firmware_gen import generative as G
from tests.firmware_gen.conftest import need_tools
from tests.firmware_gen.test_memory import SIX, _feature_set
from tests.trainer.selection import test_group_math as gm
from tests.trainer.selection.test_transform_costs import totals_with_transforms
from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.selection.cost_params import KINDS

SEEDS = range(5000, 5000 + int(os.environ.get("SB_FLASH_SEEDS", "4")))
BOARDS = ("mps2-an386", "mps2-an385", "nucleo-f4", "arduino-uno", "hifive1", "ch32v003")
TOOL = {"mps2-an386": "arm-none-eabi-gcc", "mps2-an385": "arm-none-eabi-gcc",
        "nucleo-f4": "arm-none-eabi-gcc", "arduino-uno": "avr-gcc",
        "hifive1": "riscv64-unknown-elf-gcc", "ch32v003": "riscv64-unknown-elf-gcc"}


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    return G.write_recordings(tmp_path_factory.mktemp("flash") / "recordings", 2026)


def _bundle_and_plans(case, recordings, work):
    data = R.recordings_arrays(recordings)
    bundle, _ = G.case_bundle(case, G.feature_set(case, recordings, work), work / "bundle")
    plans = {}
    for numeric in ("float32", "q15", "q31"):
        scales = None
        if numeric != "float32":
            channels = make_plan(bundle, name=case.name, numeric="float32").channels
            scales = R.full_scale(case, channels, data)
        try:
            plans[numeric] = make_plan(bundle, name=case.name, numeric=numeric,
                                       full_scale=scales)
        except FirmwareGenError:
            continue
    return bundle, plans


@pytest.mark.parametrize("target", BOARDS)
def test_flash_estimate_agrees_with_the_linker_on_unseen_generated_cases(recordings, tmp_path,
                                                                        target):
    need_tools("make", TOOL[target])
    from sensorbudget.firmware_gen.build import build, write_firmware

    tgt, worst, built = get_target(target), 0, 0
    for seed in SEEDS:
        case = G.make_case(seed)
        bundle, plans = _bundle_and_plans(case, recordings, tmp_path / f"s{seed}")
        for numeric, plan in plans.items():
            try:
                fw = generate_firmware(bundle, target=target, numeric=numeric, name=case.name,
                                       plan=plan, kernel=case.kernel)
                linked = build(write_firmware(fw, tmp_path / f"s{seed}" / numeric))
            except FirmwareGenError as exc:
                assert R.is_refusal(str(exc)), str(exc)
                continue
            error = fw.manifest["flash_estimate"] - linked["flash_bytes"]
            assert fw.manifest["flash_estimate"] == flash_estimate(plan, tgt, case.kernel)
            assert abs(error) <= flash_margin(tgt), (seed, numeric, error)
            worst, built = max(worst, abs(error)), built + 1
    print(f"{target}: max |flash estimate - linked| = {worst} bytes over {built} images "
          f"(margin {flash_margin(tgt)})")
    assert built > 0


def _oversized(recordings, work):
    """Nine shape and spectral kinds on six channels (window 16, four targets), Q31, unrolled:
    within the CH32V003's 2 KB of RAM, far over its 16 KB of flash."""
    kinds = {"bandpower:1-4": "bandpower_1to4", "entropy": "entropy", "skew": "skew",
             "kurtosis": "kurtosis", "domfreq": "domfreq", "centroid": "centroid",
             "autocorr:3": "autocorr_3", "cadence:2-9": "cadence_2to9",
             "percentile:90": "percentile_90"}
    channels = G.CHANNELS[:6]
    blocks = [{"channels": list(channels), "extractors": list(kinds)}]
    feats = tuple(f"{c}.{k}" for c in channels for k in kinds.values())
    case = G.Case(7001, G.sensors_toml(G.CHANNELS, 16, 16, blocks, G.TARGETS), 16, 16, feats,
                  "ch32v003", "q31", G.CHANNELS, "unrolled")
    return case, *_bundle_and_plans(case, recordings, work)


def test_a_design_over_the_parts_flash_is_refused_before_compiling(recordings, tmp_path,
                                                                   monkeypatch):
    case, bundle, plans = _oversized(recordings, tmp_path)
    target = get_target("ch32v003")
    estimate = flash_estimate(plans["q31"], target, "unrolled")
    assert estimate - flash_margin(target) > target.flash_bytes
    with pytest.raises(FirmwareGenError) as info:
        generate_firmware(bundle, target="ch32v003", numeric="q31", name=case.name,
                          plan=plans["q31"], kernel="unrolled")
    message = str(info.value)
    assert f"needs {estimate} bytes of flash" in message and "has 16384" in message
    assert "before compiling" in message and "would fit:" in message and "\n" not in message
    assert f"of the {plans['q31'].k} features" in message
    assert R.is_refusal(message)
    # independent check: the linker, given the same design, overflows the part's flash
    need_tools("make", TOOL["ch32v003"])
    from sensorbudget.firmware_gen import firmware
    from sensorbudget.firmware_gen.build import build, write_firmware

    monkeypatch.setattr(firmware, "check_flash", lambda *a, **k: None)
    fw = generate_firmware(bundle, target="ch32v003", numeric="q31", name=case.name,
                           plan=plans["q31"], kernel="unrolled")
    with pytest.raises(FirmwareGenError, match="needs [0-9]+ bytes of flash"):
        build(write_firmware(fw, tmp_path / "linked"))


@pytest.mark.parametrize("target,numeric", [("ch32v003", "float32"), ("arduino-uno", "q15")])
@pytest.mark.parametrize("rule", ["error", "cost-ratio"])
def test_greedy_under_a_flash_budget_equals_bruteforce(monkeypatch, recordings, tmp_path, target,
                                                       numeric, rule):
    from sensorbudget.trainer.sensing.sensor_budget import cost_kwargs_from_feature_set

    fs = _feature_set(recordings, tmp_path, G.issue_case().toml)
    tgt = get_target(target)
    own, resources, uses, base = selection_flash(fs, tgt, numeric)
    # a flash budget that binds: about the three cheapest candidates' bytes, each alone
    alone = sorted(own[e] + sum(resources[r] for r in uses[e]) for e in own)
    budget = int(base + flash_margin(tgt) + sum(alone[:3]))
    kw = add_memory_costs(cost_kwargs_from_feature_set(fs), fs, tgt, numeric, 1,
                          max_ram=tgt.ram_bytes, max_flash=budget)
    ext_costs = {e: {k: float(c.get(k, 0.0)) for k in KINDS}
                 for e, c in kw["extractor_costs"].items()}
    X, Y = np.asarray(fs.X, dtype=np.float64), np.asarray(fs.Y, dtype=np.float64)
    est = GreedyRLS(budget=None, lam=0.6, strategy=rule, extractors=kw["extractors"],
                    extractor_sensors=kw["extractor_sensors"], sensor_costs=kw["sensor_costs"],
                    extractor_costs=ext_costs, max_flash=kw["max_flash"]).fit(X, Y)
    assert 1 <= len(est.path_) < len(fs.feature_names)
    assert est.path_[-1]["costs"]["flash"] <= kw["max_flash"]
    monkeypatch.setattr(gm, "KINDS", KINDS)
    monkeypatch.setattr(gm, "totals_by_definition", totals_with_transforms)
    gm.check_against_bruteforce(est, X, Y, 0.6, kw["extractors"],
                                limits={"flash": kw["max_flash"]}, ext_costs=ext_costs,
                                ext_sensors=kw["extractor_sensors"],
                                sensor_costs=kw["sensor_costs"], rule=rule)


def _train(tmp_path, recordings, *extra):
    from sensorbudget.cli import main

    (tmp_path / "six.sensors.toml").write_text(G.sensors_toml(G.CHANNELS, 64, 32, SIX))
    out = tmp_path / "bundle"
    result = CliRunner().invoke(main, ["train", str(recordings), "--sensors",
                                       str(tmp_path / "six.sensors.toml"), "--budget", "6",
                                       "--lam", "1", "-o", str(out), *extra])
    return result, out


def test_train_max_flash_picks_a_design_within_the_budget(tmp_path, recordings):
    from sensorbudget.trainer.bundle.model import load_bundle

    target = get_target("ch32v003")
    table = FLASH_BYTES["ch32v003"]
    max_flash = int(table["base:float32"] + table["target"] + flash_margin(target) + 2500)
    result, out = _train(tmp_path, recordings, "--board", "ch32v003", "--max-flash",
                         str(max_flash))
    assert result.exit_code == 0, result.output
    assert "flash per step on ch32v003 (float32" in result.output
    bundle = load_bundle(out)
    steps = bundle.meta["path"]
    assert 1 <= len(steps) < 6 and all("flash" in e["costs"] for e in steps)
    assert bundle.meta["costs"]["budgets"]["max_flash"] <= max_flash
    plan = make_plan(bundle, name="sbmodel", numeric="float32")
    # the design's plan estimate is within the budget (the selection's kernel bytes are the
    # dearer kernel's, so the path's total is an upper bound of the estimate)
    last = result.output.split("flash per step")[1].split(", ")[-1].split(": ")[1].split()[0]
    estimate = flash_estimate(plan, target)
    assert estimate <= int(last) <= max_flash - flash_margin(target) + 1
    # info shows the RAM and flash each step's design adds, as the path records them
    from sensorbudget.cli import main

    info = CliRunner().invoke(main, ["info", str(out)])
    assert info.exit_code == 0, info.output
    header = next(line for line in info.output.splitlines() if line.lstrip().startswith("step"))
    assert header.split()[-4:] == ["ram", "B", "flash", "B"]
    rows = [line.split() for line in info.output.splitlines()
            if line.split() and line.split()[0].isdigit()]
    assert [(int(r[-2]), int(r[-1])) for r in rows] == [
        (round(e["costs"]["ram"]), round(e["costs"]["flash"])) for e in steps]


def test_max_flash_needs_a_board(tmp_path, recordings):
    result, out = _train(tmp_path, recordings, "--max-flash", "9000")
    assert result.exit_code == 2 and "--max-flash needs --board" in result.output
    assert "Traceback" not in result.output and not out.exists()
    result, out = _train(tmp_path, recordings, "--board", "ch32v003", "--max-flash", "100")
    assert result.exit_code == 2 and "leaves no flash" in result.output, result.output
    assert "Traceback" not in result.output and not out.exists()
