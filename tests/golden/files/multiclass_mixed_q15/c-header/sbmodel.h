/*
 * sbmodel.h: sparse linear model exported by sensorbudget 0.1.0 (sensorbudget export c-header).
 *     Generated file, do not edit.
 * Header format version 1; bundle sha256
 *     3ff6448220833bbfaab3a69aaddc328f47e62b0afa25cf141d53c51a151c1501.
 * Task multiclass; 10 selected features of 10 candidates; 3 targets; numeric q15.
 *
 * Required sensors (2):
 *   [0] "ankle" {"average_power_w": 6.4e-05, "channels": ["ankle_vert", "ankle_horiz_fwd",
 *       "ankle_horiz_lateral"], "energy_per_prediction_j": 8e-06, "energy_per_reading_j": 1e-06,
 *       "name": "ankle", "readings_per_prediction": 8, "sample_rate_hz": 64.0, "unit_price": 1.0}
 *   [1] "trunk" {"average_power_w": 6.4e-05, "channels": ["trunk_vert", "trunk_horiz_fwd",
 *       "trunk_horiz_lateral"], "energy_per_prediction_j": 8e-06, "energy_per_reading_j": 1e-06,
 *       "name": "trunk", "readings_per_prediction": 8, "sample_rate_hz": 64.0, "unit_price": 1.0}
 * Required extractors (10), to compute on the device:
 *   [0] "ankle_horiz_fwd.rms" sensors ["ankle"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["ankle_horiz_fwd"], "fixed_point": true, "hop": 8,
 *       "kind": "rms", "sample_rate_hz": 64.0, "window": 16}
 *   [1] "ankle_vert.mad" sensors ["ankle"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["ankle_vert"], "fixed_point": true, "hop": 8, "kind": "mad", "sample_rate_hz":
 *       64.0, "window": 16}
 *   [2] "pair.corr" sensors ["ankle", "trunk"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["ankle_vert", "trunk_vert"], "fixed_point": false,
 *       "hop": 8, "kind": "corr", "sample_rate_hz": 64.0, "window": 16}
 *   [3] "ankle_horiz_fwd.percentile_50" sensors ["ankle"] cost 0 params {"arg": 50.0, "arithmetic":
 *       "float32-sequential-v1", "channels": ["ankle_horiz_fwd"], "fixed_point": true, "hop": 8,
 *       "kind": "percentile", "sample_rate_hz": 64.0, "window": 16}
 *   [4] "ankle_acc.mag_std" sensors ["ankle"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["ankle_vert", "ankle_horiz_fwd", "ankle_horiz_lateral"], "fixed_point": false,
 *       "hop": 8, "kind": "mag_std", "sample_rate_hz": 64.0, "window": 16}
 *   [5] "ankle_acc.mag_max" sensors ["ankle"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["ankle_vert", "ankle_horiz_fwd", "ankle_horiz_lateral"], "fixed_point": true,
 *       "hop": 8, "kind": "mag_max", "sample_rate_hz": 64.0, "window": 16}
 *   [6] "ankle_vert.mean" sensors ["ankle"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["ankle_vert"], "fixed_point": true, "hop": 8, "kind": "mean",
 *       "sample_rate_hz": 64.0, "window": 16}
 *   [7] "ankle_vert.centroid" sensors ["ankle"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["ankle_vert"], "fixed_point": false, "hop": 8,
 *       "kind": "centroid", "sample_rate_hz": 64.0, "spectrum_window": "hann", "window": 16}
 *   [8] "ankle_horiz_fwd.zcr" sensors ["ankle"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["ankle_horiz_fwd"], "fixed_point": true, "hop": 8,
 *       "kind": "zcr", "sample_rate_hz": 64.0, "window": 16}
 *   [9] "ankle_horiz_fwd.slope" sensors ["ankle"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["ankle_horiz_fwd"], "fixed_point": false, "hop": 8,
 *       "kind": "slope", "sample_rate_hz": 64.0, "window": 16}
 * Input features, in the order sbmodel_predict expects them:
 *   [0] "ankle_horiz_fwd.rms" candidate column 1, extractor [0], training range [16.9263, 1213.67]
 *   [1] "ankle_vert.mad" candidate column 7, extractor [1], training range [22.0667, 587.4]
 *   [2] "pair.corr" candidate column 9, extractor [2], training range [-0.870666, 0.992243]
 *   [3] "ankle_horiz_fwd.percentile_50" candidate column 6, extractor [3], training range [-676,
 *       919]
 *   [4] "ankle_acc.mag_std" candidate column 4, extractor [4], training range [34.0154, 1365.97]
 *   [5] "ankle_acc.mag_max" candidate column 5, extractor [5], training range [824.29, 7018.07]
 *   [6] "ankle_vert.mean" candidate column 0, extractor [6], training range [313.375, 1651.38]
 *   [7] "ankle_vert.centroid" candidate column 2, extractor [7], training range [4.40917, 21.0358]
 *   [8] "ankle_horiz_fwd.zcr" candidate column 8, extractor [8], training range [0.0666667, 0.6]
 *   [9] "ankle_horiz_fwd.slope" candidate column 3, extractor [9], training range [-122.751,
 *       116.85]
 * Classes (scores[j]):
 *   [0] "run"
 *   [1] "sit"
 *   [2] "walk"
 */

#ifndef SBMODEL_H
#define SBMODEL_H

#include <stddef.h>
#include <stdint.h>

#define SBMODEL_FORMAT_VERSION 1
#define SBMODEL_N_FEATURES 10
#define SBMODEL_N_TARGETS 3
#define SBMODEL_N_CANDIDATES 10
#define SBMODEL_N_REQUIRED_EXTRACTORS 10
#define SBMODEL_N_REQUIRED_SENSORS 2
#define SBMODEL_TASK_MULTICLASS 1
#define SBMODEL_NUMERIC_Q15 1

/* Index of each input feature in features[] and of each target in scores[]. */
#define SBMODEL_F_ANKLE_HORIZ_FWD_RMS 0
#define SBMODEL_F_ANKLE_VERT_MAD 1
#define SBMODEL_F_PAIR_CORR 2
#define SBMODEL_F_ANKLE_HORIZ_FWD_PERCENTILE_50 3
#define SBMODEL_F_ANKLE_ACC_MAG_STD 4
#define SBMODEL_F_ANKLE_ACC_MAG_MAX 5
#define SBMODEL_F_ANKLE_VERT_MEAN 6
#define SBMODEL_F_ANKLE_VERT_CENTROID 7
#define SBMODEL_F_ANKLE_HORIZ_FWD_ZCR 8
#define SBMODEL_F_ANKLE_HORIZ_FWD_SLOPE 9
#define SBMODEL_T_RUN 0
#define SBMODEL_T_SIT 1
#define SBMODEL_T_WALK 2

static const char *const sbmodel_feature_names[SBMODEL_N_FEATURES] = {
    "ankle_horiz_fwd.rms", "ankle_vert.mad", "pair.corr", "ankle_horiz_fwd.percentile_50",
    "ankle_acc.mag_std", "ankle_acc.mag_max",
    "ankle_vert.mean", "ankle_vert.centroid", "ankle_horiz_fwd.zcr", "ankle_horiz_fwd.slope"
};

static const unsigned sbmodel_feature_columns[SBMODEL_N_FEATURES] = {
    1u,  /* "ankle_horiz_fwd.rms" */
    7u,  /* "ankle_vert.mad" */
    9u,  /* "pair.corr" */
    6u,  /* "ankle_horiz_fwd.percentile_50" */
    4u,  /* "ankle_acc.mag_std" */
    5u,  /* "ankle_acc.mag_max" */
    0u,  /* "ankle_vert.mean" */
    2u,  /* "ankle_vert.centroid" */
    8u,  /* "ankle_horiz_fwd.zcr" */
    3u   /* "ankle_horiz_fwd.slope" */
};

static const int sbmodel_feature_extractor[SBMODEL_N_FEATURES] = {
    0,  /* "ankle_horiz_fwd.rms" */
    1,  /* "ankle_vert.mad" */
    2,  /* "pair.corr" */
    3,  /* "ankle_horiz_fwd.percentile_50" */
    4,  /* "ankle_acc.mag_std" */
    5,  /* "ankle_acc.mag_max" */
    6,  /* "ankle_vert.mean" */
    7,  /* "ankle_vert.centroid" */
    8,  /* "ankle_horiz_fwd.zcr" */
    9   /* "ankle_horiz_fwd.slope" */
};

static const char *const sbmodel_target_names[SBMODEL_N_TARGETS] = {
    "run", "sit", "walk"
};

static const char *const sbmodel_required_extractors[10] = {
    "ankle_horiz_fwd.rms", "ankle_vert.mad", "pair.corr", "ankle_horiz_fwd.percentile_50",
    "ankle_acc.mag_std", "ankle_acc.mag_max",
    "ankle_vert.mean", "ankle_vert.centroid", "ankle_horiz_fwd.zcr", "ankle_horiz_fwd.slope"
};

static const char *const sbmodel_extractor_params_json[10] = {
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_horiz_fwd\"], \"fixed_poi"
    "nt\": true, \"hop\": 8, \"kind\": \"rms\", \"sample_rate_hz\": 64.0, \"window\": 16}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_vert\"], \"fixed_point\":"
    " true, \"hop\": 8, \"kind\": \"mad\", \"sample_rate_hz\": 64.0, \"window\": 16}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_vert\", \"trunk_vert\"], "
    "\"fixed_point\": false, \"hop\": 8, \"kind\": \"corr\", \"sample_rate_hz\": 64.0, \"window\""
    ": 16}"),
    ("{\"arg\": 50.0, \"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_horiz_fwd"
    "\"], \"fixed_point\": true, \"hop\": 8, \"kind\": \"percentile\", \"sample_rate_hz\": 64.0, "
    "\"window\": 16}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_vert\", \"ankle_horiz_fwd"
    "\", \"ankle_horiz_lateral\"], \"fixed_point\": false, \"hop\": 8, \"kind\": \"mag_std\", \"s"
    "ample_rate_hz\": 64.0, \"window\": 16}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_vert\", \"ankle_horiz_fwd"
    "\", \"ankle_horiz_lateral\"], \"fixed_point\": true, \"hop\": 8, \"kind\": \"mag_max\", \"sa"
    "mple_rate_hz\": 64.0, \"window\": 16}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_vert\"], \"fixed_point\":"
    " true, \"hop\": 8, \"kind\": \"mean\", \"sample_rate_hz\": 64.0, \"window\": 16}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_vert\"], \"fixed_point\":"
    " false, \"hop\": 8, \"kind\": \"centroid\", \"sample_rate_hz\": 64.0, \"spectrum_window\": "
    "\"hann\", \"window\": 16}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_horiz_fwd\"], \"fixed_poi"
    "nt\": true, \"hop\": 8, \"kind\": \"zcr\", \"sample_rate_hz\": 64.0, \"window\": 16}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_horiz_fwd\"], \"fixed_poi"
    "nt\": false, \"hop\": 8, \"kind\": \"slope\", \"sample_rate_hz\": 64.0, \"window\": 16}")
};

static const char *const sbmodel_required_sensors[2] = {
    "ankle", "trunk"
};

/* Training range of each input feature (float32, rounded outwards). */

static const float sbmodel_x_min[SBMODEL_N_FEATURES] = {
    16.9263115f, 22.0666676f, -0.870666027f, -676.0f, 34.0153732f, 824.289978f,
    313.375f, 4.40916824f, 0.0666666701f, -122.751472f
};

static const float sbmodel_x_max[SBMODEL_N_FEATURES] = {
    1213.66724f, 587.400024f, 0.992242694f, 919.0f, 1365.97205f, 7018.06885f,
    1651.375f, 21.035759f, 0.600000024f, 116.849998f
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
#define SBMODEL_Q15_WEIGHT_FRAC_BITS 27
#define SBMODEL_Q15_SCORE_FRAC_BITS 11
#define SBMODEL_Q15_SHIFT 16
/* |score - float64 model score| <= SBMODEL_Q15_ERROR_BOUND
 * for inputs in [x_min, x_max] (largest reachable |score| 11.5177). */
#define SBMODEL_Q15_ERROR_BOUND 9.8e-4f

/* Input quantisation: centre and QMAX / half-width of each training range. */

static const float sbmodel_q15_input_offset[SBMODEL_N_FEATURES] = {
    615.296753f, 304.733337f, 0.0607883334f, 121.5f, 699.993713f, 3921.17944f,
    982.375f, 12.7224636f, 0.333333343f, -2.950737f
};

static const float sbmodel_q15_input_inv_scale[SBMODEL_N_FEATURES] = {
    54.7603378f, 115.920868f, 35178.2852f, 41.0871086f, 49.201252f, 10.5806065f,
    48.9790268f, 3941.51392f, 122876.125f, 273.512238f
};

/* Weights with the input scales folded in, times 2^27;
 * intercepts with the offsets folded in, same scale. */

static const int16_t sbmodel_q15_weights[SBMODEL_N_FEATURES][SBMODEL_N_TARGETS] = {
    { -1871, -3900, 5771 },  /* [0] "ankle_horiz_fwd.rms" */
    { -2273, -705, 2978 },  /* [1] "ankle_vert.mad" */
    { -1081, 1520, -438 },  /* [2] "pair.corr" */
    { -1788, 1947, -159 },  /* [3] "ankle_horiz_fwd.percentile_50" */
    { -14101, 7249, 6852 },  /* [4] "ankle_acc.mag_std" */
    { 15183, -6279, -8904 },  /* [5] "ankle_acc.mag_max" */
    { -3625, 1297, 2328 },  /* [6] "ankle_vert.mean" */
    { -1429, 1090, 339 },  /* [7] "ankle_vert.centroid" */
    { -750, 1202, -452 },  /* [8] "ankle_horiz_fwd.zcr" */
    { 166, 45, -211 }   /* [9] "ankle_horiz_fwd.slope" */
};

static const int32_t sbmodel_q15_intercepts[SBMODEL_N_TARGETS] = {
    INT32_C(-160894110), INT32_C(-30237980), INT32_C(56914361)
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

/* The class index with the largest score (the first one on ties), as numpy.argmax. */
static inline int sbmodel_label_q15(const int16_t *features_q)
{
    int16_t scores[SBMODEL_N_TARGETS];
    size_t j, best = 0;
    sbmodel_predict_q15(features_q, scores);
    for (j = 1; j < SBMODEL_N_TARGETS; ++j) {
        if (scores[j] > scores[best]) {
            best = j;
        }
    }
    return (int)best;
}

#endif /* SBMODEL_H */
