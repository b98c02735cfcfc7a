"""What a multi-rate firmware computes: the bundle's features as single-rate groups (issue 30).

A multi-rate bundle (sensors at their own rates, features ``<channel>@<rate>.<kind>``:
:mod:`sensorbudget.trainer.sensing.rates`) becomes a list of single-rate *groups*, one per
(sensor, rate) a selected feature uses. A sensor runs (is pushed) at ``r``, the highest rate of
its selected features (the rate it is paid at) when its other rates divide it, else the
slowest rate they all divide (:func:`_pushed_rate`: features at 5 and 2 Hz of a 10 Hz sensor
need it at 10 Hz); the host keeps every ``recorded / r``-th recorded sample
(:attr:`SensorPlan.decimation`). Group ``g`` of sensor ``s`` at rate ``q`` (``m = r /
q`` whole) reads the sensor's channels its features need,
keeps sample ``i`` of the sensor when ``i % m == 0`` (plain decimation, as rates.py), and is a
whole single-rate :class:`~.plan.FirmwarePlan` named ``<group_prefix><g>``: window
``window_s q`` and hop ``hop_s q`` samples, its features in model-input order (``slots``: the
model input of each). Its window ``k`` is the sensor's samples ``[k hop_s r, k hop_s r +
window_s r)`` decimated, so the windows of every group end at the same instant (rates.py's
module notes), and window ``k`` of the model is ready when every group has completed its
window ``k``.

Every group reads the one set of full scales (:func:`~.plan.resolve_full_scale` over every
channel, as a single-rate plan), so a channel quantises alike in all its groups. The C
(:mod:`.multirate_c`) and the Python reference (:mod:`.multirate_reference`) are generated from
this plan. A device pushes each sensor's samples from its grid index 0 on, without gaps.
"""

from __future__ import annotations

from dataclasses import dataclass

from sensorbudget.export import cgen
from sensorbudget.export.cgen import NUMERICS
from sensorbudget.trainer.sensing.rates import paid_rate, read_rate

from .errors import FirmwareGenError
from .plan import (
    FirmwarePlan,
    ModelFacts,
    _channel_bounds,
    _extractor_entries,
    make_plan,
    resolve_full_scale,
)

#: a rate that is a whole fraction of another: |r / q - round(r / q)| below this
RATIO_TOLERANCE = 1e-9


@dataclass(frozen=True)
class SensorPlan:
    """One sensor the device pushes: its name, C identifier, rate and used channels."""

    name: str
    ident: str                 # lower-case C identifier part (<name>_push_<ident>)
    rate_hz: float             # the rate it is pushed at: the highest rate of its features
    channels: tuple            # its channels a selected feature reads, sensors.toml order
    full_scale: tuple | None   # per channel (q15/q31), else None
    recorded_hz: float = 0.0   # its rate in the recordings (sensors.toml sample_rate_hz)

    @property
    def decimation(self) -> int:
        """Recorded samples per pushed one: the host keeps recorded sample i when
        i % decimation == 0 (plain decimation, as the trainer)."""
        return round(self.recorded_hz / self.rate_hz)


@dataclass(frozen=True)
class GroupPlan:
    """One (sensor, rate): which sensor, the decimation, the sensor's channels it reads
    (indices into ``SensorPlan.channels``), its single-rate plan and its model inputs."""

    sensor: int
    rate_hz: float
    factor: int                # keep sensor sample i when i % factor == 0
    channels: tuple
    plan: FirmwarePlan
    slots: tuple               # model input of each of plan.features


@dataclass(frozen=True)
class MultiRatePlan(ModelFacts):
    """Everything the multi-rate C and its Python reference agree on."""

    name: str
    numeric: str
    sensors: tuple
    groups: tuple
    window_s: float
    hop_s: float
    features: tuple            # model inputs (selected features, selection order)
    targets: tuple
    task: str
    bundle_sha256: str
    input_kind: str = "samples"

    @property
    def channels(self) -> tuple:
        """Every pushed channel, sensor by sensor."""
        return tuple(c for s in self.sensors for c in s.channels)

    @property
    def full_scale(self) -> tuple | None:
        return None if not self.fixed else tuple(v for s in self.sensors for v in s.full_scale)

    @property
    def summary(self) -> str:
        """One line: the sensors at their rates, the groups, the window and hop."""
        sensors = ", ".join(f"{s.name} at {s.rate_hz:g} Hz ({', '.join(s.channels)})"
                            + self._above(i) for i, s in enumerate(self.sensors))
        n = sum(len(g.plan.extractors) for g in self.groups)
        return (f"{n} extractors in {len(self.groups)} (sensor, rate) groups on {sensors}, "
                f"window {self.window_s:g} s, hop {self.hop_s:g} s")

    def _above(self, i: int) -> str:
        """A note when sensor ``i`` runs above its fastest feature's rate (its rates do not
        divide each other: the device reads more often than the rate it was priced at)."""
        rates = sorted({g.rate_hz for g in self.groups if g.sensor == i}, reverse=True)
        if rates[0] == self.sensors[i].rate_hz:
            return ""
        return (f" [above its features' {', '.join(f'{r:g}' for r in rates)} Hz, which do "
                f"not divide each other: priced at {rates[0]:g} Hz in training]")

    @property
    def max_sensor_channels(self) -> int:
        return max(len(s.channels) for s in self.sensors)


@dataclass(frozen=True)
class _SubBundle:
    """The part of a bundle one group reads, in the shape :func:`~.plan.make_plan` takes."""

    meta: dict
    arrays: dict
    sha256: str

    def bundle_sha256(self) -> str:
        return self.sha256


def is_multi_rate(bundle) -> bool:
    """The bundle was trained on a multi-rate sensors.toml (rates.py)."""
    return bool(bundle.meta.get("multi_rate"))


def _sensor_of(entry: dict, by_sensor: dict) -> str:
    sensors = entry.get("sensors") or []
    if len(sensors) != 1 or sensors[0] not in by_sensor:
        raise FirmwareGenError(f"extractor {entry['name']!r} reads sensors {sensors!r}; a "
                               f"multi-rate firmware needs each extractor on one declared sensor")
    return sensors[0]


def _factor(sensor: str, r: float, rate: float, what: str) -> int:
    """``r / rate``, checked whole."""
    factor = round(r / rate) if rate > 0 else 0
    if factor < 1 or abs(r / rate - factor) > RATIO_TOLERANCE * factor:
        raise FirmwareGenError(f"{what} runs at {rate:g} Hz; sensor {sensor!r} is sampled at "
                               f"{r:g} Hz, not a whole multiple of it")
    return factor


def _pushed_rate(sensor: dict, rates: list) -> float:
    """The rate the sensor runs at, which the selection paid for (:func:`~sensorbudget.trainer.
    sensing.rates.paid_rate`): the slowest listed rate (``rates_hz``) that every one of
    ``rates`` is a whole fraction of, else the slowest rate that is, ``r / gcd(r / q)``
    (:func:`~sensorbudget.trainer.sensing.rates.read_rate`: 10 Hz for features at 5 and 2 Hz of
    a 10 Hz recording; 24 Hz, not 12, for 4 and 6 Hz of ``rates_hz = [4, 6, 24]``, a part
    that cannot run at 12)."""
    r = float(sensor["sample_rate_hz"])
    for q in rates:
        _factor(sensor["name"], r, q, f"a feature at {q:g} Hz")
    read = read_rate(r, rates)
    paid = paid_rate(r, sensor.get("rates_hz") or (), rates)
    whole = round(paid / read)
    return paid if whole >= 1 and abs(paid / read - whole) <= RATIO_TOLERANCE * whole else read


def _group_meta(meta: dict, sensor: dict, rate: float, entries: list, channels: list) -> dict:
    """The meta of one group: its extractors and features, windows at its rate."""
    selected = [f for e in entries for f in e["features"] if f in meta["selected"]]
    selected.sort(key=meta["selected"].index)
    window, hop = round(meta["window_s"] * rate), round(meta["hop_s"] * rate)
    return {"required_extractors": [e["name"] for e in entries], "extractors": entries,
            "selected": selected, "window": window, "hop": hop, "sample_rate_hz": rate,
            "sensors": [{**sensor, "channels": channels}], "targets": meta["targets"],
            "classes": meta.get("classes"), "task": meta["task"]}


def _groups_of(meta: dict) -> dict:
    """{(sensor name, rate): [extractor entries]} in order of first use."""
    by_sensor = {s["name"]: s for s in meta.get("sensors", []) if isinstance(s, dict)}
    groups = {}
    for e in _extractor_entries(meta):
        sensor = _sensor_of(e, by_sensor)
        rate = float(e["params"].get("sample_rate_hz") or by_sensor[sensor]["sample_rate_hz"])
        groups.setdefault((sensor, rate), []).append(e)
    return groups


def sensor_idents(names) -> list:
    """Unique lower-case C identifier parts of sensor names (user text; the library makes its
    own within its name's room: :func:`.multirate_library.library_idents`)."""
    return [m[2:].lower() for m in cgen.macro_names("S", names)]


def _sensor_plans(meta: dict, arrays: dict, groups: dict, numeric: str, full_scale) -> tuple:
    """The :class:`SensorPlan` of every sensor a group reads (declaration order), with the one
    set of full scales (q15/q31) over all their channels."""
    declared = [s for s in meta["sensors"] if any(g[0] == s["name"] for g in groups)]
    used = {c for es in groups.values() for e in es for c in e["params"]["channels"]}
    channels = [[c for c in s["channels"] if c in used] for s in declared]
    strays = used - {c for cs in channels for c in cs}
    if strays:
        raise FirmwareGenError(f"channel {sorted(strays)[0]!r} is read by an extractor but is "
                               f"no channel of its sensor in the bundle")
    every = [c for cs in channels for c in cs]
    scale_of = {}
    if numeric != "float32":
        scales = resolve_full_scale(every, full_scale,
                                    _channel_bounds(meta, arrays, _extractor_entries(meta)))
        scale_of = dict(zip(every, scales))
    idents = sensor_idents([s["name"] for s in declared])
    return tuple(SensorPlan(s["name"], ident,
                            _pushed_rate(s, [r for n, r in groups if n == s["name"]]),
                            tuple(cs), tuple(scale_of[c] for c in cs) if scale_of else None,
                            float(s["sample_rate_hz"]))
                 for s, ident, cs in zip(declared, idents, channels))


def _group_plan(bundle, sensors: tuple, sensor: dict, rate: float, entries: list,
                name: str, numeric: str) -> GroupPlan:
    """One group: its single-rate plan (:func:`~.plan.make_plan` of the group's part of the
    bundle, the sensor's full scales), decimation, channels and model inputs."""
    meta, arrays = bundle.meta, bundle.arrays
    index = next(i for i, s in enumerate(sensors) if s.name == sensor["name"])
    pushed = sensors[index]
    factor = _factor(pushed.name, pushed.rate_hz, rate, f"extractor {entries[0]['name']!r}")
    gmeta = _group_meta(meta, sensor, rate, entries, list(pushed.channels))
    rows = [meta["selected"].index(f) for f in gmeta["selected"]]
    sub = _SubBundle(gmeta, {k: arrays[k][rows] for k in ("x_min", "x_max")},
                     bundle.bundle_sha256())
    reads = {c for e in entries for c in e["params"]["channels"]}
    scales = None if pushed.full_scale is None else {
        c: v for c, v in zip(pushed.channels, pushed.full_scale) if c in reads}
    plan = make_plan(sub, name=name, numeric=numeric, full_scale=scales)
    return GroupPlan(index, rate, factor, tuple(pushed.channels.index(c) for c in plan.channels),
                     plan, tuple(meta["selected"].index(f) for f in plan.features))


def make_multirate_plan(bundle, *, name: str, numeric: str, full_scale=None,
                        group_prefix: str | None = None) -> MultiRatePlan:
    """The :class:`MultiRatePlan` of a multi-rate ``bundle`` (raises FirmwareGenError).

    ``group_prefix`` (default ``<name>_g``) prefixes each group's generated part
    (``<group_prefix><g>_stream.c``); with the group number it stays within cgen.MAX_NAME."""
    if numeric not in NUMERICS:
        raise FirmwareGenError(f"numeric={numeric!r} is not one of {NUMERICS}")
    meta = bundle.meta
    if not is_multi_rate(bundle):
        raise FirmwareGenError("the bundle is single-rate: use make_plan")
    groups = _groups_of(meta)
    prefix = f"{name}_g" if group_prefix is None else group_prefix
    longest = f"{prefix}{len(groups) - 1}"
    if len(longest) > cgen.MAX_NAME:
        raise FirmwareGenError(f"name={name!r}: its group prefix {longest!r} has {len(longest)} "
                               f"characters; the limit is {cgen.MAX_NAME} (use a shorter name)")
    sensors = _sensor_plans(meta, bundle.arrays, groups, numeric, full_scale)
    by_name = {s["name"]: s for s in meta["sensors"]}
    out = tuple(_group_plan(bundle, sensors, by_name[sname], rate, entries, f"{prefix}{g}",
                            numeric)
                for g, ((sname, rate), entries) in enumerate(groups.items()))
    if sorted(s for g in out for s in g.slots) != list(range(len(meta["selected"]))):
        raise FirmwareGenError("the bundle's selected features and its extractors disagree")
    return MultiRatePlan(
        name=name, numeric=numeric, sensors=sensors, groups=out,
        window_s=float(meta["window_s"]), hop_s=float(meta["hop_s"]),
        features=tuple(meta["selected"]),
        targets=tuple(str(t) for t in (meta.get("classes") or meta["targets"])),
        task=meta["task"], bundle_sha256=bundle.bundle_sha256())
