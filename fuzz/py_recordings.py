"""Fuzz target: recordings loaders (CSV/NPZ streams, sktime .ts, Air Quality UCI CSV, a directory
with ``index.csv`` or of plain streams, and folders holding links) via
``sensorbudget.trainer.sensing.recordings.load_recordings``, then ``time_gaps`` on every recording.

Input: a layout byte, a sample-rate choice, then the content. Directory layouts split the
content at a 16-bit length into ``index.csv`` (or a first stream) and a second file. The link
layouts (``links``) add a secret file outside the folder and, inside it, links chosen by the
input: to the secret, to a folder holding it, to a file inside the folder, or a dangling link;
whatever loads must hold nothing of the secret, and no error may echo it.
"""

from __future__ import annotations

from fuzz._harness import Input, expected_errors, instrumented, npz_blob, run, scratch_dir

with instrumented():
    import numpy as np

    from sensorbudget.trainer.sensing.recordings import load_recordings, time_gaps

LAYOUTS = ["csv", "npz", "ts", "air", "index", "streams", "txt", "links", "links"]
#: the file outside the recordings folder that the link layouts point at
SECRET = b"time,s3cretcol\n0,987654321\n0.05,987654321\n"
#: (name of the link in the folder, what it points to, relative to the scratch directory)
LINKS = [("b.csv", "secret.csv"), ("b.csv", "outside"), ("sub", "outside"),
         ("c.csv", "rec/a.csv"), ("d.csv", "nowhere.csv"), ("index.csv", "outside/index.csv"),
         ("e.ts", "outside/s.ts"), ("a.csv", "rec/a.csv"), ("f.csv", "rec/g.csv"),
         ("g.csv", "rec/f.csv")]
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


def _links(inp: Input, target) -> None:
    """The secret outside the folder (as a stream, an index and a .ts file) and 1-3 links."""
    outside = _DIR / "outside"
    outside.mkdir(exist_ok=True)
    (_DIR / "secret.csv").write_bytes(SECRET)
    for name in ("secret.csv", "index.csv"):
        (outside / name).write_bytes(SECRET if name != "index.csv"
                                     else b"file,y\nsecret.csv,1\n")
    (outside / "s.ts").write_bytes(b"@classLabel true s3cretcol\n@data\n1,2:s3cretcol\n")
    for _ in range(inp.int(1, 3)):
        name, points_to = inp.pick(LINKS)
        link = target / name
        if not link.is_symlink() and not link.exists():
            link.symlink_to(_DIR / points_to)
    if inp.int(0, 1):
        (target / "index.csv").unlink(missing_ok=True)
        (target / "index.csv").write_bytes(inp.pick([b"file,y\na.csv,1\nsub/secret.csv,2\n",
                                                     b"file,y\nb.csv,1\n", b"file,y\nc.csv,1\n"]))


def _clear(target) -> None:
    if not target.exists():
        target.mkdir()
        return
    for p in target.iterdir():
        p.unlink()


def _secret_free(rset) -> None:
    for rec in rset.recordings:
        assert "s3cretcol" not in rec.columns and "s3cretcol" not in map(str, rec.labels.values())
        assert not any((c == 987654321).any() for c in rec.columns.values())


def test_one_input(data: bytes) -> None:
    inp = Input(data)
    layout, rate = inp.pick(LAYOUTS), inp.pick(RATES)
    links = Input(inp.bytes(8)) if layout == "links" else None    # before the files take the rest
    files = (_files(inp, layout) if links is None
             else {"a.csv": inp.rest() or b"time,ax\n0,1\n0.05,2\n"})
    target = _DIR / "rec"
    _clear(target)
    for name, content in files.items():
        (target / name).write_bytes(content)
    if links is not None:
        _links(links, target)
    path = target if layout in ("index", "streams", "links") else target / next(iter(files))
    try:
        rset = load_recordings(path, rate)
        _check(rset)
        _secret_free(rset)
        for rec in rset.recordings:
            try:
                gaps = time_gaps(rec, rate)
                assert gaps.shape == (max(rec.n_samples - 1, 0),)
            except expected_errors():
                pass
    except expected_errors() as exc:
        assert "s3cretcol" not in str(exc) and "987654321" not in str(exc), str(exc)


def seeds() -> list:
    csv = b"# comment\ntime,ax,y\n0,1,2\n0.05,2,3\n0.1,,4\n"
    ts = (b"@problemName P\n@timeStamps false\n@classLabel true a b\n@data\n"
          b"1,2,3:4,5,6:a\n1,2,3:4,5,7:b\n")
    air = b"10/03/2004;18.00.00;2,6;1360;13,6;;\n10/03/2004;19.00.00;-200;1292;13,3;;\n"
    index = b"file,label\na.csv,1.5\n"
    return [bytes([0, 1]) + csv, bytes([2, 1]) + ts, bytes([3, 0]) + air,
            bytes([4, 1]) + len(index).to_bytes(2, "little") + index + bytes([0]) + csv,
            bytes([5, 1]) + len(csv).to_bytes(2, "little") + csv + bytes([3]) + csv,
            bytes([1, 1, 2, 0, 0, 1, 3]) + np.arange(3.0).tobytes(),
            bytes([7, 1, 0, 0, 0, 0, 0, 0, 0, 0]),
            bytes([8, 1, 2, 3, 2, 1, 1, 0, 0, 0]) + b"time,ax\n0,5\n0.05,6\n",
            bytes([7, 0, 1, 5, 1, 0, 0, 0, 0, 0])]


def main() -> None:
    global _DIR
    with scratch_dir() as d:
        _DIR = d
        run(test_one_input, seeds())


if __name__ == "__main__":
    main()
