"""A seeded generator of code-generator cases (issue 28): random ``sensors.toml`` files on a
synthetic 9-channel, 64 Hz accelerometer stream (three body-worn 3-axis sensors), random
selections of 1-12 of their features with random weights, and a target and numeric format.

:func:`make_case` draws everything from one integer seed (and the seed's place in
:data:`TARGET_NUMERICS`, or a given target and numeric), so a failing case is reproduced by
its seed (:data:`REGRESSIONS`); :func:`issue_case` is the hand-written regression of the
issue's report (the 6-feature bundle). :func:`case_bundle` turns a case into a bundle
the way ``sensorbudget features`` + ``train`` do (the same feature set, a greedy fit on the
chosen columns), then replaces the weights by random ones.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

RATE_HZ = 64
#: per-recording labels (regression targets); a case uses 1-4 of them
TARGETS = ("speed", "load", "slope", "age")
KERNELS = ("auto", "loop", "unrolled")
SENSORS = ("ankle", "leg", "trunk")
AXES = ("vert", "horiz_fwd", "horiz_lateral")
CHANNELS = tuple(f"{s}_{a}" for s in SENSORS for a in AXES)
#: (target, numeric) pairs every case cycles through: every target x float32/q15/q31
TARGET_NUMERICS = tuple((t, n) for t in ("host", "mps2-an386", "mps2-an385", "nucleo-f4",
                                         "arduino-uno", "hifive1", "ch32v003")
                        for n in ("float32", "q15", "q31"))
WINDOW_STATS = ("mean", "std", "min", "max", "ptp", "rms", "mad", "zcr", "energy", "last")
SHAPE = ("skew", "kurtosis", "slope", "peaks:0.5", "peaks:1.5", "percentile:90",
         "percentile:10", "percentile:50")
SPECTRAL = ("bandpower:1-4", "bandpower:0-32", "bandpower:octaves:0.5-16", "bandratio:1-3/3-8",
            "domfreq", "centroid", "entropy", "autocorr:3", "cadence:2-9")
MAGNITUDE = ("mag_mean", "mag_std", "mag_max")
PREPROCESS = ("jerk", "highpass:0.9", "highpass:0.5")

#: the issue's bundle: window 64, hop 32, these six features in this order
ISSUE_FEATURES = ("leg_acc.mag_mean", "leg_horiz_fwd.mean", "ankle_vert.min",
                  "leg_horiz_lateral.ptp", "ankle_horiz_lateral.rms", "leg_horiz_fwd.last")
ISSUE_TOML_BLOCKS = (
    {"channels": list(CHANNELS), "extractors": ["mean", "min", "ptp", "rms", "last"]},
    {"group": "leg_acc", "channels": [f"leg_{a}" for a in AXES], "extractors": ["mag_mean"]},
)
#: (seed, target, numeric) of cases that failed before the fixes of issue 28 (the first of
#: each kind in seeds 0..199 of the 5-target cycle, where 87 of 200 failed): replayed always
REGRESSIONS = (
    (0, "host", "float32"),         # clang: unused function 'g0_mla' (70 of the 87)
    (1, "host", "q15"),             # gcc: 'g1_x' defined but not used (Q15 series, fixed kinds)
    (7, "mps2-an385", "q15"),       # gcc: unused variable 'row' (a pass over cached magnitudes)
    (12, "arduino-uno", "float32"),  # avr-ld: raw "'.bss' is not within region 'data'"
    (70, "nucleo-f4", "q15"),       # gcc: 'pmax2' undeclared (M4 packed pass, odd channels)
    (179, "arduino-uno", "q31"),    # clang: suspicious concatenation of string literals
    (169, "mps2-an386", "q15"),     # gcc: 'pmin2' undeclared, unused 'q4' (the issue's failure)
    (14, "arduino-uno", "q31"),     # simavr: scores off the reference (32-bit double): refused
)


@dataclass(frozen=True)
class Case:
    """One generated case: the sensors.toml text, the features to select (in order), the
    weight seed, and where it is built."""

    seed: int
    toml: str
    window: int
    hop: int
    features: tuple
    target: str
    numeric: str
    channels: tuple = field(default=CHANNELS)
    kernel: str = "auto"          # the model kernel: auto, loop or unrolled

    @property
    def name(self) -> str:
        return f"g{self.seed}"


def stream(rng, n: int, label: float) -> np.ndarray:
    """n x 9 accelerometer samples in mg: gravity on the vertical axes, a gait at a
    label-dependent cadence with harmonics, noise, and a few spikes (outliers)."""
    t = np.arange(n) / RATE_HZ
    out = np.empty((n, len(CHANNELS)))
    cadence = 0.8 + 0.4 * label
    for j, name in enumerate(CHANNELS):
        gain = rng.uniform(50.0, 900.0)
        base = 1000.0 if name.endswith("vert") else rng.uniform(-200.0, 200.0)
        phase = rng.uniform(0, 2 * np.pi)
        x = (base + gain * np.sin(2 * np.pi * cadence * t + phase)
             + 0.3 * gain * np.sin(2 * np.pi * 3.1 * cadence * t)
             + rng.normal(0.0, 0.05 * gain + 5.0, n))
        spikes = rng.random(n) < 0.01
        x[spikes] += rng.normal(0.0, 3.0 * gain, spikes.sum())
        out[:, j] = np.round(x)
    return out


def write_recordings(folder: Path, seed: int, n_recordings: int = 6, n: int = 420) -> Path:
    """A recordings folder (NPZ streams + index.csv with the labels :data:`TARGETS` per
    recording: ``speed`` drives the gait, the others are noisy functions of it)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    rows = ["file," + ",".join(TARGETS)]
    for r in range(n_recordings):
        label = float(r % 3) + rng.uniform(0.0, 0.5)
        data = stream(rng, n, label)
        cols = {"time": np.arange(n) / RATE_HZ, **{c: data[:, j] for j, c in enumerate(CHANNELS)}}
        np.savez(folder / f"r{r}.npz", **cols)
        others = [2.0 * label + rng.normal(), 10.0 - label + rng.normal(),
                  0.5 * label + rng.uniform(0.0, 2.0)]
        rows.append(f"r{r}.npz," + ",".join(f"{v:.6f}" for v in [label, *others]))
    (folder / "index.csv").write_text("\n".join(rows) + "\n")
    return folder


def _toml_value(v) -> str:
    return json.dumps(v)


def sensors_toml(channels, window: int, hop: int, blocks, targets=("speed",)) -> str:
    """A sensors.toml: one sensor per body location with channels among ``channels``."""
    lines = ['task = "regression"', f"targets = {_toml_value(list(targets))}", "", "[window]",
             f"length = {window}", f"hop = {hop}", 'on_missing = "skip"', ""]
    for s in SENSORS:
        chans = [c for c in channels if c.startswith(s + "_")]
        if chans:
            lines += ["[[sensors]]", f'name = "{s}"', f"channels = {_toml_value(chans)}",
                      "unit_price = 1.0", "energy_per_reading_j = 1e-6",
                      f"sample_rate_hz = {RATE_HZ}", ""]
    for block in blocks:
        lines.append("[[features]]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in block.items()]
        lines.append("")
    return "\n".join(lines)


def _pick(rng, pool, lo, hi):
    if not pool:
        return []
    n = int(rng.integers(lo, min(hi, len(pool)) + 1))
    return [pool[i] for i in sorted(rng.choice(len(pool), n, replace=False))]


def _fits(tokens, window: int, pre: str = "") -> list:
    """The extractor tokens whose shortest window (after ``pre``) is at most ``window``."""
    from sensorbudget.trainer.sensing.specs import expand_family, parse_spec

    extra = 1 if pre == "jerk" else 0
    return [t for t in tokens
            if all(parse_spec(e).min_window + extra <= window for e in expand_family(t))]


def _blocks(rng, channels, window: int) -> list:
    """Random [[features]] blocks: window statistics, shape, spectral, preprocessing,
    magnitude groups of 3-axis sensors and a correlation."""
    blocks = [{"channels": _pick(rng, channels, 1, 4),
               "extractors": _pick(rng, _fits(WINDOW_STATS, window), 1, 6)}]
    if window >= 4 and rng.random() < 0.6:
        block = {"channels": _pick(rng, channels, 1, 3),
                 "extractors": _pick(rng, _fits(SHAPE + SPECTRAL, window), 1, 6)}
        if rng.random() < 0.3:
            block["spectrum_window"] = "rect"
        blocks.append(block)
    if window >= 5 and rng.random() < 0.4:
        pre = str(rng.choice(PREPROCESS))
        blocks.append({"channels": _pick(rng, channels, 1, 2), "preprocess": pre,
                       "extractors": _pick(rng, _fits(WINDOW_STATS + SHAPE + SPECTRAL[:3],
                                                      window, pre), 1, 5)})
    for s in SENSORS:
        axes = [c for c in channels if c.startswith(s + "_")]
        if len(axes) >= 2 and rng.random() < 0.5:
            blocks.append({"group": f"{s}_acc", "channels": axes,
                           "extractors": _pick(rng, MAGNITUDE, 1, 3)})
    if len(channels) >= 2 and window >= 2 and rng.random() < 0.3:
        blocks.append({"group": "pair", "channels": _pick(rng, channels, 2, 2),
                       "extractors": ["corr"]})
    return [b for b in blocks if b["extractors"]]


def _window(rng) -> tuple:
    """Window (odd, even, powers of two and not) and hop (below, equal to, above it)."""
    window = int(rng.choice([1, 2, 3, 5, 7, 8, 12, 16, 17, 31, 32, 33, 48, 63, 64, 100, 128]))
    hop = int(rng.choice([max(1, window // 4), max(1, window // 2), window, window + 1,
                          window + 8]))
    return window, hop


def make_case(seed: int, target_numeric=None, *, features=None) -> Case:
    """The case of ``seed``: channels, windows, blocks and the target from one generator.
    The selected features are drawn by :func:`case_bundle` (they need the feature names)."""
    rng = np.random.default_rng(seed)
    n_ch = int(rng.integers(1, 10))
    picked = set(rng.choice(len(CHANNELS), n_ch, replace=False).tolist())
    channels = tuple(c for i, c in enumerate(CHANNELS) if i in picked)
    window, hop = _window(rng)
    blocks = _blocks(rng, list(channels), window)
    targets = _pick(rng, TARGETS, 1, 4)
    kernel = str(rng.choice(KERNELS))
    target, numeric = target_numeric or TARGET_NUMERICS[seed % len(TARGET_NUMERICS)]
    return Case(seed, sensors_toml(channels, window, hop, blocks, targets), window, hop,
                tuple(features or ()), target, numeric, channels, kernel)


def issue_case(target="mps2-an386", numeric="q15") -> Case:
    """The issue's 6-feature bundle on all nine channels (window 64, hop 32)."""
    return Case(28, sensors_toml(CHANNELS, 64, 32, ISSUE_TOML_BLOCKS), 64, 32, ISSUE_FEATURES,
                target, numeric)


def feature_set(case: Case, recordings: Path, work: Path):
    from sensorbudget.trainer.sensing.feature_set import load_feature_set

    work.mkdir(parents=True, exist_ok=True)
    path = work / f"{case.name}.sensors.toml"
    path.write_text(case.toml)
    return load_feature_set(recordings, path)


def case_bundle(case: Case, fs, out: Path):
    """The bundle of ``case`` on the feature set ``fs``: its features (or 1-12 drawn ones) fitted
    by greedy RLS and given random weights; returns (bundle, features)."""
    from sensorbudget.trainer import GreedyRLS
    from sensorbudget.trainer.bundle.model import bundle_contents, load_bundle, save_bundle

    rng = np.random.default_rng(case.seed + 1_000_003)
    names = list(fs.feature_names)
    X = np.asarray(fs.X, dtype=np.float64)
    finite = [i for i in range(len(names)) if np.isfinite(X[:, i]).all()]
    if case.features:
        chosen = [names.index(f) for f in case.features]
    else:
        k = int(rng.integers(1, min(12, len(finite)) + 1))
        chosen = [finite[i] for i in rng.choice(len(finite), k, replace=False)]
    extractors, sensors, structure = fs.bundle_structure()
    picked = [names[i] for i in chosen]
    y = np.asarray(fs.Y, dtype=np.float64)
    est = GreedyRLS(budget=len(chosen), lam=1.0).fit(X[:, chosen], y)
    n_t = 1 if y.ndim == 1 else y.shape[1]
    scale = np.abs(y).max() / np.maximum(np.abs(X[:, chosen]).max(axis=0), 1e-6) / len(chosen)
    W = rng.normal(0.0, 1.0, (len(chosen), n_t)) * scale[est.selected_][:, None]
    est.coef_ = W if np.ndim(est.coef_) == 2 else W[:, 0]
    est.intercept_ = np.asarray(rng.normal(0.0, 1.0, np.shape(est.intercept_)))
    meta, arrays = bundle_contents(
        est, X[:, chosen], picked, list(fs.target_names), task="regression",
        extractors=[e for e in extractors if e["features"][0] in picked], sensors=sensors,
        extra=structure)
    save_bundle(out, meta, arrays)
    return load_bundle(out), [picked[i] for i in est.selected_]
