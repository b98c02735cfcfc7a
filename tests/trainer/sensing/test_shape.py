"""Shape extractors and preprocessing (issue 18) against a literal scalar float32 transcription of
their docstrings (bit for bit) and against independent float64 formulas (scipy, numpy)."""

import math

import numpy as np
import pytest
from scipy import signal, stats

from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.sensing.extractors import extract, extract_q15
from sensorbudget.trainer.sensing.specs import parse_spec

from .test_extractors import _mean, _std  # the scalar references of mean and std

f32 = np.float32


def _central(x):
    m = _mean(x)
    s2 = s3 = s4 = f32(0)
    for v in x:
        d = f32(v - m)
        d2 = f32(d * d)
        s2, s3, s4 = f32(s2 + d2), f32(s3 + f32(d2 * d)), f32(s4 + f32(d2 * d2))
    return s2, s3, s4


def _skew(x):
    s2, s3, _ = _central(x)
    n = f32(len(x))
    v = f32(s2 / n)
    return f32(f32(s3 / n) / f32(v * np.sqrt(v))) if v > 0 else f32(0)


def _kurtosis(x):
    s2, _, s4 = _central(x)
    n = f32(len(x))
    v = f32(s2 / n)
    return f32(f32(f32(s4 / n) / f32(v * v)) - f32(3)) if v > 0 else f32(0)


def _slope(x):
    c = f32(f32(f32(len(x)) - f32(1)) / f32(2))
    s = q = f32(0)
    for i, v in enumerate(x):
        t = f32(f32(i) - c)
        s = f32(s + f32(t * f32(v - x[0])))
        q = f32(q + f32(t * t))
    return f32(s / q) if q > 0 else f32(0)


def _peaks(x, k):
    thr = f32(_mean(x) + f32(f32(k) * _std(x)))
    return f32(sum(1 for i in range(1, len(x) - 1)
                   if x[i] > thr and x[i] > x[i - 1] and x[i] >= x[i + 1]))


def _percentile(x, p):
    r = max(1, math.ceil(p * len(x) / 100))
    return sorted(x)[r - 1] + f32(0)       # a zero as +0 (the C selection's -0 / +0 tie)


def _highpass(x, a):
    y = [f32(0)]
    for i in range(1, len(x)):
        y.append(f32(f32(a) * f32(y[-1] + f32(x[i] - x[i - 1]))))
    return y


SCALAR = {"skew": _skew, "kurtosis": _kurtosis, "slope": _slope,
          "peaks:1.5": lambda x: _peaks(x, 1.5), "peaks:0": lambda x: _peaks(x, 0),
          "percentile:90": lambda x: _percentile(x, 90),
          "percentile:50": lambda x: _percentile(x, 50),
          "percentile:100": lambda x: _percentile(x, 100),
          "jerk>rms": lambda x: np.sqrt(f32(sum_sq([f32(b - a) for a, b in zip(x, x[1:])])
                                            / f32(len(x) - 1))),
          "highpass:0.9>std": lambda x: _std(_highpass(x, 0.9))}


def sum_sq(x):
    s = f32(0)
    for v in x:
        s = f32(s + f32(v * v))
    return s


def _windows(rng, length, n, offset=0.0, scale=1.0):
    w = (offset + scale * rng.standard_normal((length, n))).astype(f32)
    w[:, 0] = f32(offset)                      # constant window
    w[:, 1] = np.round(w[:, 1])                # ties and plateaus
    return w


@pytest.mark.parametrize("spec", sorted(SCALAR))
@pytest.mark.parametrize("length", [3, 4, 7, 20, 64])
@pytest.mark.parametrize("offset,scale", [(0.0, 1.0), (1000.0, 30.0), (-5.0, 1e-3)])
def test_bit_exact_with_scalar_transcription(spec, length, offset, scale):
    rng = np.random.default_rng(length)
    w = _windows(rng, length, 12, offset, scale)
    got = parse_spec(spec).compute(w)
    assert got.dtype == f32 and got.shape == (12,)
    want = np.array([SCALAR[spec](list(w[:, j])) for j in range(12)], dtype=f32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_match_float64_formulas():
    rng = np.random.default_rng(5)
    w = (2.0 + rng.standard_normal((50, 30)) ** 3).astype(f32)
    x = w.astype(np.float64)
    t = np.arange(50.0)
    want = {"skew": stats.skew(x, axis=0), "kurtosis": stats.kurtosis(x, axis=0),
            "slope": np.polyfit(t, x, 1)[0],
            "percentile:90": np.percentile(x, 90, axis=0, method="inverted_cdf"),
            "percentile:37.5": np.percentile(x, 37.5, axis=0, method="inverted_cdf"),
            "jerk>std": np.std(np.diff(x, axis=0), axis=0),
            "highpass:0.8>rms": np.sqrt(np.mean(signal.lfilter([0.8, -0.8], [1, -0.8],
                                                               x - x[0], axis=0) ** 2, axis=0))}
    for spec, ref in want.items():
        got = parse_spec(spec).compute(w).astype(np.float64)
        np.testing.assert_allclose(got, ref, rtol=2e-4, atol=2e-4, err_msg=spec)
    # peaks: strict local maxima above mean + k std, counted in float64 by brute force
    got = extract("peaks", w, 1.0)
    thr = x.mean(axis=0) + x.std(axis=0)
    brute = [sum(1 for i in range(1, 49) if x[i, j] > thr[j] and x[i, j] > x[i - 1, j]
                 and x[i, j] >= x[i + 1, j]) for j in range(30)]
    np.testing.assert_array_equal(got, brute)


def test_edges():
    const = np.full((6, 2), 3.0, dtype=f32)
    for spec in ("skew", "kurtosis", "slope", "peaks:0"):
        assert (parse_spec(spec).compute(const) == 0).all()
    ramp = (2.5 * np.arange(9, dtype=f32) + 7)[:, None]
    assert extract("slope", ramp)[0] == f32(2.5)
    assert extract("slope", ramp[:1])[0] == 0                      # one sample: no slope
    assert (parse_spec("jerk>mean").compute(ramp) == f32(2.5)).all()


def test_percentile_q15_is_the_same_order_statistic():
    rng = np.random.default_rng(2)
    q = rng.integers(-32768, 32768, size=(33, 20)).astype(np.int16)
    for p in (1, 50, 90, 100):
        np.testing.assert_array_equal(extract_q15("percentile", q, arg=p),
                                      np.percentile(q, p, axis=0, method="inverted_cdf"))


@pytest.mark.parametrize("text,message", [
    ("percentile", r"'percentile' takes an argument \(percentile:P\)"),
    ("percentile:0", r"p='0' must be a number in \(0, 100\]"),
    ("percentile:abc", r"p='abc' must be a number"),
    ("peaks:-1", r"k='-1' must be a number in \[0, 100\]"),
    ("rms:2", r"'rms' takes no argument"),
    ("median", r"unknown extractor 'median'"),
    ("jerk:1>rms", r"'jerk' takes no argument"),
    ("highpass:1>rms", r"alpha='1' must be a number in \(0, 1\)"),
    ("lowpass:0.5>rms", r"unknown preprocessing 'lowpass'"),
])
def test_spec_errors_name_the_value_and_the_limit(text, message):
    with pytest.raises(DataError, match=message):
        parse_spec(text)


def test_spec_text_and_feature_names_round_trip():
    for text, suffix in (("percentile:90", "percentile_90"), ("peaks:1.5", "peaks_1_5"),
                         ("jerk>rms", "jerk.rms"), ("highpass:0.95>std", "highpass_0_95.std")):
        spec = parse_spec(text)
        assert spec.text == text and spec.suffix == suffix and parse_spec(spec.text) == spec
    assert parse_spec("jerk>mad").min_window == 3
