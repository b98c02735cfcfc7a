"""Both power spectra on the ATmega328P (issue 29): the float32 routine's AVR branch (one
radix-2 stage per pass, tables in flash) and the Q15 routine, built with avr-gcc and the Arduino
Uno's firmware flags (-Werror), run in simavr on seeded random windows of several lengths (odd,
padded, log2(M/2) odd and even), equal to their Python references bit for bit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from sensorbudget.firmware_gen import fft_c, fft_q15_c, shape_c
from sensorbudget.firmware_gen.kernel_c import _FLASH_MACROS
from sensorbudget.firmware_gen.targets import get_target
from sensorbudget.trainer.sensing import spectral, spectral_q15
from tests.firmware_gen.conftest import need_tools

SIZES = [5, 16, 33, 64]          # M = 8, 16, 64, 64: H = 4, 8, 32

MAIN = r"""
#include "sbfw_hal.h"
int main(void)
{
    unsigned w, n;
    sbfw_hal_init();
@CALLS@
    sbfw_hal_exit(0u);
    return 0;
}
"""


def _flash(decl: str) -> str:
    """A test table in flash on AVR (SB_CONST: PROGMEM there), as the generated tables are."""
    return decl.replace("static const ", "static const SB_CONST ", 1)


def _float_part(n: int, x: np.ndarray) -> tuple:
    m = spectral.fft_size(n)
    wr, wi = spectral.twiddles(m)
    decl = [_flash(t) for t in (
        f"static const float sb_fin_{n}[{x.size}] = {{ "
        + ", ".join(f"{float(v)!r}f" for v in x.T.ravel()) + " };",
        f"static const uint16_t sb_rev_{m}_{n}[{m // 2}] = {{ "
        + ", ".join(map(str, spectral.bit_reverse(m // 2))) + " };",
        f"static const float sb_twr_{m}_{n}[{m // 2}] = {{ "
        + ", ".join(f"{float(v)!r}f" for v in wr) + " };",
        f"static const float sb_twi_{m}_{n}[{m // 2}] = {{ "
        + ", ".join(f"{float(v)!r}f" for v in wi) + " };",
        f"static const float sb_hann_{n}[{n}] = {{ "
        + ", ".join(f"{float(v)!r}f" for v in spectral.hann(n)) + " };")]
    call = (f"    for (w = 0u; w < {x.shape[1]}u; ++w) {{\n"
            f"        for (n = 0u; n < {n}u; ++n) {{\n"
            f"            sb_fx[n] = SB_READ_F32(&sb_fin_{n}[w * {n}u + n]);\n        }}\n"
            f"        sb_power_spectrum(sb_fx, {n}u, sb_hann_{n}, {m}u, sb_rev_{m}_{n}, "
            f"sb_twr_{m}_{n}, sb_twi_{m}_{n}, sb_re, sb_im);\n"
            f"        sbfw_hal_write((const uint8_t *)sb_re, {4 * (m // 2 + 1)}u);\n    }}")
    return decl, call


def _q15_part(n: int, q: np.ndarray) -> tuple:
    m = spectral.fft_size(n)
    decl = [_flash(f"static const int16_t sb_qin_{n}[{q.size}] = {{ "
                         + ", ".join(str(int(v)) for v in q.T.ravel()) + " };")]
    rev, twr, twi, hann = fft_q15_c.tables("sb", m, [n])     # per-n names: m repeats
    decl += [t.replace(f"_{m}[", f"_{m}_{n}[", 1) for t in (rev, twr, twi)] + [hann]
    call = (f"    for (w = 0u; w < {q.shape[1]}u; ++w) {{\n"
            f"        for (n = 0u; n < {n}u; ++n) {{\n"
            f"            sb_qx[n] = SB_READ_I16(&sb_qin_{n}[w * {n}u + n]);\n        }}\n"
            f"        sb_power_spectrum_q15(sb_qx, {n}u, sb_qhann_{n}, {m}u, sb_qrev_{m}_{n}, "
            f"sb_qtwr_{m}_{n}, sb_qtwi_{m}_{n}, sb_qz, sb_qP);\n"
            f"        sbfw_hal_write((const uint8_t *)sb_qP, {4 * (m // 2 + 1)}u);\n    }}")
    return decl, call


def test_avr_spectra_equal_references(tmp_path):
    need_tools("avr-gcc")
    if not Path("/usr/include/simavr/sim_avr.h").is_file():
        pytest.skip("libsimavr-dev is not installed")
    from sensorbudget.device_sim.backends.base import READY
    from sensorbudget.firmware_gen.build import build_simavr_harness, template

    rng = np.random.default_rng(29)
    top = max(spectral.fft_size(n) for n in SIZES)
    floats = {n: (rng.normal(size=(n, 2)) * 3 + 1).astype(np.float32) for n in SIZES}
    q15 = {n: np.clip(np.round(rng.normal(size=(n, 2)) * 9000), -32768, 32767).astype(np.int16)
           for n in SIZES}
    parts = [_float_part(n, floats[n]) for n in SIZES] + [_q15_part(n, q15[n]) for n in SIZES]
    source = "\n\n".join([
        "#include <stdint.h>", "#include <string.h>", "#include <math.h>", _FLASH_MACROS,
        shape_c.routine("mean", "sb"),
        fft_c.routine("spectrum", "sb"), fft_q15_c.routine("sb"),
        f"static float sb_fx[{top}], sb_re[{top}], sb_im[{top}];",
        f"static int16_t sb_qx[{top}], sb_qz[{top}];\nstatic uint32_t sb_qP[{top // 2 + 1}];",
        *[d for decl, _ in parts for d in decl],
        MAIN.replace("@CALLS@", "\n".join(call for _, call in parts))])
    (tmp_path / "fft.c").write_text(source)
    for name in ("sbfw_hal.h", "sbfw_hal_avr.c"):
        (tmp_path / name).write_text(template(name))
    target = get_target("arduino-uno")
    subprocess.run(["avr-gcc", *target.cflags, "-DSBFW_BAUD=2000000UL", "fft.c", "sbfw_hal_avr.c",
                    "-lm", "-o", "fft.elf"], cwd=tmp_path, check=True, capture_output=True)
    harness = build_simavr_harness(tmp_path)
    run = subprocess.run([str(harness), str(tmp_path / "fft.elf"), "atmega328p", "16000000"],
                         input=b"", capture_output=True, timeout=600)
    data = run.stdout[run.stdout.index(READY) + len(READY):]
    at = 0
    for numeric, windows in (("float32", floats), ("q15", q15)):
        for n, x in windows.items():
            bins = spectral.fft_size(n) // 2 + 1
            for w in range(x.shape[1]):
                got = np.frombuffer(data[at:at + 4 * bins], "<u4")
                at += 4 * bins
                if numeric == "float32":
                    want = spectral.power_spectrum(x[:, w:w + 1])[:, 0].view(np.uint32)
                else:
                    want = spectral_q15.power_spectrum_q15(x[:, w:w + 1])[:, 0]
                assert np.array_equal(got.astype(np.int64), want.astype(np.int64)), (
                    numeric, n, w)
    assert at == len(data)
