/*
 * sbmodel.h: sparse linear model exported by sensorbudget 0.1.0 (sensorbudget export c-header).
 *     Generated file, do not edit.
 * Header format version 1; bundle sha256
 *     6f36b56d9bdc5138f6ea21c20aa59207c8fdd220ae34d1712db792006c588433.
 * Task multilabel; 6 selected features of 8 candidates; 5 targets; numeric float32.
 *
 * Required sensors (1):
 *   [0] "trunk" {"average_power_w": 6.4e-05, "channels": ["trunk_vert", "trunk_horiz_fwd",
 *       "trunk_horiz_lateral"], "energy_per_prediction_j": 1.2e-05, "energy_per_reading_j": 1e-06,
 *       "name": "trunk", "readings_per_prediction": 12, "sample_rate_hz": 64.0, "unit_price": 1.0}
 * Required extractors (6), to compute on the device:
 *   [0] "trunk_horiz_lateral.ptp" sensors ["trunk"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["trunk_horiz_lateral"], "fixed_point": true, "hop":
 *       12, "kind": "ptp", "sample_rate_hz": 64.0, "window": 12}
 *   [1] "trunk_vert.ptp" sensors ["trunk"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["trunk_vert"], "fixed_point": true, "hop": 12, "kind": "ptp",
 *       "sample_rate_hz": 64.0, "window": 12}
 *   [2] "trunk_vert.jerk.mad" sensors ["trunk"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["trunk_vert"], "fixed_point": false, "hop": 12,
 *       "kind": "mad", "preprocess": "jerk", "sample_rate_hz": 64.0, "window": 12}
 *   [3] "trunk_horiz_lateral.zcr" sensors ["trunk"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["trunk_horiz_lateral"], "fixed_point": true, "hop":
 *       12, "kind": "zcr", "sample_rate_hz": 64.0, "window": 12}
 *   [4] "trunk_vert.zcr" sensors ["trunk"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["trunk_vert"], "fixed_point": true, "hop": 12, "kind": "zcr",
 *       "sample_rate_hz": 64.0, "window": 12}
 *   [5] "trunk_vert.max" sensors ["trunk"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["trunk_vert"], "fixed_point": true, "hop": 12, "kind": "max",
 *       "sample_rate_hz": 64.0, "window": 12}
 * Input features, in the order sbmodel_predict expects them:
 *   [0] "trunk_horiz_lateral.ptp" candidate column 4, extractor [0], training range [27, 2519]
 *   [1] "trunk_vert.ptp" candidate column 1, extractor [1], training range [79, 4710]
 *   [2] "trunk_vert.jerk.mad" candidate column 7, extractor [2], training range [11.9, 1401.1]
 *   [3] "trunk_horiz_lateral.zcr" candidate column 5, extractor [3], training range [0.0909091,
 *       0.636364]
 *   [4] "trunk_vert.zcr" candidate column 2, extractor [4], training range [0.0909091, 0.727273]
 *   [5] "trunk_vert.max" candidate column 0, extractor [5], training range [492, 5659]
 * Targets (scores[j]):
 *   [0] "gait=run"
 *   [1] "gait=sit"
 *   [2] "gait=walk"
 *   [3] "terrain=flat"
 *   [4] "terrain=hill"
 */

#ifndef SBMODEL_H
#define SBMODEL_H

#include <stddef.h>
#include <stdint.h>

#define SBMODEL_FORMAT_VERSION 1
#define SBMODEL_N_FEATURES 6
#define SBMODEL_N_TARGETS 5
#define SBMODEL_N_CANDIDATES 8
#define SBMODEL_N_REQUIRED_EXTRACTORS 6
#define SBMODEL_N_REQUIRED_SENSORS 1
#define SBMODEL_TASK_MULTILABEL 1
#define SBMODEL_NUMERIC_FLOAT32 1

/* Index of each input feature in features[] and of each target in scores[]. */
#define SBMODEL_F_TRUNK_HORIZ_LATERAL_PTP 0
#define SBMODEL_F_TRUNK_VERT_PTP 1
#define SBMODEL_F_TRUNK_VERT_JERK_MAD 2
#define SBMODEL_F_TRUNK_HORIZ_LATERAL_ZCR 3
#define SBMODEL_F_TRUNK_VERT_ZCR 4
#define SBMODEL_F_TRUNK_VERT_MAX 5
#define SBMODEL_T_GAIT_RUN 0
#define SBMODEL_T_GAIT_SIT 1
#define SBMODEL_T_GAIT_WALK 2
#define SBMODEL_T_TERRAIN_FLAT 3
#define SBMODEL_T_TERRAIN_HILL 4

static const char *const sbmodel_feature_names[SBMODEL_N_FEATURES] = {
    "trunk_horiz_lateral.ptp", "trunk_vert.ptp", "trunk_vert.jerk.mad", "trunk_horiz_lateral.zcr",
    "trunk_vert.zcr", "trunk_vert.max"
};

static const unsigned sbmodel_feature_columns[SBMODEL_N_FEATURES] = {
    4u,  /* "trunk_horiz_lateral.ptp" */
    1u,  /* "trunk_vert.ptp" */
    7u,  /* "trunk_vert.jerk.mad" */
    5u,  /* "trunk_horiz_lateral.zcr" */
    2u,  /* "trunk_vert.zcr" */
    0u   /* "trunk_vert.max" */
};

static const int sbmodel_feature_extractor[SBMODEL_N_FEATURES] = {
    0,  /* "trunk_horiz_lateral.ptp" */
    1,  /* "trunk_vert.ptp" */
    2,  /* "trunk_vert.jerk.mad" */
    3,  /* "trunk_horiz_lateral.zcr" */
    4,  /* "trunk_vert.zcr" */
    5   /* "trunk_vert.max" */
};

static const char *const sbmodel_target_names[SBMODEL_N_TARGETS] = {
    "gait=run", "gait=sit", "gait=walk", "terrain=flat", "terrain=hill"
};

static const char *const sbmodel_required_extractors[6] = {
    "trunk_horiz_lateral.ptp", "trunk_vert.ptp", "trunk_vert.jerk.mad", "trunk_horiz_lateral.zcr",
    "trunk_vert.zcr", "trunk_vert.max"
};

static const char *const sbmodel_extractor_params_json[6] = {
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_horiz_lateral\"], \"fixed"
    "_point\": true, \"hop\": 12, \"kind\": \"ptp\", \"sample_rate_hz\": 64.0, \"window\": 12}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_vert\"], \"fixed_point\":"
    " true, \"hop\": 12, \"kind\": \"ptp\", \"sample_rate_hz\": 64.0, \"window\": 12}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_vert\"], \"fixed_point\":"
    " false, \"hop\": 12, \"kind\": \"mad\", \"preprocess\": \"jerk\", \"sample_rate_hz\": 64.0, "
    "\"window\": 12}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_horiz_lateral\"], \"fixed"
    "_point\": true, \"hop\": 12, \"kind\": \"zcr\", \"sample_rate_hz\": 64.0, \"window\": 12}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_vert\"], \"fixed_point\":"
    " true, \"hop\": 12, \"kind\": \"zcr\", \"sample_rate_hz\": 64.0, \"window\": 12}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_vert\"], \"fixed_point\":"
    " true, \"hop\": 12, \"kind\": \"max\", \"sample_rate_hz\": 64.0, \"window\": 12}")
};

static const char *const sbmodel_required_sensors[1] = {
    "trunk"
};

/* Training range of each input feature (float32, rounded outwards). */

static const float sbmodel_x_min[SBMODEL_N_FEATURES] = {
    27.0f, 79.0f, 11.8999996f, 0.0909090936f, 0.0909090936f, 492.0f
};

static const float sbmodel_x_max[SBMODEL_N_FEATURES] = {
    2519.0f, 4710.0f, 1401.09998f, 0.636363626f, 0.727272749f, 5659.0f
};

/* Copy the selected features out of a full candidate vector (SBMODEL_N_CANDIDATES floats). */
static inline void sbmodel_select(const float *candidates, float *features)
{
    size_t i;
    for (i = 0; i < SBMODEL_N_FEATURES; ++i) {
        features[i] = candidates[sbmodel_feature_columns[i]];
    }
}

/* Weights (selected features x targets, selection order) and intercepts, float32. */

static const float sbmodel_weights[SBMODEL_N_FEATURES][SBMODEL_N_TARGETS] = {
    /* [0] "trunk_horiz_lateral.ptp" */
    { 0.00104648387f, -0.000502493465f, -0.000543990347f, 0.000477243942f, -0.000477243942f },
    /* [1] "trunk_vert.ptp" */
    { 0.00098595093f, -0.000220714122f, -0.000765236851f, -0.00216317829f, 0.00216317829f },
    /* [2] "trunk_vert.jerk.mad" */
    { -0.00190586445f, 0.000396852585f, 0.00150901184f, 0.00413057767f, -0.00413057767f },
    /* [3] "trunk_horiz_lateral.zcr" */
    { -0.0146529935f, 2.24432969f, -2.22967672f, -1.68206847f, 1.68206847f },
    /* [4] "trunk_vert.zcr" */
    { -0.0937740505f, 0.674824595f, -0.581050575f, -1.72382224f, 1.72382224f },
    /* [5] "trunk_vert.max" */
    { -0.000131198802f, 7.42934499e-05f, 5.69053554e-05f, 0.000305219815f, -0.000305219815f } 
};

static const float sbmodel_intercepts[SBMODEL_N_TARGETS] = {
    -1.0890826f, -0.508422315f, 0.597504914f, 0.898211658f, -0.898211658f
};

/* scores[j] = intercepts[j] + sum_i weights[i][j] * features[i], for j = 0..SBMODEL_N_TARGETS-1.
 * Evaluated in float (single precision) exactly in this order: acc = intercepts[j]; then for
 * i = 0, 1, ..., SBMODEL_N_FEATURES-1: acc = acc + weights[i][j] * features[i],
 * each product and sum rounded to float separately. Compile with -ffp-contract=off (implied by
 * GCC's -std=c99) so the multiply-add is not fused into an FMA; the result then equals numpy
 * float32 computed in the same order bit for bit. */
static inline void sbmodel_predict(const float *features, float *scores)
{
    size_t i, j;
    for (j = 0; j < SBMODEL_N_TARGETS; ++j) {
        float acc = sbmodel_intercepts[j];
        for (i = 0; i < SBMODEL_N_FEATURES; ++i) {
            acc += sbmodel_weights[i][j] * features[i];
        }
        scores[j] = acc;
    }
}

/* labels[j] = 1 if scores[j] > 0 else 0 (multi-label). */
static inline void sbmodel_labels(const float *features, unsigned char *labels)
{
    float scores[SBMODEL_N_TARGETS];
    size_t j;
    sbmodel_predict(features, scores);
    for (j = 0; j < SBMODEL_N_TARGETS; ++j) {
        labels[j] = (unsigned char)(scores[j] > 0);
    }
}

/* Label thresholds: 0 (the sign of the score; the bundle has no calibrated ones). */

static const float sbmodel_thresholds[SBMODEL_N_TARGETS] = {
    0.0f, 0.0f, 0.0f, 0.0f, 0.0f
};

/* Calibrated decisions: decisions[j] = 1 if scores[j] > sbmodel_thresholds[j] else 0. */
static inline void sbmodel_decide(const float *features, unsigned char *decisions)
{
    float scores[SBMODEL_N_TARGETS];
    size_t j;
    sbmodel_predict(features, scores);
    for (j = 0; j < SBMODEL_N_TARGETS; ++j) {
        decisions[j] = (unsigned char)(scores[j] > sbmodel_thresholds[j]);
    }
}

#endif /* SBMODEL_H */
