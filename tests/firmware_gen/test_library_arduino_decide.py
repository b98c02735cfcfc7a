"""The Arduino example of a multi-label library prints, after the scores, the label decisions
of ``<name>_decide`` (the bundle's calibrated thresholds): on simavr they equal numpy's
(reference scores > thresholds)."""

import numpy as np
import pytest

from sensorbudget.export.c_decisions import integer_thresholds
from sensorbudget.firmware_gen.library import generate_library
from tests.export.test_export_decisions import calibrated_bundle
from tests.firmware_gen.library_helpers import expected
from tests.firmware_gen.test_library_arduino import (  # noqa: F401 (fixture)
    Uno,
    build_sketch,
    harness,
    text_of,
)


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_arduino_example_prints_calibrated_decisions(harness, tmp_path, numeric):  # noqa: F811
    bundle, X = calibrated_bundle(tmp_path / "bundle")
    lib = generate_library(bundle, numeric=numeric)
    plan, t = lib.plan, lib.plan.t
    elf = build_sketch(lib, tmp_path / "sketch")
    values = np.asarray(X, np.float64)[:40, bundle.selected_index]
    values = np.round(values, 4).astype(np.float32)        # exactly what the sketch reads
    _, _, ref = expected(plan, bundle, values)
    th = np.asarray(bundle.meta["decision"]["thresholds"])
    if plan.fixed:
        want = np.asarray(ref, np.int64) > np.asarray(integer_thresholds(th, lib.header.fixed))
    else:
        want = np.asarray(ref, np.float32) > th.astype(np.float32)
    uno = Uno(harness, elf)
    try:
        hello = uno.line()
        assert hello.endswith(",".join(f"{name}:on" for name in plan.targets))
        printed = []
        for row in values:
            uno.send(",".join(text_of(v) for v in row) + "\n")
            printed.append(uno.line().split(","))
    finally:
        uno.close()
    assert [len(p) for p in printed] == [1 + 2 * t] * len(values)
    decisions = np.array([[int(v) for v in p[1 + t:]] for p in printed])
    np.testing.assert_array_equal(decisions, want.astype(int))
    assert 0 < decisions.mean() < 1
