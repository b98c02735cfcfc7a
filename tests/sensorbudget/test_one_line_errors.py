"""Every bad option value, unknown option and missing argument of every command is one
``Error:`` line on stderr, exit code 2, nothing on stdout and no output written (issue 33,
item 9): no click usage banner above it, no numpy warning before it."""

import warnings

import click
import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget._errors import handle_errors
from sensorbudget.cli import main
from tests.fixtures import write_sensors_toml, write_stream
from sensorbudget.trainer.errors import DataError


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("one_line")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    rows = "\n".join(",".join(f"{v:.6f}" for v in r) for r in np.column_stack([X, X[:, 0]]))
    (d / "t.csv").write_text("a,b,c,y\n" + rows + "\n")
    write_stream(d / "rec.csv")
    write_sensors_toml(d / "sensors.toml")
    result = CliRunner().invoke(main, ["train", str(d / "t.csv"), "--target", "y", "--budget",
                                       "2", "--lam", "1", "-o", str(d / "b")])
    assert result.exit_code == 0, result.output
    return d


# (argv with {d} for the files folder, text the one line must contain)
CASES = [
    ("train {d}/t.csv --target y --budget 1e3 -o {d}/out", "'1e3' is not a valid integer"),
    ("train {d}/t.csv --target y --budget 2 --threshold precision:2 -o {d}/out", "precision:2"),
    ("train {d}/t.csv --target y --budget 2 --plot {d} -o {d}/out", "is a directory"),
    ("train {d}/t.csv --target y --budget 2 --lam-search fast -o {d}/out", "'fast'"),
    ("train {d}/t.csv --target y --budget 2 --dtype float16 -o {d}/out", "'float16'"),
    ("train {d}/t.csv --target y --budget 2 --bogus -o {d}/out", "No such option '--bogus'"),
    ("train --budget 2 -o {d}/out", "Missing argument 'DATA'"),
    ("train {d}/t.csv --target y --budget 2", "Missing option '-o'"),
    ("features {d}/rec.csv --sensors {d}/sensors.toml --window 0 -o {d}/out", "--window"),
    ("features {d}/rec.csv --sensors {d}/nope.toml -o {d}/out", "nope.toml"),
    ("evaluate {d}/t.csv --target y --folds 1 --report {d}/out", "--folds"),
    ("export c-header {d}/b -o {d}/out --numeric q7", "'q7'"),
    ("export onnx {d}/b -o {d}/out --opset x", "'x'"),
    ("export nothing {d}/b", "No such command 'nothing'"),
    ("firmware {d}/b --target pic -o {d}/out", "'pic'"),
    ("simulate {d}/b --recordings {d}/rec.csv --backend qemu-z80 --report {d}/out",
     "qemu-z80"),
    ("predict {d}/b", "Missing argument 'DATA'"),
    ("info {d}/nope", "nope"),
    ("report {d}/b", "Missing option '-o'"),
    ("calibrate {d}/b --sensors {d}/nope.toml", "nope.toml"),
    ("targets --numeric q7", "No such option '--numeric'"),
    ("nosuchcommand", "No such command 'nosuchcommand'"),
]


@pytest.mark.parametrize("argv, needle", CASES, ids=[c[0].split(" {d}")[0] + ":" + c[1]
                                                     for c in CASES])
def test_bad_options_are_one_error_line(files, argv, needle):
    result = CliRunner().invoke(main, argv.format(d=files).split())
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert needle in lines[0]
    assert "Usage:" not in result.stderr and "Traceback" not in result.stderr
    assert not (files / "out").exists()


def test_help_and_version_still_work(files):
    for argv in (["--help"], ["train", "--help"], ["export", "onnx", "--help"], ["--version"]):
        result = CliRunner().invoke(main, argv)
        assert result.exit_code == 0 and result.stderr == "", argv
    assert "Usage:" in CliRunner().invoke(main, ["train", "--help"]).stdout


def _command(fail: bool):
    @click.command()
    @handle_errors
    def command():
        np.log(np.zeros(1))                             # numpy: RuntimeWarning (divide)
        warnings.warn("\x1b[2Jcleared", RuntimeWarning)
        if fail:
            raise DataError("x=3 must be below 2")
        click.echo("done")

    return command


def test_foreign_warnings_never_precede_an_error():
    with np.errstate(divide="warn"):
        failed = CliRunner().invoke(_command(True), [])
        passed = CliRunner().invoke(_command(False), [])
    assert failed.exit_code == 2 and failed.stderr == "Error: x=3 must be below 2\n"
    assert passed.exit_code == 0 and passed.stdout == "done\n"
    assert passed.stderr.splitlines() == [
        "Warning: RuntimeWarning: divide by zero encountered in log",
        "Warning: RuntimeWarning: \\x1b[2Jcleared"]
