"""The Q15 power spectrum's C (firmware_gen.fft_q15_c), compiled with the host target's flags
(gcc and clang, -Werror -Wconversion), against trainer.sensing.spectral_q15 integer for integer
on seeded random windows of every size class (odd, even, powers of two, log2(M/2) odd and even),
both windows, and the extreme inputs that would overflow an int16 butterfly without the
per-stage halving (full-scale square waves and a full-scale tone on a bin); and for the
Cortex-M4F (the DSP extension's packed butterflies) and the M3 (the portable C), built with
their firmware flags and run in unicorn, against the same reference."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sensorbudget.device_sim.backends import available_backends
from sensorbudget.firmware_gen import fft_q15_c
from sensorbudget.firmware_gen.kernel_c import _FLASH_MACROS
from sensorbudget.firmware_gen.targets import get_target
from sensorbudget.trainer.sensing import spectral, spectral_q15
from tests.firmware_gen.conftest import need_tools

SIZES = [2, 3, 5, 8, 16, 33, 64, 100, 128, 256, 512]


def _windows(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = [rng.integers(-32768, 32768, n), np.round(rng.normal(0, 3000, n) + 12000),
         np.where(np.arange(n) % 2, 32767, -32768), np.full(n, -32768),
         np.where(np.arange(n) % 4 < 2, 32767, -32768)]
    if n >= 8:     # a full-scale tone on bin 1 of M
        w.append(np.round(32767 * np.cos(2 * np.pi * np.arange(n) / spectral.fft_size(n))))
    return np.clip(np.stack(w, axis=1), -32768, 32767).astype(np.int16)


def _program(n: int, q: np.ndarray) -> str:
    m = spectral.fft_size(n)
    data = ", ".join(str(int(v)) for v in q.T.ravel())
    return "\n".join([
        "#include <stdint.h>", "#include <stdio.h>", "#include <string.h>", _FLASH_MACROS,
        fft_q15_c.routine("sb"), *fft_q15_c.tables("sb", m, [n]),
        f"static const int16_t sb_in[{q.size}] = {{ {data} }};",
        "int main(void)", "{",
        f"    static int16_t z[{m}];",
        f"    static uint32_t P[{m // 2 + 1}];",
        "    unsigned w, hann;",
        "    for (hann = 0u; hann < 2u; ++hann) {",
        f"        for (w = 0u; w < {q.shape[1]}u; ++w) {{",
        f"            sb_power_spectrum_q15(&sb_in[w * {n}u], {n}u, hann ? sb_qhann_{n} : 0, "
        f"{m}u, sb_qrev_{m}, sb_qtwr_{m}, sb_qtwi_{m}, z, P);",
        f"            fwrite(P, sizeof P[0], {m // 2 + 1}u, stdout);",
        "        }", "    }", "    return 0;", "}", ""])


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
@pytest.mark.parametrize("n", SIZES)
def test_c_equals_reference(tmp_path, compiler, n):
    need_tools(compiler)
    q = _windows(n, seed=n)
    src = tmp_path / "fft.c"
    src.write_text(_program(n, q))
    exe = tmp_path / "fft"
    subprocess.run([shutil.which(compiler), *get_target("host").cflags, str(src), "-o", str(exe)],
                   check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True).stdout
    got = np.frombuffer(out, "<u4").reshape(2, q.shape[1], -1)
    for k, window in enumerate(["rect", "hann"]):
        want = spectral_q15.power_spectrum_q15(q, window)
        assert want.min() >= 0 and want.max() < 2 ** 32
        np.testing.assert_array_equal(got[k].T.astype(np.int64), want, err_msg=window)


def test_tables_are_static_const_in_flash():
    text = "\n".join(fft_q15_c.tables("sb", 64, [50]))
    assert text.count("static const SB_CONST ") == 4
    assert "malloc" not in fft_q15_c.routine("sb")


def _cortex_program(sizes, windows) -> str:
    parts = ["#include <stdint.h>", "#include <string.h>", _FLASH_MACROS,
             fft_q15_c.routine("sb")]
    top = max(spectral.fft_size(n) for n in sizes)
    parts.append(f"int16_t sb_z[{top}];\nuint32_t sb_P[{top // 2 + 1}];")
    for n, q in zip(sizes, windows):
        m = spectral.fft_size(n)
        parts += fft_q15_c.tables("sb", m, [n])
        data = ", ".join(str(int(v)) for v in q.T.ravel())
        parts.append(f"static const int16_t sb_in_{n}[{q.size}] = {{ {data} }};\n"
                     f"void sb_run_{n}(unsigned w, unsigned hann)\n{{\n"
                     f"    sb_power_spectrum_q15(&sb_in_{n}[w * {n}u], {n}u, "
                     f"hann ? sb_qhann_{n} : 0, {m}u, sb_qrev_{m}, sb_qtwr_{m}, sb_qtwi_{m}, "
                     f"sb_z, sb_P);\n}}")
    parts.append("void Reset_Handler(void);\nvoid Reset_Handler(void) { }")
    return "\n\n".join(parts) + "\n"


@pytest.mark.parametrize("target", ["mps2-an386", "mps2-an385"])
def test_cortex_m_equals_reference(tmp_path, target):
    """M4F: the packed DSP butterflies (their macros are in the compiled text); M3: the
    portable C; both the reference's integers in unicorn, built -Werror as the firmware."""
    need_tools("arm-none-eabi-gcc")
    reason = available_backends()["unicorn-m4f"]
    if reason is not None:
        pytest.skip(f"backend unicorn-m4f: {reason}")
    from sensorbudget.device_sim.backends.unicorn import CortexM4

    sizes = [5, 64, 100, 512]
    windows = [_windows(n, seed=n + 11) for n in sizes]
    src = tmp_path / "fft.c"
    src.write_text(_cortex_program(sizes, windows))
    ld = Path(__file__).resolve().parents[2] / "firmware_gen" / "templates" / "sbfw_cortex_m.ld"
    elf = tmp_path / "fft.elf"
    done = subprocess.run(["arm-none-eabi-gcc", *get_target(target).cflags, "-E", "-dM",
                           str(src)], check=True, capture_output=True, text=True).stdout
    assert ("__ARM_FEATURE_DSP 1" in done) == (target == "mps2-an386")
    subprocess.run(["arm-none-eabi-gcc", *get_target(target).cflags, str(src), "-T", str(ld),
                    "-nostartfiles", "-specs=nano.specs", "-specs=nosys.specs", "-o", str(elf)],
                   check=True, capture_output=True)
    cpu = CortexM4(elf)
    for n, q in zip(sizes, windows):
        for hann, window in ((0, "rect"), (1, "hann")):
            want = spectral_q15.power_spectrum_q15(q, window)
            for w in range(q.shape[1]):
                cpu.call(cpu.symbol(f"sb_run_{n}"), w, hann)
                raw = bytes(cpu.uc.mem_read(cpu.symbol("sb_P"), 4 * len(want)))
                got = np.frombuffer(raw, "<u4").astype(np.int64)
                assert np.array_equal(got, want[:, w]), (target, n, window, w)
