"""The Q15 power spectrum (issue 29): against a literal scalar transcription of its documented
integer steps (Python ints, one butterfly at a time, in the radix-2 order), against numpy's
float64 rfft within a derived error bound, and in real units against the float32 spectrum."""

import math

import numpy as np
import pytest

from sensorbudget.trainer.sensing import spectral, spectral_q15


def scalar_power_q15(x, hann=True):
    """The module docstring's steps 1-4 for one window of Python ints."""
    n = len(x)
    s = sum(x)
    mean = abs(s) // n * (1 if s >= 0 else -1)               # C99: truncates toward zero
    d = [v - mean for v in x]
    if hann:
        hq = [round(32768 * (0.5 - 0.5 * math.cos(2 * math.pi * i / n))) for i in range(n)]
        u = [(a * b) >> 17 for a, b in zip(d, hq)]
    else:
        u = [a >> 2 for a in d]
    size = spectral.fft_size(n)
    h = size // 2
    u += [0] * (size - n)
    bits = h.bit_length() - 1
    rev = [int(format(i, f"0{bits}b")[::-1], 2) if bits else 0 for i in range(h)]
    re, im = [0] * h, [0] * h
    for j in range(h):
        re[rev[j]], im[rev[j]] = u[2 * j], u[2 * j + 1]
    clip = lambda v: max(-32768, min(32767, v))                # noqa: E731
    tw = [(clip(round(32768 * math.cos(2 * math.pi * j / size))),
           clip(round(-32768 * math.sin(2 * math.pi * j / size)))) for j in range(h)]
    length = 2
    while length <= h:
        half = length // 2
        for start in range(0, h, length):
            for k in range(half):
                t = k * size // length
                i, j = start + k, start + k + half
                if t == 0:
                    tr, ti = re[j], im[j]
                elif 4 * t == size:
                    tr, ti = im[j], -re[j]
                else:
                    wr, wi = tw[t]
                    tr = (wr * re[j] - wi * im[j]) >> 15
                    ti = (wr * im[j] + wi * re[j]) >> 15
                re[j], im[j] = (re[i] - tr) >> 1, (im[i] - ti) >> 1
                re[i], im[i] = (re[i] + tr) >> 1, (im[i] + ti) >> 1
                assert all(-32768 <= v <= 32767 for v in (re[i], im[i], re[j], im[j]))
        length *= 2
    out = [(re[0] + im[0]) ** 2] + [0] * (h - 1) + [(re[0] - im[0]) ** 2]
    for k in range(1, h // 2 + 1):
        q = h - k
        er, ei = re[k] + re[q], im[k] - im[q]
        odd_r, odd_i = im[k] + im[q], re[q] - re[k]
        wr, wi = tw[k]
        a = (wr * odd_r - wi * odd_i) >> 15
        b = (wr * odd_i + wi * odd_r) >> 15
        out[k] = ((er + a) >> 1) ** 2 + ((ei + b) >> 1) ** 2
        if q != k:
            out[q] = ((er - a) >> 1) ** 2 + ((b - ei) >> 1) ** 2
    return out


def _windows(n, count=6, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(n, count)) * rng.uniform(50, 20000, count) + rng.uniform(-8000, 8000,
                                                                                    count)
    w[:, 0] = np.where(np.arange(n) % 2, 32767, -32768)        # full-scale Nyquist
    w[:, 1] = -32768                                           # constant: a zero spectrum
    return np.clip(np.round(w), -32768, 32767).astype(np.int16)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 16, 50, 64, 100, 256])
@pytest.mark.parametrize("hann", [True, False])
def test_bit_exact_with_scalar_transcription(n, hann):
    q = _windows(n, seed=n)
    got = spectral_q15.power_spectrum_q15(q, "hann" if hann else "rect")
    want = np.array([scalar_power_q15([int(v) for v in q[:, j]], hann)
                     for j in range(q.shape[1])]).T
    np.testing.assert_array_equal(got, want)
    assert got.min() >= 0 and got.max() < 2 ** 32


@pytest.mark.parametrize("n", [3, 16, 50, 64, 200, 512])
@pytest.mark.parametrize("window", ["hann", "rect"])
def test_within_bound_of_numpy_rfft(n, window):
    """|sqrt(P) - |X|| in units of the output (|X| = |rfft(d w)| / (4 H), d = q - mean(q)):
    the window's roundings (the mean's truncation, the floor of u, the Hann table's rounding:
    under 2.5 units over the DFT's N / H), each stage's growth (the product's floor, the
    twiddle's rounding times a modulus below 2^15, the halving's floor: under 1.5 units) and the
    split with the last halving (2 units): 1.5 log2(M) + 4.5."""
    q = _windows(n, count=40, seed=n + 1)
    m = spectral.fft_size(n)
    P = spectral_q15.power_spectrum_q15(q, window)
    x = q.astype(np.float64)
    d = x - x.mean(axis=0)
    if window == "hann":
        d = d * (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n))[:, None]
    X = np.abs(np.fft.rfft(d, n=m, axis=0)) / (2 * m)
    assert np.max(np.abs(np.sqrt(P) - X)) <= 1.5 * math.log2(m) + 4.5


def test_real_scale_matches_float32_spectrum():
    n, fs = 256, 4.0
    q = _windows(n, count=8, seed=7)
    real = spectral_q15.power_spectrum_q15(q) * spectral_q15.real_scale(n, fs)
    ref = spectral.power_spectrum(q.astype(np.float32) * np.float32(fs / 32768)).astype(float)
    unit = math.sqrt(spectral_q15.real_scale(n, fs))         # one output unit of |X|
    bound = (1.5 * math.log2(256) + 4.5) * unit
    assert np.max(np.abs(np.sqrt(real) - np.sqrt(ref))) <= bound * 1.001
