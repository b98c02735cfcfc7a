"""The fixed-point error bound from samples (:mod:`sensorbudget.firmware_gen.bounds`, issue 28): each
extractor's bound against the observed difference of its fixed-point and float32 values on
seeded random windows at their extremes, and the whole bound on the issue's bundle against the
largest difference its training recordings give (where the model's own bound, which assumes
exact features, is exceeded)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sensorbudget.firmware_gen import generate_firmware, reference
from sensorbudget.firmware_gen.bounds import feature_error
from sensorbudget.firmware_gen.library import generate_library
from sensorbudget.firmware_gen.plan import ExtractorPlan, FirmwarePlan, make_plan
from tests.firmware_gen import gen_runner as R
from tests.firmware_gen import generative as G
from sensorbudget.trainer.sensing.specs import Spec

FIXED_KINDS = ("mean", "min", "max", "ptp", "last", "energy", "rms", "mad", "percentile",
               "mag_mean", "mag_max")


def _windows(rng, n_windows, window, scale):
    """Real samples in [-scale, scale - step/2] (no clamping): uniform, constant windows, and
    windows at the limits."""
    top = scale - scale / 65536.0
    x = rng.uniform(-scale, top, (window * n_windows,))
    x[: window * 8] = np.repeat(rng.uniform(-scale, top, 8), window)
    edge = rng.uniform(0, 1e-3, window * 8) * scale
    x[window * 8: window * 16] = np.where(rng.random(window * 8) < 0.5, -scale + edge, top - edge)
    return x


@pytest.mark.parametrize("kind,window", [(k, w) for k in FIXED_KINDS for w in (1, 2, 7, 64, 257)
                                         if not (k == "mad" and w < 2)])    # mad: N >= 2
def test_each_fixed_extractor_is_within_its_bound(kind, window):
    rng = np.random.default_rng(window * 31 + len(kind))
    magnitude = kind.startswith("mag_")
    scales = (8.0, 8.0, 2.0) if magnitude else (4096.0,)
    n_windows = 200
    cols = [_windows(rng, n_windows, window, s) for s in scales]
    channels = tuple(range(len(scales)))
    spec = Spec("percentile", 90.0) if kind == "percentile" else None
    ext = ExtractorPlan(kind, kind, channels if magnitude else (0,), (0,), True, spec)
    plan = _plan(scales, window, ext)
    samples = np.column_stack(cols)
    q = reference.quantize_samples(plan, samples)
    fixed = reference.window_features(plan, q)[:, 0].astype(np.float64)
    float_plan = dataclasses.replace(plan, numeric="float32", full_scale=None,
                                     extractors=(dataclasses.replace(ext, fixed=False),))
    want = reference.window_features(float_plan, samples.astype(np.float32))[:, 0]
    worst = float(np.abs(fixed - want.astype(np.float64)).max())
    bound = feature_error(plan, ext)
    assert worst <= bound, (worst, bound)
    # and not vacuous: within a factor of the observed worst case on these extreme windows
    assert bound < 50 * max(worst, plan.full_scale[0] / 32768.0) * max(1, window / 64)


def _plan(scales, window, ext):
    """A fixed-point plan of one extractor over ``len(scales)`` channels."""
    return FirmwarePlan(name="b", numeric="q15", channels=tuple(f"c{i}" for i in
                                                               range(len(scales))),
                        full_scale=tuple(scales), window=window, hop=window,
                        sample_rate_hz=64.0, extractors=(ext,), features=(ext.name,),
                        targets=("y",), task="regression", bundle_sha256="0" * 64)


@pytest.fixture(scope="module")
def issue_bundle(tmp_path_factory):
    root = tmp_path_factory.mktemp("bounds")
    rec = G.write_recordings(root / "recordings", 2026)
    case = G.issue_case("host", "q15")
    bundle, _ = G.case_bundle(case, G.feature_set(case, rec, root), root / "bundle")
    return case, bundle, R.recordings_arrays(rec)


@pytest.mark.parametrize("numeric", ["q15", "q31"])
def test_issue_bundle_bound_holds_on_its_training_recordings(issue_bundle, numeric):
    case, bundle, data = issue_bundle
    channels = make_plan(bundle, name="m", numeric="float32").channels
    plan = make_plan(bundle, name="m", numeric=numeric,
                     full_scale=R.full_scale(case, channels, data))
    fw = generate_firmware(bundle, target="host", numeric=numeric, name="m", plan=plan)
    observed = R.fixed_error(plan, bundle, fw, data)
    stated = fw.manifest["stream_error_bound"]
    # the model's bound assumes exact features: the Q15 samples and integer extractors
    # alone pass it on these recordings, as the issue found; the stream bound holds
    assert fw.manifest["error_bound"] < observed <= stated
    lib = generate_library(bundle, numeric=numeric, name="gait",
                           full_scale=R.full_scale(case, channels, data))
    assert lib.manifest["stream_error_bound"] == stated
    assert f"#define GAIT_STREAM_ERROR_BOUND {stated:.1e}f" in lib.files["src/gait.h"]
