/*
 * libFuzzer target: the streaming extractor API and model of a generated firmware
 * (<name>_stream.h, <name>_kernel.h, <name>.h), with any sample values (NaN, inf, extremes).
 *
 * Built by fuzz/c_targets.py with clang -fsanitize=fuzzer,address,undefined. The input is a
 * list of operations (op byte, then its data):
 *   0 reset;  1 add one sample per channel, compute when a window completes, run the model;
 *   2 the same through <name>_stream_push;  3 the header API on fuzzed features: select from
 *   the candidate vector, quantise (fixed point) and predict;  4 a block of rows (count u8,
 *   then count rows) through <name>_stream_add_rows until all are stored, computing at each
 *   window end.
 * Besides the sanitizers it checks the window count after every sample:
 *   windows == (n >= WINDOW ? (n - WINDOW) / HOP + 1 : 0), n = samples since the last reset;
 * and after every <name>_stream_add_rows call that the context equals a copy given the same
 * rows by <name>_stream_add one at a time, and that the call stopped exactly at a window end.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbmodel.h"
#include "sbmodel_kernel.h"
#include "sbmodel_stream.h"

#if SBMODEL_NUMERIC_CODE == 0
typedef float fuzz_score_t;
#elif SBMODEL_NUMERIC_CODE == 1
typedef int16_t fuzz_score_t;
#else
typedef int32_t fuzz_score_t;
#endif

static size_t fuzz_take(const uint8_t *d, size_t n, size_t *i, void *out, size_t size)
{
    size_t got = n - *i < size ? n - *i : size;
    memset(out, 0, size);
    memcpy(out, d + *i, got);
    *i += got;
    return got;
}

static void fuzz_check_windows(const sbmodel_stream_t *s, uint64_t n)
{
    const uint64_t expected = n >= SBMODEL_WINDOW ? (n - SBMODEL_WINDOW) / SBMODEL_HOP + 1u : 0u;
    if (s->windows != expected || s->n_seen != n) {
        abort();
    }
}

static void fuzz_header_api(const uint8_t *d, size_t n, size_t *i)
{
    float candidates[SBMODEL_N_CANDIDATES], features[SBMODEL_N_FEATURES];
    fuzz_score_t scores[SBMODEL_N_TARGETS];
    fuzz_take(d, n, i, candidates, sizeof candidates);
    sbmodel_select(candidates, features);
#if SBMODEL_NUMERIC_CODE == 0
    sbmodel_predict(features, scores);
#elif SBMODEL_NUMERIC_CODE == 1
    {
        int16_t q[SBMODEL_N_FEATURES];
        sbmodel_quantize_q15(features, q);
        sbmodel_predict_q15(q, scores);
    }
#else
    {
        int32_t q[SBMODEL_N_FEATURES];
        sbmodel_quantize_q31(features, q);
        sbmodel_predict_q31(q, scores);
    }
#endif
    (void)scores;
}

/* Op 4: *n advances by the rows stored; returns whether the last call completed a window. */
static int fuzz_rows(sbmodel_stream_t *s, const uint8_t *d, size_t n_in, size_t *i, uint64_t *n)
{
    static sbmodel_sample_t rows[255u * SBMODEL_N_CHANNELS];
    static sbmodel_stream_t one;
    uint8_t count = 0u;
    unsigned left, at = 0u;
    int ready = 0;
    fuzz_take(d, n_in, i, &count, 1u);
    left = count;
    fuzz_take(d, n_in, i, rows, (size_t)count * sizeof rows[0] * SBMODEL_N_CHANNELS);
    while (left > 0u) {
        unsigned stored = 0u, k;
        int ready_one = 0;
        one = *s;
        ready = sbmodel_stream_add_rows(s, rows + at * SBMODEL_N_CHANNELS, left, &stored);
        if (stored == 0u || stored > left || (stored < left && !ready)) {
            abort();
        }
        for (k = 0u; k < stored; ++k) {
            if (ready_one) {
                abort();                    /* a window ended before the call stopped */
            }
            ready_one = sbmodel_stream_add(&one, rows + (at + k) * SBMODEL_N_CHANNELS);
        }
        if (ready_one != ready || memcmp(&one, s, sizeof one) != 0) {
            abort();
        }
        *n += stored;
        fuzz_check_windows(s, *n);
        at += stored;
        left -= stored;
        if (ready) {
            sbmodel_stream_compute(s);
        }
    }
    return ready;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sbmodel_stream_t s;
    sbmodel_sample_t frame[SBMODEL_N_CHANNELS];
    fuzz_score_t scores[SBMODEL_N_TARGETS];
    uint64_t n = 0u;
    size_t i = 0u;
    sbmodel_stream_reset(&s);
    while (i < size) {
        const uint8_t op = (uint8_t)(data[i++] % 5u);
        if (op == 0u) {
            sbmodel_stream_reset(&s);
            n = 0u;
        } else if (op == 3u) {
            fuzz_header_api(data, size, &i);
        } else if (op == 4u) {
            if (fuzz_rows(&s, data, size, &i, &n)) {
                sbmodel_fw_predict(SBMODEL_STREAM_INPUTS(&s), scores);
            }
        } else {
            int ready;
            fuzz_take(data, size, &i, frame, sizeof frame);
            if (op == 1u) {
                ready = sbmodel_stream_add(&s, frame);
                if (ready) {
                    sbmodel_stream_compute(&s);
                }
            } else {
                ready = sbmodel_stream_push(&s, frame);
            }
            fuzz_check_windows(&s, ++n);
            if (ready) {
                sbmodel_fw_predict(SBMODEL_STREAM_INPUTS(&s), scores);
            }
        }
    }
    (void)scores;
    return 0;
}
