"""Check exported model files against their bundle (used by ``make demo``).

    python examples/check_export.py BUNDLE_DIR --onnx model.onnx --header model.h [--rows 500]

Inputs are random rows inside the training range of each selected feature (corners included),
seeded, so the check needs no data set. ONNX: onnxruntime scores against the bundle's numpy
scores. Header: compiled on the host with gcc (strict warnings), run on the same rows; float32
must equal numpy float32 in the header's summation order bit for bit, Q15/Q31 must equal the
Python integer model exactly and stay within the bound the header states. Exit status 1 on any
failed check.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from sensorbudget.export.c_header import stated_bound
from sensorbudget.export.fixed_point import dequantize_scores, predict_int, quantize_inputs, quantize_model
from sensorbudget.export.onnx_bundle import OnnxModel
from sensorbudget.trainer.bundle.model import load_bundle

CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wdouble-promotion",
          "-Wconversion", "-ffp-contract=off", "-O2"]

HARNESS = """\
#include <stdio.h>
#include <string.h>
#include "{header}"

int main(int argc, char **argv)
{{
    static float xf[{up}_N_FEATURES];
    static {it} xq[{up}_N_FEATURES];
    static {it} out[{up}_N_TARGETS];
    if (argc > 1 && strcmp(argv[1], "quantize") == 0) {{
        while (fread(xf, sizeof xf[0], {up}_N_FEATURES, stdin) == {up}_N_FEATURES) {{
            {quantize}
            fwrite(xq, sizeof xq[0], {up}_N_FEATURES, stdout);
        }}
        return 0;
    }}
    while (fread(xq, sizeof xq[0], {up}_N_FEATURES, stdin) == {up}_N_FEATURES) {{
        {predict}(xq, out);
        fwrite(out, sizeof out[0], {up}_N_TARGETS, stdout);
    }}
    return 0;
}}
"""


def sample_rows(bundle, n, seed=0):
    """(full candidate rows, selected rows): uniform in the training box of the selected features."""
    rng = np.random.default_rng(seed)
    lo, hi = bundle.arrays["x_min"], bundle.arrays["x_max"]
    sel = lo + (hi - lo) * rng.random((n, len(lo)))
    sel[:2] = [lo, hi]
    sel = sel.astype(np.float32).astype(np.float64)
    full = rng.normal(size=(n, len(bundle.meta["features"])))
    full[:, bundle.selected_index] = sel
    return full, sel


def check_onnx(bundle, path, full, sel) -> bool:
    model = OnnxModel(path)
    X = full if model.n_inputs == full.shape[1] else sel
    out = model.run(X.astype(model.dtype))
    diff = np.abs(out["scores"] - bundle.decision_scores(full)).max()
    tol = 1e-5 if model.dtype == np.float32 else 1e-12
    ok = diff <= tol * max(1.0, np.abs(out["scores"]).max())
    print(f"onnx   {path}: {model.dtype} input width {X.shape[1]}, outputs {model.output_names}; "
          f"max |onnxruntime - bundle numpy| = {diff:.3g} ({'ok' if ok else 'FAIL'})")
    return ok


def compile_header(path, workdir):
    text = Path(path).read_text(encoding="ascii")
    name = re.search(r"^#define (\w+)_FORMAT_VERSION ", text, re.M).group(1)
    numeric = re.search(rf"^#define {name}_NUMERIC_(\w+) 1", text, re.M).group(1).lower()
    prefix = re.search(r"^static inline void (\w+)_select\(", text, re.M).group(1)
    it = {"float32": "float", "q15": "int16_t", "q31": "int32_t"}[numeric]
    sfx = "" if numeric == "float32" else f"_{numeric}"
    shutil.copy(path, workdir / "model.h")
    (workdir / "main.c").write_text(HARNESS.format(
        header="model.h", up=name, it=it, predict=f"{prefix}_predict{sfx}",
        quantize=f"{prefix}_quantize_{numeric}(xf, xq);" if sfx else "(void)xf;"))
    exe = workdir / "check"
    subprocess.run(["gcc", *CFLAGS, "-o", str(exe), str(workdir / "main.c")], check=True)
    return exe, numeric, text, name


def run(exe, data, out_dtype, width, mode="predict"):
    proc = subprocess.run([str(exe), mode], input=np.ascontiguousarray(data).tobytes(),
                          capture_output=True, check=True)
    return np.frombuffer(proc.stdout, dtype=out_dtype).reshape(len(data), width)


def check_header(bundle, path, sel) -> bool:
    if shutil.which("gcc") is None:
        print("header: gcc not found, skipped")
        return True
    with tempfile.TemporaryDirectory() as tmp:
        exe, numeric, text, macro = compile_header(path, Path(tmp))
        W, b, t = bundle.W, bundle.b, bundle.W.shape[1]
        x32 = sel.astype(np.float32)
        float64 = x32.astype(np.float64) @ W + b
        if numeric == "float32":
            got = run(exe, x32, np.float32, t)
            acc = np.repeat(b.astype(np.float32)[None, :], len(x32), axis=0)
            for i in range(W.shape[0]):
                acc = acc + x32[:, i:i + 1] * W[i].astype(np.float32)
            exact = np.array_equal(got.view(np.uint32), acc.view(np.uint32))
            print(f"header {path}: float32 compiled OK; bit-exact with numpy float32: {exact}; "
                  f"max |C - float64 model| = {np.abs(got - float64).max():.3g}")
            return exact
        fx = quantize_model(W, b, bundle.arrays["x_min"], bundle.arrays["x_max"], numeric)
        itype = np.int16 if numeric == "q15" else np.int32
        q = run(exe, x32, itype, W.shape[0], mode="quantize")
        got = run(exe, q, itype, t)
        same = (np.array_equal(q, quantize_inputs(fx, x32))
                and np.array_equal(got, predict_int(fx, q)))
        err = np.abs(dequantize_scores(fx, got) - float64).max()
        stated = re.search(rf"#define {macro}_{numeric.upper()}_ERROR_BOUND (\S+)f", text).group(1)
        ok = same and err <= float(stated) and stated == stated_bound(fx.error_bound)
        print(f"header {path}: {numeric} compiled OK; equal to the Python integer model: {same}; "
              f"max |C - float64 model| = {err:.3g} <= stated bound {stated}: {err <= float(stated)}")
        return ok


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", help="bundle directory")
    parser.add_argument("--onnx", help="ONNX file exported from the bundle")
    parser.add_argument("--header", help="C header exported from the bundle")
    parser.add_argument("--rows", type=int, default=500, help="number of random rows")
    args = parser.parse_args(argv)
    bundle = load_bundle(args.bundle)
    full, sel = sample_rows(bundle, args.rows)
    ok = True
    if args.onnx:
        ok &= check_onnx(bundle, args.onnx, full, sel)
    if args.header:
        ok &= check_header(bundle, args.header, sel)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
