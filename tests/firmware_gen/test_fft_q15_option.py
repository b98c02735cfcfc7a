"""The Q15 FFT inside the product (issue 29 item 3, opt-in ``fft="q15"``): a q15/q31 plan's
spectral features on raw windows read the power of :mod:`sensorbudget.trainer.sensing.spectral_q15`
(:mod:`sensorbudget.firmware_gen.fft_q15_c`), everything after it the float32 code.

Checked here: the generated stream built with gcc on the host equals
:mod:`sensorbudget.firmware_gen.reference` bit for bit on seeded random windows and on real
BasicMotions recordings (several windows and hops, Hann and rectangular, shared with a Q15
percentile that reorders the same int16 copy, and a spectrum after preprocessing that keeps the
float32 FFT); the reference's spectrum is the Q15 power times its exact scale, independently of
the emitter; the float32 default stays the float32 FFT; the refusals.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sensorbudget.firmware_gen import generate_firmware, reference
from sensorbudget.firmware_gen.errors import FirmwareGenError
from sensorbudget.firmware_gen.plan import make_plan
from sensorbudget.trainer.sensing import spectral, spectral_q15
from tests.firmware_gen.conftest import BASIC_MOTIONS, bm_full_scale, bm_sensors_toml, train
from tests.firmware_gen.helpers import device_samples, same_bits
from tests.firmware_gen.test_passes import float_inputs, run_stream

SENSORS = bm_sensors_toml("""\
[[features]]
channels = ["acc_x", "gyro_y"]
extractors = ["bandpower:1-3", "bandratio:0.5-2/2-5", "domfreq", "centroid", "entropy",
              "percentile:90", "skew", "mean"]

[[features]]
channels = ["acc_y"]
preprocess = "jerk"
extractors = ["centroid", "bandpower:0-5"]

[[features]]
channels = ["acc_z"]
spectrum_window = "rect"
extractors = ["bandpower:1-3", "centroid", "entropy", "domfreq"]
""")
#: (window, hop): powers of two and not, hop below / equal to / above the window
WINDOWS = [(16, 8), (12, 5), (9, 13), (33, 7)]


@pytest.fixture(scope="module")
def fft_features(tmp_path_factory):
    if not BASIC_MOTIONS.is_dir():
        pytest.skip(f"{BASIC_MOTIONS} is missing (shared data not available)")
    from sensorbudget.trainer.sensing.feature_set import load_feature_set

    path = tmp_path_factory.mktemp("fftq") / "fft.sensors.toml"
    path.write_text(SENSORS)
    return load_feature_set(BASIC_MOTIONS, path)


@pytest.fixture(scope="module")
def fft_bundle(fft_features, tmp_path_factory):
    fs = fft_features
    return train(fs, tmp_path_factory.mktemp("bundles") / "fftq", len(fs.feature_names))


@pytest.fixture(scope="module")
def spectral_only_bundle(fft_features, tmp_path_factory):
    """Only spectral features on raw windows: no float copy of any window is needed."""
    names = [f for f in fft_features.feature_names if "jerk" not in f and any(
        k in f for k in ("bandpower", "bandratio", "domfreq", "centroid", "entropy"))]
    return train(fft_features, tmp_path_factory.mktemp("bundles") / "spec", len(names), names)


def _scales(bm_recordings):
    """The power of two above each used channel's largest |sample| in the recordings."""
    return {c: v for c, v in bm_full_scale(bm_recordings).items() if c != "gyro_x"
            and not c.startswith("gyro_z")}


def _plan(bundle, numeric, scales, fft="q15", window=None, hop=None):
    plan = make_plan(bundle, name="sbmodel", numeric=numeric, full_scale=scales, fft=fft)
    if window is not None:
        plan = dataclasses.replace(plan, window=window, hop=hop)
    return plan


def _real_samples(plan, recordings):
    return np.concatenate([device_samples(plan, recordings.recordings[r].columns)
                           for r in (3, 17, 29, 44)])


def _check_stream(tmp_path, bundle, plan, samples):
    fw = generate_firmware(bundle, target="host", numeric=plan.numeric, plan=plan)
    got, inputs = run_stream(tmp_path, fw, samples, with_inputs=True)
    expected = reference.window_features(plan, samples)
    assert got.shape == expected.shape and len(got) > 10
    bad = [plan.features[j] for j in float_inputs(fw) if not same_bits(got[:, j], expected[:, j])]
    assert not bad, bad
    assert np.array_equal(inputs, reference.model_inputs(plan, fw.header.fixed, expected))
    return fw


@pytest.mark.parametrize("numeric", ["q15", "q31"])
@pytest.mark.parametrize("window,hop", WINDOWS)
def test_q15_fft_stream_bit_for_bit_on_real_recordings(tmp_path, fft_bundle, bm_recordings,
                                                       numeric, window, hop):
    plan = _plan(fft_bundle, numeric, _scales(bm_recordings), window=window, hop=hop)
    fw = _check_stream(tmp_path, fft_bundle, plan, _real_samples(plan, bm_recordings))
    source = fw.files["sbmodel_stream.c"]
    # every raw-window spectrum through the Q15 FFT; jerk's keeps the float32 one
    assert source.count("sbmodel_power_spectrum_q15(sbmodel_q") == 3
    assert source.count("    sbmodel_power_spectrum(sbmodel_x") == 1


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_q15_fft_stream_bit_for_bit_on_seeded_random_windows(tmp_path, fft_bundle,
                                                             bm_recordings, seed):
    """Random Q15 streams: full-range noise, small signals (where the Q15 FFT loses bits),
    sines near a bin, constant stretches; random window and hop."""
    rng = np.random.default_rng(seed)
    window = int(rng.integers(4, 70))
    hop = int(rng.integers(1, 2 * window))
    plan = _plan(fft_bundle, "q15", {"*": float(2.0 ** rng.integers(-3, 8))}, window=window,
                 hop=hop)
    n, c = 30 * window, len(plan.channels)
    t = np.arange(n)[:, None]
    amp = np.array([32767, 40, 3000, 1, 20000, 0])[rng.integers(0, 6, c)]
    x = amp * np.sin(2 * np.pi * t * rng.uniform(0, 0.5, c) + rng.uniform(0, 6, c))
    x = x + rng.normal(0, 1, (n, c)) * rng.choice([0, 1, 300], c)
    x[n // 3:n // 2] = rng.integers(-32768, 32767, c)     # a constant stretch
    samples = np.clip(np.rint(x), -32768, 32767).astype(np.int16)
    _check_stream(tmp_path, fft_bundle, plan, samples)


def _block_shift(w) -> np.ndarray:
    """k per window, by a loop: the largest k with max |x - trunc(mean)| 2^k <= 65535."""
    out = []
    for col in w.T.tolist():
        s = sum(col)
        mean = abs(s) // len(col) * (1 if s >= 0 else -1)
        top, k = max(abs(v - mean) for v in col), 0
        while top and top << (k + 1) <= 65535:
            k += 1
        out.append(k)
    return np.array(out)


def test_reference_spectrum_is_the_q15_power_times_its_scale(fft_bundle, bm_recordings):
    """The reference's spectral features of a fft=q15 plan, recomputed here from the integer
    power of the block-normalised window in float64 (exact: P < 2**32 times a power of two)
    for the kinds that are sums: bandpower is sum(P_q * S / 4^k) over its bins, the float32
    sum of the float32 terms; and the normalisation keeps bits: on these windows k > 0."""
    plan = _plan(fft_bundle, "q15", _scales(bm_recordings))
    samples = _real_samples(plan, bm_recordings)
    X = reference.window_features(plan, samples)
    q = samples.astype(np.int64)
    starts = np.arange(0, len(q) - plan.window + 1, plan.hop)
    checked = 0
    for e in plan.extractors:
        if e.kind != "bandpower" or e.full_spec.pre:
            continue
        (c,) = e.channels
        w = np.stack([q[s:s + plan.window, c] for s in starts], axis=1)
        k = _block_shift(w)
        assert np.array_equal(k, spectral_q15.block_shift(w)) and k.min() > 0
        P = spectral_q15.power_spectrum_q15(w, "rect" if e.full_spec.rect else "hann",
                                            normalize=True)
        S = spectral_q15.real_scale(plan.window, plan.full_scale[c]) * 4.0 ** -k
        terms = (P.astype(np.float64).astype(np.float32).astype(np.float64) * S)
        assert np.all(terms.astype(np.float32).astype(np.float64) == terms)    # S is exact
        acc = np.zeros(len(starts), dtype=np.float32)
        for k in spectral.band_bins(*e.full_spec.arg, plan.window, plan.sample_rate_hz):
            acc = acc + terms[k].astype(np.float32)
        for slot in e.slots:
            assert same_bits(X[:, slot], acc)
            checked += 1
    assert checked >= 2


def test_float32_fft_is_the_default(fft_bundle, bm_recordings):
    plan = make_plan(fft_bundle, name="sbmodel", numeric="q15",
                     full_scale=_scales(bm_recordings))
    assert plan.fft == "float32"
    source = generate_firmware(fft_bundle, target="host", numeric="q15", plan=plan
                               ).files["sbmodel_stream.c"]
    assert "power_spectrum_q15" not in source and "qpower" not in source


def test_refusals(fft_bundle, kinds_bundle, bm_recordings):
    scales = _scales(bm_recordings)
    with pytest.raises(FirmwareGenError, match=r"fft='q15' needs numeric q15 or q31.*float32"):
        make_plan(fft_bundle, name="sbmodel", numeric="float32", fft="q15")
    with pytest.raises(FirmwareGenError, match="fft='q15': the model has no spectral feature"):
        make_plan(kinds_bundle, name="sbmodel", numeric="q15", full_scale=scales, fft="q15")
    with pytest.raises(FirmwareGenError, match="fft='q7' is not one of float32, q15"):
        make_plan(fft_bundle, name="sbmodel", numeric="q15", full_scale=scales, fft="q7")


@pytest.mark.parametrize("target", ["host", "arduino-uno", "nucleo-f4"])
def test_lines_short_under_a_long_name(fft_bundle, target):
    """Every generated file of fft=q15 firmware within MAX_LINE under a 40-character prefix
    (the Q15 FFT's calls, buffers, tables and routines are short by construction)."""
    from sensorbudget.export.cgen import MAX_LINE

    name = "a_forty_character_model_name_for_checkss"
    assert len(name) == 40
    fw = generate_firmware(fft_bundle, target=target, numeric="q15", name=name, fft="q15")
    assert "_power_spectrum_q15(" in fw.files[f"{name}_stream.c"]
    files = dict(fw.files)
    if target == "host":                # the library's stream: prefix <name>_model
        from sensorbudget.firmware_gen.library import generate_library

        lib = generate_library(fft_bundle, numeric="q15", name=name[:30], fft="q15")
        files.update(lib.files)
        assert "_power_spectrum_q15(" in lib.files[f"src/{name[:30]}_model_stream.c"]
    long = [(f, i) for f, text in files.items() if f.endswith((".c", ".h", ".ino"))
            for i, line in enumerate(text.splitlines(), 1) if len(line) > MAX_LINE]
    assert long == []


@pytest.mark.parametrize("target", ["host", "mps2-an385"])
def test_spectral_only_bundle_builds_with_werror_and_matches(tmp_path, spectral_only_bundle,
                                                             bm_recordings, target):
    """Every feature from the Q15 FFT: the firmware compiles with the targets' -Werror (no
    unused float scratch or sample scales) and its stream equals the reference."""
    import shutil

    from sensorbudget.firmware_gen.targets import get_target

    if shutil.which("make") is None or shutil.which(get_target(target).cc) is None:
        pytest.skip(f"no {get_target(target).cc}")
    fw = sb_firmware(spectral_only_bundle, target)
    assert fw.footprint["flash_bytes"] > 0
    source = fw.files["sbmodel_stream.c"]
    assert "sbmodel_x[" not in source and "float sbmodel_sample_scale" not in source
    plan = make_plan(spectral_only_bundle, name="sbmodel", numeric="q15", fft="q15")
    _check_stream(tmp_path, spectral_only_bundle, plan, _real_samples(plan, bm_recordings))


def sb_firmware(bundle, target):
    import sensorbudget as sb

    return sb.firmware(bundle.path, target=target, numeric="q15", fft="q15", build=True)


@pytest.mark.parametrize("amplitude", [3, 40, 700])
def test_block_normalisation_keeps_the_bits_of_quiet_windows(amplitude):
    """Seeded quiet Q15 windows (a few LSBs to a few percent of full scale): the normalised
    power is within 1 % of numpy's float64 rfft of the same integers (largest bin), where the
    plain per-stage scaled transform is off by far more; a window spanning the full scale
    gets k = 0 and the same integers either way."""
    rng = np.random.default_rng(amplitude)
    n = 64
    t = np.arange(n)[:, None]
    q = np.rint(amplitude * np.sin(2 * np.pi * t * rng.uniform(0.05, 0.4, 20))
                + rng.normal(0, 1, (n, 20))).astype(np.int64)
    k = spectral_q15.block_shift(q)
    exact = np.abs(np.fft.rfft((q - np.trunc(q.mean(axis=0))) * spectral_q15.hann_q15(n)[:, None]
                               / 32768.0, axis=0)) ** 2
    unit = spectral_q15.real_scale(n, 32768.0)          # F = 32768: one Q15 step is 1
    norm = spectral_q15.power_spectrum_q15(q, normalize=True) * unit * 4.0 ** -k
    plain = spectral_q15.power_spectrum_q15(q) * unit
    top = exact.max(axis=0)
    err_norm = (np.abs(norm - exact).max(axis=0) / top).max()
    err_plain = (np.abs(plain - exact).max(axis=0) / top).max()
    assert err_norm < 0.01 and err_plain > 5 * err_norm, (err_norm, err_plain)
    loud = np.clip(q * (32767 // max(1, int(np.abs(q).max()))), -32768, 32767)
    loud[0] = 32767
    loud[1] = -32768
    k = spectral_q15.block_shift(loud)
    assert (k <= 1).all() and (k == 0).any()
    same = spectral_q15.power_spectrum_q15(loud, normalize=True) == \
        spectral_q15.power_spectrum_q15(loud)
    assert same[:, k == 0].all()
