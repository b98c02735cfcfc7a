/*
 * libFuzzer target: a generated firmware's whole receive path (frame parser, retry cache,
 * command dispatch, streaming extractors and model) fed with fuzzed bytes instead of a UART.
 *
 * Built by fuzz/c_targets.py with clang -fsanitize=fuzzer,address,undefined against the sources
 * firmware_gen generated for a small bundle; main.c is included here with its main() renamed,
 * and this file is the HAL. Checks besides the sanitizers: every write the firmware makes is
 * exactly one well-formed frame (sync, length, CRC) whose payload fits SBFW_TX_PAYLOAD.
 *
 * Input: byte 0 even = the rest is the raw byte stream; odd = the rest is a list of requests
 * (cmd u8, length u16 mod 1100, payload, seq step u8, noise count u8 mod 8, noise) that this
 * harness frames with valid CRCs, so the command handlers are reached.
 *
 * Harness limit (documented in fuzz/README.md): BENCH repetitions are capped at 64 here; the
 * firmware runs as many as the host asks for (a host decision, not an input-validation bug).
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbfw_hal.h"
#include "sbfw_protocol.h"

static uint32_t fuzz_bench_reps(const uint8_t *p)
{
    const uint32_t reps = (sbfw_get_u32)(p);
    return reps > 64u ? 64u : reps;
}
/* main.c reads only BENCH's repetition count with sbfw_get_u32 */
#define sbfw_get_u32(p) fuzz_bench_reps(p)
#define main sbfw_firmware_main
#include "main.c"
#undef main
#undef sbfw_get_u32

static const uint8_t *fuzz_in;
static size_t fuzz_len, fuzz_pos;
static jmp_buf fuzz_exit;
static uint64_t fuzz_clock;

void sbfw_hal_init(void)
{
}

int sbfw_hal_getc(void)
{
    return fuzz_pos < fuzz_len ? fuzz_in[fuzz_pos++] : -1;
}

void sbfw_hal_write(const uint8_t *data, uint16_t n)
{
    uint16_t len;
    if (n < SBFW_OVERHEAD || data[0] != 0xA5u || data[1] != 0x5Au) {
        abort();
    }
    len = sbfw_get_u16(data + 2);
    if (len < 2u || (uint32_t)len + 6u != n || len - 2u > SBFW_TX_PAYLOAD) {
        abort();
    }
    if (sbfw_crc16(data + 2, (uint16_t)(len + 2u), 0xFFFFu) != sbfw_get_u16(data + 4u + len)) {
        abort();
    }
}

void sbfw_hal_flush(void)
{
}

void sbfw_hal_cost_start(void)
{
}

uint64_t sbfw_hal_cost_stop(void)
{
    return ++fuzz_clock;
}

uint8_t sbfw_hal_cost_unit(void)
{
    return SBFW_UNIT_NANOSECONDS;
}

void sbfw_hal_exit(uint8_t code)
{
    (void)code;
    longjmp(fuzz_exit, 1);
}

/* Frame the request list of a structured input into out; returns the stream length. */
static size_t fuzz_frame_requests(const uint8_t *d, size_t n, uint8_t *out, size_t cap)
{
    size_t i = 0u, o = 0u;
    uint8_t seq = 0u;
    while (i < n) {
        const uint8_t cmd = d[i++];
        uint16_t plen = 0u, k;
        uint8_t noise;
        if (i + 2u <= n) {
            plen = (uint16_t)((d[i] | (uint16_t)d[i + 1] << 8) % 1100u);
            i += 2u;
        }
        if (o + plen + 8u + 8u > cap) {
            break;
        }
        out[o] = 0xA5u;
        out[o + 1u] = 0x5Au;
        sbfw_put_u16(out + o + 2u, (uint16_t)(plen + 2u));
        out[o + 4u] = seq;
        out[o + 5u] = cmd;
        for (k = 0u; k < plen; ++k) {
            out[o + 6u + k] = i < n ? d[i++] : 0u;
        }
        sbfw_put_u16(out + o + 6u + plen,
                     sbfw_crc16(out + o + 2u, (uint16_t)(plen + 4u), 0xFFFFu));
        o += plen + 8u;
        seq = (uint8_t)(seq + (i < n ? d[i++] % 3u : 1u));
        noise = (uint8_t)(i < n ? d[i++] % 8u : 0u);
        for (k = 0u; k < noise && i < n; ++k) {
            out[o++] = d[i++];
        }
    }
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t framed[1u << 16];
    if (size == 0u) {
        return 0;
    }
    if (data[0] & 1u) {
        fuzz_in = framed;
        fuzz_len = fuzz_frame_requests(data + 1, size - 1u, framed, sizeof framed);
    } else {
        fuzz_in = data + 1;
        fuzz_len = size - 1u;
    }
    fuzz_pos = 0u;
    if (setjmp(fuzz_exit) == 0) {
        sbfw_firmware_main();
    }
    return 0;
}
