"""The C library (``export c-library``) for RISC-V: built with CMake (``add_subdirectory`` +
``target_link_libraries``) by riscv64-unknown-elf-gcc for RV32IMC (ESP32-C3 class) and RV32IMAC
(FE310), linked bare-metal at the HiFive1 Rev B's addresses and run on QEMU sifive_e (an IMC
image runs on the E31's IMAC core): a program replays an excerpt of the real Air Quality
recording through ``<name>_push_sample`` / ``<name>_predict`` and must give the reference's
scores (float32 bit for bit through soft float, Q15 exactly). Its ESP-IDF component form
(``idf_component.yml`` and the ``idf_component_register`` branch of ``CMakeLists.txt``) is
parsed, and the CMakeLists is run by CMake as IDF would include it (a stand-in
``idf_component_register`` records what it is given) and compiled for RV32IMC."""

import subprocess

import numpy as np
import pytest

from sensorbudget.firmware_gen.library import generate_library
from sensorbudget.firmware_gen.targets import WARNINGS
from tests.firmware_gen.conftest import AIR_QUALITY
from tests.firmware_gen.library_helpers import (
    PROJECT,
    cmake_build,
    need,
    program_files,
    replay_values,
    write_tree,
)
from tests.firmware_gen.test_library_cmake import check

EXCERPT = 160
MARCH = {"rv32imc": "-march=rv32imc -mabi=ilp32 -misa-spec=2.2",
         "rv32imac": "-march=rv32imac -mabi=ilp32 -misa-spec=2.2"}

#: start-up for QEMU sifive_e (revb: starts at 0x20010000): gp, sp, .data/.bss, main; output
#: and exit code through RISC-V semihosting (SYS_WRITE0, SYS_EXIT_EXTENDED)
RV_IO = r"""
#include <stdint.h>
extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end;
int main(void);
void replay_puts(const char *s);
void replay_start(void);

__asm__(".section .text.init, \"ax\", @progbits\n.globl _start\n_start:\n"
        ".option push\n.option norelax\n    la gp, __global_pointer$\n.option pop\n"
        "    la sp, __stack_top\n    j replay_start\n.text\n");

static int semihost(int op, void *arg)
{
    register int a0 __asm__("a0") = op;
    register void *a1 __asm__("a1") = arg;
    __asm__ volatile(".balign 16\n\t.option push\n\t.option norvc\n\t"
                     "slli zero, zero, 0x1f\n\tebreak\n\tsrai zero, zero, 7\n\t.option pop"
                     : "+r"(a0) : "r"(a1) : "memory");
    return a0;
}

void replay_puts(const char *s)
{
    (void)semihost(0x04, (void *)(uintptr_t)s);
}

void replay_start(void)
{
    uint32_t *src = &__data_load, *dst = &__data_start;
    uint32_t block[2];
    while (dst < &__data_end) {
        *dst++ = *src++;
    }
    for (dst = &__bss_start; dst < &__bss_end;) {
        *dst++ = 0u;
    }
    block[0] = 0x20026u;
    block[1] = (uint32_t)main();
    (void)semihost(0x20, block);
    for (;;) {
    }
}
"""

LINKER_SCRIPT = """\
ENTRY(_start)
MEMORY { FLASH (rx) : ORIGIN = 0x20010000, LENGTH = 4032K
         RAM (rwx) : ORIGIN = 0x80000000, LENGTH = 16K }
SECTIONS {
  .text : { KEEP(*(.text.init)) *(.text*) *(.rodata*) *(.srodata*) . = ALIGN(4); } > FLASH
  .data : { __data_start = .; *(.data*) __global_pointer$ = . + 0x800; *(.sdata*)
            . = ALIGN(4); __data_end = .; } > RAM AT > FLASH
  __data_load = LOADADDR(.data);
  .bss (NOLOAD) : { __bss_start = .; *(.sbss*) *(.bss*) *(COMMON) . = ALIGN(4);
                    __bss_end = .; } > RAM
  __stack_top = ORIGIN(RAM) + LENGTH(RAM);
}
"""

TOOLCHAIN = """\
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_C_FLAGS_INIT "{march} -mcmodel=medany --specs=picolibc.specs")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles -T{ld} -Wl,--gc-sections")
"""


def run_on_sifive_e(exe, out):
    """Run ``exe`` on QEMU's sifive_e (HiFive1 Rev B) with its semihosting output in the file
    ``out``; (the finished process, that output or "" when none was written)."""
    proc = subprocess.run(
        ["qemu-system-riscv32", "-M", "sifive_e,revb=true", "-display", "none", "-monitor",
         "none", "-serial", "null", "-kernel", str(exe), "-chardev", f"file,id=semi,path={out}",
         "-semihosting-config", "enable=on,target=native,chardev=semi", "-icount", "shift=0"],
        capture_output=True, text=True, timeout=120)
    return proc, out.read_text(encoding="ascii") if out.is_file() else ""


@pytest.fixture(scope="module")
def aq_values(aq_features):
    from sensorbudget.trainer.sensing.recordings import load_recordings

    rec = load_recordings(AIR_QUALITY, aq_features.sample_rate).recordings[0]
    return {c: np.asarray(v)[:EXCERPT] for c, v in rec.columns.items()}


def _elf_flags(path) -> int:
    from elftools.elf.elffile import ELFFile

    with open(path, "rb") as fh:
        return ELFFile(fh)["e_flags"]


@pytest.mark.parametrize("march", ["rv32imc", "rv32imac"])
@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_riscv_cmake_on_qemu_matches_the_bundle(aq_bundle, aq_values, tmp_path, march, numeric):
    need("cmake", "make", "riscv64-unknown-elf-gcc", "qemu-system-riscv32")
    lib = generate_library(aq_bundle, numeric=numeric)
    folder = write_tree(lib.files, tmp_path / "lib")
    values = replay_values(lib.plan, aq_values)
    assert np.isfinite(values).all()
    project = tmp_path / "project"
    files = program_files(lib, values, RV_IO)
    files["CMakeLists.txt"] = PROJECT.format(
        name=lib.name, io="io.c", warnings=" ".join(w for w in WARNINGS if w != "-std=c99"))
    files["link.ld"] = LINKER_SCRIPT
    files["toolchain.cmake"] = TOOLCHAIN.format(march=MARCH[march], ld=project / "link.ld")
    write_tree(files, project)
    exe = cmake_build(project, folder, tmp_path / "build",
                      toolchain=project / "toolchain.cmake", build_type="MinSizeRel")
    pytest.importorskip("elftools")
    assert _elf_flags(exe) & 0x7 == 0x1            # RVC, soft-float ABI
    dump = subprocess.run(["riscv64-unknown-elf-objdump", "-d", str(exe)], capture_output=True,
                          text=True, check=True).stdout
    atomics = [ln for ln in dump.splitlines() if "\tamo" in ln or "\tlr.w" in ln]
    assert march == "rv32imac" or not atomics     # an IMC core has no A extension
    proc, text = run_on_sifive_e(exe, tmp_path / "semihosting.txt")
    assert proc.returncode == 0, (proc.returncode, text[-2000:], proc.stderr[-2000:])
    check(lib, aq_bundle, values, text)


#: what IDF's build does with a component, reduced to what the library's CMakeLists uses: it
#: sets ESP_PLATFORM, adds the folder, and idf_component_register makes COMPONENT_LIB
IDF_PROJECT = """\
cmake_minimum_required(VERSION 3.13)
project(replay C)
set(ESP_PLATFORM 1)
set(REGISTERED "" CACHE INTERNAL "")
function(idf_component_register)
  cmake_parse_arguments(ARG "" "" "SRCS;INCLUDE_DIRS" ${{ARGN}})
  add_library(__idf_{name} STATIC ${{ARG_SRCS}})
  foreach(dir ${{ARG_INCLUDE_DIRS}})
    target_include_directories(__idf_{name} PUBLIC ${{CMAKE_CURRENT_LIST_DIR}}/${{dir}})
  endforeach()
  set(COMPONENT_LIB __idf_{name} PARENT_SCOPE)
  set(REGISTERED "${{ARG_SRCS}}|${{ARG_INCLUDE_DIRS}}" CACHE INTERNAL "")
endfunction()
add_compile_options({warnings})
add_subdirectory(${{LIB}} lib)
file(WRITE ${{CMAKE_BINARY_DIR}}/registered.txt "${{REGISTERED}}")
add_executable(replay main.c io.c)
target_link_libraries(replay PRIVATE __idf_{name})
"""


def test_idf_component_manifest_parses_and_excludes_only_other_build_systems(aq_bundle,
                                                                             tmp_path):
    import glob

    yaml = pytest.importorskip("yaml")
    from sensorbudget.firmware_gen.library_build import library_version, sources

    lib = generate_library(aq_bundle, numeric="q15")
    data = yaml.safe_load(lib.files["idf_component.yml"])
    assert data["version"] == library_version() and data["dependencies"] == {"idf": ">=4.4"}
    assert lib.plan.numeric in data["description"] and lib.name in data["description"]
    files = sorted(lib.files)
    folder = write_tree(lib.files, tmp_path / "lib")
    for pattern in data["files"]["exclude"]:           # the component manager's glob syntax
        hit = [f for f in glob.glob(pattern, root_dir=folder, recursive=True)
               if (folder / f).is_file()]
        assert hit, pattern
        assert not [f for f in hit if f.startswith("src/") or f == "CMakeLists.txt"], hit
    assert set(sources(lib.name)) <= set(files)


def test_idf_component_form_builds_for_rv32imc_and_matches_the_bundle(aq_bundle, aq_values,
                                                                       tmp_path):
    """The CMakeLists as IDF includes it (ESP_PLATFORM, idf_component_register), compiled for
    the ESP32-C3's RV32IMC and run on QEMU: the registered sources and include directory, and
    scores equal to the reference."""
    need("cmake", "make", "riscv64-unknown-elf-gcc", "qemu-system-riscv32")
    from sensorbudget.firmware_gen.library_build import sources

    lib = generate_library(aq_bundle, numeric="q15")
    folder = write_tree(lib.files, tmp_path / "lib")
    values = replay_values(lib.plan, aq_values)
    project = tmp_path / "project"
    files = program_files(lib, values, RV_IO)
    files["CMakeLists.txt"] = IDF_PROJECT.format(
        name=lib.name, warnings=" ".join(w for w in WARNINGS if w != "-std=c99"))
    files["link.ld"] = LINKER_SCRIPT
    files["toolchain.cmake"] = TOOLCHAIN.format(march=MARCH["rv32imc"], ld=project / "link.ld")
    write_tree(files, project)
    exe = cmake_build(project, folder, tmp_path / "build",
                      toolchain=project / "toolchain.cmake", build_type="MinSizeRel")
    srcs, includes = (tmp_path / "build" / "registered.txt").read_text().split("|")
    assert srcs.split(";") == [str(folder / s) for s in sources(lib.name)]
    assert includes == "src"
    proc, text = run_on_sifive_e(exe, tmp_path / "semihosting.txt")
    assert proc.returncode == 0, proc.stderr[-2000:]
    check(lib, aq_bundle, values, text)
