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

/* Write body as 0x00, COBS blocks, 0x00 (the canonical form of device_sim.protocol). */
static void sbfw_write_frame(const uint8_t *body, uint16_t n)
{
    static const uint8_t delim = 0u;
    uint16_t i = 0u;
    sbfw_hal_write(&delim, 1u);
    for (;;) {
        uint16_t run = 0u;
        uint8_t code;
        while (i + run < n && body[i + run] != 0u && run < 254u) {
            run++;
        }
        code = (uint8_t)(run + 1u);
        sbfw_hal_write(&code, 1u);
        sbfw_hal_write(body + i, run);
        i = (uint16_t)(i + run);
        if (run == 254u) {
            continue;                        /* a full block stands for no zero */
        }
        if (i >= n) {
            break;
        }
        i++;                                 /* the zero this block stands for */
    }
    sbfw_hal_write(&delim, 1u);
    sbfw_hal_flush();
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
