"""Cost model: unit conversion, energy, deadline, duty cycle, battery life; profiles documented."""

import pytest

from sensorbudget.device_sim.costs import (
    PROFILES,
    energy_budget,
    estimate_costs,
    estimate_extractor,
    sensor_costs,
    stats3,
)

from .conftest import model_of


def test_profiles_are_the_registry_boards_one_board_per_name():
    """Every board of the registry has a cost profile with its clock, supply and currents; an
    alias is the same profile as its board (``cortex-m4f`` is the MPS2 AN386 image at the FPGA's
    25 MHz, not a second, 168 MHz board); time follows from the board's clock."""
    from sensorbudget.firmware_gen.boards import ALIASES, BOARDS

    assert set(PROFILES) == set(BOARDS) | set(ALIASES)
    for name, board in BOARDS.items():
        p = PROFILES[name]
        assert (p.name, p.clock_hz, p.supply_v, p.active_current_a, p.sleep_current_a,
                p.estimated_power, p.unit) == \
            (name, board.clock_hz, board.supply_v, board.active_current_a,
             board.sleep_current_a, board.estimated_power, board.cost_unit)
        assert board.active_source in p.source and board.sleep_source in p.source
        assert p.active_power_w > p.sleep_power_w > 0
        assert p.seconds(board.clock_hz, "cycles") == pytest.approx(1.0)
        assert p.seconds(3 * board.clock_hz, "instructions") == pytest.approx(3.0)   # 1 CPI
    for alias, name in ALIASES.items():
        assert PROFILES[alias] is PROFILES[name]
    assert PROFILES["host"].seconds(1e9, "nanoseconds") == pytest.approx(1.0)
    assert PROFILES["host"].estimated_power


def test_energy_budget_by_hand():
    prof = PROFILES["avr"]
    sensors = {"energy_j": 1e-3, "read_time_s": 0.01, "per_sensor": {}}
    out = energy_budget(compute_units=[16000, 16000, 3.2e6], unit="cycles", profile=prof,
                        sensors=sensors, period_s=0.1, battery_wh=1.0, sample_period_s=0.025)
    # median compute 16000 cycles = 1 ms at 16 MHz -> 50 uJ at 50 mW; the 0.2 s call misses
    assert out["compute_time_s"]["median"] == pytest.approx(1e-3)
    assert out["energy_per_prediction_j"]["compute"] == pytest.approx(5e-5)
    assert out["latency_s"]["min"] == pytest.approx(0.001) and not out["sensor_overrun"]
    assert out["deadline_misses"] == 1 and out["duty_cycle"] == pytest.approx(0.01)
    power = (1e-3 + 5e-5) / 0.1 + prof.sleep_power_w * 0.99
    assert out["average_power_w"] == pytest.approx(power)
    assert out["battery_life_h"] == pytest.approx(1.0 / power)


def test_sensor_costs_from_the_bundle(tiny):
    model = model_of(tiny[0])
    got = sensor_costs(model.meta)
    per = got["per_sensor"]
    assert set(per) == set(model.meta["required_sensors"])
    if "temp" in per:       # power_w x read_time_s = 10 uJ per reading, hop 4 readings
        assert per["temp"]["energy_j"] == pytest.approx(4 * 1e-5)
        assert got["read_time_s"] == pytest.approx(0.01)


def test_estimates_grow_with_the_window_and_the_target():
    m4, avr = PROFILES["nucleo-f4"], PROFILES["avr"]
    assert estimate_extractor("std", 20, 1, m4) < estimate_extractor("std", 40, 1, m4)
    assert estimate_extractor("mag_mean", 20, 3, m4) < estimate_extractor("mag_mean", 20, 3, avr)


def test_estimate_of_a_model(tiny):
    model = model_of(tiny[0])
    est = estimate_costs(model, PROFILES["nucleo-f4"])
    assert set(est["extractors"]) == {f.name for f in model.features}
    assert est["model"] == model.k * model.t * PROFILES["nucleo-f4"].mac_float


def test_stats3():
    assert stats3([3, None, 1, 2]) == {"min": 1.0, "median": 2.0, "max": 3.0, "mean": 2.0, "n": 3}
    assert stats3([]) is None


def test_measuring_backend_and_costed_board_are_separate(tmp_path):
    """Every measuring backend of the registry is costed, by default, as the board its image
    is built for; ``board=`` prices the same measurements with another board's clock and power
    (the image, and so what is measured, stays the backend's); python and serial cost with the
    registry's default board; unknown or conflicting boards are refused."""
    from types import SimpleNamespace

    from sensorbudget.device_sim.backends import make_backend
    from sensorbudget.device_sim.errors import DeviceError
    from sensorbudget.firmware_gen.boards import DEFAULT_BOARD, measurers

    model = SimpleNamespace(numeric="float32")
    assert len(measurers()) >= 9
    for spec, (board, how) in measurers().items():
        default = make_backend(spec, model=model, workdir=tmp_path, firmware_dir=tmp_path)
        assert default.profile == board.name and default.target == board.name
        assert default.cost_method == how.method
        other = next(b for b in ("nucleo-f4", "arduino-uno") if b != board.name)
        costed = make_backend(spec, model=model, workdir=tmp_path, firmware_dir=tmp_path,
                              board=other)
        assert costed.profile == other and costed.target == board.name
    alias = make_backend("qemu-m4f", model=model, workdir=tmp_path, board="avr")
    assert alias.profile == "arduino-uno"
    assert make_backend("serial:loop://", board=None).profile == DEFAULT_BOARD
    with pytest.raises(DeviceError, match=r"board='stm32' is not one of .*nucleo-f4"):
        make_backend("qemu-m4f", model=model, workdir=tmp_path, board="stm32")
    with pytest.raises(DeviceError, match="name two boards"):
        make_backend("serial:loop://", board="nucleo-f4", profile="hifive1")
    nucleo = PROFILES["nucleo-f4"]
    assert nucleo.active_current_a == pytest.approx(146e-6 * 16) and "DS10086" in nucleo.source


def _spectral_plan():
    from types import SimpleNamespace

    from sensorbudget.firmware_gen.plan import ExtractorPlan
    from sensorbudget.trainer.sensing.specs import parse_spec

    specs = [("ax.bandpower_1to3", "bandpower:1-3", 0), ("ax.entropy", "entropy", 0),
             ("ax.jerk.centroid", "jerk>centroid", 0), ("ay.skew", "skew", 1),
             ("ay.mean", "mean", 1)]
    exts = tuple(ExtractorPlan(n, parse_spec(s).kind, (c,), (i,), False, parse_spec(s))
                 for i, (n, s, c) in enumerate(specs))
    return SimpleNamespace(extractors=exts, channels=("ax", "ay"), window=40,
                           sample_rate_hz=10.0)


def test_transforms_are_estimated_once_each():
    from types import SimpleNamespace

    from sensorbudget.device_sim.costs import estimate_transform, fft_points

    m4 = PROFILES["nucleo-f4"]
    plan = _spectral_plan()
    model = SimpleNamespace(plan=plan, k=5, t=1, fixed=None, channels=plan.channels, window=40,
                            hop=20)
    est = estimate_costs(model, m4)
    # two spectral features of ax share one FFT; the jerk's spectrum is a second transform
    assert sorted(est["transforms"]) == ["ax.fft", "ax.jerk", "ax.jerk.fft"]
    assert set(est["extractors"]) == {e.name for e in plan.extractors}
    assert est["transforms"]["ax.fft"] == estimate_transform("ax.fft", 40, m4)
    assert est["transforms"]["ax.jerk.fft"] == estimate_transform("ax.jerk.fft", 39, m4)
    # (M/2) log2 M butterflies dominate: 128 points cost more than twice 64
    assert fft_points(40) == fft_points(64) == 64 and fft_points(65) == 128
    assert estimate_transform("ax.fft", 128, m4) > 2 * estimate_transform("ax.fft", 64, m4)
    # the FFT costs more than the features that read its bins, far more on a core without FPU
    assert est["transforms"]["ax.fft"] > 5 * est["extractors"]["ax.bandpower_1to3"]
    avr = estimate_costs(model, PROFILES["avr"])
    assert avr["transforms"]["ax.fft"] > 20 * est["transforms"]["ax.fft"]


def test_report_splits_a_measured_total_over_transforms_and_extractors():
    from types import SimpleNamespace

    from sensorbudget.device_sim.report import _breakdown, cost_section

    plan = _spectral_plan()
    model = SimpleNamespace(plan=plan, k=5, t=1, fixed=None, channels=plan.channels, window=40,
                            hop=20)
    result = SimpleNamespace(records=[SimpleNamespace(extractors=e, model=10.0, pushes=None,
                                                      window=w)
                                      for w, e in enumerate((8000.0, 9000.0, 10000.0, 11000.0))],
                             cost_unit="instructions", bench=None)
    backend = SimpleNamespace(profile="cortex-m4f", measured=True, per_extractor=lambda: None)
    cost = cost_section(result, backend, model)
    parts = sum(cost["per_extractor"].values()) + sum(cost["per_transform"].values())
    assert parts == pytest.approx(10000.0)          # the measured median, once
    assert cost["per_transform"]["ax.fft"] > cost["per_extractor"]["ax.entropy"]
    table = "\n".join(_breakdown(cost))
    assert "| transform | ax.fft |" in table and "| extractor | ay.skew |" in table
