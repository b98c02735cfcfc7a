"""Recordings -> windows -> FeatureSet: loaders, windowing edge cases, missing data, targets."""

import io
import warnings

import numpy as np
import pytest

from tests.fixtures import ACCEL, sensor_spec, write_sensors_toml
from tests.paths import REPO, SHARED
from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.sensing.extractors import extract, window_view
from sensorbudget.trainer.sensing.feature_set import FeatureSet, build_feature_set, load_feature_set
from sensorbudget.trainer.sensing.recordings import (
    Recording,
    RecordingSet,
    load_recordings,
    read_air_quality,
    time_gaps,
)
from sensorbudget.trainer.sensing.sensors import parse_sensor_spec

AIR_QUALITY = REPO / "data" / "air_quality_uci" / "AirQualityUCI.csv"
BASIC_MOTIONS = SHARED / "basic_motions"
RATE = 10.0


def make_spec(window=4, hop=2, targets=None, on_missing="skip", features=None):
    data = sensor_spec(
        [ACCEL, {"name": "gyro", "channels": ["gx"], "unit_price": 2.5,
                 "energy_per_reading_j": 1e-3}],
        features or [
            {"channels": ["ax", "gx"], "extractors": ["mean", "last"]},
            {"group": "acc", "channels": ["ax", "ay"], "extractors": ["mag_max"]},
            {"group": "ax_gx", "channels": ["ax", "gx"], "extractors": ["corr"]}],
        window=window, hop=hop, rate_hz=RATE, on_missing=on_missing)
    if targets is not None:
        data["targets"] = targets
    return parse_sensor_spec(data, source="test.toml")


def stream(n, name="r.csv", start=0.0, **extra):
    """A regular 10 Hz recording with channels ax, ay, gx and a target column y."""
    t = start + np.arange(n) / RATE
    cols = {"ax": np.sin(t), "ay": np.cos(3 * t), "gx": t ** 2 / 10, "y": 2 * t}
    cols.update(extra)
    return Recording(name=name, time=t, columns=cols)


def write_csv(path, rec, comment=None):
    names = ["time", *rec.columns]
    data = np.column_stack([rec.time, *rec.columns.values()])
    lines = [f"# {comment}"] if comment else []
    lines.append(",".join(names))
    lines += [",".join("" if np.isnan(v) else repr(float(v)) for v in row) for row in data]
    path.write_text("\n".join(lines) + "\n")
    return path


# --- windowing ----------------------------------------------------------------------------------

@pytest.mark.parametrize("n,window,hop,starts", [
    (10, 4, 2, [0, 2, 4, 6]),
    (10, 4, 3, [0, 3, 6]),
    (10, 10, 1, [0]),            # window == recording: one window
    (10, 3, 5, [0, 5]),          # hop > window: samples in between are unused
    (10, 1, 1, list(range(10))),
])
def test_window_starts(n, window, hop, starts):
    spec = make_spec(window=window, hop=hop, features=[{"channels": ["ax"], "extractors": ["last"]}])
    fs = build_feature_set(RecordingSet([stream(n)]), spec)
    np.testing.assert_array_equal(fs.window_start, starts)
    rec = stream(n)
    np.testing.assert_array_equal(fs.X[:, 0], rec.columns["ax"].astype(np.float32)[
        np.array(starts) + window - 1])
    assert (fs.window, fs.hop, fs.sample_rate) == (window, hop, RATE)


def test_features_equal_direct_extraction_and_order():
    recs = [stream(12, "a.csv"), stream(9, "b.csv")]
    fs = build_feature_set(RecordingSet(recs), make_spec(), window=4, hop=2)
    assert fs.feature_names == ["ax.mean", "ax.last", "gx.mean", "gx.last", "acc.mag_max",
                                "ax_gx.corr"]
    assert fs.feature_sensors == ["accel"] * 2 + ["gyro"] * 2 + ["accel", "accel+gyro"]
    assert fs.feature_channels[-1] == "ax+gx" and fs.feature_kinds[-1] == "corr"
    np.testing.assert_array_equal(fs.groups, [0] * 5 + [1] * 3)
    starts = np.array([0, 2, 4, 6, 8])
    ax, ay = (window_view(recs[0].columns[c], starts, 4) for c in ("ax", "ay"))
    np.testing.assert_array_equal(fs.X[:5, 0], extract("mean", ax))
    np.testing.assert_array_equal(fs.X[:5, 4], extract("mag_max", [ax, ay]))
    assert fs.X.dtype == np.float32
    # stream target = value at the window's last sample
    np.testing.assert_allclose(fs.Y[:5, 0], recs[0].columns["y"][starts + 3])
    assert fs.target_names == ["y"] and fs.task == "regression"


def test_recording_shorter_than_one_window():
    with pytest.raises(DataError, match=r"window=20 samples is longer than recording "
                                        r"'short.csv' \(12 samples\)"):
        build_feature_set(RecordingSet([stream(30), stream(12, "short.csv")]), make_spec(),
                          window=20)


def test_missing_samples_skip_windows_and_are_counted():
    rec = stream(12)
    rec.columns["ax"][5] = np.nan         # in windows starting at 2 and 4
    rec.columns["ay"][0] = np.nan         # in window 0 (ay is used by acc.mag_max)
    fs = build_feature_set(RecordingSet([rec]), make_spec())
    np.testing.assert_array_equal(fs.window_start, [6, 8])
    assert fs.skipped == {"missing_samples": 3, "gaps": 0, "missing_targets": 0}
    assert np.isfinite(fs.X).all()
    with pytest.raises(DataError, match=r"missing sample in channel 'ay' at sample 0 "
                                        r"\(t=0 s\); on_missing='error'"):
        build_feature_set(RecordingSet([rec]), make_spec(on_missing="error"))
    with pytest.raises(DataError, match="on_missing='error'"):
        build_feature_set(RecordingSet([rec]), make_spec(), on_missing="error")


def test_missing_in_unused_column_is_ignored():
    rec = stream(8, extra=np.full(8, np.nan))
    fs = build_feature_set(RecordingSet([rec]), make_spec(targets=["y"]))
    assert fs.X.shape == (3, 6)


def test_gaps_skip_windows_spanning_them():
    rec = stream(12)
    rec.time[6:] += 5.0                  # a 5.1 s step between samples 5 and 6
    gaps = time_gaps(rec, RATE)
    assert np.flatnonzero(gaps).tolist() == [5]
    fs = build_feature_set(RecordingSet([rec]), make_spec())
    np.testing.assert_array_equal(fs.window_start, [0, 2, 6, 8])   # 4 (samples 4..7) spans it
    assert fs.skipped["gaps"] == 1
    with pytest.raises(DataError, match=r"gap of 5\.1 s after t=0\.5 s"):
        build_feature_set(RecordingSet([rec]), make_spec(on_missing="error"))


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.__setitem__(4, t[2]), r"not strictly increasing \(t=0\.2 s at sample 4 "
                                       r"follows t=0\.3 s\)"),
    (lambda t: t.__setitem__(slice(5, None), t[5:] - 0.1), "not strictly increasing"),
    (lambda t: t.__setitem__(slice(5, None), t[5:] - 0.07), "shorter than half the sample"),
    (lambda t: t.__setitem__(3, np.nan), "missing time stamp at sample 3"),
])
def test_bad_time_stamps_are_errors(edit, message):
    rec = stream(10)
    edit(rec.time)
    with pytest.raises(DataError, match=message):
        build_feature_set(RecordingSet([rec]), make_spec())


def test_missing_targets_skip_windows():
    rec = stream(12)
    rec.columns["y"][3] = np.nan          # the last sample of window 0
    fs = build_feature_set(RecordingSet([rec]), make_spec())
    np.testing.assert_array_equal(fs.window_start, [2, 4, 6, 8])
    assert fs.skipped["missing_targets"] == 1


def test_nothing_usable_is_an_error():
    rec = stream(8)
    rec.columns["gx"][:] = np.nan
    with pytest.raises(DataError, match="no usable windows in 1 recording"):
        build_feature_set(RecordingSet([rec]), make_spec())


def test_target_errors():
    with pytest.raises(DataError, match=r"unknown target 'z': not among the 4 column\(s\)"):
        build_feature_set(RecordingSet([stream(8)]), make_spec(targets=["z"]))
    with pytest.raises(DataError, match="target 'ax' is also a sensor channel"):
        build_feature_set(RecordingSet([stream(8)]), make_spec(targets=["ax"]))
    rec = stream(8)
    del rec.columns["gx"]
    with pytest.raises(DataError, match="channel 'gx' is not a column of recording 'r.csv' "
                                        r"\(it has 3 besides the time\)$"):
        build_feature_set(RecordingSet([rec]), make_spec())     # the columns are not echoed


# --- loaders ------------------------------------------------------------------------------------

def test_csv_and_npz_streams_roundtrip(tmp_path):
    rec = stream(10)
    rec.columns["ax"][2] = np.nan
    path = write_csv(tmp_path / "one.csv", rec, comment="prototype run 1")
    loaded = load_recordings(path, RATE).recordings[0]
    np.testing.assert_array_equal(loaded.time, rec.time)
    np.testing.assert_array_equal(loaded.columns["ax"], rec.columns["ax"])
    np.savez(tmp_path / "two.npz", time=rec.time, **rec.columns)
    other = load_recordings(tmp_path / "two.npz", RATE).recordings[0]
    assert list(other.columns) == ["ax", "ay", "gx", "y"]
    both = load_recordings(tmp_path, RATE)           # directory without index: sorted streams
    assert [r.name for r in both.recordings] == ["one.csv", "two.npz"]


@pytest.mark.parametrize("text,message", [
    ("t,ax\n0,1\n", "no 'time' column"),
    ("time,ax,ax\n0,1,2\n", "duplicate column name 'ax'"),
    ("time,ax\n0,abc\n", r"line 2, column 'ax': 'abc' is not a number"),
    ("time,ax\n0,1,2\n", "3 fields, the header has 2"),
])
def test_bad_csv(tmp_path, text, message):
    (tmp_path / "r.csv").write_text(text)
    with pytest.raises(DataError, match=message):
        load_recordings(tmp_path / "r.csv", RATE)


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le"])
def test_text_that_is_not_utf8_is_named(tmp_path, encoding):
    """UTF-16 without a byte-order mark decodes as UTF-8 with NULs ('t i m e' columns)."""
    (tmp_path / "r.csv").write_bytes("time,ax\n0,1\n0.05,2\n".encode(encoding))
    with pytest.raises(DataError, match=r"is not UTF-8 text \(it holds NUL bytes; UTF-16\?\)"):
        load_recordings(tmp_path / "r.csv", RATE)
    (tmp_path / "r.csv").write_bytes("time,ax\n0,1\n0.05,2\n".encode("utf-8"))
    assert load_recordings(tmp_path / "r.csv", RATE).recordings[0].n_samples == 2


def test_indexed_directory_labels_become_one_hot(tmp_path):
    for i in range(4):
        write_csv(tmp_path / f"rec{i}.csv", stream(8, start=i * 100))
    (tmp_path / "index.csv").write_text(
        "file,activity\nrec0.csv,walk\nrec1.csv,run\nrec2.csv,walk\nrec3.csv,sit\n")
    fs = load_feature_set(tmp_path, _write_spec(tmp_path), window=4, hop=4)
    assert fs.target_names == ["run", "sit", "walk"] and fs.task == "multiclass"
    np.testing.assert_array_equal(fs.groups, [0, 0, 1, 1, 2, 2, 3, 3])
    np.testing.assert_array_equal(fs.Y[::2], [[0, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 0]])


def test_indexed_directory_numeric_labels_and_errors(tmp_path):
    write_csv(tmp_path / "a.csv", stream(8))
    (tmp_path / "index.csv").write_text("file,dose\na.csv,2.5\n")
    fs = load_feature_set(tmp_path, _write_spec(tmp_path), window=4)
    assert fs.target_names == ["dose"] and fs.task == "regression"
    np.testing.assert_array_equal(fs.Y[:, 0], [2.5, 2.5])
    (tmp_path / "index.csv").write_text("file,dose\na.csv,2.5\na.csv,3\n")
    with pytest.raises(DataError, match="recording 'a.csv' is listed twice"):
        load_recordings(tmp_path, RATE)
    (tmp_path / "index.csv").write_text("file,dose\nb.csv,1\n")
    with pytest.raises(DataError, match="b.csv' does not exist"):
        load_recordings(tmp_path, RATE)
    (tmp_path / "index.csv").write_text("file,dose\na.csv,\n")
    with pytest.raises(DataError, match="expected 2 non-empty fields"):
        load_recordings(tmp_path, RATE)


def _write_spec(tmp_path):
    """An accelerometer-only sensors.toml without [window], beside the recordings directory."""
    spec = sensor_spec([ACCEL], [{"channels": ["ax"], "extractors": ["mean", "std"]}],
                       window=None, rate_hz=10)
    return write_sensors_toml(tmp_path.parent / f"{tmp_path.name}.sensors.toml", spec)


TS = """# a comment
@problemName Tiny
@timeStamps false
@classLabel true up down
@data
1,2,3,4:0,0,1,1:up
4,3,2,1:1,1,0,0:down
"""


def test_ts_cases_are_labelled_recordings(tmp_path):
    (tmp_path / "tiny.ts").write_text(TS)
    rset = load_recordings(tmp_path / "tiny.ts", 2.0)
    assert [r.name for r in rset.recordings] == ["tiny.ts:0", "tiny.ts:1"]
    assert rset.classes == {"class": ("up", "down")}
    rec = rset.recordings[1]
    assert list(rec.columns) == ["dim0", "dim1"] and rec.labels == {"class": "down"}
    np.testing.assert_array_equal(rec.time, [0, 0.5, 1.0, 1.5])
    (tmp_path / "bad.ts").write_text(TS.replace(":down", ":left"))
    with pytest.raises(DataError, match="class 'left' is not in @classLabel"):
        load_recordings(tmp_path / "bad.ts", 2.0)


AQ = ("Date;Time;CO(GT);PT08.S1(CO);T;;\r\n"
      "10/03/2004;18.00.00;2,6;1360;13,6;;\r\n"
      "10/03/2004;19.00.00;-200;1292;13,3;;\r\n"
      "10/03/2004;20.00.00;2,2;-200;11,9;;\r\n"
      ";;;;;;\r\n")


def test_air_quality_format(tmp_path):
    (tmp_path / "aq.csv").write_text(AQ)
    rec = load_recordings(tmp_path / "aq.csv", 1 / 3600).recordings[0]
    np.testing.assert_array_equal(rec.time, [0, 3600, 7200])
    np.testing.assert_array_equal(rec.columns["co_gt"], [2.6, np.nan, 2.2])
    np.testing.assert_array_equal(rec.columns["s1_co"], [1360, 1292, np.nan])
    np.testing.assert_array_equal(rec.columns["t"], [13.6, 13.3, 11.9])


@pytest.mark.skipif(not AIR_QUALITY.is_file(), reason="Air Quality CSV not present")
def test_air_quality_real_file_and_example_spec():
    rec = read_air_quality(AIR_QUALITY)
    assert rec.n_samples == 9357 and not time_gaps(rec, 1 / 3600).any()
    assert np.isnan(rec.columns["s1_co"]).sum() == 366
    fs = load_feature_set(AIR_QUALITY, REPO / "examples" / "air_quality.sensors.toml")
    assert fs.target_names == ["co_gt", "c6h6_gt", "nox_gt", "no2_gt"]
    assert fs.X.shape[1] == 61 and np.isfinite(fs.X).all() and np.isfinite(fs.Y).all()
    assert np.all(np.diff(fs.window_start) > 0)       # time order


@pytest.mark.skipif(not BASIC_MOTIONS.is_dir(), reason="BasicMotions not present")
def test_basic_motions_real_files_and_example_spec():
    fs = load_feature_set(BASIC_MOTIONS, REPO / "examples" / "basic_motions.sensors.toml")
    assert fs.X.shape == (80 * 9, 69) and fs.task == "multiclass"
    assert fs.target_names == ["Standing", "Running", "Walking", "Badminton"]
    assert (fs.Y.sum(axis=1) == 1).all() and (fs.Y.sum(axis=0) == 180).all()
    assert "acc_x.mean" in fs.feature_names and "accx_gyrx.corr" in fs.feature_names


# --- NPZ and bundle structure -------------------------------------------------------------------

def test_npz_roundtrip_without_pickle():
    fs = build_feature_set(RecordingSet([stream(12), stream(9, "b.csv")]), make_spec())
    blob = fs.save_npz()
    assert blob == fs.save_npz()                                   # byte-reproducible
    with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
        for key in ("X", "Y", "feature_names", "target_names", "feature_extractors",
                    "feature_sensors", "window", "hop", "sample_rate", "groups"):
            assert key in npz.files
        assert npz["feature_names"].dtype.kind == "U" and npz["window"].shape == ()
        assert str(npz["task"]) == "regression"
    back = FeatureSet.load(blob)
    np.testing.assert_array_equal(back.X, fs.X)
    assert back.feature_sensors == fs.feature_sensors and back.window == 4
    assert back.sensors == fs.sensors
    with pytest.raises(DataError, match="not a sensorbudget-features file"):
        FeatureSet.from_arrays({"X": fs.X})


def test_bundle_structure():
    spec = make_spec()
    fs = build_feature_set(RecordingSet([stream(12)]), spec)
    extractors, sensors, extra = fs.bundle_structure(spec)
    corr = extractors[-1]
    assert corr == {"name": "ax_gx.corr", "features": ["ax_gx.corr"],
                    "sensors": ["accel", "gyro"], "cost": 0.0,
                    "params": {"kind": "corr", "channels": ["ax", "gx"], "window": 4, "hop": 2,
                               "sample_rate_hz": RATE, "fixed_point": False,
                               "arithmetic": "float32-sequential-v1"}}
    assert [s["name"] for s in sensors] == ["accel", "gyro"]
    assert sensors[1]["energy_per_prediction_j"] == pytest.approx(2e-3)   # 2 new readings
    assert extra["window"] == 4 and extra["hop"] == 2 and extra["window_s"] == 0.4
    assert fs.bundle_structure()[1] == sensors                            # stored sensors


def test_unreadable_inputs_are_clear_errors(tmp_path):
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(DataError, match="is not UTF-8 text"):
        load_recordings(tmp_path / "bin.csv", RATE)
    (tmp_path / "bin.csv").write_bytes(b"time,ax\n\xff\xfe,1\n")
    with pytest.raises(DataError, match="not readable text"):
        load_recordings(tmp_path / "bin.csv", RATE)
    (tmp_path / "x.npz").write_bytes(b"nonsense")
    with pytest.raises(DataError, match="is not a readable NPZ"):
        load_recordings(tmp_path / "x.npz", RATE)
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(DataError, match="unknown suffix '.json'"):
        load_recordings(tmp_path / "x.json", RATE)
    with pytest.raises(DataError, match="<bytes> is not a readable feature NPZ"):
        FeatureSet.load(b"nonsense")
    with pytest.raises(DataError, match="do not exist"):
        load_recordings(tmp_path / "nowhere", RATE)


# --- issue 33: links out of a recordings folder, no file content in errors, infinite samples


def _folder_with_link(tmp_path, layout):
    """A recordings folder holding a.csv and b.csv, b.csv a link to a file outside it whose
    first line is a secret; an index.csv lists both (layout "index") or not ("plain")."""
    secret = tmp_path / "secret.csv"
    secret.write_text("s3cr3t:*:19000:0:99999:7:::\n")
    folder = tmp_path / "idx"
    folder.mkdir()
    rec = Recording("a", np.arange(8) / RATE, {"ax": np.arange(8.0), "ay": np.ones(8)})
    write_csv(folder / "a.csv", rec)
    (folder / "b.csv").symlink_to(secret)
    if layout == "index":
        (folder / "index.csv").write_text("file,y\na.csv,1\nb.csv,2\n")
    return folder


@pytest.mark.parametrize("layout", ["index", "plain"])
def test_a_link_out_of_the_folder_is_refused_without_echoing_it(tmp_path, layout):
    folder = _folder_with_link(tmp_path, layout)
    with pytest.raises(DataError, match="b.csv' leads outside") as info:
        load_recordings(folder, RATE)
    assert "s3cr3t" not in str(info.value)


def test_links_inside_the_folder_load_as_their_target(tmp_path):
    folder = _folder_with_link(tmp_path, "plain")
    (folder / "b.csv").unlink()
    (folder / "b.csv").symlink_to(folder / "a.csv")
    (folder / "sub").mkdir()
    (folder / "index.csv").write_text("file,y\na.csv,1\nb.csv,2\n")
    a, b = load_recordings(folder, RATE).recordings
    for name in a.columns:
        np.testing.assert_array_equal(a.columns[name], b.columns[name])


def test_an_index_or_a_folder_linked_out_is_refused(tmp_path):
    folder = _folder_with_link(tmp_path, "plain")
    (folder / "b.csv").unlink()
    (tmp_path / "elsewhere.csv").write_text("file,y\na.csv,1\n")
    (folder / "index.csv").symlink_to(tmp_path / "elsewhere.csv")
    with pytest.raises(DataError, match="index.csv' leads outside"):
        load_recordings(folder, RATE)
    (folder / "index.csv").unlink()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "c.csv").write_text("time,ax\n0,1\n")
    (folder / "sub").symlink_to(tmp_path / "other")
    (folder / "index.csv").write_text("file,y\na.csv,1\nsub/c.csv,2\n")
    with pytest.raises(DataError, match="sub/c.csv' leads outside"):
        load_recordings(folder, RATE)


def test_a_link_loop_is_a_data_error(tmp_path):
    """A RuntimeError ("Symlink loop") traceback before."""
    (tmp_path / "a.csv").symlink_to(tmp_path / "b.csv")
    (tmp_path / "b.csv").symlink_to(tmp_path / "a.csv")
    with pytest.raises(DataError, match="a.csv' cannot be resolved: RuntimeError .a link loop"):
        load_recordings(tmp_path, RATE)


def test_a_header_error_names_the_count_not_the_content(tmp_path):
    (tmp_path / "r.csv").write_text("s3cr3t:*:19000:0:99999:7:::\n1\n")
    with pytest.raises(DataError, match=r"no 'time' column .*among its 1 column\(s\)") as info:
        load_recordings(tmp_path / "r.csv", RATE)
    assert "s3cr3t" not in str(info.value)


@pytest.mark.parametrize("value", ["inf", "-Infinity", "1e999"])
@pytest.mark.parametrize("suffix", [".csv", ".npz"])
def test_infinite_samples_are_refused(tmp_path, value, suffix):
    ax = np.arange(6.0)
    ax[3] = float(value)
    rec = Recording("r", np.arange(6) / RATE, {"ax": ax, "y": np.zeros(6)})
    if suffix == ".csv":
        write_csv(tmp_path / "r.csv", rec)
        text = (tmp_path / "r.csv").read_text().replace(repr(ax[3]), value)
        (tmp_path / "r.csv").write_text(text)
    else:
        np.savez(tmp_path / "r.npz", time=rec.time, **rec.columns)
    with pytest.raises(DataError, match=r"column 'ax' holds -?inf at sample 3 \(t=0.3 s\)"):
        load_recordings(tmp_path / f"r{suffix}", RATE)


@pytest.mark.parametrize("value, message", [
    (1e300, r"channel 'ax' holds 1e\+300 at sample 5 .* beyond the float32 range"),
    (-3.5e38, r"channel 'ax' holds -3.5e\+38 at sample 5"),
    (1e20, r"feature 'ax.energy' of the window at sample 2 is inf"),
])
def test_samples_the_device_cannot_compute_with_are_refused(value, message):
    ax = np.linspace(-1, 1, 12)
    ax[5] = value
    rec = Recording("r", np.arange(12) / RATE, {"ax": ax, "ay": np.ones(12), "y": np.ones(12)})
    spec = make_spec(features=[{"channels": ["ax"], "extractors": ["mean", "energy"]}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no numpy RuntimeWarning on the way
        with pytest.raises(DataError, match=message):
            build_feature_set(RecordingSet([rec]), spec)
    ax[5] = 1e18                   # its square, 1e36, is still a float32: the same features
    fs = build_feature_set(RecordingSet([rec]), spec)
    window = ax[4:8].astype(np.float32)
    assert fs.X[2, 1] == pytest.approx(float(np.sum(window.astype(np.float64) ** 2)), rel=1e-6)
