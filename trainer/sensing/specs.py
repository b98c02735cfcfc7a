"""Extractor specs: an extractor kind with its argument and an optional preprocessing step.

A spec is written ``[PRE[:A]>]KIND[:ARG][@rect]``, e.g. ``rms``, ``percentile:90``,
``jerk>rms``, ``highpass:0.9>std``, ``bandpower:3-8``, ``bandratio:3-8/0.5-3@rect``,
``autocorr:12``, ``cadence:5-40``. ``sensors.toml`` lists ``KIND[:ARG]`` in a block's
``extractors``, ``preprocess = "PRE[:A]"`` and ``spectrum_window = "hann" | "rect"`` (spectral
kinds; default hann) for the whole block; the feature table keeps the spec in ``feature_kinds``
and the bundle in the extractor's ``params`` (``kind``, ``arg``, ``preprocess``,
``preprocess_arg``, ``spectrum_window``).

Families declare many bands in one token: ``bandpower:octaves:0.5-16`` (bands 0.5-1, 1-2, ..,
8-16 Hz) and ``bandpower:equal:8:0-32`` (8 equal bands over 0-32 Hz); the same for
``bandratio`` gives the ratio of each band to the next.

Preprocessing (:mod:`sensorbudget.trainer.sensing.shape`): ``jerk`` (first difference, N-1 values) and
``highpass:ALPHA`` (first-order IIR restarted in each window, 0 < ALPHA < 1), applied to each
channel's window before the extractor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from . import shape
from .extractors import ARGS, KINDS, extract

#: preprocessing step -> (function, argument name or "", samples it removes)
PREPROCESS = {"jerk": (shape.jerk, "", 1), "highpass": (shape.highpass, "alpha", 0)}
_PRE_ARGS = {"alpha": (0.0, 1.0, False, False)}


def _number(text: str, name: str, limits, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    lo, hi, lo_ok, hi_ok = limits
    inside = (value > lo or (lo_ok and value == lo)) and (value < hi or (hi_ok and value == hi))
    if not math.isfinite(value) or not inside:
        raise DataError(f"{where}{name}={text!r} must be a number in {'[' if lo_ok else '('}"
                        f"{lo:g}, {hi:g}{']' if hi_ok else ')'}")
    return value


def _num(value: float) -> str:
    """The shortest text that reads back as ``value`` (90.0 -> 90, 0.95 -> 0.95)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _tag(value: float) -> str:
    """A number as it appears in a feature name: 90 -> 90, 0.95 -> 0_95, 1e-05 -> 1em05."""
    return _num(value).replace(".", "_").replace("-", "m").replace("+", "")


@dataclass(frozen=True)
class Spec:
    """One parsed spec (see the module docstring)."""

    kind: str
    arg: float | tuple | None = None
    pre: str = ""
    pre_arg: float | None = None
    rect: bool = False           # spectral kinds: rectangular window instead of Hann

    @property
    def text(self) -> str:
        out = self.kind if self.arg is None else f"{self.kind}:{_arg_text(self.arg)}"
        if self.pre:
            pre = self.pre if self.pre_arg is None else f"{self.pre}:{_num(self.pre_arg)}"
            out = f"{pre}>{out}"
        return out + ("@rect" if self.rect else "")

    @property
    def suffix(self) -> str:
        """The feature-name part after the channel or group: ``jerk.rms``, ``percentile_90``,
        ``bandpower_3to8``."""
        out = self.kind if self.arg is None else f"{self.kind}_{_arg_tag(self.arg)}"
        if self.pre:
            pre = self.pre if self.pre_arg is None else f"{self.pre}_{_tag(self.pre_arg)}"
            out = f"{pre}.{out}"
        return out + ("_rect" if self.rect else "")

    @property
    def entry(self):
        return KINDS[self.kind]

    @property
    def min_window(self) -> int:
        """Shortest window the spec needs (preprocessing may take samples; a lag needs more)."""
        need = self.entry.min_window
        if self.kind in ("autocorr", "cadence"):
            need = max(need, int(np.max(self.arg)) + 1)
        return need + (PREPROCESS[self.pre][2] if self.pre else 0)

    def params(self) -> dict:
        """The spec's entries of a bundle extractor's ``params`` (besides ``kind``)."""
        out = {} if self.arg is None else {"arg": list(self.arg) if isinstance(
            self.arg, tuple) else self.arg}
        if self.entry.spectral:
            out["spectrum_window"] = "rect" if self.rect else "hann"
        if self.pre:
            out["preprocess"] = self.pre
            if self.pre_arg is not None:
                out["preprocess_arg"] = self.pre_arg
        return out

    def compute(self, windows, rate=None) -> np.ndarray:
        """Float32 values of every window (``windows`` as :func:`extractors.extract` takes;
        ``rate``: the sample rate in Hz, which spectral kinds need)."""
        if self.pre:
            fn, argname, _ = PREPROCESS[self.pre]
            run = (lambda w: fn(w)) if not argname else (lambda w: fn(w, self.pre_arg))
            windows = (run(np.asarray(windows, dtype=np.float32)) if self.entry.per_channel
                       else [run(np.asarray(w, dtype=np.float32)) for w in windows])
        return extract(self.kind, windows, self.arg, rate=rate,
                       window="rect" if self.rect else "hann")


def transforms_of(kind: str, channels) -> list:
    """The transforms a feature of spec ``kind`` on ``channels`` reads, e.g. ``["ax.jerk"]``
    for ``jerk>rms`` on ``ax``: one per channel and preprocessing step, computed once per window
    however many features read it (the cost model's transform level)."""
    spec = parse_spec(kind)
    pre = "" if not spec.pre else (
        spec.pre if spec.pre_arg is None else f"{spec.pre}_{_tag(spec.pre_arg)}")
    out = [f"{c}.{pre}" for c in channels] if pre else []
    if spec.entry.spectral:
        fft = "fft_rect" if spec.rect else "fft"
        out += [f"{c}.{pre + '.' if pre else ''}{fft}" for c in channels]
    return out


def _split(text: str, known, what: str, where: str) -> tuple:
    name, colon, arg = text.partition(":")
    if name not in known:
        raise DataError(f"{where}unknown {what} {name!r} (known: {', '.join(known)})")
    return name, (arg if colon else None)


def parse_spec(text: str, where: str = "") -> Spec:
    """The :class:`Spec` of ``text``; :class:`DataError` naming the bad part and its limits."""
    if not isinstance(text, str):
        raise DataError(f"{where}extractor {text!r} must be a string")
    body, at, win = text.partition("@")
    pre_text, gt, kind_text = body.rpartition(">")
    kind, arg = _split(kind_text, KINDS, "extractor", where)
    entry = KINDS[kind]
    if at and (win not in ("rect", "hann") or not entry.spectral):
        raise DataError(f"{where}extractor {text!r}: @{win} is a spectrum window (rect or hann) "
                        f"of the spectral extractors only")
    if bool(entry.arg) != (arg is not None):
        need = f"an argument ({kind}:{entry.arg.upper()})" if entry.arg else "no argument"
        raise DataError(f"{where}extractor {kind_text!r}: {kind!r} takes {need}")
    value = None if arg is None else _parse_arg(kind, entry.arg, arg, where)
    pre, pre_value = "", None
    if gt:
        pre, pre_arg = _split(pre_text, PREPROCESS, "preprocessing", where)
        argname = PREPROCESS[pre][1]
        if bool(argname) != (pre_arg is not None):
            need = f"an argument ({pre}:{argname.upper()})" if argname else "no argument"
            raise DataError(f"{where}preprocessing {pre_text!r}: {pre!r} takes {need}")
        if argname:
            pre_value = _number(pre_arg, f"{pre}: {argname}", _PRE_ARGS[argname], where)
    return Spec(kind, value, pre, pre_value, rect=win == "rect")


def _pair(text: str, name: str, cast, where: str) -> tuple:
    lo, dash, hi = text.partition("-")
    try:
        pair = (cast(lo), cast(hi)) if dash else None
    except ValueError:
        pair = None
    if pair is None or not all(math.isfinite(v) and v >= 0 for v in pair) or pair[0] >= pair[1]:
        raise DataError(f"{where}{name}={text!r} must be LOW-HIGH with 0 <= LOW < HIGH")
    return pair


def _parse_arg(kind: str, name: str, text: str, where: str):
    """The argument ``text`` of ``kind`` (its type named ``name``), checked."""
    label = f"{kind}: {name}"
    if name in ARGS:
        return _number(text, label, ARGS[name], where)
    if name == "band":
        return _pair(text, label, float, where)
    if name == "bands":
        one, slash, two = text.partition("/")
        if not slash:
            raise DataError(f"{where}{label}={text!r} must be LOW-HIGH/LOW-HIGH")
        return _pair(one, label, float, where) + _pair(two, label, float, where)
    if name == "lag":
        if not text.isdigit() or int(text) < 1:
            raise DataError(f"{where}{label}={text!r} must be a whole number of samples >= 1")
        return int(text)
    lo, hi = _pair(text, label, int, where)
    if lo < 1:
        raise DataError(f"{where}{label}={text!r} must be LOW-HIGH samples with 1 <= LOW")
    return lo, hi


def _arg_text(arg) -> str:
    if not isinstance(arg, tuple):
        return _num(arg)
    pairs = ["-".join(_num(v) for v in arg[i:i + 2]) for i in range(0, len(arg), 2)]
    return "/".join(pairs)


def _arg_tag(arg) -> str:
    if not isinstance(arg, tuple):
        return _tag(arg)
    pairs = ["to".join(_tag(v) for v in arg[i:i + 2]) for i in range(0, len(arg), 2)]
    return "_over_".join(pairs)


def expand_family(token: str, where: str = "") -> list:
    """``bandpower:octaves:LO-HI`` / ``bandpower:equal:N:LO-HI`` (and the same for
    ``bandratio``: each band over the next) -> the tokens of every band; other tokens as they
    are."""
    kind, _, rest = token.partition(":")
    family, _, spec = rest.partition(":")
    if kind not in ("bandpower", "bandratio") or family not in ("octaves", "equal"):
        return [token]
    if family == "octaves":
        lo, hi = _pair(spec, f"{kind}: octaves", float, where)
        if lo <= 0:
            raise DataError(f"{where}{kind}: octaves={spec!r} must start above 0 Hz")
        edges = [lo]
        while edges[-1] * 2 <= hi * (1 + 1e-12):
            edges.append(edges[-1] * 2)
    else:
        count, _, band = spec.partition(":")
        if not count.isdigit() or not 1 <= int(count) <= 1000:
            raise DataError(f"{where}{kind}: equal={count!r} must be a number of bands in "
                            f"1..1000")
        lo, hi = _pair(band, f"{kind}: equal", float, where)
        edges = [lo + (hi - lo) * i / int(count) for i in range(int(count) + 1)]
    bands = [f"{_num(a)}-{_num(b)}" for a, b in zip(edges, edges[1:])]
    if kind == "bandpower":
        return [f"bandpower:{b}" for b in bands]
    return [f"bandratio:{a}/{b}" for a, b in zip(bands, bands[1:])]


def block_specs(table: dict, where: str) -> list:
    """A ``sensors.toml`` ``[[features]]`` block's extractor specs (``KIND[:ARG]``, with the
    block's ``preprocess``), each once."""
    names = table.get("extractors")
    if not isinstance(names, list) or not names or not all(isinstance(v, str) for v in names):
        raise DataError(f"{where}: extractors must be a non-empty list of strings (got {names!r})")
    pre = table.get("preprocess")
    if pre is not None and (not isinstance(pre, str) or ">" in pre or not pre):
        raise DataError(f"{where}: preprocess={pre!r} must be one step such as \"jerk\" or "
                        f"\"highpass:0.9\"")
    win = table.get("spectrum_window", "hann")
    if win not in ("hann", "rect"):
        raise DataError(f"{where}: spectrum_window={win!r} must be \"hann\" or \"rect\"")
    tokens = [t for name in names for t in expand_family(name, f"{where}: ")]
    specs = [parse_spec(name if pre is None else f"{pre}>{name}", f"{where}: ")
             for name in tokens]
    if win == "rect":
        specs = [Spec(s.kind, s.arg, s.pre, s.pre_arg, rect=s.entry.spectral) for s in specs]
    texts = [s.text for s in specs]
    duplicate = next((n for i, n in enumerate(texts) if n in texts[:i]), None)
    if duplicate is not None:
        raise DataError(f"{where}: extractors lists {duplicate!r} twice")
    return specs
