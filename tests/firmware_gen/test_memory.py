"""RAM as a selection budget (issue 28, :mod:`sensorbudget.firmware_gen.memory`): the greedy under a board's
RAM budget equals a brute-force greedy whose totals are computed by definition (shared ring
buffers and scratch arrays paid once), its designs' RAM agrees with the plan's estimate, and
``train --board arduino-uno`` on the issue's six features picks a design that the Uno's
firmware check accepts, that builds, and that replays on simavr with zero mismatches, where
the unbudgeted design is refused before compiling."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.firmware_gen import FirmwareGenError, generate_firmware
from sensorbudget.firmware_gen.memory import RAM_MARGIN, add_memory_costs, ram_estimate
from sensorbudget.firmware_gen.plan import make_plan
from sensorbudget.firmware_gen.targets import get_target
from tests.firmware_gen import gen_runner as R
from tests.firmware_gen import generative as G
from tests.firmware_gen.conftest import need_tools
from tests.trainer.selection import test_group_math as gm
from tests.trainer.selection.test_transform_costs import totals_with_transforms
from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.selection.cost_params import KINDS

#: the issue's six features alone, in a sensors.toml of their own
SIX = [{"channels": ["leg_horiz_fwd"], "extractors": ["mean", "last"]},
       {"channels": ["ankle_vert"], "extractors": ["min"]},
       {"channels": ["leg_horiz_lateral"], "extractors": ["ptp"]},
       {"channels": ["ankle_horiz_lateral"], "extractors": ["rms"]},
       {"group": "leg_acc", "channels": ["leg_vert", "leg_horiz_fwd", "leg_horiz_lateral"],
        "extractors": ["mag_mean"]}]


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    return G.write_recordings(tmp_path_factory.mktemp("memory") / "recordings", 2026)


def _feature_set(recordings, tmp_path, toml):
    from sensorbudget.trainer.sensing.feature_set import load_feature_set

    path = tmp_path / "sensors.toml"
    path.write_text(toml)
    return load_feature_set(recordings, path)


@pytest.mark.parametrize("target,numeric", [("arduino-uno", "float32"), ("arduino-uno", "q15"),
                                            ("mps2-an385", "float32")])
@pytest.mark.parametrize("rule", ["error", "cost-ratio"])
def test_greedy_under_a_ram_budget_equals_bruteforce(monkeypatch, recordings, tmp_path, target,
                                                     numeric, rule):
    from sensorbudget.trainer.sensing.sensor_budget import cost_kwargs_from_feature_set

    fs = _feature_set(recordings, tmp_path, G.issue_case().toml)
    kw = add_memory_costs(cost_kwargs_from_feature_set(fs), fs, get_target(target), numeric, 1,
                       max_ram=5300 if target == "mps2-an385" else None)
    ext_costs = {e: {k: float(c.get(k, 0.0)) for k in KINDS}
                 for e, c in kw["extractor_costs"].items()}
    X, Y = np.asarray(fs.X, dtype=np.float64), np.asarray(fs.Y, dtype=np.float64)
    est = GreedyRLS(budget=None, lam=0.6, strategy=rule, extractors=kw["extractors"],
                    extractor_sensors=kw["extractor_sensors"], sensor_costs=kw["sensor_costs"],
                    extractor_costs=ext_costs, max_ram=kw["max_ram"]).fit(X, Y)
    # the budget binds: the path ends with RAM left for no further candidate
    assert 2 <= len(est.path_) < len(fs.feature_names)
    assert est.path_[-1]["costs"]["ram"] <= kw["max_ram"]
    monkeypatch.setattr(gm, "KINDS", KINDS)
    monkeypatch.setattr(gm, "totals_by_definition", totals_with_transforms)
    gm.check_against_bruteforce(est, X, Y, 0.6, kw["extractors"], limits={"ram": kw["max_ram"]},
                                ext_costs=ext_costs, ext_sensors=kw["extractor_sensors"],
                                sensor_costs=kw["sensor_costs"], rule=rule)


def _train(tmp_path, recordings, *extra):
    from sensorbudget.cli import main

    (tmp_path / "six.sensors.toml").write_text(G.sensors_toml(G.CHANNELS, 64, 32, SIX))
    out = tmp_path / ("bundle" + "_".join(extra).replace("-", ""))
    result = CliRunner().invoke(main, ["train", str(recordings), "--sensors",
                                       str(tmp_path / "six.sensors.toml"), "--budget", "6",
                                       "--lam", "1", "-o", str(out), *extra],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    from sensorbudget.trainer.bundle.model import load_bundle

    return load_bundle(out), result.output


def test_train_board_picks_a_design_that_fits_and_replays_on_simavr(tmp_path, recordings):
    need_tools("make", "avr-gcc", "gcc")
    from sensorbudget.device_sim.backends import available_backends

    reason = available_backends().get("simavr")
    if reason is not None:
        pytest.skip(f"backend simavr: {reason}")
    from sensorbudget.firmware_gen.build import build, build_simavr_harness, write_firmware

    full, _ = _train(tmp_path, recordings)
    assert len(full.meta["selected"]) == 6
    with pytest.raises(FirmwareGenError, match="before compiling.*would fit"):
        generate_firmware(full, target="arduino-uno", numeric="float32")
    bundle, output = _train(tmp_path, recordings, "--board", "arduino-uno")
    assert "static RAM per step on arduino-uno" in output
    steps = bundle.meta["path"]
    assert 1 <= len(steps) < 6 and all("ram" in e["costs"] for e in steps)
    plan = make_plan(bundle, name="sbmodel", numeric="float32")
    target = get_target("arduino-uno")
    estimate = ram_estimate(plan, target)
    # the path's last line is the plan's estimate of the chosen design, which fits the Uno
    ram_line = output.split("static RAM per step")[1].splitlines()[0]
    last = ram_line.split(", ")[-1].split(": ")[1].strip()
    assert abs(int(last.split()[0]) - estimate) <= RAM_MARGIN
    assert estimate + target.profile.stack_reserve <= target.ram_bytes
    fw = generate_firmware(bundle, target="arduino-uno", numeric="float32")
    out = write_firmware(fw, tmp_path / "uno")
    footprint = build(out)
    assert abs(footprint["ram_bytes"] - estimate) <= RAM_MARGIN
    data = R.recordings_arrays(recordings)
    windows = R.replay(out, plan, bundle, R.device_samples(plan, data[0]),
                       harness=build_simavr_harness(tmp_path / "simavr"))
    assert windows > 10


def test_board_options_are_checked(tmp_path, recordings):
    from sensorbudget.cli import main

    (tmp_path / "six.sensors.toml").write_text(G.sensors_toml(G.CHANNELS, 64, 32, SIX))
    base = ["train", str(recordings), "--sensors", str(tmp_path / "six.sensors.toml"),
            "--budget", "3", "-o", str(tmp_path / "b")]
    for extra, message in ((["--max-ram", "1000"], "--max-ram needs --board"),
                           (["--board", "host"], "no RAM limit"),
                           (["--board", "arduino-uno", "--max-ram", "300"], "leaves no RAM"),
                           (["--board", "arduino-uno", "--unit", "sensor"], "--unit feature")):
        result = CliRunner().invoke(main, base + extra)
        assert result.exit_code == 2 and message in result.output, result.output
        assert "Traceback" not in result.output and not (tmp_path / "b").exists()
