"""Frame codec: CRC check value, round trips, resynchronisation after corruption."""

import random

import pytest

from device_sim.protocol import MAX_BODY, FrameDecoder, ProtocolError, crc16, encode_frame


def test_crc_check_value():
    assert crc16(b"123456789") == 0x29B1   # CRC-16/CCITT-FALSE catalogue check value


def test_round_trip_split_anywhere():
    frames = [(i, 0x02, bytes(range(i % 50))) for i in range(20)]
    stream = b"".join(encode_frame(*f) for f in frames)
    rng = random.Random(0)
    dec, got, pos = FrameDecoder(), [], 0
    while pos < len(stream):
        step = rng.randint(1, 7)
        got += dec.feed(stream[pos:pos + step])
        pos += step
    assert got == frames and dec.dropped == 0


def test_corrupted_frames_are_dropped_and_decoder_resyncs():
    good = [encode_frame(i, 0x03, b"\x01\x02\x03\x04") for i in range(3)]
    bad = bytearray(good[1])
    bad[7] ^= 0x10
    dec = FrameDecoder()
    got = dec.feed(b"\x00\xA5junk" + good[0] + bytes(bad) + good[2])
    assert [g[0] for g in got] == [0, 2] and dec.dropped >= 1


def test_oversized_payload_is_refused():
    with pytest.raises(ProtocolError, match="exceeds"):
        encode_frame(0, 1, bytes(MAX_BODY))
