"""The firmware's receiver (sbfw_protocol.c, compiled with gcc) on seeded faulty byte streams:
``sbfw_link_feed_block`` on chunks of random sizes (what the firmware's main loop does with the
semihosting console's buffer) gives byte for byte what ``sbfw_link_feed`` gives one byte at a
time (every request, its status, and the dropped count), so does the slice-by-4 CRC of the
emulation images, and the accepted requests are the frames device_sim.protocol.FrameDecoder
accepts (zlib's CRC-32) from the same stream."""

import random
import shutil
import subprocess
from pathlib import Path

import pytest

import sensorbudget.firmware_gen as firmware_gen
from sensorbudget.device_sim.protocol import (CRC, DELIM, HEADER, MAX_BODY, VERSION, FrameDecoder,
                                              cobs_encode, crc32)

TEMPLATES = Path(firmware_gen.__file__).resolve().parent / "templates"
HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include "sbfw_protocol.h"
#include "sbfw_hal.h"
int sbfw_hal_getc(void) { return -1; }
void sbfw_hal_write(const uint8_t *d, uint16_t n) { (void)d; (void)n; }
void sbfw_hal_flush(void) {}
static uint8_t rx[RX_CAP], tx[64], in[1u << 21];
/* argv[1]: 0 = sbfw_link_feed byte by byte, else the seed of the chunk sizes (1..3000) */
int main(int argc, char **argv)
{
    unsigned long seed = argc > 1 ? strtoul(argv[1], 0, 10) : 0ul;
    const int blocks = seed != 0ul;
    size_t n = fread(in, 1, sizeof in, stdin), pos = 0, j;
    sbfw_link_t l;
    sbfw_link_init(&l, rx, (uint16_t)sizeof rx, tx, (uint16_t)sizeof tx);
    while (pos < n) {
        uint16_t left = 1u;
        const uint8_t *p = in + pos;
        if (blocks) {
            seed = seed * 1103515245ul + 12345ul;
            left = (uint16_t)(1u + (seed >> 16) % 3000u);
            if (left > n - pos) {
                left = (uint16_t)(n - pos);
            }
        }
        pos += left;
        while (left > 0u) {
            uint16_t used = 1u;
            uint8_t st;
            if (blocks) {
                used = sbfw_link_feed_block(&l, p, left);
                st = l.ready;
            } else {
                st = sbfw_link_feed(&l, *p);
            }
            p += used;
            left = (uint16_t)(left - used);
            while (st != SBFW_NONE) {
                printf("%u %u %u %u %08lx ", st, l.req_version, l.req_seq, l.req_cmd,
                       (unsigned long)l.req_crc);
                for (j = 0; st == SBFW_FRAME && j < l.req_payload_len; ++j) {
                    printf("%02x", sbfw_link_request(&l)[j]);
                }
                printf("\n");
                st = sbfw_link_done(&l);
            }
        }
    }
    printf("dropped %u\n", l.dropped);
    return 0;
}
"""


@pytest.fixture(scope="module")
def receivers(tmp_path_factory):
    """(rx capacity, CRC four bytes at a time) -> the harness executable (gcc, -Werror, UBSan
    when it links)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is missing")
    out = tmp_path_factory.mktemp("sbfw-rx")
    (out / "harness.c").write_text(HARNESS)
    exes = {}
    for cap, slices in ((MAX_BODY, False), (MAX_BODY, True), (64, False)):
        exe = out / f"rx{cap}{'-slice4' * slices}"
        cmd = [gcc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-DRX_CAP={cap}",
               *(["-DSBFW_CRC_SLICE4"] if slices else []),
               f"-I{TEMPLATES}", str(out / "harness.c"), str(TEMPLATES / "sbfw_protocol.c"),
               "-o", str(exe)]
        ubsan = ["-fsanitize=undefined", "-fno-sanitize-recover=all"]
        if subprocess.run(cmd + ubsan, capture_output=True).returncode != 0:
            subprocess.run(cmd, check=True, capture_output=True)
        exes[cap, slices] = exe
    return exes


def faulty_stream(seed: int, frames: int = 400) -> bytes:
    """Seeded frames of every size (0..1100-byte payloads, another version now and then), with
    bit flips, dropped bytes, garbage bursts and bare delimiters between and inside them."""
    rng = random.Random(seed)
    out = bytearray()
    for i in range(frames):
        size = rng.choice([0, 1, 2, rng.randrange(1100), rng.randrange(300), 1024, 1025])
        payload = bytes(rng.choice([0, rng.randrange(256)]) for _ in range(size))
        head = HEADER.pack(VERSION if rng.random() < 0.95 else 1, i, rng.randrange(1, 8))
        body = head + payload + CRC.pack(crc32(head + payload))    # also beyond MAX_PAYLOAD
        frame = bytearray(DELIM + cobs_encode(body) + DELIM)
        if rng.random() < 0.2:
            for _ in range(rng.randint(1, 3)):
                frame[rng.randrange(len(frame))] ^= 1 << rng.randrange(8)
        if rng.random() < 0.05:
            del frame[rng.randrange(len(frame))]
        if rng.random() < 0.05:
            out += bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))
        out += frame
    return bytes(out)


def run(exe, stream: bytes, seed: int) -> list:
    done = subprocess.run([str(exe), str(seed)], input=stream, capture_output=True, check=True)
    return done.stdout.decode().splitlines()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_block_feed_is_the_byte_feed_and_the_python_decoder(receivers, seed):
    stream = faulty_stream(seed)
    for cap, exe in receivers.items():
        by_byte = run(exe, stream, 0)
        for chunks in (seed, seed + 100):
            assert run(exe, stream, chunks) == by_byte, (cap, chunks)
        assert int(by_byte[-1].split()[1]) > 0          # the faults dropped frames
    decoder = FrameDecoder()
    python = [f"1 {VERSION} {s} {c} {crc:08x} {p.hex()}"
              for s, c, p, crc in decoder.feed_crc(stream)]
    lines = run(receivers[MAX_BODY, False], stream, seed)
    assert run(receivers[MAX_BODY, True], stream, seed) == lines     # slice-by-4 CRC
    accepted = [line.rstrip() for line in lines[:-1] if line.split()[1] == str(VERSION)]
    assert accepted == [line.rstrip() for line in python]
    assert len(accepted) > 200                          # of 400 sent
    # the device counts frames of another version as received (it refuses them with
    # BAD_VERSION); the Python decoder counts them as dropped and lists them in ``foreign``
    foreign = [line for line in lines[:-1] if line.split()[1] != str(VERSION)]
    assert len(foreign) == len(decoder.foreign) > 0
    assert int(lines[-1].split()[1]) == decoder.dropped - len(decoder.foreign)
