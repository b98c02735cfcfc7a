"""Fuzz target: the device_sim frame decoder and the Python device behind it.

Checks for any byte stream:

- ``FrameDecoder`` never raises, and returns the same frames (and drop count) whether the
  bytes arrive at once or in fuzzed chunks; every frame it returns is the COBS decoding of a
  0x00-delimited piece of the input (nothing invented);
- its buffer never holds more than one maximal frame plus the last chunk;
- the response parsers (``parse_hello``, ``decode_predictions``) accept a payload or raise
  ``ProtocolError``;
- ``FakeDevice.feed`` (the firmware's protocol in Python) never raises and answers only valid
  frames.

Input: a chunking byte, a mode byte, then the stream: raw bytes (mode 0) or (mode 1) a list of
requests ``cmd u8, length u16, payload`` that the harness frames (protocol v2) with valid CRCs
and seqs that advance, repeat or go back (duplicates, stale requests), each followed by up to 7
bytes of line noise, so the device's command handlers and its seq checks are reached.
"""

from __future__ import annotations

from fuzz._harness import Input, expected_errors, instrumented, run

with instrumented():
    from sensorbudget.device_sim.client import decode_predictions, parse_hello
    from sensorbudget.device_sim.fake import FakeDevice
    from sensorbudget.device_sim.protocol import MAX_FRAME, FrameDecoder, cobs_decode, encode_body, encode_frame

DEVICE_MODEL = None


def _decode(stream: bytes, cuts: list):
    dec, frames, start = FrameDecoder(), [], 0
    for cut in cuts + [len(stream)]:
        frames += dec.feed(stream[start:cut])
        assert len(dec.buffer) <= MAX_FRAME + (cut - start)
        start = cut
    return frames, dec.dropped


def _framed(inp: Input) -> bytes:
    out, seq = [], 0
    while inp.remaining():
        cmd = inp.int(0, 255)
        payload = inp.bytes(inp.int(0, 1100))
        step = inp.int(0, 3)                       # same seq, +1, +2, or one back
        seq = (seq + (step if step < 3 else -1)) % 65536
        try:
            out.append(encode_frame(seq, cmd, payload))
        except expected_errors():
            pass
        out.append(inp.bytes(inp.int(0, 7)))
    return b"".join(out)


def test_one_input(data: bytes) -> None:
    inp = Input(data)
    step = inp.int(1, 64)
    stream = _framed(inp) if inp.int(0, 1) else inp.rest()
    cuts = list(range(step, len(stream), step))
    whole, dropped = _decode(stream, [])
    chunked, dropped_chunked = _decode(stream, cuts)
    assert whole == chunked and dropped == dropped_chunked
    pieces = {cobs_decode(p) for p in stream.split(b"\x00") if p}
    for seq, cmd, payload in whole:
        assert encode_body(seq, cmd, payload) in pieces
        for parse in (lambda p: parse_hello(p), lambda p: decode_predictions(p, 1 + seq % 3,
                                                                             "<f4")):
            try:
                parse(payload)
            except expected_errors():
                pass
    if DEVICE_MODEL is not None:
        device = FakeDevice(DEVICE_MODEL)
        answer = device.feed(stream)
        frames, bad = _decode(answer, [])
        assert bad == 0 and len(FrameDecoder().feed(answer)) == len(frames)


def seeds() -> list:
    hello = encode_frame(1, 0x01)
    push = encode_frame(2, 0x02, b"\x02\x00" + bytes(8 * 4 * 2))
    raw = [b"\x01\x00" + hello, b"\x03\x00" + hello + push,
           b"\x07\x00" + hello[:-2] + b"\x07\x00" + hello, b"\x01\x00\xff\xff\x01" + hello,
           b"\x02\x00" + push + push + encode_frame(1, 0x05) + encode_frame(2, 0x06, version=1)]

    def req(cmd, payload=b"", inc=1, noise=b""):
        return (bytes([cmd]) + len(payload).to_bytes(2, "little") + payload + bytes([inc])
                + bytes([len(noise)]) + noise)

    samples = b"\x0c\x00" + bytes(range(12 * 4 * 4))
    framed = [req(1) + req(2, samples) + req(5) + req(3, bytes(44 * 4)),
              req(4, b"\x03\x00\x00\x00\x01") + req(4, b"\x03\x00\x00\x00\x00", 0)
              + req(6) + req(0x7E, b"\x00"), req(2, samples, 1, b"\xa5\x5a") + req(2, samples, 0)]
    return raw + [b"\x05\x01" + f for f in framed]


def main() -> None:
    global DEVICE_MODEL
    import tempfile
    from pathlib import Path

    from sensorbudget.device_sim.reference import ReferenceModel
    from fuzz._bundles import make_bundles
    from sensorbudget.trainer.bundle.model import load_bundle

    with tempfile.TemporaryDirectory() as d:
        bundle = load_bundle(make_bundles(Path(d))["regression"])
    DEVICE_MODEL = ReferenceModel(bundle, "float32")
    run(test_one_input, seeds())


if __name__ == "__main__":
    main()
