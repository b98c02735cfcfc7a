"""Fuzz target: recordings loaders (CSV/NPZ streams, sktime .ts, Air Quality UCI CSV, a directory
with ``index.csv`` or of plain streams) via ``trainer.sensing.recordings.load_recordings``, then
``time_gaps`` on every recording.

Input: a layout byte, a sample-rate choice, then the content. Directory layouts split the
content at a 16-bit length into ``index.csv`` (or a first stream) and a second file.
"""

from __future__ import annotations

from fuzz._harness import Input, expected_errors, instrumented, npz_blob, run, scratch_dir

with instrumented():
    import numpy as np

    from trainer.sensing.recordings import load_recordings, time_gaps

LAYOUTS = ["csv", "npz", "ts", "air", "index", "streams", "txt"]
RATES = [1.0, 20.0, 1 / 3600, 1e9, 1e-300, 0.5]
NAMES = ["time", "ax", "ay", "y", "t", "class", "file"]

_DIR = None


def _check(rset) -> None:
    """Postconditions of loaded recordings (an AssertionError here is a finding)."""
    assert rset.recordings
    for rec in rset.recordings:
        assert rec.time.ndim == 1
        for column in rec.columns.values():
            assert column.shape == rec.time.shape


def _files(inp: Input, layout: str) -> dict:
    if layout == "npz":
        return {"rec.npz": npz_blob(inp, NAMES)}
    if layout in ("index", "streams"):
        first = inp.bytes(inp.int(0, 65535))
        second_name = inp.pick(["a.csv", "b.npz", "a.ts", "c.csv"])
        second = npz_blob(inp, NAMES) if second_name.endswith(".npz") else inp.rest()
        return {"index.csv" if layout == "index" else "0.csv": first, second_name: second}
    content = inp.rest()
    if layout == "air":
        content = b"Date;Time;CO(GT);PT08.S1(CO);T\n" + content
    return {f"rec.{layout}": content}


def test_one_input(data: bytes) -> None:
    inp = Input(data)
    layout, rate = inp.pick(LAYOUTS), inp.pick(RATES)
    files = _files(inp, layout)
    target = _DIR / "rec"
    if target.exists():
        for p in target.iterdir():
            p.unlink()
    else:
        target.mkdir()
    for name, content in files.items():
        (target / name).write_bytes(content)
    path = target if layout in ("index", "streams") else target / next(iter(files))
    try:
        rset = load_recordings(path, rate)
        _check(rset)
        for rec in rset.recordings:
            try:
                gaps = time_gaps(rec, rate)
                assert gaps.shape == (max(rec.n_samples - 1, 0),)
            except expected_errors():
                pass
    except expected_errors():
        pass


def seeds() -> list:
    csv = b"# comment\ntime,ax,y\n0,1,2\n0.05,2,3\n0.1,,4\n"
    ts = (b"@problemName P\n@timeStamps false\n@classLabel true a b\n@data\n"
          b"1,2,3:4,5,6:a\n1,2,3:4,5,7:b\n")
    air = b"10/03/2004;18.00.00;2,6;1360;13,6;;\n10/03/2004;19.00.00;-200;1292;13,3;;\n"
    index = b"file,label\na.csv,1.5\n"
    return [bytes([0, 1]) + csv, bytes([2, 1]) + ts, bytes([3, 0]) + air,
            bytes([4, 1]) + len(index).to_bytes(2, "little") + index + bytes([0]) + csv,
            bytes([5, 1]) + len(csv).to_bytes(2, "little") + csv + bytes([3]) + csv,
            bytes([1, 1, 2, 0, 0, 1, 3]) + np.arange(3.0).tobytes()]


def main() -> None:
    global _DIR
    with scratch_dir() as d:
        _DIR = d
        run(test_one_input, seeds())


if __name__ == "__main__":
    main()
