"""The batched push ``<name>_stream_add_rows`` (issue 28 item 5) against per-sample
``<name>_stream_add``: generated cases (:mod:`tests.firmware_gen.generative`: 1-9 channels,
odd and non-power-of-two windows, hop below, equal to and above the window, float32 / Q15 /
Q31) get seeded random samples pushed in seeded random blocks (0 to 2 windows + a hop rows)
through the rows function into one stream and sample by sample into another; after every call
the two stream contexts (ring buffer, counters, features and model inputs, magnitude caches)
must be equal byte for byte, the rows function must have stopped exactly at the row whose
``_stream_add`` returned 1 (and at no row before it), and both compute the same windows. Host gcc
on every case; avr-gcc in simavr (the AVR's channel-by-channel copy) on a sample of them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from sensorbudget.firmware_gen import FirmwareGenError, generate_firmware
from sensorbudget.firmware_gen.build import write_firmware
from sensorbudget.firmware_gen.targets import get_target
from tests.firmware_gen import gen_runner
from tests.firmware_gen import generative as G
from tests.firmware_gen.conftest import need_tools

#: generated cases: (seed, channels, window, hop) 5: 7, 3, 1; 6: 5, 5, 6; 7: 9, 63, 15;
#: 27: 1, 5, 2; 34: 1, 3, 11; 45: 9, 12, 12; 14: 2, 2, 3; 48: 2, 33, 33; 38: 3, 17, 18;
#: 24: 4, 12, 12; 28: 6, 8, 16; 2: 8, 31, 15
HOST_SEEDS = (5, 6, 7, 27, 34, 45, 14, 48, 38, 24, 28, 2)
#: small enough for two stream contexts in the ATmega328P's 2 KB
AVR_SEEDS = (55, 6, 34)
ROWS = 300                   # samples per case

DRIVER = r"""
#include <stdint.h>
#include <string.h>
#include "@p@.h"
#include "@p@_stream.h"
#ifdef __AVR__
#include <avr/pgmspace.h>
#include "sbfw_hal.h"
#define SB_FLASH PROGMEM
#define SB_COPY memcpy_P
#define SB_BLOCK(i) pgm_read_word(&sb_blocks[(i)])
#else
#include <stdio.h>
#define SB_FLASH
#define SB_COPY memcpy
#define SB_BLOCK(i) sb_blocks[(i)]
#endif

static const @p@_sample_t sb_rows[@N@u * @P@_N_CHANNELS] SB_FLASH = { @ROWS@ };
static const uint16_t sb_blocks[@B@] SB_FLASH = { @BLOCKS@ };
static @p@_sample_t sb_buf[@MAXB@u * @P@_N_CHANNELS];
static @p@_stream_t sb_one, sb_rows_stream;

/* (windows computed, errors): errors count every disagreement */
static void sb_run(uint16_t *windows, uint16_t *errors)
{
    unsigned b, at = 0u;
    *windows = 0u;
    *errors = 0u;
    @p@_stream_reset(&sb_one);
    @p@_stream_reset(&sb_rows_stream);
    for (b = 0u; b < @B@u; ++b) {
        const unsigned n = SB_BLOCK(b);
        const @p@_sample_t *rows = sb_buf;
        unsigned left = n;
        SB_COPY(sb_buf, &sb_rows[at * @P@_N_CHANNELS], n * sizeof sb_buf[0] * @P@_N_CHANNELS);
        at += n;
        do {
            unsigned stored = 12345u, i;
            int ready_one = 0;
            const int ready = @p@_stream_add_rows(&sb_rows_stream, rows, left, &stored);
            if (stored > left || (stored < left && !ready)) {
                ++*errors;
                return;
            }
            for (i = 0u; i < stored; ++i) {
                if (ready_one) {
                    ++*errors;                /* a window completed before the last row */
                }
                ready_one = @p@_stream_add(&sb_one, rows + i * @P@_N_CHANNELS);
            }
            if (ready_one != ready) {
                ++*errors;
            }
            if (ready) {
                @p@_stream_compute(&sb_one);
                @p@_stream_compute(&sb_rows_stream);
                ++*windows;
            }
            if (memcmp(&sb_one, &sb_rows_stream, sizeof sb_one) != 0) {
                ++*errors;
            }
            rows += stored * @P@_N_CHANNELS;
            left -= stored;
        } while (left > 0u);
    }
}

int main(void)
{
    uint16_t out[2];
#ifdef __AVR__
    sbfw_hal_init();
    sb_run(&out[0], &out[1]);
    sbfw_hal_write((const uint8_t *)out, 4u);
    sbfw_hal_exit(0u);
#else
    sb_run(&out[0], &out[1]);
    printf("%u %u\n", (unsigned)out[0], (unsigned)out[1]);
#endif
    return 0;
}
"""


def _case(seed: int, work: Path, target: str):
    """(firmware folder, plan, samples, blocks) of generated case ``seed`` built for
    ``target`` in its numeric format; None if the fit check refuses it there."""
    case = G.make_case(seed)
    rec = G.write_recordings(work / "rec", seed, n_recordings=3, n=140)
    bundle, _ = G.case_bundle(case, G.feature_set(case, rec, work), work / "bundle")
    data = gen_runner.recordings_arrays(rec)
    from sensorbudget.firmware_gen.plan import make_plan

    fs = None
    if case.numeric != "float32":
        plan0 = make_plan(bundle, name="sbmodel", numeric="float32")
        fs = gen_runner.full_scale(case, plan0.channels, data)
    try:
        fw = generate_firmware(bundle, target=target, numeric=case.numeric, name="sbmodel",
                               full_scale=fs)
    except FirmwareGenError as exc:
        assert gen_runner.is_refusal(str(exc)), (seed, str(exc))
        return None
    out = write_firmware(fw, work / f"fw-{target}")
    plan = fw.plan
    rng = np.random.default_rng(seed + 28)
    n_ch = len(plan.channels)
    if plan.fixed:
        samples = rng.integers(-32768, 32768, size=(ROWS, n_ch)).astype(np.int16)
    else:
        samples = (rng.normal(size=(ROWS, n_ch)) * 500).astype(np.float32)
    blocks, total = [], 0
    top = 2 * plan.window + plan.hop
    while total < ROWS:
        n = min(int(rng.integers(0, top + 1)), ROWS - total)
        blocks.append(n)
        total += n
    return out, plan, samples, blocks


def _driver(plan, samples, blocks) -> str:
    p = plan.name
    fmt = (lambda v: f"{float(v)!r}f") if not plan.fixed else (lambda v: str(int(v)))
    return (DRIVER.replace("@p@", p).replace("@P@", p.upper())
            .replace("@N@", str(len(samples))).replace("@B@", str(len(blocks)))
            .replace("@MAXB@", str(max(blocks) or 1))
            .replace("@ROWS@", ", ".join(fmt(v) for v in samples.ravel()))
            .replace("@BLOCKS@", ", ".join(map(str, blocks))))


def _windows(plan, n: int) -> int:
    return 0 if n < plan.window else (n - plan.window) // plan.hop + 1


@pytest.mark.parametrize("seed", HOST_SEEDS)
def test_rows_in_random_blocks_equal_per_sample_adds_on_host(seed, tmp_path):
    need_tools("gcc")
    built = _case(seed, tmp_path, "host")
    assert built is not None
    out, plan, samples, blocks = built
    (out / "driver.c").write_text(_driver(plan, samples, blocks))
    subprocess.run(["gcc", *get_target("host").cflags, "driver.c", "sbmodel_stream.c", "-lm",
                    "-o", "driver"], cwd=out, check=True, capture_output=True)
    got = subprocess.run([str(out / "driver")], check=True, capture_output=True, text=True)
    windows, errors = map(int, got.stdout.split())
    assert errors == 0, (seed, plan.window, plan.hop, len(plan.channels), blocks)
    assert windows == _windows(plan, len(samples)) > 0


@pytest.mark.parametrize("seed", AVR_SEEDS)
def test_rows_in_random_blocks_equal_per_sample_adds_on_avr(seed, tmp_path):
    need_tools("avr-gcc", "gcc")
    if not Path("/usr/include/simavr/sim_avr.h").is_file():
        pytest.skip("libsimavr-dev is not installed")
    from sensorbudget.device_sim.backends.base import READY
    from sensorbudget.firmware_gen.build import build_simavr_harness, template

    built = _case(seed, tmp_path, "arduino-uno")
    assert built is not None, seed
    out, plan, samples, blocks = built
    (out / "driver.c").write_text(_driver(plan, samples, blocks))
    for name in ("sbfw_hal.h", "sbfw_hal_avr.c"):
        (out / name).write_text(template(name))
    target = get_target("arduino-uno")
    subprocess.run(["avr-gcc", *target.cflags, "-DSBFW_BAUD=2000000UL", "driver.c",
                    "sbmodel_stream.c", "sbfw_hal_avr.c", "-lm", "-o", "driver.elf"],
                   cwd=out, check=True, capture_output=True)
    harness = build_simavr_harness(tmp_path / "simavr")
    run = subprocess.run([str(harness), str(out / "driver.elf"), "atmega328p", "16000000"],
                         input=b"", capture_output=True, timeout=600)
    data = run.stdout[run.stdout.index(READY) + len(READY):]
    windows, errors = np.frombuffer(data[:4], "<u2")
    assert errors == 0, (seed, plan.window, plan.hop, len(plan.channels), blocks)
    assert windows == _windows(plan, len(samples)) > 0
