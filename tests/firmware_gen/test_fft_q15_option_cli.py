"""``--fft q15`` of ``sensorbudget firmware`` and ``export c-library`` (issue 29 item 3): the CLI
and the Python API (``sensorbudget.firmware`` / ``sensorbudget.library``) given the same bundle
write the same files; the choice is in firmware.json / c_library.json and the stream header;
the refusals are one ``Error:`` line, exit 2, no folder."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import sensorbudget as sb
from sensorbudget.cli_firmware import firmware_command
from sensorbudget.cli_library import c_library_command
from tests.firmware_gen.test_fft_q15_option import fft_bundle, fft_features  # noqa: F401


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_firmware_cli_equals_the_api_and_records_the_choice(fft_bundle, tmp_path):  # noqa: F811
    out = tmp_path / "fw"
    result = CliRunner().invoke(firmware_command, [
        str(fft_bundle.path), "--target", "nucleo-f4", "--numeric", "q15", "--fft", "q15",
        "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    fw = sb.firmware(fft_bundle.path, target="nucleo-f4", numeric="q15", fft="q15")
    fw.save(tmp_path / "api")
    assert _files(out) == _files(tmp_path / "api")
    manifest = json.loads((out / "firmware.json").read_text())
    q15_fft = [e.name for e in fw.plan.extractors if e.kind in (
        "bandpower", "bandratio", "domfreq", "centroid", "entropy") and not e.full_spec.pre]
    assert manifest["fft"] == "q15" and manifest["fft_spectra"] == q15_fft and len(q15_fft) == 14
    arith = {e["name"]: e["arithmetic"] for e in manifest["extractors"]}
    assert {n for n, a in arith.items() if a == "q15 fft, float32"} == set(q15_fft)
    assert arith["acc_y.jerk.centroid"] == "float32"
    header = (out / "sbmodel_stream.h").read_text()
    assert header.count("(float32 on the Q15 FFT)") == len(q15_fft)
    assert "spectra from the Q15 FFT (--fft q15" in result.output
    # the default: no fft key, the float32 transform
    default = sb.firmware(fft_bundle.path, target="nucleo-f4", numeric="q15")
    assert "fft" not in default.manifest
    assert "(float32 on the Q15 FFT)" not in default.files["sbmodel_stream.h"]


def test_library_cli_equals_the_api_and_records_the_choice(fft_bundle, tmp_path):  # noqa: F811
    out = tmp_path / "lib"
    result = CliRunner().invoke(c_library_command, [
        str(fft_bundle.path), "--numeric", "q31", "--fft", "q15", "-o", str(out)],
        catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lib = sb.library(fft_bundle.path, numeric="q31", fft="q15")
    lib.save(tmp_path / "api")
    assert _files(out) == _files(tmp_path / "api")
    manifest = json.loads((out / "c_library.json").read_text())
    assert manifest["fft"] == "q15" and len(manifest["fft_spectra"]) == 14
    stream = next(v for k, v in lib.files.items() if k.endswith("_stream.c"))
    assert stream.count("_power_spectrum_q15(") == 1 + 3     # the routine, three groups


@pytest.mark.parametrize("args,message", [
    (["--numeric", "float32"], "Error: fft='q15' needs numeric q15 or q31 (the Q15 FFT reads "
                               "Q15 samples); numeric is float32"),
    (["--numeric", "q15"], "Error: fft='q15': the model has no spectral feature on a raw window"),
])
def test_refusals_are_one_line(kinds_bundle, fft_bundle, tmp_path, args, message):  # noqa: F811
    bundle = fft_bundle if "float32" in args else kinds_bundle
    for command, extra in ((firmware_command, ["--target", "host"]), (c_library_command, [])):
        out = tmp_path / f"{command.name}"
        result = CliRunner().invoke(command, [str(bundle.path), *extra, *args, "--fft", "q15",
                                              "-o", str(out)])
        assert result.exit_code == 2, result.output
        assert result.output.startswith(message) and result.output.count("\n") == 1
        assert "Traceback" not in result.output and not out.exists()
    from sensorbudget.cli_simulate import simulate_command

    out = tmp_path / "sim"
    result = CliRunner().invoke(simulate_command, [str(bundle.path), "--recordings",
                                                   str(bundle.path), *args, "--fft", "q15",
                                                   "--report", str(out)])
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert message[len("Error: "):] in result.output and not out.exists()


def test_multi_rate_bundles_refuse_the_q15_fft(tmp_path):
    """A multi-rate bundle's spectra keep the float32 FFT: firmware, c-library and simulate
    with --fft q15 say so in one line, exit 2, no folder (the golden multi-rate bundle)."""
    from sensorbudget.cli_simulate import simulate_command
    from tests.golden.cases import BUNDLES

    bundle = BUNDLES / "multirate_q15"
    for command, extra in ((firmware_command, ["--target", "host", "-o"]),
                           (c_library_command, ["-o"]),
                           (simulate_command, ["--recordings", str(bundle), "--report"])):
        out = tmp_path / command.name
        result = CliRunner().invoke(command, [str(bundle), "--numeric", "q15", "--fft", "q15",
                                              *extra, str(out)])
        assert result.exit_code == 2, result.output
        assert result.output.startswith("Error: fft='q15' is for single-rate bundles; a "
                                        "multi-rate bundle's spectra use the float32 FFT")
        assert result.output.count("\n") == 1 and not out.exists()
