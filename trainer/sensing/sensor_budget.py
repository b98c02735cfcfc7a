"""From ``sensors.toml`` (via a feature table) to the estimators' cost keyword arguments.

A feature ``<channel-or-group>.<kind>`` needs its sensors. The *selection unit* decides what
one greedy step chooses:

- ``"feature"``: each feature is its own extractor (finest; shared sensors are paid once);
- ``"channel"``: all features of one channel (or multi-channel group) form one extractor;
- ``"sensor"``: all single-sensor features of a sensor form one extractor (of a sensor with
  ``rates_hz``: one per rate, ``<sensor>@<rate>``); a feature that fuses several sensors needs
  all of their extractors (many-to-many).

Sensor costs per prediction (:func:`per_prediction`, the one definition that selection
budgets, ``model.json``, ``simulate``, ``compare`` and the report use): a streaming device
keeps the window in a ring buffer, so each prediction needs ``readings = min(window, hop)`` new
readings of each sensor; ``price = unit_price``, ``energy = energy_per_reading_j * readings``
(J per prediction) and ``time = read_time_s * readings`` (s of sensor read time per prediction;
0 when the sensor gives ``energy_per_reading_j`` only). Extractors have no price; their
per-prediction compute
energy and time come from the ``[[calibration]]`` entries that ``sensorbudget calibrate`` writes
(measured on a device), summed over the extractors a selection unit contains; without them
computation is not costed.

Transforms (a preprocessing step of a channel today: ``ax.jerk``, ``ay.highpass_0_9``) are the
level between: a unit needs the transforms of its features, each priced at its calibrated
compute energy and time (a ``[[calibration]]`` entry named after the transform; 0 without one)
and paid once per prediction however many chosen units read it. They reach the estimators as
``extractor_sensors`` entries whose ``sensor_costs`` say ``"level": "transform"``.

Rates (a multi-rate table, :mod:`.rates`): a sensor's readings per prediction are its rate x
min(window_s, hop_s), :func:`per_prediction` at its own samples. A sensor with ``rates_hz``
q_1 < ... < q_m is paid once, at the rate the device reads it: the slowest listed rate that
every chosen feature's rate is a plain decimation of (:func:`.rates.paid_rate`; the highest
chosen rate when the others divide it, 10 Hz for 5 and 2 Hz of a 10 Hz sensor). With E_j its
cost per prediction at q_j, the sensor itself costs E_1 and each ``<sensor>@<q_j>`` (j >= 2, a
shared resource of level "transform") costs E_j - E_{j-1}; a feature at q_j needs the sensor
and every step up to q_j, and the selection's cost plan adds the steps up to the read rate
(:mod:`sensorbudget.trainer.selection.rate_closure`), so a chosen set read at q_j pays
sum_{i<=j} (E_i - E_{i-1}) = E_j (:func:`rate_steps`). A higher rate must not cost less per
prediction.
"""

from __future__ import annotations

from ..errors import TrainerError
from .sensors import rate_tag
from .specs import transforms_of

UNITS = ("feature", "channel", "sensor")


def readings_per_prediction(window: int, hop: int | None = None) -> int:
    """New readings of every sensor per prediction on a streaming device: min(window, hop).

    Window k covers samples [k hop, k hop + window); the device keeps the last ``window``
    samples, so the next prediction needs the ``hop`` samples since the last one, or a whole
    window when windows do not overlap (hop > window: the samples between windows are not
    read). ``hop=None`` means non-overlapping windows (hop = window)."""
    window = int(window)
    return max(1, min(window, window if hop is None else int(hop)))


def per_prediction(sensor: dict, window: int, hop: int | None = None) -> dict:
    """{"readings", "price", "energy", "time"} of one sensor per prediction.

    With r = :func:`readings_per_prediction` (min(window, hop)):
    energy = r x ``energy_per_reading_j`` (J), time = r x ``read_time_s`` (s the sensor is
    busy, 0 when it gives no read time), price = ``unit_price`` (paid once per device).
    Summed over the required sensors these are the selection's energy and time budgets, the
    bundle's costs and ``simulate``'s sensor energy (docs/device_costs.md states the
    duty-cycle assumptions).

    >>> per_prediction({"unit_price": 2.0, "energy_per_reading_j": 1e-3,
    ...                 "read_time_s": 0.01}, window=8, hop=4)
    {'readings': 4, 'price': 2.0, 'energy': 0.004, 'time': 0.04}
    """
    r = readings_per_prediction(window, hop)
    return {"readings": r, "price": float(sensor.get("unit_price", 0.0)),
            "energy": float(sensor.get("energy_per_reading_j", 0.0) or 0.0) * r,
            "time": float(sensor.get("read_time_s") or 0.0) * r}


def sensor_costs(sensors, window: int, hop: int | None = None) -> dict:
    """{sensor: {price, energy, time}} per prediction (:func:`per_prediction`) from
    bundle-style sensor dicts (``Sensor.to_dict``)."""
    out = {}
    for s in sensors:
        cost = per_prediction(s, window, hop)
        out[s["name"]] = {k: cost[k] for k in ("price", "energy", "time")}
    return out


def rate_steps(sensor: dict, window_s: float, hop_s: float) -> tuple:
    """(base cost, [(resource name, rate, cost step), ...]) of a sensor with ``rates_hz``
    (module notes); each cost a {price, energy, time} dict per prediction, placed on the
    sensor's rate ladder for the plan (the base: ``rate_hz`` its lowest rate and
    ``sample_rate_hz`` the recorded one; a step: its ``sensor`` and ``rate_hz``;
    :mod:`sensorbudget.trainer.selection.rate_closure`)."""
    costs = []
    for rate, energy in zip(sensor["rates_hz"], sensor["energy_per_reading_j_by_rate"]):
        c = per_prediction({**sensor, "energy_per_reading_j": energy}, round(window_s * rate),
                           round(hop_s * rate))
        costs.append((rate, {k: c[k] for k in ("price", "energy", "time")}))
    steps = []
    for (low, a), (high, b) in zip(costs, costs[1:]):
        if b["energy"] < a["energy"]:
            raise TrainerError(f"sensor {sensor['name']!r}: energy per prediction at {high:g} Hz "
                               f"({b['energy']:g} J) is below that at {low:g} Hz "
                               f"({a['energy']:g} J); a higher rate must not cost less")
        steps.append((sensor["name"] + rate_tag(high), high,
                      {"price": 0.0, "energy": b["energy"] - a["energy"],
                       "time": b["time"] - a["time"], "level": "transform",
                       "sensor": sensor["name"], "rate_hz": float(high)}))
    base = {**costs[0][1], "rate_hz": float(costs[0][0]),
            "sample_rate_hz": float(sensor["sample_rate_hz"])}
    return base, steps


def _unit_of(name: str, extractor: str, sensors: tuple, unit: str, tag: str = ""):
    """The selection unit of a feature; ``tag`` (``"@<rate>"``) makes each rate of a sensor
    with ``rates_hz`` a unit of its own (the channel's name already carries it)."""
    if unit == "feature":
        return extractor
    if unit == "channel":
        return name.rsplit(".", 1)[0]
    return sensors[0] + tag if len(sensors) == 1 else tuple(sensors)


def cost_kwargs(feature_names, feature_sensors, sensors, window: int, *,
                feature_extractors=None, unit: str = "feature", compute_costs=None,
                feature_transforms=None, hop: int | None = None, feature_rates=None,
                seconds=None) -> dict:
    """``extractors``, ``extractor_sensors`` and ``sensor_costs`` for GreedyRLS(…).

    ``feature_sensors[i]`` is a sensor name, a ``"+"``-joined string of names or a tuple;
    ``feature_extractors`` defaults to the feature names; ``feature_transforms[i]`` lists the
    transforms feature i reads (default none); ``hop`` (default: ``window``) sets the readings
    per prediction (:func:`per_prediction`). Only sensors some feature needs are priced. A
    multi-rate table gives ``feature_rates`` (Hz per feature) and ``seconds`` = (window_s,
    hop_s): each sensor is priced at its own rate, a sensor with ``rates_hz`` by
    :func:`rate_steps`.
    Raises :class:`TrainerError` for an unknown unit or an undeclared sensor.
    """
    if unit not in UNITS:
        raise TrainerError(f"unit={unit!r} must be one of {UNITS}")
    feature_extractors = feature_names if feature_extractors is None else feature_extractors
    declared = {s["name"] for s in sensors}
    extractors, ext_sensors, transforms = [], {}, {}
    feature_transforms = feature_transforms or [()] * len(feature_names)
    steps = {}
    if feature_rates:
        feature_transforms, steps = _rate_reads(feature_sensors, feature_transforms,
                                                feature_rates, sensors, seconds)
    rated = {s["name"] for s in sensors if s.get("rates_hz")} if feature_rates else set()
    tags = [rate_tag(r) if rated else "" for r in (feature_rates or [None] * len(feature_names))]
    for name, ext, needed, reads, tag in zip(feature_names, feature_extractors, feature_sensors,
                                             feature_transforms, tags):
        needed = tuple(needed.split("+")) if isinstance(needed, str) else tuple(needed)
        unknown = [s for s in needed if s not in declared]
        if unknown:
            raise TrainerError(f"feature {name!r} needs sensor {unknown[0]!r}, which the "
                               f"sensor description does not declare")
        entry = _unit_of(str(name), str(ext), needed, unit, tag if set(needed) & rated else "")
        extractors.append(entry)
        for owner in (entry if isinstance(entry, tuple) else (entry,)):
            listed = ext_sensors.setdefault(owner, [owner] if isinstance(entry, tuple) else [])
            listed += [s for s in (() if isinstance(entry, tuple) else needed) + tuple(reads)
                       if s not in listed]
        transforms.update(dict.fromkeys(reads))
    used = {s for v in ext_sensors.values() for s in v}
    if feature_rates:
        costs = {}
        for s in sensors:
            if s["name"] in used:
                rate = s["sample_rate_hz"]
                cost = per_prediction(s, round(seconds[0] * rate), round(seconds[1] * rate))
                costs[s["name"]] = ({k: cost[k] for k in ("price", "energy", "time")}
                                    if not s.get("rates_hz") else
                                    rate_steps(s, *seconds)[0])
    else:
        costs = sensor_costs([s for s in sensors if s["name"] in used], window, hop)
    for t in transforms:
        if t in steps:
            costs[t] = steps[t]
            continue
        measured = (compute_costs or {}).get(t) or {}
        costs[t] = {"price": 0.0, "energy": float(measured.get("energy", 0.0)),
                    "time": float(measured.get("time", 0.0)), "level": "transform"}
    kwargs = {"extractors": extractors, "extractor_sensors": ext_sensors, "sensor_costs": costs}
    if compute_costs:
        kwargs["extractor_costs"] = unit_compute_costs(extractors, feature_extractors,
                                                       compute_costs)
    return kwargs


def _rate_reads(feature_sensors, feature_transforms, feature_rates, sensors, seconds):
    """Each feature's reads plus the rate steps up to its rate; {step name: cost}."""
    ladder, steps = {}, {}
    for s in sensors:
        if s.get("rates_hz"):
            _, ladder[s["name"]] = rate_steps(s, *seconds)
            steps.update((name, cost) for name, _, cost in ladder[s["name"]])
    reads = []
    for needed, extra, rate in zip(feature_sensors, feature_transforms, feature_rates):
        needed = needed.split("+") if isinstance(needed, str) else needed
        up = [name for s in needed for name, q, _ in ladder.get(s, ()) if q <= rate]
        reads.append(tuple(extra) + tuple(up))
    return reads, steps


def unit_compute_costs(units, feature_extractors, compute_costs) -> dict:
    """{unit: {price 0, energy, time}}: measured compute costs summed over each unit's
    extractors (a fused many-to-many feature's compute is not attributed to a unit)."""
    out = {}
    for entry, ext in zip(units, feature_extractors):
        if isinstance(entry, tuple):
            continue
        cost = out.setdefault(entry, {"price": 0.0, "energy": 0.0, "time": 0.0})
        measured = compute_costs.get(str(ext))
        if measured:
            cost["energy"] += float(measured.get("energy", 0.0))
            cost["time"] += float(measured.get("time", 0.0))
    return out


def cost_kwargs_from_feature_set(fs, unit: str = "feature") -> dict:
    """:func:`cost_kwargs` for a :class:`sensorbudget.trainer.sensing.feature_set.FeatureSet`."""
    reads = [transforms_of(k, c.split("+")) for k, c in zip(fs.feature_kinds,
                                                           fs.feature_channels)]
    rates = getattr(fs, "feature_rates", None)
    return cost_kwargs(fs.feature_names, fs.feature_sensors, fs.sensors, fs.window,
                       feature_extractors=fs.feature_extractors, unit=unit,
                       compute_costs=getattr(fs, "compute_costs", None),
                       feature_transforms=reads, hop=fs.hop, feature_rates=rates,
                       seconds=(fs.window / fs.sample_rate, fs.hop / fs.sample_rate))
