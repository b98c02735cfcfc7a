"""Fuzz target: bundle loading (``model.json`` + ``weights.npz``,
``sensorbudget.trainer.bundle.model.load_bundle``) and every consumer of a loaded bundle: the CLI's
selection-path table, ``predict``, the C header (float32/Q15/Q31), ONNX export, firmware generation,
the device reference model and the HTML report's reading of a bundle run.

Input: a mode byte. Mode 0: raw ``model.json`` (length-prefixed) and raw ``weights.npz``; with
bit 1 of the mode set, ``weights_sha256`` is patched to match when model.json is a JSON object,
so the fuzzer gets past the hash check. Mode 2: structured mutations of a real bundle (any node
of model.json, any array of weights.npz), hash patched; then, by the input, a downgrade (no
``content_sha256``, maybe ``format_version`` 1) or an integer literal of up to 6,000 digits.

Postconditions (issue 33): a bundle without ``content_sha256`` never loads; instead of loading,
the input may run ``upgrade_bundle`` (the user vouches for the folder), after which the bundle
loads and holds the same model.json fields.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import warnings
import zipfile

from fuzz._harness import (
    Input,
    expected_errors,
    instrumented,
    mutate_tree,
    npy_member,
    run,
    scratch_dir,
)

with instrumented():
    import numpy as np

    from sensorbudget.device_sim.html.runs import read_bundle
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.export.c_header import c_header
    from sensorbudget.export.onnx_bundle import bundle_to_onnx
    from sensorbudget.firmware_gen import generate_firmware
    from sensorbudget.cli import format_path
    from sensorbudget.trainer.bundle import load_bundle, npz_bytes
    from sensorbudget.trainer.bundle.model import CONTENT_KEY, content_sha256, upgrade_bundle

_DIR = None
BASES = []          # (meta, arrays) of the real bundles


def _load_bases(directory) -> None:
    from fuzz._bundles import make_bundles

    for path in make_bundles(directory / "bases").values():
        b = load_bundle(path)
        BASES.append((b.meta, b.arrays))


def _npz(arrays: dict, raw: dict) -> bytes:
    """weights.npz from arrays plus raw (possibly malformed) members."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, blob in list(raw.items()) + [(k, None) for k in arrays if k not in raw]:
            if blob is None:
                member = io.BytesIO()
                np.lib.format.write_array(member, np.asarray(arrays[name]), allow_pickle=False)
                blob = member.getvalue()
            zf.writestr(f"{name}.npy", blob)
    return buf.getvalue()


def _structured(inp: Input) -> tuple:
    meta, arrays = copy.deepcopy(inp.pick(BASES))
    for _ in range(inp.int(0, 3)):
        mutate_tree(meta, inp)
    raw = {}
    for _ in range(inp.int(0, 2)):
        name = inp.pick(sorted(arrays))
        if inp.int(0, 3) == 0:
            del arrays[name]
        else:
            raw[name] = npy_member(inp)
    blob = _npz(arrays, raw) if raw or inp.int(0, 1) else npz_bytes(arrays)
    if isinstance(meta, dict):
        _patch_hashes(meta, blob)
        if inp.int(0, 3) == 0:                               # the downgrade of issue 33
            meta.pop(CONTENT_KEY, None)
            meta["format_version"] = inp.pick([1, 2])
    text = json.dumps(meta, indent=2 if inp.int(0, 1) else None)   # NaN/inf allowed
    if inp.int(0, 3) == 0:                                   # a huge integer literal
        text = _long_integer(text, inp)
    return text.encode(), blob


def _long_integer(text: str, inp: Input) -> str:
    """``text`` with its first integer value after a key made ``digits`` long."""
    digits = inp.pick([18, 19, 20, 400, 4300, 4301, 6000])
    for key in ('"n_samples": ', '"window": ', '"step": ', '"budget": '):
        at = text.find(key)
        if at >= 0:
            start = at + len(key)
            return text[:start] + "7" * digits + ", \"was\": " + text[start:]
    return text


def _raw(inp: Input, patch: bool) -> tuple:
    model = inp.bytes(inp.int(0, 65535))
    blob = inp.rest()
    if patch:
        try:
            meta = json.loads(model)
        except ValueError:
            meta = None
        if isinstance(meta, dict):
            _patch_hashes(meta, blob)
            model = json.dumps(meta).encode()
    return model, blob


def _patch_hashes(meta: dict, blob: bytes) -> None:
    """Make both hashes match (weights, then content), so the checks behind them are reached;
    a model.json the canonical text cannot hold (NaN) keeps its content hash."""
    meta["weights_sha256"] = hashlib.sha256(blob).hexdigest()
    try:
        meta["content_sha256"] = content_sha256(meta)
    except (ValueError, TypeError, RecursionError):
        pass


def _consume(bundle, inp: Input) -> None:
    """One consumer of the loaded bundle, chosen by the input."""
    which = inp.int(0, 6)
    meta = bundle.meta
    if which == 0:
        text = format_path(meta)
        assert isinstance(text, str)
    elif which == 1:
        X = np.zeros((2, len(meta["features"])))
        pred = bundle.predict(X)
        assert pred.shape[0] == 2
    elif which == 2:
        header = c_header(bundle, name=inp.pick(["sbmodel", "m"]),
                          numeric=inp.pick(["float32", "q15", "q31"]))
        header.text.encode("ascii")
    elif which == 3:
        bundle_to_onnx(bundle, inputs=inp.pick(["all", "selected"]),
                       dtype=inp.pick(["float32", "float64"]))
    elif which == 4:
        fw = generate_firmware(bundle, target=inp.pick(["host", "avr", "cortex-m4f"]),
                               numeric=inp.pick(["float32", "q15", "q31"]))
        for text in fw.files.values():
            text.encode("ascii")
    elif which == 5:
        ReferenceModel(bundle, inp.pick(["float32", "q15", "q31"]))
    else:                                     # the HTML report's reading of a bundle run
        run_info, designs = read_bundle(_DIR / "bundle" / "model.json", "b")
        assert run_info["kind"] == "bundle" and len(designs) == len(meta["path"])


def test_one_input(data: bytes) -> None:
    inp = Input(data)
    mode = inp.int(0, 3)
    model, blob = _structured(inp) if mode >= 2 else _raw(inp, bool(mode & 1))
    path = _DIR / "bundle"
    path.mkdir(exist_ok=True)
    (path / "model.json").write_bytes(model)
    (path / "weights.npz").write_bytes(blob)
    if inp.int(0, 7) == 0:
        _upgrade(path)
        return
    try:
        bundle = load_bundle(path)
    except expected_errors():
        return
    assert CONTENT_KEY in bundle.meta, "a bundle without content_sha256 loaded"
    try:
        _consume(bundle, inp)
    except expected_errors():
        pass


def _upgrade(path) -> None:
    """``upgrade_bundle`` (the user vouches for the folder): refused with our errors, or the
    bundle then loads with the same fields."""
    try:
        done = upgrade_bundle(path)
    except expected_errors():
        return
    meta = load_bundle(path).meta
    assert meta == done["meta"] and meta["format_version"] == 2


def seeds() -> list:
    return [bytes([2, 0, 0, 0]), bytes([2, 1, 1, 0, 0, 0]), bytes([3, 0, 1, 1, 2, 1]),
            bytes([2, 0, 0, 1, 2, 1]), bytes([2, 0, 0, 1, 3, 0]), bytes([2, 0, 0, 1, 4, 1, 1]),
            bytes([2, 0, 0, 1, 5, 2]), bytes([2, 0, 0, 1, 6, 0]), bytes([1, 2, 0]) + b"{}"]


def main() -> None:
    global _DIR
    warnings.simplefilter("ignore")
    with scratch_dir() as d:
        _DIR = d
        _load_bases(d)
        run(test_one_input, seeds())


if __name__ == "__main__":
    main()
