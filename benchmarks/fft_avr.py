"""AVR cycles of our power spectra (float32 and Q15) for bench_fft_cmsis.py (issue 29).

Each (numeric, N) is one program: our routine's text and its cut copies (the caller's source
generators, tables in flash), the input in flash, every part timed by the firmware's HAL
(Timer1 at clk/1, exact in simavr) less the counter's own cost; the counts and the spectrum go
out on the UART and the spectrum is checked bit for bit against the Python reference. It runs
on the ATmega328P (the Uno, 2 KiB of RAM) when the buffers fit, else on the ATmega2560 (the
Mega, 8 KiB; the same AVR core, whose 3-byte program counter adds a cycle to each call and
return). Buffers: float32 3 x 4 N bytes (window, re, im; the copy's ring is re); Q15 6 N + 4
(window, re and im, the uint32 power; the ring is re and im).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

#: (part, RAM bytes the buffers may take: the rest is the stack, the HAL and the C library)
MCUS = (("atmega328p", 2048 - 448), ("atmega2560", 8192 - 448))

MAIN = r"""
#include "sbfw_hal.h"
static const @T@ SB_CONST sb_input[@N@] = { @X@ };
static void sb_put(const void *p, uint16_t n) { sbfw_hal_write((const uint8_t *)p, n); }
static uint32_t sb_time(void (*fn)(void), uint64_t base)
{
    uint64_t c;
    sbfw_hal_cost_start();
    fn();
    c = sbfw_hal_cost_stop();
    return (uint32_t)(c > base ? c - base : 0u);
}
static void sb_copy(void) { ours@Q@_copy_@N@(3u); }
int main(void)
{
    uint64_t base;
    uint32_t t;
    unsigned i;
    sbfw_hal_init();
    for (i = 0u; i < @N@u; ++i) {
        @RING@[(i + 3u) % @N@u] = @READ@(&sb_input[i]);
    }
    sbfw_hal_cost_start();
    base = sbfw_hal_cost_stop();
    t = sb_time(sb_copy, base); sb_put(&t, 4u);
    t = sb_time(ours@Q@_prep_@N@, base); sb_put(&t, 4u);
    t = sb_time(ours@Q@_prep_rect_@N@, base); sb_put(&t, 4u);
    t = sb_time(ours@Q@_upto_fft_@N@, base); sb_put(&t, 4u);
    t = sb_time(ours@Q@_full_@N@, base); sb_put(&t, 4u);
    sb_put(@OUT@, (uint16_t)(4u * (@N@u / 2u + 1u)));
    sbfw_hal_exit(0u);
    return 0;
}
"""


def ram_bytes(numeric: str, n: int) -> int:
    return 12 * n if numeric == "float32" else 6 * n + 4


def measure(work: Path, n: int, numeric: str, mcu: str, source, rng,
            before=None) -> dict:
    """Cycles of the parts on ``mcu`` (simavr) and the bit-exactness of the spectrum
    (``before``: the reference of the float32 ``before_*`` entry points instead of ours)."""
    from sensorbudget.device_sim.backends.base import READY
    from sensorbudget.firmware_gen.build import build_simavr_harness, template
    from sensorbudget.firmware_gen.targets import WARNINGS, get_target
    from sensorbudget.trainer.sensing import spectral, spectral_q15

    out = work / f"avr-{numeric}-{n}{'-before' if before else ''}"
    out.mkdir(exist_ok=True)
    x = rng.normal(size=n).astype(np.float32)
    if numeric == "float32":
        subs = {"@T@": "float", "ours@Q@": "before" if before else "ours", "@RING@": "sb_ring",
                "@READ@": "SB_READ_F32",
                "@OUT@": "sb_re", "@X@": ", ".join(f"{float(v)!r}f" for v in x)}
    else:
        x = np.clip(np.round(x / 4 * 32768), -32768, 32767).astype(np.int16)
        subs = {"@T@": "int16_t", "ours@Q@": "ours_q15", "@RING@": "sb_qring",
                "@READ@": "SB_READ_I16",
                "@OUT@": "sb_qP", "@X@": ", ".join(str(int(v)) for v in x)}
    main = MAIN.replace("@N@", str(n))
    for key, value in subs.items():
        main = main.replace(key, value)
    (out / "ours.c").write_text(source([n], avr=True) + main)
    for name in ("sbfw_hal.h", "sbfw_hal_avr.c"):
        (out / name).write_text(template(name))
    flags = [f for f in get_target("arduino-uno").cflags if f not in WARNINGS
             and not f.startswith("-mmcu")]
    cmd = ["avr-gcc", "-std=gnu99", *flags, f"-mmcu={mcu}", "-DF_CPU=16000000UL",
           "-DSBFW_BAUD=2000000UL", str(out / "ours.c"), str(out / "sbfw_hal_avr.c"), "-lm",
           "-o", str(out / "fft.elf")]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"building the AVR FFT program failed:\n{done.stderr[-2000:]}")
    harness = build_simavr_harness(out)
    run = subprocess.Popen([str(harness), str(out / "fft.elf"), mcu, "16000000"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
    data = run.stdout.read()            # until the program exits (stdin stays open)
    run.wait()
    run.stdin.close()
    data = data[data.index(READY) + len(READY):]
    copy, prep, prep_rect, upto_fft, full = np.frombuffer(data[:20], "<u4").tolist()
    if numeric == "float32":
        got = np.frombuffer(data[20:20 + 4 * (n // 2 + 1)], "<u4")
        want = (before or spectral.power_spectrum)(x[:, None])[:, 0].view(np.uint32)
    else:
        got = np.frombuffer(data[20:20 + 4 * (n // 2 + 1)], "<u4").astype(np.int64)
        want = spectral_q15.power_spectrum_q15(x[:, None])[:, 0]
    return {"copy": copy, "prep": prep, "hann": prep - prep_rect, "fft": upto_fft - prep,
            "power": full - upto_fft, "full": full, "exact": bool(np.array_equal(got, want))}


def report(work: Path, sizes, float_source, q15_source, before=None) -> bool:
    """Print the AVR table; True when every spectrum was bit-exact. ``before``: (source,
    reference, label) of the float32 transform of another commit, measured beside ours."""
    print("\nAVR (simavr, our transforms only; CMSIS-DSP has no AVR port), cycles at 16 MHz:")
    print(f"{'numeric':15} {'N':>4} {'part':10} {'FFT':>8} {'+split':>8} {'copy':>7} "
          f"{'prep':>7} {'(Hann)':>7} {'split+P':>7} {'all':>8}  check")
    runs = [("float32", "float32", float_source, None), ("q15", "q15", q15_source, None)]
    if before:
        runs.insert(0, (f"float32 {before[2]}", "float32", before[0], before[1]))
    ok = True
    for label, numeric, source, reference in runs:
        for n in sizes:
            mcu = next((m for m, room in MCUS if ram_bytes(numeric, n) <= room), None)
            if mcu is None:
                print(f"{label:15} {n:4d} {'-':10}  ({ram_bytes(numeric, n)} bytes of "
                      f"buffers fit no listed part)")
                continue
            r = measure(work, n, numeric, mcu, source, np.random.default_rng(n), reference)
            ok &= r["exact"]
            print(f"{label:15} {n:4d} {mcu:10} {r['fft']:8d} {r['fft'] + r['power']:8d} "
                  f"{r['copy']:7d} {r['prep']:7d} {r['hann']:7d} {r['power']:7d} "
                  f"{r['copy'] + r['full']:8d}  "
                  f"{'bit-exact' if r['exact'] else 'NOT bit-exact'} vs reference", flush=True)
    return ok
