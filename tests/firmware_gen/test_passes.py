"""The channel passes of ``<name>_stream.c`` compiled on the host and run on a real recording, at
every ring-buffer offset (windows and hops whose starts cover every position and every unroll
remainder), against :mod:`sensorbudget.firmware_gen.reference` bit for bit; and their structure: one pass per
channel, named for the statistics it computes."""

from __future__ import annotations

import dataclasses
import math
import re
import shutil
import subprocess

import numpy as np
import pytest

from sensorbudget.firmware_gen import generate_firmware, reference
from sensorbudget.firmware_gen.plan import make_plan
from sensorbudget.firmware_gen.q15_c import int_inputs
from sensorbudget.firmware_gen.targets import FP_FLAGS, WARNINGS
from tests.firmware_gen.conftest import bm_full_scale
from tests.firmware_gen.helpers import device_samples, same_bits

HARNESS = r"""
#include <stdio.h>
#include "sbmodel.h"
#include "sbmodel_stream.h"

int main(void)
{
    static sbmodel_stream_t s;
    sbmodel_sample_t frame[SBMODEL_N_CHANNELS];
    sbmodel_stream_reset(&s);
    while (fread(frame, sizeof frame, 1, stdin) == 1) {
        if (sbmodel_stream_push(&s, frame)) {
            fwrite(s.features, sizeof s.features, 1, stdout);
            fwrite(SBMODEL_STREAM_INPUTS(&s), sizeof SBMODEL_STREAM_INPUTS(&s), 1, stdout);
            sbmodel_stream_compute(&s);     /* again, as BENCH does: the same features */
            fwrite(s.features, sizeof s.features, 1, stdout);
            fwrite(SBMODEL_STREAM_INPUTS(&s), sizeof SBMODEL_STREAM_INPUTS(&s), 1, stdout);
        }
    }
    return 0;
}
"""


def run_stream(tmp_path, fw, samples, with_inputs: bool = False):
    """Features of every window of ``samples`` from the generated stream code, built with gcc
    (and with ``with_inputs`` its model inputs). A Q15 input quantised from an integer feature
    (:func:`sensorbudget.firmware_gen.q15_c.int_inputs`) has no float feature (0 here)."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    for name in ("sbmodel.h", "sbmodel_stream.h", "sbmodel_stream.c"):
        (tmp_path / name).write_text(fw.files[name])
    (tmp_path / "harness.c").write_text(HARNESS)
    exe = tmp_path / "harness"
    subprocess.run(["gcc", *WARNINGS, "-O2", *FP_FLAGS, "-o", str(exe), "harness.c",
                    "sbmodel_stream.c", "-lm"], cwd=tmp_path, check=True)
    out = subprocess.run([str(exe)], input=np.ascontiguousarray(samples).tobytes(),
                         capture_output=True, check=True).stdout
    k = fw.plan.k
    kind = {"float32": "<f4", "q15": "<i2", "q31": "<i4"}[fw.plan.numeric]
    rec = np.dtype([("features", "<f4", (k,)), ("inputs", kind, (k,))])
    both = np.frombuffer(out, dtype=rec).reshape(-1, 2)
    assert same_bits(both["features"][:, 0], both["features"][:, 1])
    assert np.array_equal(both["inputs"][:, 0], both["inputs"][:, 1])
    if with_inputs:
        return both["features"][:, 0], both["inputs"][:, 0].astype(np.int64)
    return both["features"][:, 0]


def float_inputs(fw) -> list:
    """Model inputs whose float feature the stream computes (all but those of
    :func:`sensorbudget.firmware_gen.q15_c.int_inputs`)."""
    ints = int_inputs(fw.plan, fw.header.fixed)
    return [j for j in range(fw.plan.k) if j not in ints]


@pytest.mark.parametrize("numeric", ["float32", "q15", "q31"])
@pytest.mark.parametrize("window,hop", [(7, 3), (21, 5), (64, 12), (5, 5), (4, 9)])
def test_every_kind_at_every_ring_offset(tmp_path, kinds_bundle, bm_recordings, numeric,
                                         window, hop):
    scales = bm_full_scale(bm_recordings) if numeric != "float32" else None
    plan = make_plan(kinds_bundle, name="sbmodel", numeric=numeric, full_scale=scales)
    plan = dataclasses.replace(plan, window=window, hop=hop)
    fw = generate_firmware(kinds_bundle, target="host", numeric=numeric, plan=plan)
    samples = np.concatenate([device_samples(plan, bm_recordings.recordings[r].columns)
                              for r in (4, 14, 24, 34)])
    got, inputs = run_stream(tmp_path, fw, samples, with_inputs=True)
    expected = reference.window_features(plan, samples)
    # every start the ring buffer can hold with this hop comes round
    assert got.shape == expected.shape and len(got) >= window // math.gcd(window, hop)
    cols = float_inputs(fw)
    assert same_bits(got[:, cols], expected[:, cols])
    if numeric != "float32":
        assert len(cols) < plan.k if numeric == "q15" else len(cols) == plan.k
        fixed = fw.header.fixed
        assert np.array_equal(inputs, reference.model_inputs(plan, fixed, expected))


def test_one_window_pass_loads_each_sample_once(kinds_bundle):
    plan = make_plan(kinds_bundle, name="sbmodel", numeric="float32")
    acc = [plan.channels.index(c) for c in ("acc_x", "acc_y", "acc_z")]
    ext = [dataclasses.replace(e, channels=(acc[0],)) for e in plan.extractors
           if e.kind in ("mean", "ptp", "rms", "last")]
    ext += [dataclasses.replace(e, channels=tuple(acc)) for e in plan.extractors
            if e.kind == "mag_mean"]
    plan = dataclasses.replace(plan, extractors=tuple(ext))
    source = generate_firmware(kinds_bundle, target="host", plan=plan).files["sbmodel_stream.c"]
    assert re.findall(r"^static void sbmodel_(\w+)\(", source, re.M) == ["window_pass"]
    assert source.count("sbmodel_window_pass(s, start, st);") == 1
    body = source[source.index("One pass over the window"):]
    body = body[:body.index("\n}\n")]
    # acc_x: sum, min, max, sq in one group; the magnitude reuses the loaded samples
    assert '"acc_x": sum, min, max, sq' in body and '|"acc_x", "acc_y", "acc_z"|: sum' in body
    # two loops (the ring buffer's two segments), each sample of a channel loaded once per loop,
    # no per-sample call or wrap test
    assert body.count("for (") == 2 and "_NEXT" not in body and "sbmodel_f_" not in body
    for c in acc:
        assert body.count(f"row[{c}u]") == 2


ISQRT_HARNESS = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
@ISQRT@
int main(void)
{
    uint32_t v;
    while (fread(&v, sizeof v, 1, stdin) == 1) {
        const uint16_t r = (uint16_t)sbmodel_isqrt32(v);
        fwrite(&r, sizeof r, 1, stdout);
    }
    return 0;
}
"""


@pytest.mark.parametrize("fpu,table,avr", [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)])
def test_isqrt32_is_the_floor_root_around_every_square(tmp_path, fpu, table, avr):
    """The four forms of the C root (integer digits; FPU sqrtf + one correction, here on the
    host's float32 arithmetic, which rounds as the Cortex-M4F's does; the interpolated table
    of cores with a multiplier and no FPU; the AVR's byte-normalised table with an 8 x 8
    interpolation, here with the C products: test_avr_arith runs its AVR multiplies) against
    math.isqrt at every square up to 65535**2 and its neighbours."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    from sensorbudget.firmware_gen import q15_c

    (tmp_path / "isqrt.c").write_text(ISQRT_HARNESS.replace(
        "@ISQRT@", q15_c.squares("sbmodel", "SBMODEL") + q15_c.isqrt("sbmodel", "SBMODEL")))
    exe = tmp_path / "isqrt"
    subprocess.run(["gcc", *WARNINGS, "-O2", *FP_FLAGS, f"-DSBMODEL_ISQRT_FPU={fpu}",
                    f"-DSBMODEL_ISQRT_TABLE={table}", f"-DSBMODEL_ISQRT_BYTES={avr}", "-o",
                    str(exe), "isqrt.c", "-lm"], cwd=tmp_path, check=True)
    r = np.arange(65536, dtype=np.int64)
    v = np.concatenate([r * r, r * r - 1, r * r + 1, r * r + r, np.arange(4096)])
    v = np.unique(v[(v >= 0) & (v <= 65535 ** 2)]).astype(np.uint32)
    out = subprocess.run([str(exe)], input=v.tobytes(), capture_output=True, check=True).stdout
    got = np.frombuffer(out, dtype=np.uint16).astype(np.int64)
    want = np.floor(np.sqrt(v.astype(np.float64))).astype(np.int64)
    assert all(math.isqrt(int(x)) == w for x, w in zip(v[::997], want[::997]))
    np.testing.assert_array_equal(got, want)
