"""C header: compiled with strict warnings and run; float32 bit-exact with numpy float32 in the
same order, Q15/Q31 exactly equal to the Python integer model and within the stated bound."""

import re

import numpy as np
import pytest

from sensorbudget.export import ExportError, c_header, dequantize_scores, predict_int, quantize_inputs
from sensorbudget.export.c_header import stated_bound
from sensorbudget.export.cgen import c_comment
from tests.export.helpers import (
    CModel,
    compile_c,
    float32_sequential,
    mulan_bundle,
    synthetic_bundle,
)


def selected(bundle, X):
    return np.asarray(X, np.float64)[:, bundle.selected_index]


def float_reference_at(bundle, Xsel32):
    """The float64 bundle model evaluated at the float32 inputs the device sees."""
    return Xsel32.astype(np.float64) @ bundle.W + bundle.b


@pytest.mark.parametrize("dataset", ["yeast", "emotions"])
def test_float32_bit_exact_on_real_data(tmp_path, dataset):
    bundle, X = mulan_bundle(tmp_path, dataset)
    cm = CModel(tmp_path, c_header(bundle), "multilabel")
    Xs = selected(bundle, X).astype(np.float32)
    scores = cm.predict(Xs)
    expected = float32_sequential(bundle.W, bundle.b, Xs)
    assert scores.dtype == np.float32
    np.testing.assert_array_equal(scores.view(np.uint32), expected.view(np.uint32))
    np.testing.assert_array_equal(cm.labels(Xs), (expected > 0).astype(np.uint8))
    np.testing.assert_array_equal(cm.select(X.astype(np.float32)), Xs)
    # and the float32 model is close to the float64 bundle
    np.testing.assert_allclose(scores, bundle.decision_scores(X), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("task,kw", [
    ("regression", dict(t=1, budget=1)),            # k = 1, t = 1
    ("regression", dict(t=3, budget=4, offset=1e4)),  # large intercepts
    ("multiclass", dict(t=4, budget=3)),
    ("multiclass", dict(t=2, budget=2)),            # binary, two score columns
    ("multilabel", dict(t=2, budget=1)),             # k = 1 classifier
])
def test_float32_edge_cases(tmp_path, task, kw):
    bundle, X = synthetic_bundle(tmp_path, task, **kw)
    cm = CModel(tmp_path, c_header(bundle), task)
    Xs = selected(bundle, X).astype(np.float32)
    expected = float32_sequential(bundle.W, bundle.b, Xs)
    np.testing.assert_array_equal(cm.predict(Xs).view(np.uint32), expected.view(np.uint32))
    if task == "multiclass":
        np.testing.assert_array_equal(cm.labels(Xs), np.argmax(expected, axis=1))


def _check_fixed(tmp_path, bundle, X, task, numeric, rng):
    header = c_header(bundle, numeric=numeric)
    fx = header.fixed
    cm = CModel(tmp_path, header, task)
    Xs32 = selected(bundle, X).astype(np.float32)
    q = quantize_inputs(fx, Xs32)
    np.testing.assert_array_equal(cm.quantize(Xs32), q)
    ints = predict_int(fx, q)
    np.testing.assert_array_equal(cm.predict(q), ints)
    # the whole integer range, extremes included (saturation paths)
    info = np.iinfo(cm.itype)
    extreme = rng.integers(info.min, info.max, size=(300, cm.k), endpoint=True)
    extreme[:3] = [[info.min] * cm.k, [info.max] * cm.k, [0] * cm.k]
    np.testing.assert_array_equal(cm.predict(extreme), predict_int(fx, extreme))
    err = np.abs(dequantize_scores(fx, ints) - float_reference_at(bundle, Xs32)).max()
    assert err <= fx.error_bound <= header.error_bound
    stated = stated_bound(fx.error_bound)
    assert float(stated) == header.error_bound
    assert f"#define SBMODEL_{numeric.upper()}_ERROR_BOUND {stated}f\n" in header.text
    if task == "multilabel":
        np.testing.assert_array_equal(cm.labels(q), (ints > 0).astype(np.uint8))
    elif task == "multiclass":
        np.testing.assert_array_equal(cm.labels(q), np.argmax(ints, axis=1))
    return err, header.error_bound


@pytest.mark.parametrize("numeric", ["q15", "q31"])
def test_fixed_point_on_yeast(tmp_path, numeric):
    bundle, X = mulan_bundle(tmp_path, "yeast")
    err, bound = _check_fixed(tmp_path, bundle, X, "multilabel", numeric, np.random.default_rng(1))
    print(f"yeast {numeric}: observed max error {err:.3g}, stated bound {bound:.3g}")
    assert bound < (1e-3 if numeric == "q15" else 1e-7)   # the bound is useful, not vacuous


@pytest.mark.parametrize("numeric", ["q15", "q31"])
@pytest.mark.parametrize("task,kw", [
    ("regression", dict(t=1, budget=1)),
    ("regression", dict(t=3, budget=4, offset=1e4)),
    ("multiclass", dict(t=3, budget=3)),
])
def test_fixed_point_edge_cases(tmp_path, numeric, task, kw):
    bundle, X = synthetic_bundle(tmp_path, task, **kw)
    _check_fixed(tmp_path, bundle, X, task, numeric, np.random.default_rng(2))


def test_constant_feature_and_zero_weights(tmp_path):
    from tests.export.helpers import synthetic
    from sensorbudget.trainer.bundle.model import load_bundle, save_bundle
    est, X, meta, arrays = synthetic("regression", t=2, budget=3)
    col = meta["selected_index"][1]
    X[:, col] = 2.5
    arrays = dict(arrays, x_min=arrays["x_min"].copy(), x_max=arrays["x_max"].copy(),
                  W=arrays["W"].copy())
    arrays["x_min"][1] = arrays["x_max"][1] = 2.5
    arrays["W"][:, 1] = 0.0
    save_bundle(tmp_path / "c", meta, arrays)
    bundle = load_bundle(tmp_path / "c")
    for numeric in ("q15", "q31"):
        _check_fixed(tmp_path, bundle, X, "regression", numeric, np.random.default_rng(3))


def test_includable_from_several_files(tmp_path):
    bundle, _ = synthetic_bundle(tmp_path, "multilabel")
    for numeric in ("float32", "q15", "q31"):
        text = c_header(bundle, numeric=numeric).text
        unit = '#include "model.h"\n#include "model.h"\nint {f}(void) {{ return SBMODEL_N_FEATURES; }}\n'
        compile_c(tmp_path, {"model.h": text, "a.c": unit.format(f="a"), "b.c": unit.format(f="b"),
                             "main.c": "int a(void);\nint b(void);\nint main(void) { return a() - b(); }\n"},
                  exe=f"two_{numeric}")


HOSTILE_FEATURES = ["int", 'quote"d', "*/ evil /* x", "naïve ✓ Δ", "??/", "back\\slash", "new\nline",
                    "", "x" * 200, "while"]
HOSTILE_TARGETS = ["return", "*/", 'a"b\\', "é"]


def c_comments(text):
    """Bodies of the /* */ comments of C source, skipping string and character literals."""
    comments, i = [], 0
    while i < len(text):
        if text.startswith("/*", i):
            end = text.index("*/", i + 2)
            comments.append(text[i + 2:end])
            i = end + 2
        elif text[i] in "\"'":
            j = i + 1
            while text[j] != text[i]:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return comments


def hostile_bundle(tmp_path):
    extractors = [{"name": f"ext {f}", "features": [f], "sensors": ["acc */ \"x\""],
                   "cost": 1.5, "params": {"window": 128, "note": "*/ /* ??/ \\ \"", "ü": [1, 2]}}
                  for f in HOSTILE_FEATURES]
    sensors = [{"name": "acc */ \"x\"", "rate_hz": 50}]
    return synthetic_bundle(tmp_path, "multilabel", d=len(HOSTILE_FEATURES), t=4, budget=6,
                            features=HOSTILE_FEATURES, targets=HOSTILE_TARGETS,
                            extractors=extractors, sensors=sensors)


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_hostile_names_compile_and_run(tmp_path, numeric):
    bundle, X = hostile_bundle(tmp_path)
    header = c_header(bundle, numeric=numeric)
    assert header.text.isascii()
    # every user string shows up, escaped, inside a comment, and no comment ends early
    comments = c_comments(header.text)
    assert not any("/*" in c for c in comments)
    banner = comments[0]
    for name in bundle.meta["selected"] + bundle.meta["targets"] + bundle.meta["required_extractors"]:
        assert c_comment(name) in banner
    assert "*\\/ evil /\\* x" in banner
    cm = CModel(tmp_path, header, "multilabel")
    Xs = selected(bundle, X).astype(np.float32)
    if numeric == "float32":
        expected = float32_sequential(bundle.W, bundle.b, Xs)
        np.testing.assert_array_equal(cm.predict(Xs), expected)
    else:
        q = quantize_inputs(header.fixed, Xs)
        np.testing.assert_array_equal(cm.predict(q), predict_int(header.fixed, q))
    macros = re.findall(r"^#define (SBMODEL_F_\w+) ", header.text, re.M)
    assert len(macros) == len(set(macros)) == len(bundle.meta["selected"])


def test_strings_round_trip_through_c(tmp_path):
    bundle, _ = hostile_bundle(tmp_path)
    header = c_header(bundle)
    main = ('#include <stdio.h>\n#include "model.h"\nint main(void)\n{\n    size_t i;\n'
            "    for (i = 0; i < SBMODEL_N_FEATURES; ++i) { printf(\"%s\\n\", sbmodel_feature_names[i]); }\n"
            "    for (i = 0; i < SBMODEL_N_TARGETS; ++i) { printf(\"%s\\n\", sbmodel_target_names[i]); }\n"
            "    for (i = 0; i < SBMODEL_N_REQUIRED_EXTRACTORS; ++i) {\n"
            "        printf(\"%s\\n%s\\n\", sbmodel_required_extractors[i], sbmodel_extractor_params_json[i]);\n"
            "    }\n    printf(\"%s\\n\", sbmodel_required_sensors[0]);\n    return 0;\n}\n")
    import json
    import subprocess
    exe = compile_c(tmp_path, {"model.h": header.text, "main.c": main})
    out = subprocess.run([str(exe)], capture_output=True, check=True).stdout.decode("utf-8")
    meta = bundle.meta
    by_name = {e["name"]: e for e in meta["extractors"]}
    expected = list(meta["selected"]) + list(meta["targets"])
    for name in meta["required_extractors"]:
        expected += [name, json.dumps(by_name[name]["params"], sort_keys=True, ensure_ascii=False)]
    expected.append(meta["required_sensors"][0])
    assert out == "".join(s + "\n" for s in expected)


@pytest.mark.parametrize("name", ["int", "while", "NULL", "class", "_x", "9lives", "my model",
                                  "a*/b", "modèle", "x" * 41])
def test_bad_model_names_are_clear_errors(tmp_path, name):
    bundle, _ = synthetic_bundle(tmp_path, "regression")
    with pytest.raises(ExportError, match=r"name=.*(reserved|not a C identifier|limit is 40)"):
        c_header(bundle, name=name)


def test_custom_name_prefixes_everything(tmp_path):
    bundle, X = synthetic_bundle(tmp_path, "multiclass")
    header = c_header(bundle, name="gesture_v2", numeric="q31")
    assert "sbmodel" not in header.text.lower()
    assert "#ifndef GESTURE_V2_H" in header.text
    cm = CModel(tmp_path, header, "multiclass")
    q = quantize_inputs(header.fixed, selected(bundle, X))
    np.testing.assert_array_equal(cm.labels(q), np.argmax(predict_int(header.fixed, q), axis=1))


# nanopb-style expectations: each regex must match some line; a leading "!" must match none.
EXPECTED_FLOAT = [
    r"^#ifndef SBMODEL_H$", r"^#define SBMODEL_H$", r"^#endif /\* SBMODEL_H \*/$",
    r"^#include <stdint\.h>$", r"^#define SBMODEL_FORMAT_VERSION 1$",
    r"^#define SBMODEL_N_FEATURES 3$", r"^#define SBMODEL_N_TARGETS 4$",
    r"^#define SBMODEL_TASK_MULTICLASS 1$", r"^#define SBMODEL_NUMERIC_FLOAT32 1$",
    r"^static const float sbmodel_weights\[SBMODEL_N_FEATURES\]\[SBMODEL_N_TARGETS\] = \{$",
    r"^static const float sbmodel_intercepts\[SBMODEL_N_TARGETS\] = \{$",
    r"^static inline void sbmodel_predict\(const float \*features, float \*scores\)$",
    r"^static inline int sbmodel_label\(const float \*features\)$",
    r"-ffp-contract=off",
    r"!malloc", r"!\b(19|20)\d\d-\d\d-\d\d", r"!double", r"!^static (?!const |inline )",
    r"!^(?!static|#|\s|/\*| \*|\}|\{|$)",
]
EXPECTED_Q15 = [
    r"^static const int16_t sbmodel_q15_weights\[SBMODEL_N_FEATURES\]\[SBMODEL_N_TARGETS\] = \{$",
    r"^static const int32_t sbmodel_q15_intercepts\[SBMODEL_N_TARGETS\] = \{$",
    r"^static inline void sbmodel_predict_q15\(const int16_t \*features_q, int16_t \*scores_q\)$",
    r"^static inline void sbmodel_quantize_q15\(const float \*features, int16_t \*features_q\)$",
    r"^static inline int sbmodel_label_q15\(const int16_t \*features_q\)$",
    r"^#define SBMODEL_Q15_ERROR_BOUND \d\.\de[-+]\d+f$", r"^#define SBMODEL_Q15_SHIFT \d+$",
    r"!sbmodel_predict\(", r"!malloc", r"!^static (?!const |inline )",
]


@pytest.mark.parametrize("numeric,expected", [("float32", EXPECTED_FLOAT), ("q15", EXPECTED_Q15)])
def test_generated_text(tmp_path, numeric, expected):
    bundle, _ = synthetic_bundle(tmp_path, "multiclass", t=4, budget=3)
    text = c_header(bundle, numeric=numeric).text
    assert text == c_header(bundle, numeric=numeric).text   # deterministic
    for pattern in expected:
        if pattern.startswith("!"):
            assert not re.search(pattern[1:], text, re.M), pattern
        else:
            assert re.search(pattern, text, re.M), pattern


def test_float_literals_round_trip_exactly(tmp_path):
    from sensorbudget.export.cgen import c_float
    rng = np.random.default_rng(5)
    values = np.concatenate([rng.normal(size=200) * 10.0 ** rng.integers(-40, 38, 200),
                             [0.0, -0.0, 1.0, 3.4028235e38, 1e-45, 1.17549435e-38, 0.1]]).astype(np.float32)
    body = ",\n".join(c_float(v) for v in values)
    main = (f"#include <stdio.h>\n#include <string.h>\nstatic const float v[{len(values)}] = {{\n{body}\n}};\n"
            "int main(void) { fwrite(v, sizeof v[0], sizeof v / sizeof v[0], stdout); return 0; }\n")
    import subprocess
    exe = compile_c(tmp_path, {"main.c": main})
    out = np.frombuffer(subprocess.run([str(exe)], capture_output=True, check=True).stdout, np.float32)
    np.testing.assert_array_equal(out.view(np.uint32), values.view(np.uint32))


@pytest.mark.parametrize("numeric", ["q15", "q31"])
def test_q31_header_refuses_a_32_bit_double_at_compile_time(tmp_path, numeric):
    """avr-gcc's double has 32 bits: the Q31 quantiser (double arithmetic) would round
    differently from the reference, so the header stops the build; Q15 computes in float."""
    import shutil
    import subprocess

    if shutil.which("avr-gcc") is None:
        pytest.skip("avr-gcc is not installed (make deps-embedded)")
    header = c_header(synthetic_bundle(tmp_path, "regression")[0], name="m", numeric=numeric)
    (tmp_path / "m.h").write_text(header.text)
    (tmp_path / "main.c").write_text('#include <stddef.h>\n#include "m.h"\n'
                                     "int main(void) { return 0; }\n")
    proc = subprocess.run(["avr-gcc", "-mmcu=atmega328p", "-std=c99", "-fsyntax-only",
                           "main.c"], cwd=tmp_path, capture_output=True, text=True)
    if numeric == "q31":
        assert proc.returncode != 0 and "Q31 needs a 64-bit double" in proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr
