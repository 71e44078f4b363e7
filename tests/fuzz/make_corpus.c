/*
 * Writes the committed seed corpora of the libFuzzer targets (make fuzz-corpus):
 *
 *   make_corpus DIR   ->  DIR/load/NAME.ebm valid model files (fuzz_load.c)
 *                         DIR/api/NAME.bin  inputs of fuzz_api.c
 *
 * The model files cover every unit kind (binary, spin, Gaussian and Potts
 * visible; binary, spin and dReLU hidden), RBMs and DBMs of 3 and 4 layers,
 * in a couple of sizes, each a few hundred bytes to 2 KB, and centred models
 * (format version 2: names ending in "_centred"; a dReLU model is centred on
 * its visible units only). dReLU models (format version 2, hidden kind 4)
 * get shape parameters that are not all zero. Only the public header is
 * used: ebm_model_create, ebm_model_init, ebm_model_param_block,
 * ebm_model_get/set_params (log-variances, dReLU shapes),
 * ebm_model_set_offsets and ebm_model_save_buffer. The same library gives
 * the same bytes.
 *
 * The api inputs follow the byte layout decoded by fuzz_api.c (see the
 * comment at its top): a header byte, the layer sizes, (dReLU hidden units)
 * the dReLU byte, one value code per parameter, the states, then option
 * bytes, which are left to the fuzzer (missing bytes read as 0).
 *
 * SPDX-License-Identifier: MIT
 */
#include "ebm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "make_corpus: %s: %s\n", what, detail);
    exit(1);
}

static void make_dir(const char *path)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        die(path, strerror(errno));
    }
}

static void write_file(const char *dir, const char *name, const void *p, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        die(path, "cannot write");
    }
    printf("%s (%zu bytes)\n", path, n);
}

/* ---- model files ------------------------------------------------------- */

typedef struct model_seed {
    const char *name;
    int64_t n_layers;
    int64_t sizes[4];
    int visible, hidden;
    int scheme; /* EBM_INIT_*, or -1: all parameters zero */
    double scale;
} model_seed;

static const model_seed MODELS[] = {
    {"rbm_binary_binary_4x3", 2, {4, 3}, EBM_UNITS_BINARY, EBM_UNITS_BINARY,
     EBM_INIT_ORTHOGONAL, 1.0},
    {"rbm_binary_binary_16x12", 2, {16, 12}, EBM_UNITS_BINARY, EBM_UNITS_BINARY,
     EBM_INIT_GAUSSIAN, 0.1},
    {"rbm_spin_spin_5x4", 2, {5, 4}, EBM_UNITS_SPIN, EBM_UNITS_SPIN, EBM_INIT_ORTHOGONAL, 0.5},
    {"rbm_spin_binary_12x8", 2, {12, 8}, EBM_UNITS_SPIN, EBM_UNITS_BINARY,
     EBM_INIT_GAUSSIAN, 0.3},
    {"rbm_binary_spin_3x6", 2, {3, 6}, EBM_UNITS_BINARY, EBM_UNITS_SPIN, EBM_INIT_ORTHOGONAL, 2.0},
    {"rbm_binary_binary_1x1_zero", 2, {1, 1}, EBM_UNITS_BINARY, EBM_UNITS_BINARY, -1, 0.0},
    {"grbm_gaussian_binary_4x3", 2, {4, 3}, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY,
     EBM_INIT_ORTHOGONAL, 1.0},
    {"grbm_gaussian_binary_16x10", 2, {16, 10}, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY,
     EBM_INIT_GAUSSIAN, 0.1},
    {"grbm_gaussian_spin_6x5", 2, {6, 5}, EBM_UNITS_GAUSSIAN, EBM_UNITS_SPIN,
     EBM_INIT_GAUSSIAN, 0.5},
    {"dbm_binary_binary_8x6x4", 3, {8, 6, 4}, EBM_UNITS_BINARY, EBM_UNITS_BINARY,
     EBM_INIT_ORTHOGONAL, 1.0},
    {"dbm_spin_spin_12x10x8", 3, {12, 10, 8}, EBM_UNITS_SPIN, EBM_UNITS_SPIN,
     EBM_INIT_GAUSSIAN, 0.2},
    {"dbm_gaussian_binary_6x5x4", 3, {6, 5, 4}, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY,
     EBM_INIT_ORTHOGONAL, 0.5},
    {"dbm_gaussian_spin_4x4x3", 3, {4, 4, 3}, EBM_UNITS_GAUSSIAN, EBM_UNITS_SPIN,
     EBM_INIT_GAUSSIAN, 1.0},
    {"dbm4_binary_spin_5x4x3x2", 4, {5, 4, 3, 2}, EBM_UNITS_BINARY, EBM_UNITS_SPIN,
     EBM_INIT_GAUSSIAN, 1.0},
    {"dbm4_spin_binary_9x7x5x3", 4, {9, 7, 5, 3}, EBM_UNITS_SPIN, EBM_UNITS_BINARY,
     EBM_INIT_ORTHOGONAL, 0.7},
    {"rbm_binary_binary_4x3_centred", 2, {4, 3}, EBM_UNITS_BINARY, EBM_UNITS_BINARY,
     EBM_INIT_ORTHOGONAL, 1.0},
    {"dbm_spin_binary_5x4x3_centred", 3, {5, 4, 3}, EBM_UNITS_SPIN, EBM_UNITS_BINARY,
     EBM_INIT_GAUSSIAN, 0.5},
    /* Potts visible units of 3 categories (format version 2) */
    {"rbm_potts3_binary_12x5", 2, {12, 5}, EBM_UNITS_POTTS, EBM_UNITS_BINARY,
     EBM_INIT_ORTHOGONAL, 1.0},
    {"dbm_potts3_spin_9x4x3_centred", 3, {9, 4, 3}, EBM_UNITS_POTTS, EBM_UNITS_SPIN,
     EBM_INIT_GAUSSIAN, 0.5},
    /* dReLU hidden units (RBMs over discrete visible units; format version 2) */
    {"rbm_binary_drelu_6x4", 2, {6, 4}, EBM_UNITS_BINARY, EBM_UNITS_DRELU, EBM_INIT_ORTHOGONAL,
     1.0},
    {"rbm_spin_drelu_5x3", 2, {5, 3}, EBM_UNITS_SPIN, EBM_UNITS_DRELU, EBM_INIT_GAUSSIAN, 0.5},
    {"rbm_potts3_drelu_9x4", 2, {9, 4}, EBM_UNITS_POTTS, EBM_UNITS_DRELU, EBM_INIT_GAUSSIAN,
     0.3},
    {"rbm_binary_drelu_1x1_zero", 2, {1, 1}, EBM_UNITS_BINARY, EBM_UNITS_DRELU, -1, 0.0},
    {"rbm_binary_drelu_4x3_centred", 2, {4, 3}, EBM_UNITS_BINARY, EBM_UNITS_DRELU,
     EBM_INIT_ORTHOGONAL, 1.0},
};

static void write_models(const char *dir)
{
    ebm_rng_t *rng = NULL;
    if (ebm_rng_create(&rng, 2024, 7) != EBM_OK) {
        die("ebm_rng_create", "failed");
    }
    for (size_t i = 0; i < sizeof MODELS / sizeof MODELS[0]; i++) {
        const model_seed *s = &MODELS[i];
        ebm_model_t *m = NULL;
        char err[256];
        const int rc = s->visible == EBM_UNITS_POTTS
                           ? ebm_model_create_potts(&m, s->n_layers, s->sizes, 3, s->hidden, err,
                                                    sizeof err)
                           : ebm_model_create(&m, s->n_layers, s->sizes, s->visible, s->hidden,
                                              err, sizeof err);
        if (rc != EBM_OK) {
            die(s->name, err);
        }
        if (s->scheme >= 0 && ebm_model_init(m, rng, s->scheme, s->scale) != EBM_OK) {
            die(s->name, ebm_model_errmsg(m));
        }
        int64_t off, rows, cols;
        if (s->scheme >= 0 && ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &off, &rows,
                                                    &cols) == EBM_OK) {
            /* Gaussian: means and log-variances that are not all zero */
            int64_t np = ebm_model_param_count(m), boff;
            float *p = malloc((size_t)np * sizeof *p);
            if (p == NULL || ebm_model_get_params(m, p) != EBM_OK ||
                ebm_model_param_block(m, EBM_PARAM_BIAS, 0, &boff, NULL, NULL) != EBM_OK) {
                die(s->name, "get_params");
            }
            for (int64_t j = 0; j < cols; j++) {
                p[off + j] = (float)(j % 5) * 0.5f - 1.0f;
                p[boff + j] = (float)(j % 3) - 1.0f;
            }
            if (ebm_model_set_params(m, p) != EBM_OK) {
                die(s->name, ebm_model_errmsg(m));
            }
            free(p);
        }
        if (s->scheme >= 0 && ebm_model_param_block(m, EBM_PARAM_SHAPE, 1, &off, &rows,
                                                    &cols) == EBM_OK) {
            /* dReLU: log gamma+- in [-1, 1] and deltas of both signs (init
             * leaves them 0) */
            int64_t np = ebm_model_param_count(m);
            float *p = malloc((size_t)np * sizeof *p);
            if (p == NULL || ebm_model_get_params(m, p) != EBM_OK) {
                die(s->name, "get_params");
            }
            for (int64_t j = 0; j < cols; j++) {
                p[off + j] = (float)(j % 5) * 0.5f - 1.0f;           /* log gamma+ */
                p[off + cols + j] = (float)(j % 3) * 0.75f - 0.75f;  /* log gamma- */
                p[off + 2 * cols + j] = (float)(j % 4) * 0.5f - 0.5f; /* delta */
            }
            if (ebm_model_set_params(m, p) != EBM_OK) {
                die(s->name, ebm_model_errmsg(m));
            }
            free(p);
        }
        if (strstr(s->name, "_centred") != NULL) {
            /* offsets j / width: in [0, 1), so in every unit's range; none
             * on dReLU units (they have no offsets) */
            const int64_t w = ebm_model_state_width(m);
            float mu[64];
            for (int64_t j = 0; j < w; j++) {
                int64_t l = ebm_model_num_layers(m) - 1;
                while (j < ebm_model_layer_offset(m, l)) {
                    l--;
                }
                mu[j] = ebm_model_layer_units(m, l) == EBM_UNITS_DRELU ? 0.0f
                                                                        : (float)j / (float)w;
            }
            if (ebm_model_set_offsets(m, mu, 1) != EBM_OK) {
                die(s->name, ebm_model_errmsg(m));
            }
        }
        size_t cap = (size_t)ebm_model_save_size(m), n = 0;
        void *buf = malloc(cap);
        if (buf == NULL || ebm_model_save_buffer(m, buf, cap, &n) != EBM_OK) {
            die(s->name, ebm_model_errmsg(m));
        }
        char name[128];
        snprintf(name, sizeof name, "%s.ebm", s->name);
        write_file(dir, name, buf, n);
        free(buf);
        ebm_model_destroy(m);
    }
    ebm_rng_destroy(rng);
}

/* ---- fuzz_api inputs ---------------------------------------------------- */

/* Value codes of fuzz_api.c (value_of): code >> 4 picks a magnitude class,
 * bit 3 the sign, bits 0-2 the mantissa 1 + k/8. Magnitude classes:
 *   0: 0   1: 1.4e-45 (denormal)   2: 1e-38   3: 1e-20   4: 1e-3   5: 0.1
 *   6: 0.5   7: 1   8: 2   9: 10   10: 1e3   11: 1e8   12: 1e16   13: 1e30
 *   14: 1e38   15: FLT_MAX * (1 - k/16)  (code 0xff: 4 raw bytes follow) */
static uint8_t code(int mag, int negative, int k)
{
    return (uint8_t)((mag << 4) | (negative ? 8 : 0) | (k & 7));
}

typedef struct api_seed {
    const char *name;
    int n_layers, visible, hidden; /* visible: 0 binary, 1 spin, 2 Gaussian, 3 Potts;
                                      hidden: 0 binary, 1 spin, 4 dReLU */
    int sizes[3];
    int rows;
    int weight_mag, bias_mag; /* magnitude classes of the parameter codes */
    int init_scheme;          /* -1: parameters from codes; else ebm_model_init */
    int extra;                /* option bytes appended (a pattern) */
} api_seed;

/* Moderate parameters mostly (the fuzzer mutates the codes towards the
 * extremes), a few large and tiny ones, every unit combination. */
static const api_seed API[] = {
    {"rbm_bb_small", 2, 0, 0, {3, 2, 0}, 2, 7, 6, -1, 0},
    {"rbm_bb_6x6", 2, 0, 0, {6, 6, 0}, 4, 6, 5, -1, 1},
    {"rbm_bs", 2, 0, 1, {4, 3, 0}, 3, 7, 7, -1, 2},
    {"rbm_sb", 2, 1, 0, {5, 2, 0}, 2, 8, 6, -1, 3},
    {"rbm_ss", 2, 1, 1, {2, 5, 0}, 3, 7, 5, -1, 4},
    {"rbm_ss_1x1", 2, 1, 1, {1, 1, 0}, 1, 9, 7, -1, 5},
    {"grbm_gb", 2, 2, 0, {3, 2, 0}, 2, 6, 6, -1, 6},
    {"grbm_gb_6x4", 2, 2, 0, {6, 4, 0}, 4, 5, 5, -1, 7},
    {"grbm_gs", 2, 2, 1, {4, 3, 0}, 3, 7, 6, -1, 8},
    {"grbm_gb_1x1", 2, 2, 0, {1, 1, 0}, 1, 7, 7, -1, 9},
    {"dbm_bbb", 3, 0, 0, {4, 3, 2}, 2, 7, 6, -1, 10},
    {"dbm_bbb_6x6x6", 3, 0, 0, {6, 6, 6}, 3, 6, 5, -1, 11},
    {"dbm_sss", 3, 1, 1, {3, 4, 2}, 2, 7, 6, -1, 12},
    {"dbm_sbb", 3, 1, 0, {5, 3, 3}, 3, 8, 7, -1, 13},
    {"dbm_bss", 3, 0, 1, {2, 2, 2}, 4, 7, 7, -1, 14},
    {"gdbm_gbb", 3, 2, 0, {3, 3, 2}, 2, 6, 6, -1, 15},
    {"gdbm_gss", 3, 2, 1, {4, 2, 3}, 3, 7, 6, -1, 16},
    {"rbm_bb_large", 2, 0, 0, {4, 3, 0}, 2, 10, 9, -1, 17},
    {"rbm_ss_1e8", 2, 1, 1, {3, 3, 0}, 2, 11, 10, -1, 18},
    {"grbm_gb_large", 2, 2, 0, {3, 2, 0}, 2, 10, 8, -1, 19},
    {"dbm_bbb_large", 3, 0, 0, {3, 3, 3}, 2, 9, 9, -1, 20},
    {"rbm_bb_tiny", 2, 0, 0, {4, 4, 0}, 2, 2, 1, -1, 21},
    {"grbm_gs_tiny", 2, 2, 1, {2, 3, 0}, 2, 3, 4, -1, 22},
    {"rbm_bb_zero", 2, 0, 0, {3, 3, 0}, 2, 0, 0, -1, 23},
    {"rbm_bb_init_orth", 2, 0, 0, {6, 4, 0}, 3, 7, 7, EBM_INIT_ORTHOGONAL, 24},
    {"dbm_sss_init_gauss", 3, 1, 1, {5, 4, 3}, 3, 7, 7, EBM_INIT_GAUSSIAN, 25},
    {"grbm_gb_init_orth", 2, 2, 0, {5, 3, 0}, 2, 6, 7, EBM_INIT_ORTHOGONAL, 26},
    {"gdbm_gsb_init_gauss", 3, 2, 1, {3, 3, 3}, 2, 5, 7, EBM_INIT_GAUSSIAN, 27},
    {"rbm_sb_mixed", 2, 1, 0, {6, 5, 0}, 4, 8, 4, -1, 28},
    {"dbm_bbs_mixed", 3, 0, 1, {6, 1, 6}, 2, 8, 8, -1, 29},
    /* Potts visible units (kind 3): sizes[0] is q x sites, q = 3 if 3
     * divides it, else 2 */
    {"rbm_potts3_b", 2, 3, 0, {6, 3, 0}, 2, 7, 6, -1, 30},
    {"dbm_potts2_ss", 3, 3, 1, {4, 3, 2}, 3, 7, 7, -1, 31},
    {"rbm_potts3_init_orth", 2, 3, 0, {9, 4, 0}, 2, 7, 7, EBM_INIT_ORTHOGONAL, 32},
    /* dReLU hidden units (4): header bit 7 without bit 4, then the dReLU
     * byte; log gammas clamped into +-30 unless the name says raw. A dReLU
     * DBM or a dReLU model over Gaussian units is refused by create and the
     * input goes on with an RBM (Gaussian visible units read as binary). */
    {"rbm_b_drelu", 2, 0, 4, {4, 3, 0}, 2, 7, 6, -1, 33},
    {"rbm_s_drelu_6x5", 2, 1, 4, {6, 5, 0}, 4, 6, 6, -1, 34},
    {"rbm_potts3_drelu", 2, 3, 4, {6, 2, 0}, 3, 7, 7, -1, 35},
    {"rbm_potts2_drelu_init_gauss", 2, 3, 4, {4, 3, 0}, 2, 7, 7, EBM_INIT_GAUSSIAN, 36},
    {"rbm_b_drelu_init_orth", 2, 0, 4, {5, 4, 0}, 3, 7, 7, EBM_INIT_ORTHOGONAL, 37},
    {"rbm_s_drelu_1x1", 2, 1, 4, {1, 1, 0}, 1, 8, 7, -1, 38},
    {"rbm_b_drelu_large", 2, 0, 4, {3, 2, 0}, 2, 10, 9, -1, 39},
    {"rbm_b_drelu_raw", 2, 0, 4, {3, 3, 0}, 2, 7, 7, -1, 40},
    {"rbm_s_drelu_raw_out_of_range", 2, 1, 4, {2, 2, 0}, 2, 7, 10, -1, 41},
    {"dbm_b_drelu_refused", 3, 0, 4, {3, 2, 2}, 2, 7, 6, -1, 42},
    {"grbm_drelu_refused", 2, 2, 4, {3, 3, 0}, 2, 7, 6, -1, 43},
};

static void write_api(const char *dir)
{
    for (size_t i = 0; i < sizeof API / sizeof API[0]; i++) {
        const api_seed *s = &API[i];
        uint8_t b[1024];
        size_t n = 0;
        uint64_t h = 0x9e3779b97f4a7c15ull * (i + 1); /* a fixed pattern per seed */
#define NEXT() (h ^= h << 13, h ^= h >> 7, h ^= h << 17, (uint8_t)h)
        /* header: bit 0 layers - 2, bits 1-2 visible kind, bit 3 hidden kind,
         * bit 4 parameters by ebm_model_init, bits 5-6 rows - 1, bit 7 init
         * scheme; dReLU: bit 7 without bit 4 (init by the dReLU byte) */
        const int drelu = s->hidden == 4;
        if (drelu) {
            b[n++] = (uint8_t)((s->n_layers - 2) | (s->visible << 1) | ((s->rows - 1) << 5) |
                               0x80);
        } else {
            b[n++] = (uint8_t)((s->n_layers - 2) | (s->visible << 1) | (s->hidden << 3) |
                               ((s->init_scheme >= 0) << 4) | ((s->rows - 1) << 5) |
                               ((s->init_scheme == EBM_INIT_GAUSSIAN) << 7));
        }
        for (int l = 0; l < s->n_layers; l++) {
            if (l == 0 && s->visible == 3) { /* b: q - 2 in bit 0, sites - 1 above it */
                const int q = s->sizes[0] % 3 == 0 ? 3 : 2;
                b[n++] = (uint8_t)((q - 2) | ((s->sizes[0] / q - 1) << 1));
            } else {
                b[n++] = (uint8_t)(s->sizes[l] - 1);
            }
        }
        /* a refused dReLU shape goes on as an RBM over discrete units */
        const int n_layers = drelu ? 2 : s->n_layers;
        const int visible = drelu && s->visible == 2 ? 0 : s->visible;
        const int raw = strstr(s->name, "_raw") != NULL;
        if (drelu) { /* bit 0 init, bit 1 Gaussian scheme, bit 2 raw log gammas */
            b[n++] = (uint8_t)((s->init_scheme >= 0) | ((s->init_scheme == EBM_INIT_GAUSSIAN) << 1) |
                               (raw << 2));
        }
        int64_t np = 0;
        for (int l = 0; l < n_layers; l++) {
            np += s->sizes[l];
            if (l > 0) {
                np += s->sizes[l - 1] * s->sizes[l];
            }
        }
        int64_t width = np;
        for (int l = 1; l < n_layers; l++) {
            width -= s->sizes[l - 1] * s->sizes[l];
        }
        if (s->init_scheme >= 0) {
            b[n++] = code(s->weight_mag, 0, 0); /* the scale */
            if (drelu) { /* then the shape block */
                for (int k = 0; k < 3 * s->sizes[1]; k++) {
                    uint8_t r = NEXT(); /* log gammas and deltas about 0.5 to 2 */
                    b[n++] = code(6 + r % 3, r & 8, r);
                }
            }
        } else {
            int64_t nw = np - width;
            for (int64_t j = 0; j < nw; j++) {
                uint8_t r = NEXT();
                b[n++] = code(s->weight_mag > 0 ? s->weight_mag - (r % 3 == 0) : 0, r & 8, r);
            }
            for (int64_t j = 0; j < width; j++) {
                uint8_t r = NEXT();
                b[n++] = code(s->bias_mag, r & 8, r);
            }
            if (visible == 2) {
                for (int j = 0; j < s->sizes[0]; j++) {
                    uint8_t r = NEXT(); /* log-variances within +-30 */
                    b[n++] = code(r % 3 == 0 ? 8 : 6, r & 8, r);
                }
            }
            if (drelu) { /* log gamma+, log gamma- (bias_mag: 10 is 1e3, past +-30), delta */
                for (int k = 0; k < 3 * s->sizes[1]; k++) {
                    uint8_t r = NEXT();
                    b[n++] = code(k < 2 * s->sizes[1] ? s->bias_mag - (r % 3 == 0) : 6 + r % 3,
                                  r & 8, r);
                }
            }
        }
        if (drelu) { /* the axpy refusal: which log gamma, which sign */
            b[n++] = NEXT();
        }
        /* states: one byte per unit (bit 0 for binary and spin, a value code
         * for a Gaussian or dReLU unit), then the stride padding */
        for (int r = 0; r < s->rows; r++) {
            for (int l = 0; l < n_layers; l++) {
                for (int j = 0; j < s->sizes[l]; j++) {
                    uint8_t v = NEXT();
                    const int real = (l == 0 && visible == 2) || (l == 1 && drelu);
                    b[n++] = real ? code(5 + v % 4, v & 8, v) : v;
                }
            }
        }
        /* option bytes: a pattern the fuzzer will take apart */
        for (int k = 0; k < 24 + 4 * s->extra % 40; k++) {
            b[n++] = NEXT();
        }
#undef NEXT
        char name[128];
        snprintf(name, sizeof name, "%s.bin", s->name);
        write_file(dir, name, b, n);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_corpus DIR   (writes DIR/load and DIR/api)\n");
        return 2;
    }
    char path[1024];
    make_dir(argv[1]);
    snprintf(path, sizeof path, "%s/load", argv[1]);
    make_dir(path);
    write_models(path);
    snprintf(path, sizeof path, "%s/api", argv[1]);
    make_dir(path);
    write_api(path);
    return 0;
}
