"""Streams as they come: other time columns and units, ISO 8601, header-less blank-separated
files (Daphnet), and one long stream cut into recordings at gaps or by a column."""

import numpy as np
import pytest

from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.sensing.recordings import load_recordings
from sensorbudget.trainer.sensing.streams import StreamFormat, parse_times

RATE = 20.0


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_iso_8601_time_stamps(tmp_path):
    path = write(tmp_path, "s.csv", "ts,ax\n2024-05-01T12:00:00Z,1\n2024-05-01T12:00:00.05Z,2\n"
                                    "2024-05-01T12:00:00.1Z,3\n2024-05-01T13:00:00.1+01:00,4\n")
    rec = load_recordings(path, RATE, StreamFormat(time_column="ts", time_unit="iso"))
    (only,) = rec.recordings
    np.testing.assert_allclose(only.time, [0.0, 0.05, 0.1, 0.1], atol=1e-12)
    np.testing.assert_array_equal(only.columns["ax"], [1, 2, 3, 4])
    assert "ts" not in only.columns


@pytest.mark.parametrize("unit, stamps, seconds", [
    ("ms", ["1700000000000", "1700000000050", "1700000000100"], [0.0, 0.05, 0.1]),
    ("us", ["1700000000000000", "1700000000050000"], [0.0, 0.05]),
    ("ns", ["1700000000000000000", "1700000000000000001"], [0.0, 1e-9]),
    ("s", ["12.5", "12.55"], [12.5, 12.55]),
])
def test_epoch_units_keep_their_precision(unit, stamps, seconds):
    got = parse_times(stamps, unit, "x") if unit != "s" else np.array(stamps, dtype=float)
    np.testing.assert_array_equal(got, seconds)


def test_a_header_less_blank_separated_file_as_daphnet_writes_it(tmp_path):
    rows = [f"{15 * i} {100 + i} {-3 * i} {i % 2}" for i in range(6)]       # time in ms
    path = write(tmp_path, "S01R01.txt", "\n".join(rows) + "\n")
    fmt = StreamFormat(time_unit="ms", columns=("time", "ankle_x", "ankle_y", "annotation"))
    (rec,) = load_recordings(path, 1000 / 15, fmt).recordings
    np.testing.assert_allclose(rec.time, np.arange(6) * 0.015)
    np.testing.assert_array_equal(rec.columns["ankle_x"], 100 + np.arange(6))
    assert load_recordings(tmp_path, 1000 / 15, fmt).recordings[0].n_samples == 6   # a folder


def test_split_at_gaps(tmp_path):
    times = [0, 0.05, 0.1, 10, 10.05, 10.1, 10.15]
    path = write(tmp_path, "s.csv", "time,ax\n" + "".join(f"{t},{i}\n" for i, t in
                                                          enumerate(times)))
    recs = load_recordings(path, RATE, StreamFormat(split_gaps=1.0)).recordings
    assert [r.name for r in recs] == ["s.csv#0", "s.csv#1"]
    assert [r.n_samples for r in recs] == [3, 4]
    np.testing.assert_array_equal(recs[1].columns["ax"], [3, 4, 5, 6])
    assert len(load_recordings(path, RATE).recordings) == 1            # not cut by default


def test_split_by_a_recording_column(tmp_path):
    subjects = [1, 1, 1, 2, 2, 1]
    path = write(tmp_path, "s.csv", "time,subject,ax\n" + "".join(
        f"{i * 0.05},{s},{i}\n" for i, s in enumerate(subjects)))
    recs = load_recordings(path, RATE, StreamFormat(recording_column="subject")).recordings
    assert [r.n_samples for r in recs] == [3, 2, 1]
    assert [r.labels["subject"] for r in recs] == [1.0, 2.0, 1.0]
    assert all(set(r.columns) == {"ax"} for r in recs)


@pytest.mark.parametrize("fmt, text, message", [
    (dict(time_unit="hours"), "time,ax\n0,1\n", "time unit 'hours' is not one of"),
    (dict(time_column="ts"), "time,ax\n0,1\n", "no 'ts' column .--time-column names another"),
    (dict(time_column="ts", time_unit="iso"), "ts,ax\nyesterday,1\n",
     "'yesterday' is not an ISO 8601 time stamp"),
    (dict(time_column="ts", time_unit="iso"), "ts,ax\n2024-01-01T00:00:00Z,1\n"
                                              "2024-01-01T00:00:01,2\n", "mix ones with and"),
    (dict(time_unit="ms"), "time,ax\n12:00,1\n", "is not a number .an ISO 8601"),
    (dict(recording_column="subject"), "time,ax\n0,1\n", "no 'subject' column"),
    (dict(split_gaps=0.0), "time,ax\n0,1\n", "split gap 0.0 s must be a number > 0"),
    (dict(columns=("time", "time")), "0 1\n", "names 'time' twice"),
])
def test_format_errors_name_the_value(tmp_path, fmt, text, message):
    path = write(tmp_path, "s.csv", text)
    with pytest.raises(DataError, match=message):
        load_recordings(path, RATE, StreamFormat(**fmt))
