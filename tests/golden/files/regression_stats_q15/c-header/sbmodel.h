/*
 * sbmodel.h: sparse linear model exported by sensorbudget 0.1.0 (sensorbudget export c-header).
 *     Generated file, do not edit.
 * Header format version 1; bundle sha256
 *     d05261749570f5c7707066abdf82f2dad72bf0636f5bb1b25e282e60a652b4c0.
 * Task regression; 6 selected features of 6 candidates; 2 targets; numeric q15.
 *
 * Required sensors (2):
 *   [0] "ankle" {"average_power_w": 6.4e-05, "channels": ["ankle_vert", "ankle_horiz_fwd",
 *       "ankle_horiz_lateral"], "energy_per_prediction_j": 3.2e-05, "energy_per_reading_j": 1e-06,
 *       "name": "ankle", "readings_per_prediction": 32, "sample_rate_hz": 64.0, "unit_price": 1.0}
 *   [1] "leg" {"average_power_w": 6.4e-05, "channels": ["leg_vert", "leg_horiz_fwd",
 *       "leg_horiz_lateral"], "energy_per_prediction_j": 3.2e-05, "energy_per_reading_j": 1e-06,
 *       "name": "leg", "readings_per_prediction": 32, "sample_rate_hz": 64.0, "unit_price": 1.0}
 * Required extractors (6), to compute on the device:
 *   [0] "ankle_vert.min" sensors ["ankle"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["ankle_vert"], "fixed_point": true, "hop": 32, "kind": "min",
 *       "sample_rate_hz": 64.0, "window": 64}
 *   [1] "ankle_horiz_lateral.rms" sensors ["ankle"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["ankle_horiz_lateral"], "fixed_point": true, "hop":
 *       32, "kind": "rms", "sample_rate_hz": 64.0, "window": 64}
 *   [2] "leg_horiz_fwd.mean" sensors ["leg"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["leg_horiz_fwd"], "fixed_point": true, "hop": 32, "kind": "mean",
 *       "sample_rate_hz": 64.0, "window": 64}
 *   [3] "leg_horiz_fwd.last" sensors ["leg"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["leg_horiz_fwd"], "fixed_point": true, "hop": 32, "kind": "last",
 *       "sample_rate_hz": 64.0, "window": 64}
 *   [4] "leg_horiz_lateral.ptp" sensors ["leg"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["leg_horiz_lateral"], "fixed_point": true, "hop": 32,
 *       "kind": "ptp", "sample_rate_hz": 64.0, "window": 64}
 *   [5] "leg_acc.mag_mean" sensors ["leg"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["leg_vert", "leg_horiz_fwd", "leg_horiz_lateral"], "fixed_point": true, "hop":
 *       32, "kind": "mag_mean", "sample_rate_hz": 64.0, "window": 64}
 * Input features, in the order sbmodel_predict expects them:
 *   [0] "ankle_vert.min" candidate column 2, extractor [0], training range [-1013, 787]
 *   [1] "ankle_horiz_lateral.rms" candidate column 4, extractor [1], training range [207.01,
 *       1321.26]
 *   [2] "leg_horiz_fwd.mean" candidate column 1, extractor [2], training range [-306.844, 118.641]
 *   [3] "leg_horiz_fwd.last" candidate column 5, extractor [3], training range [-856, 630]
 *   [4] "leg_horiz_lateral.ptp" candidate column 3, extractor [4], training range [238, 5064]
 *   [5] "leg_acc.mag_mean" candidate column 0, extractor [5], training range [901.84, 1333.9]
 * Targets (scores[j]):
 *   [0] "speed"
 *   [1] "load"
 */

#ifndef SBMODEL_H
#define SBMODEL_H

#include <stddef.h>
#include <stdint.h>

#define SBMODEL_FORMAT_VERSION 1
#define SBMODEL_N_FEATURES 6
#define SBMODEL_N_TARGETS 2
#define SBMODEL_N_CANDIDATES 6
#define SBMODEL_N_REQUIRED_EXTRACTORS 6
#define SBMODEL_N_REQUIRED_SENSORS 2
#define SBMODEL_TASK_REGRESSION 1
#define SBMODEL_NUMERIC_Q15 1

/* Index of each input feature in features[] and of each target in scores[]. */
#define SBMODEL_F_ANKLE_VERT_MIN 0
#define SBMODEL_F_ANKLE_HORIZ_LATERAL_RMS 1
#define SBMODEL_F_LEG_HORIZ_FWD_MEAN 2
#define SBMODEL_F_LEG_HORIZ_FWD_LAST 3
#define SBMODEL_F_LEG_HORIZ_LATERAL_PTP 4
#define SBMODEL_F_LEG_ACC_MAG_MEAN 5
#define SBMODEL_T_SPEED 0
#define SBMODEL_T_LOAD 1

static const char *const sbmodel_feature_names[SBMODEL_N_FEATURES] = {
    "ankle_vert.min", "ankle_horiz_lateral.rms", "leg_horiz_fwd.mean", "leg_horiz_fwd.last",
    "leg_horiz_lateral.ptp", "leg_acc.mag_mean"
};

static const unsigned sbmodel_feature_columns[SBMODEL_N_FEATURES] = {
    2u,  /* "ankle_vert.min" */
    4u,  /* "ankle_horiz_lateral.rms" */
    1u,  /* "leg_horiz_fwd.mean" */
    5u,  /* "leg_horiz_fwd.last" */
    3u,  /* "leg_horiz_lateral.ptp" */
    0u   /* "leg_acc.mag_mean" */
};

static const int sbmodel_feature_extractor[SBMODEL_N_FEATURES] = {
    0,  /* "ankle_vert.min" */
    1,  /* "ankle_horiz_lateral.rms" */
    2,  /* "leg_horiz_fwd.mean" */
    3,  /* "leg_horiz_fwd.last" */
    4,  /* "leg_horiz_lateral.ptp" */
    5   /* "leg_acc.mag_mean" */
};

static const char *const sbmodel_target_names[SBMODEL_N_TARGETS] = {
    "speed", "load"
};

static const char *const sbmodel_required_extractors[6] = {
    "ankle_vert.min", "ankle_horiz_lateral.rms", "leg_horiz_fwd.mean", "leg_horiz_fwd.last",
    "leg_horiz_lateral.ptp", "leg_acc.mag_mean"
};

static const char *const sbmodel_extractor_params_json[6] = {
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_vert\"], \"fixed_point\":"
    " true, \"hop\": 32, \"kind\": \"min\", \"sample_rate_hz\": 64.0, \"window\": 64}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_horiz_lateral\"], \"fixed"
    "_point\": true, \"hop\": 32, \"kind\": \"rms\", \"sample_rate_hz\": 64.0, \"window\": 64}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"leg_horiz_fwd\"], \"fixed_point"
    "\": true, \"hop\": 32, \"kind\": \"mean\", \"sample_rate_hz\": 64.0, \"window\": 64}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"leg_horiz_fwd\"], \"fixed_point"
    "\": true, \"hop\": 32, \"kind\": \"last\", \"sample_rate_hz\": 64.0, \"window\": 64}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"leg_horiz_lateral\"], \"fixed_p"
    "oint\": true, \"hop\": 32, \"kind\": \"ptp\", \"sample_rate_hz\": 64.0, \"window\": 64}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"leg_vert\", \"leg_horiz_fwd\", "
    "\"leg_horiz_lateral\"], \"fixed_point\": true, \"hop\": 32, \"kind\": \"mag_mean\", \"sample"
    "_rate_hz\": 64.0, \"window\": 64}")
};

static const char *const sbmodel_required_sensors[2] = {
    "ankle", "leg"
};

/* Training range of each input feature (float32, rounded outwards). */

static const float sbmodel_x_min[SBMODEL_N_FEATURES] = {
    -1013.0f, 207.0103f, -306.84375f, -856.0f, 238.0f, 901.840027f
};

static const float sbmodel_x_max[SBMODEL_N_FEATURES] = {
    787.0f, 1321.25684f, 118.640625f, 630.0f, 5064.0f, 1333.89551f
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
#define SBMODEL_Q15_WEIGHT_FRAC_BITS 28
#define SBMODEL_Q15_SCORE_FRAC_BITS 12
#define SBMODEL_Q15_SHIFT 16
/* |score - float64 model score| <= SBMODEL_Q15_ERROR_BOUND
 * for inputs in [x_min, x_max] (largest reachable |score| 7.27775). */
#define SBMODEL_Q15_ERROR_BOUND 4.1e-4f

/* Input quantisation: centre and QMAX / half-width of each training range. */

static const float sbmodel_q15_input_offset[SBMODEL_N_FEATURES] = {
    -113.0f, 764.133545f, -94.1015625f, -113.0f, 2651.0f, 1117.8678f
};

static const float sbmodel_q15_input_inv_scale[SBMODEL_N_FEATURES] = {
    36.4077415f, 58.8145752f, 154.021957f, 44.1008987f, 13.5793486f, 151.679428f
};

/* Weights with the input scales folded in, times 2^28;
 * intercepts with the offsets folded in, same scale. */

static const int16_t sbmodel_q15_weights[SBMODEL_N_FEATURES][SBMODEL_N_TARGETS] = {
    { 5019, 16946 },  /* [0] "ankle_vert.min" */
    { -5757, -23014 },  /* [1] "ankle_horiz_lateral.rms" */
    { 7118, 11890 },  /* [2] "leg_horiz_fwd.mean" */
    { 2271, 4712 },  /* [3] "leg_horiz_fwd.last" */
    { 2306, 273 },  /* [4] "leg_horiz_lateral.ptp" */
    { -665, -1588 }   /* [5] "leg_acc.mag_mean" */
};

static const int32_t sbmodel_q15_intercepts[SBMODEL_N_TARGETS] = {
    INT32_C(155452512), INT32_C(-39272450)
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
