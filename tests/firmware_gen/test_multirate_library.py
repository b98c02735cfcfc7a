"""The multi-rate C library (``export c-library`` of a multi-rate bundle): built with CMake
(``add_subdirectory``, gcc -Werror) on the host and for a Cortex-M4F under QEMU, a replay
program pushes each sensor's real samples through ``<name>_push_<sensor>`` (Q15 through
``<name>_quantize_<sensor>``) in time order and prints every window's scores, which equal the
multi-rate Python reference bit for bit; the CLI writes the same files as the Python API."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sensorbudget.export import cgen
from sensorbudget.firmware_gen import multirate_reference as mr
from sensorbudget.firmware_gen.library import generate_library
from sensorbudget.firmware_gen.multirate_library import library_idents
from tests.firmware_gen import library_helpers as L
from tests.firmware_gen.test_multirate_c import bundle, recordings, spec  # noqa: F401

MAIN_C = L.PRINT_C + r"""
static @name@_t model;

static int push(unsigned sensor, const float *values)
{
    @name@_sample_t sample[@NAME@_MODEL_MAX_SENSOR_CHANNELS];
    switch (sensor) {
@cases@
    default:
        return -1;
    }
}

int main(void)
{
    @name@_score_t scores[@NAME@_N_TARGETS];
    static const float none[@NAME@_MODEL_MAX_SENSOR_CHANNELS];
    unsigned i;
    char *p = out;
    @name@_init(&model);
    p = put_text(p, "pre ");
    p = put_int(p, (int32_t)@name@_predict(&model, scores));
    p = put_text(p, " ");
    p = put_int(p, (int32_t)@name@_predict(NULL, scores));
    p = put_text(p, " ");
    p = put_int(p, (int32_t)@name@_push(&model, @NAME@_N_SENSORS, (const @name@_sample_t *)none));
    p = put_text(p, "\n");
    *p = '\0';
    replay_puts(out);
    for (i = 0u; i < REPLAY_N; ++i) {
        int done = push(replay_sensor[i], replay_values[i]);
        if (done < 0 || done != @name@_ready(&model)) {
            replay_puts("contract broken\n");
            return 3;
        }
        if (!done) {
            continue;
        }
        if (@name@_predict(&model, scores) != @NAME@_OK || @name@_ready(&model)) {
            replay_puts("contract broken\n");
            return 3;
        }
        put_window(@name@_window_index(&model), scores);
    }
    return 0;
}
"""


def _program(lib, streams: dict, order, io: str) -> dict:
    """main.c, replay_data.h (float32 values per push, padded) and the I/O file."""
    name, mplan = lib.name, lib.plan
    width = mplan.max_sensor_channels
    names = [s.name for s in mplan.sensors]
    rows = []
    for s, i in order:
        row = list(np.asarray(streams[names[s]][i], dtype=np.float32)) + [0.0] * width
        rows.append("    {" + ", ".join(cgen.c_float(v) for v in row[:width]) + "}")
    data = (f"#define REPLAY_N {len(order)}u\nstatic const unsigned char replay_sensor[REPLAY_N]"
            f" = {{{', '.join(str(s) for s, _ in order)}}};\n"
            f"static const float replay_values[REPLAY_N][{width}] = {{\n" + ",\n".join(rows)
            + "\n};\n")
    cases = []
    for macro, ident in library_idents(name, mplan):
        if mplan.fixed:
            body = (f"        {name}_quantize_{ident}(values, sample);\n"
                    f"        return {name}_push_{ident}(&model, sample);")
        else:
            body = (f"        memcpy(sample, values, {macro}_N_CHANNELS * sizeof sample[0]);\n"
                    f"        return {name}_push_{ident}(&model, sample);")
        cases.append(f"    case {macro}:\n{body}")
    main = MAIN_C.replace("@cases@", "\n".join(cases)).replace("@name@", name)
    return {"main.c": main.replace("@NAME@", name.upper()), "replay_data.h": data, "io.c": io}


def _build(lib, streams, order, work, cpu=None):
    lib_dir = L.write_tree(lib.files, work / "lib")
    project = work / "project"
    files = _program(lib, streams, order, L.HOST_IO if cpu is None else L.ARM_IO)
    files["CMakeLists.txt"] = L.PROJECT.format(
        name=lib.name, io="io.c", warnings=" ".join(w for w in L.WARNINGS if w != "-std=c99"))
    toolchain = None
    if cpu is not None:
        files["link.ld"] = L.LINKER_SCRIPT
        files["toolchain.cmake"] = L.TOOLCHAIN.format(cpu=L.ARM_CPUS[cpu][0],
                                                      ld=project / "link.ld")
        toolchain = project / "toolchain.cmake"
    L.write_tree(files, project)
    return L.cmake_build(project, lib_dir, work / "build", toolchain=toolchain,
                         build_type="Release" if cpu is None else "MinSizeRel")


def _expected(lib, bundle, real):   # noqa: F811
    mplan = lib.plan
    streams = mr.quantize_streams(mplan, real) if mplan.fixed else real
    order = mr.push_order(mplan, {s: len(x) for s, x in streams.items()})
    return order, mr.stream(mplan, bundle, streams, order)[2]


def _check(text, lib, scores):
    lines = text.splitlines()
    assert lines[0] == f"pre 2 1 0", lines[:2]       # no window, NULL, unknown sensor
    windows = [int(line.split()[1]) for line in lines[1:]]
    assert windows == list(range(len(scores)))
    values = [line.split()[2:] for line in lines[1:]]
    if lib.plan.fixed:
        assert np.array_equal(np.array(values, dtype=np.int64), np.asarray(scores))
    else:
        bits = np.array([[int(v, 16) for v in row] for row in values], dtype=np.uint32)
        assert np.array_equal(bits, np.asarray(scores, dtype=np.float32).view(np.uint32))


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_library_on_the_host_equals_the_reference(bundle, recordings, numeric,  # noqa: F811
                                                   tmp_path):
    L.need("cmake", "gcc")
    lib = generate_library(bundle, numeric=numeric, name="gait")
    real = mr.trainer_streams(lib.plan, recordings[1][0])
    order, scores = _expected(lib, bundle, real)
    exe = _build(lib, real, order, tmp_path)
    _check(L.run_host(exe), lib, scores)
    assert len(scores) >= 5


def test_library_on_a_cortex_m4f_under_qemu_equals_the_reference(bundle, recordings,  # noqa: F811
                                                                  tmp_path):
    L.need("cmake", "arm-none-eabi-gcc", "qemu-system-arm")
    lib = generate_library(bundle, numeric="q15", name="gait")
    real = mr.trainer_streams(lib.plan, recordings[2][0])
    order, scores = _expected(lib, bundle, real)
    exe = _build(lib, real, order, tmp_path, cpu="cortex-m4f")
    _check(L.run_qemu(exe, "cortex-m4f"), lib, scores)


def test_library_files_name_each_sensor_and_list_their_sources(bundle):  # noqa: F811
    name = "g" * (cgen.MAX_NAME - len("_model"))
    for numeric in ("float32", "q31"):
        lib = generate_library(bundle, numeric=numeric, name=name)
        assert lib.files == generate_library(bundle, numeric=numeric, name=name).files
        for fname, text in lib.files.items():
            if fname not in ("library.properties", "library.json", "c_library.json"):
                assert all(len(line) <= cgen.MAX_LINE for line in text.splitlines()), fname
        api = lib.files[f"src/{name}.h"].replace("\n", " ")
        for ident in ("accel_lis3dh", "gyro"):
            assert f"int {name}_push_{ident}(" in " ".join(api.split())
        manifest = json.loads(lib.files["c_library.json"])
        assert manifest["multi_rate"] and [s["c_name"] for s in manifest["sensors"]] == [
            "accel_lis3dh", "gyro"]
        assert set(manifest["sources"]) <= set(lib.files)
        assert len(manifest["sources"]) == 2 + len(lib.plan.groups)
        assert f"{name}_push_sample" not in api


def test_cli_writes_the_library_of_the_python_api(bundle, tmp_path):  # noqa: F811
    from click.testing import CliRunner

    from sensorbudget.cli import main

    done = CliRunner().invoke(main, ["export", "c-library", str(bundle.path), "-o",
                                     str(tmp_path / "lib"), "--name", "gait", "--numeric",
                                     "q15"])
    assert done.exit_code == 0, done.output
    lib = generate_library(bundle, numeric="q15", name="gait")
    for fname, text in lib.files.items():
        assert (tmp_path / "lib" / fname).read_text() == text, fname


def test_arduino_example_on_the_uno_in_simavr(bundle, recordings, tmp_path):  # noqa: F811
    """arduino-builder compiles the multi-rate library with its example for the Uno; in
    simavr, lines "<sensor>,<values>" in time order give the reference's Q15 scores exactly."""
    import subprocess

    from sensorbudget.firmware_gen.build import build_simavr_harness
    from sensorbudget.firmware_gen.errors import FirmwareGenError
    from sensorbudget.firmware_gen.library_arduino import parse_like_the_example
    from tests.firmware_gen.test_library_arduino import HARDWARE, Uno, text_of

    L.need("arduino-builder", "avr-gcc", "gcc")
    if not (HARDWARE[0] / "arduino" / "avr" / "boards.txt").is_file():
        pytest.skip("arduino-core-avr is not installed (make deps-embedded)")
    try:
        harness = build_simavr_harness(tmp_path / "simavr")
    except FirmwareGenError as exc:
        pytest.skip(str(exc))
    lib = generate_library(bundle, numeric="q15", name="gait")
    Name = lib.manifest["arduino_name"]
    folder = L.write_tree(lib.files, tmp_path / "libraries" / Name)
    (tmp_path / "build").mkdir()
    done = subprocess.run(
        ["arduino-builder", "-hardware", str(HARDWARE[0]), "-hardware", str(HARDWARE[1]),
         "-tools", "/usr/bin", "-libraries", str(tmp_path / "libraries"), "-fqbn",
         "arduino:avr:uno", "-prefs=compiler.cpp.extra_flags=-DDECIMAL_DIG=17",
         "-build-path", str(tmp_path / "build"),
         str(folder / "examples" / Name / f"{Name}.ino")],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    mplan = lib.plan
    real = mr.trainer_streams(mplan, recordings[3][0])
    texts = {s: np.vectorize(text_of)(np.asarray(x, dtype=np.float64)) for s, x in real.items()}
    device = {s: np.vectorize(parse_like_the_example)(t).astype(np.float32)
              for s, t in texts.items()}
    streams = mr.quantize_streams(mplan, device)
    order = mr.push_order(mplan, {s: len(x) for s, x in streams.items()})
    _, _, scores = mr.stream(mplan, bundle, streams, order)
    ready = set(mr.ready_pushes(mplan, order))
    names = [s.name for s in mplan.sensors]
    uno = Uno(harness, tmp_path / "build" / f"{Name}.ino.elf")
    printed = []
    try:
        assert uno.line().startswith("# gait: send sensor,values per line")
        uno.send(f"{len(names)},1,2,3\n0,1\n")
        assert uno.line() == "# error: the first number is not a sensor index"
        assert uno.line() == "# error: not a sensor index and that sensor's values"
        for position, (s, i) in enumerate(order):
            uno.send(",".join([str(s), *texts[names[s]][i]]) + "\n")
            if position in ready:
                index, *values = uno.line().split(",")
                printed.append([float(v) for v in values])
    finally:
        uno.close()
    step = 2.0 ** -lib.header.fixed.score_frac_bits
    assert len(printed) == len(scores) >= 5
    assert np.array_equal(np.round(np.array(printed) / step).astype(np.int64), scores)


def test_a_bad_full_scale_is_one_error_line_and_no_folder(bundle, tmp_path):  # noqa: F811
    from click.testing import CliRunner

    from sensorbudget.cli import main

    out = tmp_path / "lib"
    done = CliRunner().invoke(main, ["export", "c-library", str(bundle.path), "-o", str(out),
                                     "--name", "gait", "--numeric", "q15", "--full-scale",
                                     "nope=3"])
    lines = done.output.strip().splitlines()
    assert done.exit_code == 2 and len(lines) == 1, done.output
    assert lines[0].startswith("Error: ") and "'nope'" in lines[0] and "gyro_z" in lines[0]
    assert not out.exists()


def test_sensor_identifiers_are_unique_c_names_within_63_characters():
    """Sensor names differing only in case, or long ones, still give distinct functions
    ``<name>_push_<s>`` / ``<name>_quantize_<s>`` whose first 63 characters differ."""
    import re
    from types import SimpleNamespace

    names = ["accel", "Accel", "ACCEL", "s" * 70, "s" * 70 + "x", "int"]
    plan = SimpleNamespace(sensors=[SimpleNamespace(name=n) for n in names])
    name = "g" * (cgen.MAX_NAME - len("_model"))
    idents = library_idents(name, plan)
    for kind in ("push", "quantize"):
        functions = [f"{name}_{kind}_{ident}" for _, ident in idents]
        assert all(re.fullmatch(r"[a-z_][a-z0-9_]*", f) for f in functions), functions
        assert len({f[:cgen.SIGNIFICANT] for f in functions}) == len(names)
    macros = [macro for macro, _ in idents]
    assert len({m[:cgen.SIGNIFICANT] for m in macros}) == len(names)
