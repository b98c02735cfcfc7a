"""calibrate with preprocessed and shape features (issue 18): every feature and every transform
gets an estimated [[calibration]] entry (never free to the next selection), the file parses back,
and the transform's entry prices it in the cost model."""

from sensorbudget.device_sim.calibrate import estimated_entries, known_extractors, render_block
from tests.fixtures import ACCEL, sensor_spec, sensors_toml
from sensorbudget.trainer.sensing.sensors import parse_sensor_spec


def test_estimated_entries_cover_features_and_transforms():
    import tomllib

    spec = sensor_spec([ACCEL], [{"channels": ["ax", "ay"], "preprocess": "jerk",
                                  "extractors": ["rms", "skew", "percentile:90"]},
                                 {"channels": ["ax"], "extractors": ["slope", "peaks:1",
                                                                     "bandpower:1-3",
                                                                     "centroid"]}],
                       window=16, hop=8, rate_hz=10)
    text = sensors_toml(spec)
    known, window = known_extractors(tomllib.loads(text), "s.toml")
    entries = estimated_entries(known, window, "cortex-m4f", have={"ax.jerk.rms"})
    names = [e["extractor"] for e in entries]
    assert "ax.jerk.rms" not in names                     # measured entries are kept
    assert {"ax.jerk", "ay.jerk", "ay.jerk.rms", "ax.jerk.skew", "ax.jerk.percentile_90",
            "ax.slope", "ax.peaks_1", "ax.fft", "ax.bandpower_1to3", "ax.centroid"} <= set(names)
    assert all(e["measured"] is False and e["compute_energy_j"] > 0 for e in entries)
    parsed = parse_sensor_spec(tomllib.loads(text + "\n" + render_block(entries)), "s.toml")
    costs = parsed.compute_costs("cortex-m4f")
    assert costs["ax.jerk"]["energy"] > 0 and "ax.jerk.skew" in costs


def test_measured_transform_costs_become_calibration_entries():
    """A report's per_transform costs (a channel's FFT) are written under the transform's name,
    so the next selection pays the FFT once for the features that read it."""
    from sensorbudget.device_sim.calibrate import calibration_entries

    report = {"backend": "simavr", "profile": {"name": "arduino-uno"},
              "cost": {"unit": "cycles", "measured": True, "per_extractor_measured": True,
                       "per_extractor": {"ax.entropy": 95000.0},
                       "per_transform": {"ax.fft": 288000.0},
                       "per_extractor_method": "apportioned"}}
    entries = {e["extractor"]: e for e in calibration_entries(report, "sim")}
    assert set(entries) == {"ax.fft", "ax.entropy"}
    fft = entries["ax.fft"]
    assert fft["compute_cycles"] == 288000.0 and fft["target"] == "arduino-uno"
    assert fft["compute_time_s"] == 288000.0 / 16e6 and fft["compute_energy_j"] > 0
