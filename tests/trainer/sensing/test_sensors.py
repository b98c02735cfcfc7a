"""sensors.toml: the schema, its validation errors, and the shipped examples."""

import copy
import math

import pytest

from tests.fixtures import ACCEL, sensor_spec
from tests.paths import EXAMPLES
from sensorbudget.trainer.errors import DataError, TrainerError
from sensorbudget.trainer.sensing.sensors import load_sensor_spec, parse_sensor_spec

BASE = sensor_spec(
    [ACCEL, {"name": "gyro", "channels": ["gx"], "unit_price": 2.5, "power_w": 0.015,
             "read_time_s": 0.1}],
    [{"channels": ["accel", "gx"], "extractors": ["mean", "std"]},
     {"group": "acc", "channels": ["ax", "ay"], "extractors": ["mag_mean"]},
     {"group": "ax_gx", "channels": ["ax", "gx"], "extractors": ["corr"]}],
    window=4, hop=2, rate_hz=10)


def spec_with(**changes):
    """BASE with changes given as dotted paths: spec_with(**{"sensors.0.unit_price": -1})."""
    data = copy.deepcopy(BASE)
    for path, value in changes.items():
        *parents, last = path.split(".")
        node = data
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        if value is None:
            del node[int(last) if last.isdigit() else last]
        else:
            node[int(last) if last.isdigit() else last] = value
    return data


def test_valid_spec_structure():
    spec = parse_sensor_spec(BASE)
    assert [f.name for f in spec.features] == [
        "ax.mean", "ax.std", "ay.mean", "ay.std", "gx.mean", "gx.std", "acc.mag_mean",
        "ax_gx.corr"]
    corr = spec.features[-1]
    assert corr.channels == ("ax", "gx") and corr.sensors == ("accel", "gyro")
    assert spec.features[-2].sensors == ("accel",)
    assert spec.sample_rate_hz == 10 and (spec.window, spec.hop) == (4, 2)
    gyro = spec.sensors[1].to_dict()
    assert gyro["energy_per_reading_j"] == pytest.approx(0.0015)
    assert gyro["average_power_w"] == pytest.approx(0.015)
    assert spec.channel_sensor == {"ax": "accel", "ay": "accel", "gx": "gyro"}
    assert spec.on_missing == "skip"


def test_window_in_seconds_and_overrides():
    spec = parse_sensor_spec(spec_with(window={"length_s": 2.0, "hop_s": 0.5}))
    assert (spec.window, spec.hop) == (20, 5)
    assert spec.resolve_window() == (20, 5)
    assert spec.resolve_window(window=8) == (8, 5)
    assert parse_sensor_spec(spec_with(window={"length": 6})).resolve_window() == (6, 6)


def test_sample_period_and_one_channel_sensor_named_like_its_channel():
    data = spec_with(**{"sensors.1.name": "gx", "sensors.1.sample_rate_hz": None,
                        "sensors.1.sample_period_s": 0.1})
    spec = parse_sensor_spec(data)
    assert spec.sensors[1].sample_rate_hz == pytest.approx(10)
    assert spec.channel_sensor["gx"] == "gx"


@pytest.mark.parametrize("changes,message", [
    ({"features.0.channels": ["az"]}, r"features\[0\]: unknown channel 'az'"),
    ({"features.0.extractors": ["median"]}, r"features\[0\]: unknown extractor 'median'"),
    ({"sensors.1.name": "accel"}, "duplicate name 'accel'"),
    ({"sensors.1.channels": ["ax"]}, "duplicate name 'ax'"),
    ({"sensors.1.channels": ["accel"]}, "duplicate name 'accel'"),
    ({"sensors.0.channels": ["ax", "ax"]}, "channels lists 'ax' twice"),
    ({"features.1.group": "ax_gx", "features.1.extractors": ["corr"],
      "features.1.channels": ["ay", "gx"]}, "duplicate feature name 'ax_gx.corr'"),
    ({"features.0.extractors": ["mean", "mean"]}, "extractors lists 'mean' twice"),
    ({"sensors.0.unit_price": -1.0}, r"sensor 'accel': unit_price=-1.0 must be >= 0"),
    ({"sensors.0.energy_per_reading_j": -1e-6}, "energy_per_reading_j=-1e-06 must be >= 0"),
    ({"sensors.1.power_w": -0.1}, "power_w=-0.1 must be >= 0"),
    ({"sensors.0.sample_rate_hz": 0}, "sample_rate_hz=0 must be > 0"),
    ({"sensors.0.unit_price": None}, "unit_price is required"),
    ({"sensors.0.unit_price": "cheap"}, "unit_price='cheap' must be a finite number"),
    ({"sensors.0.power_w": 0.1}, "not both"),
    ({"sensors.1.read_time_s": None}, "needs energy_per_reading_j, or both power_w"),
    ({"sensors.1.sample_rate_hz": 20}, "different sample rates"),
    ({"sensors.0.sample_period_s": 0.1}, "exactly one of sample_rate_hz and sample_period_s"),
    ({"sensors.0.name": "a-b"}, "name='a-b' must be a name"),
    ({"sensors.0.channels": ["a.x"]}, "'a.x' is not a name"),
    ({"sensors.0.colour": "red"}, "unknown key 'colour'"),
    ({"extras": 1}, "unknown key 'extras'"),
    ({"window.length_s": 0.25, "window.length": None}, "not a whole number of samples"),
    ({"window.length": 0}, "length=0 must be a whole number of samples >= 1"),
    ({"window.on_missing": "interpolate"}, "on_missing='interpolate' must be one of"),
    ({"task": "ranking"}, "task='ranking'"),
    ({"features.0.group": "g"}, "only for multi-channel extractors"),
    ({"features.1.group": None}, "need group"),
    ({"features.1.extractors": ["mag_mean", "mean"]}, "mixes per-channel and multi-channel"),
    ({"features.2.channels": ["ax", "ay", "gx"]}, "'corr' takes 2 channels; group 'ax_gx' has 3"),
    ({"features.1.channels": ["ax"]}, "'mag_mean' takes 2\\+ channels"),
    ({"features": []}, r"no \[\[features\]\] tables"),
    ({"sensors": []}, r"no \[\[sensors\]\] tables"),
    ({"targets": []}, r"targets = \[\] selects no target"),
    ({"targets": ["y", 3]}, "targets must be a list of strings"),
])
def test_invalid_specs_are_clear_errors(changes, message):
    with pytest.raises(DataError, match=message):
        parse_sensor_spec(spec_with(**changes), source="s.toml")


def test_window_too_short_for_an_extractor():
    spec = parse_sensor_spec(spec_with(**{"features.0.extractors": ["mad"]}))
    with pytest.raises(DataError, match=r"'ax.mad': extractor 'mad' needs window >= 2 samples "
                                        r"\(window=1\)"):
        spec.resolve_window(window=1)
    with pytest.raises(DataError, match="no window length"):
        parse_sensor_spec(spec_with(window=None)).resolve_window()
    with pytest.raises(DataError, match="hop=0"):
        spec.resolve_window(hop=0)


def test_load_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[sensors]\nname = 1\n")
    with pytest.raises(DataError, match="is not valid TOML"):
        load_sensor_spec(bad)
    with pytest.raises(TrainerError, match="does not exist"):
        load_sensor_spec(tmp_path / "missing.toml")


def test_examples_load():
    bm = load_sensor_spec(EXAMPLES / "basic_motions.sensors.toml")
    assert (bm.window, bm.hop, bm.sample_rate_hz) == (20, 10, 10)
    assert len(bm.features) == 69
    assert any(len(f.sensors) == 2 for f in bm.features)        # many-to-many case
    accel, gyro = bm.sensors
    assert accel.energy_per_reading_j < gyro.energy_per_reading_j / 100
    aq = load_sensor_spec(EXAMPLES / "air_quality.sensors.toml")
    assert aq.sample_rate_hz == pytest.approx(1 / 3600)
    assert aq.targets == ("co_gt", "c6h6_gt", "nox_gt", "no2_gt")
    assert {f.sensors for f in aq.features if f.kind == "corr"} >= {("s1_co", "th")}


@pytest.mark.parametrize("changes, message", [
    ({"sensors.1.power_w": 1e308, "sensors.1.read_time_s": 1e308}, r"power_w=1e\+308 exceeds"),
    ({"sensors.1.power_w": 1e60, "sensors.1.read_time_s": 1e60},
     r"power_w x read_time_s=1e\+120 exceeds 1e\+100"),
    ({"sensors.0.energy_per_reading_j": 1e300}, r"energy_per_reading_j=1e\+300 exceeds"),
    ({"sensors.0.unit_price": 2e100}, r"unit_price=2e\+100 exceeds"),
    ({"sensors.0.sample_rate_hz": None, "sensors.0.sample_period_s": 1e-300,
      "sensors.1.sample_rate_hz": None, "sensors.1.sample_period_s": 1e-300},
     r"1 / sample_period_s=1e\+300 exceeds"),
    ({"sensors.0.sample_rate_hz": 1e-320, "sensors.1.sample_rate_hz": 1e-320},
     r"sample rate 9.99989e-321 Hz is below 1e-100 Hz"),
])
def test_costs_that_overflow_are_refused_where_they_are_read(changes, message):
    """power_w = read_time_s = 1e308 used to pass (energy inf) and fail later in train."""
    with pytest.raises(DataError, match=message):
        parse_sensor_spec(spec_with(**changes), source="s.toml")


def test_the_largest_costs_stay_finite_through_a_budget():
    from sensorbudget.trainer.sensing.sensors import MAX_QUANTITY, MAX_WINDOW

    spec = parse_sensor_spec(spec_with(**{"sensors.0.unit_price": MAX_QUANTITY,
                                          "sensors.1.power_w": 1e50,
                                          "sensors.1.read_time_s": 1e49}))
    energy = spec.sensors[1].energy_per_reading_j
    assert energy == pytest.approx(MAX_QUANTITY / 10)
    worst = sum(s.energy_per_reading_j for s in spec.sensors) * MAX_WINDOW * 10 ** 6
    assert math.isfinite(worst) and math.isfinite(spec.sensors[1].to_dict()["average_power_w"])
