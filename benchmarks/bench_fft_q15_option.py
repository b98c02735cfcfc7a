"""The Q15 FFT inside the product (issue 29 item 3, ``--fft q15``): what it saves per prediction
on the devices, and what it costs in feature accuracy, side by side in one run.

Usage: python benchmarks/bench_fft_q15_option.py [--windows 32 64]

Design: BasicMotions (80 recordings of accelerometer and gyroscope at 10 Hz), every channel's
bandpower 0.5-2 Hz and 2-5 Hz, dominant frequency, centroid and entropy (Hann), 8 features
chosen by greedy RLS, at a window of 32 (hop 16) and 64 (hop 32) samples. Q15 firmware with
the spectra from the float32 FFT on the Q15 samples (``--fft float32``, the default) and from
the Q15 FFT (``--fft q15``), for the Cortex-M4F (mps2-an386 on QEMU, instructions), the
Cortex-M3 (mps2-an385 on QEMU, instructions; no FPU: soft float) and the Uno (ATmega328P on
simavr, cycles): ``simulate``'s extractor cost per prediction (median over every window of
the 80 recordings) and BENCH's recomputation, the linked static RAM and flash, and the
mismatches against the Python reference (must be 0). Ratios are q15 / float32 on the same
image from the same run. A firmware the RAM check refuses is a row saying so (the Uno at a
64-sample window needs 2214 B with the float32 FFT's buffers; it fits with the Q15 FFT's).

Feature error: on the same recordings, each selected feature from the two firmwares (their
reference, bit for bit with the devices above) against the float64 feature computed here from
the raw (unquantised) samples with numpy's ``rfft`` (mean removed, periodic Hann, ``|X[k]|^2``
for bins 1..M/2: the definition of trainer.sensing.spectral in exact arithmetic), as a
fraction of that feature's training range (the model's input scale): median, 95th percentile
and maximum over the windows. Then the scores: the largest difference of the Q15 firmware's
from the float64 model on the float32 features, with either transform, beside the stated bound.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks.benchutil import table  # noqa: E402
from tests.paths import SHARED  # noqa: E402

DATA = SHARED / "basic_motions"
CHANNELS = ["acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"]
KINDS = ["bandpower:0.5-2", "bandpower:2-5", "domfreq", "centroid", "entropy"]
IMAGES = (("Cortex-M4F", "mps2-an386", "qemu-m4f"), ("Cortex-M3", "mps2-an385", "qemu-m3"),
          ("Uno", "arduino-uno", "simavr"))
BUDGET = 8


def sensors_toml(window: int) -> str:
    from tests.firmware_gen.conftest import bm_sensors_toml

    kinds = ", ".join(f'"{k}"' for k in KINDS)
    return bm_sensors_toml(f"[[features]]\nchannels = {CHANNELS!r}\nextractors = [{kinds}]\n"
                           .replace("'", '"'), window, window // 2)


def design(window: int, work: Path):
    from sensorbudget.trainer.sensing.feature_set import load_feature_set
    from tests.firmware_gen.conftest import train

    toml = work / f"spectral{window}.sensors.toml"
    toml.write_text(sensors_toml(window))
    return train(load_feature_set(DATA, toml), work / f"bundle{window}", BUDGET)


def device_row(bundle, target: str, backend: str, fft: str, work: Path) -> dict:
    """simulate's and the linked image's figures, or ``{"fit": why}`` when the firmware is
    refused by the RAM check (the Uno at a 64-sample window with the float32 FFT)."""
    import re

    import sensorbudget as sb
    from sensorbudget.firmware_gen.errors import FirmwareGenError

    try:
        fw = sb.firmware(bundle.path, target=target, numeric="q15", fft=fft, build=True)
    except FirmwareGenError as exc:
        found = re.search(r"needs (\d+) bytes of RAM.* has (\d+)", str(exc))
        if found is None:
            raise
        return {"fit": f"does not fit: needs {found[1]} B of RAM, has {found[2]}"}
    fw.save(work)
    r = sb.simulate(fw, DATA, backend=backend).report
    return {"ext": r["cost"]["extractors"]["median"], "acc": r["accuracy"]["device"]["accuracy"],
            "bench": r["cost"]["bench"]["extractors"]["per_run"], "unit": r["cost"]["unit"],
            "ram": fw.footprint["ram_bytes"], "flash": fw.footprint["flash_bytes"],
            "n": r["predictions"], "bad": r["mismatches"]}


def _f64(kind: str, arg, w: np.ndarray, rate: float) -> np.ndarray:
    """The float64 feature of windows ``w`` (N x windows, raw samples)."""
    from sensorbudget.trainer.sensing import spectral

    n = w.shape[0]
    m = spectral.fft_size(n)
    d = (w - w.mean(axis=0)) * (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n))[:, None]
    P = np.abs(np.fft.rfft(d, n=m, axis=0)) ** 2
    f = np.arange(m // 2 + 1) * rate / m
    if kind == "bandpower":
        return P[list(spectral.band_bins(*arg, n, rate))].sum(axis=0)
    body, fb = P[1:], f[1:]
    total = body.sum(axis=0)
    if kind == "domfreq":
        return fb[np.argmax(body, axis=0)]
    if kind == "centroid":
        return np.where(total > 0, (fb[:, None] * body).sum(axis=0) / np.where(
            total > 0, total, 1), 0)
    p = body / np.where(total > 0, total, 1)
    h = -(np.where(p > 0, p * np.log2(np.where(p > 0, p, 1)), 0)).sum(axis=0)
    return np.where(total > 0, h / (math.log2(m // 2) if m > 2 else 1.0), 0)


def feature_errors(bundle) -> list:
    """Rows: per selected feature, the error of the fft=float32 and fft=q15 features against
    the float64 ones, as % of the training range (median / p95 / max over the windows)."""
    from sensorbudget.firmware_gen import reference
    from sensorbudget.firmware_gen.plan import make_plan
    from sensorbudget.trainer.sensing.recordings import load_recordings
    from tests.firmware_gen.helpers import device_samples

    plans = {fft: make_plan(bundle, name="sbmodel", numeric="q15", fft=fft)
             for fft in ("float32", "q15")}
    plan, plain = plans["q15"], make_plan(bundle, name="sbmodel", numeric="float32")
    recs = load_recordings(DATA, plan.sample_rate_hz).recordings
    got = {fft: [] for fft in plans}
    want = []
    for rec in recs:
        for fft, p in plans.items():
            got[fft].append(reference.window_features(p, device_samples(p, rec.columns)))
        starts = np.arange(0, len(rec.time) - plan.window + 1, plan.hop)
        cols = np.empty((len(starts), plan.k))
        for e in plan.extractors:
            x = np.asarray(rec.columns[plan.channels[e.channels[0]]], dtype=np.float64)
            w = np.stack([x[s:s + plan.window] for s in starts], axis=1)
            cols[:, list(e.slots)] = _f64(e.kind, e.full_spec.arg, w, plan.sample_rate_hz
                                          )[:, None]
        want.append(cols)
        # the float64 definition is the float32 one's: check on the float samples
        f32 = reference.window_features(plain, device_samples(plain, rec.columns))
        bp = [j for j, f in enumerate(plan.features) if "bandpower" in f]
        assert np.allclose(f32[:, bp], cols[:, bp], rtol=1e-3, atol=1e-3), "float64 definition"
    want = np.concatenate(want)
    width = np.asarray(bundle.arrays["x_max"], float) - np.asarray(bundle.arrays["x_min"], float)
    rows = []
    for j, name in enumerate(plan.features):
        row = [name]
        for fft in plans:
            err = np.abs(np.concatenate(got[fft])[:, j].astype(np.float64) - want[:, j])
            err = 100.0 * err / width[j]
            row.append(f"{np.median(err):.2g} / {np.percentile(err, 95):.2g} / {err.max():.2g}")
        rows.append(row)
    return rows


def score_errors(bundle) -> list:
    """Max |Q15 firmware score - float64 model on the float32 features| over every window of
    the recordings, for fft=float32 and fft=q15, the stated stream bound and the scores' size."""
    from sensorbudget.firmware_gen import generate_firmware, reference
    from sensorbudget.firmware_gen.plan import make_plan
    from sensorbudget.trainer.sensing.recordings import load_recordings
    from tests.firmware_gen.helpers import device_samples

    plain = make_plan(bundle, name="sbmodel", numeric="float32")
    recs = load_recordings(DATA, plain.sample_rate_hz).recordings
    want = [bundle.selected_scores(reference.window_features(
        plain, device_samples(plain, r.columns)).astype(np.float64)) for r in recs]
    out = []
    for fft in ("float32", "q15"):
        fw = generate_firmware(bundle, target="host", numeric="q15", fft=fft)
        fx, worst = fw.header.fixed, 0.0
        for r, w in zip(recs, want):
            X = reference.window_features(fw.plan, device_samples(fw.plan, r.columns))
            ints = reference.scores(fw.plan, bundle, fx, reference.model_inputs(fw.plan, fx, X))
            real = np.asarray(ints, dtype=np.float64) * 2.0 ** -fx.score_frac_bits
            worst = max(worst, float(np.abs(real - w).max()))
        out.append(f"{worst:.3g}")
    top = max(float(np.abs(w).max()) for w in want)
    return [*out, f"{fw.manifest['stream_error_bound']:g}", f"{top:.3g}"]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--windows", type=int, nargs="+", default=[32, 64])
    args = ap.parse_args(argv)
    rows, errors, scores = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for window in args.windows:
            bundle = design(window, work)
            for label, target, backend in IMAGES:
                m = {fft: device_row(bundle, target, backend, fft,
                                     work / f"fw{window}_{target}_{fft}")
                     for fft in ("float32", "q15")}
                a, b = m["float32"], m["q15"]
                if "fit" in a or "fit" in b:
                    rows.append([str(window), label, a.get("unit", b.get("unit")),
                                 a.get("fit") or f"{a['ext']:g}",
                                 b.get("fit") or f"{b['ext']:g}",
                                 *[""] * 4, f"{a.get('ram', '-')} / {b.get('ram', '-')}",
                                 f"{a.get('flash', '-')} / {b.get('flash', '-')}",
                                 f"{a.get('n', '-')} / {a.get('bad', '-')}, "
                                 f"{b.get('n', '-')} / {b.get('bad', '-')}",
                                 f"{a.get('acc', '-')} / {b.get('acc', '-')}"])
                    continue
                rows.append([str(window), label, a["unit"], f"{a['ext']:g}", f"{b['ext']:g}",
                             f"{b['ext'] / a['ext']:.2f}x", f"{a['bench']:.0f}",
                             f"{b['bench']:.0f}", f"{b['bench'] / a['bench']:.2f}x",
                             f"{a['ram']} / {b['ram']}", f"{a['flash']} / {b['flash']}",
                             f"{a['n']} / {a['bad']}, {b['n']} / {b['bad']}",
                             f"{a['acc']:.3f} / {b['acc']:.3f}"])
            errors += [[str(window), *r] for r in feature_errors(bundle)]
            scores.append([str(window), *score_errors(bundle)])
    print(f"BasicMotions, 80 recordings, {BUDGET} spectral features (greedy RLS), Q15 firmware; "
          "extractor cost per prediction (median over the windows), fft=float32 vs fft=q15")
    print(table(["window", "core", "unit", "float32 FFT", "Q15 FFT", "ratio",
                 "BENCH float32", "BENCH Q15", "ratio", "static RAM B (f32 / q15)",
                 "flash B (f32 / q15)", "predictions / mismatches (f32, q15)",
                 "device accuracy f32 / q15 (in-sample: all 80 trained on)"], rows))
    print("\nScores against the float64 model on the float32 features of the raw samples "
          "(in-sample, 80 recordings): max |difference|, and the stated Q15 stream bound")
    print(table(["window", "fft=float32", "fft=q15", "stated bound", "largest |score|"],
                scores))
    print("\nFeature error against float64 features of the raw samples, % of the feature's "
          "training range: median / 95th percentile / max over the windows")
    print(table(["window", "feature", "fft=float32 (Q15 samples)", "fft=q15"], errors))


if __name__ == "__main__":
    main()
