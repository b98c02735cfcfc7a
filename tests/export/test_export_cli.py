"""``sensorbudget export onnx|c-header``: files written atomically, short summaries, one-line errors."""

from functools import partial

import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.export import OnnxModel, describe_onnx
from sensorbudget.cli_export import export_group
from tests.export.helpers import synthetic_bundle


@pytest.fixture
def invoke():
    return partial(CliRunner().invoke, export_group)


@pytest.fixture
def bundle_dir(tmp_path):
    synthetic_bundle(tmp_path, "multilabel", t=3, budget=4)
    return tmp_path / "b"


def test_onnx_command(invoke, bundle_dir, tmp_path):
    out = tmp_path / "model.onnx"
    result = invoke(["onnx", str(bundle_dir), "-o", str(out), "--inputs", "selected",
                     "--dtype", "float64", "--opset", "15"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and "float64" in result.output and "features[N, 4]" in result.output
    model = OnnxModel(out)
    assert model.dtype == np.float64 and model.n_inputs == 4
    assert "selected features (4)" in describe_onnx(out)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("numeric", ["float32", "q15", "q31"])
def test_c_header_command(invoke, bundle_dir, tmp_path, numeric):
    out = tmp_path / "model.h"
    result = invoke(["c-header", str(bundle_dir), "-o", str(out), "--name", "imu_model",
                     "--numeric", numeric], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="ascii")
    assert "#define IMU_MODEL_FORMAT_VERSION 1" in text
    if numeric == "float32":
        assert "error bound" not in result.output
    else:
        assert f"fixed-point error bound ({numeric})" in result.output
        assert f"imu_model_predict_{numeric}" in result.output


def test_c_header_bound_is_printed_as_in_header(invoke, bundle_dir, tmp_path):
    out = tmp_path / "q.h"
    result = invoke(["c-header", str(bundle_dir), "-o", str(out), "--numeric", "q15"])
    assert result.exit_code == 0, result.output
    import re
    printed = float(re.search(r"<= (\S+) over the training input ranges", result.output).group(1))
    stated = float(re.search(r"#define SBMODEL_Q15_ERROR_BOUND (\S+)f", out.read_text()).group(1))
    assert printed == stated > 0


def corrupt(bundle_dir, which):
    if which == "weights":
        data = bytearray((bundle_dir / "weights.npz").read_bytes())
        data[len(data) // 2] ^= 0xFF
        (bundle_dir / "weights.npz").write_bytes(bytes(data))
    elif which == "json":
        (bundle_dir / "model.json").write_text("{not json", encoding="utf-8")
    else:
        (bundle_dir / "model.json").unlink()


@pytest.mark.parametrize("which", ["weights", "json", "missing"])
@pytest.mark.parametrize("command,fname", [("onnx", "m.onnx"), ("c-header", "m.h")])
def test_corrupt_bundle_is_a_clear_error_and_writes_nothing(invoke, bundle_dir, tmp_path, which,
                                                           command, fname):
    corrupt(bundle_dir, which)
    out = tmp_path / fname
    result = invoke([command, str(bundle_dir), "-o", str(out)])
    assert result.exit_code == 2
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    assert "Traceback" not in result.output
    assert not out.exists()


def test_existing_output_survives_a_failed_export(invoke, bundle_dir, tmp_path):
    out = tmp_path / "m.h"
    out.write_text("previous", encoding="ascii")
    result = invoke(["c-header", str(bundle_dir), "-o", str(out), "--name", "int"])
    assert result.exit_code == 2
    assert "name='int' is a C/C++ reserved word" in result.output
    assert out.read_text(encoding="ascii") == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "m.h"]


def test_bad_options(invoke, bundle_dir, tmp_path):
    result = invoke(["onnx", str(bundle_dir), "-o", str(tmp_path / "m.onnx"), "--opset", "99"])
    assert result.exit_code == 2 and "opset=99 is outside 13.." in result.output
    result = invoke(["c-header", str(bundle_dir), "-o", str(tmp_path / "m.h"), "--numeric", "q7"])
    assert result.exit_code == 2 and "Usage:" in result.output
    result = invoke(["onnx", str(tmp_path / "nope"), "-o", str(tmp_path / "m.onnx")])
    assert result.exit_code == 2 and "does not exist" in result.output
    result = invoke(["onnx", str(bundle_dir), "-o", str(tmp_path / "new_dir" / "m.onnx")])
    assert result.exit_code == 0 and (tmp_path / "new_dir" / "m.onnx").is_file()   # dirs created
    (tmp_path / "file").write_text("x")
    result = invoke(["onnx", str(bundle_dir), "-o", str(tmp_path / "file" / "m.onnx")])
    assert result.exit_code == 2 and result.output.startswith("Error: ")
