"""``fft="q15"`` on the devices (issue 29 item 3): the firmware built for the Cortex-M4F (QEMU:
the DSP-extension butterflies), the Cortex-M3 (QEMU: the portable C) and the ATmega328P (simavr:
one stage per pass, tables in flash) predicts every window of real BasicMotions recordings as
the Python reference does, bit for bit; ``simulate --fft q15`` (CLI) and ``sb.simulate`` of
``sb.firmware(..., fft="q15")`` (API) give the same predictions and costs; the stated Q15 stream
error bound holds on the training recordings."""

from __future__ import annotations

import copy
import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner

import sensorbudget as sb
from sensorbudget.firmware_gen import generate_firmware
from tests.firmware_gen.conftest import BASIC_MOTIONS
from tests.firmware_gen.test_fft_q15_option import (  # noqa: F401  (fixtures)
    fft_bundle, fft_features, spectral_only_bundle)


@pytest.mark.parametrize("backend,numeric,window,hop", [
    ("qemu-m4f", "q15", 16, 8), ("qemu-m4f", "q31", 33, 7), ("qemu-m3", "q15", 12, 5),
    ("simavr", "q15", 16, 8), ("unicorn-m4f", "q15", 9, 13)])
def test_device_predictions_equal_the_reference(tmp_path, fft_bundle, bm_recordings,  # noqa: F811
                                                backend, numeric, window, hop):
    from sensorbudget.device_sim.backends import available_backends, make_backend
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.device_sim.replay import replay

    reason = available_backends().get(backend)
    if reason is not None:
        pytest.skip(f"backend {backend}: {reason}")
    model = ReferenceModel(fft_bundle, numeric, fft="q15")
    assert model.plan.fft == "q15"
    model.plan = dataclasses.replace(model.plan, window=window, hop=hop)
    model.window, model.hop = window, hop
    rset = copy.copy(bm_recordings)
    rset.recordings = [bm_recordings.recordings[r] for r in (3, 17, 29, 44)]
    be = make_backend(backend, model=model, workdir=tmp_path)
    try:
        res = replay(be, model, rset)
        be.quit()
    finally:
        be.close()
    assert len(res.records) > 20 and res.count("delivered") == len(res.records)
    assert res.mismatches == 0 and res.unexpected == 0
    source = next(tmp_path.rglob("sbmodel_stream.c")).read_text()
    assert "sbmodel_power_spectrum_q15(sbmodel_q" in source


def test_simulate_cli_equals_the_api(tmp_path, fft_bundle):  # noqa: F811
    """CLI and API on the same bundle and recordings, QEMU Cortex-M4F (instruction counts:
    deterministic): the same predictions, accuracy and costs; an API Firmware made with
    fft="q15" is simulated with its own transform."""
    from sensorbudget.cli_simulate import simulate_command
    from sensorbudget.device_sim.backends import available_backends

    backend = "qemu-m4f"
    if available_backends().get(backend) is not None:
        pytest.skip(f"backend {backend}: {available_backends()[backend]}")
    test = str(BASIC_MOTIONS / "BasicMotions_TEST.ts")
    result = CliRunner().invoke(simulate_command, [
        str(fft_bundle.path), "--recordings", test, "--backend", backend, "--numeric", "q15",
        "--fft", "q15", "--report", str(tmp_path / "cli")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert f"{backend} (q15, spectra from the Q15 FFT): " in result.output
    cli = json.loads((tmp_path / "cli" / "report.json").read_text())
    assert cli["fft"] == "q15"
    api = sb.simulate(fft_bundle.path, test, backend=backend, numeric="q15", fft="q15").report
    assert cli["predictions"] == api["predictions"] > 100
    assert cli["mismatches"] == api["mismatches"] == 0
    assert cli["accuracy"] == api["accuracy"]
    assert {k: cli["cost"][k] for k in ("extractors", "model")} == {
        k: api["cost"][k] for k in ("extractors", "model")}
    fw = sb.firmware(fft_bundle.path, target="host", numeric="q15", fft="q15")
    sim = sb.simulate(fw, test, backend="python")
    assert sim.model.plan.fft == "q15" and sim.report["mismatches"] == 0
    assert sim.report["accuracy"] == cli["accuracy"]
    plain_sim = sb.simulate(fft_bundle.path, test, backend="python", numeric="q15")
    plain = plain_sim.save(tmp_path / "plain") and plain_sim.report
    assert "fft" not in plain and plain["mismatches"] == 0
    # the summary and compare name the transform as the printed line does
    assert "(q15, spectra from the Q15 FFT)" in (tmp_path / "cli" / "summary.md").read_text()
    backend_row = dict((m, (x, y)) for m, x, y in sb.compare(tmp_path / "plain",
                                                             tmp_path / "cli").rows)["backend"]
    assert backend_row == ("python (q15)", f"{backend} (q15, spectra from the Q15 FFT)")
    with pytest.raises(Exception, match="fft='float32' differs from the firmware's 'q15'"):
        sb.simulate(fw, test, backend="python", fft="float32")


def test_stream_error_bound_holds_on_the_training_recordings(fft_bundle,  # noqa: F811
                                                             bm_recordings):
    """The real fixed-point scores of fft=q15 firmware (the reference, bit for bit with the
    devices above) on every training recording, against the float64 model on the float32
    features of the same samples: within the stated stream bound (the spectral kinds get only
    their range term, firmware_gen.bounds), and farther than the float32-FFT firmware's."""
    from sensorbudget.firmware_gen import reference
    from sensorbudget.firmware_gen.plan import make_plan
    from tests.firmware_gen.helpers import device_samples

    float_plan = make_plan(fft_bundle, name="sbmodel", numeric="float32")
    want = [fft_bundle.selected_scores(reference.window_features(
        float_plan, device_samples(float_plan, r.columns)).astype(np.float64))
        for r in bm_recordings.recordings]
    for numeric in ("q15", "q31"):
        worst = {}
        for fft in ("float32", "q15"):
            fw = generate_firmware(fft_bundle, target="host", numeric=numeric, fft=fft)
            fixed, scale = fw.header.fixed, 2.0 ** -fw.header.fixed.score_frac_bits
            worst[fft] = 0.0
            for r, w in zip(bm_recordings.recordings, want):
                X = reference.window_features(fw.plan, device_samples(fw.plan, r.columns))
                ints = reference.scores(fw.plan, fft_bundle, fixed,
                                        reference.model_inputs(fw.plan, fixed, X))
                real = np.asarray(ints, dtype=np.float64) * scale
                worst[fft] = max(worst[fft], float(np.abs(real - w).max()))
            stated = fw.manifest["stream_error_bound"]
            assert 0 < worst[fft] <= stated, (numeric, fft, worst[fft], stated)
        assert worst["q15"] > worst["float32"], worst


@pytest.mark.parametrize("target", ["arduino-uno", "mps2-an385"])
def test_memory_estimates_hold_against_the_linked_images(  # noqa: F811
        fft_bundle, spectral_only_bundle, target):
    """The plan's static RAM estimate (the Q15 FFT's buffers: 4 M + 4 bytes) within RAM_MARGIN
    of the linked image, flash within the target's margin, for a bundle whose spectra all read
    the Q15 FFT (less RAM than with fft=float32) and one that also keeps a float32 FFT."""
    import shutil

    from sensorbudget.firmware_gen.memory import RAM_MARGIN
    from sensorbudget.firmware_gen.memory_flash import flash_margin
    from sensorbudget.firmware_gen.targets import get_target

    tgt = get_target(target)
    if shutil.which("make") is None or shutil.which(tgt.cc) is None:
        pytest.skip(f"no {tgt.cc}")
    ram = {}
    for label, bundle in (("mixed", fft_bundle), ("spectral", spectral_only_bundle)):
        for fft in ("float32", "q15"):
            fw = sb.firmware(bundle.path, target=target, numeric="q15", fft=fft, build=True)
            linked = fw.footprint
            assert abs(linked["ram_bytes"] - fw.manifest["ram_estimate"]) <= RAM_MARGIN
            assert abs(linked["flash_bytes"] - fw.manifest["flash_estimate"]) <= flash_margin(tgt)
            ram[label, fft] = linked["ram_bytes"]
    assert ram["spectral", "q15"] < ram["spectral", "float32"]
