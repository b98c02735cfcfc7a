"""Fuzz target: ONNX metadata reading (``sensorbudget.export.describe_onnx``, ``read_metadata``), as
``sensorbudget info model.onnx`` does.

Input: a mode byte. Mode 0: the raw bytes are the ``.onnx`` file. Mode 1: a real exported model
whose ``metadata_props`` are replaced by fuzzed key/value pairs (keys mostly from
``METADATA_KEYS``; values JSON of any type, or text). Mode 2: the real model's serialized bytes
with fuzzed bytes spliced in at a fuzzed offset.
"""

from __future__ import annotations

import json
import warnings

from fuzz._harness import Input, expected_errors, instrumented, run, scratch_dir

with instrumented():
    import onnx

    from sensorbudget.export.onnx_bundle import METADATA_KEYS, bundle_to_onnx, describe_onnx, read_metadata
    from sensorbudget.trainer.bundle.model import load_bundle

_DIR = None
BASES = []          # serialized real models


def _load_bases(directory) -> None:
    from fuzz._bundles import make_bundles

    for path in make_bundles(directory / "bases").values():
        model = bundle_to_onnx(load_bundle(path), inputs="all")
        BASES.append(model.SerializeToString())


def _with_metadata(inp: Input) -> bytes:
    model = onnx.load_from_string(inp.pick(BASES))
    del model.metadata_props[:]
    for _ in range(inp.int(0, 12)):
        prop = model.metadata_props.add()
        prop.key = inp.pick(METADATA_KEYS) if inp.int(0, 7) else inp.text(inp.int(0, 12))
        if inp.int(0, 3):
            prop.value = json.dumps(inp.value(), allow_nan=True)
        else:
            prop.value = inp.text(inp.int(0, 64))
    return model.SerializeToString()


def test_one_input(data: bytes) -> None:
    inp = Input(data)
    mode = inp.int(0, 2)
    if mode == 0:
        blob = inp.rest()
    elif mode == 1:
        blob = _with_metadata(inp)
    else:
        base = inp.pick(BASES)
        at = inp.int(0, 65535) % (len(base) + 1)
        blob = base[:at] + inp.bytes(inp.int(0, 64)) + base[at + inp.int(0, 64):]
    path = _DIR / "model.onnx"
    path.write_bytes(blob)
    try:
        text = describe_onnx(path)
        assert isinstance(text, str)
        read_metadata(onnx.load(str(path)))
    except expected_errors():
        pass


def seeds() -> list:
    return [bytes([1, 0, 0]), bytes([1, 1, 3]) + bytes(40), bytes([2, 0, 10, 0, 4]) + b"\xff" * 4,
            bytes([0]) + b"\x08\x07\x12\x0csensorbudget"]


def main() -> None:
    global _DIR
    warnings.simplefilter("ignore")
    with scratch_dir() as d:
        _DIR = d
        _load_bases(d)
        run(test_one_input, seeds())


if __name__ == "__main__":
    main()
