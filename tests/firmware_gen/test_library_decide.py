"""``<name>_decide`` of the C library for a multi-label bundle with calibrated thresholds: the
compiled host library's decisions equal numpy's (the reference scores > the thresholds)."""

import subprocess

import numpy as np
import pytest

from sensorbudget.export.c_decisions import integer_thresholds
from sensorbudget.firmware_gen.library import generate_library
from sensorbudget.firmware_gen.targets import WARNINGS
from tests.export.test_export_decisions import calibrated_bundle
from tests.firmware_gen.library_helpers import expected, need, write_tree

MAIN = r"""
#include <stdio.h>
#include "@n@.h"
#include "data.h"

int main(void)
{
    static @n@_t m;
    @n@_score_t scores[@N@_N_TARGETS];
    @n@_sample_t sample[@N@_N_CHANNELS];
    unsigned char decisions[@N@_N_TARGETS];
    unsigned i, j, c;
    if (@n@_decide(NULL, decisions) != @N@_ERR_ARGUMENT
        || @n@_decide(scores, NULL) != @N@_ERR_ARGUMENT) {
        return 4;
    }
    @n@_init(&m);
    for (i = 0u; i < DATA_N; ++i) {
#if defined(@N@_NUMERIC_FLOAT32)
        for (c = 0u; c < @N@_N_CHANNELS; ++c) {
            sample[c] = data[i][c];
        }
#else
        (void)c;
        @n@_quantize_sample(data[i], sample);
#endif
        if (!@n@_push_sample(&m, sample) || @n@_predict(&m, scores) != @N@_OK
            || @n@_decide(scores, decisions) != @N@_OK) {
            return 3;
        }
        for (j = 0u; j < @N@_N_TARGETS; ++j) {
            putchar(decisions[j] ? '1' : '0');
        }
        putchar('\n');
    }
    return 0;
}
"""


def run_library(lib, values, tmp_path) -> np.ndarray:
    """Build ``lib`` with a program printing the decisions of every pushed vector."""
    name = lib.name
    rows = ",\n".join("{" + ", ".join(f"{float(v)!r}f" for v in row) + "}" for row in values)
    data = (f"#define DATA_N {len(values)}u\nstatic const float data[DATA_N]"
            f"[{values.shape[1]}] = {{\n{rows}\n}};\n")
    files = dict(lib.files)
    files["main.c"] = MAIN.replace("@n@", name).replace("@N@", name.upper())
    files["data.h"] = data
    write_tree(files, tmp_path)
    sources = [str(tmp_path / f) for f in files if f.endswith(".c")]
    exe = tmp_path / "decide"
    proc = subprocess.run(["gcc", *WARNINGS, "-O2", "-I", str(tmp_path / "src"),
                           "-I", str(tmp_path), *sources, "-o", str(exe)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    return np.array([[int(ch) for ch in line] for line in run.stdout.split()])


@pytest.mark.parametrize("numeric, name", [("float32", "sbmodel"), ("q15", "sbmodel"),
                                           ("q31", "sbmodel"), ("q15", "n" * 34)])
def test_host_library_decisions_equal_numpy(tmp_path, numeric, name):
    """Also with the longest name: the wrapped API lines compile (-Wall -Wextra -Werror)."""
    need("gcc")
    bundle, X = calibrated_bundle(tmp_path)
    thresholds = np.asarray(bundle.meta["decision"]["thresholds"])
    assert np.abs(thresholds).max() > 0.05                 # really calibrated, not the sign
    lib = generate_library(bundle, numeric=numeric, name=name)
    values = np.asarray(X, np.float64)[:, bundle.selected_index].astype(np.float32)
    got = run_library(lib, values, tmp_path / "build")
    _, _, scores = expected(lib.plan, bundle, values)
    if lib.plan.fixed:
        ref = np.asarray(scores, np.int64) > np.asarray(
            integer_thresholds(thresholds, lib.header.fixed))
    else:
        ref = np.asarray(scores, np.float32) > thresholds.astype(np.float32)
    np.testing.assert_array_equal(got, ref.astype(int))
    # and the bundle's float64 decisions, except within the numeric's error of a threshold
    clear = np.abs(bundle.decision_scores(X) - thresholds) > (
        2e-5 if not lib.plan.fixed else 2 * lib.header.error_bound)
    np.testing.assert_array_equal(got[clear], bundle.predict(X)[clear])
    assert clear.mean() > 0.8
    assert not np.array_equal(got, (bundle.decision_scores(X) > 0).astype(int))


def test_regression_library_has_no_decide(tmp_path):
    from tests.export.helpers import synthetic_bundle

    bundle, _ = synthetic_bundle(tmp_path, "regression")
    lib = generate_library(bundle)
    assert "_decide" not in lib.files["src/sbmodel.h"] + lib.files["src/sbmodel.c"]
