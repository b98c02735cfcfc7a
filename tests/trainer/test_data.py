"""Feature-table loaders: CSV, ARFF (dense, sparse, Mulan XML), NPZ, and their errors."""


import numpy as np
import pytest

from tests.paths import REPO, SHARED
from sensorbudget.trainer.data import load_table
from sensorbudget.trainer.errors import DataError


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_csv_targets_by_name_sep_and_decimal_comma(tmp_path):
    p = write(tmp_path, "t.csv", "a;b;y;note;;\n1,5;2;3,25;x;;\n-1;0,5;4;y;;\n;;;;;\n")
    t = load_table(p, sep=";", decimal=",", targets=["y"], ignore=["note"])
    np.testing.assert_array_equal(t.X, [[1.5, 2.0], [-1.0, 0.5]])
    np.testing.assert_array_equal(t.Y, [[3.25], [4.0]])
    assert t.feature_names == ["a", "b"] and t.target_names == ["y"]


def test_missing_values_error_or_drop(tmp_path):
    p = write(tmp_path, "m.csv", "a,b,y\n1,2,3\n4,,6\n7,-200,9\n10,11,12\n")
    with pytest.raises(DataError, match=r"row 2, column 'b'.*--drop-missing"):
        load_table(p, targets=["y"])
    t = load_table(p, targets=["y"], drop_missing=True, na_value=-200)
    assert t.dropped_rows == 2 and t.X.tolist() == [[1, 2], [10, 11]]


@pytest.mark.parametrize("text,kwargs,match", [
    ("a,y\n1,2\nfoo,3\n", {"targets": ["y"]}, r"line 3, column 'a': 'foo' is not a number"),
    ("a,y\n1,2\n3,4\n", {"targets": ["z"]}, r"unknown target 'z'"),
    ("a,y\n1,2\n", {"targets": ["y"]}, r"1 usable row\(s\); at least 2"),
    ("a,y\n", {"targets": ["y"]}, r"no data rows"),
    ("a,y\n1,inf\n3,4\n", {"targets": ["y"]}, r"non-finite value in row 1, column 'y'"),
    ("a,a,y\n1,2,3\n", {"targets": ["y"]}, r"duplicate column name 'a'"),
    ("a,y\n1,2\n3,4\n", {}, r"no targets given"),
])
def test_csv_errors(tmp_path, text, kwargs, match):
    with pytest.raises(DataError, match=match):
        load_table(write(tmp_path, "e.csv", text), **kwargs)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        load_table(tmp_path / "nope.csv", targets=["y"])
    with pytest.raises(DataError, match="is empty"):
        load_table(write(tmp_path, "e.csv", ""), targets=["y"])


ARFF_HEAD = "@relation r\n@attribute f1 numeric\n@attribute f2 numeric\n" \
            "@attribute l1 {0,1}\n@attribute l2 {0,1}\n@data\n"


def test_arff_dense_and_sparse_agree(tmp_path):
    dense = write(tmp_path, "d.arff", ARFF_HEAD + "1.5,0,1,0\n0,2,0,1\n3,1,1,1\n")
    sparse = write(tmp_path, "s.arff", ARFF_HEAD + "{0 1.5,2 1}\n{1 2,3 1}\n{0 3,1 1,2 1,3 1}\n")
    a, b = load_table(dense, labels=2), load_table(sparse, labels=2)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.Y, b.Y)
    assert a.task == "multilabel" and a.target_names == ["l1", "l2"]


def test_mulan_xml_names_labels_and_labels_must_be_binary(tmp_path):
    xml = write(tmp_path, "l.xml", '<?xml version="1.0"?><labels xmlns="http://mulan.sourceforge'
                '.net/labels"><label name="l2"></label><label name="l1"></label></labels>')
    t = load_table(write(tmp_path, "d.arff", ARFF_HEAD + "1,0,1,0\n0,2,0,1\n"), xml=xml)
    assert t.target_names == ["l2", "l1"] and t.feature_names == ["f1", "f2"]
    bad = "@relation r\n@attribute f numeric\n@attribute l numeric\n@data\n1,2\n3,0\n"
    with pytest.raises(DataError, match="label column 'l' holds the value 2.0"):
        load_table(write(tmp_path, "b.arff", bad), labels=1)


def test_arff_nominal_feature_is_an_error(tmp_path):
    text = "@relation r\n@attribute c {red,blue}\n@attribute y numeric\n@data\nred,1\nblue,2\n"
    with pytest.raises(DataError, match="attribute 'c'.*not numeric"):
        load_table(write(tmp_path, "n.arff", text), targets=["y"])


def test_npz_roundtrip_and_pickle_refused(tmp_path):
    X, Y = np.arange(12.0).reshape(4, 3), np.arange(8.0).reshape(4, 2)
    np.savez(tmp_path / "ok.npz", X=X, Y=Y, feature_names=np.array(["a", "b", "c"]),
             target_names=np.array(["u", "v"]))
    t = load_table(tmp_path / "ok.npz", targets=["v"])
    np.testing.assert_array_equal(t.X, X)
    np.testing.assert_array_equal(t.Y, Y[:, [1]])
    np.savez(tmp_path / "obj.npz", X=np.array([object()], dtype=object), Y=Y)
    with pytest.raises(DataError, match="without pickles"):
        load_table(tmp_path / "obj.npz")


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is not available")
def test_real_mulan_sets():
    y = load_table(SHARED / "yeast" / "yeast.arff", labels=14)
    assert y.X.shape == (2417, 103) and y.Y.shape == (2417, 14) and y.task == "multilabel"
    e = load_table(SHARED / "emotions" / "emotions.arff", xml=SHARED / "emotions" / "emotions.xml")
    assert e.X.shape == (593, 72) and e.target_names[0] == "amazed-suprised"


def test_bundled_air_quality_csv():
    t = load_table(REPO / "data" / "air_quality_uci" / "AirQualityUCI.csv", sep=";", decimal=",",
                   targets=["CO(GT)", "C6H6(GT)", "NOx(GT)", "NO2(GT)"],
                   ignore=["Date", "Time", "NMHC(GT)"], na_value=-200, drop_missing=True)
    assert t.X.shape[1] == 8 and t.X.shape[0] + t.dropped_rows == 9357
    assert (t.X != -200).all()


def _slow_missing_counts(X, Y, names):
    """Per column, a plain loop over the rows: cells that are not finite numbers."""
    counts = {}
    for row in np.column_stack([X, Y]):
        if all(np.isfinite(v) for v in row):
            continue
        for name, v in zip(names, row):
            if not np.isfinite(v):
                counts[name] = counts.get(name, 0) + 1
    return counts


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_drop_missing_reports_fraction_and_per_column_counts(tmp_path, seed):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(60, 4))
    values[rng.random(values.shape) < 0.05] = np.nan
    names = ["a", "b", "c", "y"]
    lines = [",".join(names)] + [",".join("" if np.isnan(v) else f"{v:.5f}" for v in row)
                                 for row in values]
    p = write(tmp_path, "m.csv", "\n".join(lines) + "\n")
    t = load_table(p, targets=["y"], drop_missing=1.0)
    expected = _slow_missing_counts(values[:, :3], values[:, 3:], names)
    bad = int(np.isnan(values).any(axis=1).sum())
    assert t.missing.per_column == expected and t.missing.dropped == bad == t.dropped_rows
    assert t.missing.rows == 60 and t.missing.fraction == bad / 60
    assert f"dropped {bad} of 60 rows ({100 * bad / 60:.1f} %)" in t.missing.describe()


def test_drop_missing_refuses_above_the_fraction_unless_raised(tmp_path):
    # 3 of 4 rows miss 'b': default limit 0.5 refuses, naming counts, fraction and the option
    p = write(tmp_path, "m.csv", "a,b,y\n1,,3\n4,,6\n7,,9\n10,11,12\n")
    with pytest.raises(DataError, match=r"would drop 3 of 4 rows \(75.0 %\), more than the "
                                        r"largest fraction 0.5 \(--max-drop-fraction\); "
                                        r"missing per column: b 3"):
        load_table(p, targets=["y"], drop_missing=True)
    with pytest.raises(DataError, match="more than the largest fraction 0.7"):
        load_table(p, targets=["y"], drop_missing=0.7)
    with pytest.raises(DataError, match="1 usable row"):         # allowed, then too few rows
        load_table(p, targets=["y"], drop_missing=0.75)
    p2 = write(tmp_path, "m2.csv", "a,b,y\n1,,3\n4,5,6\n7,8,9\n10,11,12\n")
    t = load_table(p2, targets=["y"], drop_missing=True)       # 25 % is below the default
    assert t.X.tolist() == [[4, 5], [7, 8], [10, 11]] and t.missing.per_column == {"b": 1}
