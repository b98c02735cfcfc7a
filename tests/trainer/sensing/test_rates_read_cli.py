"""The read-rate pricing through the command line: ``train`` on a sensors.toml with non-chain
candidates (2, 5, 10 Hz of a 10 Hz accelerometer) under an energy budget prints the energy
that simulate's python backend pays the sensors, the firmware plan pushes each sensor at the
rate it was priced at, and nothing says "a device reads it at" (seed 0 at 1e-5 J: the
selection before this priced 5 and 2 Hz features at 5 Hz, 8.75e-6 J, read at 10 Hz)."""

import csv
import json
import re
import subprocess
import sys

import numpy as np
import pytest
import tomli_w

from tests.trainer.sensing.test_rates_read import energy_by_definition, recording, spec_dict


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "sensorbudget", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("read_rate")
    rec = recording(10, 0)
    names = list(rec.columns)
    with open(tmp / "r.csv", "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["time", *names])
        for i, t in enumerate(rec.time):
            out.writerow([f"{t:.6f}", *("" if np.isnan(rec.columns[c][i]) else
                                        f"{rec.columns[c][i]:g}" for c in names)])
    (tmp / "s.toml").write_bytes(tomli_w.dumps(spec_dict(10)).encode())
    done = _cli("features", "r.csv", "--sensors", "s.toml", "-o", "f.npz", cwd=tmp)
    assert done.returncode == 0, done.stderr
    return tmp


@pytest.mark.parametrize("max_energy", [1e-5, 1.3e-5])
def test_train_prints_the_energy_simulate_pays_at_the_read_rate(folder, max_energy):
    from sensorbudget.firmware_gen.multirate import make_multirate_plan
    from sensorbudget.trainer.bundle.model import load_bundle
    from sensorbudget.trainer.sensing.feature_set import FeatureSet
    from sensorbudget.trainer.sensing.rates import read_above_paid, read_rate

    out = f"b{max_energy:g}"
    train = _cli("train", "f.npz", "--budget", 8, "--max-energy", max_energy, "--lam", 1,
                 "-o", out, cwd=folder)
    assert train.returncode == 0, train.stderr
    printed = float(re.search(r": energy (\S+) J", train.stdout).group(1))
    sim = _cli("simulate", out, "--recordings", "r.csv", "--backend", "python", "--report",
               f"sim{max_energy:g}", cwd=folder)
    assert sim.returncode == 0, sim.stderr
    report = json.loads((folder / f"sim{max_energy:g}" / "report.json").read_text())
    fs = FeatureSet.load(folder / "f.npz")
    bundle = load_bundle(folder / out)
    meta = bundle.meta
    ids = [fs.feature_names.index(f) for f in meta["selected"]]
    assert printed == pytest.approx(report["sensors"]["energy_j"], rel=1e-3)
    assert report["sensors"]["energy_j"] == pytest.approx(energy_by_definition(fs, ids))
    assert printed <= max_energy
    pushed = {s.name: s.rate_hz for s in make_multirate_plan(bundle, name="m",
                                                             numeric="float32").sensors}
    assert meta["sensor_rates_hz"] == pushed and read_above_paid(meta) == {}
    assert not any(s["pushed_above_paid"] for s in report["rates"]["sensors"])
    for s, rate in meta["sensor_rates_hz"].items():
        rates = {fs.feature_rates[i] for i in ids if fs.feature_sensors[i] == s}
        assert rate == read_rate(10, rates)            # 2, 5, 10 of 10 Hz: all listed
    info = _cli("info", out, cwd=folder).stdout
    assert "reads it at" not in train.stdout + info and "required sensors" in info


def test_an_old_bundle_read_faster_than_it_was_priced_is_still_flagged(folder):
    """``read_above_paid`` reads model.json: a bundle written before (5 and 2 Hz features,
    ``sensor_rates_hz`` their highest rate) is flagged at the rate the firmware pushes."""
    from sensorbudget.trainer.sensing.rates import read_above_paid

    done = _cli("train", "f.npz", "--budget", 8, "--max-energy", 1.3e-5, "--lam", 1, "-o",
                "old", cwd=folder)
    assert done.returncode == 0, done.stderr
    meta = json.loads((folder / "old" / "model.json").read_text())
    names = {e["params"]["sample_rate_hz"]: f for e in meta["extractors"] for f in e["features"]
             if e["sensors"] == ["acc"]}
    old = {**meta, "selected": [names[5.0], names[2.0]], "sensor_rates_hz": {"acc": 5.0}}
    assert read_above_paid(old) == {"acc": 10.0}
    assert read_above_paid({**old, "sensor_rates_hz": {"acc": 10.0}}) == {}
