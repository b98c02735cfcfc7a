"""Write measured per-extractor compute costs back into a ``sensors.toml``.

The costs go into one generated block at the end of the file, between marker comments, as an
array of ``[[calibration]]`` tables (one per extractor and target)::

    # >>> sensorbudget calibrate: generated, re-running calibrate replaces this block
    [[calibration]]
    extractor = "acc_x.std"            # feature/extractor name, as in the bundle
    target = "cortex-m4f"              # cost profile (device_sim.costs.PROFILES)
    compute_instructions = 412.0       # per prediction; or compute_cycles / compute_nanoseconds
    compute_time_s = 2.45e-06          # on the profile's clock
    compute_energy_j = 3.24e-07        # active power x time
    method = "measured per call (unicorn)"
    source = "demo-out/sim/report.json (backend unicorn-m4f)"
    # <<< sensorbudget calibrate

Everything outside the block (comments included) is kept byte for byte; the file is replaced
atomically (temporary file + ``os.replace``). A training run can then budget with
``compute_energy_j`` / ``compute_time_s`` as each extractor's per-prediction energy and time.

An extractor's entry is its window pass plus its share of the pushes (the report's
``per_extractor_push``: each channel's pushes split equally over the simulated bundle's
extractors reading that channel), so that ``train`` on the same features prices what
``simulate`` reports per prediction (pushes + window pass). A selection that reads a channel
with fewer or more of those extractors pays a smaller or larger part of that channel's pushes
(the cost plan has no per-channel push level).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import tomli_w

from sensorbudget.trainer.bundle import write_atomically
from sensorbudget.trainer.sensing.sensors import parse_sensor_spec
from sensorbudget.trainer.sensing.specs import parse_spec, transforms_of

from .costs import PROFILES, estimate_extractor, estimate_transform
from .errors import DeviceError
from .report import load_report

BEGIN = "# >>> sensorbudget calibrate: generated, re-running calibrate replaces this block"
END = "# <<< sensorbudget calibrate"
#: kinds the op-count model does not list, estimated as one it does (a rough stand-in: two
#: passes with powers for skew/kurtosis, the products of a correlation for the slope, the
#: compares of a crossing count for peaks and of ptp for the percentile's selection)
ESTIMATE_AS = {"skew": "std", "kurtosis": "std", "slope": "corr", "peaks": "zcr",
               "percentile": "ptp", "bandpower": "mean", "bandratio": "mean", "domfreq": "max",
               "centroid": "energy", "entropy": "std", "autocorr": "energy", "cadence": "corr"}
#: how an extractor's entry includes the pushes (the report's ``per_extractor_push``)
PUSH_SHARE = ("; plus its share of the pushes (each channel's, split equally over the "
              "simulated bundle's extractors reading it)")
UNIT_KEYS = {"instructions": "compute_instructions", "cycles": "compute_cycles",
             "nanoseconds": "compute_nanoseconds"}


def calibration_entries(report: dict, source: str, allow_estimated: bool = False) -> list:
    """[[calibration]] dictionaries from one report's per-extractor and per-transform costs
    (a transform such as ``acc_y.fft`` gets its entry under its name, which the cost model
    charges once per window when a feature reading it is selected)."""
    cost = report["cost"]
    if not cost.get("per_extractor_measured", cost.get("measured")) and not allow_estimated:
        raise DeviceError(f"{source}: the compute costs of backend {report['backend']!r} are "
                          f"estimated, not measured; simulate on a measuring backend (qemu-m4f, "
                          f"unicorn-m4f, simavr, host) or pass --allow-estimated")
    if report["profile"]["name"] not in PROFILES:
        raise DeviceError(f"{source}: profile {report['profile']['name']!r} is not one of "
                          f"{', '.join(sorted(PROFILES))}")
    prof = PROFILES[report["profile"]["name"]]
    unit = cost["unit"]
    entries = []
    pushes = cost.get("per_extractor_push") or {}
    parts = {**(cost.get("per_transform") or {}), **{
        k: float(v) + float(pushes.get(k, 0.0)) for k, v in (cost.get("per_extractor")
                                                              or {}).items()}}
    method = cost.get("per_extractor_method") or cost.get("method", "")
    if pushes:
        method += PUSH_SHARE
    for name, value in sorted(parts.items()):
        t = prof.seconds(float(value), unit)
        entries.append({"extractor": name, "target": prof.name,
                        UNIT_KEYS[unit]: float(round(float(value), 3)),
                        "compute_time_s": float(t),   # full precision: train sums them
                        "compute_energy_j": float(t * prof.active_power_w),
                        "method": method if name in pushes else
                        cost.get("per_extractor_method") or cost.get("method", ""),
                        "source": f"{source} (backend {report['backend']})"})
    return entries


def render_block(entries: list) -> str:
    """The generated block: one ``[[calibration]]`` table per entry, its keys in order, every
    value written by ``tomli_w`` (a well-kept TOML writer: strings with newlines, control
    characters or quotes, such as a report folder's name, are escaped as TOML requires)."""
    lines = [BEGIN, "# Measured compute cost of each extractor per prediction (sensorbudget",
             "# simulate); train may budget with compute_energy_j / compute_time_s."]
    for e in entries:
        lines.append("[[calibration]]")
        lines.append(tomli_w.dumps(e).rstrip("\n"))
    lines.append(END)
    return "\n".join(lines) + "\n"


def strip_block(text: str) -> str:
    """``text`` without a previous calibrate block (and the blank line before it)."""
    start = text.find(BEGIN)
    if start < 0:
        return text
    end = text.find(END, start)
    if end < 0:
        raise DeviceError("the sensors file has a calibrate start marker but no end marker "
                          f"{END!r}; fix it by hand")
    end = text.find("\n", end)
    tail = "" if end < 0 else text[end + 1:]
    return text[:start].rstrip("\n") + ("\n" if text[:start].strip() else "") + tail


def known_extractors(data: dict, source: str) -> tuple:
    """{feature/extractor name: its FeatureDef} of a sensors.toml, and the window length in
    samples (None when the file sets none). The file's existing ``[[calibration]]`` entries
    are validated too (a ``target = 5`` is an error naming the entry, as for ``train``)."""
    spec = parse_sensor_spec(data, source)
    return {f.name: f for f in spec.features}, spec.window


def estimated_entries(features: dict, window, target: str, have: set) -> list:
    """[[calibration]] entries for the extractors of ``features`` that ``have`` no entry for
    ``target``: the op-count estimate of
    :func:`sensorbudget.device_sim.costs.estimate_extractor`, marked ``measured = false``, so
    that an unmeasured extractor never looks free (0 J) to the next selection."""
    prof = PROFILES[target]
    out = []
    todo = {}
    for name, f in sorted(features.items()):
        spec = parse_spec(f.kind)
        todo[name] = (ESTIMATE_AS.get(spec.kind, spec.kind), len(f.channels))
        for t in transforms_of(f.kind, f.channels):
            # device_sim.costs.estimate_transform: (M/2) log2 M butterflies for an FFT (the
            # jerk's has one value fewer), a few float ops per value for a filter
            todo.setdefault(t, ("fft", 1) if t.endswith(("fft", "fft_rect")) else ("mad", 1))
    for name, (kind, n_channels) in sorted(todo.items()):
        if name in have or window is None:
            continue
        if kind in ("fft", "mad"):      # a transform: an FFT or a filter of the window
            units = estimate_transform(name, window - (".jerk" in name), prof)
        else:
            units = estimate_extractor(kind, window, n_channels, prof)
        t = prof.seconds(units, prof.unit)
        out.append({"extractor": name, "target": target,
                    UNIT_KEYS[prof.unit]: float(round(units, 3)),
                    "compute_time_s": float(f"{t:.6g}"),
                    "compute_energy_j": float(f"{t * prof.active_power_w:.6g}"),
                    "method": "estimated (op-count model): not measured", "measured": False,
                    "source": "sensorbudget calibrate"})
    return out


@dataclass(frozen=True)
class Calibration:
    """A sensors.toml with measured costs merged in: ``text`` (the whole new file), ``source``
    (the sensors file read), ``entries`` (every [[calibration]] table of its block),
    ``skipped`` (reported extractors the file does not have) and ``unmeasured`` (extractors
    with an op-count estimate only)."""

    text: str
    source: Path
    entries: list
    skipped: list
    unmeasured: list

    def save(self, path=None) -> Path:
        """Write the file to ``path`` (default: replace the sensors file read), atomically."""
        out = self.source if path is None else Path(path)
        write_atomically(out, self.text.encode("utf-8"))
        return out


def calibration(sensors_toml, reports, allow_estimated: bool = False) -> Calibration:
    """Merge the per-extractor costs of ``reports`` into the text of ``sensors_toml``.

    Later reports override earlier ones for the same (extractor, target); previous calibration
    entries for other extractors or targets are kept. Every other extractor of the file gets
    (or keeps) an op-count estimate for the reports' targets, marked ``measured = false``.
    Nothing is written (:meth:`Calibration.save`).
    """
    path = Path(sensors_toml)
    try:
        text = path.read_bytes().decode("utf-8")     # no newline translation: kept as is
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise DeviceError(f"{str(path)!r} is not valid TOML: {exc}") from None
    known, window = known_extractors(data, str(path))
    transforms = {t for f in known.values() for t in transforms_of(f.kind, f.channels)}
    merged = {(e["extractor"], e["target"]): e for e in data.get("calibration", [])
              if isinstance(e, dict) and "extractor" in e and "target" in e}
    skipped, targets = [], set()
    for rp in reports:
        for e in calibration_entries(load_report(rp), str(rp), allow_estimated):
            targets.add(e["target"])
            if e["extractor"] not in known and e["extractor"] not in transforms:
                skipped.append(e["extractor"])
                continue
            merged[(e["extractor"], e["target"])] = e
    for target in sorted(targets):
        have = {x for x, t in merged if t == target}
        for e in estimated_entries(known, window, target, have):
            merged[(e["extractor"], target)] = e
    entries = [merged[k] for k in sorted(merged)]
    unmeasured = sorted({e["extractor"] for e in entries if e.get("measured") is False})
    base = strip_block(text)
    new_text = base + ("" if base.endswith("\n") or not base else "\n") + "\n" + render_block(
        entries)
    tomllib.loads(new_text)     # never write a file that does not parse
    return Calibration(text=new_text, source=path, entries=entries,
                       skipped=sorted(set(skipped)), unmeasured=unmeasured)


def calibrate(sensors_toml, reports, output=None, allow_estimated: bool = False) -> dict:
    """:func:`calibration` written to ``output`` (default: ``sensors_toml`` replaced).
    Returns {"written", "entries", "skipped", "unmeasured"}."""
    done = calibration(sensors_toml, reports, allow_estimated)
    out = done.save(output)
    return {"written": str(out), "entries": done.entries, "skipped": done.skipped,
            "unmeasured": done.unmeasured}
