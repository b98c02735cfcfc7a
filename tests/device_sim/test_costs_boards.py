"""The measuring backend and the costed board are separate (issue 27, "Boards"): one bundle
replayed on ``qemu-nucleo-f4`` (the Nucleo image in QEMU) and measured by ``unicorn-m4f --board
nucleo-f4`` (the MPS2 image's functions in unicorn, priced as the Nucleo) is costed with the same
board, so the same instructions give the same energy and battery life; each figure equals the
energy model recomputed by hand from the registry's board and the report's own counts."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.device_sim.backends import available_backends
from sensorbudget.firmware_gen.boards import get_board


def _need(*backends):
    for backend in backends:
        reason = available_backends().get(backend)
        if reason is not None:
            pytest.skip(f"backend {backend}: {reason}")


def _by_hand(report: dict, board_name: str, records) -> dict:
    """Time, compute energy and battery days of a report's measured per-prediction totals
    (pushes + window pass + model of the predictions after the first of each segment) on
    ``board_name``, from the registry's clock, supply and currents (one cycle per
    instruction): the definitions in device_sim.costs, written out again."""
    board = get_board(board_name)
    totals = [(r.pushes or 0) + r.extractors + r.model for r in records
              if r.extractors is not None and r.window > 0]
    seconds = float(np.median(totals)) / board.clock_hz
    compute = board.supply_v * board.active_current_a * seconds
    period = report["energy"]["deadline_s"]
    duty = min(1.0, seconds / period)
    power = ((report["sensors"]["energy_j"] + compute) / period
             + board.supply_v * board.sleep_current_a * (1 - duty))
    return {"median": float(np.median(totals)), "compute": compute,
            "days": report["energy"]["battery_wh"] / power / 24}


def test_same_bundle_on_qemu_nucleo_and_unicorn_costed_as_nucleo(tiny, tmp_path):
    _need("qemu-nucleo-f4", "unicorn-m4f")
    from sensorbudget.cli import main
    from sensorbudget.device_sim.simulate import simulate

    bundle, rec, _ = tiny
    qemu, qemu_result = simulate(bundle, rec, backend="qemu-nucleo-f4", bench=False,
                                 workdir=tmp_path / "w")
    # the acceptance command, through the command line
    result = CliRunner().invoke(main, ["simulate", str(bundle), "--recordings", str(rec),
                                       "--backend", "unicorn-m4f", "--board", "nucleo-f4",
                                       "--report", str(tmp_path / "u"), "--workdir",
                                       str(tmp_path / "w")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    uni = json.loads((tmp_path / "u" / "report.json").read_text())
    # the same replay through the Python call gives the same report and the records behind it
    again, uni_result = simulate(bundle, rec, backend="unicorn-m4f", board="nucleo-f4",
                                 bench=False, workdir=tmp_path / "w")
    assert again["energy"] == uni["energy"] and again["profile"] == uni["profile"]

    assert qemu["board"] == {"costed": "nucleo-f4", "image": "nucleo-f4"}
    assert uni["board"] == {"costed": "nucleo-f4", "image": "mps2-an386"}
    assert qemu["profile"] == uni["profile"] and uni["profile"]["name"] == "nucleo-f4"
    assert qemu["cost"]["unit"] == uni["cost"]["unit"] == "instructions"
    summary = (tmp_path / "u" / "summary.md").read_text()
    assert "costed board: nucleo-f4; measured by unicorn-m4f on the mps2-an386 image" in summary

    hand_q = _by_hand(qemu, "nucleo-f4", qemu_result.records)
    hand_u = _by_hand(uni, "nucleo-f4", uni_result.records)
    for report, hand in ((qemu, hand_q), (uni, hand_u)):
        assert report["cost"]["total"]["median"] == hand["median"]
        assert report["energy"]["energy_per_prediction_j"]["compute"] == \
            pytest.approx(hand["compute"], rel=1e-12)
        assert report["energy"]["battery_life_days"] == pytest.approx(hand["days"], rel=1e-12)
    # same instructions, same costs: the two images run the same compiled pushes, extractors
    # and kernel; QEMU's three timed regions (pushes, window pass, model) also hold the calls
    # into them (a few instructions each, constant), unicorn counts the functions alone.
    # Priced on one board, compute energy scales with the count and nothing else
    gap = hand_q["median"] - hand_u["median"]
    assert 0 <= gap <= 18
    assert qemu["energy"]["energy_per_prediction_j"]["compute"] / \
        uni["energy"]["energy_per_prediction_j"]["compute"] == \
        pytest.approx(hand_q["median"] / hand_u["median"], rel=1e-12)
    assert qemu["energy"]["battery_life_days"] == \
        pytest.approx(uni["energy"]["battery_life_days"], rel=1e-3)


def test_the_costed_board_changes_only_the_price(tiny, tmp_path):
    """unicorn-m4f's counts priced on its own image's board (mps2-an386, the default) and on
    the Uno: identical counts, each priced with its board's clock and power."""
    _need("unicorn-m4f")
    from sensorbudget.device_sim.simulate import simulate

    bundle, rec, _ = tiny
    own, own_result = simulate(bundle, rec, backend="unicorn-m4f", bench=False,
                               workdir=tmp_path / "w")
    uno, uno_result = simulate(bundle, rec, backend="unicorn-m4f", board="arduino-uno",
                               bench=False, workdir=tmp_path / "w")
    assert own["board"] == {"costed": "mps2-an386", "image": "mps2-an386"}
    assert uno["board"] == {"costed": "arduino-uno", "image": "mps2-an386"}
    assert own["cost"]["total"] == uno["cost"]["total"]
    for report, result, name in ((own, own_result, "mps2-an386"),
                                 (uno, uno_result, "arduino-uno")):
        hand = _by_hand(report, name, result.records)
        assert report["energy"]["battery_life_days"] == pytest.approx(hand["days"], rel=1e-12)

    def per_instruction(name):          # joules per instruction at one cycle each
        board = get_board(name)
        return board.supply_v * board.active_current_a / board.clock_hz

    ratio = per_instruction("arduino-uno") / per_instruction("mps2-an386")
    assert ratio > 5
    assert uno["energy"]["energy_per_prediction_j"]["compute"] == \
        pytest.approx(ratio * own["energy"]["energy_per_prediction_j"]["compute"], rel=1e-12)
