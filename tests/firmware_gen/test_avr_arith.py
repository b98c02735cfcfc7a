"""The AVR forms of the Q15 extractors' arithmetic (issue 28 item 5: q15_c.squares and the
byte-normalised isqrt32), built with avr-gcc and the Arduino Uno's firmware flags (-Werror) and
run in simavr: the 8 x 8 ``mul`` squares against the compiler's own 32-bit product for every
int16 and every uint16, the 48-bit sum of squares (add / adc) against an int64 sum, the root
against its definition at every square up to 65535**2 and its neighbours, and against
math.isqrt on seeded random arguments; the integer input quantiser ``<p>_qin`` (its two
16 x 16 products, or the 64-bit product) against IntQuantizer.apply for seeded random
quantisers of every kind around their clamp limits and centre."""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sensorbudget.firmware_gen import q15_c
from sensorbudget.firmware_gen.targets import get_target
from tests.firmware_gen.conftest import need_tools
from tests.firmware_gen.test_q15_inputs import _quantizers

N_RANDOM = 512

MAIN = r"""
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <avr/pgmspace.h>
#include "sbfw_hal.h"
@ARITH@
static const uint32_t sb_rand[@N@] PROGMEM = { @VALUES@ };
static const int32_t sb_qp[][7] PROGMEM = { @QPARAMS@ };
static const int32_t sb_qr[@NQ@] PROGMEM = { @QRAW@ };
static const uint8_t sb_qi[@NQ@] PROGMEM = { @QINDEX@ };

static const int32_t sb_cr[@NC@] PROGMEM = { @CRAW@ };
static const uint8_t sb_ci[@NC@] PROGMEM = { @CINDEX@ };

static void sb_put32(uint32_t v)
{
    sbfw_hal_write((const uint8_t *)&v, 4u);
}

/* sb_qin with constant parameters, as the firmware calls it (its AVR assembly branch) */
static __attribute__((noinline)) int16_t sb_qin_const(uint8_t i, int32_t r)
{
    switch (i) {
@CCASES@
    }
    return 0;
}

int main(void)
{
    uint32_t r, bad_root = 0u, bad_sq = 0u, bad_usq = 0u, bad_sum = 0u, x = 2463534242u;
    int64_t want = 0;
    unsigned i, k;
    sbfw_hal_init();
    /* the floor root of r^2 - 1, r^2, r^2 + r and (r + 1)^2 - 1 is r - 1, r, r, r */
    for (r = 0u; r < 65536u; ++r) {
        const uint32_t sq = r * r;
        if (sb_isqrt32(sq) != r) {
            bad_root++;
        }
        if (r > 0u && sb_isqrt32(sq - 1u) != r - 1u) {
            bad_root++;
        }
        if (r < 65535u && (sb_isqrt32(sq + r) != r || sb_isqrt32(sq + 2u * r) != r)) {
            bad_root++;
        }
        /* every uint16 and every int16: the mul squares against the compiler's product */
        if (SB_USQ16((uint16_t)r) != r * r) {
            bad_usq++;
        }
        {
            const int16_t q = (int16_t)(uint16_t)r;
            if (SB_SQ16(q) != (uint32_t)((int32_t)q * (int32_t)q)) {
                bad_sq++;
            }
        }
    }
    /* sums of squares of xorshift32 samples over 1 .. 4096 terms, against an int64 sum */
    for (k = 1u; k <= 4096u; k *= 4u) {
        SB_SQ_DECL(acc);
        want = 0;
        for (i = 0u; i < k; ++i) {
            int16_t q;
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            q = (int16_t)(uint16_t)x;
            if ((i & 7u) == 0u) {
                q = -32768;        /* the largest square, 2^30 */
            }
            SB_SQ_ADD(acc, q);
            want += (int64_t)((int32_t)q * (int32_t)q);
        }
        if (SB_SQ_SUM(acc) != want) {
            bad_sum++;
        }
    }
    sb_put32(bad_root);
    sb_put32(bad_usq);
    sb_put32(bad_sq);
    sb_put32(bad_sum);
    for (i = 0u; i < @N@u; ++i) {
        sb_put32(sb_isqrt32(pgm_read_dword(&sb_rand[i])));
    }
    for (i = 0u; i < @NQ@u; ++i) {
        int32_t c[7];
        int16_t q;
        memcpy_P(c, sb_qp[pgm_read_byte(&sb_qi[i])], sizeof c);
        q = sb_qin((int32_t)pgm_read_dword(&sb_qr[i]), c[0], c[1], c[2], (unsigned)c[3], c[4],
                   c[5], (unsigned)c[6]);
        sbfw_hal_write((const uint8_t *)&q, 2u);
    }
    for (i = 0u; i < @NC@u; ++i) {
        const int16_t q = sb_qin_const(pgm_read_byte(&sb_ci[i]),
                                       (int32_t)pgm_read_dword(&sb_cr[i]));
        sbfw_hal_write((const uint8_t *)&q, 2u);
    }
    sbfw_hal_exit(0u);
    return 0;
}
"""



def _run_on_simavr(tmp_path: Path, name: str, source: str, libm: bool = False) -> bytes:
    """Build ``source`` as ``<name>.elf`` for the Uno with the firmware's AVR HAL and run it on
    the simavr harness; returns what it wrote after the READY banner. stdin is held open: the
    harness stops one simulated second after its input ends, and these programs run longer
    (the square roots about 70 M cycles)."""
    from sensorbudget.device_sim.backends.base import READY
    from sensorbudget.firmware_gen.build import build_simavr_harness, template

    (tmp_path / f"{name}.c").write_text(source)
    for hal in ("sbfw_hal.h", "sbfw_hal_avr.c"):
        (tmp_path / hal).write_text(template(hal))
    subprocess.run(["avr-gcc", *get_target("arduino-uno").cflags, "-DSBFW_BAUD=2000000UL",
                    f"{name}.c", "sbfw_hal_avr.c", *(["-lm"] if libm else []),
                    "-o", f"{name}.elf"], cwd=tmp_path, check=True, capture_output=True)
    harness = build_simavr_harness(tmp_path)
    hold, keep = os.pipe()
    try:
        run = subprocess.run([str(harness), str(tmp_path / f"{name}.elf"), "atmega328p",
                              "16000000"], stdin=hold, capture_output=True, timeout=900)
    finally:
        os.close(hold)
        os.close(keep)
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-2000:]
    return run.stdout[run.stdout.index(READY) + len(READY):]


def test_avr_squares_sums_and_roots(tmp_path):
    need_tools("avr-gcc")
    if not Path("/usr/include/simavr/sim_avr.h").is_file():
        pytest.skip("libsimavr-dev is not installed")

    rng = np.random.default_rng(28)
    values = np.concatenate([rng.integers(0, 65535 ** 2 + 1, N_RANDOM // 2, dtype=np.int64),
                             rng.integers(0, 2 ** 20, N_RANDOM // 2, dtype=np.int64)])
    quants = _quantizers(31)
    raw, index = _qin_inputs(quants)
    params = [[q.lo, q.hi, q.mid, q.pre, q.mult, q.add, q.frac] for _, q in quants]
    # constant parameters (the AVR assembly branch: pre >= 15), every s = 32 - pre from 4 to 17
    cquants = [(rng, q) for rng, q in _quantizers(31) + _quantizers(1) if q.pre >= 15]
    consts = [q for _, q in cquants]
    assert {32 - q.pre for q in consts} == set(range(4, 18))
    craw, cindex = _qin_inputs(cquants, 12, 4)   # (flash: 32 KiB)
    cases = "\n".join(f"    case {i}: return sb_qin(r, INT32_C({q.lo}), INT32_C({q.hi}), "
                      f"INT32_C({q.mid}), {q.pre}u,\n        INT32_C({q.mult}), "
                      f"INT32_C({q.add}), {q.frac}u);" for i, q in enumerate(consts))
    source = (MAIN.replace("@ARITH@", q15_c.squares("sb", "SB") + q15_c.isqrt("sb", "SB")
                           + q15_c.quantizers("sb", True, False))
              .replace("@N@", str(N_RANDOM)).replace("@NQ@", str(len(raw)))
              .replace("@VALUES@", ", ".join(f"{int(v)}u" for v in values))
              .replace("@QPARAMS@", ", ".join("{" + ", ".join(f"INT32_C({int(w)})" for w in p)
                                              + "}" for p in params))
              .replace("@QRAW@", ", ".join(f"INT32_C({int(v)})" for v in raw))
              .replace("@QINDEX@", ", ".join(str(int(i)) for i in index))
              .replace("@NC@", str(len(craw))).replace("@CCASES@", cases)
              .replace("@CRAW@", ", ".join(f"INT32_C({int(v)})" for v in craw))
              .replace("@CINDEX@", ", ".join(str(int(i)) for i in cindex)))
    assert "#elif SB_ISQRT_BYTES" in source and "__asm__" in source
    out = _run_on_simavr(tmp_path, "arith", source, libm=True)
    data = out
    got = np.frombuffer(data[:4 * (4 + N_RANDOM)], "<u4")
    assert got[:4].tolist() == [0, 0, 0, 0]      # roots, uint16 squares, int16 squares, sums
    assert got[4:].tolist() == [math.isqrt(int(v)) for v in values]
    qin = np.frombuffer(data[4 * (4 + N_RANDOM):], "<i2")
    assert len(qin) == len(raw) + len(craw)
    want = np.concatenate([quants[i][1].apply(raw[index == i]) for i in range(len(quants))])
    assert len(raw) > 1000 and np.array_equal(qin[:len(raw)], want)
    want = np.concatenate([consts[i].apply(craw[cindex == i]) for i in range(len(consts))])
    assert np.array_equal(qin[len(raw):], want)
    # the constant calls took the assembly branch: no 16 x 16 or 64-bit library product
    dis = subprocess.run(["avr-objdump", "-d", "arith.elf"], cwd=tmp_path, check=True,
                         capture_output=True, text=True).stdout
    body = dis.split("<sb_qin_const>:")[1].split(">:")[0]
    assert "mul" in body and "call" not in body.replace("rcall", "")
    assert min(p[3] for p in params) < 15 <= max(p[3] for p in params)   # both products


def _qin_inputs(quants, n_grid: int = 40, n_near: int = 12) -> tuple:
    """(raw integers, quantiser index): ``n_near`` each side of each quantiser's clamp limits
    and centre, and a grid of ``n_grid`` over its kind's range."""
    raw, index = [], []
    for i, ((lo_r, hi_r), q) in enumerate(quants):
        near = [np.arange(c - n_near, c + n_near) for c in (q.lo, q.mid, q.hi)]
        grid = np.linspace(lo_r, hi_r, n_grid).astype(np.int64)
        r = np.unique(np.clip(np.concatenate([grid, *near]), lo_r, hi_r))
        raw.append(r)
        index.append(np.full(len(r), i))
    return np.concatenate(raw), np.concatenate(index)


#: channels (byte offset 2c in a row of 32) the row macros are checked at: the first, the last
#: one an ldd displacement reaches (62), and between
ROW_CHANNELS = (0, 1, 7, 15, 31)

ROWS_MAIN = r"""
#include <stdint.h>
#include <string.h>
#include <avr/pgmspace.h>
#include "sbfw_hal.h"
@ARITH@
static const int16_t sb_vals[][@NC@] PROGMEM = { @VALS@ };
/* per window: its first row in sb_vals, its rows, how often each row repeats */
static const uint16_t sb_win[][3] PROGMEM = { @WINS@ };
static const uint8_t sb_ch[@NC@] = { @CH@ };
static int16_t sb_row[32];

static void sb_put(const void *p, uint16_t n)
{
    sbfw_hal_write((const uint8_t *)p, n);
}

int main(void)
{
    int16_t lo[@NC@], hi[@NC@], mlo[@NC@], mhi[@NC@];
    uint32_t sum[@NC@];
    unsigned w, k, r, rep;
    sbfw_hal_init();
    for (w = 0u; w < sizeof sb_win / sizeof sb_win[0]; ++w) {
        const uint16_t first = pgm_read_word(&sb_win[w][0]);
        const uint16_t n = pgm_read_word(&sb_win[w][1]);
        const uint16_t repeat = pgm_read_word(&sb_win[w][2]);
        SB_SQ_DECL(sq0);
        SB_SQ_DECL(sq1);
        SB_SQ_DECL(sq2);
        SB_SQ_DECL(sq3);
        SB_SQ_DECL(sq4);
        for (r = 0u; r < n; ++r) {
            const int16_t *row = sb_row;
            uint32_t m, root;
            for (k = 0u; k < @NC@u; ++k) {
                sb_row[sb_ch[k]] = (int16_t)pgm_read_word(&sb_vals[first + r][k]);
                if (r == 0u) {
                    lo[k] = hi[k] = mlo[k] = mhi[k] = sb_row[sb_ch[k]];
                    sum[k] = 0u;
                }
            }
            for (rep = 0u; rep < repeat; ++rep) {
@UPDATES@
            }
            /* a magnitude row: the squares of three channels summed, then its root */
            SB_ROW_SQ32SET(m, row, @M0@);
            SB_ROW_SQ32(m, row, @M1@);
            SB_ROW_SQ32(m, row, @M2@);
            root = sb_isqrt32(m);
            sb_put(&m, 4u);
            sb_put(&root, 2u);
        }
        for (k = 0u; k < @NC@u; ++k) {
            sb_put(&lo[k], 2u);
            sb_put(&hi[k], 2u);
            sb_put(&mlo[k], 2u);
            sb_put(&mhi[k], 2u);
            sb_put(&sum[k], 4u);
        }
        sb_put(&sq0, 4u);
        sb_put(&sq0_hi, 2u);
        sb_put(&sq1, 4u);
        sb_put(&sq1_hi, 2u);
        sb_put(&sq2, 4u);
        sb_put(&sq2_hi, 2u);
        sb_put(&sq3, 4u);
        sb_put(&sq3_hi, 2u);
        sb_put(&sq4, 4u);
        sb_put(&sq4_hi, 2u);
    }
    sbfw_hal_exit(0u);
    return 0;
}
"""


def _row_windows(rng) -> list:
    """(rows, repeat) windows (int16 rows of the checked channels) from seed ``rng``: random
    lengths with the extremes -32768 / 32767 mixed in, all-equal windows (each extreme, zero,
    a random value), one row, alternating extremes, and one row of -32768 repeated 4100 times
    (a sum of squares past 2^32: the carry word)."""
    n_ch = len(ROW_CHANNELS)
    out = []
    for n in (1, 2, 7, 63, 64, 65, 200):
        w = rng.integers(-32768, 32768, (n, n_ch))
        w[rng.random((n, n_ch)) < 0.1] = -32768
        w[rng.random((n, n_ch)) < 0.1] = 32767
        out.append((w, 1))
    for v in (-32768, 32767, 0, int(rng.integers(-32768, 32768))):
        out.append((np.full((50, n_ch), v), 1))
    out.append((np.where(np.arange(64)[:, None] % 2 == 0, -32768, 32767)
                + np.zeros((1, n_ch), int), 1))
    out.append((np.full((1, n_ch), -32768), 4100))
    return [(w.astype(np.int64), rep) for w, rep in out]


def test_avr_row_macros(tmp_path):
    """The AVR window-pass and magnitude-row macros (q15_c.squares, q15_c.avr_rows: ldd at byte
    offsets 0 .. 62 of a row, GCC inline assembly) on seeded rows sent over simavr's USART,
    against numpy's integers: minimum, maximum, both at once, the sum of q + 32768 (mod 2^32),
    the 48-bit sum of squares, and per row the sum of three squares and its floor root."""
    need_tools("avr-gcc")
    if not Path("/usr/include/simavr/sim_avr.h").is_file():
        pytest.skip("libsimavr-dev is not installed")

    windows = _row_windows(np.random.default_rng(2028))
    mags = (0, 2, 4)                    # indices into ROW_CHANNELS
    updates = []
    for k, c in enumerate(ROW_CHANNELS):
        updates += [f"                SB_ROW_MIN(lo[{k}], row, {2 * c});",
                    f"                SB_ROW_MAX(hi[{k}], row, {2 * c});",
                    f"                SB_ROW_MINMAX(mlo[{k}], mhi[{k}], row, {2 * c});",
                    f"                SB_ROW_SUM(sum[{k}], row, {2 * c});",
                    f"                SB_ROW_SQ(sq{k}, row, {2 * c});"]
    firsts = np.cumsum([0] + [len(w) for w, _ in windows])
    vals = np.concatenate([w for w, _ in windows])
    source = (ROWS_MAIN.replace("@ARITH@", q15_c.squares("sb", "SB") + q15_c.isqrt("sb", "SB")
                                + q15_c.avr_rows("SB"))
              .replace("@NC@", str(len(ROW_CHANNELS)))
              .replace("@CH@", ", ".join(map(str, ROW_CHANNELS)))
              .replace("@VALS@", ", ".join("{" + ", ".join(f"{int(v)}" if v > -32768
                                                           else "INT16_MIN" for v in row) + "}"
                                           for row in vals))
              .replace("@WINS@", ", ".join(f"{{{int(f)}u, {len(w)}u, {rep}u}}"
                                           for f, (w, rep) in zip(firsts, windows)))
              .replace("@UPDATES@", "\n".join(updates))
              .replace("@M0@", str(2 * ROW_CHANNELS[mags[0]]))
              .replace("@M1@", str(2 * ROW_CHANNELS[mags[1]]))
              .replace("@M2@", str(2 * ROW_CHANNELS[mags[2]])))
    out = _run_on_simavr(tmp_path, "rows", source)
    data = out
    row_t = np.dtype([("m", "<u4"), ("root", "<u2")])
    stat_t = np.dtype([("lo", "<i2"), ("hi", "<i2"), ("mlo", "<i2"), ("mhi", "<i2"),
                       ("sum", "<u4")])
    at = 0
    for w, rep in windows:
        rows = np.frombuffer(data, row_t, len(w), at)
        at += rows.nbytes
        m = (w[:, list(mags)] ** 2).sum(axis=1)
        assert rows["m"].tolist() == m.tolist()
        assert rows["root"].tolist() == [math.isqrt(int(v)) for v in m]
        st = np.frombuffer(data, stat_t, len(ROW_CHANNELS), at)
        at += st.nbytes
        sq = np.frombuffer(data, np.dtype([("a", "<u4"), ("hi", "<u2")]), len(ROW_CHANNELS), at)
        at += sq.nbytes
        assert st["lo"].tolist() == st["mlo"].tolist() == w.min(axis=0).tolist()
        assert st["hi"].tolist() == st["mhi"].tolist() == w.max(axis=0).tolist()
        assert st["sum"].tolist() == (rep * (w + 32768).sum(axis=0) % 2 ** 32).tolist()
        got = sq["a"].astype(np.int64) + (sq["hi"].astype(np.int64) << 32)
        assert got.tolist() == (rep * (w ** 2).sum(axis=0)).tolist()
    assert at == len(data)
    assert max(rep * (w[:, 0] ** 2).sum() for w, rep in windows) >= 2 ** 32   # the carry word


#: windows of the rms check: powers of two (the AVR shift of the 48-bit sum, every bit and
#: byte offset of the quotient's first bit from 0 to 16) and two others (the 64-bit division)
RMS_WINDOWS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768,
               65536, 48, 100)

RMS_MAIN = r"""
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <avr/pgmspace.h>
#include "sbfw_hal.h"
@ARITH@
static const uint32_t sb_e[][2] PROGMEM = { @ENERGIES@ };

int main(void)
{
    unsigned i;
    sbfw_hal_init();
@CALLS@
    sbfw_hal_exit(0u);
    return 0;
}
"""


def _energies(rng, window: int) -> list:
    """Sums of squares of a window: 0, 1, the largest (window * 2^30) and its neighbours,
    window times squares and their neighbours, seeded random ones below the largest."""
    top = window << 30
    out = [0, 1, top, top - 1, window - 1, window]
    for r in rng.integers(0, 32769, 8).tolist():
        out += [window * r * r, window * r * r - 1, window * (r * r + 2 * r) + window - 1]
    out += rng.integers(0, top + 1, 16).tolist()
    return sorted({min(max(int(e), 0), top) for e in out})


def test_avr_rms_of_48_bit_sums(tmp_path):
    """<p>_rms_q15 of the 48-bit AVR sum of squares (<P>_SQ_SUM: the int64 by register moves)
    for power-of-two windows 1 .. 65536 (the shift of bytes j/8 .. j/8 + 4 by at most 4 bits)
    and two other windows (the 64-bit division) against math.isqrt(energy // window), at 0,
    the largest energy and its neighbours, squares and their neighbours and seeded random
    energies; the power-of-two ones with no 64-bit library call."""
    need_tools("avr-gcc")
    if not Path("/usr/include/simavr/sim_avr.h").is_file():
        pytest.skip("libsimavr-dev is not installed")

    rng = np.random.default_rng(4828)
    arith, calls, rows, want = q15_c.squares("sb", "SB"), [], [], []
    for w in RMS_WINDOWS:
        arith += (f"#define SB{w}_WINDOW {w}u\n" + q15_c.isqrt(f"sb{w}", f"SB{w}", rms=True)
                  + f"static __attribute__((noinline)) uint16_t sb_rms_{w}(uint32_t e, "
                  f"uint16_t e_hi)\n{{\n    return (uint16_t)sb{w}_rms_q15(SB_SQ_SUM(e));\n}}\n")
        energies = _energies(rng, w)
        calls.append(f"    for (i = {len(rows)}u; i < {len(rows) + len(energies)}u; ++i) {{\n"
                     f"        const uint16_t r = sb_rms_{w}(pgm_read_dword(&sb_e[i][0]),\n"
                     f"            (uint16_t)pgm_read_dword(&sb_e[i][1]));\n"
                     f"        sbfw_hal_write((const uint8_t *)&r, 2u);\n    }}")
        rows += [(e & 0xFFFFFFFF, e >> 32) for e in energies]
        want += [math.isqrt(e // w) for e in energies]
    source = (RMS_MAIN.replace("@ARITH@", arith).replace("@CALLS@", "\n".join(calls))
              .replace("@ENERGIES@", ", ".join(f"{{{a}u, {h}u}}" for a, h in rows)))
    out = _run_on_simavr(tmp_path, "rms", source, libm=True)
    data = out
    assert np.frombuffer(data, "<u2").tolist() == want
    dis = subprocess.run(["avr-objdump", "-d", "rms.elf"], cwd=tmp_path, check=True,
                         capture_output=True, text=True).stdout
    for w in RMS_WINDOWS:
        body = dis.split(f"<sb_rms_{w}>:")[1].split(">:")[0]
        assert ("di3" in body) == (w & (w - 1) != 0), w      # __lshrdi3 / __udivdi3 or none


#: (window, channels, groups, window known to the generator) of the assembly-pass check: the
#: issue bundle's statistics (two rows a turn, one-byte row count and carry word), two sums
#: of squares and a min/max over 260 rows (two rows a turn, a 16-bit row count), a row of 40
#: channels (one row a turn, the pointer advanced by subi / sbci: 80 bytes), a row of 20
#: channels read at byte 38 (one row a turn: the second row's ldd would pass 63; a loop
#: longer than brne reaches: breq + rjmp), a window the generator was not told (16-bit count
#: and carry word), three sums of squares and a sum (more registers than the loop may ask
#: for: the macros' C loop)
PASS_CASES = (
    (64, 5, ((("ch", (1,)), {"qsq"}), (("ch", (3,)), {"qsum"}), (("ch", (0,)), {"qmin"}),
             (("ch", (4,)), {"qmin", "qmax"})), True),
    (260, 3, ((("ch", (0,)), {"qsq"}), (("ch", (1,)), {"qsq"}),
              (("ch", (2,)), {"qmin", "qmax"})), True),
    (8, 40, ((("ch", (30,)), {"qmax"}), (("ch", (0,)), {"qsum", "qmin"})), True),
    (30, 20, ((("ch", (0,)), {"qsq"}), (("ch", (19,)), {"qsq"}),
              (("ch", (10,)), {"qmin", "qmax"})), True),
    (32, 2, ((("ch", (0,)), {"qsq"}), (("ch", (1,)), {"qmin"})), False),
    (16, 4, ((("ch", (0,)), {"qsq"}), (("ch", (1,)), {"qsq"}), (("ch", (3,)), {"qsq"}),
             (("ch", (2,)), {"qsum"})), True),
)


def _random_pass_cases(seed: int, n: int) -> list:
    """Seeded window passes nobody wrote by hand: 1-4 groups on distinct channels of 1-40,
    each a random non-empty set of the statistics, windows 1-300 (a buffer within the
    program's 1600-byte arena), the window known to the emitter or not."""
    rng = np.random.default_rng(seed)
    stats = ("qsq", "qsum", "qmin", "qmax")
    cases = []
    while len(cases) < n:
        n_ch = int(rng.integers(1, 41))
        window = int(rng.integers(1, min(300, 500 // n_ch) + 1))
        chans = rng.choice(n_ch, int(rng.integers(1, min(4, n_ch) + 1)), replace=False)
        groups = tuple(((("ch", (int(c),)), {x for x, on in zip(stats, rng.random(4) < 0.5)
                                               if on} or {str(rng.choice(stats))}))
                       for c in chans)
        cases.append((window, n_ch, groups, bool(rng.random() < 0.5)))
    return cases


def test_avr_window_pass_assembly_loop(tmp_path):
    """passes_c's AVR window pass (one inline-assembly loop per ring-buffer segment, two rows
    a turn where the ldd offsets allow, or the row macros' C loop past the register budget)
    on seeded int16 rows with -32768 / 32767 mixed in, for the hand-written cases (one per
    loop form) and seeded random ones, every ring start from a few (0, 1, the last, random),
    against numpy's sums, sums of squares, minima and maxima of the whole buffer (the
    statistics do not depend on the order)."""
    need_tools("avr-gcc")
    if not Path("/usr/include/simavr/sim_avr.h").is_file():
        pytest.skip("libsimavr-dev is not installed")
    from sensorbudget.firmware_gen import passes_c

    rng = np.random.default_rng(2029)
    parts, calls, want, forms = [], [], [], []
    for i, (window, n_ch, groups, known) in enumerate([*PASS_CASES,
                                                       *_random_pass_cases(2029, 8)]):
        p, P = f"c{i}", f"C{i}"
        text = passes_c.window_pass(p, P, list(groups), True, [f"x{c}" for c in range(n_ch)],
                                    window if known else 0)
        forms.append(("bst %" in text, "breq 8f" in text, "lo8(-(" in text,
                      "dec %[n]" in text, "_e = 0u" in text, "9:" in text))
        rows = rng.integers(-32768, 32768, (window, n_ch))
        rows[rng.random(rows.shape) < 0.05] = -32768
        rows[rng.random(rows.shape) < 0.05] = 32767
        parts.append(
            f"#define {P}_WINDOW {window}u\n#define {P}_N_CHANNELS {n_ch}u\n"
            f"typedef int16_t {p}_sample_t;\n"
            f"typedef struct {{ {p}_sample_t buf[{window}][{n_ch}]; }} {p}_stream_t;\n"
            + q15_c.squares(p, P) + passes_c.unroll(P) + passes_c.stats_struct(p)
            + passes_c.simd(p, P) + text
            + f"static const int16_t {p}_rows[{window}][{n_ch}] PROGMEM = {{ "
            + ", ".join("{" + ", ".join(str(int(v)) if v > -32768 else "INT16_MIN"
                                        for v in r) + "}" for r in rows) + " };\n")
        stores, one = [], []
        for g, ((_, (c,)), stats) in enumerate(groups):
            col = rows[:, c]
            if "qsq" in stats:
                stores.append(f"sb_put(&st[{g}].qsq, 8u);")
                one.append(np.array([(col ** 2).sum()], "<i8").tobytes())
            if "qsum" in stats:
                stores.append(f"sb_put(&st[{g}].qsum, 4u);")
                one.append(np.array([col.sum()], "<i4").tobytes())
            if "qmin" in stats:
                stores.append(f"sb_put(&st[{g}].qlo, 2u);")
                one.append(np.array([col.min()], "<i2").tobytes())
            if "qmax" in stats:
                stores.append(f"sb_put(&st[{g}].qhi, 2u);")
                one.append(np.array([col.max()], "<i2").tobytes())
        starts = sorted({0, 1 % window, window - 1, *rng.integers(0, window, 3).tolist()})
        want.append(b"".join(one) * len(starts))    # every start: the same statistics
        calls.append(f"    {{\n        {p}_stream_t *s = ({p}_stream_t *)sb_arena;\n"
                     f"        {p}_stats_t st[{len(groups)}];\n"
                     f"        static const uint16_t starts[] = {{ "
                     f"{', '.join(f'{v}u' for v in starts)} }};\n"
                     f"        memcpy_P(s->buf, {p}_rows, sizeof s->buf);\n"
                     f"        for (k = 0u; k < {len(starts)}u; ++k) {{\n"
                     f"            {p}_window_pass(s, starts[k], st);\n"
                     + "".join(f"            {x}\n" for x in stores)
                     + "        }\n    }")
    # (two rows a turn, long branch, subi step, one-byte count, one-byte carry, assembly)
    assert forms[:len(PASS_CASES)] == [(True, False, False, True, True, True),
                     (True, False, False, False, True, True),
                     (False, False, True, True, False, True),
                     (False, True, False, True, True, True),
                     (True, False, False, False, False, True), (False,) * 6]
    source = ("#include <stdint.h>\n#include <string.h>\n#include <avr/pgmspace.h>\n"
              '#include "sbfw_hal.h"\n' + "".join(parts)
              + "static uint8_t sb_arena[1600];\n\n"
              "static void sb_put(const void *p, uint16_t n)\n{\n"
              "    sbfw_hal_write((const uint8_t *)p, n);\n}\n\n"
              "int main(void)\n{\n    unsigned k;\n    sbfw_hal_init();\n"
              + "\n".join(calls) + "\n    sbfw_hal_exit(0u);\n    return 0;\n}\n")
    out = _run_on_simavr(tmp_path, "pass", source)
    assert out == b"".join(want)


def test_issue_bundle_replays_exactly_on_simavr(tmp_path):
    """The issue-28 bundle (a Q15 magnitude set, rms, mean, min, ptp, last: every AVR assembly
    path of the Q15 extractors, the magnitude rows and their cache included) replayed by
    ``simulate`` on simavr: every prediction equals the integer reference's score."""
    need_tools("avr-gcc", "simavr")
    from sensorbudget.device_sim.backends import available_backends
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.device_sim.simulate import simulate
    from sensorbudget.trainer.bundle.model import load_bundle
    from tests.firmware_gen import gen_runner, generative

    if available_backends().get("simavr") is not None:
        pytest.skip(f"simavr: {available_backends()['simavr']}")
    rec = generative.write_recordings(tmp_path / "recordings", 2026, n_recordings=2)
    case = generative.issue_case()
    generative.case_bundle(case, generative.feature_set(case, rec, tmp_path),
                           tmp_path / "bundle")
    plan = ReferenceModel(load_bundle(tmp_path / "bundle"), "float32").plan
    assert any(e.kind == "mag_mean" for e in plan.extractors)
    scales = gen_runner.full_scale(case, plan.channels, gen_runner.recordings_arrays(rec))
    _, result = simulate(tmp_path / "bundle", rec, backend="simavr", numeric="q15",
                         full_scale=scales, workdir=tmp_path / "sim", bench=False)
    done = [r for r in result.records if r.scores is not None]
    assert len(done) == 24 and result.unexpected == 0
    assert all(np.array_equal(r.scores, r.reference) for r in done)
