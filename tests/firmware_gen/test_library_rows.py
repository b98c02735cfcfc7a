"""The C library's ``<name>_push_rows`` (issue 28 item 5): a host program (CMake, the library's
``add_subdirectory``, -Werror) pushes BasicMotions recordings through it in seeded random blocks
(0 to 2 windows + a hop samples, so blocks hold no window end, one, or several) and prints every
window's scores; they must equal the reference's for the same samples (float32 bit for bit,
Q15 the integer model's scores and within the stated bound: test_library_cmake's check) and
the windows come in order, each taken when its last sample was, never more samples than given."""

import numpy as np
import pytest

from sensorbudget.firmware_gen.library import generate_library
from sensorbudget.firmware_gen.targets import WARNINGS
from tests.firmware_gen.conftest import bm_full_scale
from tests.firmware_gen.library_helpers import (
    HOST_IO,
    PRINT_C,
    PROJECT,
    cmake_build,
    need,
    run_host,
    write_tree,
)
from tests.firmware_gen.test_library_cmake import check, stream_of

#: the program: the "pre" line as the per-sample program prints it, then the blocks
MAIN_C = PRINT_C + r"""static @name@_t model;
static @name@_sample_t rows[@MAXB@u][@NAME@_N_CHANNELS];
static const unsigned blocks[@B@] = { @BLOCKS@ };

int main(void)
{
    @name@_score_t scores[@NAME@_N_TARGETS];
    unsigned b, r, c, i = 0u;
    char *p = out;
    @name@_init(&model);
    p = put_text(p, "pre ");
    p = put_int(p, (int32_t)@name@_predict(&model, scores));
    p = put_text(p, " ");
    p = put_int(p, (int32_t)@name@_predict(NULL, scores));
    p = put_text(p, " ");
    p = put_int(p, (int32_t)@name@_ready(&model));
    p = put_text(p, "\n");
    *p = '\0';
    replay_puts(out);
    if (@name@_push_rows(NULL, &rows[0][0], 1u) != 0u
        || @name@_push_rows(&model, NULL, 1u) != 0u
        || @name@_push_rows(&model, &rows[0][0], 0u) != 0u) {
        replay_puts("NULL or empty pushes took samples\n");
        return 3;
    }
    for (b = 0u; b < @B@u; ++b) {
        const @name@_sample_t *at = &rows[0][0];
        unsigned left = blocks[b];
        for (r = 0u; r < blocks[b]; ++r, ++i) {
@convert@
        }
        while (left > 0u) {
            const unsigned took = @name@_push_rows(&model, at, left);
            if (took == 0u || took > left || (took < left && !@name@_ready(&model))) {
                replay_puts("contract broken\n");
                return 3;
            }
            at += took * @NAME@_N_CHANNELS;
            left -= took;
            if (!@name@_ready(&model)) {
                continue;
            }
            if (@name@_predict(&model, scores) != @NAME@_OK || @name@_ready(&model)) {
                replay_puts("contract broken\n");
                return 3;
            }
            put_window(@name@_window_index(&model), scores);
        }
    }
    (void)c;
    return i == REPLAY_N ? 0 : 4;
}
"""


def _program(lib, values, seed: int) -> dict:
    from sensorbudget.export import cgen

    name, plan = lib.name, lib.plan
    rng = np.random.default_rng(seed)
    blocks, total = [], 0
    while total < len(values):
        n = min(int(rng.integers(0, 2 * plan.window + plan.hop + 1)), len(values) - total)
        blocks.append(n)
        total += n
    if plan.fixed:
        convert = f"            {name}_quantize_sample(replay_values[i], rows[r]);"
    else:
        convert = ("            for (c = 0u; c < " + name.upper() + "_N_CHANNELS; ++c) {\n"
                   "                rows[r][c] = replay_values[i][c];\n            }")
    main = (MAIN_C.replace("@convert@", convert).replace("@name@", name)
            .replace("@NAME@", name.upper()).replace("@B@", str(len(blocks)))
            .replace("@MAXB@", str(max(max(blocks), 1)))
            .replace("@BLOCKS@", ", ".join(f"{b}u" for b in blocks)))
    data = ",\n".join("    {" + ", ".join(cgen.c_float(v) for v in row) + "}" for row in values)
    return {"main.c": main, "io.c": HOST_IO,
            "replay_data.h": f"#define REPLAY_N {len(values)}u\nstatic const float "
                             f"replay_values[REPLAY_N][{len(plan.channels)}] = {{\n{data}\n}};\n"}


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_push_rows_in_random_blocks_gives_the_reference_scores(kinds_bundle, bm_recordings,
                                                               numeric, tmp_path):
    need("cmake", "gcc")
    fs = None if numeric == "float32" else bm_full_scale(bm_recordings)
    lib = generate_library(kinds_bundle, numeric=numeric, full_scale=fs)
    lib_dir = write_tree(lib.files, tmp_path / "lib")
    values = stream_of(bm_recordings, lib.plan, [4, 17, 33])
    files = _program(lib, values, seed=2804)
    files["CMakeLists.txt"] = PROJECT.format(
        name=lib.name, io="io.c", warnings=" ".join(w for w in WARNINGS if w != "-std=c99"))
    project = write_tree(files, tmp_path / "project")
    exe = cmake_build(project, lib_dir, tmp_path / "build")
    check(lib, kinds_bundle, values, run_host(exe))
