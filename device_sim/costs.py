"""Target profiles and the per-prediction cost model: time, energy, duty cycle, battery life.

Per prediction (one window, one model evaluation):

- compute: the pushes (each new sample stored into the window's ring buffer), the window pass
  (the extractors) and the model, in the backend's unit (``instructions`` on Cortex-M,
  ``cycles`` on AVR, ``nanoseconds`` on the host). Time = cycles / clock; Cortex-M instruction
  counts are converted with ``cpi`` cycles per instruction (1.0 assumed: Cortex-M3/M4 execute most
  data-processing instructions in one cycle; loads, branches and divides take longer, so this is
  a lower bound and labelled as such). Energy = active power x time.
- sensors: energy and read time per prediction of the required sensors, min(window, hop)
  readings x ``energy_per_reading_j`` and x ``read_time_s``
  (:func:`sensorbudget.trainer.sensing.sensor_budget.per_prediction`, the definition the selection budgets
  and ``model.json`` use; docs/device_costs.md); ``sensor_overrun`` compares the longest single
  reading with the sample period.
- latency = compute time from the newest sample to the prediction (sensor reads overlap the
  previous period); a deadline miss is a latency above the prediction period (hop / sample
  rate). ``sensor_overrun`` flags a sensor whose read time exceeds the sample period.
- duty cycle = compute time / period (MCU active); average power = (sensor + compute energy) /
  period + sleep power x (1 - duty); battery life = capacity / average power.

Profiles: one per board of the registry (:mod:`sensorbudget.firmware_gen.boards`: part, clock,
supply, active and sleep current, each with its datasheet or "estimate: why"), under the board's
name and its aliases (``cortex-m4f`` is the ``mps2-an386`` board, ``avr`` the ``arduino-uno``: one
board per name). A simulation is costed with the board its image was built for, or the board
given to ``simulate(board=...)`` (the measuring backend and the costed board are separate).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from sensorbudget.firmware_gen.boards import ALIASES, BOARD_NAMES, BOARDS, Board, get_board
from sensorbudget.firmware_gen.errors import FirmwareGenError
from sensorbudget.trainer.sensing.extractors import KINDS
from sensorbudget.trainer.sensing.sensor_budget import readings_per_prediction

from .errors import DeviceError


@dataclass(frozen=True)
class TargetProfile:
    """Clock and power of one board, with where the numbers come from (built from the board
    registry by :func:`cost_profile`)."""

    name: str
    clock_hz: float
    supply_v: float
    active_current_a: float
    sleep_current_a: float
    unit: str                 # what the board's own counter measures: instructions | cycles | ns
    cpi: float                # cycles per instruction used to turn instructions into time
    source: str
    estimated_power: bool = False
    # op-count estimate: cost of one float op, one integer op, one divide/sqrt, one model MAC
    float_op: float = 3.0
    int_op: float = 2.0
    slow_op: float = 14.0
    mac_float: float = 9.0
    mac_fixed: float = 4.0
    store_op: float = 2.4     # one sample of one channel stored into the ring buffer (a push)

    @property
    def active_power_w(self) -> float:
        return self.supply_v * self.active_current_a

    @property
    def sleep_power_w(self) -> float:
        return self.supply_v * self.sleep_current_a

    def seconds(self, amount: float, unit: str) -> float:
        """Time of ``amount`` units (instructions, cycles or nanoseconds) on this target."""
        if unit == "nanoseconds":
            return amount * 1e-9
        if unit == "instructions":
            return amount * self.cpi / self.clock_hz
        return amount / self.clock_hz

    def as_dict(self) -> dict:
        d = asdict(self)
        d.update(active_power_w=self.active_power_w, sleep_power_w=self.sleep_power_w)
        return d


#: op-count estimate per core class (``Board.ops``): float op, int op, divide/sqrt, float MAC,
#: fixed MAC, store (one sample of one channel pushed into the ring buffer). The stores are
#: measured on the issue-28 bundle (32 new rows x its 5 used channels per prediction, stored by
#: ``<name>_stream_add_rows`` in word copies; ``benchmarks/bench_issue28.py``): Cortex-M4F 385
#: instructions (unicorn-m4f, float32) = 2.4 per value, the same Thumb-2 copy on the M3;
#: ATmega328P 2 087 cycles (simavr, Q15; the ld X+ / st Z+ row copy) = 13.0 per value (the
#: per-row and per-call bookkeeping included). RISC-V
#: (no load/store multiple) and
#: the host are estimates: a load and a store per value, two integer ops.
OPS = {
    "m4f": dict(float_op=3.0, int_op=2.0, slow_op=14.0, mac_float=9.0, mac_fixed=4.0,
                store_op=2.4),
    "m3": dict(float_op=40.0, int_op=2.0, slow_op=400.0, mac_float=87.0, mac_fixed=5.0,
               store_op=2.4),
    "avr8": dict(float_op=140.0, int_op=8.0, slow_op=550.0, mac_float=287.0, mac_fixed=80.0,
                 store_op=13.0),
    # RV32IMAC/IMC/EC, no FPU: soft float through libgcc (like the M3), no DSP MACs
    "rv32": dict(float_op=45.0, int_op=2.0, slow_op=450.0, mac_float=95.0, mac_fixed=5.0,
                 store_op=4.0),
    "host": dict(float_op=0.5, int_op=0.3, slow_op=3.0, mac_float=1.0, mac_fixed=0.7,
                 store_op=0.6),
}


def cost_profile(board: Board) -> TargetProfile:
    """The cost profile of a registry board: its clock, supply and currents (instructions at
    one cycle each: Cortex-M3/M4 and the RISC-V cores execute most data-processing instructions
    in one cycle, so time from instructions is a lower bound), the sources of its figures and
    its core's op-count estimate."""
    b = board
    return TargetProfile(b.name, b.clock_hz, b.supply_v, b.active_current_a, b.sleep_current_a,
                         b.cost_unit, 1.0, f"{b.part} @ {b.clock_hz / 1e6:g} MHz, "
                         f"{b.supply_v:g} V: {b.power_source}",
                         estimated_power=b.estimated_power, **OPS[b.ops])


#: cost profiles by board name and alias (an alias maps to its board's profile)
PROFILES = {name: cost_profile(b) for name, b in BOARDS.items()}
PROFILES.update({alias: PROFILES[name] for alias, name in ALIASES.items()})


def get_cost_profile(name: str) -> TargetProfile:
    """The cost profile of board ``name`` (or an alias); DeviceError naming the boards."""
    try:
        return PROFILES[get_board(name).name]
    except FirmwareGenError:
        raise DeviceError(f"board={name!r} is not one of {', '.join(BOARD_NAMES)}") from None


# Per-sample operation counts of each extractor kind: (float ops, integer ops), plus the slow
# operations (divide, sqrt) once per window; "mag_*" also take one sqrt per sample.
_PER_SAMPLE = {"mean": (1, 0), "std": (4, 0), "min": (1, 0), "max": (1, 0), "ptp": (2, 0),
               "rms": (2, 0), "mad": (3, 0), "zcr": (3, 1), "energy": (2, 0), "last": (0, 0),
               "mag_mean": (1, 0), "mag_std": (4, 0), "mag_max": (1, 0), "corr": (10, 0)}
_PER_WINDOW_SLOW = {"mean": 1, "std": 3, "rms": 2, "mad": 1, "zcr": 2, "mag_mean": 1,
                    "mag_std": 3, "corr": 7}


def estimate_extractor(kind: str, window: int, n_channels: int, profile: TargetProfile) -> float:
    """Estimated cost of one extractor on one window, in the profile's unit (op-count model)."""
    floats, ints = _PER_SAMPLE[kind]
    per_sample = floats * profile.float_op + (ints + 2) * profile.int_op   # + loop overhead
    if not KINDS[kind].per_channel:
        per_sample += n_channels * 2 * profile.float_op + (profile.slow_op if kind != "corr"
                                                           else 0.0)
    return window * per_sample + _PER_WINDOW_SLOW.get(kind, 0) * profile.slow_op


# Shape, autocorrelation and spectral kinds (computed on a copy of the window, then on its
# power spectrum; firmware_gen.series_c / fft_c): per value of the array (float ops, int ops),
# per window slow ops; spectral kinds count per bin of the M/2 + 1 of the spectrum.
_SERIES = {"skew": (8, 1, 3), "kurtosis": (8, 1, 3), "slope": (6, 1, 2), "peaks": (8, 3, 2),
           "percentile": (1, 6, 0), "autocorr": (6, 1, 2), "cadence": (3, 1, 2),
           "bandpower": (1, 1, 0), "bandratio": (1, 1, 1), "domfreq": (1, 2, 0),
           "centroid": (3, 1, 1), "entropy": (18, 4, 2)}


def fft_points(n: int) -> int:
    """Points of the FFT of an ``n``-value array (the power of two >= max(n, 2))."""
    return max(2, 1 << (max(n, 2) - 1).bit_length())


def estimate_series(spec, n: int, rate: float, profile: TargetProfile) -> float:
    """Estimated cost of one shape / spectral extractor (a :class:`Spec`) on an ``n``-value
    array (its transforms excluded: :func:`estimate_transform`)."""
    floats, ints, slow = _SERIES[spec.kind]
    count = n
    if spec.kind in ("bandpower", "bandratio"):
        from sensorbudget.trainer.sensing.spectral import band_bins

        bands = [spec.arg[i:i + 2] for i in range(0, len(spec.arg), 2)]
        count = sum(len(band_bins(lo, hi, n, rate)) for lo, hi in bands)
    elif spec.kind in ("domfreq", "centroid", "entropy"):
        count = fft_points(n) // 2
        slow += count if spec.kind == "entropy" else 0        # one division per bin
    elif spec.kind == "cadence":
        count = n * (int(spec.arg[1]) - int(spec.arg[0]) + 1) + 2 * n
    elif spec.kind in ("skew", "kurtosis", "peaks"):
        count = 2 * n                                         # the mean first
    return count * (floats * profile.float_op + ints * profile.int_op) + slow * profile.slow_op


def estimate_transform(name: str, n: int, profile: TargetProfile) -> float:
    """Estimated cost of one transform on an ``n``-sample window: ``*.fft`` / ``*.fft_rect``
    (mean, window, (M/2) log2 M butterflies of 10 float ops, the power of M/2 + 1 bins),
    ``*.jerk`` (one subtraction per value), ``*.highpass_*`` (three float ops per value)."""
    per_value = 2 * profile.int_op                              # load, store, loop
    if name.endswith(("fft", "fft_rect")):
        m = fft_points(n)
        butterflies = m // 2 * max(1, m.bit_length() - 1)
        return (n * (3 * profile.float_op + per_value) + 2 * m * profile.int_op
                + butterflies * (10 * profile.float_op + 4 * profile.int_op)
                + (m // 2 + 1) * 3 * profile.float_op + profile.slow_op)
    floats = 1 if name.endswith(".jerk") else 3
    return n * (floats * profile.float_op + per_value)


def _plan_costs(plan, profile: TargetProfile) -> tuple:
    """({extractor: cost}, {transform: cost}) of a FirmwarePlan: each transform once."""
    from sensorbudget.trainer.sensing.specs import transforms_of

    ext, transforms = {}, {}
    for e in plan.extractors:
        spec = e.full_spec
        names = [plan.channels[c] for c in e.channels]
        n = plan.window - (1 if spec.pre == "jerk" else 0)
        for t in transforms_of(spec.text, names):
            transforms.setdefault(t, estimate_transform(t, n, profile))
        if spec.kind in _SERIES:
            ext[e.name] = estimate_series(spec, n, plan.sample_rate_hz, profile)
        else:
            ext[e.name] = estimate_extractor(e.kind, n, len(e.channels), profile)
    return ext, transforms


def estimate_pushes(model, profile: TargetProfile) -> tuple:
    """({channel: cost}, {channel: cost}) of the pushes of a steady prediction and of the
    first one after a RESET: per channel, new samples x :attr:`TargetProfile.store_op`.

    A steady prediction stores min(window, hop) new samples of each used channel (the readings
    :func:`sensorbudget.trainer.sensing.sensor_budget.readings_per_prediction` pays the
    sensors for), the first one a whole window; a multi-rate sensor counts its own window and
    hop (its samples at the rate it is pushed at). The per-call overhead of the push is not
    counted apart: :attr:`TargetProfile.store_op` is measured on the issue-28 bundle's five
    channels with its per-row and per-call bookkeeping, so the estimate is low for fewer."""
    if getattr(model, "multi_rate", False):
        plan = model.plan
        rows = [(s.channels, info.window, info.hop) for s, info in zip(plan.sensors,
                                                                       model.sensors)]
    else:
        rows = [(model.channels, model.window, model.hop)]
    steady, first = {}, {}
    for channels, window, hop in rows:
        for c in channels:
            steady[c] = readings_per_prediction(window, hop) * profile.store_op
            first[c] = window * profile.store_op
    return steady, first


def push_shares(model, per_channel: dict) -> dict:
    """{extractor: its share of the pushes}: each channel's pushes (``per_channel``) split
    equally over the model's extractors that read it, so that the shares sum to the pushes
    (what ``calibrate`` adds to each extractor's window pass for the next ``train``)."""
    plan = getattr(model, "plan", None)
    plans = [g.plan for g in plan.groups] if hasattr(plan, "groups") else [plan]
    reads = ({e.name: [p.channels[c] for c in e.channels] for p in plans
              for e in p.extractors} if plan is not None else
             {f.name: list(f.channels) for f in model.features})
    readers = {}
    for name, channels in reads.items():
        for c in channels:
            readers.setdefault(c, []).append(name)
    shares = dict.fromkeys(reads, 0.0)
    for c, cost in per_channel.items():
        for name in readers.get(c, ()):
            shares[name] += cost / len(readers[c])
    return shares


def estimate_costs(model, profile: TargetProfile) -> dict:
    """Estimated {"extractors": {name: cost}, "transforms": {name: cost}, "model": cost,
    "pushes": {channel: cost}, "first_pushes": {channel: cost}} of a ReferenceModel (a
    transform, such as a channel's FFT, is counted once however many extractors read it; the
    pushes of a steady and of the first prediction: :func:`estimate_pushes`)."""
    plan = getattr(model, "plan", None)
    if plan is not None and hasattr(plan, "groups"):     # multi-rate: each (sensor, rate) group
        ext, transforms = {}, {}
        for g in plan.groups:
            e, t = _plan_costs(g.plan, profile)
            ext.update(e)
            transforms.update((f"{k}@{g.rate_hz:g}", v) for k, v in t.items())
    elif plan is not None:
        ext, transforms = _plan_costs(plan, profile)
    else:
        ext = {f.name: estimate_extractor(f.kind, model.window, len(f.channels), profile)
               for f in model.features}
        transforms = {}
    macs = model.k * model.t
    if model.fixed is None:
        mcost = macs * profile.mac_float
    else:
        mcost = macs * profile.mac_fixed + model.k * (4 * profile.float_op + profile.slow_op)
    steady, first = estimate_pushes(model, profile)
    return {"extractors": ext, "transforms": transforms, "model": float(mcost),
            "pushes": steady, "first_pushes": first}


def sensor_costs(meta: dict) -> dict:
    """{"energy_j", "time_s", "read_time_s", "per_sensor"} per prediction of the bundle's
    required sensors: energy and time from :func:`sensorbudget.trainer.sensing.sensor_budget.per_prediction`
    (min(window, hop) readings each; the selection budgets' definition), summed over the
    sensors; ``read_time_s`` the longest single reading (for ``sensor_overrun``)."""
    from sensorbudget.trainer.sensing.rates import with_chosen_rates
    from sensorbudget.trainer.sensing.sensor_budget import per_prediction

    if meta.get("multi_rate") and "sensor_rates_hz" not in meta:
        meta = with_chosen_rates(meta)     # a bundle written without them: the same rule
    by_name = {s["name"]: s for s in meta.get("sensors", []) if isinstance(s, dict)}
    window = int(meta.get("window", 1))
    per_sensor, energy, time, read_time = {}, 0.0, 0.0, 0.0
    for name in meta.get("required_sensors", []):
        s = by_name.get(name, {})
        rate = None
        if meta.get("multi_rate"):      # each sensor at its own (chosen) rate
            s, rate, n, h = _at_own_rate(s, meta)
            cost = per_prediction(s, n, h)
        else:
            cost = per_prediction(s, window, meta.get("hop", window))
        rt = s.get("read_time_s")
        per_sensor[name] = {"energy_j": cost["energy"], "time_s": cost["time"],
                            "readings": cost["readings"],
                            "read_time_s": None if rt is None else float(rt)}
        if rate is not None:
            per_sensor[name]["rate_hz"] = rate
        energy += cost["energy"]
        time += cost["time"]
        if rt is not None:
            read_time = max(read_time, float(rt))
    return {"energy_j": energy, "time_s": time, "read_time_s": read_time,
            "per_sensor": per_sensor}


def _at_own_rate(sensor: dict, meta: dict) -> tuple:
    """(sensor with its energy per reading at its rate, the rate, window and hop in its
    readings) of a multi-rate bundle's sensor: the rate its chosen features need
    (``chosen_rate_hz``, else its recorded rate), the energy per reading of ``rates_hz`` there
    (issue 30 item 4: readings per prediction = rate x min(window_s, hop_s))."""
    rate = float(sensor.get("chosen_rate_hz") or sensor["sample_rate_hz"])
    if sensor.get("rates_hz"):
        table = dict(zip(map(float, sensor["rates_hz"]), sensor["energy_per_reading_j_by_rate"]))
        sensor = {**sensor, "energy_per_reading_j": table[rate]}
    return sensor, rate, round(meta["window_s"] * rate), round(meta["hop_s"] * rate)


def stats3(values) -> dict | None:
    """min / median / max / mean of a sequence (None when empty)."""
    v = np.asarray([x for x in values if x is not None], dtype=np.float64)
    if v.size == 0:
        return None
    return {"min": float(v.min()), "median": float(np.median(v)), "max": float(v.max()),
            "mean": float(v.mean()), "n": int(v.size)}


def energy_budget(*, compute_units: list, unit: str, profile: TargetProfile, sensors: dict,
                  period_s: float, battery_wh: float, sample_period_s: float = 0.0) -> dict:
    """Time, energy, deadline, duty cycle, power and battery life from per-prediction costs."""
    times = [profile.seconds(c, unit) for c in compute_units if c is not None]
    t_med = float(np.median(times)) if times else 0.0
    misses = int(sum(t > period_s for t in times))
    e_compute = profile.active_power_w * t_med
    duty = min(1.0, t_med / period_s) if period_s > 0 else 1.0
    e_total = sensors["energy_j"] + e_compute
    avg_power = (e_total / period_s + profile.sleep_power_w * (1 - duty) if period_s > 0
                 else math.inf)
    life_h = battery_wh / avg_power if avg_power > 0 else math.inf
    return {"compute_time_s": stats3(times), "latency_s": stats3(times),
            "deadline_s": period_s, "deadline_misses": misses,
            "sensor_read_time_s": sensors["read_time_s"],
            "sensor_time_per_prediction_s": sensors.get("time_s", 0.0),
            "sensor_overrun": sensors["read_time_s"] > sample_period_s * (1 + 1e-9)
            if sample_period_s else False,
            "energy_per_prediction_j": {"sensors": sensors["energy_j"], "compute": e_compute,
                                        "total": e_total},
            "duty_cycle": duty, "average_power_w": avg_power,
            "battery_wh": battery_wh, "battery_life_h": life_h,
            "battery_life_days": life_h / 24}
