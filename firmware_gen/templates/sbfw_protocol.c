/*
 * sbfw_protocol.c: receiving, checking and answering frames (sensorbudget firmware_gen runtime),
 * protocol v2 (PROTOCOL.md).
 *
 * Receiving: a 0x00 byte ends a frame; the bytes before it are COBS-decoded on the fly into rx.
 * At the delimiter the body is checked (valid COBS, 8 <= length <= SBFW_MAX_BODY, CRC-32) and
 * dropped (counted) if any check fails, as device_sim.protocol.FrameDecoder does; an empty frame
 * (two delimiters) is ignored. A body longer than rx is followed to its end with a running CRC
 * and, if the CRC is right, reported as SBFW_OVERSIZE (the firmware answers BAD_LENGTH).
 * Sending: 0x00, the COBS blocks of the body written straight from tx, 0x00 (no second buffer).
 */
#include "sbfw_protocol.h"
#include "sbfw_hal.h"

#define SBFW_CRC_INIT UINT32_C(0xFFFFFFFF)

#ifdef __AVR__
/* AVR: bit by bit (no 1 KB table in its 2 KB of RAM). */
static uint32_t sbfw_crc32_update(uint32_t crc, const uint8_t *data, uint16_t n)
{
    uint16_t i;
    uint8_t bit;
    for (i = 0u; i < n; ++i) {
        crc ^= data[i];
        for (bit = 0u; bit < 8u; ++bit) {
            crc = (crc >> 1) ^ (UINT32_C(0xEDB88320) & (0u - (crc & 1u)));
        }
    }
    return crc;
}
#else
/* A byte at a time: sbfw_crc32_table[b] is the bitwise update of b (eight steps of the reflected
 * polynomial 0xEDB88320 from crc = b), so crc' = table[(crc ^ byte) & 0xFF] ^ (crc >> 8). */
static const uint32_t sbfw_crc32_table[256] = {
    UINT32_C(0x00000000), UINT32_C(0x77073096), UINT32_C(0xEE0E612C), UINT32_C(0x990951BA),
    UINT32_C(0x076DC419), UINT32_C(0x706AF48F), UINT32_C(0xE963A535), UINT32_C(0x9E6495A3),
    UINT32_C(0x0EDB8832), UINT32_C(0x79DCB8A4), UINT32_C(0xE0D5E91E), UINT32_C(0x97D2D988),
    UINT32_C(0x09B64C2B), UINT32_C(0x7EB17CBD), UINT32_C(0xE7B82D07), UINT32_C(0x90BF1D91),
    UINT32_C(0x1DB71064), UINT32_C(0x6AB020F2), UINT32_C(0xF3B97148), UINT32_C(0x84BE41DE),
    UINT32_C(0x1ADAD47D), UINT32_C(0x6DDDE4EB), UINT32_C(0xF4D4B551), UINT32_C(0x83D385C7),
    UINT32_C(0x136C9856), UINT32_C(0x646BA8C0), UINT32_C(0xFD62F97A), UINT32_C(0x8A65C9EC),
    UINT32_C(0x14015C4F), UINT32_C(0x63066CD9), UINT32_C(0xFA0F3D63), UINT32_C(0x8D080DF5),
    UINT32_C(0x3B6E20C8), UINT32_C(0x4C69105E), UINT32_C(0xD56041E4), UINT32_C(0xA2677172),
    UINT32_C(0x3C03E4D1), UINT32_C(0x4B04D447), UINT32_C(0xD20D85FD), UINT32_C(0xA50AB56B),
    UINT32_C(0x35B5A8FA), UINT32_C(0x42B2986C), UINT32_C(0xDBBBC9D6), UINT32_C(0xACBCF940),
    UINT32_C(0x32D86CE3), UINT32_C(0x45DF5C75), UINT32_C(0xDCD60DCF), UINT32_C(0xABD13D59),
    UINT32_C(0x26D930AC), UINT32_C(0x51DE003A), UINT32_C(0xC8D75180), UINT32_C(0xBFD06116),
    UINT32_C(0x21B4F4B5), UINT32_C(0x56B3C423), UINT32_C(0xCFBA9599), UINT32_C(0xB8BDA50F),
    UINT32_C(0x2802B89E), UINT32_C(0x5F058808), UINT32_C(0xC60CD9B2), UINT32_C(0xB10BE924),
    UINT32_C(0x2F6F7C87), UINT32_C(0x58684C11), UINT32_C(0xC1611DAB), UINT32_C(0xB6662D3D),
    UINT32_C(0x76DC4190), UINT32_C(0x01DB7106), UINT32_C(0x98D220BC), UINT32_C(0xEFD5102A),
    UINT32_C(0x71B18589), UINT32_C(0x06B6B51F), UINT32_C(0x9FBFE4A5), UINT32_C(0xE8B8D433),
    UINT32_C(0x7807C9A2), UINT32_C(0x0F00F934), UINT32_C(0x9609A88E), UINT32_C(0xE10E9818),
    UINT32_C(0x7F6A0DBB), UINT32_C(0x086D3D2D), UINT32_C(0x91646C97), UINT32_C(0xE6635C01),
    UINT32_C(0x6B6B51F4), UINT32_C(0x1C6C6162), UINT32_C(0x856530D8), UINT32_C(0xF262004E),
    UINT32_C(0x6C0695ED), UINT32_C(0x1B01A57B), UINT32_C(0x8208F4C1), UINT32_C(0xF50FC457),
    UINT32_C(0x65B0D9C6), UINT32_C(0x12B7E950), UINT32_C(0x8BBEB8EA), UINT32_C(0xFCB9887C),
    UINT32_C(0x62DD1DDF), UINT32_C(0x15DA2D49), UINT32_C(0x8CD37CF3), UINT32_C(0xFBD44C65),
    UINT32_C(0x4DB26158), UINT32_C(0x3AB551CE), UINT32_C(0xA3BC0074), UINT32_C(0xD4BB30E2),
    UINT32_C(0x4ADFA541), UINT32_C(0x3DD895D7), UINT32_C(0xA4D1C46D), UINT32_C(0xD3D6F4FB),
    UINT32_C(0x4369E96A), UINT32_C(0x346ED9FC), UINT32_C(0xAD678846), UINT32_C(0xDA60B8D0),
    UINT32_C(0x44042D73), UINT32_C(0x33031DE5), UINT32_C(0xAA0A4C5F), UINT32_C(0xDD0D7CC9),
    UINT32_C(0x5005713C), UINT32_C(0x270241AA), UINT32_C(0xBE0B1010), UINT32_C(0xC90C2086),
    UINT32_C(0x5768B525), UINT32_C(0x206F85B3), UINT32_C(0xB966D409), UINT32_C(0xCE61E49F),
    UINT32_C(0x5EDEF90E), UINT32_C(0x29D9C998), UINT32_C(0xB0D09822), UINT32_C(0xC7D7A8B4),
    UINT32_C(0x59B33D17), UINT32_C(0x2EB40D81), UINT32_C(0xB7BD5C3B), UINT32_C(0xC0BA6CAD),
    UINT32_C(0xEDB88320), UINT32_C(0x9ABFB3B6), UINT32_C(0x03B6E20C), UINT32_C(0x74B1D29A),
    UINT32_C(0xEAD54739), UINT32_C(0x9DD277AF), UINT32_C(0x04DB2615), UINT32_C(0x73DC1683),
    UINT32_C(0xE3630B12), UINT32_C(0x94643B84), UINT32_C(0x0D6D6A3E), UINT32_C(0x7A6A5AA8),
    UINT32_C(0xE40ECF0B), UINT32_C(0x9309FF9D), UINT32_C(0x0A00AE27), UINT32_C(0x7D079EB1),
    UINT32_C(0xF00F9344), UINT32_C(0x8708A3D2), UINT32_C(0x1E01F268), UINT32_C(0x6906C2FE),
    UINT32_C(0xF762575D), UINT32_C(0x806567CB), UINT32_C(0x196C3671), UINT32_C(0x6E6B06E7),
    UINT32_C(0xFED41B76), UINT32_C(0x89D32BE0), UINT32_C(0x10DA7A5A), UINT32_C(0x67DD4ACC),
    UINT32_C(0xF9B9DF6F), UINT32_C(0x8EBEEFF9), UINT32_C(0x17B7BE43), UINT32_C(0x60B08ED5),
    UINT32_C(0xD6D6A3E8), UINT32_C(0xA1D1937E), UINT32_C(0x38D8C2C4), UINT32_C(0x4FDFF252),
    UINT32_C(0xD1BB67F1), UINT32_C(0xA6BC5767), UINT32_C(0x3FB506DD), UINT32_C(0x48B2364B),
    UINT32_C(0xD80D2BDA), UINT32_C(0xAF0A1B4C), UINT32_C(0x36034AF6), UINT32_C(0x41047A60),
    UINT32_C(0xDF60EFC3), UINT32_C(0xA867DF55), UINT32_C(0x316E8EEF), UINT32_C(0x4669BE79),
    UINT32_C(0xCB61B38C), UINT32_C(0xBC66831A), UINT32_C(0x256FD2A0), UINT32_C(0x5268E236),
    UINT32_C(0xCC0C7795), UINT32_C(0xBB0B4703), UINT32_C(0x220216B9), UINT32_C(0x5505262F),
    UINT32_C(0xC5BA3BBE), UINT32_C(0xB2BD0B28), UINT32_C(0x2BB45A92), UINT32_C(0x5CB36A04),
    UINT32_C(0xC2D7FFA7), UINT32_C(0xB5D0CF31), UINT32_C(0x2CD99E8B), UINT32_C(0x5BDEAE1D),
    UINT32_C(0x9B64C2B0), UINT32_C(0xEC63F226), UINT32_C(0x756AA39C), UINT32_C(0x026D930A),
    UINT32_C(0x9C0906A9), UINT32_C(0xEB0E363F), UINT32_C(0x72076785), UINT32_C(0x05005713),
    UINT32_C(0x95BF4A82), UINT32_C(0xE2B87A14), UINT32_C(0x7BB12BAE), UINT32_C(0x0CB61B38),
    UINT32_C(0x92D28E9B), UINT32_C(0xE5D5BE0D), UINT32_C(0x7CDCEFB7), UINT32_C(0x0BDBDF21),
    UINT32_C(0x86D3D2D4), UINT32_C(0xF1D4E242), UINT32_C(0x68DDB3F8), UINT32_C(0x1FDA836E),
    UINT32_C(0x81BE16CD), UINT32_C(0xF6B9265B), UINT32_C(0x6FB077E1), UINT32_C(0x18B74777),
    UINT32_C(0x88085AE6), UINT32_C(0xFF0F6A70), UINT32_C(0x66063BCA), UINT32_C(0x11010B5C),
    UINT32_C(0x8F659EFF), UINT32_C(0xF862AE69), UINT32_C(0x616BFFD3), UINT32_C(0x166CCF45),
    UINT32_C(0xA00AE278), UINT32_C(0xD70DD2EE), UINT32_C(0x4E048354), UINT32_C(0x3903B3C2),
    UINT32_C(0xA7672661), UINT32_C(0xD06016F7), UINT32_C(0x4969474D), UINT32_C(0x3E6E77DB),
    UINT32_C(0xAED16A4A), UINT32_C(0xD9D65ADC), UINT32_C(0x40DF0B66), UINT32_C(0x37D83BF0),
    UINT32_C(0xA9BCAE53), UINT32_C(0xDEBB9EC5), UINT32_C(0x47B2CF7F), UINT32_C(0x30B5FFE9),
    UINT32_C(0xBDBDF21C), UINT32_C(0xCABAC28A), UINT32_C(0x53B39330), UINT32_C(0x24B4A3A6),
    UINT32_C(0xBAD03605), UINT32_C(0xCDD70693), UINT32_C(0x54DE5729), UINT32_C(0x23D967BF),
    UINT32_C(0xB3667A2E), UINT32_C(0xC4614AB8), UINT32_C(0x5D681B02), UINT32_C(0x2A6F2B94),
    UINT32_C(0xB40BBE37), UINT32_C(0xC30C8EA1), UINT32_C(0x5A05DF1B), UINT32_C(0x2D02EF8D)
};

static uint32_t sbfw_crc32_update(uint32_t crc, const uint8_t *data, uint16_t n)
{
    uint16_t i;
    for (i = 0u; i < n; ++i) {
        crc = sbfw_crc32_table[(crc ^ data[i]) & 0xFFu] ^ (crc >> 8);
    }
    return crc;
}
#endif

uint32_t sbfw_crc32(const uint8_t *data, uint16_t n)
{
    return sbfw_crc32_update(SBFW_CRC_INIT, data, n) ^ SBFW_CRC_INIT;
}

void sbfw_link_init(sbfw_link_t *l, uint8_t *rx, uint16_t rx_cap, uint8_t *tx, uint16_t tx_cap)
{
    memset(l, 0, sizeof *l);
    l->rx = rx;
    l->rx_cap = rx_cap;
    l->tx = tx;
    l->tx_cap = tx_cap;
}

static void sbfw_rx_clear(sbfw_link_t *l)
{
    l->rx_len = 0u;
    l->left = 0u;
    l->code = 0u;
    l->bad = 0u;
    l->over = 0u;
    l->over_len = 0u;
}

/* One decoded body byte: into rx, or (body longer than rx) through the CRC of the overflow. */
static void sbfw_rx_put(sbfw_link_t *l, uint8_t byte)
{
    if (!l->over && l->rx_len < l->rx_cap) {
        l->rx[l->rx_len++] = byte;
        return;
    }
    if (!l->over) {          /* rx is full (rx_cap >= 8): keep its last 4 bytes as the tail */
        l->over = 1u;
        l->over_crc = sbfw_crc32_update(SBFW_CRC_INIT, l->rx, (uint16_t)(l->rx_cap - 4u));
        memcpy(l->tail, l->rx + l->rx_cap - 4u, 4u);
    }
    if ((uint32_t)l->rx_cap + l->over_len >= SBFW_MAX_BODY) {
        l->bad = 1u;         /* longer than any valid frame */
        return;
    }
    l->over_len++;
    l->over_crc = sbfw_crc32_update(l->over_crc, l->tail, 1u);
    memmove(l->tail, l->tail + 1, 3u);
    l->tail[3] = byte;
}

/* The frame ended at a delimiter: check it and make it the ready request. */
static uint8_t sbfw_rx_end(sbfw_link_t *l)
{
    uint8_t status = SBFW_NONE;
    if (l->code == 0u) {
        return SBFW_NONE;                    /* an empty frame between two delimiters */
    }
    if (!l->bad && l->left == 0u && l->rx_len >= SBFW_OVERHEAD) {
        if (l->over) {
            if ((l->over_crc ^ SBFW_CRC_INIT) == sbfw_get_u32(l->tail)) {
                l->req_crc = sbfw_get_u32(l->tail);
                l->req_payload_len = 0u;
                status = SBFW_OVERSIZE;
            }
        } else if (sbfw_crc32(l->rx, (uint16_t)(l->rx_len - 4u))
                   == sbfw_get_u32(l->rx + l->rx_len - 4u)) {
            l->req_crc = sbfw_get_u32(l->rx + l->rx_len - 4u);
            l->req_payload_len = (uint16_t)(l->rx_len - SBFW_OVERHEAD);
            status = SBFW_FRAME;
        }
    }
    if (status == SBFW_NONE) {
        l->dropped++;
    } else {
        l->req_version = l->rx[0];
        l->req_seq = sbfw_get_u16(l->rx + 1);
        l->req_cmd = l->rx[3];
    }
    l->ready = status;
    return status;
}

uint8_t sbfw_link_feed(sbfw_link_t *l, uint8_t byte)
{
    uint8_t status;
    if (byte == 0u) {
        status = sbfw_rx_end(l);
        if (status == SBFW_NONE) {
            sbfw_rx_clear(l);
        }
        return status;
    }
    if (l->bad) {
        return SBFW_NONE;
    }
    if (l->left == 0u) {                     /* a code byte */
        if (l->code != 0u && l->code != 0xFFu) {
            sbfw_rx_put(l, 0u);              /* the zero the previous block stood for */
        }
        l->code = byte;
        l->left = (uint8_t)(byte - 1u);
        return SBFW_NONE;
    }
    sbfw_rx_put(l, byte);
    l->left--;
    return SBFW_NONE;
}

uint16_t sbfw_link_feed_block(sbfw_link_t *l, const uint8_t *data, uint16_t n)
{
    uint16_t i = 0u;
    uint8_t status = SBFW_NONE;
    while (i < n && status == SBFW_NONE) {
        if (l->left != 0u && !l->bad && !l->over) {
            /* inside a COBS block with room in rx: its data bytes go straight into rx, up to
             * the block's end, the chunk's end, rx's end or a 0x00 (a delimiter: byte path),
             * four at a time while none of the four is 0x00 */
            uint32_t k = l->left, m = 0u, w;
            const uint8_t *src = data + i;
            uint8_t *dst = l->rx + l->rx_len;
            if (k > (uint32_t)(n - i)) {
                k = (uint32_t)(n - i);
            }
            if (k > (uint32_t)(l->rx_cap - l->rx_len)) {
                k = (uint32_t)(l->rx_cap - l->rx_len);
            }
            while (m + 4u <= k) {
                memcpy(&w, src + m, 4u);
                if (((w - UINT32_C(0x01010101)) & ~w & UINT32_C(0x80808080)) != 0u) {
                    break;                   /* a 0x00 among these four */
                }
                memcpy(dst + m, &w, 4u);
                m += 4u;
            }
            while (m < k && src[m] != 0u) {
                dst[m] = src[m];
                ++m;
            }
            l->rx_len = (uint16_t)(l->rx_len + m);
            l->left = (uint8_t)(l->left - m);
            i = (uint16_t)(i + m);
            if (m != 0u && m == k) {
                continue;
            }
        }
        status = sbfw_link_feed(l, data[i++]);
    }
    return i;
}

uint8_t sbfw_link_done(sbfw_link_t *l)
{
    l->ready = SBFW_NONE;
    sbfw_rx_clear(l);
    return SBFW_NONE;
}

int sbfw_link_check(const sbfw_link_t *l)
{
    uint16_t ahead;
    if (l->req_version != SBFW_PROTOCOL_VERSION) {
        return SBFW_ERR_BAD_VERSION;
    }
    if (!l->cache_valid) {
        return SBFW_ERR_NONE;
    }
    ahead = (uint16_t)(l->req_seq - l->cache_seq);
    if (ahead == 0u && l->req_crc == l->cache_crc) {
        return -1;
    }
    return ahead == 0u || ahead >= 0x8000u ? SBFW_ERR_STALE : SBFW_ERR_NONE;
}

#ifdef SBFW_SEMIHOST_LINK
/* ARM (and RISC-V) semihosting (QEMU -semihosting-config enable=on,target=native): SYS_OPEN of
 * ":tt" opens QEMU's stdin (mode 0) or stdout (mode 4); SYS_READ returns the count of bytes NOT
 * read (it blocks until at least one is there); SYS_WRITE writes them all. */
#define SBFW_SH_OPEN 0x01u
#define SBFW_SH_WRITE 0x05u
#define SBFW_SH_READ 0x06u
#ifndef SBFW_SH_IN_BUF
#if defined(__riscv)
#define SBFW_SH_IN_BUF 2048u                 /* the FE310 has 16 KiB of RAM */
#else
#define SBFW_SH_IN_BUF 8192u                 /* a host writes up to 8 frames of ~1 KiB at once */
#endif
#endif
#define SBFW_SH_BUF 2048u
static uint8_t sbfw_sh_in[SBFW_SH_IN_BUF], sbfw_sh_out[SBFW_SH_BUF];
static uint16_t sbfw_sh_pos, sbfw_sh_len, sbfw_sh_fill;
static int32_t sbfw_sh_stdin = -1, sbfw_sh_stdout = -1;

#if defined(__riscv)
/* RISC-V semihosting (QEMU): the same operations, a0 = operation, a1 = block, trapped by the
 * uncompressed slli / ebreak / srai sequence (kept in one 16-byte aligned group). */
static int32_t sbfw_semihost(uint32_t op, volatile uint32_t *block)
{
    register uint32_t a0 __asm__("a0") = op;
    register volatile uint32_t *a1 __asm__("a1") = block;
    __asm__ volatile(".balign 16\n\t.option push\n\t.option norvc\n\t"
                     "slli zero, zero, 0x1f\n\tebreak\n\tsrai zero, zero, 7\n\t.option pop"
                     : "+r"(a0) : "r"(a1) : "memory");
    return (int32_t)a0;
}
#else
static int32_t sbfw_semihost(uint32_t op, volatile uint32_t *block)
{
    register uint32_t r0 __asm__("r0") = op;
    register volatile uint32_t *r1 __asm__("r1") = block;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return (int32_t)r0;
}
#endif

static int32_t sbfw_sh_open(uint32_t mode)
{
    static const char tt[] = ":tt";
    volatile uint32_t block[3];
    block[0] = (uint32_t)(uintptr_t)tt;
    block[1] = mode;
    block[2] = 3u;
    return sbfw_semihost(SBFW_SH_OPEN, block);
}

/* Refill the input buffer when it is empty (the answers written so far leave first: the host
 * may wait for them); 0 at the end of input. */
static int sbfw_sh_fill_in(void)
{
    if (sbfw_sh_pos == sbfw_sh_len) {
        volatile uint32_t block[3];
        int32_t left;
        sbfw_io_drain();
        if (sbfw_sh_stdin < 0) {
            sbfw_sh_stdin = sbfw_sh_open(0u);
        }
        block[0] = (uint32_t)sbfw_sh_stdin;
        block[1] = (uint32_t)(uintptr_t)sbfw_sh_in;
        block[2] = SBFW_SH_IN_BUF;
        left = sbfw_semihost(SBFW_SH_READ, block);
        if (left < 0 || (uint32_t)left >= SBFW_SH_IN_BUF) {
            return 0;                        /* end of input (or an error) */
        }
        sbfw_sh_len = (uint16_t)(SBFW_SH_IN_BUF - (uint32_t)left);
        sbfw_sh_pos = 0u;
    }
    return 1;
}

int sbfw_io_getc(void)
{
    return sbfw_sh_fill_in() ? sbfw_sh_in[sbfw_sh_pos++] : -1;
}

uint16_t sbfw_io_read(const uint8_t **data)
{
    uint16_t n;
    if (!sbfw_sh_fill_in()) {
        return 0u;
    }
    *data = sbfw_sh_in + sbfw_sh_pos;
    n = (uint16_t)(sbfw_sh_len - sbfw_sh_pos);
    sbfw_sh_pos = sbfw_sh_len;
    return n;
}

/* A response is complete: it leaves with the others when SBFW_SH_ANSWERS have gathered, before
 * the next read that waits for input, or when the buffer is full. A host that tops up its
 * requests in flight once half of them are answered (device_sim's Link.pipeline: 8, at 4) then
 * sends the next ones while the device computes the rest of what it has read. */
#ifndef SBFW_SH_ANSWERS
#define SBFW_SH_ANSWERS 4u
#endif
static uint8_t sbfw_sh_answers;

void sbfw_io_flush(void)
{
    if (++sbfw_sh_answers >= SBFW_SH_ANSWERS) {
        sbfw_io_drain();
    }
}

void sbfw_io_drain(void)
{
    volatile uint32_t block[3];
    if (sbfw_sh_fill == 0u) {
        return;
    }
    if (sbfw_sh_stdout < 0) {
        sbfw_sh_stdout = sbfw_sh_open(4u);
    }
    block[0] = (uint32_t)sbfw_sh_stdout;
    block[1] = (uint32_t)(uintptr_t)sbfw_sh_out;
    block[2] = sbfw_sh_fill;
    (void)sbfw_semihost(SBFW_SH_WRITE, block);
    sbfw_sh_fill = 0u;
    sbfw_sh_answers = 0u;
}

void sbfw_io_write(const uint8_t *data, uint16_t n)
{
    while (n > 0u) {
        uint16_t k = (uint16_t)(SBFW_SH_BUF - sbfw_sh_fill);
        if (k == 0u) {
            sbfw_io_drain();
            continue;
        }
        k = n < k ? n : k;
        memcpy(sbfw_sh_out + sbfw_sh_fill, data, k);
        sbfw_sh_fill = (uint16_t)(sbfw_sh_fill + k);
        data += k;
        n = (uint16_t)(n - k);
    }
}
#else
int sbfw_io_getc(void)
{
    return sbfw_hal_getc();
}

uint16_t sbfw_io_read(const uint8_t **data)
{
    static uint8_t byte;
    const int c = sbfw_hal_getc();
    if (c < 0) {
        return 0u;
    }
    byte = (uint8_t)c;
    *data = &byte;
    return 1u;
}

void sbfw_io_write(const uint8_t *data, uint16_t n)
{
    sbfw_hal_write(data, n);
}

void sbfw_io_flush(void)
{
    sbfw_hal_flush();
}

void sbfw_io_drain(void)
{
    /* sbfw_io_flush has sent every response already */
}
#endif

/* Write body as 0x00, COBS blocks, 0x00 (the canonical form of device_sim.protocol). */
static void sbfw_write_frame(const uint8_t *body, uint16_t n)
{
    static const uint8_t delim = 0u;
    uint16_t i = 0u;
    sbfw_io_write(&delim, 1u);
    for (;;) {
        uint16_t run = 0u;
        uint8_t code;
        while (i + run < n && body[i + run] != 0u && run < 254u) {
            run++;
        }
        code = (uint8_t)(run + 1u);
        sbfw_io_write(&code, 1u);
        sbfw_io_write(body + i, run);
        i = (uint16_t)(i + run);
        if (run == 254u) {
            continue;                        /* a full block stands for no zero */
        }
        if (i >= n) {
            break;
        }
        i++;                                 /* the zero this block stands for */
    }
    sbfw_io_write(&delim, 1u);
    sbfw_io_flush();
}

/* Header and CRC around the payload of n bytes at body + 4. */
static uint16_t sbfw_seal(uint8_t *body, uint16_t seq, uint8_t cmd, uint16_t n)
{
    body[0] = SBFW_PROTOCOL_VERSION;
    sbfw_put_u16(body + 1, seq);
    body[3] = cmd;
    sbfw_put_u32(body + 4u + n, sbfw_crc32(body, (uint16_t)(4u + n)));
    return (uint16_t)(n + SBFW_OVERHEAD);
}

void sbfw_link_resend(sbfw_link_t *l)
{
    sbfw_write_frame(l->tx, l->tx_len);
}

void sbfw_link_refuse(sbfw_link_t *l, uint8_t err)
{
    uint8_t body[SBFW_OVERHEAD + 4u];
    uint16_t n = 2u;
    body[4] = l->req_cmd;
    body[5] = err;
    if (err == SBFW_ERR_STALE) {
        sbfw_put_u16(body + 6, l->cache_seq);
        n = 4u;
    }
    sbfw_write_frame(body, sbfw_seal(body, l->req_seq, SBFW_CMD_ERROR, n));
}

const uint8_t *sbfw_link_request(const sbfw_link_t *l)
{
    return l->rx + 4;
}

uint8_t *sbfw_link_response(sbfw_link_t *l)
{
    return l->tx + 4;
}

uint16_t sbfw_link_response_cap(const sbfw_link_t *l)
{
    return (uint16_t)(l->tx_cap - SBFW_OVERHEAD);
}

void sbfw_link_send(sbfw_link_t *l, uint8_t cmd, uint16_t n)
{
    l->tx_len = sbfw_seal(l->tx, l->req_seq, cmd, n);
    l->cache_valid = 1u;
    l->cache_seq = l->req_seq;
    l->cache_crc = l->req_crc;
    sbfw_link_resend(l);
}
