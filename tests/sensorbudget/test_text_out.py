"""Names printed to a terminal and written into CSV cells (issue 33, item 6): control characters
escaped in ``train``/``info``/``predict`` output, formulas neutralised in the predictions CSV."""

import csv
import io
import random
import unicodedata

import numpy as np
import pytest

from sensorbudget.text_out import FORMULA_START, PrintableStream, csv_cell, printable
from sensorbudget.trainer.bundle.model import load_bundle

BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))
TITLE = "\x1b]0;owned-title\x07b"
FORMULA = '=HYPERLINK("http://x","y")'


def test_printable_escapes_exactly_the_control_characters():
    for code in range(0x3000):
        ch = chr(code)
        control = (unicodedata.category(ch) == "Cc" and ch not in "\n\t") or code in BIDI
        assert (printable(ch) != ch) == control, hex(code)
        if control:         # the escape reads back as the character (Python's own decoder)
            assert printable(ch).encode().decode("unicode_escape") == ch
    assert printable("a\nb", keep_newlines=False) == "a\\x0ab"


def _is_number(text):
    """Python's float() is the reference, without its tolerance of surrounding blanks."""
    if text != text.strip():
        return False
    try:
        float(text)
        return True
    except ValueError:
        return False


@pytest.mark.parametrize("seed", range(3))
def test_csv_cell_quotes_formulas_but_not_numbers(seed):
    rng = random.Random(seed)
    for _ in range(3000):
        text = "".join(rng.choice("=+-@019.eEinfa\t") for _ in range(rng.randint(1, 6)))
        quoted = text.startswith(FORMULA_START) and not _is_number(text)
        assert csv_cell(text) == ("'" + text if quoted else text), text


@pytest.fixture
def hostile_bundle(tmp_path, invoke):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=40)
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["a", TITLE, "-c", FORMULA])
    writer.writerows(np.column_stack([X, y]).tolist())
    (tmp_path / "t.csv").write_text(buf.getvalue())
    result = invoke(["train", str(tmp_path / "t.csv"), "--target", FORMULA, "--budget", "3",
                     "--lam", "1", "-o", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    return tmp_path, result, X


def test_train_and_info_escape_control_characters(hostile_bundle, invoke):
    tmp_path, trained, _ = hostile_bundle
    info = invoke(["info", str(tmp_path / "b")])
    assert info.exit_code == 0, info.output
    for output in (trained.output, info.output):
        assert "\x1b" not in output and "\x07" not in output
        assert "\\x1b]0;owned-title\\x07b" in output
    assert TITLE in load_bundle(tmp_path / "b").meta["features"]      # the name is kept


def test_predict_csv_neutralises_formulas_and_matches_the_bundle(hostile_bundle, invoke):
    tmp_path, _, X = hostile_bundle
    out = tmp_path / "p.csv"
    result = invoke(["predict", str(tmp_path / "b"), str(tmp_path / "t.csv"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(out.read_text().splitlines()))
    assert rows[0][-1] == "'" + FORMULA
    assert not any(cell.startswith(("=", "@")) for row in rows for cell in row)
    bundle = load_bundle(tmp_path / "b")
    got = np.array([float(r[-1]) for r in rows[1:]])
    np.testing.assert_array_equal(got, bundle.predict(X).ravel())


def test_evaluate_and_predict_metrics_escape_names(tmp_path, invoke):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 2))
    name = "\x1b[2Jy\u202e"
    rows = "\n".join(",".join(f"{v:.6f}" for v in r) for r in np.column_stack([X, X[:, 0]]))
    (tmp_path / "t.csv").write_text(f'a,b,"{name}"\n{rows}\n')
    evaluated = invoke(["evaluate", str(tmp_path / "t.csv"), "--target", name, "--budgets", "1",
                        "--folds", "2", "--methods", "greedy-joint"])
    trained = invoke(["train", str(tmp_path / "t.csv"), "--target", name, "--budget", "1",
                      "--lam", "1", "-o", str(tmp_path / "b")])
    predicted = invoke(["predict", str(tmp_path / "b"), str(tmp_path / "t.csv"),
                        "-o", str(tmp_path / "p.csv")])
    for result in (evaluated, trained, predicted):
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\u202e" not in result.output
    assert "\\x1b[2Jy\\u202e" in predicted.output          # the metrics name the target
    assert "\\x1b[2Jy\\u202e" in (tmp_path / "p.csv").read_text()


def test_every_printed_line_escapes_a_path_with_control_characters(tmp_path):
    """Paths are names too (a folder named by a script from untrusted names): the console
    script's standard output escapes them whichever command prints them (``wrote PATH``,
    upgrade's, export's and firmware's lines printed them raw)."""
    import subprocess
    import sys
    from pathlib import Path

    from tests.fixtures import write_sensors_toml, write_stream

    write_stream(tmp_path / "rec" / "s.csv")
    write_sensors_toml(tmp_path / "sensors.toml")
    script = str(Path(sys.executable).with_name("sensorbudget"))
    bundle = "B" + TITLE
    runs = [["train", "rec", "--sensors", "sensors.toml", "--budget", "2", "--lam", "1", "-o",
             bundle], ["upgrade", bundle], ["export", "c-header", bundle, "-o", TITLE + ".h"],
            ["features", "rec", "--sensors", "sensors.toml", "-o", TITLE + ".npz"]]
    for argv in runs:
        result = subprocess.run([script, *argv], capture_output=True, text=True, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert "\x1b" not in result.stdout and "\x07" not in result.stdout
        assert printable(TITLE) in result.stdout, argv


def test_the_printable_stream_is_a_text_stream():
    import click

    raw = io.StringIO()
    stream = PrintableStream(raw)
    click.echo(f"wrote {TITLE}\tnext", file=stream)
    assert raw.getvalue() == f"wrote {printable(TITLE)}\tnext\n"
    with pytest.raises(TypeError):
        stream.write(b"bytes")
    assert stream.getvalue() == raw.getvalue()          # the rest is the wrapped stream's
