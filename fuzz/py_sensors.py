"""Fuzz target: ``sensors.toml`` parsing (``sensorbudget.trainer.sensing.sensors``), then windowing a small
recording with the parsed description (``sensorbudget.trainer.sensing.feature_set.build_feature_set``).

Input: a mode byte, then either raw TOML text (mode 0) or structured mutations (mode 1) of a
valid description, applied to the parsed dict: each mutation replaces or deletes one node
(any depth) with a fuzzed value of any TOML type.
"""

from __future__ import annotations

import copy
import datetime
import tomllib

from fuzz._harness import Input, expected_errors, instrumented, mutate_tree, run, scratch_dir

with instrumented():
    import numpy as np

    from sensorbudget.trainer.sensing.feature_set import build_feature_set
    from sensorbudget.trainer.sensing.recordings import Recording, RecordingSet
    from sensorbudget.trainer.sensing.sensors import load_sensor_spec, parse_sensor_spec

BASE = """\
currency = "EUR"
targets = ["y"]
[window]
length = 4
hop = 2
on_missing = "skip"

[[sensors]]
name = "acc"
channels = ["ax", "ay"]
unit_price = 1.0
energy_per_reading_j = 2e-6
sample_rate_hz = 20

[[sensors]]
name = "temp"
channels = ["t"]
unit_price = 0.5
power_w = 0.001
read_time_s = 0.01
sample_rate_hz = 20

[[features]]
channels = ["acc", "t"]
extractors = ["mean", "std", "min", "max", "ptp", "rms", "mad", "zcr", "energy", "last"]

[[features]]
group = "a"
channels = ["ax", "ay"]
extractors = ["mag_mean", "mag_std", "mag_max", "corr"]
"""
BASE_DICT = tomllib.loads(BASE)
WHEN = datetime.datetime(2024, 1, 1, 12, 0)

_DIR = None


def _recording(spec, inp: Input):
    """A 24-sample recording of every declared channel at the spec's rate (values fuzzed)."""
    n = 24
    time = np.arange(n) / spec.sample_rate_hz
    raw = inp.bytes(8 * n * 4).ljust(8 * n * 4, b"\0")
    values = np.frombuffer(raw, dtype="<f8").reshape(4, n)
    channels = list(spec.channel_sensor) + ["y"]
    columns = {c: values[i % 4].copy() for i, c in enumerate(channels)}
    return RecordingSet([Recording("fuzz", time, columns)])


def _window(spec, inp: Input) -> None:
    window = inp.pick([None, 1, 2, 3, 4, 24, 25, 0, -1, True, 2.5])
    hop = inp.pick([None, 1, 2, 5, 0, 30])
    try:
        fs = build_feature_set(_recording(spec, inp), spec, window=window, hop=hop,
                               on_missing=inp.pick([None, "skip", "error", "bogus"]))
        assert fs.X.shape == (len(fs.groups), len(spec.features))
        assert fs.Y.shape[0] == fs.X.shape[0]
    except expected_errors():
        pass


def test_one_input(data: bytes) -> None:
    inp = Input(data)
    try:
        if inp.int(0, 1) == 0:
            path = _DIR / "sensors.toml"
            path.write_bytes(inp.rest())
            spec = load_sensor_spec(path)
        else:
            tree = copy.deepcopy(BASE_DICT)
            for _ in range(inp.int(1, 4)):
                value = WHEN if inp.int(0, 15) == 0 else None
                mutate_tree(tree, inp, value)
            spec = parse_sensor_spec(tree, source="fuzz")
    except expected_errors():
        return
    _window(spec, inp)


def seeds() -> list:
    return [b"\0" + BASE.encode(), b"\x01\x01" + bytes(40), b"\x01\x03" + bytes(range(64)),
            b"\0" + BASE.replace("length = 4", "length_s = 0.2").encode()]


def main() -> None:
    global _DIR
    with scratch_dir() as d:
        _DIR = d
        run(test_one_input, seeds())


if __name__ == "__main__":
    main()
