"""Target profiles and the per-prediction cost model: time, energy, duty cycle, battery life.

Per prediction (one window, one model evaluation):

- compute: extractor and model work in the backend's unit (``instructions`` on Cortex-M,
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

Profiles (typical datasheet values at 25 C; check your part):

- ``cortex-m4f``: STM32F407 at 168 MHz, 3.3 V, run mode from Flash with the ART accelerator,
  peripherals off: about 40 mA (ST DS8626, "Typical and maximum current consumption in Run mode",
  ~238 uA/MHz); Stop mode about 0.3 mA (same datasheet, Stop mode, regulator in low-power mode,
  order of magnitude).
- ``cortex-m3``: STM32F103 at 72 MHz, 3.3 V, run mode from Flash, peripherals off: about 27 mA
  (ST DS5319, "Typical current consumption in Run mode"); Stop mode about 24 uA.
- ``avr``: ATmega328P at 16 MHz, 5 V: about 10 mA active (Atmel 8161/8271 DC characteristics give
  5.2 mA typ at 8 MHz / 5 V; the "Active supply current vs. frequency" figure roughly doubles it at
  16 MHz); power-down with watchdog 4.2 uA (tabulated at 3 V).
- ``host``: a PC; power and clock are placeholders (15 W, 1 GHz), energy figures are not
  meaningful and labelled estimated.

These four are generic chips for estimates (``python``) and boards behind ``serial:URL``
(``--profile``). Every firmware target also has its own profile, named like the target
(``nucleo-f4``, ``arduino-uno``, ``mps2-an386``, ``mps2-an385``), built from
:mod:`sensorbudget.firmware_gen.profiles` (part, clock, currents and their datasheets); a firmware backend
is costed with the profile of the target it built.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from sensorbudget.firmware_gen.profiles import PROFILES as BOARD_PROFILES
from sensorbudget.trainer.sensing.extractors import KINDS


@dataclass(frozen=True)
class TargetProfile:
    """Clock and power of one target, with where the numbers come from."""

    name: str
    clock_hz: float
    supply_v: float
    active_current_a: float
    sleep_current_a: float
    unit: str                 # what the backend measures: instructions | cycles | nanoseconds
    cpi: float                # cycles per instruction used to turn instructions into time
    source: str
    estimated_power: bool = False
    # op-count estimate: cost of one float op, one integer op, one divide/sqrt, one model MAC
    float_op: float = 3.0
    int_op: float = 2.0
    slow_op: float = 14.0
    mac_float: float = 9.0
    mac_fixed: float = 4.0

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


_OPS = {  # op-count estimate per CPU kind: float op, int op, divide/sqrt, float MAC, fixed MAC
    "cortex-m4f": dict(float_op=3.0, int_op=2.0, slow_op=14.0, mac_float=9.0, mac_fixed=4.0),
    "cortex-m3": dict(float_op=40.0, int_op=2.0, slow_op=400.0, mac_float=87.0, mac_fixed=5.0),
    "avr": dict(float_op=140.0, int_op=8.0, slow_op=550.0, mac_float=287.0, mac_fixed=80.0),
    # RV32IMAC/IMC, no FPU: soft float through libgcc (like the M3), no DSP MACs
    "rv32imac": dict(float_op=45.0, int_op=2.0, slow_op=450.0, mac_float=95.0, mac_fixed=5.0),
    "host": dict(float_op=0.5, int_op=0.3, slow_op=3.0, mac_float=1.0, mac_fixed=0.7),
}

PROFILES = {
    "cortex-m4f": TargetProfile(
        "cortex-m4f", 168e6, 3.3, 0.040, 0.3e-3, "instructions", 1.0,
        "STM32F407 @ 168 MHz, 3.3 V: run mode from Flash (ART on, peripherals off) ~40 mA typ, "
        "Stop mode ~0.3 mA (ST DS8626 supply current tables)", **_OPS["cortex-m4f"]),
    "cortex-m3": TargetProfile(
        "cortex-m3", 72e6, 3.3, 0.027, 24e-6, "instructions", 1.0,
        "STM32F103 @ 72 MHz, 3.3 V: run mode from Flash (peripherals off) ~27 mA typ, Stop mode "
        "~24 uA (ST DS5319 supply current tables)", **_OPS["cortex-m3"]),
    "avr": TargetProfile(
        "avr", 16e6, 5.0, 0.010, 4.2e-6, "cycles", 1.0,
        "ATmega328P @ 16 MHz, 5 V: ~10 mA active (datasheet DC characteristics: 5.2 mA typ at "
        "8 MHz/5 V, doubled per the active-current-vs-frequency figure); power-down with "
        "watchdog 4.2 uA (tabulated at 3 V)", **_OPS["avr"]),
    "host": TargetProfile(
        "host", 1e9, 1.0, 15.0, 2.0, "nanoseconds", 1.0,
        "placeholder: a PC has no meaningful per-prediction energy (15 W active, 2 W idle)",
        estimated_power=True, **_OPS["host"]),
}


def _board_profile(target: str, unit: str, ops: str) -> TargetProfile:
    """The cost profile of a firmware target, from its board profile (firmware_gen.profiles):
    the clock and currents of the part the image is built for."""
    b = BOARD_PROFILES[target]
    return TargetProfile(target, b.clock_hz, b.supply_v, b.active_current_a, b.sleep_current_a,
                         unit, 1.0, f"{b.part} @ {b.clock_hz / 1e6:g} MHz, {b.supply_v:g} V: "
                         f"{b.power_source}", estimated_power=b.estimated_power, **_OPS[ops])


#: The profiles of the firmware targets, by target name: the energy of a firmware backend is
#: that of the part its image is built for (qemu-m4f: the MPS2 AN386 image at 25 MHz, not an
#: STM32F407). nucleo-f4 measures cycles on the board and instructions in QEMU (either is
#: turned into time at the 16 MHz HSI clock, instructions at 1 cycle each).
PROFILES.update({
    "mps2-an386": _board_profile("mps2-an386", "instructions", "cortex-m4f"),
    "mps2-an385": _board_profile("mps2-an385", "instructions", "cortex-m3"),
    "nucleo-f4": _board_profile("nucleo-f4", "cycles", "cortex-m4f"),
    "arduino-uno": _board_profile("arduino-uno", "cycles", "avr"),
    "hifive1": _board_profile("hifive1", "cycles", "rv32imac"),
    "ch32v003": _board_profile("ch32v003", "cycles", "rv32imac"),
})

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


def estimate_costs(model, profile: TargetProfile) -> dict:
    """Estimated {"extractors": {name: cost}, "transforms": {name: cost}, "model": cost} of a
    ReferenceModel (a transform, such as a channel's FFT, is counted once however many
    extractors read it)."""
    plan = getattr(model, "plan", None)
    if plan is not None:
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
    return {"extractors": ext, "transforms": transforms, "model": float(mcost)}


def sensor_costs(meta: dict) -> dict:
    """{"energy_j", "time_s", "read_time_s", "per_sensor"} per prediction of the bundle's
    required sensors: energy and time from :func:`sensorbudget.trainer.sensing.sensor_budget.per_prediction`
    (min(window, hop) readings each; the selection budgets' definition), summed over the
    sensors; ``read_time_s`` the longest single reading (for ``sensor_overrun``)."""
    from sensorbudget.trainer.sensing.sensor_budget import per_prediction

    by_name = {s["name"]: s for s in meta.get("sensors", []) if isinstance(s, dict)}
    window = int(meta.get("window", 1))
    per_sensor, energy, time, read_time = {}, 0.0, 0.0, 0.0
    for name in meta.get("required_sensors", []):
        s = by_name.get(name, {})
        cost = per_prediction(s, window, meta.get("hop", window))
        rt = s.get("read_time_s")
        per_sensor[name] = {"energy_j": cost["energy"], "time_s": cost["time"],
                            "readings": cost["readings"],
                            "read_time_s": None if rt is None else float(rt)}
        energy += cost["energy"]
        time += cost["time"]
        if rt is not None:
            read_time = max(read_time, float(rt))
    return {"energy_j": energy, "time_s": time, "read_time_s": read_time,
            "per_sensor": per_sensor}


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
