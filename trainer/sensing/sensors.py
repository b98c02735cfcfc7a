"""``sensors.toml``: the candidate sensors, their costs, and the features computed from them.

Schema (every key is checked; unknown keys are errors, so typos do not pass silently)::

    currency = "USD"              # optional, informational (unit_price currency)
    targets = ["co_gt", "no2_gt"] # optional: target columns/labels to use (default: all)
    task = "regression"           # optional: regression | multilabel | multiclass

    [window]                      # optional here; --window/--hop override it
    length = 20                   # samples  (or length_s = 2.0, seconds)
    hop = 10                      # samples  (or hop_s = 1.0; default: hop = length)
    on_missing = "skip"           # skip (default) | error: windows with missing samples or gaps

    [[sensors]]
    name = "accel"                # identifier: [A-Za-z_][A-Za-z0-9_]*
    channels = ["acc_x", "acc_y", "acc_z"]   # column names in the recordings, unique overall
    unit_price = 0.9              # >= 0, price per device (bill of materials)
    energy_per_reading_j = 4e-6   # >= 0, one reading of all channels ...
    # power_w = 0.015             # ... or power while reading (W) and
    # read_time_s = 0.1           #     time per reading (s): energy = power_w * read_time_s
    sample_rate_hz = 10           # > 0 (or sample_period_s = 3600): the recorded rate; sensors
                                  # at different rates need [window] length_s and hop_s
    # rates_hz = [10, 5, 2.5]     # optional: rates to choose from (each divides the recorded
    # energy_per_reading_j_by_rate = [2e-6, 3e-6, 5e-6]   # rate) and the cost at each, or
    # current_a_by_rate = [5e-6, 3.5e-6, 2.5e-6] + supply_v = 2.5 (I x V / rate per reading)
    part = "LIS3DH"               # optional free text
    source = "datasheet ..."      # optional: where the numbers come from

    [[features]]                  # per-channel extractors: features "<channel>.<extractor>"
    channels = ["acc_x", "gyro"]  # channel names, or sensor names (= all their channels)
    extractors = ["mean", "std"]

    [[features]]                  # multi-channel extractors: features "<group>.<extractor>"
    group = "acc"
    channels = ["acc_x", "acc_y", "acc_z"]
    extractors = ["mag_mean"]

    [[features]]                  # arguments and preprocessing (trainer.sensing.specs):
    channels = ["accel"]          # features "acc_x.jerk.rms", "acc_x.jerk.percentile_90"
    preprocess = "jerk"           # or "highpass:0.9" (optional)
    extractors = ["rms", "percentile:90", "peaks:1.5"]

Features are listed in file order: block by block, then channel by channel (per-channel
blocks), then extractor by extractor. A sensor with ``rates_hz`` gives each of its features
once per rate, named ``<channel>@<rate>.<extractor>`` (rate as ``%g`` with ``.`` written ``p``:
``acc_x@12p5.mean``), computed on the plainly decimated stream (:mod:`.rates`).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError
from ..tasks import TASK_NAMES
from .spec_values import MAX_QUANTITY, parse_calibration, parse_rates, with_seconds
from .spec_values import bounded as _bounded
from .spec_values import check_keys as _check_keys
from .spec_values import number as _number
from .spec_values import where_in as _where
from .specs import block_specs, parse_spec, transforms_of

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
ON_MISSING = ("skip", "error")
#: Largest window or hop in samples (the firmware indexes samples with 32-bit counters).
MAX_WINDOW = 2 ** 31 - 1
_TOP_KEYS = {"currency", "targets", "task", "window", "sensors", "features", "calibration"}
_SENSOR_KEYS = {"name", "channels", "unit_price", "energy_per_reading_j", "power_w",
                "read_time_s", "sample_rate_hz", "sample_period_s", "part", "source",
                "rates_hz", "energy_per_reading_j_by_rate", "current_a_by_rate", "supply_v"}
_WINDOW_KEYS = {"length", "length_s", "hop", "hop_s", "on_missing"}
_FEATURE_KEYS = {"group", "channels", "extractors", "preprocess", "spectrum_window"}


@dataclass(frozen=True)
class Sensor:
    """One candidate sensor: its channels and what it costs."""

    name: str
    channels: tuple
    unit_price: float
    energy_per_reading_j: float
    sample_rate_hz: float
    power_w: float | None = None
    read_time_s: float | None = None
    part: str = ""
    source: str = ""
    rates: tuple = ()          # ((rate_hz, energy_per_reading_j), ...) ascending, or ()

    def to_dict(self) -> dict:
        """The bundle's sensor entry (JSON-ready); ``power_w``/``read_time_s`` only if given,
        ``rates_hz`` and ``energy_per_reading_j_by_rate`` only for a sensor with rates."""
        out = {"name": self.name, "channels": list(self.channels),
               "unit_price": self.unit_price, "energy_per_reading_j": self.energy_per_reading_j,
               "sample_rate_hz": self.sample_rate_hz,
               "average_power_w": self.energy_per_reading_j * self.sample_rate_hz}
        if self.power_w is not None:
            out.update(power_w=self.power_w, read_time_s=self.read_time_s)
        out.update({k: v for k, v in (("part", self.part), ("source", self.source)) if v})
        if self.rates:
            out.update(rates_hz=[r for r, _ in self.rates],
                       energy_per_reading_j_by_rate=[e for _, e in self.rates])
        return out


@dataclass(frozen=True)
class FeatureDef:
    """One candidate feature: ``name = "<channel-or-group>.<kind>"`` and what it needs."""

    name: str
    kind: str
    channels: tuple
    sensors: tuple
    rate: float | None = None      # the decimated rate (Hz) of a sensor with rates_hz


@dataclass(frozen=True)
class SensorSpec:
    """A validated ``sensors.toml``."""

    sensors: tuple
    features: tuple
    sample_rate_hz: float
    window: int | None = None
    hop: int | None = None
    on_missing: str = "skip"
    targets: tuple | None = None
    task: str | None = None
    currency: str = "USD"
    source: str = "<dict>"
    calibration: tuple = ()
    window_s: float | None = None      # seconds, when sensors have different or chosen rates
    hop_s: float | None = None

    @property
    def multi_rate(self) -> bool:
        """Sensors at different rates, or a sensor with ``rates_hz`` (see :mod:`.rates`)."""
        return (len({s.sample_rate_hz for s in self.sensors}) > 1
                or any(s.rates for s in self.sensors))

    def compute_costs(self, target=None) -> dict:
        """{extractor: {"energy": J, "time": s}} per prediction from the ``[[calibration]]``
        entries (written by ``sensorbudget calibrate``) of one compute ``target``; ``{}`` when
        there are none. Several targets need an explicit choice."""
        targets = sorted({c["target"] for c in self.calibration})
        if not targets:
            return {}
        if target is None:
            if len(targets) > 1:
                raise DataError(f"{self.source}: calibration for several targets "
                                f"({', '.join(targets)}); choose one with --compute-target")
            target = targets[0]
        if target not in targets:
            raise DataError(f"{self.source}: no calibration for compute target {target!r} "
                            f"(calibrated: {', '.join(targets)})")
        return {c["extractor"]: {"energy": c.get("compute_energy_j", 0.0),
                                 "time": c.get("compute_time_s", 0.0)}
                for c in self.calibration if c["target"] == target}

    @property
    def channel_sensor(self) -> dict:
        """{channel name: sensor name}."""
        return {c: s.name for s in self.sensors for c in s.channels}

    @property
    def used_channels(self) -> list:
        """Channels some feature needs, in declaration order."""
        used = {c for f in self.features for c in f.channels}
        return [c for s in self.sensors for c in s.channels if c in used]

    def resolve_window(self, window=None, hop=None) -> tuple:
        """(window, hop) in samples: arguments override the file; hop defaults to window
        (a multi-rate spec: at the highest rate, from its seconds; no overrides)."""
        if self.window_s is not None:
            if window is not None or hop is not None:
                raise DataError(f"{self.source}: sensors at several rates take the window and "
                                f"hop in seconds from [window] length_s / hop_s, not --window/"
                                f"--hop in samples")
            window = round(self.window_s * self.sample_rate_hz)
            hop = round(self.hop_s * self.sample_rate_hz)
        window = self.window if window is None else window
        if window is None:
            raise DataError(f"no window length: give --window or [window] length in "
                            f"{self.source}")
        hop = (self.hop if self.hop is not None else window) if hop is None else hop
        for name, value in (("window", window), ("hop", hop)):
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_WINDOW:
                raise DataError(f"{name}={value!r} must be a whole number of samples in "
                                f"1..{MAX_WINDOW}")
        for f in self.features:
            need = parse_spec(f.kind).min_window
            if window < need:
                raise DataError(f"feature {f.name!r}: extractor {f.kind!r} needs window >= "
                                f"{need} samples (window={window})")
        return window, hop


def _names(value, key: str, where: str) -> tuple:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise DataError(f"{where}: {key} must be a non-empty list of strings (got {value!r})")
    for v in value:
        if not IDENTIFIER.match(v):
            raise DataError(f"{where}: {key} entry {v!r} is not a name of the form "
                            f"[A-Za-z_][A-Za-z0-9_]*")
    duplicate = next((v for i, v in enumerate(value) if v in value[:i]), None)
    if duplicate is not None:
        raise DataError(f"{where}: {key} lists {duplicate!r} twice")
    return tuple(value)


def _parse_sensor(table, index: int, source: str) -> Sensor:
    where = _where(source, f"sensors[{index}]")
    _check_keys(table, _SENSOR_KEYS, where)
    name = table.get("name")
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        raise DataError(f"{where}: name={name!r} must be a name of the form [A-Za-z_][A-Za-z0-9_]*")
    where = _where(source, f"sensor {name!r}")
    channels = _names(table.get("channels"), "channels", where)
    price = _number(table, "unit_price", where)
    if price is None:
        raise DataError(f"{where}: unit_price is required")
    energy = _number(table, "energy_per_reading_j", where)
    power, read_time = _number(table, "power_w", where), _number(table, "read_time_s", where)
    if energy is not None and (power is not None or read_time is not None):
        raise DataError(f"{where}: give energy_per_reading_j or power_w + read_time_s, not both")
    if energy is None and not {"rates_hz", "energy_per_reading_j_by_rate",
                               "current_a_by_rate"} & set(table):
        if power is None or read_time is None:
            raise DataError(f"{where}: needs energy_per_reading_j, or both power_w and read_time_s")
        energy = _bounded(power * read_time, "power_w x read_time_s", where)
    rate, period = _number(table, "sample_rate_hz", where, True), _number(
        table, "sample_period_s", where, True)
    if (rate is None) == (period is None):
        raise DataError(f"{where}: give exactly one of sample_rate_hz and sample_period_s")
    rate = rate if rate is not None else _bounded(1.0 / period, "1 / sample_period_s", where)
    if not rate >= 1 / MAX_QUANTITY:          # window_s = window / rate must stay finite
        raise DataError(f"{where}: sample rate {rate:g} Hz is below {1 / MAX_QUANTITY:g} Hz")
    rates = parse_rates(table, rate, energy, power, where)
    if rates:                                 # the cost at the highest rate it may run at
        energy = rates[-1][1]
    texts = {k: table.get(k, "") for k in ("part", "source")}
    for key, value in texts.items():
        if not isinstance(value, str):
            raise DataError(f"{where}: {key} must be a string (got {value!r})")
    return Sensor(name=name, channels=channels, unit_price=price, energy_per_reading_j=energy,
                  sample_rate_hz=rate, power_w=power, read_time_s=read_time, rates=rates,
                  **texts)


def _check_sensors(sensors: list, source: str, seconds: bool) -> float:
    """Unique sensor and channel names; one sample rate unless the window is in seconds
    (``seconds``); returns the highest rate."""
    seen = {}
    for s in sensors:
        # A sensor may share its name with its own channel (a one-channel sensor such as "t").
        for name in dict.fromkeys((s.name, *s.channels)):
            if name in seen:
                raise DataError(f"{source}: duplicate name {name!r} (used by {seen[name]} and "
                                f"by sensor {s.name!r})")
            seen[name] = f"sensor {s.name!r}"
    rates = [s.sample_rate_hz for s in sensors]
    if max(rates) - min(rates) > 1e-9 * max(rates) and not seconds:
        listing = ", ".join(f"{s.name}={s.sample_rate_hz:g} Hz" for s in sensors)
        raise DataError(f"{source}: sensors have different sample rates ({listing}); give "
                        f"[window] length_s and hop_s in seconds (each sensor's samples follow "
                        f"from its rate)")
    return max(rates) if max(rates) - min(rates) > 1e-9 * max(rates) else rates[0]


def _expand_channels(names: tuple, sensors: list, where: str) -> list:
    by_sensor = {s.name: s.channels for s in sensors}
    known = [c for s in sensors for c in s.channels]
    out = []
    for name in names:
        if name in by_sensor:
            out.extend(c for c in by_sensor[name] if c not in out)
        elif name in known:
            if name not in out:
                out.append(name)
        else:
            raise DataError(f"{where}: unknown channel {name!r} (channels: {', '.join(known)}; "
                            f"sensors: {', '.join(by_sensor)})")
    return out


def _parse_features(table, index: int, sensors: list, source: str) -> list:
    where = _where(source, f"features[{index}]")
    _check_keys(table, _FEATURE_KEYS, where)
    channels = _expand_channels(_names(table.get("channels"), "channels", where), sensors, where)
    kinds = block_specs(table, where)
    owner = {c: s.name for s in sensors for c in s.channels}
    group = table.get("group")
    multi = [k.text for k in kinds if not k.entry.per_channel]
    if multi and len(multi) != len(kinds):
        raise DataError(f"{where}: mixes per-channel and multi-channel extractors; put "
                        f"{multi[0]!r} in its own [[features]] block with a group name")
    by_name = {s.name: s for s in sensors}
    if not multi:
        if group is not None:
            raise DataError(f"{where}: group={group!r} is only for multi-channel extractors")
        return [FeatureDef(f"{c}{rate_tag(r)}.{k.suffix}", k.text, (c,), (owner[c],), r)
                for c in channels for r in _rates_of(by_name[owner[c]]) for k in kinds]
    if not isinstance(group, str) or not IDENTIFIER.match(group):
        raise DataError(f"{where}: multi-channel extractors need group = a name of the form "
                        f"[A-Za-z_][A-Za-z0-9_]* (got {group!r})")
    for k in kinds:
        if (k.entry.arity == "2" and len(channels) != 2) or len(channels) < 2:
            raise DataError(f"{where}: extractor {k.kind!r} takes {k.entry.arity} channels; "
                            f"group {group!r} has {len(channels)}")
    needed = tuple(dict.fromkeys(owner[c] for c in channels))
    rated = [n for n in needed if by_name[n].rates]
    if rated and len(needed) > 1:
        raise DataError(f"{where}: group {group!r} spans sensors {', '.join(needed)}; a group "
                        f"of a sensor with rates_hz ({rated[0]!r}) must stay within it")
    if len({by_name[n].sample_rate_hz for n in needed}) > 1:
        raise DataError(f"{where}: group {group!r} spans sensors at different rates ("
                        + ", ".join(f"{n}={by_name[n].sample_rate_hz:g} Hz" for n in needed)
                        + "); a multi-channel extractor needs one rate")
    return [FeatureDef(f"{group}{rate_tag(r)}.{k.suffix}", k.text, tuple(channels), needed, r)
            for r in _rates_of(by_name[needed[0]]) for k in kinds]


def rate_tag(rate) -> str:
    """``"@<rate>"`` of a feature name (``%g``, ``.`` written ``p``: ``@12p5``), ``""`` for
    None (a sensor without ``rates_hz``)."""
    return "" if rate is None else "@" + f"{rate:g}".replace(".", "p")


def _rates_of(sensor: Sensor) -> tuple:
    """The rates a sensor's features are computed at: its ``rates_hz``, or (None,)."""
    return tuple(r for r, _ in sensor.rates) or (None,)



def _window_samples(table: dict, key: str, rate: float, where: str):
    samples, seconds = table.get(key), table.get(f"{key}_s")
    if samples is not None and seconds is not None:
        raise DataError(f"{where}: give {key} (samples) or {key}_s (seconds), not both")
    if samples is not None:
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise DataError(f"{where}: {key}={samples!r} must be a whole number of samples >= 1")
        return samples
    if seconds is None:
        return None
    value = _number(table, f"{key}_s", where, positive=True)
    count = round(value * rate)
    if count < 1 or abs(value * rate - count) > 1e-6 * max(1.0, count):
        raise DataError(f"{where}: {key}_s={value:g} s is not a whole number of samples at "
                        f"{rate:g} Hz ({value * rate:g})")
    return count


def parse_sensor_spec(data: dict, source: str = "<dict>") -> SensorSpec:
    """Validate a parsed ``sensors.toml`` (a dict) and return the :class:`SensorSpec`."""
    _check_keys(data, _TOP_KEYS, source)
    raw_sensors = data.get("sensors")
    if not isinstance(raw_sensors, list) or not raw_sensors:
        raise DataError(f"{source}: no [[sensors]] tables")
    sensors = [_parse_sensor(t, i, source) for i, t in enumerate(raw_sensors)]
    window = data.get("window", {})
    _check_keys(window, _WINDOW_KEYS, _where(source, "[window]"))
    rate = _check_sensors(sensors, source, "length_s" in window)
    raw_features = data.get("features")
    if not isinstance(raw_features, list) or not raw_features:
        raise DataError(f"{source}: no [[features]] tables")
    features = [f for i, t in enumerate(raw_features)
                for f in _parse_features(t, i, sensors, source)]
    seen = set()
    for f in features:
        if f.name in seen:
            raise DataError(f"{source}: duplicate feature name {f.name!r}")
        seen.add(f.name)
    on_missing = window.get("on_missing", "skip")
    if on_missing not in ON_MISSING:
        raise DataError(f"{source}: on_missing={on_missing!r} must be one of {ON_MISSING}")
    task = data.get("task")
    if task is not None and task not in TASK_NAMES:    # binary: multi-class with 2 classes
        raise DataError(f"{source}: task={task!r} must be one of {TASK_NAMES}")
    targets = data.get("targets")
    if targets is not None:
        if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
            raise DataError(f"{source}: targets must be a list of strings (got {targets!r})")
        if not targets:
            raise DataError(f"{source}: targets = [] selects no target; list at least one "
                            f"target column, or leave the key out to use every column")
        targets = tuple(targets)
    currency = data.get("currency", "USD")
    if not isinstance(currency, str):
        raise DataError(f"{source}: currency must be a string (got {currency!r})")
    transforms = {t for f in features for t in transforms_of(f.kind, f.channels)}
    calibration = parse_calibration(data.get("calibration", []), seen | transforms, source)
    where = _where(source, "[window]")
    spec = SensorSpec(calibration=calibration, sensors=tuple(sensors), features=tuple(features),
                      sample_rate_hz=rate,
                      window=_window_samples(window, "length", rate, where),
                      hop=_window_samples(window, "hop", rate, where), on_missing=on_missing,
                      targets=targets, task=task, currency=currency, source=source)
    if not spec.multi_rate:
        return spec
    return with_seconds(spec, window, where, MAX_WINDOW)


def load_sensor_spec(path) -> SensorSpec:
    """Read and validate a ``sensors.toml`` file."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise DataError(f"sensor description {str(path)!r} does not exist") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise DataError(f"{str(path)!r} is not valid TOML: {exc}") from None
    return parse_sensor_spec(data, source=str(path))
