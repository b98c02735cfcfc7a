"""Shared test helpers: real data, bundle factories, independent references and a C harness."""

from __future__ import annotations

import functools
import shutil
import subprocess

import numpy as np
import pytest

from tests.paths import SHARED
from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier
from sensorbudget.trainer.bundle.model import bundle_contents, load_bundle, save_bundle

DATA = SHARED
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wdouble-promotion",
          "-Wconversion", "-ffp-contract=off", "-O2"]
MULAN = {"yeast": 14, "emotions": 6}


@functools.lru_cache(maxsize=None)
def _load_mulan(name):
    import arff
    path = DATA / name / f"{name}.arff"
    if not path.is_file():
        return None
    with open(path, encoding="utf-8") as fh:
        data = arff.load(fh)
    table = np.array(data["data"], dtype=np.float64)
    names = [a[0] for a in data["attributes"]]
    n_labels = MULAN[name]
    return table[:, :-n_labels], table[:, -n_labels:].astype(int), names[:-n_labels], names[-n_labels:]


def mulan(name):
    """(X, Y, feature names, label names) of a Mulan dataset, or skip if the data are missing."""
    loaded = _load_mulan(name)
    if loaded is None:
        pytest.skip(f"{DATA / name} is missing (shared data not available)")
    return loaded


def mulan_bundle(tmp_path, name, budget=10, lam=1.0):
    X, Y, features, labels = mulan(name)
    est = GreedyRLSClassifier(budget=budget, lam=lam).fit(X, Y)
    save_bundle(tmp_path / name, *bundle_contents(est, X, features, labels, task="multilabel"))
    return load_bundle(tmp_path / name), X


def synthetic(task, *, n=120, d=8, t=3, budget=3, seed=0, offset=0.0, **contents):
    """(est, X, meta, arrays) for a small seeded problem of the given task."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.linspace(0.5, 4, d) + np.linspace(-3, 5, d)
    signal = X[:, :t] @ rng.normal(size=(t, t)) + 0.3 * rng.normal(size=(n, t))
    if task == "regression":
        y = signal[:, 0] + offset if t == 1 else signal + offset
        est = GreedyRLS(budget=budget, lam=1.0).fit(X, y)
        targets = [f"y{j}" for j in range(t)]
    elif task == "multilabel":
        y = (signal > np.median(signal, axis=0)).astype(int)
        est = GreedyRLSClassifier(budget=budget, lam=1.0).fit(X, y)
        targets = [f"label{j}" for j in range(t)]
    else:
        y = np.argmax((signal - signal.mean(axis=0)) / signal.std(axis=0), axis=1)
        est = GreedyRLSClassifier(budget=budget, lam=1.0).fit(X, y)
        targets = [f"class{c}" for c in est.classes_]
    features = contents.pop("features", [f"f{i}" for i in range(d)])
    targets = contents.pop("targets", targets)
    meta, arrays = bundle_contents(est, X, features, targets, task=task, **contents)
    return est, X, meta, arrays


def synthetic_bundle(tmp_path, task, name="b", **kw):
    est, X, meta, arrays = synthetic(task, **kw)
    save_bundle(tmp_path / name, meta, arrays)
    return load_bundle(tmp_path / name), X


def float32_sequential(W, b, Xs):
    """numpy float32 in the header's order: acc = b[j]; acc += W[i, j] * x[i] for i = 0..k-1."""
    W32, b32 = np.asarray(W, np.float32), np.asarray(b, np.float32)
    X32 = np.asarray(Xs, np.float32)
    acc = np.repeat(b32[None, :], len(X32), axis=0)
    for i in range(W32.shape[0]):
        prod = X32[:, i:i + 1] * W32[i]
        acc = acc + prod
    return acc


def need_gcc():
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")


def compile_c(tmp_path, sources: dict, exe="prog", flags=()):
    """Write {filename: text} into tmp_path and compile all .c files; returns the executable."""
    need_gcc()
    for fname, text in sources.items():
        (tmp_path / fname).write_text(text, encoding="ascii")
    c_files = [str(tmp_path / f) for f in sources if f.endswith(".c")]
    out = tmp_path / exe
    proc = subprocess.run(["gcc", *CFLAGS, *flags, "-I", str(tmp_path), *c_files, "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


def _loop(mode, buf, width, body):
    return (f'    if (strcmp(mode, "{mode}") == 0) {{\n'
            f"        while (fread({buf}, sizeof {buf}[0], {width}, stdin) == {width}) {{\n"
            f"{body}        }}\n        return 0;\n    }}\n")


def harness_source(header, task: str) -> str:
    """A binary stdin -> stdout harness for a header; argv[1] selects the function under test:
    predict, labels (multi-label: t bytes; multi-class: one int), select (float32: candidates
    -> features) or quantize (fixed point: float features -> integers)."""
    name, up, numeric = header.name, header.name.upper(), header.numeric
    it = {"float32": "float", "q15": "int16_t", "q31": "int32_t"}[numeric]
    sfx = "" if numeric == "float32" else f"_{numeric}"
    loops = [_loop("predict", "xq", f"{up}_N_FEATURES",
                   f"            {name}_predict{sfx}(xq, out);\n"
                   f"            fwrite(out, sizeof out[0], {up}_N_TARGETS, stdout);\n")]
    if task == "multilabel":
        loops.append(_loop("labels", "xq", f"{up}_N_FEATURES",
                           f"            {name}_labels{sfx}(xq, lab);\n"
                           f"            fwrite(lab, 1, {up}_N_TARGETS, stdout);\n"))
    elif task == "multiclass":
        loops.append(_loop("labels", "xq", f"{up}_N_FEATURES",
                           f"            int label = {name}_label{sfx}(xq);\n"
                           f"            fwrite(&label, sizeof label, 1, stdout);\n"))
    if numeric == "float32":
        loops.append(_loop("select", "xf", f"{up}_N_CANDIDATES",
                           f"            {name}_select(xf, sel);\n"
                           f"            fwrite(sel, sizeof sel[0], {up}_N_FEATURES, stdout);\n"))
    else:
        loops.append(_loop("quantize", "xf", f"{up}_N_FEATURES",
                           f"            {name}_quantize_{numeric}(xf, xq);\n"
                           f"            fwrite(xq, sizeof xq[0], {up}_N_FEATURES, stdout);\n"))
    return ("#include <stdio.h>\n#include <string.h>\n#include \"model.h\"\n\n"
            "int main(int argc, char **argv)\n{\n"
            f"    static float xf[{up}_N_CANDIDATES];\n    static float sel[{up}_N_FEATURES];\n"
            f"    static {it} xq[{up}_N_FEATURES];\n    static {it} out[{up}_N_TARGETS];\n"
            f"    static unsigned char lab[{up}_N_TARGETS];\n"
            "    const char *mode = argc > 1 ? argv[1] : \"predict\";\n"
            "    (void)xf; (void)sel; (void)lab; (void)out;\n"
            + "".join(loops) + "    return 2;\n}\n")


class CModel:
    """A compiled header + harness; methods feed numpy arrays through the C functions."""

    def __init__(self, tmp_path, header, task):
        import re
        self.header, self.numeric, self.task = header, header.numeric, task
        self.exe = compile_c(tmp_path, {"model.h": header.text,
                                        "main.c": harness_source(header, task)})
        up = header.name.upper()
        self.k = int(re.search(rf"#define {up}_N_FEATURES (\d+)", header.text).group(1))
        self.t = int(re.search(rf"#define {up}_N_TARGETS (\d+)", header.text).group(1))
        self.itype = {"float32": np.float32, "q15": np.int16, "q31": np.int32}[self.numeric]

    def _run(self, mode, data, out_dtype, width):
        proc = subprocess.run([str(self.exe), mode], input=np.ascontiguousarray(data).tobytes(),
                              capture_output=True, check=True)
        return np.frombuffer(proc.stdout, dtype=out_dtype).reshape(len(data), width)

    def predict(self, Xq):
        return self._run("predict", np.asarray(Xq, self.itype), self.itype, self.t)

    def labels(self, Xq):
        if self.task == "multilabel":
            return self._run("labels", np.asarray(Xq, self.itype), np.uint8, self.t)
        return self._run("labels", np.asarray(Xq, self.itype), np.intc, 1)[:, 0]

    def select(self, X):
        return self._run("select", np.asarray(X, np.float32), np.float32, self.k)

    def quantize(self, Xsel):
        return self._run("quantize", np.asarray(Xsel, np.float32), self.itype, self.k)
