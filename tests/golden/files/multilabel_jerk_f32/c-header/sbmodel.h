/*
 * sbmodel.h: sparse linear model exported by sensorbudget 0.1.0 (sensorbudget export c-header).
 *     Generated file, do not edit.
 * Header format version 1; bundle sha256
 *     6289e5f9013069b0bb68d560bbb9278443b1476b2203b42123a5f9f1e8c475bf.
 * Task multilabel; 12 selected features of 12 candidates; 5 targets; numeric float32.
 *
 * Required sensors (1):
 *   [0] "trunk" {"average_power_w": 6.4e-05, "channels": ["trunk_vert", "trunk_horiz_fwd",
 *       "trunk_horiz_lateral"], "energy_per_prediction_j": 1.2e-05, "energy_per_reading_j": 1e-06,
 *       "name": "trunk", "readings_per_prediction": 12, "sample_rate_hz": 64.0, "unit_price": 1.0}
 * Required extractors (12), to compute on the device:
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
 *   [6] "trunk_horiz_lateral.highpass_0_9.last" sensors ["trunk"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["trunk_horiz_lateral"], "fixed_point": false, "hop":
 *       12, "kind": "last", "preprocess": "highpass", "preprocess_arg": 0.9, "sample_rate_hz":
 *       64.0, "window": 12}
 *   [7] "trunk_horiz_lateral.mad" sensors ["trunk"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["trunk_horiz_lateral"], "fixed_point": true, "hop":
 *       12, "kind": "mad", "sample_rate_hz": 64.0, "window": 12}
 *   [8] "trunk_vert.mad" sensors ["trunk"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["trunk_vert"], "fixed_point": true, "hop": 12, "kind": "mad",
 *       "sample_rate_hz": 64.0, "window": 12}
 *   [9] "trunk_vert.jerk.energy" sensors ["trunk"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["trunk_vert"], "fixed_point": false, "hop": 12,
 *       "kind": "energy", "preprocess": "jerk", "sample_rate_hz": 64.0, "window": 12}
 *   [10] "trunk_horiz_lateral.max" sensors ["trunk"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["trunk_horiz_lateral"], "fixed_point": true, "hop":
 *       12, "kind": "max", "sample_rate_hz": 64.0, "window": 12}
 *   [11] "trunk_horiz_lateral.highpass_0_9.min" sensors ["trunk"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["trunk_horiz_lateral"], "fixed_point": false, "hop":
 *       12, "kind": "min", "preprocess": "highpass", "preprocess_arg": 0.9, "sample_rate_hz": 64.0,
 *       "window": 12}
 * Input features, in the order sbmodel_predict expects them:
 *   [0] "trunk_horiz_lateral.ptp" candidate column 5, extractor [0], training range [27, 2519]
 *   [1] "trunk_vert.ptp" candidate column 1, extractor [1], training range [79, 4710]
 *   [2] "trunk_vert.jerk.mad" candidate column 9, extractor [2], training range [11.9, 1401.1]
 *   [3] "trunk_horiz_lateral.zcr" candidate column 6, extractor [3], training range [0.0909091,
 *       0.636364]
 *   [4] "trunk_vert.zcr" candidate column 2, extractor [4], training range [0.0909091, 0.727273]
 *   [5] "trunk_vert.max" candidate column 0, extractor [5], training range [492, 5659]
 *   [6] "trunk_horiz_lateral.highpass_0_9.last" candidate column 11, extractor [6], training range
 *       [-1479.05, 904.965]
 *   [7] "trunk_horiz_lateral.mad" candidate column 7, extractor [7], training range [5.90909,
 *       444.727]
 *   [8] "trunk_vert.mad" candidate column 3, extractor [8], training range [16.4545, 914.273]
 *   [9] "trunk_vert.jerk.energy" candidate column 8, extractor [9], training range [4758,
 *       4.07667e+07]
 *   [10] "trunk_horiz_lateral.max" candidate column 4, extractor [10], training range [-541, 1974]
 *   [11] "trunk_horiz_lateral.highpass_0_9.min" candidate column 10, extractor [11], training range
 *       [-2209.91, 0]
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
#define SBMODEL_N_FEATURES 12
#define SBMODEL_N_TARGETS 5
#define SBMODEL_N_CANDIDATES 12
#define SBMODEL_N_REQUIRED_EXTRACTORS 12
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
#define SBMODEL_F_TRUNK_HORIZ_LATERAL_HIGHPASS_0_9_LAST 6
#define SBMODEL_F_TRUNK_HORIZ_LATERAL_MAD 7
#define SBMODEL_F_TRUNK_VERT_MAD 8
#define SBMODEL_F_TRUNK_VERT_JERK_ENERGY 9
#define SBMODEL_F_TRUNK_HORIZ_LATERAL_MAX 10
#define SBMODEL_F_TRUNK_HORIZ_LATERAL_HIGHPASS_0_9_MIN 11
#define SBMODEL_T_GAIT_RUN 0
#define SBMODEL_T_GAIT_SIT 1
#define SBMODEL_T_GAIT_WALK 2
#define SBMODEL_T_TERRAIN_FLAT 3
#define SBMODEL_T_TERRAIN_HILL 4

static const char *const sbmodel_feature_names[SBMODEL_N_FEATURES] = {
    "trunk_horiz_lateral.ptp", "trunk_vert.ptp", "trunk_vert.jerk.mad", "trunk_horiz_lateral.zcr",
    "trunk_vert.zcr", "trunk_vert.max",
    "trunk_horiz_lateral.highpass_0_9.last", "trunk_horiz_lateral.mad", "trunk_vert.mad",
    "trunk_vert.jerk.energy", "trunk_horiz_lateral.max", "trunk_horiz_lateral.highpass_0_9.min"
};

static const unsigned sbmodel_feature_columns[SBMODEL_N_FEATURES] = {
    5u,  /* "trunk_horiz_lateral.ptp" */
    1u,  /* "trunk_vert.ptp" */
    9u,  /* "trunk_vert.jerk.mad" */
    6u,  /* "trunk_horiz_lateral.zcr" */
    2u,  /* "trunk_vert.zcr" */
    0u,  /* "trunk_vert.max" */
    11u,  /* "trunk_horiz_lateral.highpass_0_9.last" */
    7u,  /* "trunk_horiz_lateral.mad" */
    3u,  /* "trunk_vert.mad" */
    8u,  /* "trunk_vert.jerk.energy" */
    4u,  /* "trunk_horiz_lateral.max" */
    10u   /* "trunk_horiz_lateral.highpass_0_9.min" */
};

static const int sbmodel_feature_extractor[SBMODEL_N_FEATURES] = {
    0,  /* "trunk_horiz_lateral.ptp" */
    1,  /* "trunk_vert.ptp" */
    2,  /* "trunk_vert.jerk.mad" */
    3,  /* "trunk_horiz_lateral.zcr" */
    4,  /* "trunk_vert.zcr" */
    5,  /* "trunk_vert.max" */
    6,  /* "trunk_horiz_lateral.highpass_0_9.last" */
    7,  /* "trunk_horiz_lateral.mad" */
    8,  /* "trunk_vert.mad" */
    9,  /* "trunk_vert.jerk.energy" */
    10,  /* "trunk_horiz_lateral.max" */
    11   /* "trunk_horiz_lateral.highpass_0_9.min" */
};

static const char *const sbmodel_target_names[SBMODEL_N_TARGETS] = {
    "gait=run", "gait=sit", "gait=walk", "terrain=flat", "terrain=hill"
};

static const char *const sbmodel_required_extractors[12] = {
    "trunk_horiz_lateral.ptp", "trunk_vert.ptp", "trunk_vert.jerk.mad", "trunk_horiz_lateral.zcr",
    "trunk_vert.zcr", "trunk_vert.max",
    "trunk_horiz_lateral.highpass_0_9.last", "trunk_horiz_lateral.mad", "trunk_vert.mad",
    "trunk_vert.jerk.energy", "trunk_horiz_lateral.max", "trunk_horiz_lateral.highpass_0_9.min"
};

static const char *const sbmodel_extractor_params_json[12] = {
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
    " true, \"hop\": 12, \"kind\": \"max\", \"sample_rate_hz\": 64.0, \"window\": 12}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_horiz_lateral\"], \"fixed"
    "_point\": false, \"hop\": 12, \"kind\": \"last\", \"preprocess\": \"highpass\", \"preprocess"
    "_arg\": 0.9, \"sample_rate_hz\": 64.0, \"window\": 12}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_horiz_lateral\"], \"fixed"
    "_point\": true, \"hop\": 12, \"kind\": \"mad\", \"sample_rate_hz\": 64.0, \"window\": 12}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_vert\"], \"fixed_point\":"
    " true, \"hop\": 12, \"kind\": \"mad\", \"sample_rate_hz\": 64.0, \"window\": 12}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_vert\"], \"fixed_point\":"
    " false, \"hop\": 12, \"kind\": \"energy\", \"preprocess\": \"jerk\", \"sample_rate_hz\": 64."
    "0, \"window\": 12}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_horiz_lateral\"], \"fixed"
    "_point\": true, \"hop\": 12, \"kind\": \"max\", \"sample_rate_hz\": 64.0, \"window\": 12}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_horiz_lateral\"], \"fixed"
    "_point\": false, \"hop\": 12, \"kind\": \"min\", \"preprocess\": \"highpass\", \"preprocess_"
    "arg\": 0.9, \"sample_rate_hz\": 64.0, \"window\": 12}")
};

static const char *const sbmodel_required_sensors[1] = {
    "trunk"
};

/* Training range of each input feature (float32, rounded outwards). */

static const float sbmodel_x_min[SBMODEL_N_FEATURES] = {
    27.0f, 79.0f, 11.8999996f, 0.0909090936f, 0.0909090936f, 492.0f,
    -1479.0531f, 5.909091f, 16.454546f, 4758.0f, -541.0f, -2209.90967f
};

static const float sbmodel_x_max[SBMODEL_N_FEATURES] = {
    2519.0f, 4710.0f, 1401.09998f, 0.636363626f, 0.727272749f, 5659.0f,
    904.964661f, 444.727264f, 914.272705f, 40766740.0f, 1974.0f, 0.0f
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

/* Weights (selected features x targets, selection order) and intercepts, float32. */

static const float sbmodel_weights[SBMODEL_N_FEATURES][SBMODEL_N_TARGETS] = {
    /* [0] "trunk_horiz_lateral.ptp" */
    { 0.00110994547f, -0.000262631133f, -0.000847314368f, -1.39878575e-05f, 1.39878575e-05f },
    /* [1] "trunk_vert.ptp" */
    { -1.86113721e-05f, 0.000647188106f, -0.00062857673f, -0.0013383124f, 0.0013383124f },
    /* [2] "trunk_vert.jerk.mad" */
    { -0.00489872089f, 0.00350884488f, 0.00138987601f, 0.00479631312f, -0.00479631312f },
    /* [3] "trunk_horiz_lateral.zcr" */
    { 0.286030203f, 2.51755786f, -2.80358815f, -1.74204218f, 1.74204218f },
    /* [4] "trunk_vert.zcr" */
    { -0.398877829f, 1.03652036f, -0.637642562f, -1.45677125f, 1.45677125f },
    /* [5] "trunk_vert.max" */
    { -0.000209821505f, 0.000211224818f, -1.40331713e-06f, 8.85046102e-05f, -8.85046102e-05f },
    /* [6] "trunk_horiz_lateral.highpass_0_9.last" */
    { 0.000878366351f, -0.000462067081f, -0.00041629927f, 0.000395376643f, -0.000395376643f },
    /* [7] "trunk_horiz_lateral.mad" */
    { -0.00604450563f, 0.000301532826f, 0.00574297272f, 0.000149026353f, -0.000149026353f },
    /* [8] "trunk_vert.mad" */
    { 0.0137004508f, -0.0115683815f, -0.00213207002f, -0.00886942167f, 0.00886942167f },
    /* [9] "trunk_vert.jerk.energy" */
    { -7.25827221e-08f, 1.89029024e-08f, 5.36798197e-08f, 1.26366345e-07f, -1.26366345e-07f },
    /* [10] "trunk_horiz_lateral.max" */
    { 0.000358739053f, -5.5506589e-05f, -0.00030323246f, 0.000407385989f, -0.000407385989f },
    /* [11] "trunk_horiz_lateral.highpass_0_9.min" */
    { -0.00121199398f, 0.00051958696f, 0.000692407077f, -0.00074077904f, 0.00074077904f } 
};

static const float sbmodel_intercepts[SBMODEL_N_TARGETS] = {
    -1.03206193f, -0.756334066f, 0.788396001f, 1.23625255f, -1.23625255f
};

/* scores[j] = intercepts[j] + sum_i weights[i][j] * features[i],
 * for j = 0..SBMODEL_N_TARGETS-1.
 * Evaluated in float (single precision) exactly in this order: acc = intercepts[j]; then for
 * i = 0, 1, ..., SBMODEL_N_FEATURES-1:
 * acc = acc + weights[i][j] * features[i],
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

/* Calibrated decisions: decisions[j] = 1
 * if scores[j] > sbmodel_thresholds[j] else 0. */
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
