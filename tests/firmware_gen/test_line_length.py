"""No generated line is longer than export.cgen.MAX_LINE (100) characters."""

import pytest

from sensorbudget.export import c_header
from sensorbudget.export.cgen import MAX_LINE, array_declare, block_comment
from sensorbudget.firmware_gen import NUMERICS, TARGETS, generate_firmware
from sensorbudget.firmware_gen.errors import FirmwareGenError


def long_lines(name: str, text: str) -> list:
    return [f"{name}:{i + 1}: {len(line)}" for i, line in enumerate(text.splitlines())
            if len(line) > MAX_LINE]


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("numeric", NUMERICS)
@pytest.mark.parametrize("name", ["sbmodel", "gait_classifier_long_name_v2"])
def test_firmware_files(aq_bundle, kinds_bundle, target, numeric, name):
    if numeric == "q31" and TARGETS[target].arch == "avr":     # refused: avr-gcc's 32-bit double
        with pytest.raises(FirmwareGenError, match="64-bit double"):
            generate_firmware(aq_bundle, target=target, numeric=numeric, full_scale={"*": 64.0})
        return
    for bundle in (aq_bundle, kinds_bundle):
        full_scale = None if numeric == "float32" else {"*": 64.0}
        fw = generate_firmware(bundle, target=target, numeric=numeric, full_scale=full_scale,
                               name=name)
        assert [n for name, text in fw.files.items() for n in long_lines(name, text)] == []


@pytest.mark.parametrize("numeric", NUMERICS)
def test_headers_of_every_task(tmp_path, numeric):
    from tests.export.helpers import synthetic_bundle

    for task in ("regression", "multilabel", "multiclass"):
        bundle, _ = synthetic_bundle(tmp_path, task, name=f"b-{task}", d=30, t=4, budget=12)
        assert long_lines(task, c_header(bundle, numeric=numeric).text) == []


def test_wrapping_keeps_the_content():
    long_text = "x" * 150
    decl = array_declare("const char *", "sb_params", [long_text, "short"])
    assert long_lines("decl", decl) == []
    joined = "".join(part.split('"')[1] for part in decl.splitlines()[1:-1] if '"' in part)
    assert joined == long_text + "short"
    words = [f"w{i}" for i in range(60)]
    comment = block_comment(["  [0] " + " ".join(words)])
    assert long_lines("comment", comment) == []
    assert comment.replace("*", " ").replace("/", " ").split()[1:] == words   # after "[0]"
    rows = array_declare("float", "sb_w", [[1.0] * 9] * 2, row_comments=["r" * 80, "s"])
    assert long_lines("rows", rows) == []
    assert rows.count("1.0f") == 18 and "/* " + "r" * 80 + " */" in rows



#: files of the library that are the firmware's own generated parts (export's header, the
#: streaming extractors, the kernel: byte-equal to the firmware's, test_library_codegen.py),
#: and single-line metadata formats that cannot be wrapped
SHARED_PARTS = ("_model.h", "_model_stream.h", "_model_stream.c", "_model_kernel.h")
ONE_LINE_FORMATS = ("library.properties", "library.json", "c_library.json")


def library_texts(tmp_path, bundles, numeric, name):
    from sensorbudget.firmware_gen.library import generate_library
    from tests.export.test_export_decisions import calibrated_bundle

    labels, _ = calibrated_bundle(tmp_path)
    for bundle in (*bundles, labels):
        full_scale = None if numeric == "float32" or bundle is labels else {"*": 64.0}
        yield generate_library(bundle, numeric=numeric, name=name, full_scale=full_scale).files


@pytest.mark.parametrize("numeric", NUMERICS)
@pytest.mark.parametrize("name", ["sbmodel", "gait_classifier_long_name", "n" * 34])
def test_library_files(aq_bundle, kinds_bundle, tmp_path, numeric, name):
    """The library's own files (API, Arduino example, CMake, make, Kconfig, Zephyr, README)
    for names up to the longest allowed (34 characters), also multi-label with <name>_decide."""
    long = [n for files in library_texts(tmp_path, (aq_bundle, kinds_bundle), numeric, name)
            for fname, text in files.items()
            if not fname.endswith(SHARED_PARTS) and not fname.endswith(ONE_LINE_FORMATS)
            for n in long_lines(fname, text)]
    assert long == []


@pytest.mark.parametrize("name", ["sbmodel", "n" * 34])
def test_library_shared_parts(aq_bundle, kinds_bundle, tmp_path, name):
    """The model header, stream and kernel under the library's '<name>_model' prefix (short
    by construction: cgen.fit)."""
    long = [n for files in library_texts(tmp_path, (aq_bundle, kinds_bundle), "q15", name)
            for fname, text in files.items() if fname.endswith(SHARED_PARTS)
            for n in long_lines(fname, text)]
    assert long == []


def c_tokens(text: str) -> list:
    """The tokens the compiler sees (comments, blanks and backslash-newlines dropped)."""
    import re

    text = re.sub(r"/\*.*?\*/", " ", text.replace("\\\n", " "), flags=re.S)
    return re.findall(r'"(?:\\.|[^"\\])*"|\w+|[^\w\s]', text)


@pytest.mark.parametrize("numeric", NUMERICS)
def test_main_c_is_short_by_construction_for_the_longest_name(aq_bundle, numeric):
    """main.c (templates/main.c.j2, breaks marked for ctemplate.fit, no rewrap pass) for a
    name of the longest allowed length has no long line, and is the program of the short
    name's main.c with the name replaced (same tokens: only the layout differs)."""
    from sensorbudget.export.cgen import MAX_NAME

    long_name = "n" * MAX_NAME
    target = "hifive1" if numeric == "q31" else "arduino-uno" if numeric == "q15" else "host"
    full_scale = None if numeric == "float32" else {"*": 64.0}
    short = generate_firmware(aq_bundle, target=target, numeric=numeric, full_scale=full_scale)
    long = generate_firmware(aq_bundle, target=target, numeric=numeric, full_scale=full_scale,
                             name=long_name)
    assert long_lines("main.c", long.files["main.c"]) == []
    renamed = [t.replace(long_name, "sbmodel").replace(long_name.upper(), "SBMODEL")
               for t in c_tokens(long.files["main.c"])]
    assert renamed == c_tokens(short.files["main.c"])
    assert max(len(line) for line in short.files["main.c"].splitlines()) <= MAX_LINE


def test_the_longest_name_main_c_compiles(firmware, aq_bundle):
    """The broken lines of main.c are valid C (host build, -Werror -pedantic)."""
    from sensorbudget.export.cgen import MAX_NAME

    built = firmware(aq_bundle, "host", "q15", full_scale={"*": 64.0}, name="n" * MAX_NAME)
    assert "#if !defined(NNNN" in built.firmware.files["main.c"]
    assert long_lines("main.c", built.firmware.files["main.c"]) == []


@pytest.mark.parametrize("numeric", NUMERICS)
def test_unwrapped_files_are_short_for_every_name_length(aq_bundle, numeric):
    """main.c, the kernel and stream headers and the stream source (lines short by
    construction, cgen.fit: no rewrap pass) stay within MAX_LINE for every name length 1..MAX_NAME
    (a greedy packing that fits one length and not the next would show here), unrolled and
    loop kernels, on the AVR (flash tables) and the M4 (SMLAD) where they apply."""
    from sensorbudget.export.cgen import MAX_NAME

    full_scale = None if numeric == "float32" else {"*": 64.0}
    targets = ("hifive1", "nucleo-f4") if numeric == "q31" else ("arduino-uno", "nucleo-f4")
    for length in range(1, MAX_NAME + 1):
        name = ("k" + "abcdefghij" * 4)[:length]
        for target in targets:
            for kernel in ("loop", "unrolled"):
                fw = generate_firmware(aq_bundle, target=target, numeric=numeric,
                                       full_scale=full_scale, name=name, kernel=kernel)
                for fname in ("main.c", f"{name}_kernel.h", f"{name}_stream.h",
                              f"{name}_stream.c"):
                    assert long_lines(fname, fw.files[fname]) == []
