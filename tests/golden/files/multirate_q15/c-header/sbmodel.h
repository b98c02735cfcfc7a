/*
 * sbmodel.h: sparse linear model exported by sensorbudget 0.1.0 (sensorbudget export c-header).
 *     Generated file, do not edit.
 * Header format version 1; bundle sha256
 *     da263e1cdc62e6fc48fa9673d4c5cb861f45ea738ab3c7d27cfc71106b105b95.
 * Task regression; 4 selected features of 4 candidates; 2 targets; numeric q15.
 *
 * Required sensors (2):
 *   [0] "ankle" {"average_power_w": 6.4e-05, "channels": ["ankle_vert", "ankle_horiz_fwd",
 *       "ankle_horiz_lateral"], "energy_per_prediction_j": 1.6e-05, "energy_per_reading_j": 1e-06,
 *       "energy_per_reading_j_by_rate": [1e-06, 1e-06, 1e-06], "name": "ankle", "rates_hz": [16.0,
 *       32.0, 64.0], "readings_per_prediction": 16, "sample_rate_hz": 64.0, "unit_price": 1.0}
 *   [1] "trunk" {"average_power_w": 6.4e-05, "channels": ["trunk_vert"], "energy_per_prediction_j":
 *       1.6e-05, "energy_per_reading_j": 1e-06, "energy_per_reading_j_by_rate": [1e-06, 1e-06],
 *       "name": "trunk", "rates_hz": [16.0, 64.0], "readings_per_prediction": 16, "sample_rate_hz":
 *       64.0, "unit_price": 1.0}
 * Required extractors (4), to compute on the device:
 *   [0] "ankle_horiz_fwd@16.ptp" sensors ["ankle"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["ankle_horiz_fwd"], "fixed_point": true, "hop": 4,
 *       "kind": "ptp", "sample_rate_hz": 16.0, "window": 8}
 *   [1] "trunk_vert@16.std" sensors ["trunk"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["trunk_vert"], "fixed_point": false, "hop": 4, "kind": "std",
 *       "sample_rate_hz": 16.0, "window": 8}
 *   [2] "ankle_acc@16.mag_max" sensors ["ankle"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["ankle_vert", "ankle_horiz_fwd",
 *       "ankle_horiz_lateral"], "fixed_point": true, "hop": 4, "kind": "mag_max", "sample_rate_hz":
 *       16.0, "window": 8}
 *   [3] "ankle_vert@64.mean" sensors ["ankle"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["ankle_vert"], "fixed_point": true, "hop": 16,
 *       "kind": "mean", "sample_rate_hz": 64.0, "window": 32}
 * Input features, in the order sbmodel_predict expects them:
 *   [0] "ankle_horiz_fwd@16.ptp" candidate column 1, extractor [0], training range [96, 3682]
 *   [1] "trunk_vert@16.std" candidate column 3, extractor [1], training range [73.1249, 720.438]
 *   [2] "ankle_acc@16.mag_max" candidate column 2, extractor [2], training range [904.02, 3461.99]
 *   [3] "ankle_vert@64.mean" candidate column 0, extractor [3], training range [465.781, 1450.28]
 * Targets (scores[j]):
 *   [0] "speed"
 *   [1] "load"
 */

#ifndef SBMODEL_H
#define SBMODEL_H

#include <stddef.h>
#include <stdint.h>

#define SBMODEL_FORMAT_VERSION 1
#define SBMODEL_N_FEATURES 4
#define SBMODEL_N_TARGETS 2
#define SBMODEL_N_CANDIDATES 4
#define SBMODEL_N_REQUIRED_EXTRACTORS 4
#define SBMODEL_N_REQUIRED_SENSORS 2
#define SBMODEL_TASK_REGRESSION 1
#define SBMODEL_NUMERIC_Q15 1

/* Index of each input feature in features[] and of each target in scores[]. */
#define SBMODEL_F_ANKLE_HORIZ_FWD_16_PTP 0
#define SBMODEL_F_TRUNK_VERT_16_STD 1
#define SBMODEL_F_ANKLE_ACC_16_MAG_MAX 2
#define SBMODEL_F_ANKLE_VERT_64_MEAN 3
#define SBMODEL_T_SPEED 0
#define SBMODEL_T_LOAD 1

static const char *const sbmodel_feature_names[SBMODEL_N_FEATURES] = {
    "ankle_horiz_fwd@16.ptp", "trunk_vert@16.std", "ankle_acc@16.mag_max", "ankle_vert@64.mean"
};

static const unsigned sbmodel_feature_columns[SBMODEL_N_FEATURES] = {
    1u,  /* "ankle_horiz_fwd@16.ptp" */
    3u,  /* "trunk_vert@16.std" */
    2u,  /* "ankle_acc@16.mag_max" */
    0u   /* "ankle_vert@64.mean" */
};

static const int sbmodel_feature_extractor[SBMODEL_N_FEATURES] = {
    0,  /* "ankle_horiz_fwd@16.ptp" */
    1,  /* "trunk_vert@16.std" */
    2,  /* "ankle_acc@16.mag_max" */
    3   /* "ankle_vert@64.mean" */
};

static const char *const sbmodel_target_names[SBMODEL_N_TARGETS] = {
    "speed", "load"
};

static const char *const sbmodel_required_extractors[4] = {
    "ankle_horiz_fwd@16.ptp", "trunk_vert@16.std", "ankle_acc@16.mag_max", "ankle_vert@64.mean"
};

static const char *const sbmodel_extractor_params_json[4] = {
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_horiz_fwd\"], \"fixed_poi"
    "nt\": true, \"hop\": 4, \"kind\": \"ptp\", \"sample_rate_hz\": 16.0, \"window\": 8}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_vert\"], \"fixed_point\":"
    " false, \"hop\": 4, \"kind\": \"std\", \"sample_rate_hz\": 16.0, \"window\": 8}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_vert\", \"ankle_horiz_fwd"
    "\", \"ankle_horiz_lateral\"], \"fixed_point\": true, \"hop\": 4, \"kind\": \"mag_max\", \"sa"
    "mple_rate_hz\": 16.0, \"window\": 8}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_vert\"], \"fixed_point\":"
    " true, \"hop\": 16, \"kind\": \"mean\", \"sample_rate_hz\": 64.0, \"window\": 32}")
};

static const char *const sbmodel_required_sensors[2] = {
    "ankle", "trunk"
};

/* Training range of each input feature (float32, rounded outwards). */

static const float sbmodel_x_min[SBMODEL_N_FEATURES] = {
    96.0f, 73.1248932f, 904.020447f, 465.78125f
};

static const float sbmodel_x_max[SBMODEL_N_FEATURES] = {
    3682.0f, 720.437561f, 3461.98633f, 1450.28125f
};

/* Copy the selected features out of a full candidate vector
 * (SBMODEL_N_CANDIDATES floats). */
static inline void sbmodel_select(const float *candidates, float *features)
{
    size_t i;
    for (i = 0; i < SBMODEL_N_FEATURES; ++i) {
        features[i] = candidates[sbmodel_feature_columns[i]];
    }
}

/* Q15: score = scores_q * 2^-SBMODEL_Q15_SCORE_FRAC_BITS;
 * accumulators hold score * 2^SBMODEL_Q15_WEIGHT_FRAC_BITS. */
#define SBMODEL_Q15_WEIGHT_FRAC_BITS 26
#define SBMODEL_Q15_SCORE_FRAC_BITS 10
#define SBMODEL_Q15_SHIFT 16
/* |score - float64 model score| <= SBMODEL_Q15_ERROR_BOUND
 * for inputs in [x_min, x_max] (largest reachable |score| 17.3879). */
#define SBMODEL_Q15_ERROR_BOUND 1.2e-3f

/* Input quantisation: centre and QMAX / half-width of each training range. */

static const float sbmodel_q15_input_offset[SBMODEL_N_FEATURES] = {
    1889.0f, 396.781219f, 2183.00342f, 958.03125f
};

static const float sbmodel_q15_input_inv_scale[SBMODEL_N_FEATURES] = {
    18.2749405f, 101.240005f, 25.6195507f, 66.5657043f
};

/* Weights with the input scales folded in, times 2^26;
 * intercepts with the offsets folded in, same scale. */

static const int16_t sbmodel_q15_weights[SBMODEL_N_FEATURES][SBMODEL_N_TARGETS] = {
    { 3244, 11247 },  /* [0] "ankle_horiz_fwd@16.ptp" */
    { 1730, 4632 },  /* [1] "trunk_vert@16.std" */
    { -1669, -8112 },  /* [2] "ankle_acc@16.mag_max" */
    { 489, 2255 }   /* [3] "ankle_vert@64.mean" */
};

static const int32_t sbmodel_q15_intercepts[SBMODEL_N_TARGETS] = {
    INT32_C(135641932), INT32_C(306872435)
};

/* features_q[i] = sat(round((features[i] - input_offset[i]) * input_inv_scale[i])), computed in
 * float, NaN -> 0, saturated to +-32767, rounded half away from zero. */
static inline void sbmodel_quantize_q15(const float *features, int16_t *features_q)
{
    size_t i;
    for (i = 0; i < SBMODEL_N_FEATURES; ++i) {
        float v = (features[i] - sbmodel_q15_input_offset[i])
            * sbmodel_q15_input_inv_scale[i];
        if (v != v) {
            v = 0.0f;
        }
        if (v > 32767.0f) {
            v = 32767.0f;
        } else if (v < -32767.0f) {
            v = -32767.0f;
        }
        features_q[i] = (int16_t)(v >= 0.0f ? (int16_t)(v + 0.5f) : -(int16_t)(0.5f - v));
    }
}

/* Rescale an accumulator to a score, half away from zero:
 * sat(round(acc / 2^SBMODEL_Q15_SHIFT)).
 * |acc| + 2^(SHIFT-1) cannot overflow int32_t for any int16_t inputs (checked at export). */
static inline int16_t sbmodel_q15_rescale(int32_t acc)
{
    const int32_t half = (int32_t)1 << (SBMODEL_Q15_SHIFT - 1);
    const int32_t div = (int32_t)1 << SBMODEL_Q15_SHIFT;
    acc = acc >= 0 ? (acc + half) / div : -((-acc + half) / div);
    if (acc > INT32_C(32767)) {
        acc = INT32_C(32767);
    } else if (acc < INT32_C(-32768)) {
        acc = INT32_C(-32768);
    }
    return (int16_t)acc;
}

/* scores_q[j] = rescale(intercepts_q[j] + sum_i weights_q[i][j] * features_q[i]), with the sum
 * exact in int32_t; the score is
 * scores_q[j] * 2^-SBMODEL_Q15_SCORE_FRAC_BITS. */
static inline void sbmodel_predict_q15(const int16_t *features_q, int16_t *scores_q)
{
    size_t i, j;
    for (j = 0; j < SBMODEL_N_TARGETS; ++j) {
        int32_t acc = sbmodel_q15_intercepts[j];
        for (i = 0; i < SBMODEL_N_FEATURES; ++i) {
            acc += (int32_t)sbmodel_q15_weights[i][j] * (int32_t)features_q[i];
        }
        scores_q[j] = sbmodel_q15_rescale(acc);
    }
}


#endif /* SBMODEL_H */
