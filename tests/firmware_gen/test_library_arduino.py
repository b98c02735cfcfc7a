"""The C library as an Arduino library: Debian's arduino-builder (arduino-core-avr) compiles it
with its example sketch for the Uno (arduino:avr:uno), and the .elf runs in simavr with
USART0 bridged to a pipe: recordings sent as text lines must come back as the reference's
predictions (float32: the printed 6 decimals; Q15: the exact integer scores)."""

import os
import select
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from sensorbudget.firmware_gen.library import generate_library
from sensorbudget.firmware_gen.library_arduino import SCORE_DIGITS, parse_like_the_example
from tests.firmware_gen.conftest import bm_full_scale
from tests.firmware_gen.library_helpers import expected, need, replay_values, write_tree

HARDWARE = (Path("/usr/share/arduino/hardware"), Path("/usr/share/arduino-builder"))


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    need("gcc")
    from sensorbudget.firmware_gen.build import build_simavr_harness
    from sensorbudget.firmware_gen.errors import FirmwareGenError

    try:
        return build_simavr_harness(tmp_path_factory.mktemp("simavr"))
    except FirmwareGenError as exc:
        pytest.skip(str(exc))


def build_sketch(lib, root: Path) -> Path:
    """Install the library as ``libraries/<Name>`` and compile its example for the Uno."""
    need("arduino-builder", "avr-gcc")
    if not (HARDWARE[0] / "arduino" / "avr" / "boards.txt").is_file():
        pytest.skip("arduino-core-avr is not installed (make deps-embedded)")
    Name = lib.manifest["arduino_name"]
    folder = write_tree(lib.files, root / "libraries" / Name)
    build = root / "build"
    build.mkdir()
    argv = ["arduino-builder", "-hardware", str(HARDWARE[0]), "-hardware", str(HARDWARE[1]),
            "-tools", "/usr/bin", "-libraries", str(root / "libraries"),
            "-fqbn", "arduino:avr:uno", "-prefs=compiler.cpp.extra_flags=-DDECIMAL_DIG=17",
            "-build-path", str(build), str(folder / "examples" / Name / f"{Name}.ino")]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # the library's C files were compiled from its src/ (1.5 format)
    compiled = {o.name for o in (build / "libraries" / Name).rglob("*.o")}
    assert {f"{lib.name}.c.o", f"{lib.name}_model_stream.c.o"} <= compiled, compiled
    return build / f"{Name}.ino.elf"


class Uno:
    """The sketch in simavr: write text lines, read printed lines (with a deadline)."""

    def __init__(self, harness: Path, elf: Path):
        self.proc = subprocess.Popen([str(harness), str(elf)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.buffer = b""

    def send(self, text: str) -> None:
        self.proc.stdin.write(text.encode("ascii"))
        self.proc.stdin.flush()

    def line(self, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, f"no line from the sketch within {timeout} s ({self.buffer!r})"
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 4096)
                assert chunk, f"the simulation ended ({self.buffer!r})"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode("ascii").rstrip("\r")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


def text_of(x: float) -> str:
    return np.format_float_positional(x, trim="-")


def replay_on_the_uno(uno, plan, values) -> tuple:
    """Send each sample as a text line; when one completes a window, read the prediction."""
    windows, printed = [], []
    for i, row in enumerate(values):
        uno.send(",".join(text_of(v) for v in row) + "\n")
        n = i + 1
        if n >= plan.window and (n - plan.window) % plan.hop == 0:
            index, *scores = uno.line().split(",")
            windows.append(int(index))
            printed.append([float(s) for s in scores])
    return windows, np.array(printed)


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_arduino_library_on_simavr(harness, kinds_bundle, bm_recordings, tmp_path, numeric):
    fs = bm_full_scale(bm_recordings) if numeric != "float32" else None
    lib = generate_library(kinds_bundle, numeric=numeric, full_scale=fs)
    plan = lib.plan
    elf = build_sketch(lib, tmp_path)
    columns = bm_recordings.recordings[12].columns
    texts = np.column_stack([np.asarray(columns[c], dtype=np.float64)
                             for c in plan.channels])
    device = np.vectorize(lambda x: parse_like_the_example(text_of(x)))(texts).astype(np.float32)
    # a value whose digits make an integer below 2^24 is read as the float32 nearest to the text
    digits = np.vectorize(lambda x: abs(int(text_of(x).replace(".", ""))))(texts)
    exact = digits < 2 ** 24
    assert exact.mean() > 0.9
    assert np.array_equal(device[exact], replay_values(plan, columns)[exact])
    _, _, ref = expected(plan, kinds_bundle, device)
    uno = Uno(harness, elf)
    try:
        hello = uno.line()
        assert hello.startswith(f"# {lib.name}: send {plan.channels[0]},")
        uno.send("# a comment\n1,2\n")
        assert uno.line() == f"# error: not a line of {len(plan.channels)} numbers"
        windows, printed = replay_on_the_uno(uno, plan, device)
    finally:
        uno.close()
    assert windows == list(range(len(ref))) and len(ref) == 9
    if plan.fixed:
        step = 2.0 ** -lib.header.fixed.score_frac_bits
        real = np.asarray(ref, dtype=np.float64) * step
    else:
        real = np.asarray(ref, dtype=np.float64)
    # Arduino prints a float with SCORE_DIGITS decimals computed in float32
    tol = 0.5 * 10.0 ** -SCORE_DIGITS + 8 * np.spacing(np.abs(real).astype(np.float32))
    assert np.all(np.abs(printed - real) <= tol), np.abs(printed - real).max()
    if plan.fixed:
        assert tol.max() < step / 2            # so the printed values give back the integers
        assert np.array_equal(np.round(printed / step).astype(np.int64), ref)


def test_example_parser_mirror():
    assert parse_like_the_example("-0.740653") == np.float32(-0.740653)
    assert parse_like_the_example("12") == np.float32(12)
    assert parse_like_the_example("+0.5") == np.float32(0.5)
