"""What a firmware computes, read off a bundle: channels, extractors, model inputs, scaling.

:func:`make_plan` checks that the bundle can become firmware and fixes every choice the
generated C and the Python reference (:mod:`.reference`) share. Two kinds of bundle:

- trained from recordings (``input_kind`` "samples"): every required extractor carries
  ``params`` with its ``kind`` and ``channels``, with one window and hop. Channels are those of
  the required extractors, in the order of the bundle's sensors and their channels (channels
  no sensor lists follow in order of first use), as ``device_sim`` assumes;
- trained on a plain feature table (``input_kind`` "features": no required extractor names a
  kind): the device's input is the feature vector itself. Each selected feature is a channel
  (selection order) read by a ``last`` extractor over a window of 1 sample, hop 1, so every
  pushed "sample" (one feature vector) gives one prediction, through the same generated code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from sensorbudget.export.cgen import NUMERICS
from sensorbudget.trainer.sensing.extractors import KINDS
from sensorbudget.trainer.sensing.specs import Spec

from .errors import FirmwareGenError
from .fft_c import check_fft

NUMERIC_CODES = {"float32": 0, "q15": 1, "q31": 2}
FORMAT_VERSION = 1        # of the generated sources; main.c checks every part against it
PROTOCOL_VERSION = 2           # the framed link of PROTOCOL.md (device_sim.protocol.VERSION)
MAX_WINDOW = 65535        # HELLO carries window and hop as u16
MAX_FIXED_WINDOW = 32768  # extract_q15's limit
#: kinds computed on a linear copy of the window (shape, spectral, autocorrelation: series_c)
SERIES_KINDS = ("skew", "kurtosis", "slope", "peaks", "percentile", "bandpower", "bandratio",
                "domfreq", "centroid", "entropy", "autocorr", "cadence")


@dataclass(frozen=True)
class ExtractorPlan:
    """One required extractor: its kind, channel indices and the model inputs it feeds."""

    name: str
    kind: str
    channels: tuple
    slots: tuple
    fixed: bool           # computed with the integer (Q15) definition
    spec: Spec | None = None   # argument, preprocessing, spectrum window (None: the bare kind)

    @property
    def per_channel(self) -> bool:
        return KINDS[self.kind].per_channel

    @property
    def full_spec(self) -> Spec:
        """The extractor's :class:`~sensorbudget.trainer.sensing.specs.Spec` (the bare kind by default)."""
        return self.spec if self.spec is not None else Spec(self.kind)

    @property
    def on_series(self) -> bool:
        """Computed on a linear copy of the (preprocessed) window (:mod:`.series_c`), not by
        the window pass: the shape and spectral kinds, and any kind after preprocessing."""
        return bool(self.full_spec.pre) or self.kind in SERIES_KINDS


class ModelFacts:
    """What a plan (single- or multi-rate) derives from its ``features``, ``targets``,
    ``numeric`` and ``bundle_sha256``."""

    @property
    def k(self) -> int:
        return len(self.features)

    @property
    def t(self) -> int:
        return len(self.targets)

    @property
    def fixed(self) -> bool:
        return self.numeric != "float32"

    @property
    def bundle_id(self) -> int:
        """First 32 bits of the bundle hash: every generated part checks it at compile time."""
        return int(self.bundle_sha256[:8], 16)


@dataclass(frozen=True)
class FirmwarePlan(ModelFacts):
    """Everything the generated firmware and its Python reference agree on."""

    name: str
    numeric: str
    channels: tuple
    full_scale: tuple | None   # per channel (powers of two) for q15/q31, else None
    window: int
    hop: int
    sample_rate_hz: float
    extractors: tuple
    features: tuple            # model inputs (selected features, selection order)
    targets: tuple
    task: str
    bundle_sha256: str
    input_kind: str = "samples"    # "samples" (recordings) or "features" (a feature table)
    fft: str = "float32"   # the spectra of q15/q31 plans: float32 or the Q15 FFT (fft_c.FFTS)

    @property
    def kinds(self) -> tuple:
        return tuple(sorted({e.kind for e in self.extractors}))


def is_feature_table(meta: dict) -> bool:
    """No required extractor of the bundle names an extractor kind: it was trained on a plain
    feature table (CSV, ARFF, NPZ without recordings), so the device input is the features."""
    by_name = {e["name"]: e for e in meta.get("extractors", []) if isinstance(e, dict)}
    return bool(meta["required_extractors"]) and not any(
        ((by_name.get(n) or {}).get("params") or {}).get("kind")
        for n in meta["required_extractors"])


def _feature_table_plan(bundle, *, name: str, numeric: str, full_scale) -> FirmwarePlan:
    """The plan of a feature-table bundle: channel i = selected feature i, a ``last``
    extractor per channel, window = hop = 1 (one prediction per feature vector)."""
    meta, arrays = bundle.meta, bundle.arrays
    features = tuple(str(f) for f in meta["selected"])
    fixed = numeric != "float32"
    extractors = tuple(ExtractorPlan(f, "last", (i,), (i,), fixed) for i, f in enumerate(features))
    scales = None
    if fixed:
        bounds = {f: max(abs(float(arrays["x_min"][i])), abs(float(arrays["x_max"][i])))
                  for i, f in enumerate(features)}
        scales = resolve_full_scale(features, full_scale, bounds)
    return FirmwarePlan(
        name=name, numeric=numeric, channels=features, full_scale=scales, window=1, hop=1,
        sample_rate_hz=float(meta.get("sample_rate_hz", 0.0)), extractors=extractors,
        features=features, targets=tuple(str(t) for t in (meta.get("classes") or meta["targets"])),
        task=meta["task"], bundle_sha256=bundle.bundle_sha256(), input_kind="features")


def _extractor_entries(meta: dict) -> list:
    by_name = {e["name"]: e for e in meta.get("extractors", []) if isinstance(e, dict)}
    entries = []
    for name in meta["required_extractors"]:
        entry = by_name.get(name)
        params = (entry or {}).get("params") or {}
        if params.get("kind") not in KINDS or not params.get("channels"):
            raise FirmwareGenError(
                f"required extractor {name!r} has no extractor kind and channels in the bundle "
                f"(params={params!r}) while others do; firmware needs every required extractor "
                f"described (a bundle trained from recordings with a sensors.toml) or none (a "
                f"plain feature table)")
        if len(entry.get("features", [])) != 1:
            raise FirmwareGenError(f"extractor {name!r} yields {len(entry.get('features', []))} "
                                   f"features; the firmware supports one feature per extractor")
        kind = KINDS[params["kind"]]
        if not kind.firmware or (params.get("preprocess") and not kind.per_channel):
            what = f"{params['kind']!r}" + (" with preprocessing" if kind.firmware else "")
            raise FirmwareGenError(f"extractor {name!r} ({what}) has no firmware implementation "
                                   f"yet; firmware supports the extractors "
                                   f"{', '.join(k for k, e in KINDS.items() if e.firmware)}, "
                                   f"preprocessing on the per-channel ones")
        entries.append(entry)
    return entries


def spec_of(params: dict) -> Spec:
    """The :class:`~sensorbudget.trainer.sensing.specs.Spec` of a bundle extractor's ``params``."""
    arg = params.get("arg")
    return Spec(params["kind"], tuple(arg) if isinstance(arg, list) else arg,
                params.get("preprocess", ""), params.get("preprocess_arg"),
                rect=params.get("spectrum_window") == "rect")


def _window_hop(meta: dict, entries: list) -> tuple:
    pairs = {(int(e["params"]["window"]), int(e["params"]["hop"])) for e in entries
             if "window" in e["params"] and "hop" in e["params"]}
    if "window" in meta and "hop" in meta:
        pairs.add((int(meta["window"]), int(meta["hop"])))
    if len(pairs) != 1:
        raise FirmwareGenError(f"the bundle's extractors need one window and hop; found "
                               f"{sorted(pairs) or 'none'}")
    window, hop = pairs.pop()
    if not (1 <= window <= MAX_WINDOW and 1 <= hop <= MAX_WINDOW):
        raise FirmwareGenError(f"window={window} and hop={hop} samples must be in "
                               f"1..{MAX_WINDOW}")
    return window, hop


def device_channels(meta: dict, entries: list) -> list:
    """Channels of the extractors, in sensor declaration order, then in order of first use."""
    used = []
    for e in entries:
        for c in e["params"]["channels"]:
            if c not in used:
                used.append(c)
    order = [c for s in meta.get("sensors", []) if isinstance(s, dict)
             for c in s.get("channels", [])]
    known = [c for c in order if c in used]
    return known + [c for c in used if c not in known]


def full_scale_used(value: float) -> float:
    """The full scale the firmware uses for a requested positive ``value``: the value itself
    when it is a power of two, else the next power of two above it (Q15 samples are scaled by
    shifts), e.g. 8000 -> 8192, 64 -> 64."""
    mant, exp = math.frexp(value)
    return value if mant == 0.5 else math.ldexp(1.0, exp)


def power_of_two_above(value: float) -> float:
    """Smallest power of two strictly above ``value`` (> 0), e.g. 5 -> 8, 8 -> 16, 0.3 -> 0.5."""
    _, exp = math.frexp(value)
    return math.ldexp(1.0, exp)


def _channel_bounds(meta: dict, arrays: dict, entries: list) -> dict:
    """Per channel, the largest |value| seen in training: the recordings' max |sample| of every
    channel the extractors read (``channel_bounds``, :mod:`sensorbudget.trainer.sensing.channel_bounds`),
    and the largest |value| of a selected min/max/last/mean feature."""
    bounds = {str(c): float(v) for c, v in (meta.get("channel_bounds") or {}).items()}
    for i, feature in enumerate(meta["selected"]):
        entry = next((e for e in entries if feature in e["features"]), None)
        if entry is None or entry["params"]["kind"] not in ("min", "max", "last", "mean"):
            continue
        (channel,) = entry["params"]["channels"]
        bound = max(abs(float(arrays["x_min"][i])), abs(float(arrays["x_max"][i])))
        bounds[channel] = max(bounds.get(channel, 0.0), bound)
    return bounds


def resolve_full_scale(channels, given, bounds) -> tuple:
    """Full scale of each channel: ``given[channel]`` or ``given["*"]``, else the power of two
    above its training bound (:func:`_channel_bounds`); rounded up to a power of two."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(channels) - {"*"})
    if unknown:
        raise FirmwareGenError(f"--full-scale names channel {unknown[0]!r}, which the firmware "
                               f"does not read (channels: {', '.join(channels)})")
    out = []
    for c in channels:
        value = given.get(c, given.get("*"))
        if value is None and c in bounds:
            value = power_of_two_above(bounds[c]) if bounds[c] > 0 else 1.0
        if value is None:
            raise FirmwareGenError(
                f"fixed-point firmware needs the full scale of channel {c!r} (samples are sent "
                f"as Q15 = sample * 32768 / full scale) and the bundle does not bound it; pass "
                f"--full-scale {c}=VALUE (or --full-scale VALUE for every channel)")
        value = float(value)
        if not (math.isfinite(value) and value > 0):
            raise FirmwareGenError(f"full scale of channel {c!r} is {value!r}; it must be a "
                                   f"positive number")
        out.append(full_scale_used(value))
    return tuple(out)


def make_plan(bundle, *, name: str, numeric: str, full_scale=None,
              fft: str = "float32") -> FirmwarePlan:
    """The :class:`FirmwarePlan` of ``bundle`` for ``numeric`` (raises FirmwareGenError).

    ``full_scale`` ({channel or "*": value}) applies to q15/q31 only. A bundle trained on a
    feature table gets the plan of :func:`_feature_table_plan` (its channels are the features).
    ``fft="q15"`` (q15/q31 only): the spectra of the raw windows come from the Q15 FFT
    (:func:`.fft_c.check_fft`).
    """
    if numeric not in NUMERICS:
        raise FirmwareGenError(f"numeric={numeric!r} is not one of {NUMERICS}")
    meta, arrays = bundle.meta, bundle.arrays
    if meta.get("multi_rate"):
        raise FirmwareGenError("the bundle's sensors run at their own rates: its plan is a "
                               "MultiRatePlan (firmware_gen.multirate.make_multirate_plan); "
                               "make_plan is single-rate")
    if is_feature_table(meta):
        plan = _feature_table_plan(bundle, name=name, numeric=numeric, full_scale=full_scale)
        return check_fft(replace(plan, fft=fft))
    entries = _extractor_entries(meta)
    window, hop = _window_hop(meta, entries)
    channels = device_channels(meta, entries)
    index = {c: i for i, c in enumerate(channels)}
    slot_of = {f: i for i, f in enumerate(meta["selected"])}
    fixed_numeric = numeric != "float32"
    plans = []
    for e in entries:
        kind, spec = e["params"]["kind"], spec_of(e["params"])
        if window < spec.min_window:
            raise FirmwareGenError(f"extractor {e['name']!r} ({spec.text}) needs a window of at "
                                   f"least {spec.min_window} samples (window={window})")
        fixed = fixed_numeric and KINDS[kind].fixed_point and not spec.pre
        if fixed and window > MAX_FIXED_WINDOW:
            raise FirmwareGenError(f"extractor {e['name']!r}: the fixed-point {kind} needs "
                                   f"window <= {MAX_FIXED_WINDOW} (window={window})")
        if KINDS[kind].spectral and window > MAX_FIXED_WINDOW:
            raise FirmwareGenError(f"extractor {e['name']!r}: the FFT of {kind} needs "
                                   f"window <= {MAX_FIXED_WINDOW} (window={window}; 16-bit "
                                   f"indices on AVR)")
        if KINDS[kind].spectral and not float(meta.get("sample_rate_hz", 0.0)) > 0:
            raise FirmwareGenError(f"extractor {e['name']!r} ({kind}) needs the bundle's "
                                   f"sample_rate_hz")
        slots = tuple(slot_of[f] for f in e["features"] if f in slot_of)
        plans.append(ExtractorPlan(e["name"], kind, tuple(index[c] for c in e["params"]["channels"]),
                                   slots, fixed, spec))
    fed = sorted(s for p in plans for s in p.slots)
    if fed != list(range(len(meta["selected"]))):
        missing = [f for i, f in enumerate(meta["selected"]) if i not in fed]
        raise FirmwareGenError(f"selected feature {missing[0]!r} comes from no required "
                               f"extractor of the bundle")
    scales = None
    if fixed_numeric:
        scales = resolve_full_scale(channels, full_scale, _channel_bounds(meta, arrays, entries))
    plan = FirmwarePlan(
        name=name, numeric=numeric, channels=tuple(channels), full_scale=scales,
        window=window, hop=hop, sample_rate_hz=float(meta.get("sample_rate_hz", 0.0)),
        extractors=tuple(p for p in plans if p.slots), features=tuple(meta["selected"]),
        targets=tuple(str(t) for t in (meta.get("classes") or meta["targets"])),
        task=meta["task"], bundle_sha256=bundle.bundle_sha256(), fft=fft)
    return check_fft(plan)
