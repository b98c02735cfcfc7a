"""Generated multi-rate designs through the whole replay (issue 30 item 3): the seeded random
designs of test_multirate_generative (2-4 sensors at 8, 16 or 32 Hz with candidate rates,
window statistics, shape, spectral and magnitude kinds, hops below, at and above the window)
written as a recording table with empty cells and a sensors.toml, a random selection trained,
then ``simulate`` on the python backend and on the host image: every window the trainer made
is predicted, none differs from the reference, and the float32 device scores equal the model
on the trainer's own feature matrix bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import tomli_w

from sensorbudget.device_sim.backends import available_backends
from sensorbudget.device_sim.simulate import simulate
from sensorbudget.trainer.sensing.feature_set import build_feature_set
from sensorbudget.trainer.sensing.recordings import RecordingSet
from sensorbudget.trainer.sensing.sensors import parse_sensor_spec
from tests.firmware_gen.conftest import train
from tests.firmware_gen.generative import _pick
from tests.firmware_gen.test_multirate_generative import NUMERICS, _design, _recording

SEEDS = range(6)


def _write_csv(rec, path) -> None:
    names = list(rec.columns)
    lines = ["time," + ",".join(names)]
    for i, t in enumerate(rec.time):
        cells = ["" if np.isnan(rec.columns[c][i]) else repr(float(rec.columns[c][i]))
                 for c in names]
        lines.append(f"{float(t)!r}," + ",".join(cells))
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_design_replays_on_python_and_host(seed, tmp_path):
    data, layout = _design(seed)
    spec = parse_sensor_spec(data, f"case {seed}")
    rec = _recording(seed, layout)
    fs = build_feature_set(RecordingSet([rec]), spec)
    columns = _pick(np.random.default_rng(2000 + seed), list(fs.feature_names), 3, 9)
    bundle = train(fs, tmp_path / "bundle", len(columns), columns)
    (tmp_path / "sensors.toml").write_text(tomli_w.dumps(data))
    _write_csv(rec, tmp_path / "rec.csv")
    names = list(fs.feature_names)
    X = np.asarray(fs.X, dtype=np.float32)[:, [names.index(c) for c in bundle.meta["selected"]]]
    W, b = np.asarray(bundle.W, dtype=np.float32), np.asarray(bundle.b, dtype=np.float32)
    expect = np.repeat(b[None, :], len(X), axis=0)
    for i in range(W.shape[0]):                    # the header's sequential float32 sums
        expect = expect + X[:, i:i + 1] * W[i]
    backends = ["python"] + ([] if available_backends()["host"] else ["host"])
    for backend in backends:
        for numeric in sorted({"float32", NUMERICS[seed % len(NUMERICS)]}):
            report, result = simulate(bundle, tmp_path / "rec.csv", backend=backend,
                                      numeric=numeric, workdir=tmp_path / backend, bench=False)
            assert report["predictions"] == report["delivered"] == len(X), (backend, numeric)
            assert report["mismatches"] == 0 and report["unexpected"] == 0, (backend, numeric)
            if numeric == "float32":
                got = np.array([r.scores for r in result.records], dtype=np.float32)
                assert np.array_equal(got.view(np.uint32), expect.view(np.uint32)), backend
