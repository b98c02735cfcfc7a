"""The C library built with CMake (``add_subdirectory`` + ``target_link_libraries``) and with its
make fragment, for the host and for bare-metal Cortex-M4F and Cortex-M0+ (run in QEMU): a
program replays BasicMotions recordings through ``<name>_push_sample`` / ``<name>_predict`` and
must give the reference's scores: float32 bit for bit, Q15 exactly the integer model's scores
and within the header's stated error bound of the float64 model."""

import subprocess

import numpy as np
import pytest

from sensorbudget.firmware_gen.library import generate_library
from sensorbudget.firmware_gen.targets import WARNINGS
from tests.firmware_gen.conftest import bm_full_scale
from tests.firmware_gen.helpers import same_bits
from tests.firmware_gen.library_helpers import (
    build_replay,
    expected,
    need,
    parse_output,
    program_files,
    replay_values,
    run_host,
    run_qemu,
    write_tree,
)

#: predict before any window -> 2 (no window), with NULL -> 1 (argument), ready -> 0
PRE = [2, 1, 0]


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """``library(bundle, numeric, full_scale)`` -> (Library, folder), generated once."""
    cache = {}
    root = tmp_path_factory.mktemp("libraries")

    def get(bundle, numeric, full_scale=None):
        key = (bundle.bundle_sha256(), numeric, tuple(sorted((full_scale or {}).items())))
        if key not in cache:
            lib = generate_library(bundle, numeric=numeric, full_scale=full_scale)
            cache[key] = (lib, write_tree(lib.files, root / f"lib{len(cache)}"))
        return cache[key]

    return get


def stream_of(recordings, plan, indices) -> np.ndarray:
    return np.concatenate([replay_values(plan, recordings.recordings[r].columns)
                           for r in indices])


def check(lib, bundle, values, output):
    """The program's output against the reference of the pushed values."""
    plan = lib.plan
    pre, windows, scores = parse_output(output, plan)
    features, inputs, ref = expected(plan, bundle, values)
    assert pre == PRE
    assert windows == list(range(len(ref))) and len(ref) > 0
    if not plan.fixed:
        assert same_bits(scores, np.asarray(ref, dtype=np.float32))
        return
    assert np.array_equal(scores, ref)
    fx = lib.header.fixed
    real = scores * 2.0 ** -fx.score_frac_bits
    a = bundle.arrays
    model = features.astype(np.float64) @ np.asarray(a["W"]) + np.asarray(a["b"])
    inside = ((features >= a["x_min"]) & (features <= a["x_max"])).all(axis=1)
    assert inside.mean() > 0.5
    assert np.abs(real - model)[inside].max() <= lib.header.error_bound


@pytest.mark.parametrize("numeric", ["float32", "q15", "q31"])
def test_host_cmake(library, kinds_bundle, bm_recordings, tmp_path, numeric):
    need("cmake", "gcc", "make")
    fs = bm_full_scale(bm_recordings) if numeric != "float32" else None
    lib, folder = library(kinds_bundle, numeric, fs)
    values = stream_of(bm_recordings, lib.plan, (0, 10, 20, 30))
    exe = build_replay(lib, folder, values, tmp_path)
    check(lib, kinds_bundle, values, run_host(exe))


@pytest.mark.parametrize("cpu", ["cortex-m4f", "cortex-m0plus"])
@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_cortex_m_cmake_on_qemu(library, kinds_bundle, bm_recordings, tmp_path, cpu, numeric):
    need("cmake", "make", "arm-none-eabi-gcc", "qemu-system-arm")
    fs = bm_full_scale(bm_recordings) if numeric != "float32" else None
    lib, folder = library(kinds_bundle, numeric, fs)
    values = stream_of(bm_recordings, lib.plan, (5, 25))
    exe = build_replay(lib, folder, values, tmp_path, cpu=cpu)
    check(lib, kinds_bundle, values, run_qemu(exe, cpu))


def test_make_fragment_on_the_host(library, bm_bundle, bm_recordings, tmp_path):
    """``include DIR/<name>.mk`` in a plain Makefile builds the same program."""
    need("gcc", "make")
    lib, folder = library(bm_bundle, "float32")
    from tests.firmware_gen.library_helpers import HOST_IO

    values = stream_of(bm_recordings, lib.plan, (15,))
    files = program_files(lib, values, HOST_IO)
    N = lib.name.upper()
    files["Makefile"] = (f"include {folder}/{lib.name}.mk\n"
                         f"CFLAGS = -O2 {' '.join(WARNINGS)}\n"
                         f"replay: main.c io.c $({N}_SRCS) $({N}_HEADERS)\n"
                         f"\t$(CC) $(CFLAGS) $({N}_CFLAGS) main.c io.c $({N}_SRCS) -o $@ "
                         f"$({N}_LDLIBS)\n")
    write_tree(files, tmp_path)
    proc = subprocess.run(["make", "--no-print-directory", "-C", str(tmp_path), "replay"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    check(lib, bm_bundle, values, run_host(tmp_path / "replay"))


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_feature_table_bundle_takes_the_feature_vector(library, tmp_path, numeric):
    """A bundle trained on a plain table: each push is one feature vector, one prediction."""
    need("cmake", "gcc", "make")
    from tests.export.helpers import synthetic_bundle

    bundle, X = synthetic_bundle(tmp_path, "regression", d=12, t=3, budget=5)
    lib, folder = library(bundle, numeric)
    assert lib.plan.input_kind == "features" and lib.plan.window == 1
    values = np.asarray(X, dtype=np.float64)[:, bundle.meta["selected_index"]]
    values = values.astype(np.float32)
    exe = build_replay(lib, folder, values, tmp_path / "build")
    check(lib, bundle, values, run_host(exe))
