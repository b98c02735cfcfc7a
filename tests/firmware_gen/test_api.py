"""sensorbudget.firmware_gen.api: each typed call writes, through ``.save``, the bytes its command
writes (the command is the reference: it is run on the same bundle), and a folder read back
saves the same bytes again."""

import json
import stat

import pytest
from click.testing import CliRunner

from sensorbudget.cli_export import export_group
from sensorbudget.cli_firmware import firmware_command
from sensorbudget.cli_library import c_library_command
from sensorbudget.firmware_gen import api
from sensorbudget.firmware_gen.errors import FirmwareGenError
from sensorbudget.trainer.bundle.model import load_bundle

from .conftest import need_tools


def folder_bytes(folder) -> dict:
    """{relative path: (bytes, executable?)} of every file under ``folder``."""
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), bool(p.stat().st_mode & 0o100))
            for p in sorted(folder.rglob("*")) if p.is_file()}


def run(command, args) -> str:
    result = CliRunner().invoke(command, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("target, numeric, build", [
    ("host", "q15", True), ("arduino-uno", "q15", True), ("arduino-uno", "float32", False),
    ("mps2-an386", "float32", False)])
def test_firmware_save_writes_what_the_command_writes(bm_bundle, tmp_path, target, numeric,
                                                       build):
    if build:
        need_tools("gcc", "make", *(["avr-gcc"] if target == "arduino-uno" else []))
    cli_dir, api_dir = tmp_path / "cli", tmp_path / "api"
    output = run(firmware_command, [bm_bundle.path, "--target", target, "--numeric", numeric,
                                    "--name", "gait", "-o", cli_dir,
                                    *(["--build"] if build else [])])
    fw = api.firmware(bm_bundle.path, target=target, numeric=numeric, name="gait", build=build)
    fw.save(api_dir)
    assert folder_bytes(api_dir) == folder_bytes(cli_dir)      # binaries and modes included
    assert f"wrote {len(fw.files)} files to {cli_dir}" in output
    if build:
        assert fw.footprint == json.loads((cli_dir / "footprint.json").read_text())
        exe = api_dir / fw.manifest["artifacts"].get("executable", "firmware.elf")
        assert fw.footprint["flash_bytes"] > 0 and exe.stat().st_mode & 0o100
        if fw.is_avr and fw.harness_error is None:     # the simavr bridge, runnable
            assert (api_dir / "sbfw_simavr").stat().st_mode & 0o100
            assert f"simulate: {cli_dir / 'sbfw_simavr'}" in output
    else:
        assert fw.footprint is None and not (api_dir / "footprint.json").exists()


def test_firmware_of_a_loaded_bundle_equals_that_of_its_folder(bm_bundle):
    by_path = api.firmware(bm_bundle.path, target="mps2-an386", numeric="q31")
    by_object = api.firmware(load_bundle(bm_bundle.path), target="mps2-an386", numeric="q31")
    assert by_object.files == by_path.files and by_object.manifest == by_path.manifest
    assert by_object.target == by_path.manifest["target"] == "mps2-an386"


def test_a_built_firmware_folder_reads_back_and_saves_the_same_bytes(bm_bundle, tmp_path):
    need_tools("gcc", "make")
    run(firmware_command, [bm_bundle.path, "--target", "host", "-o", tmp_path / "fw", "--build"])
    fw = api.read_firmware(tmp_path / "fw")
    assert fw.footprint == json.loads((tmp_path / "fw" / "footprint.json").read_text())
    assert fw.manifest == json.loads((tmp_path / "fw" / "firmware.json").read_text())
    assert fw.plan is None and fw.bundle is None and fw.path == tmp_path / "fw"
    fw.save(tmp_path / "again")
    assert folder_bytes(tmp_path / "again") == folder_bytes(tmp_path / "fw")


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_library_save_writes_what_the_command_writes(bm_bundle, tmp_path, numeric):
    run(c_library_command, [bm_bundle.path, "-o", tmp_path / "cli", "--numeric", numeric,
                            "--name", "gait"])
    lib = api.library(bm_bundle.path, numeric=numeric, name="gait")
    lib.save(tmp_path / "api")
    assert folder_bytes(tmp_path / "api") == folder_bytes(tmp_path / "cli")
    back = api.read_library(tmp_path / "cli")
    assert back.manifest == lib.manifest and back.files == lib.files
    back.save(tmp_path / "again")
    assert folder_bytes(tmp_path / "again") == folder_bytes(tmp_path / "cli")


def test_onnx_and_c_header_save_what_export_writes(bm_bundle, tmp_path):
    import onnx

    run(export_group, ["onnx", bm_bundle.path, "-o", tmp_path / "cli.onnx", "--inputs",
                       "selected", "--dtype", "float64"])
    model = api.onnx_model(bm_bundle.path, inputs="selected", dtype="float64")
    model.save(tmp_path / "api.onnx")
    assert (tmp_path / "api.onnx").read_bytes() == (tmp_path / "cli.onnx").read_bytes()
    parsed = onnx.load(str(tmp_path / "cli.onnx"))
    assert model.outputs == tuple(o.name for o in parsed.graph.output)
    assert model.width == len(load_bundle(bm_bundle.path).meta["selected"])
    back = api.read_onnx(tmp_path / "cli.onnx")
    assert back == model                       # bytes, opset, dtype, inputs, width, outputs
    (tmp_path / "bad.onnx").write_bytes(b"not a model")
    with pytest.raises(FirmwareGenError, match="bad.onnx' is not an ONNX model written by"):
        api.read_onnx(tmp_path / "bad.onnx")
    run(export_group, ["c-header", bm_bundle.path, "-o", tmp_path / "cli.h", "--numeric",
                       "q15", "--name", "gait"])
    header = api.c_header(bm_bundle.path, numeric="q15", name="gait")
    header.save(tmp_path / "api.h")
    assert (tmp_path / "api.h").read_bytes() == (tmp_path / "cli.h").read_bytes()


def test_wrong_inputs_are_refused_with_one_clear_error(bm_bundle, tmp_path):
    with pytest.raises(FirmwareGenError, match="folder path or a loaded bundle, not a int"):
        api.firmware(3, target="host")
    lib = api.library(bm_bundle.path)
    lib.save(tmp_path / "lib")
    with pytest.raises(FirmwareGenError, match="firmware.json"):
        api.read_firmware(tmp_path / "lib")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FirmwareGenError, match="not a C library"):
        api.read_library(tmp_path / "empty")
    assert stat.S_ISDIR((tmp_path / "empty").stat().st_mode)


def test_the_calls_are_the_package_level_names():
    import sensorbudget as sb
    from sensorbudget.device_sim import api as device_api

    for name in ("firmware", "Firmware", "library", "CLibrary", "onnx_model", "c_header"):
        assert getattr(sb, name) is getattr(api, name)
    for name in ("simulate", "report", "load", "compare", "calibrate", "Simulation", "Report",
                 "Comparison"):
        assert getattr(sb, name) is getattr(device_api, name)


def test_full_scale_roundings_against_a_slow_search():
    """Each value that is not a power of two is used as the smallest power of two above it
    (found here by doubling from 2^-40); powers of two are not listed; a "*" every listed
    channel overrides is left out when the channels are given."""
    import numpy as np

    rng = np.random.default_rng(7)
    values = [float(v) for v in rng.uniform(1e-3, 1e5, 40)] + [2.0 ** k for k in range(-3, 9)]
    given = {f"c{i}": v for i, v in enumerate(values)}

    def slow(v):
        p = 2.0 ** -40
        while p < v:
            p *= 2
        return p

    expected = sorted((c, v, slow(v)) for c, v in given.items() if slow(v) != v)
    assert api.full_scale_roundings(given) == expected and len(expected) == 40
    assert api.full_scale_roundings({"*": 100.0, "a": 3.0}, ["a"]) == [("a", 3.0, 4.0)]
    assert api.full_scale_roundings({"*": 100.0, "a": 3.0}, ["a", "b"]) == [
        ("*", 100.0, 128.0), ("a", 3.0, 4.0)]
