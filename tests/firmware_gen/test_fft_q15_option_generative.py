"""``fft="q15"`` on seeded random bundles (issue 29 item 3): :mod:`tests.firmware_gen.generative`'s
random sensors.toml files (1-9 channels of the synthetic 64 Hz stream, every extractor kind,
odd and power-of-two windows, hops below / at / above the window), 1-12 random features of which
at least one spectral kind on a raw window, random weights, q15 and q31 in turn. Each bundle's
stream, built with gcc on the host, equals :mod:`sensorbudget.firmware_gen.reference` bit for
bit on two recordings, and its Cortex-M4F image (``device_sim``'s unicorn-m4f backend: each
function called in unicorn, the DSP-extension butterflies) predicts a recording's every window
as the reference does."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sensorbudget.firmware_gen import generate_firmware, reference
from sensorbudget.firmware_gen.plan import make_plan
from tests.firmware_gen import gen_runner as R
from tests.firmware_gen import generative as G
from tests.firmware_gen.helpers import same_bits
from tests.firmware_gen.test_passes import float_inputs, run_stream

SPECTRAL = ("bandpower", "bandratio", "domfreq", "centroid", "entropy")
SEEDS = (11, 12, 13, 14)


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    return G.write_recordings(tmp_path_factory.mktemp("genfft") / "recordings", 2029)


def _raw_spectral(name: str) -> bool:
    return any(f".{k}" in name for k in SPECTRAL) and ".jerk." not in name \
        and ".highpass" not in name


def _case(seed: int, recordings, work):
    """The seed's case with a random selection holding at least one raw-window spectrum (the
    first seed from ``seed`` on, in steps of 1000, whose sensors.toml has one)."""
    for attempt in range(20):
        s = seed + 1000 * attempt
        numeric = ("q15", "q31")[s % 2]
        case = G.make_case(s, ("host", numeric))
        fs = G.feature_set(case, recordings, work / f"c{s}")
        names = list(fs.feature_names)
        X = np.asarray(fs.X, dtype=np.float64)
        finite = [n for i, n in enumerate(names) if np.isfinite(X[:, i]).all()]
        spectral = [n for n in finite if _raw_spectral(n)]
        if not spectral:
            continue
        rng = np.random.default_rng(s)
        k = int(rng.integers(1, min(12, len(finite)) + 1))
        picked = list(rng.choice(finite, k, replace=False))
        if not any(_raw_spectral(n) for n in picked):
            picked[0] = str(rng.choice(spectral))
        picked = list(dict.fromkeys(picked))
        case = dataclasses.replace(case, features=tuple(picked))
        bundle, _ = G.case_bundle(case, fs, work / f"b{s}")
        return case, bundle
    raise AssertionError(f"no case with a raw-window spectrum from seed {seed}")


@pytest.mark.parametrize("seed", SEEDS)
def test_random_bundles_bit_for_bit_on_host_and_unicorn(tmp_path, recordings, seed):
    case, bundle = _case(seed, recordings, tmp_path)
    data = R.recordings_arrays(recordings)
    channels = make_plan(bundle, name="sbmodel", numeric="float32").channels
    scales = R.full_scale(case, channels, data)
    plan = make_plan(bundle, name="sbmodel", numeric=case.numeric, full_scale=scales,
                     fft="q15")
    assert any(e.kind in SPECTRAL and not e.full_spec.pre for e in plan.extractors)
    fw = generate_firmware(bundle, target="host", numeric=case.numeric, plan=plan)
    samples = np.concatenate([R.device_samples(plan, d) for d in data[:2]])
    (tmp_path / "host").mkdir()
    got, inputs = run_stream(tmp_path / "host", fw, samples, with_inputs=True)
    expected = reference.window_features(plan, samples)
    assert got.shape == expected.shape and len(got) > 0
    bad = [plan.features[j] for j in float_inputs(fw) if not same_bits(got[:, j], expected[:, j])]
    assert not bad, (case.seed, case.toml, bad)
    assert np.array_equal(inputs, reference.model_inputs(plan, fw.header.fixed, expected))
    unicorn(bundle, plan, scales, recordings, tmp_path)


def unicorn(bundle, plan, scales, recordings, work) -> None:
    from sensorbudget.device_sim.backends import available_backends, make_backend
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.device_sim.replay import replay
    from sensorbudget.trainer.sensing.recordings import load_recordings

    reason = available_backends().get("unicorn-m4f")
    if reason is not None:
        pytest.skip(f"backend unicorn-m4f: {reason}")
    model = ReferenceModel(bundle, plan.numeric, full_scale=scales, fft="q15")
    assert model.plan == plan
    rset = load_recordings(recordings, model.sample_rate)
    rset.recordings = rset.recordings[:1]
    be = make_backend("unicorn-m4f", model=model, workdir=work / "unicorn")
    try:
        res = replay(be, model, rset)
        be.quit()
    finally:
        be.close()
    assert len(res.records) > 0 and res.count("delivered") == len(res.records)
    assert res.mismatches == 0 and res.unexpected == 0
