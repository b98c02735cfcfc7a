"""What every Python fuzz target shares: the accepted errors, input helpers and the runner.

A target module defines ``test_one_input(data: bytes)`` and ``seeds()`` and its ``main()`` calls
``run(test_one_input, seeds())``. The contract it checks: for *any* input the code under test
returns normally or raises one of the project's own errors (:func:`expected_errors`); any other
exception, a failed postcondition (``assert``), a hang (``-timeout``) or a memory blow-up
(``-rss_limit_mb``) is a finding.

When atheris is not installed, :func:`run` falls back to a seeded random mutation loop over the
seed corpus (no coverage feedback; see README.md), so ``make fuzz-smoke`` still exercises every
target.
"""

from __future__ import annotations

import contextlib
import operator
import os
import random
import struct
import sys
import tempfile
import time
import warnings
from pathlib import Path

try:
    import atheris
except ImportError:      # pragma: no cover - exercised only without atheris
    atheris = None
if os.environ.get("FUZZ_NO_ATHERIS") == "1":     # force the fallback (to test it)
    atheris = None

#: Packages whose code atheris instruments for coverage feedback.
PACKAGES = ["sensorbudget"]      # trainer, export, firmware_gen, device_sim live under it


#: Findings in files outside fuzz/'s ownership, reported with a patch (README.md, "Open
#: findings") and tolerated by the named call so fuzzing can go on. Delete an entry when its fix
#: has landed, so the fuzzer checks it again.
OPEN_FINDINGS = {
    # All findings so far are fixed (FeatureSet.load wraps damaged members in DataError;
    # load_sensor_spec reports non-UTF-8 files; window/hop are bounded by MAX_WINDOW). A new
    # open finding is listed here as {call name: (exception types,)} until its fix lands.
}


def expected_errors() -> tuple:
    """The project's own error types: the only exceptions a target may let through."""
    from sensorbudget.device_sim.errors import DeviceError
    from sensorbudget.export.errors import ExportError
    from sensorbudget.firmware_gen.errors import FirmwareGenError
    from sensorbudget.trainer.errors import TrainerError

    return (TrainerError, ExportError, FirmwareGenError, DeviceError)


def instrumented():
    """Context manager for the target's imports: atheris coverage on our packages only."""
    if atheris is None:
        return contextlib.nullcontext()
    return atheris.instrument_imports(include=PACKAGES)


class Input:
    """Structured reading of fuzz bytes, front to back (simple, so seeds are easy to write).

    ``int(lo, hi)`` takes as many bytes as the range needs (little-endian, modulo the range);
    missing bytes read as zero, so every input is valid.
    """

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def int(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]."""
        span = hi - lo + 1
        width = max(1, ((span - 1).bit_length() + 7) // 8)
        raw = self.bytes(width)
        return lo + int.from_bytes(raw.ljust(width, b"\0"), "little") % span

    def bytes(self, n: int) -> bytes:
        out = self.data[self.pos:self.pos + n]
        self.pos += len(out)
        return out

    def rest(self) -> bytes:
        return self.bytes(len(self.data))

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def text(self, n: int) -> str:
        return self.bytes(n).decode("utf-8", errors="replace")

    def pick(self, options):
        options = list(options)
        return options[self.int(0, len(options) - 1)]

    def float(self) -> float:
        if self.int(0, 1):
            return self.pick([0.0, -0.0, -1.0, 1e-300, 1e300, float("nan"), float("inf"),
                              -float("inf"), 0.5, 3.5, -200.0, 1e-9, 2.0 ** 31])
        return struct.unpack("<d", self.bytes(8).ljust(8, b"\0"))[0]

    def value(self, depth: int = 0):
        """A JSON/TOML-like value of any type (for structured mutations)."""
        kind = self.int(0, 9 if depth < 2 else 6)
        if kind == 0:
            return None
        if kind == 1:
            return bool(self.int(0, 1))
        if kind == 2:
            return self.pick([0, 1, -1, 2, 3, 7, 255, 65535, 65536, 2 ** 31, -2 ** 63, 10 ** 30])
        if kind == 3:
            return self.int(-2 ** 40, 2 ** 40)
        if kind == 4:
            return self.float()
        if kind == 5:
            return self.pick(["", "a", "x", "mean", "acc", "../../etc/passwd", "/tmp/x",
                              "t", "time", "regression", "multiclass", "a b", "int", "é"])
        if kind == 6:
            return self.text(self.int(0, 16))
        if kind == 7:
            return [self.value(depth + 1) for _ in range(self.int(0, 4))]
        if kind == 8:
            return {self.pick(["name", "channels", "kind", "cost", "window", "x"]):
                    self.value(depth + 1) for _ in range(self.int(0, 3))}
        return [self.value(depth + 1) for _ in range(self.int(0, 40))]


def mutate_tree(tree, inp: Input, value=None):
    """Replace (or delete) one node of a nested dict/list, chosen by the input; in place."""
    node = tree
    for _ in range(inp.int(0, 4)):
        children = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        children = [(k, v) for k, v in children if isinstance(v, (dict, list)) and v]
        if not children or inp.int(0, 2) == 0:
            break
        node = inp.pick(children)[1]
    keys = list(node) if isinstance(node, dict) else list(range(len(node)))
    if not keys:
        return tree
    key = inp.pick(keys)
    action = inp.int(0, 7)
    if action == 0:
        del node[key]
    else:
        node[key] = inp.value() if value is None else value
    return tree


@contextlib.contextmanager
def scratch_dir():
    """A per-process scratch directory (in /dev/shm when available: fast, no disk wear)."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None   # nosec B108: mkdtemp, 0700
    with tempfile.TemporaryDirectory(prefix="sbfuzz-", dir=base) as d:
        yield Path(d)


def reraise_unexpected(func, *args, **kwargs):
    """Call ``func``; swallow the project's own errors, let anything else escape."""
    try:
        return func(*args, **kwargs)
    except expected_errors():
        return None


def _fallback(test_one_input, argv):
    """Random mutation loop over the seed corpus (no atheris): the documented fallback."""
    seconds = 10.0
    corpora = []
    for arg in argv[1:]:
        if arg.startswith("-max_total_time="):
            seconds = float(arg.split("=", 1)[1])
        elif not arg.startswith("-"):
            corpora.append(Path(arg))
    seeds = [p.read_bytes() for d in corpora if d.is_dir() for p in sorted(d.iterdir())
             if p.is_file()] or [b""]
    rng = random.Random(0)
    end, runs = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 8)):
            op = rng.randint(0, 3)
            pos = rng.randint(0, len(data))
            if op == 0 and data:
                data[min(pos, len(data) - 1)] ^= 1 << rng.randint(0, 7)
            elif op == 1:
                data[pos:pos] = bytes(rng.randint(0, 255) for _ in range(rng.randint(1, 8)))
            elif op == 2:
                del data[pos:pos + rng.randint(1, 16)]
            else:
                other = rng.choice(seeds)
                data[pos:] = other[rng.randint(0, len(other)):]
        test_one_input(bytes(data))
        runs += 1
    print(f"Done {runs} runs in {seconds:g} second(s) (fallback fuzzer: no atheris)")


def write_seeds(directory, seeds) -> None:
    """Add ``seeds`` (bytes) to a corpus directory, named by their SHA-1."""
    import hashlib

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        (directory / hashlib.sha1(seed, usedforsecurity=False).hexdigest()).write_bytes(seed)


_CMP_OPS = (operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge)
_TRACED = (int, str, bytes)


def _cmp_op_shift() -> int:
    try:
        from atheris.version_dependent import CMP_OP_SHIFT_AMOUNT
    except ImportError:
        return -1
    return CMP_OP_SHIFT_AMOUNT


def _without_leaky_compares(test_one_input):
    """Wrap ``test_one_input`` so atheris traces only int/str/bytes comparisons.

    atheris 3.0.0's native ``_trace_cmp`` (called by instrumented code for every ``<``, ``==``,
    ...) keeps a reference to the comparison's result: every numpy array comparison in the
    instrumented packages leaks the result array (the RSS of ``py_sensors`` grew by 1.5 GB in
    8 minutes; a 100 000-element comparison leaks 100 kB per call). Other operands are compared
    here without tracing. ``atheris.Setup``/``Fuzz`` rebind ``atheris._trace_cmp``, so the
    filter is (re)installed at the first call. Only where COMPARE_OP's argument is the plain
    operator index (Python <= 3.11); elsewhere atheris is left alone.
    """
    if atheris is None or _cmp_op_shift() != 0:
        return test_one_input
    state = {"native": None}

    def trace_cmp(a, b, op, counter, is_const):
        if type(a) in _TRACED and type(b) in _TRACED:
            return state["native"](a, b, op, counter, is_const)
        return _CMP_OPS[op](a, b)

    def guarded(data):
        if atheris._trace_cmp is not trace_cmp:
            state["native"] = atheris._trace_cmp
            atheris._trace_cmp = trace_cmp
        return test_one_input(data)

    return guarded


def run(test_one_input, seeds=(), argv=None):
    """Fuzz ``test_one_input`` with atheris (libFuzzer flags and corpus dirs in ``argv``);
    ``seeds`` are added to the first corpus directory."""
    argv = list(sys.argv if argv is None else argv)
    corpora = [a for a in argv[1:] if not a.startswith("-")]
    if corpora and seeds:
        write_seeds(corpora[0], seeds)
    warnings.simplefilter("ignore")     # numpy overflow warnings on fuzzed values are expected
    if atheris is None:
        _fallback(test_one_input, argv)
        return
    atheris.Setup(argv, _without_leaky_compares(test_one_input))
    atheris.Fuzz()


# --- NPZ building (shared by the table, recording and bundle targets) -------------------------

NPZ_NAMES = ["X", "Y", "feature_names", "target_names", "task", "time", "a", "b", "g", "W",
             "format", "format_version", "window", "hop", "groups", "x_mean"]
NPZ_DTYPES = ["<f8", "<f4", "<i8", "<i2", "|b1", "<U5", "|S3", "<c16", "|O", "<M8[s]", "|V4",
              "<f2", ">f8", "<u2", "<i4"]


def npy_member(inp: Input) -> bytes:
    """One ``.npy`` member: a consistent array, or a hand-written header that may lie."""
    import io

    import numpy as np

    dtype = np.dtype(inp.pick(NPZ_DTYPES))
    ndim = inp.int(0, 3)
    if inp.int(0, 3) == 0:      # a raw header: any shape, any trailing bytes
        shape = tuple(inp.pick([0, 1, 2, 3, 7, 255, 2 ** 20, 2 ** 31, 2 ** 40])
                      for _ in range(ndim))
        header = {"descr": np.lib.format.dtype_to_descr(dtype),
                  "fortran_order": bool(inp.int(0, 1)), "shape": shape}
        out = io.BytesIO()
        np.lib.format.write_array_header_1_0(out, header)
        return out.getvalue() + inp.bytes(inp.int(0, 255))
    shape = tuple(inp.int(0, 6) for _ in range(ndim))
    count = int(np.prod(shape)) if shape else 1
    if dtype.hasobject:
        array = np.empty(shape, dtype=object)
    else:
        raw = inp.bytes(count * dtype.itemsize).ljust(count * dtype.itemsize, b"\0")
        array = np.frombuffer(raw, dtype=dtype, count=count).reshape(shape)
    out = io.BytesIO()
    np.lib.format.write_array(out, array, allow_pickle=True)
    return out.getvalue()


def npz_blob(inp: Input, names=NPZ_NAMES) -> bytes:
    """A zip of up to six ``.npy`` members with names from ``names`` (or fuzzed)."""
    import io
    import zipfile

    warnings.filterwarnings("ignore", "Duplicate name", UserWarning)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for _ in range(inp.int(0, 6)):
            name = inp.pick(names) if inp.int(0, 7) else inp.text(inp.int(0, 8))
            member = f"{name}.npy" if inp.int(0, 7) else name
            member = "".join(c for c in member if c.isalnum() or c in "._-") or "m.npy"
            zf.writestr(member, npy_member(inp))
    return buf.getvalue()
