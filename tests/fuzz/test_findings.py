"""Readable regression tests for the bugs the fuzzers and property tests found (issue 10).

Each test names the input that used to crash, hang or exhaust memory and asserts the project's
own error (or correct behaviour) instead. The raw reproducers are replayed by
``test_regressions.py``.
"""

import io
import json
import time
import zipfile

import numpy as np
import pytest

from sensorbudget.export import cgen
from sensorbudget.export.errors import ExportError
from sensorbudget.firmware_gen.errors import FirmwareGenError
from sensorbudget.trainer.bundle.model import load_bundle
from sensorbudget.trainer.data import load_table
from sensorbudget.trainer.errors import BundleError, DataError
from sensorbudget.trainer.sensing.recordings import load_recordings


def _npz(path, members: dict):
    with zipfile.ZipFile(path, "w") as zf:
        for name, blob in members.items():
            zf.writestr(f"{name}.npy", blob)
    return path


def _npy(array=None, header=None, tail=b""):
    buf = io.BytesIO()
    if header is None:
        np.lib.format.write_array(buf, np.asarray(array), allow_pickle=False)
    else:
        np.lib.format.write_array_header_1_0(buf, header)
        buf.write(tail)
    return buf.getvalue()


@pytest.mark.parametrize("sep", ["", "ab"])
def test_csv_separator_must_be_one_character(tmp_path, sep):
    (tmp_path / "t.csv").write_text("a,y\n1,2\n3,4\n")
    with pytest.raises(DataError, match="single characters"):
        load_table(tmp_path / "t.csv", targets=["y"], sep=sep)


def test_arff_error_whose_message_cannot_be_formatted(tmp_path):
    # liac-arff's BadDataFormat.__str__ applies % to the offending line ("%%%%1,1 1")
    text = ("@relation r\n@attribute a numeric\n@attribute y {e 1,1}\n@data\n"
            "{0 %%%%%%%%%1,1 1}\n{0 2}\n")
    (tmp_path / "t.arff").write_text(text)
    with pytest.raises(DataError, match="not a readable ARFF file"):
        load_table(tmp_path / "t.arff", labels=1)


@pytest.mark.parametrize("nominal", ["{}", "{0" + "," * 40, "{" + "," * 40 + "a b}"])
def test_malformed_arff_nominals_fail_fast(tmp_path, nominal):
    text = f"@relation r\n@attribute a numeric\n@attribute y {nominal}\n@data\n1,0\n"
    (tmp_path / "t.arff").write_text(text)
    start = time.monotonic()
    with pytest.raises(DataError, match="nominal|ARFF"):
        load_table(tmp_path / "t.arff", labels=1)
    assert time.monotonic() - start < 2      # liac-arff's regex took hours on the 40 commas


def test_valid_arff_nominals_still_load(tmp_path):
    text = ("@relation r\n@attribute a numeric\n@attribute 'b c' numeric\n"
            "@attribute y {0, 1}\n@data\n1,2,0\n3,4,1\n5,6,1\n")
    (tmp_path / "t.arff").write_text(text)
    assert load_table(tmp_path / "t.arff", labels=1).Y.ravel().tolist() == [0, 1, 1]


@pytest.mark.parametrize("members, message", [
    ({"X": _npy(header={"descr": "<f8", "fortran_order": False, "shape": (2 ** 40, 2)}),
      "Y": _npy(np.zeros(3))}, "not a readable NPZ"),
    ({"X": _npy(np.zeros(3)), "Y": _npy(np.zeros(3))}, "must be 2-D"),
    ({"X": _npy(np.zeros((2, 2))), "Y": _npy(np.zeros((0, 2 ** 31), dtype=np.int8))},
     "holds no values"),
    ({"X": _npy(np.zeros((2, 1))), "Y": _npy(np.zeros(2)),
      "feature_names": _npy(np.frombuffer(b"\xff" * 20, dtype="<U5"))}, "unreadable names"),
    ({"X": _npy(np.zeros((2, 1))), "Y": _npy(np.zeros(2)), "task": _npy(np.array("bogus"))},
     "task='bogus'"),
])
def test_malformed_npz_tables_are_data_errors(tmp_path, members, message):
    with pytest.raises(DataError, match=message):
        load_table(_npz(tmp_path / "t.npz", members))


def test_ts_file_without_cases_is_an_error(tmp_path):
    (tmp_path / "r.ts").write_text("@problemName P\n@classLabel true a b\n@data\n")
    with pytest.raises(DataError, match="no cases"):
        load_recordings(tmp_path / "r.ts", 10.0)


@pytest.fixture(scope="module")
def bundle_dir(tmp_path_factory):
    from fuzz._bundles import make_bundles

    return make_bundles(tmp_path_factory.mktemp("bundles"), wide=True)


def _rewrite(src, dst, change):
    import hashlib

    from sensorbudget.trainer.bundle import npz_bytes
    from sensorbudget.trainer.bundle.model import content_sha256

    meta = json.loads((src / "model.json").read_text())
    with np.load(src / "weights.npz") as npz:
        arrays = {k: npz[k] for k in npz.files}
    change(meta, arrays)
    blob = npz_bytes(arrays)
    meta["weights_sha256"] = hashlib.sha256(blob).hexdigest()
    try:
        meta["content_sha256"] = content_sha256(meta)
    except ValueError:                      # NaN: refused when model.json is parsed
        pass
    dst.mkdir()
    (dst / "model.json").write_text(json.dumps(meta))
    (dst / "weights.npz").write_bytes(blob)
    return dst


@pytest.mark.parametrize("change, message", [
    (lambda m, a: m.update(path=None), "path=None"),
    (lambda m, a: m["extractors"][0].update(cost=None), r"extractors\[0\].cost=None"),
    (lambda m, a: m["extractors"][0].pop("features"), "lacks the key 'features'"),
    (lambda m, a: m["path"][0].update(loo_mse="low"), "loo_mse='low'"),
    (lambda m, a: m.update(lam=float("nan")), "holds NaN"),
    (lambda m, a: a.update(W=a["W"].astype(np.uint16)), "dtype uint16"),
    (lambda m, a: a.update(x_max=np.full_like(a["x_max"], np.inf)), "'x_max'"),
])
def test_bundle_fields_of_the_wrong_type_are_refused_at_load(bundle_dir, tmp_path, change,
                                                             message):
    bad = _rewrite(bundle_dir["regression"], tmp_path / "bad", change)
    with pytest.raises(BundleError, match=message):
        load_bundle(bad)


def test_onnx_metadata_of_the_wrong_type_or_encoding(bundle_dir, tmp_path):
    import onnx

    from sensorbudget.export.onnx_bundle import bundle_to_onnx, describe_onnx

    model = bundle_to_onnx(load_bundle(bundle_dir["regression"]))
    for key, value in (("input_features", "null"), ("required_sensors", '[{"name": null}]')):
        for prop in model.metadata_props:
            if prop.key == key:
                prop.value = value
    onnx.save(model, str(tmp_path / "m.onnx"))
    with pytest.raises(ExportError, match="input_features=None must be a list"):
        describe_onnx(tmp_path / "m.onnx")
    for prop in model.metadata_props:
        if prop.key == "input_features":
            prop.value = "[]"
    onnx.save(model, str(tmp_path / "m.onnx"))
    assert "required sensors (1): None" in describe_onnx(tmp_path / "m.onnx")
    raw = (tmp_path / "m.onnx").read_bytes().replace(b'"task"', b'"\xe6ask"')
    (tmp_path / "m.onnx").write_bytes(raw)        # a metadata value that is not UTF-8
    describe_onnx(tmp_path / "m.onnx")


def test_firmware_whose_answers_overflow_the_avr_buffers_is_refused(bundle_dir):
    from sensorbudget.firmware_gen import generate_firmware
    from sensorbudget.firmware_gen.firmware import check_buffers
    from sensorbudget.firmware_gen.plan import make_plan
    from sensorbudget.firmware_gen.targets import get_target

    wide = load_bundle(bundle_dir["wide"])                   # 3 inputs, 24 targets
    # Q31 on AVR is now refused earlier (32-bit double); the buffer check itself still holds
    plan = make_plan(wide, name="sbmodel", numeric="q31")
    with pytest.raises(FirmwareGenError, match="PREDICT answer .* 192 bytes .* at most 160"):
        check_buffers(plan, get_target("avr"))
    with pytest.raises(FirmwareGenError):
        generate_firmware(wide, target="avr", numeric="q31")
    generate_firmware(wide, target="avr", numeric="q15")     # 24 x 4 = 96 bytes fit
    generate_firmware(wide, target="host", numeric="q31")


def test_macro_names_stay_distinct_within_63_characters():
    names = cgen.macro_names("A" * 40 + "_F", ["x" * 70, "x" * 70 + "y", "x" * 70])
    assert len({n[:63] for n in names}) == 3 and max(map(len, names)) <= 63


@pytest.mark.parametrize("bad", ["0", "9lives", " int ", "__"])
def test_suggested_names_are_valid(bad):
    with pytest.raises(ExportError, match="try '(?P<s>[^']*)'") as info:
        cgen.check_identifier(bad)
    suggestion = info.value.args[0].split("try '")[1].split("'")[0]
    assert cgen.check_identifier(suggestion) == suggestion


@pytest.mark.parametrize("token", ["NaN", "-Infinity", "1e400"])
def test_model_json_must_be_strict_json(bundle_dir, tmp_path, token):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "weights.npz").write_bytes((bundle_dir["regression"] / "weights.npz").read_bytes())
    text = (bundle_dir["regression"] / "model.json").read_text()
    (bad / "model.json").write_text(text.replace('"currency"', f'"x": {token}, "currency"', 1))
    with pytest.raises(BundleError, match="not JSON|not finite"):
        load_bundle(bad)


# --- issue 33: the new input kinds (feature NPZ members, calibrate's TOML, linked folders) -----


def _feature_arrays(tmp_path):
    from tests.fixtures import write_sensors_toml, write_stream
    from sensorbudget.trainer.sensing.feature_set import load_feature_set

    fs = load_feature_set(write_stream(tmp_path / "rec" / "s.csv"),
                          write_sensors_toml(tmp_path / "s.toml"))
    return fs.to_arrays()


@pytest.mark.parametrize("member, value", [("format_version", np.inf), ("window", np.inf),
                                           ("hop", -np.inf)])
def test_an_infinite_scalar_member_is_a_data_error(tmp_path, member, value):
    """py_features: int(inf) raised OverflowError, which FeatureSet.load did not catch."""
    from sensorbudget.trainer.bundle import npz_bytes
    from sensorbudget.trainer.sensing.feature_set import FeatureSet

    arrays = _feature_arrays(tmp_path)
    arrays[member] = np.float64(value)
    with pytest.raises(DataError, match="OverflowError|format_version"):
        FeatureSet.load(npz_bytes(arrays))


def test_a_loaded_feature_table_gives_strict_json_and_a_cost_plan(tmp_path):
    """py_features: tables that loaded but broke train: sample_rate 0 (ZeroDivisionError),
    1e-320 (window_s = inf: not JSON), a sensor without its energy (KeyError), a compute cost
    that is text (ValueError). Each is now refused at load, naming the member."""
    from sensorbudget.trainer.bundle import npz_bytes
    from sensorbudget.trainer.sensing.feature_set import FeatureSet

    arrays = _feature_arrays(tmp_path)
    sensors = json.loads(str(arrays["sensors_json"]))
    del sensors[0]["energy_per_reading_j"]
    for member, value, message in [
            ("sample_rate", np.float64(0), "sample_rate=0"),
            ("sample_rate", np.float64(1e-320), "sample_rate=9.99989e-321"),
            ("sensors_json", np.array(json.dumps(sensors)), "energy_per_reading_j=None"),
            ("compute_costs_json", np.array('{"ax.mean": {"energy": "a"}}'), "compute_costs")]:
        bad = dict(arrays, **{member: value})
        with pytest.raises(DataError, match=message):
            FeatureSet.load(npz_bytes(bad))


@pytest.mark.parametrize("entry, message", [
    ('extractor = ["ax.mean"]\ntarget = "m4"', r"extractor=\['ax.mean'\] is not a feature"),
    ('extractor = "ax.mean"\ntarget = "m4"\nsource = { kind = 1 }', "source=.* must be a string"),
    ('extractor = "ax.mean"\ntarget = 5', "target=5 must name"),
])
def test_calibration_entries_of_the_wrong_type_are_data_errors(entry, message):
    """py_calibrate: an extractor that is a list was a TypeError (unhashable) in every command
    reading the file; a source that is a table was kept and written back as a top-level
    [source] table, which made the calibrated file unreadable."""
    import tomllib

    from tests.fixtures import sensors_toml
    from sensorbudget.trainer.sensing.sensors import parse_sensor_spec

    data = tomllib.loads(sensors_toml() + "\n[[calibration]]\n" + entry + "\n")
    with pytest.raises(DataError, match=message):
        parse_sensor_spec(data, "s.toml")


def test_calibrate_keeps_carriage_returns_outside_its_block(bundle_dir, tmp_path):
    """py_calibrate: the file was read with newline translation, so a CRLF sensors.toml came
    back with LF line ends although everything outside the block is documented as kept byte for
    byte."""
    from sensorbudget.device_sim.calibrate import calibrate
    from fuzz._bundles import SENSORS
    from fuzz.py_reports import _base_report

    (tmp_path / "base").mkdir()
    report = tmp_path / "sim"
    report.mkdir()
    (report / "report.json").write_text(json.dumps(_base_report(tmp_path / "base")))
    text = "# notes\r\n" + SENSORS.replace("\n", "\r\n")
    (tmp_path / "s.toml").write_bytes(text.encode())
    calibrate(tmp_path / "s.toml", [report])
    written = (tmp_path / "s.toml").read_bytes().decode()
    assert written.startswith(text) and "[[calibration]]" in written[len(text):]
