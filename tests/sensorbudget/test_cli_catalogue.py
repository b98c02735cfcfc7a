"""A catalogue of malformed inputs for every CLI command.

Each case runs the real command line (``sensorbudget.cli.main``) in a fresh directory and asserts:

- exit code 2;
- the error is one line, ``Error: ...``, that names the bad value (the case's ``expect`` texts);
- no traceback;
- nothing is left behind: no output file or directory, and no temporary file, appears.

The valid artifacts the cases start from (recordings, sensors.toml, a feature table, bundles,
an ONNX model, generated firmware, a simulation report) are built once per module.
Cases marked ``xfail(strict=True)`` are open findings in files this test does not own; each
reason says where the fix goes. When one is fixed, its case XPASSes and the marker must go.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.cli import main
from tests.fixtures import TINY_SENSORS, write_stream

SENSORS = TINY_SENSORS          # the shared tiny device; the cases below edit its text


def _run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Valid inputs every case starts from: {name: path}."""
    base = tmp_path_factory.mktemp("world")
    w = {"base": base, "sensors": base / "sensors.toml",
         "rec": write_stream(base / "rec" / "s.csv")}
    w["sensors"].write_text(SENSORS)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 4))
    rows = ["a,b,c,d,y"] + [",".join(f"{v:.5f}" for v in (*x, x[0] - x[2])) for x in X]
    w["table"] = base / "table.csv"
    w["table"].write_text("\n".join(rows) + "\n")
    w["npz"] = base / "features.npz"
    _run("features", w["rec"], "--sensors", w["sensors"], "-o", w["npz"])
    w["bundle"] = base / "bundle"
    _run("train", w["rec"], "--sensors", w["sensors"], "--budget", 3, "-o", w["bundle"])
    w["table_bundle"] = base / "table_bundle"
    _run("train", w["table"], "--target", "y", "--budget", 2, "-o", w["table_bundle"])
    w["onnx"] = base / "model.onnx"
    _run("export", "onnx", w["bundle"], "-o", w["onnx"])
    w["fw"] = base / "fw"
    _run("firmware", w["bundle"], "--target", "host", "-o", w["fw"])
    w["report"] = base / "report"
    _run("simulate", w["bundle"], "--recordings", w["rec"], "--report", w["report"])
    return w


@dataclass(frozen=True)
class Case:
    """One malformed invocation: ``args`` may use ``{name}`` of the world, ``{tmp}`` (the
    case's directory) and ``{out}`` (the output that must not appear); ``files`` are written
    into ``{tmp}`` first ({name: text or bytes}, or a callable(world, tmp))."""

    id: str
    args: tuple
    expect: tuple
    files: dict = field(default_factory=dict)
    prepare: object = None
    xfail: str = ""


def _tampered_bundle(change):
    """prepare(): a copy of the valid bundle with ``change(meta, arrays)`` applied and the
    weights and content hashes updated (so only the change is wrong)."""
    def prepare(w, tmp):
        import hashlib

        from sensorbudget.trainer.bundle import npz_bytes
        from sensorbudget.trainer.bundle.model import content_sha256
        meta = json.loads((w["bundle"] / "model.json").read_text())
        with np.load(w["bundle"] / "weights.npz") as npz:
            arrays = {k: npz[k] for k in npz.files}
        change(meta, arrays)
        blob = npz_bytes(arrays)
        meta["weights_sha256"] = hashlib.sha256(blob).hexdigest()
        try:
            meta["content_sha256"] = content_sha256(meta)
        except ValueError:                  # NaN: refused when model.json is parsed
            pass
        (tmp / "bad").mkdir()
        (tmp / "bad" / "model.json").write_text(json.dumps(meta))
        (tmp / "bad" / "weights.npz").write_bytes(blob)
    return prepare


def _copy_bundle(edit=None):
    def prepare(w, tmp):
        (tmp / "bad").mkdir()
        for name in ("model.json", "weights.npz"):
            (tmp / "bad" / name).write_bytes((w["bundle"] / name).read_bytes())
        if edit:
            edit(tmp / "bad")
    return prepare


def _sensors_with(old, new):
    return {"s.toml": SENSORS.replace(old, new)}


def _lying_npz(w, tmp):
    import io
    import zipfile

    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(head, {"descr": "<f8", "fortran_order": False,
                                                "shape": (2 ** 40, 3)})
    with zipfile.ZipFile(tmp / "bad.npz", "w") as zf:
        zf.writestr("X.npy", head.getvalue())
        zf.writestr("Y.npy", head.getvalue())


def _object_npz(w, tmp):
    np.savez(tmp / "bad.npz", X=np.array([[1, "a"]], dtype=object), Y=np.zeros(1))


def _bad_metadata_onnx(w, tmp):
    import onnx

    model = onnx.load(str(w["onnx"]))
    for prop in model.metadata_props:
        if prop.key == "input_features":
            prop.value = "42"
    onnx.save(model, str(tmp / "bad.onnx"))


def _report_with(change):
    def prepare(w, tmp):
        data = json.loads((w["report"] / "report.json").read_text())
        data = change(data)
        (tmp / "rep").mkdir()
        (tmp / "rep" / "report.json").write_text(json.dumps(data))
    return prepare


BAD_CSV_STREAM = "time,ax,ay,t,y\n0,1,2,3,4\n0.05,abc,2,3,4\n0.1,1,2,3,4\n"
CASES = [
    # ---- features -------------------------------------------------------------------------
    Case("features-toml-syntax", ("features", "{rec}", "--sensors", "{tmp}/s.toml", "-o", "{out}"),
         ("not valid TOML",), {"s.toml": "[[sensors]\nname ="}),
    Case("features-toml-unknown-key", ("features", "{rec}", "--sensors", "{tmp}/s.toml", "-o",
                                       "{out}"), ("'colour'",),
         _sensors_with("unit_price = 0.5", 'unit_price = 0.5\ncolour = "red"')),
    Case("features-negative-price", ("features", "{rec}", "--sensors", "{tmp}/s.toml", "-o",
                                     "{out}"), ("unit_price=-1",),
         _sensors_with("unit_price = 1.0", "unit_price = -1")),
    Case("features-unknown-extractor", ("features", "{rec}", "--sensors", "{tmp}/s.toml", "-o",
                                        "{out}"), ("'median'",),
         _sensors_with('"energy"]', '"median"]')),
    Case("features-unknown-channel", ("features", "{rec}", "--sensors", "{tmp}/s.toml", "-o",
                                      "{out}"), ("'gx'",),
         _sensors_with('channels = ["acc", "temp"]', 'channels = ["acc", "gx"]')),
    Case("features-mixed-rates", ("features", "{rec}", "--sensors", "{tmp}/s.toml", "-o",
                                  "{out}"), ("different sample rates",),
         {"s.toml": SENSORS.replace("sample_rate_hz = 20\n\n[[features]]",
                                    "sample_rate_hz = 10\n\n[[features]]")}),
    Case("features-toml-not-utf8", ("features", "{rec}", "--sensors", "{tmp}/s.toml", "-o",
                                    "{out}"), ("s.toml",), {"s.toml": b"name = \"\xff\xfe\"\n"},
         ),
    Case("features-no-time-column", ("features", "{tmp}/r.csv", "--sensors", "{sensors}", "-o",
                                     "{out}"), ("no 'time' column",),
         {"r.csv": "t0,ax,ay,t,y\n0,1,2,3,4\n"}),
    Case("features-not-a-number", ("features", "{tmp}/r.csv", "--sensors", "{sensors}", "-o",
                                   "{out}"), ("'abc'",), {"r.csv": BAD_CSV_STREAM}),
    Case("features-time-backwards", ("features", "{tmp}/r.csv", "--sensors", "{sensors}", "-o",
                                     "{out}"), ("not strictly increasing",),
         {"r.csv": "time,ax,ay,t,y\n" + "".join(f"{0.05 * (i % 7)},1,2,3,4\n"
                                                for i in range(20))}),
    Case("features-window-too-long", ("features", "{rec}", "--sensors", "{sensors}", "--window",
                                      "1000", "-o", "{out}"), ("window=1000",)),
    Case("features-window-zero", ("features", "{rec}", "--sensors", "{sensors}", "--window", "0",
                                  "-o", "{out}"), ("'--window'", "0")),
    Case("features-huge-hop", ("features", "{rec}", "--sensors", "{sensors}", "--hop",
                               "10000000000000000000000000", "-o", "{out}"), ("hop",),
         ),
    Case("features-missing-recordings", ("features", "{tmp}/nope.csv", "--sensors", "{sensors}",
                                         "-o", "{out}"), ("nope.csv",)),
    Case("features-bad-on-missing", ("features", "{rec}", "--sensors", "{sensors}",
                                     "--on-missing", "maybe", "-o", "{out}"), ("'maybe'",)),
    Case("features-empty-directory", ("features", "{tmp}/empty", "--sensors", "{sensors}", "-o",
                                      "{out}"), ("holds no index.csv",),
         prepare=lambda w, tmp: (tmp / "empty").mkdir()),
    Case("features-empty-ts", ("features", "{tmp}/r.ts", "--sensors", "{sensors}", "-o",
                               "{out}"), ("no cases",),
         {"r.ts": "@problemName P\n@timeStamps false\n@classLabel true a b\n@data\n"}),
    Case("features-index-escapes", ("features", "{tmp}/d", "--sensors", "{sensors}", "-o",
                                    "{out}"), ("'../s.csv'",),
         prepare=lambda w, tmp: ((tmp / "d").mkdir(), (tmp / "s.csv").write_text(
             w["rec"].read_text()), (tmp / "d" / "index.csv").write_text(
             "file,label\n../s.csv,1\n"))),
    Case("features-index-lists-twice", ("features", "{tmp}/d", "--sensors", "{sensors}", "-o",
                                        "{out}"), ("'s.csv' is listed twice",),
         prepare=lambda w, tmp: ((tmp / "d").mkdir(), (tmp / "d" / "s.csv").write_text(
             w["rec"].read_text()), (tmp / "d" / "index.csv").write_text(
             "file,label\ns.csv,1\ns.csv,2\n"))),
    # ---- train ----------------------------------------------------------------------------
    Case("train-missing-data", ("train", "{tmp}/nope.csv", "--target", "y", "--budget", "2",
                                "-o", "{out}"), ("nope.csv",)),
    Case("train-budget-zero", ("train", "{table}", "--target", "y", "--budget", "0", "-o",
                               "{out}"), ("--budget=0",)),
    Case("train-budget-not-int", ("train", "{table}", "--target", "y", "--budget", "two", "-o",
                                  "{out}"), ("'two'",)),
    Case("train-no-budget", ("train", "{table}", "--target", "y", "-o", "{out}"), ("--budget",)),
    Case("train-unknown-target", ("train", "{table}", "--target", "nope", "--budget", "2", "-o",
                                  "{out}"), ("'nope'",)),
    Case("train-not-a-number", ("train", "{tmp}/t.csv", "--target", "y", "--budget", "1", "-o",
                                "{out}"), ("'x1'",), {"t.csv": "a,y\n1,2\nx1,3\n4,5\n"}),
    Case("train-missing-value", ("train", "{tmp}/t.csv", "--target", "y", "--budget", "1", "-o",
                                 "{out}"), ("column 'a'",), {"t.csv": "a,y\n1,2\n,3\n4,5\n"}),
    Case("train-empty-separator", ("train", "{table}", "--target", "y", "--budget", "1",
                                   "--sep", "", "-o", "{out}"), ("separator ''",)),
    Case("train-separator-is-decimal", ("train", "{table}", "--target", "y", "--budget", "1",
                                        "--sep", ";", "--decimal", ";", "-o", "{out}"),
         ("separator ';'",)),
    Case("train-negative-lam", ("train", "{table}", "--target", "y", "--budget", "1", "--lam",
                                "-1", "-o", "{out}"), ("-1",)),
    Case("train-too-many-labels", ("train", "{table}", "--labels", "9", "--budget", "1", "-o",
                                   "{out}"), ("labels=9",)),
    Case("train-arff-bad-nominal", ("train", "{tmp}/t.arff", "--labels", "1", "--budget", "1",
                                    "-o", "{out}"), ("malformed nominal values",),
         {"t.arff": "@relation r\n@attribute a numeric\n@attribute y {0" + "," * 40 +
          "\n@data\n1,0\n"}),
    Case("train-arff-text-attribute", ("train", "{tmp}/t.arff", "--target", "y", "--budget", "1",
                                       "-o", "{out}"), ("'c'",),
         {"t.arff": "@relation r\n@attribute a numeric\n@attribute c string\n"
                    "@attribute y numeric\n@data\n1,'x',2\n3,'z',4\n5,'w',1\n"}),
    Case("train-npz-pickled", ("train", "{tmp}/bad.npz", "--budget", "1", "-o", "{out}"),
         ("without pickles",), prepare=_object_npz),
    Case("train-npz-lying-header", ("train", "{tmp}/bad.npz", "--budget", "1", "-o", "{out}"),
         ("bad.npz",), prepare=_lying_npz),
    Case("train-unknown-suffix", ("train", "{tmp}/t.xyz", "--budget", "1", "-o", "{out}"),
         ("'.xyz'",), {"t.xyz": "a,y\n1,2\n"}),
    Case("train-unknown-group-column", ("train", "{table}", "--target", "y", "--budget", "1",
                                        "--groups", "subject", "-o", "{out}"), ("'subject'",)),
    Case("train-window-without-sensors", ("train", "{table}", "--target", "y", "--budget", "1",
                                          "--window", "5", "-o", "{out}"), ("--window",)),
    Case("train-sensor-budget-on-table", ("train", "{table}", "--target", "y", "--max-sensors",
                                          "1", "-o", "{out}"), ("--max-sensors",)),
    Case("train-compress-out-of-range", ("train", "{table}", "--target", "y", "--budget", "1",
                                         "--compress-labels", "2", "-o", "{out}"), ("2",)),
    Case("train-multiclass-not-onehot", ("train", "{table}", "--target", "a", "--target", "b",
                                         "--task", "multiclass", "--budget", "1", "-o", "{out}"),
         ("one-hot",)),
    Case("train-cost-below-cheapest", ("train", "{rec}", "--sensors", "{sensors}", "--max-cost",
                                       "0.01", "-o", "{out}"), ("0.01",)),
    Case("train-bad-xml", ("train", "{tmp}/t.arff", "--xml", "{tmp}/l.xml", "--budget", "1",
                           "-o", "{out}"), ("not valid XML",),
         {"l.xml": "<labels><label", "t.arff": "@relation r\n@attribute a numeric\n"
                                               "@attribute y {0,1}\n@data\n1,0\n2,1\n3,1\n"}),
    Case("train-output-is-a-file", ("train", "{table}", "--target", "y", "--budget", "1", "-o",
                                    "{tmp}/taken"), ("exists and is not a directory",),
         {"taken": "keep me"}),
    # ---- info -----------------------------------------------------------------------------
    Case("info-missing-model-json", ("info", "{tmp}/bad"), ("model.json",),
         prepare=_copy_bundle(lambda d: (d / "model.json").unlink())),
    Case("info-model-json-not-json", ("info", "{tmp}/bad"), ("not valid JSON",),
         prepare=_copy_bundle(lambda d: (d / "model.json").write_text("{"))),
    Case("info-tampered-weights", ("info", "{tmp}/bad"), ("tampered",),
         prepare=_copy_bundle(lambda d: (d / "weights.npz").write_bytes(
             (d / "weights.npz").read_bytes() + b"x"))),
    Case("info-lam-is-text", ("info", "{tmp}/bad"), ("lam='small'",),
         prepare=_tampered_bundle(lambda m, a: m.update(lam="small"))),
    Case("info-future-format", ("info", "{tmp}/bad"), ("format_version=99",),
         prepare=_tampered_bundle(lambda m, a: m.update(format_version=99))),
    Case("info-path-not-a-list", ("info", "{tmp}/bad"), ("path=",),
         prepare=_tampered_bundle(lambda m, a: m.update(path=None))),
    Case("info-onnx-garbage", ("info", "{tmp}/m.onnx"), ("not a readable ONNX model",),
         {"m.onnx": b"\x00garbage\xff"}),
    Case("info-onnx-bad-metadata", ("info", "{tmp}/bad.onnx"), ("input_features=42",),
         prepare=_bad_metadata_onnx),
    Case("info-plot-into-missing-bundle", ("info", "{tmp}/nothing", "--plot", "{out}"),
         ("nothing",)),
    # ---- export ---------------------------------------------------------------------------
    Case("export-onnx-bad-opset", ("export", "onnx", "{bundle}", "--opset", "3", "-o", "{out}"),
         ("opset=3",)),
    Case("export-onnx-bad-dtype", ("export", "onnx", "{bundle}", "--dtype", "float16", "-o",
                                   "{out}"), ("'float16'",)),
    Case("export-onnx-missing-bundle", ("export", "onnx", "{tmp}/gone", "-o", "{out}"),
         ("gone",)),
    Case("export-onnx-nan-weights", ("export", "onnx", "{tmp}/bad", "-o", "{out}"), ("'W'",),
         prepare=_tampered_bundle(lambda m, a: a.update(W=np.full_like(a["W"], np.nan)))),
    Case("export-c-reserved-name", ("export", "c-header", "{bundle}", "--name", "int", "-o",
                                    "{out}"), ("name='int'",)),
    Case("export-c-not-identifier", ("export", "c-header", "{bundle}", "--name", "9lives", "-o",
                                     "{out}"), ("name='9lives'",)),
    Case("export-c-bad-numeric", ("export", "c-header", "{bundle}", "--numeric", "q7", "-o",
                                  "{out}"), ("'q7'",)),
    Case("export-c-wrong-shape", ("export", "c-header", "{tmp}/bad", "-o", "{out}"),
         ("W has shape",),
         prepare=_tampered_bundle(lambda m, a: a.update(W=np.zeros((9, 9))))),
    # ---- evaluate -------------------------------------------------------------------------
    Case("evaluate-bad-budget", ("evaluate", "{table}", "--target", "y", "--budgets", "abc",
                                 "--report", "{out}"), ("'abc'",)),
    Case("evaluate-bad-method", ("evaluate", "{table}", "--target", "y", "--methods", "lasso",
                                 "--report", "{out}"), ("'lasso'",)),
    Case("evaluate-one-fold", ("evaluate", "{table}", "--target", "y", "--folds", "1",
                               "--report", "{out}"), ("1",)),
    Case("evaluate-fold-out-of-range", ("evaluate", "{table}", "--target", "y", "--folds", "3",
                                        "--fold", "7", "--report", "{out}"), ("--fold 7",)),
    Case("evaluate-cost-budget-on-table", ("evaluate", "{table}", "--target", "y", "--budgets",
                                           "price:5", "--report", "{out}"),
         ("cost budgets",)),
    # ---- firmware / flash -----------------------------------------------------------------
    Case("firmware-runtime-name", ("firmware", "{bundle}", "--target", "host", "--name",
                                   "sbfw_x", "-o", "{out}"), ("name='sbfw_x'",)),
    Case("firmware-bad-full-scale", ("firmware", "{bundle}", "--target", "host", "--numeric",
                                     "q15", "--full-scale", "ax=loud", "-o", "{out}"),
         ("'ax=loud'",)),
    Case("firmware-negative-full-scale", ("firmware", "{bundle}", "--target", "host",
                                          "--numeric", "q15", "--full-scale", "-4", "-o",
                                          "{out}"), ("'-4'",)),
    Case("firmware-table-bundle-unknown-channel", ("firmware", "{table_bundle}", "--target",
                                                   "host", "--numeric", "q15", "--full-scale",
                                                   "nope=1", "-o", "{out}"), ("'nope'",)),
    Case("firmware-unknown-target", ("firmware", "{bundle}", "--target", "z80", "-o", "{out}"),
         ("'z80'",)),
    Case("firmware-foreign-directory", ("firmware", "{bundle}", "--target", "host", "-o",
                                        "{tmp}/mine"), ("'notes.txt'", "refusing"),
         {"mine/notes.txt": "my notes"}),
    Case("flash-no-manifest", ("flash", "{tmp}/empty", "--dry-run"), ("firmware.json",),
         prepare=lambda w, tmp: (tmp / "empty").mkdir()),
    Case("flash-host-firmware", ("flash", "{fw}", "--dry-run"), ("host firmware",)),
    Case("flash-bad-baud", ("flash", "{fw}", "--baud", "0", "--dry-run"), ("0",)),
    Case("flash-artifact-outside", ("flash", "{tmp}/fw", "--programmer", "copy", "--port",
                                    "{tmp}/drive", "--dry-run"), ("bin='../../secret.bin'",),
         {"fw/firmware.json": json.dumps({"format": "sensorbudget-firmware",
                                          "target": "nucleo-f4",
                                          "artifacts": {"bin": "../../secret.bin"}}),
          "secret.bin": "x", "drive/.keep": ""}),
    Case("flash-manifest-is-a-list", ("flash", "{tmp}/fw", "--dry-run"), ("firmware.json",),
         {"fw/firmware.json": "[]"}),
    Case("flash-manifest-not-utf8", ("flash", "{tmp}/fw", "--dry-run"), ("firmware.json",),
         {"fw/firmware.json": b"\xff\xfe{}"}),
    # ---- simulate / compare / calibrate ---------------------------------------------------
    Case("simulate-bad-backend", ("simulate", "{bundle}", "--recordings", "{rec}", "--backend",
                                  "abacus", "--report", "{out}"), ("'abacus'",)),
    Case("simulate-negative-rate", ("simulate", "{bundle}", "--recordings", "{rec}", "--rate",
                                    "-5", "--report", "{out}"), ("-5",)),
    Case("simulate-rate-word", ("simulate", "{bundle}", "--recordings", "{rec}", "--rate",
                                "fast", "--report", "{out}"), ("'fast'",)),
    Case("simulate-bad-full-scale", ("simulate", "{bundle}", "--recordings", "{rec}",
                                     "--numeric", "q15", "--full-scale", "ax=big", "--report",
                                     "{out}"), ("'ax=big'",)),
    Case("simulate-table-bundle", ("simulate", "{table_bundle}", "--recordings", "{rec}",
                                   "--report", "{out}"), ("not trained from recordings",)),
    Case("simulate-recording-lacks-channel", ("simulate", "{bundle}", "--recordings",
                                              "{tmp}/r.csv", "--report", "{out}"), ("'t'",),
         {"r.csv": "time,ax,ay\n" + "".join(f"{i / 20},1,2\n" for i in range(40))}),
    Case("simulate-zero-battery", ("simulate", "{bundle}", "--recordings", "{rec}",
                                   "--battery-mah", "0", "--report", "{out}"), ("0",)),
    Case("compare-neither-report-nor-bundle", ("compare", "{tmp}/x", "{report}", "-o", "{out}"),
         ("neither a simulation report nor a bundle",),
         prepare=lambda w, tmp: (tmp / "x").mkdir()),
    Case("compare-report-not-json", ("compare", "{tmp}/rep", "{report}", "-o", "{out}"),
         ("not a readable simulation report",), {"rep/report.json": "{oops"}),
    Case("compare-report-is-a-list", ("compare", "{tmp}/rep", "{report}", "-o", "{out}"),
         ("report.json",), {"rep/report.json": "[1, 2]"}),
    Case("calibrate-estimated-costs", ("calibrate", "{report}", "--sensors", "{tmp}/s.toml",
                                       "-o", "{out}"), ("estimated",), {"s.toml": SENSORS}),
    Case("calibrate-sensors-not-toml", ("calibrate", "{report}", "--sensors", "{tmp}/s.toml",
                                        "--allow-estimated", "-o", "{out}"),
         ("not valid TOML",), {"s.toml": "[[sensors"}),
    Case("calibrate-sensors-not-utf8", ("calibrate", "{report}", "--sensors", "{tmp}/s.toml",
                                        "--allow-estimated", "-o", "{out}"), ("s.toml",),
         {"s.toml": b"\xff\xfe"}),
    Case("calibrate-wrong-format", ("calibrate", "{tmp}/rep", "--sensors", "{sensors}", "-o",
                                    "{out}"), ("format='bundle'",),
         prepare=_report_with(lambda r: dict(r, format="bundle"))),
]


def _fill(text: str, w: dict, tmp: Path, out: Path) -> str:
    values = {k: str(v) for k, v in w.items()} | {"tmp": str(tmp), "out": str(out)}
    return text.format(**values)


def _snapshot(directory: Path) -> dict:
    return {p.relative_to(directory): p.read_bytes() if p.is_file() else None
            for p in directory.rglob("*")}


def _params():
    out = []
    for case in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
        out.append(pytest.param(case, id=case.id, marks=marks))
    return out


def test_catalogue_is_large_and_covers_every_command():
    assert len({c.id for c in CASES}) == len(CASES) >= 50
    commands = {c.args[0] if c.args[0] != "export" else " ".join(c.args[:2]) for c in CASES}
    assert commands >= {"features", "train", "info", "export onnx", "export c-header",
                        "evaluate", "firmware", "flash", "simulate", "compare", "calibrate"}


@pytest.mark.parametrize("case", _params())
def test_malformed_input_gives_one_clear_error(world, tmp_path, case):
    out = tmp_path / "OUT"
    for name, content in case.files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    if case.prepare is not None:
        case.prepare(world, tmp_path)
    before, world_before = _snapshot(tmp_path), _snapshot(world["base"])
    args = [_fill(a, world, tmp_path, out) for a in case.args]

    result = CliRunner().invoke(main, args)

    text = result.output
    assert "Traceback" not in text and not isinstance(result.exception, (AssertionError,
                                                                         TypeError))
    assert result.exit_code == 2, f"exit {result.exit_code}: {text}\n{result.exception!r}"
    errors = [line for line in text.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, text
    tail = text[text.index("Error:"):].rstrip("\n")
    assert "\n" not in tail, f"the error is not one line: {tail!r}"
    for expected in case.expect:
        assert _fill(expected, world, tmp_path, out) in tail, tail
    assert not out.exists(), "an output was left behind"
    assert _snapshot(tmp_path) == before, "files in the case directory changed"
    assert _snapshot(world["base"]) == world_before, "a shared input changed"
