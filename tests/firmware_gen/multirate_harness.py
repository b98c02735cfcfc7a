"""A host program around the generated multi-rate C (``<p>_multirate.c``, the groups' streams,
the model kernel), built with gcc -Werror, fed pushes on stdin, and its output parsed.

Input: per push one byte (the sensor index) and that sensor's values (float32 or int16, little
endian). Output: per ready window ``w <index>`` and the hex bits of its float32 features, its
model inputs and its scores; at the end ``end <windows> <lost>``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sensorbudget.firmware_gen.boards.board import FP_FLAGS, WARNINGS
from sensorbudget.firmware_gen.multirate_c import multirate_sources

MAIN_C = r"""
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "@p@.h"
#include "@p@_kernel.h"
#include "@p@_multirate.h"

typedef @score_t@ score_t;

static void put(const void *v, size_t size)
{
    const unsigned char *b = (const unsigned char *)v;
    size_t i;
    printf(" ");
    for (i = size; i > 0u; --i) {
        printf("%02x", b[i - 1u]);
    }
}

int main(void)
{
    static @p@_mr_t s;
    @p@_sample_t values[@P@_MAX_SENSOR_CHANNELS];
    score_t scores[@P@_N_TARGETS];
    int sensor;
    unsigned i;
    @p@_mr_reset(&s);
    while ((sensor = getchar()) != EOF) {
        size_t n = (size_t)@p@_sensor_channels[sensor];
        int ready;
        if (fread(values, sizeof values[0], n, stdin) != n) {
            return 3;
        }
        ready = @p@_mr_push(&s, (unsigned)sensor, values);
        if (ready < 0) {
            return 4;
        }
        if (ready == 0) {
            continue;
        }
        @p@_fw_predict(@P@_MR_INPUTS(&s), scores);
        printf("w %lu", (unsigned long)(s.windows - 1u));
        for (i = 0u; i < @P@_N_INPUTS; ++i) {
            put(&s.features[i], sizeof s.features[i]);
        }
        for (i = 0u; i < @P@_N_INPUTS; ++i) {
            put(&@P@_MR_INPUTS(&s)[i], sizeof @P@_MR_INPUTS(&s)[i]);
        }
        for (i = 0u; i < @P@_N_TARGETS; ++i) {
            put(&scores[i], sizeof scores[i]);
        }
        printf("\n");
    }
    printf("end %lu %lu\n", (unsigned long)s.windows, (unsigned long)s.lost);
    return 0;
}
"""

#: C type, dtype of a model input and of a score (the kernel's scores have the inputs' type)
_TYPES = {"float32": ("float", "<f4"), "q15": ("int16_t", "<i2"), "q31": ("int32_t", "<i4")}


def need_cc():
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")


def build(mplan, bundle, work: Path, *, kernel: str = "auto", cc: str = "gcc") -> Path:
    """Write the generated files and the harness to ``work``; compile; the executable."""
    work.mkdir(parents=True, exist_ok=True)
    files = multirate_sources(mplan, bundle, kernel=kernel)
    main = MAIN_C.replace("@score_t@", _TYPES[mplan.numeric][0]).replace("@p@", mplan.name)
    files["main.c"] = main.replace("@P@", mplan.name.upper())
    for name, text in files.items():
        (work / name).write_text(text, encoding="ascii")
    sources = sorted(str(work / n) for n in files if n.endswith(".c"))
    exe = work / "harness"
    proc = subprocess.run([cc, *WARNINGS, *FP_FLAGS, "-O2", "-o", str(exe), *sources, "-lm"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return exe


def pushes(mplan, streams: dict, order) -> bytes:
    """The harness's stdin for ``streams`` ({sensor: samples}) pushed in ``order``."""
    dtype = "<f4" if not mplan.fixed else "<i2"
    rows = {s.name: np.asarray(streams[s.name]).astype(dtype) for s in mplan.sensors}
    names = [s.name for s in mplan.sensors]
    out = bytearray()
    for s, i in order:
        out.append(s)
        out += rows[names[s]][i].tobytes()
    return bytes(out)


def run(exe: Path, data: bytes) -> str:
    proc = subprocess.run([str(exe)], input=data, capture_output=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    return proc.stdout.decode("ascii")


def parse(mplan, text: str) -> tuple:
    """(window indices, features float32, inputs, scores, (windows, lost)) of the output."""
    _, dtype = _TYPES[mplan.numeric]
    lines = text.splitlines()
    end = lines[-1].split()
    assert end[0] == "end", lines[-3:]
    windows, rows = [], []
    for line in lines[:-1]:
        head, index, *values = line.split()
        assert head == "w" and len(values) == 2 * mplan.k + mplan.t, line
        windows.append(int(index))
        rows.append(values)
    k, t = mplan.k, mplan.t

    def column(lo, hi, dtype):
        raw = [bytes.fromhex(v)[::-1] for r in rows for v in r[lo:hi]]
        return np.frombuffer(b"".join(raw), dtype=dtype).reshape(len(rows), hi - lo)

    return (windows, column(0, k, "<f4"), column(k, 2 * k, dtype),
            column(2 * k, 2 * k + t, dtype), (int(end[1]), int(end[2])))
