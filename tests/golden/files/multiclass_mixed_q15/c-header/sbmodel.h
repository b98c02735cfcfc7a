/*
 * sbmodel.h: sparse linear model exported by sensorbudget 0.1.0 (sensorbudget export c-header).
 *     Generated file, do not edit.
 * Header format version 1; bundle sha256
 *     bb4b7e59fa35cbd8aa9a2c028685c9633ebc3eff7e43dd2f108cf57273137ab1.
 * Task multiclass; 7 selected features of 7 candidates; 3 targets; numeric q15.
 *
 * Required sensors (1):
 *   [0] "ankle" {"average_power_w": 6.4e-05, "channels": ["ankle_vert", "ankle_horiz_fwd",
 *       "ankle_horiz_lateral"], "energy_per_prediction_j": 8e-06, "energy_per_reading_j": 1e-06,
 *       "name": "ankle", "readings_per_prediction": 8, "sample_rate_hz": 64.0, "unit_price": 1.0}
 * Required extractors (7), to compute on the device:
 *   [0] "ankle_horiz_fwd.rms" sensors ["ankle"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["ankle_horiz_fwd"], "fixed_point": true, "hop": 8,
 *       "kind": "rms", "sample_rate_hz": 64.0, "window": 16}
 *   [1] "ankle_acc.mag_std" sensors ["ankle"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["ankle_vert", "ankle_horiz_fwd", "ankle_horiz_lateral"], "fixed_point": false,
 *       "hop": 8, "kind": "mag_std", "sample_rate_hz": 64.0, "window": 16}
 *   [2] "ankle_horiz_fwd.percentile_50" sensors ["ankle"] cost 0 params {"arg": 50.0, "arithmetic":
 *       "float32-sequential-v1", "channels": ["ankle_horiz_fwd"], "fixed_point": true, "hop": 8,
 *       "kind": "percentile", "sample_rate_hz": 64.0, "window": 16}
 *   [3] "ankle_vert.centroid" sensors ["ankle"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["ankle_vert"], "fixed_point": false, "hop": 8,
 *       "kind": "centroid", "sample_rate_hz": 64.0, "spectrum_window": "hann", "window": 16}
 *   [4] "ankle_acc.mag_max" sensors ["ankle"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["ankle_vert", "ankle_horiz_fwd", "ankle_horiz_lateral"], "fixed_point": true,
 *       "hop": 8, "kind": "mag_max", "sample_rate_hz": 64.0, "window": 16}
 *   [5] "ankle_vert.mean" sensors ["ankle"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["ankle_vert"], "fixed_point": true, "hop": 8, "kind": "mean",
 *       "sample_rate_hz": 64.0, "window": 16}
 *   [6] "ankle_horiz_fwd.slope" sensors ["ankle"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["ankle_horiz_fwd"], "fixed_point": false, "hop": 8,
 *       "kind": "slope", "sample_rate_hz": 64.0, "window": 16}
 * Input features, in the order sbmodel_predict expects them:
 *   [0] "ankle_horiz_fwd.rms" candidate column 1, extractor [0], training range [16.9263, 1213.67]
 *   [1] "ankle_acc.mag_std" candidate column 4, extractor [1], training range [34.0154, 1365.97]
 *   [2] "ankle_horiz_fwd.percentile_50" candidate column 6, extractor [2], training range [-676,
 *       919]
 *   [3] "ankle_vert.centroid" candidate column 2, extractor [3], training range [4.40917, 21.0358]
 *   [4] "ankle_acc.mag_max" candidate column 5, extractor [4], training range [824.29, 7018.07]
 *   [5] "ankle_vert.mean" candidate column 0, extractor [5], training range [313.375, 1651.38]
 *   [6] "ankle_horiz_fwd.slope" candidate column 3, extractor [6], training range [-122.751,
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
#define SBMODEL_N_FEATURES 7
#define SBMODEL_N_TARGETS 3
#define SBMODEL_N_CANDIDATES 7
#define SBMODEL_N_REQUIRED_EXTRACTORS 7
#define SBMODEL_N_REQUIRED_SENSORS 1
#define SBMODEL_TASK_MULTICLASS 1
#define SBMODEL_NUMERIC_Q15 1

/* Index of each input feature in features[] and of each target in scores[]. */
#define SBMODEL_F_ANKLE_HORIZ_FWD_RMS 0
#define SBMODEL_F_ANKLE_ACC_MAG_STD 1
#define SBMODEL_F_ANKLE_HORIZ_FWD_PERCENTILE_50 2
#define SBMODEL_F_ANKLE_VERT_CENTROID 3
#define SBMODEL_F_ANKLE_ACC_MAG_MAX 4
#define SBMODEL_F_ANKLE_VERT_MEAN 5
#define SBMODEL_F_ANKLE_HORIZ_FWD_SLOPE 6
#define SBMODEL_T_RUN 0
#define SBMODEL_T_SIT 1
#define SBMODEL_T_WALK 2

static const char *const sbmodel_feature_names[SBMODEL_N_FEATURES] = {
    "ankle_horiz_fwd.rms", "ankle_acc.mag_std", "ankle_horiz_fwd.percentile_50",
    "ankle_vert.centroid", "ankle_acc.mag_max", "ankle_vert.mean",
    "ankle_horiz_fwd.slope"
};

static const unsigned sbmodel_feature_columns[SBMODEL_N_FEATURES] = {
    1u,  /* "ankle_horiz_fwd.rms" */
    4u,  /* "ankle_acc.mag_std" */
    6u,  /* "ankle_horiz_fwd.percentile_50" */
    2u,  /* "ankle_vert.centroid" */
    5u,  /* "ankle_acc.mag_max" */
    0u,  /* "ankle_vert.mean" */
    3u   /* "ankle_horiz_fwd.slope" */
};

static const int sbmodel_feature_extractor[SBMODEL_N_FEATURES] = {
    0,  /* "ankle_horiz_fwd.rms" */
    1,  /* "ankle_acc.mag_std" */
    2,  /* "ankle_horiz_fwd.percentile_50" */
    3,  /* "ankle_vert.centroid" */
    4,  /* "ankle_acc.mag_max" */
    5,  /* "ankle_vert.mean" */
    6   /* "ankle_horiz_fwd.slope" */
};

static const char *const sbmodel_target_names[SBMODEL_N_TARGETS] = {
    "run", "sit", "walk"
};

static const char *const sbmodel_required_extractors[7] = {
    "ankle_horiz_fwd.rms", "ankle_acc.mag_std", "ankle_horiz_fwd.percentile_50",
    "ankle_vert.centroid", "ankle_acc.mag_max", "ankle_vert.mean",
    "ankle_horiz_fwd.slope"
};

static const char *const sbmodel_extractor_params_json[7] = {
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_horiz_fwd\"], \"fixed_poi"
    "nt\": true, \"hop\": 8, \"kind\": \"rms\", \"sample_rate_hz\": 64.0, \"window\": 16}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_vert\", \"ankle_horiz_fwd"
    "\", \"ankle_horiz_lateral\"], \"fixed_point\": false, \"hop\": 8, \"kind\": \"mag_std\", \"s"
    "ample_rate_hz\": 64.0, \"window\": 16}"),
    ("{\"arg\": 50.0, \"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_horiz_fwd"
    "\"], \"fixed_point\": true, \"hop\": 8, \"kind\": \"percentile\", \"sample_rate_hz\": 64.0, "
    "\"window\": 16}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_vert\"], \"fixed_point\":"
    " false, \"hop\": 8, \"kind\": \"centroid\", \"sample_rate_hz\": 64.0, \"spectrum_window\": "
    "\"hann\", \"window\": 16}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_vert\", \"ankle_horiz_fwd"
    "\", \"ankle_horiz_lateral\"], \"fixed_point\": true, \"hop\": 8, \"kind\": \"mag_max\", \"sa"
    "mple_rate_hz\": 64.0, \"window\": 16}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_vert\"], \"fixed_point\":"
    " true, \"hop\": 8, \"kind\": \"mean\", \"sample_rate_hz\": 64.0, \"window\": 16}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"ankle_horiz_fwd\"], \"fixed_poi"
    "nt\": false, \"hop\": 8, \"kind\": \"slope\", \"sample_rate_hz\": 64.0, \"window\": 16}")
};

static const char *const sbmodel_required_sensors[1] = {
    "ankle"
};

/* Training range of each input feature (float32, rounded outwards). */

static const float sbmodel_x_min[SBMODEL_N_FEATURES] = {
    16.9263115f, 34.0153732f, -676.0f, 4.40916824f, 824.289978f, 313.375f,
    -122.751472f
};

static const float sbmodel_x_max[SBMODEL_N_FEATURES] = {
    1213.66724f, 1365.97205f, 919.0f, 21.035759f, 7018.06885f, 1651.375f,
    116.849998f
};

/* Copy the selected features out of a full candidate vector (SBMODEL_N_CANDIDATES floats). */
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
/* |score - float64 model score| <= SBMODEL_Q15_ERROR_BOUND for inputs in [x_min, x_max]
 * (largest reachable |score| 10.5222). */
#define SBMODEL_Q15_ERROR_BOUND 9.9e-4f

/* Input quantisation: centre and QMAX / half-width of each training range. */

static const float sbmodel_q15_input_offset[SBMODEL_N_FEATURES] = {
    615.296753f, 699.993713f, 121.5f, 12.7224636f, 3921.17944f, 982.375f,
    -2.950737f
};

static const float sbmodel_q15_input_inv_scale[SBMODEL_N_FEATURES] = {
    54.7603378f, 49.201252f, 41.0871086f, 3941.51392f, 10.5806065f, 48.9790268f,
    273.512238f
};

/* Weights with the input scales folded in, times 2^27;
 * intercepts with the offsets folded in, same scale. */

static const int16_t sbmodel_q15_weights[SBMODEL_N_FEATURES][SBMODEL_N_TARGETS] = {
    { -1020, -4906, 5927 },  /* [0] "ankle_horiz_fwd.rms" */
    { -15425, 6659, 8767 },  /* [1] "ankle_acc.mag_std" */
    { -1851, 2052, -201 },  /* [2] "ankle_horiz_fwd.percentile_50" */
    { -2271, 779, 1493 },  /* [3] "ankle_vert.centroid" */
    { 15084, -4986, -10098 },  /* [4] "ankle_acc.mag_max" */
    { -3768, 931, 2836 },  /* [5] "ankle_vert.mean" */
    { 155, 171, -326 }   /* [6] "ankle_horiz_fwd.slope" */
};

static const int32_t sbmodel_q15_intercepts[SBMODEL_N_TARGETS] = {
    INT32_C(-115512894), INT32_C(-53115507), INT32_C(34410673)
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

/* Rescale an accumulator to a score: sat(round(acc / 2^SBMODEL_Q15_SHIFT)), half away from zero.
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
 * exact in int32_t; the score is scores_q[j] * 2^-SBMODEL_Q15_SCORE_FRAC_BITS. */
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
