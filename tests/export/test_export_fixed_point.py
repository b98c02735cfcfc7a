"""Fixed-point model and C emitters: the bound holds on random inputs over the training box for
hard scalings, the accumulator cannot overflow, and the string emitters are safe."""

import numpy as np
import pytest

from sensorbudget.export import ExportError, dequantize_scores, predict_int, quantize_inputs, quantize_model
from sensorbudget.export.cgen import (
    c_comment,
    c_float,
    c_string,
    check_identifier,
    macro_names,
    sanitize_identifier,
)
from sensorbudget.export.fixed_point import FORMATS, round_half_away

CASES = {
    "unit": dict(w=1.0, b=0.3, lo=-1.0, hi=1.0),
    "tiny weights": dict(w=1e-6, b=1e-7, lo=-5.0, hi=5.0),
    "huge weights": dict(w=1e6, b=2e5, lo=-1.0, hi=3.0),
    "large intercept": dict(w=0.01, b=1e4, lo=0.0, hi=1.0),
    "narrow range far from 0": dict(w=3.0, b=-1.0, lo=1000.0, hi=1000.5),
    "wide range": dict(w=1e-3, b=0.0, lo=-1e5, hi=3e5),
}


def model_case(case, k=6, t=3, seed=0):
    rng = np.random.default_rng(seed)
    c = CASES[case]
    W = c["w"] * rng.normal(size=(k, t))
    b = c["b"] * (1 + rng.random(t))
    x_min = c["lo"] + (c["hi"] - c["lo"]) * rng.random(k) * 0.2
    x_max = c["hi"] - (c["hi"] - c["lo"]) * rng.random(k) * 0.2
    return W, b, x_min, x_max


def box_samples(fx, n, rng):
    """Random float32 points of the training box, its corners and edges included."""
    lo, hi = fx.x_lo.astype(np.float64), fx.x_hi.astype(np.float64)
    X = lo + (hi - lo) * rng.random((n, len(lo)))
    X[:4] = [lo, hi, np.where(np.arange(len(lo)) % 2, lo, hi), (lo + hi) / 2]
    X32 = np.clip(X.astype(np.float32), fx.x_lo, fx.x_hi)
    return X32


@pytest.mark.parametrize("numeric", ["q15", "q31"])
@pytest.mark.parametrize("case", list(CASES))
def test_bound_holds_over_the_training_box(numeric, case):
    W, b, x_min, x_max = model_case(case)
    fx = quantize_model(W, b, x_min, x_max, numeric)
    fmt = FORMATS[numeric]
    assert np.abs(fx.weights).max() <= fmt.qmax
    assert 0 <= fx.shift <= fmt.acc_bits - 2
    X32 = box_samples(fx, 4000, np.random.default_rng(1))
    q = quantize_inputs(fx, X32)
    assert np.abs(q).max() <= fmt.qmax
    got = dequantize_scores(fx, predict_int(fx, q))
    want = X32.astype(np.float64) @ W + b
    err = np.abs(got - want).max(axis=0)
    assert np.all(err <= fx.error_bounds), (err, fx.error_bounds)
    # the bound is within a small factor of what is observed (not vacuous)
    assert fx.error_bound < 8 * max(err.max(), 2.0 ** -fx.score_frac_bits)
    # relative precision as expected of the format
    assert fx.error_bound <= fx.score_max * (2e-3 if numeric == "q15" else 5e-8)


@pytest.mark.parametrize("numeric", ["q15", "q31"])
def test_accumulator_cannot_overflow(numeric):
    W, b, x_min, x_max = model_case("large intercept", k=12, t=2)
    fx = quantize_model(W, b, x_min, x_max, numeric)
    info = FORMATS[numeric]
    signs = np.sign(fx.weights[:, 0])
    worst = np.where(signs >= 0, info.qmin, info.qmax)[None, :]   # pushes acc to the extreme
    extreme = np.vstack([worst, -worst - 1, np.full((1, 12), info.qmin), np.full((1, 12), info.qmax)])
    predict_int(fx, np.clip(extreme, info.qmin, info.qmax))        # raises on overflow


def test_quantize_inputs_nan_and_saturation():
    W, b, x_min, x_max = model_case("unit", k=2, t=1)
    fx = quantize_model(W, b, x_min, x_max, "q15")
    X = np.array([[np.nan, 1e30], [-np.inf, np.inf]], np.float32)
    np.testing.assert_array_equal(quantize_inputs(fx, X), [[0, 32767], [-32767, 32767]])


def test_round_half_away_and_unknown_format():
    assert [round_half_away(v) for v in (0.5, -0.5, 1.49, -2.5, 0.0)] == [1, -1, 1, -3, 0]
    with pytest.raises(ExportError, match="numeric='q7'"):
        quantize_model(np.ones((1, 1)), np.zeros(1), [0.0], [1.0], "q7")


def test_identifiers():
    assert sanitize_identifier("naïve ✓ Δ-x") == "naive_x"
    assert sanitize_identifier("*/") == ""
    assert macro_names("M_F", ["a-b", "a b", "", "é"]) == ["M_F_A_B", "M_F_A_B_2", "M_F_N2", "M_F_E"]
    assert check_identifier("sbmodel") == "sbmodel"
    for bad in ("int", "INT", "restrict", "_Bool", "template", "1x", "a-b", "", "é"):
        with pytest.raises(ExportError, match="name="):
            check_identifier(bad)


def test_string_and_comment_escaping():
    assert c_string('a"b\\c?') == '"a\\"b\\\\c\\?"'
    assert c_string("é\n") == '"\\303\\251\\012"'
    assert c_string("??=") == '"\\?\\?="'
    text = c_comment('*/ /* ??/ é "q"')
    assert "*/" not in text and "/*" not in text and "??" not in text and text.isascii()


def test_float_literal_format():
    assert c_float(1.0) == "1.0f" and c_float(0.1) == "0.100000001f" and c_float(-2) == "-2.0f"
    for v in np.random.default_rng(0).normal(size=200).astype(np.float32) * 1e-30:
        assert np.float32(c_float(v)[:-1]) == v
    with pytest.raises(ExportError, match="non-finite"):
        c_float(np.inf)
