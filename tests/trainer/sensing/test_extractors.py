"""The extractor library against a literal scalar float32 transcription and float64 formulas."""

import math

import numpy as np
import pytest

from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.sensing.extractors import (
    KINDS,
    extract,
    extract_q15,
    get_kind,
    q15_to_real,
    window_view,
)
from sensorbudget.trainer.sensing.q15 import ISQRT_MAX, isqrt32

f32 = np.float32
# the window statistics of extractors.py; the shape and spectral kinds are tested in test_shape.py
PER_CHANNEL = [k for k, e in KINDS.items() if e.per_channel
               and e.compute.__module__ == "sensorbudget.trainer.sensing.extractors"]
MULTI = [k for k, e in KINDS.items() if not e.per_channel]
assert len(PER_CHANNEL) >= 8 and MULTI, "the kinds under test were not found"


# --- the docstrings transcribed literally: one window, scalar float32 operations ----------------

def _mean(x):
    s = f32(0)
    for v in x:
        s = f32(s + v)
    return f32(s / f32(len(x)))


def _std(x):
    s1 = s2 = f32(0)
    for v in x:
        d = f32(v - x[0])
        s1 = f32(s1 + d)
        s2 = f32(s2 + f32(d * d))
    n = f32(len(x))
    m = f32(s1 / n)
    var = f32(f32(s2 / n) - f32(m * m))
    return np.sqrt(var) if var > 0 else f32(0)


def _min(x):
    m = x[0]
    for v in x[1:]:
        if v < m:
            m = v
    return m


def _max(x):
    m = x[0]
    for v in x[1:]:
        if v > m:
            m = v
    return m


def _energy(x):
    s = f32(0)
    for v in x:
        s = f32(s + f32(v * v))
    return s


def _mad(x):
    s = f32(0)
    for i in range(1, len(x)):
        s = f32(s + abs(f32(x[i] - x[i - 1])))
    return f32(s / f32(len(x) - 1))


def _zcr(x):
    m = _mean(x)
    c = sum(1 for i in range(1, len(x)) if (x[i - 1] < m) != (x[i] < m))
    return f32(f32(c) / f32(len(x) - 1))


def _magnitude(chans):
    out = []
    for i in range(len(chans[0])):
        s = f32(0)
        for c in chans:
            s = f32(s + f32(c[i] * c[i]))
        out.append(np.sqrt(s))
    return out


def _corr(x, y):
    sx = sy = sxx = syy = sxy = f32(0)
    for xi, yi in zip(x, y):
        dx, dy = f32(xi - x[0]), f32(yi - y[0])
        sx, sy = f32(sx + dx), f32(sy + dy)
        sxx, syy = f32(sxx + f32(dx * dx)), f32(syy + f32(dy * dy))
        sxy = f32(sxy + f32(dx * dy))
    n = f32(len(x))
    mx, my = f32(sx / n), f32(sy / n)
    cxx = f32(f32(sxx / n) - f32(mx * mx))
    cyy = f32(f32(syy / n) - f32(my * my))
    cxy = f32(f32(sxy / n) - f32(mx * my))
    if cxx <= 0 or cyy <= 0:
        return f32(0)
    r = f32(cxy / f32(np.sqrt(cxx) * np.sqrt(cyy)))
    return f32(1) if r > 1 else (f32(-1) if r < -1 else r)


SCALAR = {
    "mean": _mean, "std": _std, "min": _min, "max": _max,
    "ptp": lambda x: f32(_max(x) - _min(x)), "energy": _energy,
    "rms": lambda x: np.sqrt(f32(_energy(x) / f32(len(x)))), "mad": _mad, "zcr": _zcr,
    "last": lambda x: x[-1],
    "mag_mean": lambda cs: _mean(_magnitude(cs)), "mag_std": lambda cs: _std(_magnitude(cs)),
    "mag_max": lambda cs: _max(_magnitude(cs)), "corr": lambda cs: _corr(*cs),
}

# --- straightforward float64 formulas ------------------------------------------------------------

F64 = {
    "mean": np.mean, "std": np.std, "min": np.min, "max": np.max, "ptp": np.ptp,
    "rms": lambda x: np.sqrt(np.mean(x ** 2)), "energy": lambda x: np.sum(x ** 2),
    "mad": lambda x: np.mean(np.abs(np.diff(x))), "last": lambda x: x[-1],
    "zcr": lambda x: np.mean(np.diff(np.sign(x - x.mean())) != 0),
    "mag_mean": lambda cs: np.mean(np.linalg.norm(cs, axis=0)),
    "mag_std": lambda cs: np.std(np.linalg.norm(cs, axis=0)),
    "mag_max": lambda cs: np.max(np.linalg.norm(cs, axis=0)),
    "corr": lambda cs: np.corrcoef(cs[0], cs[1])[0, 1],
}


def _windows(rng, length, n_windows, offset=0.0, scale=1.0):
    """(length, n_windows) float32 windows, with some constant and repeated-value windows."""
    w = (offset + scale * rng.standard_normal((length, n_windows))).astype(f32)
    w[:, 0] = f32(offset)                      # constant window
    w[:, 1] = np.round(w[:, 1])                # ties and repeated values
    return w


def _channels(kind, rng, length, n, offset=0.0, scale=1.0):
    k = 2 if kind == "corr" else 3
    return [_windows(rng, length, n, offset, scale) for _ in range(k)]


@pytest.mark.parametrize("kind", PER_CHANNEL)
@pytest.mark.parametrize("length", [2, 3, 7, 20, 64])
@pytest.mark.parametrize("offset,scale", [(0.0, 1.0), (1000.0, 30.0), (-5.0, 1e-3)])
def test_per_channel_bit_exact_with_scalar_reference(kind, length, offset, scale):
    rng = np.random.default_rng(length)
    w = _windows(rng, length, 12, offset, scale)
    got = extract(kind, w)
    assert got.dtype == f32 and got.shape == (12,)
    want = np.array([SCALAR[kind](list(w[:, j])) for j in range(12)], dtype=f32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("kind", MULTI)
@pytest.mark.parametrize("length", [2, 5, 20])
@pytest.mark.parametrize("offset,scale", [(0.0, 1.0), (500.0, 20.0)])
def test_multi_channel_bit_exact_with_scalar_reference(kind, length, offset, scale):
    rng = np.random.default_rng(100 + length)
    chans = _channels(kind, rng, length, 10, offset, scale)
    got = extract(kind, chans)
    want = np.array([SCALAR[kind]([list(c[:, j]) for c in chans]) for j in range(10)], dtype=f32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("kind", PER_CHANNEL)
def test_per_channel_matches_float64_formula(kind):
    rng = np.random.default_rng(1)
    w = (3.0 + rng.standard_normal((50, 40))).astype(f32)
    got = extract(kind, w).astype(np.float64)
    want = np.array([F64[kind](w[:, j].astype(np.float64)) for j in range(40)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("kind", MULTI)
def test_multi_channel_matches_float64_formula(kind):
    rng = np.random.default_rng(2)
    chans = [(1.0 + rng.standard_normal((30, 25))).astype(f32) for _ in range(2 if kind == "corr"
                                                                            else 3)]
    got = extract(kind, chans).astype(np.float64)
    want = np.array([F64[kind](np.array([c[:, j] for c in chans], dtype=np.float64))
                     for j in range(25)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_edge_values():
    const = np.full((5, 1), 7.5, dtype=f32)
    assert extract("std", const)[0] == 0 and extract("zcr", const)[0] == 0
    assert extract("ptp", const)[0] == 0 and extract("mad", const)[0] == 0
    assert extract("corr", [const, const + 1])[0] == 0   # zero variance -> 0, not NaN
    one = np.array([[2.0]], dtype=f32)
    for kind in ("mean", "min", "max", "last", "rms", "std"):
        assert np.isfinite(extract(kind, one)).all()
    alternating = np.array([[1], [-1], [1], [-1], [1]], dtype=f32)
    assert extract("zcr", alternating)[0] == 1.0
    line = np.arange(10, dtype=f32)[:, None]
    assert extract("corr", [line, 2 * line + 3])[0] == 1.0
    assert extract("corr", [line, -line])[0] == -1.0


def test_window_view_takes_consecutive_samples():
    w = window_view(np.arange(10.0), [0, 3, 6], 4)
    assert w.dtype == f32 and w.shape == (4, 3)
    np.testing.assert_array_equal(w[:, 1], [3, 4, 5, 6])


def test_errors_name_the_kind_and_the_limit():
    with pytest.raises(DataError, match="unknown extractor 'median'"):
        get_kind("median")
    with pytest.raises(DataError, match=r"'mad' needs a window of at least 2 samples \(window=1\)"):
        extract("mad", np.ones((1, 3), dtype=f32))
    with pytest.raises(DataError, match="'corr' takes 2 channels; got 3"):
        extract("corr", [np.ones((4, 2), dtype=f32)] * 3)
    with pytest.raises(DataError, match="takes 2\\+ channels; got 1"):
        extract("mag_mean", [np.ones((4, 2), dtype=f32)])


FIXED = [k for k, e in KINDS.items() if e.fixed_point]


def test_fixed_point_set_is_stated():
    assert FIXED == ["mean", "min", "max", "ptp", "rms", "mad", "zcr", "energy", "last",
                     "mag_mean", "mag_max", "percentile"]


@pytest.mark.parametrize("kind", [k for k in FIXED
                                  if KINDS[k].per_channel and not KINDS[k].arg])
def test_q15_matches_real_formula(kind):
    rng = np.random.default_rng(3)
    q = rng.integers(-32768, 32768, size=(40, 30)).astype(np.int16)
    q[:, 0] = -32768                                   # extreme values
    q[:, 1] = 32767
    full_scale, n = 4.0, q.shape[0]
    real = q.astype(np.float64) * full_scale / 32768
    got = q15_to_real(kind, extract_q15(kind, q), full_scale, n)
    if kind == "zcr":                      # exact comparison with the exact mean
        want = np.array([np.mean(np.diff(real[:, j] < real[:, j].mean()) != 0)
                         for j in range(30)])
        np.testing.assert_array_equal(got, want)
        return
    want = np.array([F64[kind](real[:, j]) for j in range(30)])
    lsb = full_scale / 32768
    atol = 1e-9 if kind in ("min", "max", "last", "ptp", "energy") else lsb
    np.testing.assert_allclose(got, want, rtol=0, atol=atol)
    if kind == "rms":                     # floor of the root of the floor of the mean square
        e = (q.astype(np.int64) ** 2).sum(axis=0)
        raw = extract_q15(kind, q)
        assert ((raw ** 2 <= e // n) & ((raw + 1) ** 2 > e // n)).all()


def _mag_windows(rng, k, n=24, m=40):
    qs = [rng.integers(-32768, 32768, size=(n, m)).astype(np.int16) for _ in range(k)]
    for c in qs:
        c[:, 0] = -32768                              # the largest magnitude
        c[:, 1] = 0
        c[:, 2] = rng.integers(-3, 4, size=n)         # small values: exact roots matter
    return qs


@pytest.mark.parametrize("kind", ["mag_mean", "mag_max"])
@pytest.mark.parametrize("scales", [(4.0, 4.0, 4.0), (4.0, 1.0, 2.0), (8.0, 8.0),
                                    (1.0, 1.0, 1.0, 1.0, 0.5)])
def test_q15_magnitude_matches_real_formula(kind, scales):
    rng = np.random.default_rng(len(scales))
    qs = _mag_windows(rng, len(scales))
    got = q15_to_real(kind, extract_q15(kind, qs, scales), scales, 24)
    real = np.array([q.astype(np.float64) * f / 32768 for q, f in zip(qs, scales)])
    want = np.array([F64[kind](real[:, :, j]) for j in range(40)])
    # the integer root and the shifted squares lose at most one unit (or two with a shift)
    unit = max(scales) / 32768 * (2 if len(scales) > 3 else 1)
    np.testing.assert_allclose(got, want, rtol=0, atol=2 * unit)
    # brute force: floor roots of the exact integer sums of shifted squares
    shift = [2 * int(np.log2(max(scales) / f)) for f in scales]
    extra = 2 if len(scales) > 3 else 0
    raw = extract_q15(kind, qs, scales)
    for j in range(40):
        a = [math.isqrt(sum((int(q[i, j]) ** 2) >> (s + extra) for q, s in zip(qs, shift)))
             for i in range(24)]
        assert raw[j] == (max(a) if kind == "mag_max" else sum(a) // 24)


def test_isqrt32_is_the_floor_root_on_edges():
    r = np.arange(0, 65536, 97, dtype=np.int64)
    v = np.concatenate([r * r - 1, r * r, r * r + 1, (r + 1) * (r + 1) - 1, [ISQRT_MAX]])
    v = v[(v >= 0) & (v <= ISQRT_MAX)]
    np.testing.assert_array_equal(isqrt32(v), [math.isqrt(int(x)) for x in v])


def test_q15_rejects_float_only_kinds_and_bad_input():
    with pytest.raises(DataError, match="needs the full scale of each of its 3 channels"):
        extract_q15("mag_mean", [np.zeros((4, 1), dtype=np.int16)] * 3)
    with pytest.raises(DataError, match="'std' has no fixed-point definition"):
        extract_q15("std", np.zeros((4, 1), dtype=np.int16))
    with pytest.raises(DataError, match="must be int16"):
        extract_q15("mean", np.zeros((4, 1), dtype=np.int32))
    # C99 division truncates toward zero: mean of (-1, -2) is -1, not -2
    assert extract_q15("mean", np.array([[-1], [-2]], dtype=np.int16))[0] == -1
