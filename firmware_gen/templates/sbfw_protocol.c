/*
 * sbfw_protocol.c: receiving, checking and answering frames (sensorbudget firmware_gen runtime).
 *
 * Bytes collect in rx until they form a frame. A byte that cannot start a frame is discarded;
 * a frame with an out-of-range length or a bad CRC is dropped and the bytes after its first
 * sync byte are scanned again (as device_sim.protocol.FrameDecoder does). A frame with a valid
 * length but more payload than rx holds is consumed byte by byte and, if its CRC is right,
 * reported as SBFW_OVERSIZE (the firmware answers BAD_LENGTH).
 */
#include "sbfw_protocol.h"
#include "sbfw_hal.h"

#define SBFW_SYNC0 0xA5u
#define SBFW_SYNC1 0x5Au

uint16_t sbfw_crc16(const uint8_t *data, uint16_t n, uint16_t crc)
{
    uint16_t i;
    uint8_t bit;
    for (i = 0u; i < n; ++i) {
        crc ^= (uint16_t)((uint16_t)data[i] << 8);
        for (bit = 0u; bit < 8u; ++bit) {
            crc = (crc & 0x8000u) ? (uint16_t)((uint16_t)(crc << 1) ^ 0x1021u)
                                  : (uint16_t)(crc << 1);
        }
    }
    return crc;
}

void sbfw_link_init(sbfw_link_t *l, uint8_t *rx, uint16_t rx_cap, uint8_t *tx, uint16_t tx_cap)
{
    memset(l, 0, sizeof *l);
    l->rx = rx;
    l->rx_cap = rx_cap;
    l->tx = tx;
    l->tx_cap = tx_cap;
}

static void sbfw_shift(sbfw_link_t *l, uint16_t n)
{
    if (n >= l->rx_len) {
        l->rx_len = 0u;
        return;
    }
    memmove(l->rx, l->rx + n, (size_t)(l->rx_len - n));
    l->rx_len = (uint16_t)(l->rx_len - n);
}

/* Index of the next byte after rx[0] that may start a frame (rx_len if none). */
static uint16_t sbfw_next_sync(const sbfw_link_t *l)
{
    uint16_t i;
    for (i = 1u; i < l->rx_len; ++i) {
        if (l->rx[i] == SBFW_SYNC0) {
            return i;
        }
    }
    return l->rx_len;
}

/* A valid-length frame that rx cannot hold: consume the rest while checking its CRC. */
static void sbfw_begin_skip(sbfw_link_t *l, uint16_t len)
{
    const uint16_t after = (uint16_t)(l->rx_len - 4u);    /* bytes after len */
    const uint16_t body = after < len ? after : len;
    uint16_t i;
    l->req_seq = l->rx[4];
    l->req_cmd = l->rx[5];
    l->skip_crc = sbfw_crc16(l->rx + 2, (uint16_t)(body + 2u), 0xFFFFu);
    l->skip_left = (uint16_t)(len - body);
    l->skip_crc_bytes = 0u;
    l->skip_rx_crc = 0u;
    for (i = (uint16_t)(4u + body); i < l->rx_len; ++i) {
        l->skip_rx_crc |= (uint16_t)((uint16_t)l->rx[i] << (8u * l->skip_crc_bytes));
        l->skip_crc_bytes++;
    }
    l->rx_len = 0u;
    l->skipping = 1u;
}

static uint8_t sbfw_skip_byte(sbfw_link_t *l, uint8_t byte)
{
    if (l->skip_left > 0u) {
        l->skip_crc = sbfw_crc16(&byte, 1u, l->skip_crc);
        l->skip_left--;
        return SBFW_NONE;
    }
    l->skip_rx_crc |= (uint16_t)((uint16_t)byte << (8u * l->skip_crc_bytes));
    if (++l->skip_crc_bytes < 2u) {
        return SBFW_NONE;
    }
    l->skipping = 0u;
    if (l->skip_rx_crc != l->skip_crc) {
        l->dropped++;
        return SBFW_NONE;
    }
    l->req_crc = l->skip_rx_crc;
    l->req_payload_len = 0u;
    l->frame_len = 0u;
    l->ready = SBFW_OVERSIZE;
    return SBFW_OVERSIZE;
}

static uint8_t sbfw_parse(sbfw_link_t *l)
{
    for (;;) {
        uint16_t len, total;
        if (l->rx_len == 0u) {
            return SBFW_NONE;
        }
        if (l->rx[0] != SBFW_SYNC0) {
            sbfw_shift(l, sbfw_next_sync(l));
            continue;
        }
        if (l->rx_len < 2u) {
            return SBFW_NONE;
        }
        if (l->rx[1] != SBFW_SYNC1) {
            sbfw_shift(l, 1u);
            continue;
        }
        if (l->rx_len < 4u) {
            return SBFW_NONE;
        }
        len = sbfw_get_u16(l->rx + 2);
        if (len < 2u || len > SBFW_MAX_BODY) {
            l->dropped++;
            sbfw_shift(l, 1u);
            continue;
        }
        total = (uint16_t)(len + 6u);
        if (total > l->rx_cap) {
            if (l->rx_len >= 6u) {
                sbfw_begin_skip(l, len);
            }
            return SBFW_NONE;
        }
        if (l->rx_len < total) {
            return SBFW_NONE;
        }
        if (sbfw_crc16(l->rx + 2, (uint16_t)(len + 2u), 0xFFFFu)
                != sbfw_get_u16(l->rx + 4u + len)) {
            l->dropped++;
            sbfw_shift(l, 1u);
            continue;
        }
        l->req_seq = l->rx[4];
        l->req_cmd = l->rx[5];
        l->req_crc = sbfw_get_u16(l->rx + 4u + len);
        l->req_payload_len = (uint16_t)(len - 2u);
        l->frame_len = total;
        l->ready = SBFW_FRAME;
        return SBFW_FRAME;
    }
}

uint8_t sbfw_link_feed(sbfw_link_t *l, uint8_t byte)
{
    if (l->skipping) {
        return sbfw_skip_byte(l, byte);
    }
    if (l->rx_len >= l->rx_cap) {    /* cannot happen: parse never leaves rx full */
        l->rx_len = 0u;
        l->dropped++;
    }
    l->rx[l->rx_len++] = byte;
    return sbfw_parse(l);
}

uint8_t sbfw_link_done(sbfw_link_t *l)
{
    if (l->ready == SBFW_FRAME) {
        sbfw_shift(l, l->frame_len);
    }
    l->ready = SBFW_NONE;
    return l->skipping ? SBFW_NONE : sbfw_parse(l);
}

int sbfw_link_is_retry(const sbfw_link_t *l)
{
    return l->cache_valid && l->cache_seq == l->req_seq && l->cache_crc == l->req_crc;
}

void sbfw_link_resend(sbfw_link_t *l)
{
    sbfw_hal_write(l->tx, l->tx_len);
    sbfw_hal_flush();
}

const uint8_t *sbfw_link_request(const sbfw_link_t *l)
{
    return l->rx + 6;
}

uint8_t *sbfw_link_response(sbfw_link_t *l)
{
    return l->tx + 6;
}

uint16_t sbfw_link_response_cap(const sbfw_link_t *l)
{
    return (uint16_t)(l->tx_cap - SBFW_OVERHEAD);
}

void sbfw_link_send(sbfw_link_t *l, uint8_t cmd, uint16_t n)
{
    const uint16_t len = (uint16_t)(n + 2u);
    l->tx[0] = SBFW_SYNC0;
    l->tx[1] = SBFW_SYNC1;
    sbfw_put_u16(l->tx + 2, len);
    l->tx[4] = l->req_seq;
    l->tx[5] = cmd;
    sbfw_put_u16(l->tx + 4u + len, sbfw_crc16(l->tx + 2, (uint16_t)(len + 2u), 0xFFFFu));
    l->tx_len = (uint16_t)(len + 6u);
    l->cache_valid = 1u;
    l->cache_seq = l->req_seq;
    l->cache_crc = l->req_crc;
    sbfw_link_resend(l);
}
