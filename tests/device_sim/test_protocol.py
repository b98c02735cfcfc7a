"""Frame codec v2: CRC-32 against zlib's catalogue value and an independent bitwise reference,
COBS round trips, resynchronisation after corruption, detection of every 1-3 bit error."""

import random

import pytest

from sensorbudget.device_sim.protocol import (
    MAX_BODY,
    MAX_PAYLOAD,
    FrameDecoder,
    ProtocolError,
    cobs_decode,
    cobs_encode,
    crc32,
    encode_body,
    encode_frame,
)


def crc32_reference(data: bytes) -> int:
    """Bitwise CRC-32/ISO-HDLC written from the definition (reflected, poly 0x04C11DB7)."""
    poly = int(f"{0x04C11DB7:032b}"[::-1], 2)
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (poly if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def test_crc_check_value_and_reference():
    assert crc32(b"123456789") == 0xCBF43926 == crc32_reference(b"123456789")
    rng = random.Random(1)
    for n in (0, 1, 7, 300):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert crc32(data) == crc32_reference(data)


@pytest.mark.parametrize("data", [b"", b"\x00", b"\x00\x00", b"\x11\x22\x00\x33",
                                  bytes(range(1, 255)), bytes(range(1, 256)) * 3,
                                  b"\x01" * 254 + b"\x00" + b"\x02" * 600])
def test_cobs_round_trip_without_zero_bytes(data):
    enc = cobs_encode(data)
    assert 0 not in enc and cobs_decode(enc) == data
    assert len(enc) <= len(data) + len(data) // 254 + 1


def test_cobs_rejects_a_block_running_past_the_end():
    assert cobs_decode(b"\x05\x01\x02") is None and cobs_decode(b"\x00") is None


def test_round_trip_split_anywhere():
    frames = [(i * 997 % 65536, 0x02, bytes(range(i % 50)) * (1 + i % 30)) for i in range(40)]
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
    assert [g[0] for g in got] == [0, 2] and dec.dropped == 2          # junk and bad


def test_a_run_without_delimiter_is_dropped_once_and_the_next_frame_decodes():
    dec = FrameDecoder()
    assert dec.feed(b"\x01" * 5000) == [] and len(dec.buffer) <= 5000
    assert dec.feed(encode_frame(9, 1, b"ok")) == [(9, 1, b"ok")] and dec.dropped == 1


def test_every_one_to_three_bit_error_is_detected():
    """CRC-32 has Hamming distance >= 4 for bodies up to 11 450 bytes (Koopman), so any 1-3 bit
    flips of a body are caught; sampled here on small and maximal bodies."""
    rng = random.Random(7)
    for size in (0, 40, MAX_PAYLOAD):
        body = bytearray(encode_body(3, 2, bytes(rng.randrange(256) for _ in range(size))))
        for _ in range(3000):
            bad = bytearray(body)
            for bit in rng.sample(range(8 * len(bad)), rng.randint(1, 3)):
                bad[bit // 8] ^= 1 << (bit % 8)
            assert FrameDecoder().feed(b"\x00" + cobs_encode(bytes(bad)) + b"\x00") == []


def test_oversized_payload_is_refused():
    assert len(encode_body(0, 1, bytes(MAX_PAYLOAD))) == MAX_BODY
    with pytest.raises(ProtocolError, match="exceeds"):
        encode_frame(0, 1, bytes(MAX_PAYLOAD + 1))
