/*
 * sbfw_protocol.h: framing of the sensorbudget serial protocol v2 (device side), see PROTOCOL.md.
 * Body: version u8 (=2) | seq u16 | cmd u8 | payload | crc u32, little-endian, CRC-32 (zlib's)
 * over version..payload; on the wire 0x00 | COBS(body) | 0x00. Each seq is executed at most
 * once (a repeat is answered from the cache, an older seq is refused as STALE). The caller owns
 * both buffers (no malloc).
 */
#ifndef SBFW_PROTOCOL_H
#define SBFW_PROTOCOL_H

#include <stdint.h>
#include <string.h>

#define SBFW_RUNTIME_VERSION 1
#define SBFW_PROTOCOL_VERSION 2
#define SBFW_MAX_PAYLOAD 1024u /* the protocol's limit */
#define SBFW_OVERHEAD 8u       /* body bytes besides the payload: version, seq 2, cmd, crc 4 */
#define SBFW_MAX_BODY (SBFW_MAX_PAYLOAD + SBFW_OVERHEAD)

/* Device buffers: payload bytes a request / response may carry (targets lower them). */
#ifndef SBFW_RX_PAYLOAD
#define SBFW_RX_PAYLOAD 1024u
#endif
#ifndef SBFW_TX_PAYLOAD
#define SBFW_TX_PAYLOAD 1024u
#endif

enum {
    SBFW_CMD_HELLO = 0x01, SBFW_CMD_PUSH_SAMPLES = 0x02, SBFW_CMD_PREDICT = 0x03,
    SBFW_CMD_BENCH = 0x04, SBFW_CMD_STATS = 0x05, SBFW_CMD_RESET = 0x06,
    SBFW_CMD_PUSH_EVENTS = 0x07, SBFW_CMD_SENSORS = 0x08,   /* multi-rate firmware only */
    SBFW_CMD_QUIT = 0x7E, SBFW_CMD_ERROR = 0x7F
};
enum { SBFW_ERR_NONE = 0, SBFW_ERR_UNKNOWN_COMMAND = 1, SBFW_ERR_BAD_LENGTH = 2,
       SBFW_ERR_BAD_VALUE = 3, SBFW_ERR_BAD_VERSION = 4, SBFW_ERR_STALE = 5 };
/* sbfw_link_feed / sbfw_link_done results */
enum { SBFW_NONE = 0, SBFW_FRAME = 1, SBFW_OVERSIZE = 2 };

typedef struct {
    uint8_t *rx;             /* decoded body of the frame being received */
    uint16_t rx_cap, rx_len;
    uint8_t *tx;             /* body of the last response (kept for repeats) */
    uint16_t tx_cap, tx_len;
    uint8_t left;            /* COBS: data bytes left in the current block */
    uint8_t code;            /* COBS: code of the current block (0 before the first) */
    uint8_t bad;             /* the frame is invalid: skip to the next delimiter */
    uint8_t over;            /* the body outgrew rx: only its CRC is followed */
    uint16_t over_len;       /* body bytes beyond rx_cap */
    uint32_t over_crc;       /* CRC register over the body except the last 4 bytes */
    uint8_t tail[4];         /* the last 4 body bytes (the CRC field) while over */
    uint8_t ready;           /* SBFW_NONE, SBFW_FRAME or SBFW_OVERSIZE */
    uint8_t req_version, req_cmd;
    uint16_t req_seq, req_payload_len;
    uint32_t req_crc;
    uint8_t cache_valid;
    uint16_t cache_seq;
    uint32_t cache_crc;
    uint16_t dropped;        /* frames dropped (bad COBS, length or CRC) */
} sbfw_link_t;

/* The link's byte I/O: the HAL's (UART, stdio), or with SBFW_SEMIHOST_LINK (Cortex-M builds for
 * QEMU only) the semihosting console, QEMU's own stdin/stdout, where one SYS_READ moves a buffer's
 * worth of bytes where a modelled UART moves one byte per emulator round trip. The timed regions
 * (extractors, model) never include link work, so costs are the same over either link. */
int sbfw_io_getc(void);
/* The bytes received so far (at least one; blocks until one is there): *data points at them
 * until the next call; 0 at the end of input. The semihosting console's buffer at once (main.c
 * reads a HAL's UART with sbfw_io_getc, a byte at a time, as before). */
uint16_t sbfw_io_read(const uint8_t **data);
void sbfw_io_write(const uint8_t *data, uint16_t n);
/* The end of a response: the HAL's flush; on the semihosting console the responses leave
 * together before the next read that waits for input (sbfw_io_drain: everything, now). */
void sbfw_io_flush(void);
void sbfw_io_drain(void);

/* CRC-32/ISO-HDLC (zlib's crc32) of n bytes. */
uint32_t sbfw_crc32(const uint8_t *data, uint16_t n);
void sbfw_link_init(sbfw_link_t *l, uint8_t *rx, uint16_t rx_cap, uint8_t *tx, uint16_t tx_cap);
/* Give one received byte; returns SBFW_FRAME / SBFW_OVERSIZE when a request is ready. */
uint8_t sbfw_link_feed(sbfw_link_t *l, uint8_t byte);
/* Give the n bytes at data, up to the end of the first request they complete; returns the bytes
 * taken, and l->ready is that request's status (SBFW_NONE if none). Byte for byte what
 * sbfw_link_feed does with each, but a COBS block's data bytes are copied into rx in one loop. */
uint16_t sbfw_link_feed_block(sbfw_link_t *l, const uint8_t *data, uint16_t n);
/* Release the ready request; returns the status of the next buffered one. */
uint8_t sbfw_link_done(sbfw_link_t *l);
/* What to do with the ready request: SBFW_ERR_NONE = execute it; SBFW_ERR_STALE or
 * SBFW_ERR_BAD_VERSION = refuse it (sbfw_link_refuse); -1 = a repeat: sbfw_link_resend. */
int sbfw_link_check(const sbfw_link_t *l);
void sbfw_link_resend(sbfw_link_t *l);
/* Answer the ready request with ERROR err (not cached, nothing executed). */
void sbfw_link_refuse(sbfw_link_t *l, uint8_t err);
/* Payload of the ready request, and where to write the response payload (capacity below). */
const uint8_t *sbfw_link_request(const sbfw_link_t *l);
uint8_t *sbfw_link_response(sbfw_link_t *l);
uint16_t sbfw_link_response_cap(const sbfw_link_t *l);
/* Frame, send and remember the response payload of n bytes written at sbfw_link_response. */
void sbfw_link_send(sbfw_link_t *l, uint8_t cmd, uint16_t n);

/* Little-endian payload helpers. */
static inline uint16_t sbfw_get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}
static inline uint32_t sbfw_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void sbfw_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void sbfw_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void sbfw_put_u64(uint8_t *p, uint64_t v)
{
    sbfw_put_u32(p, (uint32_t)v);
    sbfw_put_u32(p + 4, (uint32_t)(v >> 32));
}
static inline int16_t sbfw_get_i16(const uint8_t *p)
{
    const uint16_t u = sbfw_get_u16(p);
    return (int16_t)(u >= 0x8000u ? (int32_t)u - 65536 : (int32_t)u);
}
static inline int32_t sbfw_get_i32(const uint8_t *p)
{
    const uint32_t u = sbfw_get_u32(p);
    return u >= UINT32_C(0x80000000) ? -(int32_t)(UINT32_C(0xFFFFFFFF) - u) - 1 : (int32_t)u;
}
static inline float sbfw_get_f32(const uint8_t *p)
{
    const uint32_t u = sbfw_get_u32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline void sbfw_put_f32(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    sbfw_put_u32(p, u);
}

#endif /* SBFW_PROTOCOL_H */
