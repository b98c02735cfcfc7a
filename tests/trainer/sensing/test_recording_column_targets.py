"""``--recording-column`` cuts one stream into recordings and keeps its per-sample target
columns (issue 27: "unknown target 'walking'; the recordings' labels are segment")."""

import numpy as np

from tests.fixtures import sensor_spec, sensors_toml
from sensorbudget.trainer.sensing.feature_set import load_feature_set
from sensorbudget.trainer.sensing.streams import StreamFormat


def test_per_sample_targets_survive_the_recording_column(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    t = np.arange(n) / 20
    segment, walking = np.arange(n) // 100, ((np.arange(n) // 25) % 2).astype(float)
    ax = np.sin(3 * t) * (1 + walking) + 0.1 * rng.normal(size=n)
    ay, temp = np.cos(2 * t), 20 + 0.1 * rng.normal(size=n)
    (tmp_path / "r.csv").write_text("time,ax,ay,t,segment,walking\n" + "".join(
        f"{t[i]:.2f},{ax[i]:.5f},{ay[i]:.5f},{temp[i]:.3f},{segment[i]},{walking[i]:g}\n"
        for i in range(n)))
    (tmp_path / "s.toml").write_text('targets = ["walking"]\n' + sensors_toml(sensor_spec()))
    fs = load_feature_set(tmp_path / "r.csv", tmp_path / "s.toml",
                          stream_format=StreamFormat(recording_column="segment"))
    assert fs.target_names == ["walking"] and len(fs.recording_names) == 4
    # a window's target is the column's value at its last sample (the stream rule)
    start = np.concatenate([fs.window_start[fs.groups == g] + 100 * g for g in range(4)])
    np.testing.assert_array_equal(fs.Y[:, 0], walking[start + fs.window - 1])
