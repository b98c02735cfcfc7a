"""Generation without a compiler: plan, determinism, identifiers, refusals, reference helpers."""

import json
import re

import numpy as np
import pytest

from sensorbudget.firmware_gen import FirmwareGenError, generate_firmware, make_plan
from sensorbudget.firmware_gen.plan import power_of_two_above, resolve_full_scale
from sensorbudget.firmware_gen.reference import quantize_samples
from tests.export.helpers import synthetic_bundle
from tests.firmware_gen.conftest import KIND_FEATURES


def test_plan_follows_the_bundle(kinds_bundle):
    plan = make_plan(kinds_bundle, name="m", numeric="float32")
    meta = kinds_bundle.meta
    assert plan.channels == ("acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z")
    assert (plan.window, plan.hop, plan.k, plan.t) == (20, 10, 14, 4)
    assert plan.features == tuple(meta["selected"])
    assert sorted(e.name for e in plan.extractors) == sorted(KIND_FEATURES)
    assert sorted(s for e in plan.extractors for s in e.slots) == list(range(14))
    corr = next(e for e in plan.extractors if e.kind == "corr")
    assert [plan.channels[c] for c in corr.channels] == ["acc_y", "gyro_y"]
    assert all(not e.fixed for e in plan.extractors) and plan.full_scale is None


def test_fixed_plan_uses_integer_definitions_where_they_exist(kinds_bundle):
    plan = make_plan(kinds_bundle, name="m", numeric="q15", full_scale={"*": 40})
    assert plan.full_scale == (64.0,) * 6          # rounded up to a power of two
    fixed = {e.kind for e in plan.extractors if e.fixed}
    assert fixed == {"mean", "min", "max", "ptp", "mad", "zcr", "energy", "last", "rms",
                     "mag_mean", "mag_max"}


def test_generation_is_deterministic_and_complete(kinds_bundle):
    a = generate_firmware(kinds_bundle, target="cortex-m4f", numeric="q15",
                          full_scale={"*": 64})
    b = generate_firmware(kinds_bundle, target="cortex-m4f", numeric="q15",
                          full_scale={"*": 64})
    assert a.files == b.files
    from sensorbudget.firmware_gen.targets import get_target, runtime_files

    assert set(a.files) == {
        "sbmodel.h", "sbmodel_stream.h", "sbmodel_stream.c", "sbmodel_kernel.h", "main.c",
        "Makefile", "firmware.json", "PROTOCOL.md",
        *runtime_files(get_target("cortex-m4f"))}
    assert {"sbfw_hal.h", "sbfw_protocol.c", "sbfw_hal_cortex_m.c"} <= set(a.files)
    manifest = json.loads(a.files["firmware.json"])
    assert manifest["numeric"] == "q15" and manifest["full_scale"] == [64.0] * 6
    assert manifest["score_frac_bits"] == a.header.fixed.score_frac_bits
    assert "-ffp-contract=off" in a.files["Makefile"] and "-Werror" in a.files["Makefile"]
    for text in a.files.values():
        text.encode("ascii")
        assert not re.search(r"\d{4}-\d\d-\d\d", text)          # no timestamps


def test_only_the_needed_extractors_are_emitted(bm_bundle):
    from sensorbudget.firmware_gen.passes_c import pass_stats

    fw = generate_firmware(bm_bundle, target="host")
    source = fw.files["sbmodel_stream.c"]
    kinds = {e.kind for e in fw.plan.extractors}
    # kinds with a routine of their own (the others come out of the channel passes)
    for kind in ("mean", "mad", "zcr", "corr"):
        defined = re.search(rf"static float sbmodel_f_{kind}\(", source) is not None
        needed = (kind in kinds and kind != "mean") or (kind == "mean" and "zcr" in kinds)
        assert defined == needed, kind
    for kind in ("std", "min", "max", "ptp", "rms", "energy", "last", "mag_mean", "mag_std",
                 "mag_max"):
        assert re.search(rf"static float sbmodel_f_{kind}\(", source) is None, kind
    # the window pass computes exactly the statistics the extractors take from it
    comment = source[source.index("One pass over the window"):source.index("*/", source.index(
        "One pass over the window"))]
    emitted = {s.strip() for line in comment.splitlines() if ": " in line
               for s in line.split(": ", 1)[1].split(",")}
    wanted = {s for e in fw.plan.extractors for s in (pass_stats(e) or ())}
    assert emitted == wanted and wanted


def test_identifiers_are_sanitized_and_checked(kinds_bundle):
    for bad in ("1abc", "int", "my-model", "sbfw_x"):
        with pytest.raises(FirmwareGenError):
            generate_firmware(kinds_bundle, target="host", name=bad)
    fw = generate_firmware(kinds_bundle, target="host", name="Watch_2")
    assert "Watch_2_stream_push" in fw.files["Watch_2_stream.h"]
    assert "#define WATCH_2_CH_ACC_X 0u" in fw.files["Watch_2_stream.h"]


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_feature_table_bundles_take_the_feature_vector(tmp_path, numeric):
    """No extractor kinds (a plain table): each selected feature is a channel read by a
    ``last`` extractor over windows of one sample, so one push is one prediction."""
    bundle, X = synthetic_bundle(tmp_path, "regression")
    plan = make_plan(bundle, name="m", numeric=numeric)
    selected = tuple(bundle.meta["selected"])
    assert plan.input_kind == "features" and plan.channels == selected == plan.features
    assert (plan.window, plan.hop) == (1, 1)
    assert [(e.kind, e.channels, e.slots) for e in plan.extractors] == \
        [("last", (i,), (i,)) for i in range(len(selected))]
    if numeric == "q15":      # full scales from the training ranges, as for recordings
        bound = np.abs(X[:, bundle.meta["selected_index"]]).max(axis=0)
        assert plan.full_scale == tuple(power_of_two_above(b) for b in bound)
    fw = generate_firmware(bundle, target="host", numeric=numeric)
    manifest = json.loads(fw.files["firmware.json"])
    assert manifest["input_kind"] == "features" and manifest["channels"] == list(selected)


def test_refuses_bundles_with_some_extractors_undescribed(tmp_path):
    names = [f"f{i}" for i in range(8)]
    params = {"kind": "mean", "channels": ["a"], "window": 4, "hop": 2}
    extractors = [{"name": f, "features": [f], "sensors": [], "cost": 1.0,
                   "params": params if i < 4 else {}} for i, f in enumerate(names)]
    bundle, _ = synthetic_bundle(tmp_path, "regression", budget=8, extractors=extractors)
    with pytest.raises(FirmwareGenError, match="has no extractor kind.*while others do"):
        generate_firmware(bundle, target="host")


def test_fixed_point_needs_a_full_scale_per_channel(kinds_bundle):
    # a bundle written before the recordings' channel bounds were stored (issue 32)
    old = type(kinds_bundle)({k: v for k, v in kinds_bundle.meta.items()
                              if k != "channel_bounds"}, kinds_bundle.arrays)
    with pytest.raises(FirmwareGenError, match="full scale of channel 'acc_y'.*--full-scale"):
        generate_firmware(old, target="host", numeric="q15", full_scale={"acc_x": 32.0})
    assert make_plan(kinds_bundle, name="m", numeric="q15").full_scale   # bounds stored now
    with pytest.raises(FirmwareGenError, match="does not read"):
        generate_firmware(kinds_bundle, target="host", numeric="q15",
                          full_scale={"*": 32.0, "nope": 1.0})


def test_unknown_target_and_numeric(kinds_bundle):
    with pytest.raises(FirmwareGenError, match="target"):
        generate_firmware(kinds_bundle, target="esp32")
    with pytest.raises(FirmwareGenError, match="numeric"):
        generate_firmware(kinds_bundle, target="host", numeric="q7")


def test_full_scale_from_training_ranges(aq_bundle):
    plan = make_plan(aq_bundle, name="m", numeric="q15")
    assert all(fs > 0 and np.log2(fs) == int(np.log2(fs)) for fs in plan.full_scale)


def test_power_of_two_helpers():
    assert [power_of_two_above(v) for v in (5, 8, 0.3, 1)] == [8, 16, 0.5, 2]
    assert resolve_full_scale(["a", "b"], {"a": 8, "*": 5}, {}) == (8.0, 8.0)
    assert resolve_full_scale(["a"], None, {"a": 3.0}) == (4.0,)


def test_quantize_samples_rounds_half_away_and_saturates(kinds_bundle):
    plan = make_plan(kinds_bundle, name="m", numeric="q15", full_scale={"*": 1.0})
    x = np.zeros((5, 6))
    x[:, 0] = [0.5 / 32768 * 3, -1.5 / 32768, 2.0, -2.0, np.nan]
    q = quantize_samples(plan, x)[:, 0]
    assert q.dtype == np.int16 and q.tolist() == [2, -2, 32767, -32768, 0]
