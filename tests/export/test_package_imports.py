"""The export package loads its ONNX half (skl2onnx, scikit-learn) only when it is used."""

import subprocess
import sys

from tests.paths import REPO


def run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, check=True).stdout.strip()


def test_header_names_do_not_import_skl2onnx():
    out = run("import sys, sensorbudget.export, sensorbudget.cli\n"
              "from sensorbudget.export import c_header, NUMERICS, quantize_model\n"
              "print(callable(c_header), 'skl2onnx' in sys.modules, 'sklearn' in sys.modules)")
    assert out == "True False False"


def test_an_onnx_name_registers_the_converters():
    out = run("import numpy as np, sys\n"
              "from sensorbudget.export import bundle_to_onnx\n"
              "from skl2onnx import to_onnx\n"
              "from sensorbudget.trainer import GreedyRLS\n"
              "X = np.random.default_rng(0).normal(size=(30, 4)); y = X[:, 0]\n"
              "model = to_onnx(GreedyRLS(budget=2, lam=1.0).fit(X, y), X[:1])\n"
              "print(model.graph.output[0].name != '', 'skl2onnx' in sys.modules)")
    assert out == "True True"
