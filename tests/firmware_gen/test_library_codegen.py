"""The C library's files without a compiler: the firmware's own code, determinism, names, and the
PlatformIO, Zephyr and Arduino descriptions parsed (JSON, YAML, kconfiglib); the CLI command."""

import json
import re

import pytest
from click.testing import CliRunner

from sensorbudget.export.cgen import MAX_LINE
from sensorbudget.firmware_gen import FirmwareGenError, generate_firmware
from sensorbudget.firmware_gen.library import FP_CONTRACT_OFF, MANIFEST, generate_library
from sensorbudget.firmware_gen.library_build import kconfig_symbol
from sensorbudget.cli import main as cli
from tests.export.helpers import synthetic_bundle
from sensorbudget.trainer.bundle.manifest import MANIFEST_FILE

OWN = ("src/{n}.h", "src/{n}.c", "examples/{N}/{N}.ino", "CMakeLists.txt", "{n}.mk", "Kconfig",
       "zephyr/module.yml")


def files_of(lib) -> dict:
    return {rel: text for rel, text in lib.files.items()}


@pytest.mark.parametrize("numeric", ["float32", "q15", "q31"])
def test_the_library_holds_the_firmwares_code(kinds_bundle, numeric):
    fs = None if numeric == "float32" else {"*": 64.0}
    lib = generate_library(kinds_bundle, numeric=numeric, full_scale=fs)
    fw = generate_firmware(kinds_bundle, target="host", numeric=numeric, full_scale=fs,
                           name="sbmodel_model")
    src = {rel[4:]: text for rel, text in lib.files.items() if rel.startswith("src/")}
    for part in ("sbmodel_model.h", "sbmodel_model_stream.h", "sbmodel_model_kernel.h"):
        assert src[part] == fw.files[part], part
    assert src["sbmodel_model_stream.c"] == FP_CONTRACT_OFF + "\n" + fw.files[
        "sbmodel_model_stream.c"]
    assert lib.plan == fw.plan
    api = src["sbmodel.h"] + src["sbmodel.c"]
    for fn in ("sbmodel_init", "sbmodel_push_sample", "sbmodel_ready", "sbmodel_predict"):
        assert re.search(rf"\b{fn}\(sbmodel_t \*m", api) or re.search(
            rf"\b{fn}\((const )?sbmodel_t \*m", api), fn
    text = "\n".join(lib.files.values())
    assert not re.search(r"\b(malloc|calloc|realloc|free)\s*\(", text)
    assert not re.search(r"\bint\s+main\s*\(", "\n".join(src.values()))
    assert "sbfw_" not in "\n".join(src.values())          # no protocol, no HAL


def test_generation_is_deterministic_and_complete(kinds_bundle):
    a = generate_library(kinds_bundle, numeric="q15", full_scale={"*": 64.0}, name="Watch_2")
    b = generate_library(kinds_bundle, numeric="q15", full_scale={"*": 64.0}, name="Watch_2")
    assert a.files == b.files
    assert set(a.files) == {
        "src/Watch_2.h", "src/Watch_2.c", "src/Watch_2_model.h", "src/Watch_2_model_stream.h",
        "src/Watch_2_model_stream.c", "src/Watch_2_model_kernel.h", "CMakeLists.txt",
        "Watch_2.mk", "library.properties", "library.json", "zephyr/module.yml", "Kconfig",
        "examples/Watch_2/Watch_2.ino", "README.md", "idf_component.yml", MANIFEST}
    manifest = json.loads(a.files[MANIFEST])
    assert manifest["files"] == sorted(a.files) and manifest["name"] == "Watch_2"
    assert manifest["error_bound"] == a.header.error_bound and manifest["full_scale"] == [64.0] * 6
    assert "#define WATCH_2_CH_ACC_X 0u" in a.files["src/Watch_2.h"]
    assert "Watch_2_quantize_sample" in a.files["src/Watch_2.h"]
    for rel, text in a.files.items():
        text.encode("ascii")
        assert not re.search(r"\d{4}-\d\d-\d\d", text), rel          # no timestamps
    for pattern in OWN:
        rel = pattern.format(n="Watch_2", N="Watch_2")
        assert [i for i, line in enumerate(a.files[rel].splitlines())
                if len(line) > MAX_LINE] == [], rel


def test_names_are_checked(kinds_bundle):
    for bad in ("1abc", "int", "my-model", "x" * 35):
        with pytest.raises(FirmwareGenError, match="name="):
            generate_library(kinds_bundle, name=bad)
    lib = generate_library(kinds_bundle, name="gait")
    assert lib.manifest["arduino_name"] == "Gait"
    assert "examples/Gait/Gait.ino" in lib.files


def test_platformio_and_arduino_descriptions(kinds_bundle):
    lib = generate_library(kinds_bundle, name="gait")
    pio = json.loads(lib.files["library.json"])
    assert pio["name"] == "Gait" and re.fullmatch(r"\d+\.\d+\.\d+", pio["version"])
    assert pio["build"]["srcDir"] == pio["build"]["includeDir"] == "src"
    assert "-ffp-contract=off" in pio["build"]["flags"] and "license" not in pio
    assert f"src/{pio['headers']}" in lib.files
    for example in pio["examples"]:
        assert all(f"{example['base']}/{f}" in lib.files for f in example["files"])
    props = dict(line.split("=", 1) for line in lib.files["library.properties"].splitlines())
    required = {"name", "version", "author", "maintainer", "sentence", "paragraph", "category",
                "url", "architectures"}
    assert required <= set(props) and props["name"] == "Gait"
    assert props["version"] == pio["version"] and props["includes"] == "gait.h"
    assert f"src/{props['includes']}" in lib.files
    ino = lib.files["examples/Gait/Gait.ino"]
    assert "#include <gait.h>" in ino and "Serial.begin(115200UL)" in ino
    assert "gait_push_sample(&model, values)" in ino and "gait_predict(&model, scores)" in ino


def test_zephyr_module_and_kconfig(kinds_bundle, tmp_path):
    kconfiglib = pytest.importorskip("kconfiglib")
    lib = generate_library(kinds_bundle, name="gait")
    text = lib.files["zephyr/module.yml"]
    try:
        import yaml
    except ImportError:                       # a strict check of the few lines written
        body = [line for line in text.splitlines() if line and not line.startswith("#")]
        assert body == ["name: sensorbudget-gait", "build:", "  cmake: .", "  kconfig: Kconfig"]
        module = {"name": "sensorbudget-gait", "build": {"cmake": ".", "kconfig": "Kconfig"}}
    else:
        module = yaml.safe_load(text)
    assert module == {"name": "sensorbudget-gait", "build": {"cmake": ".", "kconfig": "Kconfig"}}
    # paths in module.yml are relative to the module's root (the library folder)
    assert "CMakeLists.txt" in lib.files and module["build"]["kconfig"] in lib.files
    (tmp_path / "Kconfig").write_text(lib.files["Kconfig"], encoding="ascii")
    kconf = kconfiglib.Kconfig(str(tmp_path / "Kconfig"), warn_to_stderr=False)
    assert kconf.warnings == []
    sym = kconf.syms[kconfig_symbol("gait")]
    assert sym.type == kconfiglib.BOOL and sym.str_value == "n"
    assert "gait_push_sample" in sym.nodes[0].help
    cmake = lib.files["CMakeLists.txt"]
    assert f"if(CONFIG_{kconfig_symbol('gait')})" in cmake
    assert "zephyr_library_named(gait)" in cmake and "add_library(gait STATIC" in cmake


def test_cli_writes_the_folder(kinds_bundle, tmp_path):
    runner = CliRunner()
    out = tmp_path / "lib"
    argv = ["export", "c-library", str(kinds_bundle.path), "-o", str(out), "--numeric", "q15",
            "--full-scale", "60", "--name", "gait"]
    result = runner.invoke(cli, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "wrote 16 files" in result.output and "library gait (q15)" in result.output
    assert "--full-scale 60 for every channel is used as 64" in result.output
    assert "error bound (q15)" in result.output
    lib = generate_library(kinds_bundle, numeric="q15", full_scale={"*": 60.0}, name="gait")
    written = {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*")
               if p.is_file() and p.name != MANIFEST_FILE}
    assert written == lib.files
    again = runner.invoke(cli, argv[:-2])                  # replaces its own output
    assert again.exit_code == 0 and (out / "src" / "sbmodel.h").is_file()
    assert not (out / "src" / "gait.h").exists()


def test_cli_errors_are_one_line(kinds_bundle, tmp_path):
    runner = CliRunner()
    bundle = str(kinds_bundle.path)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    cases = [(["--name", "9lives"], "name='9lives'"),
             (["-o", str(tmp_path / "mine")], "refusing"),
             (["--numeric", "q15", "--full-scale", "nope=1"], "'nope'"),
             (["--numeric", "q7"], "'q7' is not one of")]
    for extra, message in cases:
        argv = ["export", "c-library", bundle, "-o", str(tmp_path / "out"), *extra]
        result = runner.invoke(cli, argv)
        assert result.exit_code == 2 and message in result.output, (extra, result.output)
        assert "Traceback" not in result.output


def test_feature_table_library(tmp_path):
    bundle, _ = synthetic_bundle(tmp_path, "multilabel", d=9, t=2, budget=4)
    lib = generate_library(bundle)
    assert lib.manifest["input_kind"] == "features" and lib.manifest["window"] == 1
    assert "#define SBMODEL_INPUT_FEATURES 1" in lib.files["src/sbmodel.h"]
    assert lib.manifest["channels"] == bundle.meta["selected"]
