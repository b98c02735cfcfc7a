/*
 * sbmodel_model.h: sparse linear model exported by sensorbudget 0.1.0 (sensorbudget export
 *     c-header). Generated file, do not edit.
 * Header format version 1; bundle sha256
 *     824e0f61efffcdfd6c1c821ebfb717d66b1a01375cbe3329e1b4706fa7a75b5e.
 * Task regression; 5 selected features of 5 candidates; 2 targets; numeric q31.
 *
 * Required sensors (2):
 *   [0] "leg" {"average_power_w": 6.4e-05, "channels": ["leg_vert", "leg_horiz_fwd",
 *       "leg_horiz_lateral"], "energy_per_prediction_j": 1.6e-05, "energy_per_reading_j": 1e-06,
 *       "name": "leg", "readings_per_prediction": 16, "sample_rate_hz": 64.0, "unit_price": 1.0}
 *   [1] "trunk" {"average_power_w": 6.4e-05, "channels": ["trunk_vert", "trunk_horiz_fwd",
 *       "trunk_horiz_lateral"], "energy_per_prediction_j": 1.6e-05, "energy_per_reading_j": 1e-06,
 *       "name": "trunk", "readings_per_prediction": 16, "sample_rate_hz": 64.0, "unit_price": 1.0}
 * Required extractors (5), to compute on the device:
 *   [0] "leg_vert.bandpower_1to4" sensors ["leg"] cost 0 params {"arg": [1.0, 4.0], "arithmetic":
 *       "float32-sequential-v1", "channels": ["leg_vert"], "fixed_point": false, "hop": 16, "kind":
 *       "bandpower", "sample_rate_hz": 64.0, "spectrum_window": "hann", "window": 32}
 *   [1] "trunk_vert.std" sensors ["trunk"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["trunk_vert"], "fixed_point": false, "hop": 16, "kind": "std",
 *       "sample_rate_hz": 64.0, "window": 32}
 *   [2] "trunk_vert.skew" sensors ["trunk"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["trunk_vert"], "fixed_point": false, "hop": 16, "kind": "skew",
 *       "sample_rate_hz": 64.0, "window": 32}
 *   [3] "leg_vert.percentile_90" sensors ["leg"] cost 0 params {"arg": 90.0, "arithmetic":
 *       "float32-sequential-v1", "channels": ["leg_vert"], "fixed_point": true, "hop": 16, "kind":
 *       "percentile", "sample_rate_hz": 64.0, "window": 32}
 *   [4] "leg_horiz_fwd.domfreq" sensors ["leg"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["leg_horiz_fwd"], "fixed_point": false, "hop": 16,
 *       "kind": "domfreq", "sample_rate_hz": 64.0, "spectrum_window": "hann", "window": 32}
 * Input features, in the order sbmodel_model_predict expects them:
 *   [0] "leg_vert.bandpower_1to4" candidate column 0, extractor [0], training range [620474,
 *       4.1171e+07]
 *   [1] "trunk_vert.std" candidate column 4, extractor [1], training range [66.7273, 1052.44]
 *   [2] "trunk_vert.skew" candidate column 2, extractor [2], training range [-1.61448, 3.9253]
 *   [3] "leg_vert.percentile_90" candidate column 3, extractor [3], training range [756, 2041]
 *   [4] "leg_horiz_fwd.domfreq" candidate column 1, extractor [4], training range [2, 30]
 * Targets (scores[j]):
 *   [0] "speed"
 *   [1] "load"
 */

#ifndef SBMODEL_MODEL_H
#define SBMODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define SBMODEL_MODEL_FORMAT_VERSION 1
#define SBMODEL_MODEL_N_FEATURES 5
#define SBMODEL_MODEL_N_TARGETS 2
#define SBMODEL_MODEL_N_CANDIDATES 5
#define SBMODEL_MODEL_N_REQUIRED_EXTRACTORS 5
#define SBMODEL_MODEL_N_REQUIRED_SENSORS 2
#define SBMODEL_MODEL_TASK_REGRESSION 1
#define SBMODEL_MODEL_NUMERIC_Q31 1

/* Index of each input feature in features[] and of each target in scores[]. */
#define SBMODEL_MODEL_F_LEG_VERT_BANDPOWER_1TO4 0
#define SBMODEL_MODEL_F_TRUNK_VERT_STD 1
#define SBMODEL_MODEL_F_TRUNK_VERT_SKEW 2
#define SBMODEL_MODEL_F_LEG_VERT_PERCENTILE_90 3
#define SBMODEL_MODEL_F_LEG_HORIZ_FWD_DOMFREQ 4
#define SBMODEL_MODEL_T_SPEED 0
#define SBMODEL_MODEL_T_LOAD 1

static const char *const sbmodel_model_feature_names[SBMODEL_MODEL_N_FEATURES] = {
    "leg_vert.bandpower_1to4", "trunk_vert.std", "trunk_vert.skew", "leg_vert.percentile_90",
    "leg_horiz_fwd.domfreq"
};

static const unsigned sbmodel_model_feature_columns[SBMODEL_MODEL_N_FEATURES] = {
    0u,  /* "leg_vert.bandpower_1to4" */
    4u,  /* "trunk_vert.std" */
    2u,  /* "trunk_vert.skew" */
    3u,  /* "leg_vert.percentile_90" */
    1u   /* "leg_horiz_fwd.domfreq" */
};

static const int sbmodel_model_feature_extractor[SBMODEL_MODEL_N_FEATURES] = {
    0,  /* "leg_vert.bandpower_1to4" */
    1,  /* "trunk_vert.std" */
    2,  /* "trunk_vert.skew" */
    3,  /* "leg_vert.percentile_90" */
    4   /* "leg_horiz_fwd.domfreq" */
};

static const char *const sbmodel_model_target_names[SBMODEL_MODEL_N_TARGETS] = {
    "speed", "load"
};

static const char *const sbmodel_model_required_extractors[5] = {
    "leg_vert.bandpower_1to4", "trunk_vert.std", "trunk_vert.skew", "leg_vert.percentile_90",
    "leg_horiz_fwd.domfreq"
};

static const char *const sbmodel_model_extractor_params_json[5] = {
    ("{\"arg\": [1.0, 4.0], \"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"leg_vert\""
    "], \"fixed_point\": false, \"hop\": 16, \"kind\": \"bandpower\", \"sample_rate_hz\": 64.0, "
    "\"spectrum_window\": \"hann\", \"window\": 32}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_vert\"], \"fixed_point\":"
    " false, \"hop\": 16, \"kind\": \"std\", \"sample_rate_hz\": 64.0, \"window\": 32}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_vert\"], \"fixed_point\":"
    " false, \"hop\": 16, \"kind\": \"skew\", \"sample_rate_hz\": 64.0, \"window\": 32}"),
    ("{\"arg\": 90.0, \"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"leg_vert\"], \"f"
    "ixed_point\": true, \"hop\": 16, \"kind\": \"percentile\", \"sample_rate_hz\": 64.0, \"windo"
    "w\": 32}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"leg_horiz_fwd\"], \"fixed_point"
    "\": false, \"hop\": 16, \"kind\": \"domfreq\", \"sample_rate_hz\": 64.0, \"spectrum_window\""
    ": \"hann\", \"window\": 32}")
};

static const char *const sbmodel_model_required_sensors[2] = {
    "leg", "trunk"
};

/* Training range of each input feature (float32, rounded outwards). */

static const float sbmodel_model_x_min[SBMODEL_MODEL_N_FEATURES] = {
    620474.188f, 66.7273483f, -1.61448026f, 756.0f, 2.0f
};

static const float sbmodel_model_x_max[SBMODEL_MODEL_N_FEATURES] = {
    41170984.0f, 1052.43628f, 3.92529964f, 2041.0f, 30.0f
};

/* Copy the selected features out of a full candidate vector (SBMODEL_MODEL_N_CANDIDATES floats). */
static inline void sbmodel_model_select(const float *candidates, float *features)
{
    size_t i;
    for (i = 0; i < SBMODEL_MODEL_N_FEATURES; ++i) {
        features[i] = candidates[sbmodel_model_feature_columns[i]];
    }
}

/* Q31: score = scores_q * 2^-SBMODEL_MODEL_Q31_SCORE_FRAC_BITS;
 * accumulators hold score * 2^SBMODEL_MODEL_Q31_WEIGHT_FRAC_BITS. */
#define SBMODEL_MODEL_Q31_WEIGHT_FRAC_BITS 58
#define SBMODEL_MODEL_Q31_SCORE_FRAC_BITS 26
#define SBMODEL_MODEL_Q31_SHIFT 32
/* |score - float64 model score| <= SBMODEL_MODEL_Q31_ERROR_BOUND for inputs in [x_min, x_max]
 * (largest reachable |score| 17.2269). */
#define SBMODEL_MODEL_Q31_ERROR_BOUND 2.4e-8f
#if defined(__SIZEOF_DOUBLE__) && __SIZEOF_DOUBLE__ < 8
#error "Q31 needs a 64-bit double (avr-gcc has 32 bits): use q15 or float32"
#endif

/* Input quantisation: centre and QMAX / half-width of each training range. */

static const double sbmodel_model_q31_input_offset[SBMODEL_MODEL_N_FEATURES] = {
    20895729.09375, 559.58181381225586, 1.1554096937179565, 1398.5, 16.0
};

static const double sbmodel_model_q31_input_inv_scale[SBMODEL_MODEL_N_FEATURES] = {
    105.91637979061741, 4357232.7114665704, 775294916.83188784, 3342383.811676193,
    153391542.78585386
};

/* Weights with the input scales folded in, times 2^58;
 * intercepts with the offsets folded in, same scale. */

static const int32_t sbmodel_model_q31_weights[SBMODEL_MODEL_N_FEATURES][SBMODEL_MODEL_N_TARGETS] =
        {
    { INT32_C(160753803), INT32_C(414807681) },  /* [0] "leg_vert.bandpower_1to4" */
    { INT32_C(236080543), INT32_C(672166825) },  /* [1] "trunk_vert.std" */
    { INT32_C(-83958202), INT32_C(-256747877) },  /* [2] "trunk_vert.skew" */
    { INT32_C(37701332), INT32_C(149417910) },  /* [3] "leg_vert.percentile_90" */
    { INT32_C(-48821790), INT32_C(-151512562) }   /* [4] "leg_horiz_fwd.domfreq" */
};

static const int64_t sbmodel_model_q31_intercepts[SBMODEL_MODEL_N_TARGETS] = {
    INT64_C(616912900351154304), INT64_C(1433447814432686080)
};

/* features_q[i] = sat(round((features[i] - input_offset[i]) * input_inv_scale[i])), computed in
 * double, NaN -> 0, saturated to +-2147483647, rounded half away from zero. */
static inline void sbmodel_model_quantize_q31(const float *features, int32_t *features_q)
{
    size_t i;
    for (i = 0; i < SBMODEL_MODEL_N_FEATURES; ++i) {
        double v = ((double)features[i] - sbmodel_model_q31_input_offset[i])
            * sbmodel_model_q31_input_inv_scale[i];
        if (v != v) {
            v = 0.0;
        }
        if (v > 2147483647.0) {
            v = 2147483647.0;
        } else if (v < -2147483647.0) {
            v = -2147483647.0;
        }
        features_q[i] = (int32_t)(v >= 0.0 ? (int32_t)(v + 0.5) : -(int32_t)(0.5 - v));
    }
}

/* Rescale an accumulator to a score: sat(round(acc / 2^SBMODEL_MODEL_Q31_SHIFT)),
        half away from zero.
 * |acc| + 2^(SHIFT-1) cannot overflow int64_t for any int32_t inputs (checked at export). */
static inline int32_t sbmodel_model_q31_rescale(int64_t acc)
{
    const int64_t half = (int64_t)1 << (SBMODEL_MODEL_Q31_SHIFT - 1);
    const int64_t div = (int64_t)1 << SBMODEL_MODEL_Q31_SHIFT;
    acc = acc >= 0 ? (acc + half) / div : -((-acc + half) / div);
    if (acc > INT64_C(2147483647)) {
        acc = INT64_C(2147483647);
    } else if (acc < INT64_C(-2147483648)) {
        acc = INT64_C(-2147483648);
    }
    return (int32_t)acc;
}

/* scores_q[j] = rescale(intercepts_q[j] + sum_i weights_q[i][j] * features_q[i]), with the sum
 * exact in int64_t; the score is scores_q[j] * 2^-SBMODEL_MODEL_Q31_SCORE_FRAC_BITS. */
static inline void sbmodel_model_predict_q31(const int32_t *features_q, int32_t *scores_q)
{
    size_t i, j;
    for (j = 0; j < SBMODEL_MODEL_N_TARGETS; ++j) {
        int64_t acc = sbmodel_model_q31_intercepts[j];
        for (i = 0; i < SBMODEL_MODEL_N_FEATURES; ++i) {
            acc += (int64_t)sbmodel_model_q31_weights[i][j] * (int64_t)features_q[i];
        }
        scores_q[j] = sbmodel_model_q31_rescale(acc);
    }
}


#endif /* SBMODEL_MODEL_H */
