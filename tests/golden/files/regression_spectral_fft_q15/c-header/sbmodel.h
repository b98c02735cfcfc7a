/*
 * sbmodel.h: sparse linear model exported by sensorbudget 0.1.0 (sensorbudget export c-header).
 *     Generated file, do not edit.
 * Header format version 1; bundle sha256
 *     e4af9aba25fe1e337350efe5263928338ec26f0a7fee2e1c84e6fa45060169b2.
 * Task regression; 11 selected features of 11 candidates; 2 targets; numeric q15.
 *
 * Required sensors (2):
 *   [0] "leg" {"average_power_w": 6.4e-05, "channels": ["leg_vert", "leg_horiz_fwd",
 *       "leg_horiz_lateral"], "energy_per_prediction_j": 1.6e-05, "energy_per_reading_j": 1e-06,
 *       "name": "leg", "readings_per_prediction": 16, "sample_rate_hz": 64.0, "unit_price": 1.0}
 *   [1] "trunk" {"average_power_w": 6.4e-05, "channels": ["trunk_vert", "trunk_horiz_fwd",
 *       "trunk_horiz_lateral"], "energy_per_prediction_j": 1.6e-05, "energy_per_reading_j": 1e-06,
 *       "name": "trunk", "readings_per_prediction": 16, "sample_rate_hz": 64.0, "unit_price": 1.0}
 * Required extractors (11), to compute on the device:
 *   [0] "leg_vert.bandpower_1to4" sensors ["leg"] cost 0 params {"arg": [1.0, 4.0], "arithmetic":
 *       "float32-sequential-v1", "channels": ["leg_vert"], "fixed_point": false, "hop": 16, "kind":
 *       "bandpower", "sample_rate_hz": 64.0, "spectrum_window": "hann", "window": 32}
 *   [1] "trunk_vert.std" sensors ["trunk"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["trunk_vert"], "fixed_point": false, "hop": 16, "kind": "std",
 *       "sample_rate_hz": 64.0, "window": 32}
 *   [2] "trunk_vert.skew" sensors ["trunk"] cost 0 params {"arithmetic": "float32-sequential-v1",
 *       "channels": ["trunk_vert"], "fixed_point": false, "hop": 16, "kind": "skew",
 *       "sample_rate_hz": 64.0, "window": 32}
 *   [3] "leg_horiz_fwd.kurtosis" sensors ["leg"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["leg_horiz_fwd"], "fixed_point": false, "hop": 16,
 *       "kind": "kurtosis", "sample_rate_hz": 64.0, "window": 32}
 *   [4] "leg_vert.percentile_90" sensors ["leg"] cost 0 params {"arg": 90.0, "arithmetic":
 *       "float32-sequential-v1", "channels": ["leg_vert"], "fixed_point": true, "hop": 16, "kind":
 *       "percentile", "sample_rate_hz": 64.0, "window": 32}
 *   [5] "leg_horiz_fwd.domfreq" sensors ["leg"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["leg_horiz_fwd"], "fixed_point": false, "hop": 16,
 *       "kind": "domfreq", "sample_rate_hz": 64.0, "spectrum_window": "hann", "window": 32}
 *   [6] "leg_vert.cadence_2to9" sensors ["leg"] cost 0 params {"arg": [2, 9], "arithmetic":
 *       "float32-sequential-v1", "channels": ["leg_vert"], "fixed_point": false, "hop": 16, "kind":
 *       "cadence", "sample_rate_hz": 64.0, "window": 32}
 *   [7] "trunk_vert.peaks_0_5" sensors ["trunk"] cost 0 params {"arg": 0.5, "arithmetic":
 *       "float32-sequential-v1", "channels": ["trunk_vert"], "fixed_point": false, "hop": 16,
 *       "kind": "peaks", "sample_rate_hz": 64.0, "window": 32}
 *   [8] "trunk_vert.bandratio_1to3_over_3to8" sensors ["trunk"] cost 0 params {"arg": [1.0, 3.0,
 *       3.0, 8.0], "arithmetic": "float32-sequential-v1", "channels": ["trunk_vert"],
 *       "fixed_point": false, "hop": 16, "kind": "bandratio", "sample_rate_hz": 64.0,
 *       "spectrum_window": "hann", "window": 32}
 *   [9] "leg_horiz_fwd.entropy" sensors ["leg"] cost 0 params {"arithmetic":
 *       "float32-sequential-v1", "channels": ["leg_horiz_fwd"], "fixed_point": false, "hop": 16,
 *       "kind": "entropy", "sample_rate_hz": 64.0, "spectrum_window": "hann", "window": 32}
 *   [10] "leg_vert.autocorr_3" sensors ["leg"] cost 0 params {"arg": 3, "arithmetic":
 *       "float32-sequential-v1", "channels": ["leg_vert"], "fixed_point": false, "hop": 16, "kind":
 *       "autocorr", "sample_rate_hz": 64.0, "window": 32}
 * Input features, in the order sbmodel_predict expects them:
 *   [0] "leg_vert.bandpower_1to4" candidate column 0, extractor [0], training range [620474,
 *       4.1171e+07]
 *   [1] "trunk_vert.std" candidate column 4, extractor [1], training range [66.7273, 1052.44]
 *   [2] "trunk_vert.skew" candidate column 2, extractor [2], training range [-1.61448, 3.9253]
 *   [3] "leg_horiz_fwd.kurtosis" candidate column 8, extractor [3], training range [-1.71583,
 *       24.3452]
 *   [4] "leg_vert.percentile_90" candidate column 3, extractor [4], training range [756, 2041]
 *   [5] "leg_horiz_fwd.domfreq" candidate column 1, extractor [5], training range [2, 30]
 *   [6] "leg_vert.cadence_2to9" candidate column 7, extractor [6], training range [2, 2]
 *   [7] "trunk_vert.peaks_0_5" candidate column 9, extractor [7], training range [0, 6]
 *   [8] "trunk_vert.bandratio_1to3_over_3to8" candidate column 6, extractor [8], training range
 *       [0.0659614, 12.5549]
 *   [9] "leg_horiz_fwd.entropy" candidate column 5, extractor [9], training range [0.153785,
 *       0.995752]
 *   [10] "leg_vert.autocorr_3" candidate column 10, extractor [10], training range [0.135134,
 *       0.822503]
 * Targets (scores[j]):
 *   [0] "speed"
 *   [1] "load"
 */

#ifndef SBMODEL_H
#define SBMODEL_H

#include <stddef.h>
#include <stdint.h>

#define SBMODEL_FORMAT_VERSION 1
#define SBMODEL_N_FEATURES 11
#define SBMODEL_N_TARGETS 2
#define SBMODEL_N_CANDIDATES 11
#define SBMODEL_N_REQUIRED_EXTRACTORS 11
#define SBMODEL_N_REQUIRED_SENSORS 2
#define SBMODEL_TASK_REGRESSION 1
#define SBMODEL_NUMERIC_Q15 1

/* Index of each input feature in features[] and of each target in scores[]. */
#define SBMODEL_F_LEG_VERT_BANDPOWER_1TO4 0
#define SBMODEL_F_TRUNK_VERT_STD 1
#define SBMODEL_F_TRUNK_VERT_SKEW 2
#define SBMODEL_F_LEG_HORIZ_FWD_KURTOSIS 3
#define SBMODEL_F_LEG_VERT_PERCENTILE_90 4
#define SBMODEL_F_LEG_HORIZ_FWD_DOMFREQ 5
#define SBMODEL_F_LEG_VERT_CADENCE_2TO9 6
#define SBMODEL_F_TRUNK_VERT_PEAKS_0_5 7
#define SBMODEL_F_TRUNK_VERT_BANDRATIO_1TO3_OVER_3TO8 8
#define SBMODEL_F_LEG_HORIZ_FWD_ENTROPY 9
#define SBMODEL_F_LEG_VERT_AUTOCORR_3 10
#define SBMODEL_T_SPEED 0
#define SBMODEL_T_LOAD 1

static const char *const sbmodel_feature_names[SBMODEL_N_FEATURES] = {
    "leg_vert.bandpower_1to4", "trunk_vert.std", "trunk_vert.skew", "leg_horiz_fwd.kurtosis",
    "leg_vert.percentile_90", "leg_horiz_fwd.domfreq",
    "leg_vert.cadence_2to9", "trunk_vert.peaks_0_5", "trunk_vert.bandratio_1to3_over_3to8",
    "leg_horiz_fwd.entropy", "leg_vert.autocorr_3"
};

static const unsigned sbmodel_feature_columns[SBMODEL_N_FEATURES] = {
    0u,  /* "leg_vert.bandpower_1to4" */
    4u,  /* "trunk_vert.std" */
    2u,  /* "trunk_vert.skew" */
    8u,  /* "leg_horiz_fwd.kurtosis" */
    3u,  /* "leg_vert.percentile_90" */
    1u,  /* "leg_horiz_fwd.domfreq" */
    7u,  /* "leg_vert.cadence_2to9" */
    9u,  /* "trunk_vert.peaks_0_5" */
    6u,  /* "trunk_vert.bandratio_1to3_over_3to8" */
    5u,  /* "leg_horiz_fwd.entropy" */
    10u   /* "leg_vert.autocorr_3" */
};

static const int sbmodel_feature_extractor[SBMODEL_N_FEATURES] = {
    0,  /* "leg_vert.bandpower_1to4" */
    1,  /* "trunk_vert.std" */
    2,  /* "trunk_vert.skew" */
    3,  /* "leg_horiz_fwd.kurtosis" */
    4,  /* "leg_vert.percentile_90" */
    5,  /* "leg_horiz_fwd.domfreq" */
    6,  /* "leg_vert.cadence_2to9" */
    7,  /* "trunk_vert.peaks_0_5" */
    8,  /* "trunk_vert.bandratio_1to3_over_3to8" */
    9,  /* "leg_horiz_fwd.entropy" */
    10   /* "leg_vert.autocorr_3" */
};

static const char *const sbmodel_target_names[SBMODEL_N_TARGETS] = {
    "speed", "load"
};

static const char *const sbmodel_required_extractors[11] = {
    "leg_vert.bandpower_1to4", "trunk_vert.std", "trunk_vert.skew", "leg_horiz_fwd.kurtosis",
    "leg_vert.percentile_90", "leg_horiz_fwd.domfreq",
    "leg_vert.cadence_2to9", "trunk_vert.peaks_0_5", "trunk_vert.bandratio_1to3_over_3to8",
    "leg_horiz_fwd.entropy", "leg_vert.autocorr_3"
};

static const char *const sbmodel_extractor_params_json[11] = {
    ("{\"arg\": [1.0, 4.0], \"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"leg_vert\""
    "], \"fixed_point\": false, \"hop\": 16, \"kind\": \"bandpower\", \"sample_rate_hz\": 64.0, "
    "\"spectrum_window\": \"hann\", \"window\": 32}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_vert\"], \"fixed_point\":"
    " false, \"hop\": 16, \"kind\": \"std\", \"sample_rate_hz\": 64.0, \"window\": 32}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_vert\"], \"fixed_point\":"
    " false, \"hop\": 16, \"kind\": \"skew\", \"sample_rate_hz\": 64.0, \"window\": 32}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"leg_horiz_fwd\"], \"fixed_point"
    "\": false, \"hop\": 16, \"kind\": \"kurtosis\", \"sample_rate_hz\": 64.0, \"window\": 32}"),
    ("{\"arg\": 90.0, \"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"leg_vert\"], \"f"
    "ixed_point\": true, \"hop\": 16, \"kind\": \"percentile\", \"sample_rate_hz\": 64.0, \"windo"
    "w\": 32}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"leg_horiz_fwd\"], \"fixed_point"
    "\": false, \"hop\": 16, \"kind\": \"domfreq\", \"sample_rate_hz\": 64.0, \"spectrum_window\""
    ": \"hann\", \"window\": 32}"),
    ("{\"arg\": [2, 9], \"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"leg_vert\"], "
    "\"fixed_point\": false, \"hop\": 16, \"kind\": \"cadence\", \"sample_rate_hz\": 64.0, \"wind"
    "ow\": 32}"),
    ("{\"arg\": 0.5, \"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"trunk_vert\"], \""
    "fixed_point\": false, \"hop\": 16, \"kind\": \"peaks\", \"sample_rate_hz\": 64.0, \"window\""
    ": 32}"),
    ("{\"arg\": [1.0, 3.0, 3.0, 8.0], \"arithmetic\": \"float32-sequential-v1\", \"channels\": [\""
    "trunk_vert\"], \"fixed_point\": false, \"hop\": 16, \"kind\": \"bandratio\", \"sample_rate_h"
    "z\": 64.0, \"spectrum_window\": \"hann\", \"window\": 32}"),
    ("{\"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"leg_horiz_fwd\"], \"fixed_point"
    "\": false, \"hop\": 16, \"kind\": \"entropy\", \"sample_rate_hz\": 64.0, \"spectrum_window\""
    ": \"hann\", \"window\": 32}"),
    ("{\"arg\": 3, \"arithmetic\": \"float32-sequential-v1\", \"channels\": [\"leg_vert\"], \"fixe"
    "d_point\": false, \"hop\": 16, \"kind\": \"autocorr\", \"sample_rate_hz\": 64.0, \"window\":"
    " 32}")
};

static const char *const sbmodel_required_sensors[2] = {
    "leg", "trunk"
};

/* Training range of each input feature (float32, rounded outwards). */

static const float sbmodel_x_min[SBMODEL_N_FEATURES] = {
    620474.188f, 66.7273483f, -1.61448026f, -1.71583402f, 756.0f, 2.0f,
    2.0f, 0.0f, 0.0659613907f, 0.153785452f, 0.135134131f
};

static const float sbmodel_x_max[SBMODEL_N_FEATURES] = {
    41170984.0f, 1052.43628f, 3.92529964f, 24.3451805f, 2041.0f, 30.0f,
    2.0f, 6.0f, 12.5548801f, 0.995751739f, 0.822502851f
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
 * for inputs in [x_min, x_max] (largest reachable |score| 18.2468). */
#define SBMODEL_Q15_ERROR_BOUND 2.1e-3f

/* Input quantisation: centre and QMAX / half-width of each training range. */

static const float sbmodel_q15_input_offset[SBMODEL_N_FEATURES] = {
    20895730.0f, 559.581787f, 1.15540969f, 11.3146734f, 1398.5f, 16.0f,
    2.0f, 3.0f, 6.31042099f, 0.574768603f, 0.478818476f
};

static const float sbmodel_q15_input_inv_scale[SBMODEL_N_FEATURES] = {
    0.00161610625f, 66.4840622f, 11829.7002f, 2514.63501f, 50.9991722f, 2340.4978f,
    16383.4844f, 10922.3232f, 5247.3667f, 77834.3984f, 95340.2891f
};

/* Weights with the input scales folded in, times 2^26;
 * intercepts with the offsets folded in, same scale. */

static const int16_t sbmodel_q15_weights[SBMODEL_N_FEATURES][SBMODEL_N_TARGETS] = {
    { 2532, 6395 },  /* [0] "leg_vert.bandpower_1to4" */
    { 3660, 10198 },  /* [1] "trunk_vert.std" */
    { -1602, -3897 },  /* [2] "trunk_vert.skew" */
    { -618, -2596 },  /* [3] "leg_horiz_fwd.kurtosis" */
    { 548, 2088 },  /* [4] "leg_vert.percentile_90" */
    { -774, -1896 },  /* [5] "leg_horiz_fwd.domfreq" */
    { 0, 0 },  /* [6] "leg_vert.cadence_2to9" */
    { -562, -1071 },  /* [7] "trunk_vert.peaks_0_5" */
    { -488, -309 },  /* [8] "trunk_vert.bandratio_1to3_over_3to8" */
    { 350, 105 },  /* [9] "leg_horiz_fwd.entropy" */
    { -159, -501 }   /* [10] "leg_vert.autocorr_3" */
};

static const int32_t sbmodel_q15_intercepts[SBMODEL_N_TARGETS] = {
    INT32_C(122046241), INT32_C(272424398)
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
