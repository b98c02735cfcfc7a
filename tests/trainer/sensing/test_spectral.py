"""Spectral and autocorrelation extractors (issue 18): the float32 FFT against a literal scalar
transcription of its documented operation order (bit for bit) and against numpy's float64 rfft;
every extractor against a float64 formula; sensors.toml families and the shared FFT transform."""

import math

import numpy as np
import pytest

from tests.fixtures import ACCEL, sensor_spec
from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.sensing import spectral
from sensorbudget.trainer.sensing.sensors import parse_sensor_spec
from sensorbudget.trainer.sensing.specs import expand_family, parse_spec, transforms_of

f32 = np.float32
RATE = 50.0


def scalar_power(x, hann=True):
    """The module docstring's steps 1-5, one window, scalar float32 operations."""
    n = len(x)
    s = f32(0)
    for v in x:
        s = f32(s + v)
    m = f32(s / f32(n))
    d = [f32(v - m) for v in x]
    if hann:
        h = [f32(0.5 - 0.5 * math.cos(2 * math.pi * i / n)) for i in range(n)]
        d = [f32(a * b) for a, b in zip(d, h)]
    size = spectral.fft_size(n)
    d += [f32(0)] * (size - n)
    h = size // 2                                   # step 4: an H-point complex FFT
    bits = h.bit_length() - 1
    rev = [int(format(i, f"0{bits}b")[::-1], 2) if bits else 0 for i in range(h)]
    re, im = [f32(0)] * h, [f32(0)] * h
    for j in range(h):
        re[rev[j]], im[rev[j]] = d[2 * j], d[2 * j + 1]
    tw = [(f32(math.cos(2 * math.pi * j / size)), f32(-math.sin(2 * math.pi * j / size)))
          for j in range(h)]
    if size >= 4:
        tw[size // 4] = (f32(0), f32(-1))               # exact at M/4 (and 1, 0 at 0)
    length = 2
    while length <= h:
        half = length // 2
        for start in range(0, h, length):
            for k in range(half):
                t = k * size // length
                wr, wi = tw[t]
                i, j = start + k, start + k + half
                if t == 0:
                    tr, ti = re[j], im[j]
                elif 4 * t == size:
                    tr, ti = im[j], f32(-re[j])
                else:
                    tr = f32(f32(wr * re[j]) - f32(wi * im[j]))
                    ti = f32(f32(wr * im[j]) + f32(wi * re[j]))
                re[j], im[j] = f32(re[i] - tr), f32(im[i] - ti)
                re[i], im[i] = f32(re[i] + tr), f32(im[i] + ti)
        length *= 2
    x0, xh = f32(re[0] + im[0]), f32(re[0] - im[0])     # step 5: the split, scaled twice
    out = [f32(x0 * x0)] + [f32(0)] * (h - 1) + [f32(xh * xh)]
    for k in range(1, h // 2 + 1):
        q = h - k
        ar, ai, cr, ci = re[k], im[k], re[q], im[q]
        er, ei, odd_r, odd_i = f32(ar + cr), f32(ai - ci), f32(ai + ci), f32(cr - ar)
        wr, wi = tw[k]
        a = f32(f32(wr * odd_r) - f32(wi * odd_i))
        b = f32(f32(wr * odd_i) + f32(wi * odd_r))
        xr, xi = f32(er + a), f32(ei + b)
        out[k] = f32(f32(0.25) * f32(f32(xr * xr) + f32(xi * xi)))
        if q != k:
            xr, xi = f32(er - a), f32(b - ei)
            out[q] = f32(f32(0.25) * f32(f32(xr * xr) + f32(xi * xi)))
    return out


def _windows(n, count=6, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None] / RATE
    w = (3.0 + np.sin(2 * np.pi * rng.uniform(1, 20, count) * t)
         + 0.3 * rng.standard_normal((n, count))).astype(f32)
    w[:, 0] = f32(2.5)                                    # constant: a zero spectrum
    return w


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 16, 50, 64, 100, 256])
@pytest.mark.parametrize("hann", [True, False])
def test_fft_bit_exact_with_scalar_transcription(n, hann):
    w = _windows(n)
    got = spectral.power_spectrum(w, "hann" if hann else "rect")
    want = np.array([scalar_power(list(w[:, j]), hann) for j in range(w.shape[1])], f32).T
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("n", [4, 16, 50, 64, 200, 512])
def test_fft_matches_numpy_rfft(n):
    w = _windows(n, seed=n)
    x = w.astype(np.float64)
    d = (x - x.mean(axis=0)) * spectral.hann(n).astype(np.float64)[:, None]
    want = np.abs(np.fft.rfft(d, n=spectral.fft_size(n), axis=0)) ** 2
    np.testing.assert_allclose(spectral.power_spectrum(w), want, rtol=1e-4,
                               atol=1e-5 * want.max())


def test_extractors_match_float64_formulas():
    n = 64
    w = _windows(n, count=8, seed=3)
    x = w.astype(np.float64)
    d = (x - x.mean(axis=0)) * spectral.hann(n).astype(np.float64)[:, None]
    P = np.abs(np.fft.rfft(d, n=64, axis=0)) ** 2
    f = np.arange(33) * RATE / 64
    band = (f >= 3) & (f < 8) & (np.arange(33) > 0)
    low = (f >= 0.5) & (f < 3) & (np.arange(33) > 0)
    tot = P[1:].sum(axis=0)
    pn = P[1:] / np.where(tot > 0, tot, 1)
    ent = -np.where(pn > 0, pn * np.log2(np.where(pn > 0, pn, 1)), 0).sum(axis=0) / math.log2(32)
    d0 = x - x.mean(axis=0)
    acf = [(d0[:-lag] * d0[lag:]).sum(axis=0) / np.maximum((d0 * d0).sum(axis=0), 1e-300)
           for lag in range(1, 31)]
    want = {"bandpower:3-8": P[band].sum(axis=0),
            "bandratio:3-8/0.5-3": np.where(P[low].sum(0) > 0,
                                            P[band].sum(0) / np.maximum(P[low].sum(0), 1e-300),
                                            0),
            "centroid": np.where(tot > 0, (f[1:, None] * P[1:]).sum(0) / np.where(tot > 0, tot,
                                                                                    1), 0),
            "entropy": np.where(tot > 0, ent, 0), "autocorr:7": acf[6],
            "domfreq": f[1 + np.argmax(P[1:], axis=0)] * (tot > 0) + f[1] * (tot == 0),
            "cadence:4-30": np.array([4 + np.argmax(np.array(acf[3:30])[:, j])
                                      for j in range(8)]) * (tot > 0) + 4 * (tot == 0)}
    for text, ref in want.items():
        got = parse_spec(text).compute(w, RATE).astype(np.float64)
        np.testing.assert_allclose(got, ref, rtol=2e-3, atol=2e-4 * max(1, np.abs(ref).max()),
                                   err_msg=text)


def test_log2f_polynomial():
    x = np.geomspace(1e-30, 1e30, 5001).astype(f32)
    np.testing.assert_allclose(spectral.log2f(x), np.log2(x.astype(np.float64)), atol=1e-5)


def test_band_bins_are_exact_half_open():
    assert list(spectral.band_bins(3, 8, 64, 64.0)) == [3, 4, 5, 6, 7]
    assert list(spectral.band_bins(0, 1, 64, 64.0)) == []          # DC is never in a band
    assert list(spectral.band_bins(0.5, 3, 50, 50.0)) == [1, 2, 3]  # M = 64: 0.78, 1.56, 2.34 Hz


def test_families_and_windows_in_sensors_toml():
    assert expand_family("bandpower:octaves:0.5-16") == [
        "bandpower:0.5-1", "bandpower:1-2", "bandpower:2-4", "bandpower:4-8", "bandpower:8-16"]
    assert expand_family("bandpower:equal:4:0-20") == [
        "bandpower:0-5", "bandpower:5-10", "bandpower:10-15", "bandpower:15-20"]
    assert expand_family("bandratio:octaves:1-4") == ["bandratio:1-2/2-4"]
    spec = parse_sensor_spec(sensor_spec(
        [ACCEL], [{"channels": ["accel"], "spectrum_window": "rect",
                   "extractors": ["bandpower:octaves:0.5-4", "centroid", "mean"]}],
        window=32, hop=16, rate_hz=10))
    names = [f.name for f in spec.features]
    assert names[:5] == ["ax.bandpower_0_5to1_rect", "ax.bandpower_1to2_rect",
                         "ax.bandpower_2to4_rect", "ax.centroid_rect", "ax.mean"]
    assert transforms_of(spec.features[0].kind, ("ax",)) == ["ax.fft_rect"]
    assert transforms_of("jerk>centroid", ("ay",)) == ["ay.jerk", "ay.jerk.fft"]
    assert transforms_of("mean", ("ay",)) == []


@pytest.mark.parametrize("text,message", [
    ("bandpower:8-3", r"must be LOW-HIGH with 0 <= LOW < HIGH"),
    ("bandratio:3-8", r"must be LOW-HIGH/LOW-HIGH"),
    ("autocorr:0", r"lag='0' must be a whole number of samples >= 1"),
    ("cadence:0-9", r"1 <= LOW"),
    ("mean@rect", r"spectrum window .* of the spectral extractors only"),
])
def test_spectral_spec_errors(text, message):
    with pytest.raises(DataError, match=message):
        parse_spec(text)


def test_lag_kinds_need_longer_windows():
    assert parse_spec("cadence:5-40").min_window == 41
    assert parse_spec("autocorr:12").min_window == 13


def test_example_candidate_sets_parse():
    from tests.paths import REPO
    from sensorbudget.trainer.sensing.sensors import load_sensor_spec

    spectral_set = load_sensor_spec(REPO / "examples" / "gait_spectral" / "spectral.sensors.toml")
    baseline = load_sensor_spec(REPO / "examples" / "gait_spectral" / "time_domain.sensors.toml")
    assert (len(spectral_set.features), len(baseline.features)) == (168, 90)
    assert {f.name for f in baseline.features} < {f.name for f in spectral_set.features}
