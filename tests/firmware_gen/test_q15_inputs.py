"""Q15 model inputs quantised straight from integer features (:func:`sensorbudget.firmware_gen.
q15_c.int_inputs`): the generated ``<p>_qin`` compiled with gcc and clang (``-Werror``) against
:meth:`sensorbudget.trainer.sensing.q15.IntQuantizer.apply` on every integer around its clamp
limits and centre and a grid of the rest, for seeded random quantisers of every kind; and the
stream of a Q15 plan of integer kinds only computes no float for them."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from sensorbudget.export.fixed_point import quantize_model
from sensorbudget.firmware_gen import generate_firmware, q15_c
from sensorbudget.firmware_gen.plan import make_plan
from sensorbudget.firmware_gen.targets import FP_FLAGS, WARNINGS
from sensorbudget.trainer.sensing.q15 import RAW_RANGE, int_quantizer

HARNESS = r"""
#include <stdint.h>
#include <stdio.h>
%s
static const int32_t P[][7] = {
%s
};

int main(void)
{
    int32_t v[2];   /* quantiser index, integer feature */
    while (fread(v, sizeof v, 1, stdin) == 1) {
        const int32_t *c = P[v[0]];
        const int16_t q = sb_qin(v[1], c[0], c[1], c[2], (unsigned)c[3], c[4], c[5],
                                 (unsigned)c[6]);
        fwrite(&q, sizeof q, 1, stdout);
    }
    return 0;
}
"""


def _quantizers(seed: int) -> list:
    """(raw range, IntQuantizer) of random features: power-of-two units, training ranges from
    a 1e-4th to all of the kind's values, around anywhere in it."""
    rng = np.random.default_rng(seed)
    out = []
    for kind in ("mean", "ptp", "rms", "mag_max", "energy", "mad"):
        lo_r, hi_r = RAW_RANGE[kind]
        for _ in range(3):
            unit = 2.0 ** int(rng.integers(-24, 6))
            width = (hi_r - lo_r) * 10.0 ** rng.uniform(-4, 0)
            centre = rng.uniform(lo_r, hi_r)
            fx = quantize_model(np.ones((1, 1)), np.zeros(1), [(centre - width / 2) * unit],
                                [(centre + width / 2) * unit], "q15")
            q = int_quantizer(unit, fx.input_offset[0], fx.input_inv_scale[0], (lo_r, hi_r))
            assert q is not None
            out.append(((lo_r, hi_r), q))
    return out


@pytest.mark.parametrize("high_word", [0, 1])
@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_qin_in_c_equals_the_python_quantiser(tmp_path, cc, high_word):
    """Both forms of the C (the pre-shifted high word; for cores whose multiply is a library
    call, two 16 x 16 products when the clamped feature fits an int16 (pre >= 15), else the
    64-bit product shifted) give the Python quantiser's integers."""
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    quants = _quantizers(31)
    pres = [q.pre for _, q in quants]
    assert min(pres) < 15 <= max(pres) and any(p > 16 for p in pres)   # every branch
    rows = []
    for _, q in quants:
        words = [q.lo, q.hi, q.mid, q.pre, q.mult, q.add, q.frac]
        assert all(-2 ** 31 < w < 2 ** 31 for w in words)
        rows.append("    {" + ", ".join(map(str, words)) + "},")
    (tmp_path / "h.c").write_text(HARNESS % (q15_c.quantizers("sb", True, False),
                                             "\n".join(rows)))
    exe = tmp_path / "h"
    subprocess.run([cc, *WARNINGS, "-O2", *FP_FLAGS, f"-DSB_QIN_HIGH_WORD={high_word}", "-o",
                    str(exe), "h.c"], cwd=tmp_path, check=True)
    pairs, want = [], []
    for i, ((lo_r, hi_r), q) in enumerate(quants):
        near = [np.arange(c - 200, c + 200) for c in (q.lo, q.mid, q.hi, lo_r, hi_r)]
        raw = np.unique(np.clip(np.concatenate([np.linspace(lo_r, hi_r, 2000).astype(np.int64),
                                                *near]), lo_r, hi_r))
        pairs.append(np.column_stack([np.full(len(raw), i), raw]))
        want.append(q.apply(raw))
    data = np.concatenate(pairs).astype("<i4")
    out = subprocess.run([str(exe)], input=data.tobytes(), capture_output=True, check=True).stdout
    got = np.frombuffer(out, "<i2")
    want = np.concatenate(want)
    assert len(got) == len(want) > 10000
    assert np.array_equal(got, want)
    assert len(np.unique(want)) > 1000      # not a constant


def test_integer_kinds_compute_no_float_on_a_core_without_fpu(kinds_bundle, bm_recordings):
    """hifive1, Q15: the inputs of the integer kinds go through <p>_qin; the only float
    arithmetic left in the compute is that of the float kinds (std, zcr) and their quantiser."""
    from tests.firmware_gen.conftest import bm_full_scale

    scales = bm_full_scale(bm_recordings)
    plan = make_plan(kinds_bundle, name="sbmodel", numeric="q15", full_scale=scales)
    fw = generate_firmware(kinds_bundle, target="hifive1", numeric="q15", plan=plan)
    ints = q15_c.int_inputs(plan, fw.header.fixed)
    int_kinds = {e.kind for e, _ in ints.values()}
    assert int_kinds >= {"mean", "min", "max", "ptp", "rms", "mag_mean", "mag_max"}, int_kinds
    source = fw.files["sbmodel_stream.c"]
    body = source[source.index("void sbmodel_stream_compute"):]
    body = body[:body.index("\n}\n")]
    for slot in ints:
        assert re.search(rf"s->inputs\[{slot}\] = sbmodel_qin\(", body), slot
        assert f"s->features[{slot}] =" not in body
    floats = [j for j in range(plan.k) if j not in ints]
    assert "sbmodel_quantize_q15(" not in body
    spans = re.findall(r"sbmodel_quantize_span\(s, (\d+)u, (\d+)u\)", body)
    covered = sorted(j for lo, hi in spans for j in range(int(lo), int(hi)))
    assert covered == floats        # each float input quantised once, no integer one
