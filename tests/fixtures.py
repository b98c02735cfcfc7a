"""The tiny synthetic device the tests share: its ``sensors.toml`` and a matching recording stream.

- ``sensor_spec(sensors, features, ...)`` builds the data of a sensors.toml (the dict
  ``parse_sensor_spec`` takes); ``sensors_toml(...)`` renders the same as TOML text and
  ``write_sensors_toml(path, ...)`` writes it.  Without arguments they describe the tiny device:
  ``acc`` (channels ax, ay) and ``temp`` (t) at 20 Hz, window 8, hop 4 (``TINY_SENSORS``).
- ``write_stream(path, ...)`` writes a synthetic CSV recording (``time``, the chosen channels and
  a regression target ``y``) that matches such a spec.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import numpy as np

#: the tiny device's sensors (``sample_rate_hz`` is added by ``sensor_spec``)
ACC = {"name": "acc", "channels": ["ax", "ay"], "unit_price": 1.0, "energy_per_reading_j": 2e-6}
TEMP = {"name": "temp", "channels": ["t"], "unit_price": 0.5, "power_w": 0.001,
        "read_time_s": 0.01}
TINY_FEATURES = [
    {"channels": ["acc", "temp"], "extractors": ["mean", "std", "max", "mad", "energy"]},
    {"group": "a", "channels": ["ax", "ay"], "extractors": ["mag_mean"]},
]
#: the 10 Hz accelerometer several sensing tests use
ACCEL = {"name": "accel", "channels": ["ax", "ay"], "unit_price": 1.0,
         "energy_per_reading_j": 1e-6}


def sensor_spec(sensors=(ACC, TEMP), features=TINY_FEATURES, window: int | None = 8,
                hop: int | None = 4, rate_hz: float = 20, **window_options) -> dict:
    """The data of a sensors.toml: every sensor samples at ``rate_hz``; no ``[window]`` table
    when ``window`` is None. ``window_options`` (``on_missing=...``) go into ``[window]``."""
    data = {}
    if window is not None:
        data["window"] = {"length": window, "hop": hop, **window_options}
    data["sensors"] = [{**copy.deepcopy(s), "sample_rate_hz": rate_hz} for s in sensors]
    data["features"] = copy.deepcopy(list(features))
    return data


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return re.sub(r"e([+-])0(\d)", r"e\1\2", repr(value))     # 2e-6, not 2e-06


def sensors_toml(spec: dict | None = None, header: str = "", remarks: dict | None = None) -> str:
    """``spec`` (default: the tiny device) as sensors.toml text: an optional ``# header`` line,
    and ``remarks`` {"sensor.key": text} appended as ``# text`` to that sensor's line."""
    spec = sensor_spec() if spec is None else spec
    remarks = remarks or {}
    lines = [f"# {header}"] if header else []
    if "window" in spec:
        lines += ["[window]", *(f"{k} = {_value(v)}" for k, v in spec["window"].items()), ""]
    for s in spec["sensors"]:
        lines.append("[[sensors]]")
        for key, value in s.items():
            remark = remarks.get(f"{s['name']}.{key}")
            lines.append(f"{key} = {_value(value)}" + (f"   # {remark}" if remark else ""))
        lines.append("")
    for f in spec["features"]:
        lines += ["[[features]]", *(f"{k} = {_value(v)}" for k, v in f.items()), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


#: the tiny device's sensors.toml, with comments (calibrate must keep them)
TINY_SENSORS = sensors_toml(
    header="tiny test device: a 2-axis accelerometer and a thermometer",
    remarks={"acc.energy_per_reading_j": "a comment that calibrate must keep"})


def write_sensors_toml(path: Path, spec: dict | None = None, **options) -> Path:
    """Write ``sensors_toml(spec, **options)`` (default: ``TINY_SENSORS``) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TINY_SENSORS if spec is None and not options else
                    sensors_toml(spec, **options))
    return path


#: how each synthetic channel is written
_FORMATS = {"ax": ".6f", "ay": ".6f", "t": ".4f", "gx": ".6f"}


def write_stream(path: Path, n: int = 240, rate_hz: float = 20, seed: int = 0,
                 channels=("ax", "ay", "t"), nan_at=()) -> Path:
    """A CSV stream of ``n`` samples at ``rate_hz``: ``time``, ``channels`` (any of ``ax`` =
    sin(3 s) and ``ay`` = cos(2 s) plus noise, a thermometer random walk ``t`` and a gyro
    ``gx``) and the target ``y`` = ax^2 + 0.5 t + noise; ``ax`` is empty in the rows ``nan_at``."""
    rng = np.random.default_rng(seed)
    time = np.arange(n) / rate_hz
    cols = {"ax": np.sin(time * 3) + 0.1 * rng.normal(size=n),
            "ay": np.cos(time * 2) + 0.1 * rng.normal(size=n),
            "t": 20 + np.cumsum(0.05 * rng.normal(size=n))}
    y = cols["ax"] ** 2 + 0.5 * cols["t"] + 0.05 * rng.normal(size=n)
    cols["gx"] = 0.5 * np.sin(time * 5) + 0.2 * rng.normal(size=n)     # drawn last: the others
    unknown = set(channels) - set(cols)                                # do not depend on it
    if unknown:
        raise ValueError(f"no synthetic channel {sorted(unknown)}; known: {sorted(cols)}")
    rows = [",".join(["time", *channels, "y"])]
    for i in range(n):
        cells = [f"{time[i]:.2f}", *(format(cols[c][i], _FORMATS[c]) for c in channels),
                 f"{y[i]:.6f}"]
        if i in nan_at:
            cells[1 + list(channels).index("ax")] = ""
        rows.append(",".join(cells))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(rows) + "\n")
    return path
