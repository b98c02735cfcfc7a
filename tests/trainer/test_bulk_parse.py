"""Bulk parsing gives exactly what the general decoders give: the same values or the same error."""

import numpy as np
import pytest

from sensorbudget.trainer import bulk_parse
from sensorbudget.trainer.data import load_table
from sensorbudget.trainer.errors import DataError

HEAD = "@relation r\n@attribute a numeric\n@attribute b INTEGER\n@attribute y {0,1}\n@data\n"
LABELS_LAST = ("@relation r\n@attribute a numeric\n" + "".join(
    f"@attribute {name} {{0,1}}\n" for name in ("y0", "y1", "y")) + "@data\n")
LABELS_FIRST = ("@relation r\n@attribute y {0,1}\n@attribute y1 {0,1}\n"
                "@attribute a numeric\n@data\n")
LABELS_MIXED = ("@relation r\n@attribute y0 {0,1}\n@attribute b {2,3}\n@attribute c numeric\n"
                "@attribute y {7,8}\n@data\n")
ARFF = {
    "dense": HEAD + "1.5,2.7,1\n% a comment\n\n-3e2,4,0\n",
    "dense-spaces": HEAD + " 1.5 , 2,1\n3,4,0\n",
    "dense-missing": HEAD + "1.5,?,1\n3,4,0\n",
    "dense-quoted": HEAD + "'1.5',2,1\n3,4,0\n",
    "dense-bad-nominal": HEAD + "1.5,2,1.0\n3,4,0\n",
    "dense-nominal-2": HEAD + "1.5,2,2\n3,4,0\n",
    "dense-ragged": HEAD + "1.5,2\n3,4,0\n",
    "dense-text": HEAD + "abc,2,1\n3,4,0\n",
    "sparse": HEAD + "{0 1.5,2 1}\n{1 4}\n{}\n{0 2,2 0}\n",
    "sparse-bad-nominal": HEAD + "{0 1.5,2 7}\n{1 4,2 0}\n",
    "sparse-out-of-range": HEAD + "{0 1.5,9 1}\n{1 4,2 0}\n",
    "sparse-first-one": HEAD.replace("{0,1}", "{1,0}") + "{0 1.5}\n{1 4,2 0}\n",
    "mixed": HEAD + "{0 1.5,2 1}\n3,4,0\n",
    "sparse-spaces": HEAD + "{ 0  1.5 , 2 1 }\n{1 4.7,2 0}\n",
    "sparse-unsorted": HEAD + "{2 1,0 1.5}\n{1 4,2 0}\n",
    "sparse-duplicate": HEAD + "{0 1,0 2,2 1}\n{1 4,2 0}\n",
    "sparse-bad-key": HEAD + "{0 1,x 2,2 1}\n{1 4,2 0}\n",
    "sparse-three-tokens": HEAD + "{0 1 2,2}\n{1 4,2 0}\n",
    "sparse-missing": HEAD + "{0 ?,2 1}\n{1 4,2 0}\n",
    "sparse-nominal-spelling": HEAD + "{0 1,2 1.0}\n{1 4,2 0}\n",
    # several nominal columns: one declaration at the end or the start (Mulan labels: one
    # split per row), different declarations or columns in the middle (column by column)
    "labels-last": LABELS_LAST + "1.5,1,0,1\n3,0,0,1\n",
    "labels-last-spelling": LABELS_LAST + "1.5,1,0,1\n3,0,+0,1\n",
    "labels-last-other-value": LABELS_LAST + "1.5,1,0,1\n3,0,2,1\n",
    "labels-first": LABELS_FIRST + "1,0,2.5\n0,1,-1\n",
    "labels-first-spelling": LABELS_FIRST + "1,0,2.5\n0,01,-1\n",
    "labels-mixed": LABELS_MIXED + "1,2,0,7\n0,3,1,8\n",
    "labels-mixed-bad": LABELS_MIXED + "1,2,0,7\n0,3,1,08\n",
}
CSV = {
    "plain": "a,b,y\n1,2,3\n\n4.5,nan,6\n",
    "semicolon": "a;b;y\n1;2;3\n4;5;6\n",
    "short-row": "a,b,y\n1,2\n4,5,6\n",
    "long-row": "a,b,y\n1,2,3,9\n4,5,6\n",
    "empty-cell": "a,b,y\n1,,3\n4,5,6\n",
    "na-token": "a,b,y\n1,NA,3\n4,5,6\n",
    "quoted": 'a,b,y\n"1",2,3\n4,5,6\n',
    "text": "a,b,y\n1,x,3\n4,5,6\n",
    "blank-cells-row": "a,b,y\n1,2,3\n , ,\n4,5,6\n",
    "empty-header": "a,,y\n1,2,3\n4,5,6\n",
}


def load_both(path, monkeypatch, **options):
    """(bulk result, general result): a Table or the DataError message."""
    out = []
    for bulk in (True, False):
        with monkeypatch.context() as m:
            if not bulk:
                m.setattr(bulk_parse, "arff_values", lambda *a, **k: None)
                m.setattr(bulk_parse, "csv_values", lambda *a, **k: None)
            try:
                out.append(load_table(path, **options))
            except DataError as exc:
                out.append(str(exc))
    return out


def assert_same(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, str):
        assert a == b
        return
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.Y, b.Y)
    assert (a.feature_names, a.target_names, a.task) == (b.feature_names, b.target_names, b.task)


@pytest.mark.parametrize("name", sorted(ARFF))
@pytest.mark.parametrize("drop", [False, True])
def test_arff_bulk_equals_general_decoder(tmp_path, monkeypatch, name, drop):
    path = tmp_path / f"{name}.arff"
    path.write_text(ARFF[name])
    assert_same(*load_both(path, monkeypatch, targets=["y"], drop_missing=drop))


@pytest.mark.parametrize("name", sorted(CSV))
def test_csv_bulk_equals_general_reader(tmp_path, monkeypatch, name):
    path = tmp_path / f"{name}.csv"
    path.write_text(CSV[name])
    sep = ";" if name == "semicolon" else ","
    assert_same(*load_both(path, monkeypatch, targets=["y"], sep=sep, drop_missing=True))


def test_bulk_paths_are_taken_for_plain_files(tmp_path):
    path = tmp_path / "s.arff"
    path.write_text(ARFF["sparse"])
    attrs, take = bulk_parse.arff_values(path.read_text())
    np.testing.assert_array_equal(take([0, 1, 2]), [[1.5, 0, 1], [0, 4, 0], [0, 0, 0],
                                                    [2, 0, 0]])
    attrs, take = bulk_parse.arff_values(ARFF["dense"])
    np.testing.assert_array_equal(take([1, 0]), [[2, 1.5], [4, -300]])   # INTEGER truncates
    assert bulk_parse.arff_values(ARFF["dense-missing"]) is None
    np.testing.assert_array_equal(
        bulk_parse.csv_values(["1,2,3", "4,5,6"], ",", ".", 3, [2, 0]), [[3, 1], [6, 4]])
    assert bulk_parse.csv_values(["1,2,3"], ",", ",", 3, [0]) is None
