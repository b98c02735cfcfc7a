"""A replay program for the generated C library, built with CMake (or make) for the host and for
bare-metal Cortex-M under QEMU (semihosting output), and the reference it must match."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sensorbudget.export import cgen
from sensorbudget.firmware_gen import reference
from sensorbudget.firmware_gen.targets import WARNINGS

#: the includes, the output buffer and the printers (put_text, put_int, put_score) that both
#: replay programs (single- and multi-rate libraries) use
PRINT_C = r"""
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "@name@.h"
#include "replay_data.h"

void replay_puts(const char *s);

static char out[32 + 12 * @NAME@_N_TARGETS];

static char *put_text(char *p, const char *s)
{
    while (*s != '\0') {
        *p++ = *s++;
    }
    return p;
}

#if defined(@NAME@_NUMERIC_FLOAT32)
static char *put_hex(char *p, uint32_t v)
{
    int i;
    for (i = 7; i >= 0; --i) {
        *p++ = "0123456789abcdef"[(v >> (unsigned)(4 * i)) & 0xFu];
    }
    return p;
}
#endif

static char *put_int(char *p, int32_t v)
{
    char digits[12];
    int n = 0;
    uint32_t u = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
    if (v < 0) {
        *p++ = '-';
    }
    do {
        digits[n++] = (char)('0' + (int)(u % 10u));
        u /= 10u;
    } while (u != 0u);
    while (n > 0) {
        *p++ = digits[--n];
    }
    return p;
}

static char *put_score(char *p, @name@_score_t s)
{
#if defined(@NAME@_NUMERIC_FLOAT32)
    uint32_t bits;
    memcpy(&bits, &s, sizeof bits);
    return put_hex(p, bits);
#else
    return put_int(p, (int32_t)s);
#endif
}

/* One line "w <index> <score> ..." for the window just predicted. */
static void put_window(uint32_t index, const @name@_score_t *scores)
{
    unsigned j;
    char *p = put_int(put_text(out, "w "), (int32_t)index);
    for (j = 0u; j < @NAME@_N_TARGETS; ++j) {
        p = put_score(put_text(p, " "), scores[j]);
    }
    p = put_text(p, "\n");
    *p = '\0';
    replay_puts(out);
}

"""

#: the single-rate program
#: it pushes every sample, checks the API's contract and prints one line per window:
#: "w <index> <score> ..." (float32 scores as the hex of their bits, integers in decimal)
MAIN_C = PRINT_C + r"""static @name@_t model;

int main(void)
{
    @name@_score_t scores[@NAME@_N_TARGETS];
    @name@_sample_t sample[@NAME@_N_CHANNELS];
    unsigned i, c;
    char *p = out;
    @name@_init(&model);
    /* the contract before any window, and on NULL arguments */
    p = put_text(p, "pre ");
    p = put_int(p, (int32_t)@name@_predict(&model, scores));
    p = put_text(p, " ");
    p = put_int(p, (int32_t)@name@_predict(NULL, scores));
    p = put_text(p, " ");
    p = put_int(p, (int32_t)@name@_ready(&model));
    p = put_text(p, "\n");
    *p = '\0';
    replay_puts(out);
    for (i = 0u; i < REPLAY_N; ++i) {
        for (c = 0u; c < @NAME@_N_CHANNELS; ++c) {
            sample[c] = (@name@_sample_t)0;
        }
@convert@
        if (!@name@_push_sample(&model, sample)) {
            if (@name@_ready(&model) && i + 1u < @NAME@_WINDOW) {
                replay_puts("ready before the first window\n");
            }
            continue;
        }
        if (!@name@_ready(&model) || @name@_predict(&model, scores) != @NAME@_OK
            || @name@_ready(&model)) {
            replay_puts("contract broken\n");
            return 3;
        }
        put_window(@name@_window_index(&model), scores);
    }
    return 0;
}
"""

HOST_IO = r"""
#include <stdio.h>
void replay_puts(const char *s);
void replay_puts(const char *s)
{
    fputs(s, stdout);
}
"""

#: bare-metal start-up for QEMU (mps2-an386, microbit): vector table, .data/.bss, the FPU when
#: there is one, then main; output and exit code through semihosting
ARM_IO = r"""
#include <stdint.h>
extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end, __stack_top;
int main(void);
void replay_puts(const char *s);
void reset_handler(void);

static int semihost(int op, void *arg)
{
    register int r0 __asm__("r0") = op;
    register void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void replay_puts(const char *s)
{
    (void)semihost(0x04, (void *)(uintptr_t)s);
}

static void replay_exit(int code)
{
    uint32_t block[2];
    block[0] = 0x20026u;
    block[1] = (uint32_t)code;
    (void)semihost(0x20, block);
    for (;;) {
    }
}

void reset_handler(void)
{
    uint32_t *src = &__data_load, *dst = &__data_start;
    while (dst < &__data_end) {
        *dst++ = *src++;
    }
    for (dst = &__bss_start; dst < &__bss_end;) {
        *dst++ = 0u;
    }
#if defined(__ARM_FP)
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb");
#endif
    replay_exit(main());
}

static void fault(void)
{
    replay_exit(254);
}

typedef union {
    uint32_t *sp;
    void (*fn)(void);
} vector_t;

__attribute__((section(".vectors"), used)) static const vector_t vectors[16] = {
    {&__stack_top}, {.fn = reset_handler}, {.fn = fault}, {.fn = fault}, {.fn = fault},
    {.fn = fault}, {.fn = fault}};
"""

LINKER_SCRIPT = """\
MEMORY { FLASH (rx) : ORIGIN = 0x00000000, LENGTH = 256K
         RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 16K }
SECTIONS {
  .text : { KEEP(*(.vectors)) *(.text*) *(.rodata*) . = ALIGN(4); } > FLASH
  .ARM.exidx : { *(.ARM.exidx*) } > FLASH
  .data : { __data_start = .; *(.data*) . = ALIGN(4); __data_end = .; } > RAM AT > FLASH
  __data_load = LOADADDR(.data);
  .bss (NOLOAD) : { __bss_start = .; *(.bss*) *(COMMON) . = ALIGN(4); __bss_end = .; } > RAM
  __stack_top = ORIGIN(RAM) + LENGTH(RAM);
}
"""

#: (CPU flags, QEMU machine): the M0+ image runs on the micro:bit's Cortex-M0 (same ARMv6-M ISA)
ARM_CPUS = {
    "cortex-m4f": ("-mthumb -mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard", "mps2-an386"),
    "cortex-m0plus": ("-mthumb -mcpu=cortex-m0plus -mfloat-abi=soft", "microbit"),
}

PROJECT = """\
cmake_minimum_required(VERSION 3.13)
project(replay C)
add_compile_options({warnings})
add_subdirectory(${{LIB}} lib)
add_executable(replay main.c {io})
target_link_libraries(replay PRIVATE {name})
"""

TOOLCHAIN = """\
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_C_FLAGS_INIT "{cpu}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles -specs=nano.specs -specs=nosys.specs \
-T{ld} -Wl,--gc-sections")
"""


def need(*tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{missing[0]} is not installed (make deps-embedded)")


def write_tree(files: dict, dest: Path) -> Path:
    for rel, text in files.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="ascii")
    return dest


def replay_values(plan, columns) -> np.ndarray:
    """The float32 values the program pushes (n x channels)."""
    return np.column_stack([np.asarray(columns[c], dtype=np.float64)
                            for c in plan.channels]).astype(np.float32)


def program_files(lib, values, io: str) -> dict:
    """main.c, replay_data.h and the I/O file (``HOST_IO`` or ``ARM_IO``) of the program."""
    name, plan = lib.name, lib.plan
    assert np.isfinite(values).all()
    rows = ",\n".join("    {" + ", ".join(cgen.c_float(v) for v in row) + "}" for row in values)
    data = (f"#define REPLAY_N {len(values)}u\nstatic const float replay_values[REPLAY_N]"
            f"[{len(plan.channels)}] = {{\n{rows}\n}};\n")
    if plan.fixed:
        convert = f"        {name}_quantize_sample(replay_values[i], sample);"
    else:
        convert = ("        for (c = 0u; c < " + name.upper() + "_N_CHANNELS; ++c) {\n"
                   "            sample[c] = replay_values[i][c];\n        }")
    main = MAIN_C.replace("@convert@", convert).replace("@name@", name)
    return {"main.c": main.replace("@NAME@", name.upper()), "replay_data.h": data,
            "io.c": io}


def cmake_build(project: Path, lib_dir: Path, build: Path, *, toolchain: Path | None = None,
                build_type: str = "Release") -> Path:
    argv = ["cmake", "-S", str(project), "-B", str(build), f"-DLIB={lib_dir}",
            f"-DCMAKE_BUILD_TYPE={build_type}"]
    if toolchain is not None:
        argv.append(f"-DCMAKE_TOOLCHAIN_FILE={toolchain}")
    for cmd in (argv, ["cmake", "--build", str(build)]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return build / "replay"


def build_replay(lib, lib_dir: Path, values, work: Path, cpu: str | None = None) -> Path:
    """CMake project ``add_subdirectory(lib)`` + the replay program; the executable."""
    project = work / "project"
    io = HOST_IO if cpu is None else ARM_IO
    files = program_files(lib, values, io)
    files["CMakeLists.txt"] = PROJECT.format(
        name=lib.name, io="io.c", warnings=" ".join(w for w in WARNINGS if w != "-std=c99"))
    toolchain = None
    if cpu is not None:
        files["link.ld"] = LINKER_SCRIPT
        files["toolchain.cmake"] = TOOLCHAIN.format(cpu=ARM_CPUS[cpu][0],
                                                    ld=project / "link.ld")
        toolchain = project / "toolchain.cmake"
    write_tree(files, project)
    return cmake_build(project, lib_dir, work / "build", toolchain=toolchain,
                       build_type="Release" if cpu is None else "MinSizeRel")


def run_host(exe: Path) -> str:
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc.stdout


def run_qemu(exe: Path, cpu: str) -> str:
    """Run ``exe`` on the CPU's QEMU machine; its semihosting output (a file) and exit code."""
    out = exe.parent / "semihosting.txt"
    proc = subprocess.run(
        ["qemu-system-arm", "-M", ARM_CPUS[cpu][1], "-display", "none", "-monitor", "none",
         "-serial", "null", "-kernel", str(exe), "-chardev", f"file,id=semi,path={out}",
         "-semihosting-config", "enable=on,target=native,chardev=semi", "-icount", "shift=0"],
        capture_output=True, text=True, timeout=120)
    text = out.read_text(encoding="ascii") if out.is_file() else ""
    assert proc.returncode == 0, (proc.returncode, text[-2000:], proc.stderr[-2000:])
    return text


def parse_output(text: str, plan) -> tuple:
    """(the "pre" line's values, window indices, scores array in the numeric's dtype)."""
    lines = text.splitlines()
    assert lines[0].startswith("pre "), lines[:3]
    pre = [int(v) for v in lines[0].split()[1:]]
    windows, scores = [], []
    for line in lines[1:]:
        head, index, *values = line.split()
        assert head == "w", line
        windows.append(int(index))
        if plan.fixed:
            scores.append([int(v) for v in values])
        else:
            scores.append([int(v, 16) for v in values])
    if plan.fixed:
        return pre, windows, np.array(scores, dtype=np.int64).reshape(-1, plan.t)
    bits = np.array(scores, dtype=np.uint32).reshape(-1, plan.t)
    return pre, windows, bits.view(np.float32)


def expected(plan, bundle, values) -> tuple:
    """(features, model inputs, scores) of the reference for the pushed float32 values."""
    samples = reference.quantize_samples(plan, values) if plan.fixed else values
    return reference.stream(plan, bundle, samples)
