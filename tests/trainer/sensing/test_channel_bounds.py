"""Every channel's training bound is stored, so Q15 works for a bundle of rms/energy/std
features without --full-scale: bounds against a plain read of the CSV, the plan's full scales
against the power of two above them, and the host firmware replay in Q15 against the Python
reference (0 mismatches)."""

import math

import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.cli import main
from tests.export.helpers import need_gcc
from tests.fixtures import ACC, TEMP, sensor_spec, write_sensors_toml, write_stream
from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.sensing.channel_bounds import bounds_json, parse_bounds
from sensorbudget.trainer.sensing.feature_set import FeatureSet, load_feature_set

SHAPE_ONLY = [{"channels": ["acc", "temp"], "extractors": ["std", "energy"]}]


def _csv_bounds(path):
    table = np.genfromtxt(path, delimiter=",", names=True)
    return {c: float(np.nanmax(np.abs(table[c]))) for c in ("ax", "ay", "t")}


@pytest.fixture
def device(tmp_path):
    rec = write_stream(tmp_path / "rec.csv", nan_at=(5, 77))
    toml = write_sensors_toml(tmp_path / "s.toml", sensor_spec((ACC, TEMP), SHAPE_ONLY))
    return rec, toml


def test_feature_set_keeps_the_bound_of_every_channel_read(device):
    rec, toml = device
    fs = load_feature_set(rec, toml)
    assert fs.channel_bounds == _csv_bounds(rec)
    again = FeatureSet.load(fs.save_npz())
    assert again.channel_bounds == fs.channel_bounds
    assert again.save_npz() == fs.save_npz()                     # same bounds, same bytes
    assert fs.bundle_structure()[2]["channel_bounds"] == _csv_bounds(rec)


@pytest.mark.parametrize("text", ['{"ax": -1}', '{"ax": "1"}', '[1, 2]', '{"ax": NaN}',
                                  '{"ax": 1' + '0' * 400 + '}', '{"ax": ', '[' * 100000])
def test_bad_bounds_member_is_a_data_error(text):
    with pytest.raises(DataError, match="channel_bounds_json must be an object"):
        parse_bounds(text, "f.npz")
    assert parse_bounds(bounds_json({"b": 2, "a": 1.5}), "f.npz") == {"a": 1.5, "b": 2.0}


def test_q15_without_full_scale_on_a_bundle_of_rms_energy_std_features(tmp_path, device):
    from sensorbudget.firmware_gen.plan import make_plan
    from sensorbudget.trainer.bundle.model import load_bundle

    rec, toml = device
    runner = CliRunner()
    result = runner.invoke(main, ["train", str(rec), "--sensors", str(toml), "--budget", "3",
                                  "--lam", "1", "-o", str(tmp_path / "b")],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    bundle = load_bundle(tmp_path / "b")
    kinds = {e["params"]["kind"] for e in bundle.meta["extractors"]}
    assert kinds <= {"std", "energy"}                             # no feature bounds a channel
    bounds = _csv_bounds(rec)
    plan = make_plan(bundle, name="m", numeric="q15")
    expected = tuple(2.0 ** (math.floor(math.log2(bounds[c])) + 1) for c in plan.channels)
    assert plan.full_scale == expected
    assert all(bounds[c] < fs for c, fs in zip(plan.channels, plan.full_scale))
    over = make_plan(bundle, name="m", numeric="q15", full_scale={"*": 64})
    assert over.full_scale == (64.0,) * len(plan.channels)      # --full-scale still wins
    need_gcc()                                                    # skips without gcc
    sim = runner.invoke(main, ["simulate", str(tmp_path / "b"), "--recordings", str(rec),
                               "--backend", "host", "--numeric", "q15", "--report",
                               str(tmp_path / "sim")], catch_exceptions=False)
    assert sim.exit_code == 0, sim.output
    assert "host (q15)" in sim.output and " 0 mismatches" in sim.output
