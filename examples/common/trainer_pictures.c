/* The trainers' pictures (trainer_run.h): samples.png, drawn as Taniguchi
 * et al. section 4.4 does (local search, then MH steps; Gibbs sweeps where
 * the search does not apply), and completion.png, the test images' bottom
 * halves completed from their top halves. Each from its own generator
 * stream, so pictures never move training. */
#include "trainer_run.h"

#include "data.h"
#include "png.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tile n grey images (rows of grey, stride ld) into cols columns, each pixel
 * a square of PICTURE_SCALE or more pixels, so that an image is at least
 * IMAGE_MIN_SIDE pixels on a side (4 x 4 bars-and-stripes: 7; 8 x 8 digits:
 * 4), and write a PNG. */
static int write_grid(const run *r, const char *path, const float *grey, int64_t n, int64_t ld,
                      int cols)
{
    uint8_t *tile = NULL;
    int w, h;
    const int scale =
        image_scale_for(r->train.height, r->train.width, IMAGE_MIN_SIDE, PICTURE_SCALE);
    int rc = image_tile_scaled(&tile, &w, &h, grey, n, ld, r->train.height, r->train.width, cols,
                               scale > PICTURE_SCALE ? 2 : 1, scale, 0.0f, 1.0f);
    if (rc == IMAGE_OK) {
        rc = image_png_write(path, w, h, 1, tile, (size_t)w);
    }
    free(tile);
    if (rc != IMAGE_OK) {
        return trainer_complain(r->c, "%s: %s", path, image_strerror(rc));
    }
    return 0;
}

/* The local search moves binary and spin units only (not Potts sites, not
 * dReLU units). */
int trainer_can_search(const trainer_config *c)
{
    return c->units != TRAINER_POTTS && c->hidden != TRAINER_HIDDEN_DRELU;
}

/* Visible layers of n states (stride width) to grey rows (stride pixels). */
static void visible_to_grey(const run *r, int64_t n, const float *x, float *grey)
{
    data_decode(&r->enc, n, r->train.dim, x, r->width, grey, r->train.dim);
}

/*
 * Samples as Taniguchi et al. section 4.4 draws them: uniform random states,
 * the local search to a local minimum of E, then a few MH_UNIFORM steps, and
 * the visible layer; for Potts sites, which neither supports,
 * POTTS_SAMPLE_SWEEPS Gibbs sweeps from the uniform states. Its own stream
 * (seed, 3 + step): pictures never move the training generator. *accept
 * receives the MH acceptance rate (NaN without MH steps).
 */
int trainer_write_samples(const run *r, const ebm_model_t *m, const char *path, int64_t step,
                         double *accept, double *sweeps_mean)
{
    const trainer_config *c = r->c;
    const int64_t n = c->n_samples;
    if (n < 1) {
        return 0;
    }
    float *x = malloc((size_t)(n * r->width) * sizeof *x);
    float *grey = malloc((size_t)(n * r->train.dim) * sizeof *grey);
    int64_t *sweeps = malloc((size_t)n * sizeof *sweeps);
    ebm_rng_t *rng = NULL;
    ebm_sampler_t *s = NULL;
    int rc = x && grey && sweeps ? ebm_rng_create(&rng, c->seed, 3 + (uint64_t)step) : EBM_ENOMEM;
    if (rc == EBM_OK) {
        rc = ebm_model_random_state(m, rng, n, x, r->width, NULL, 0);
    }
    const int gibbs = !trainer_can_search(c);
    if (rc == EBM_OK && !gibbs) {
        rc = ebm_model_local_search(m, rng, n, x, r->width, NULL, 0, c->search_sweeps, sweeps);
        rc = rc > 0 ? EBM_OK : rc; /* rows stopped by the cap are still pictures */
    }
    double acc_sum = 0.0;
    if (rc == EBM_OK && gibbs) {
        rc = ebm_sampler_create(&s, m, EBM_SAMPLER_GIBBS);
        for (int64_t t = 0; rc == EBM_OK && t < GIBBS_SAMPLE_SWEEPS; t++) {
            rc = ebm_sampler_step(s, rng, n, x, r->width);
        }
        for (int64_t i = 0; i < n; i++) {
            sweeps[i] = GIBBS_SAMPLE_SWEEPS;
        }
    } else if (rc == EBM_OK && c->mh_steps > 0) {
        rc = ebm_sampler_create(&s, m, EBM_SAMPLER_MH_UNIFORM);
        for (int64_t t = 0; rc == EBM_OK && t < c->mh_steps; t++) {
            rc = ebm_sampler_step(s, rng, n, x, r->width);
            acc_sum += ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE);
        }
    }
    if (rc != EBM_OK) {
        trainer_complain(c, "samples: %s (%s)", ebm_error_name(rc),
                         s != NULL ? ebm_sampler_errmsg(s) : ebm_model_errmsg(m));
    } else {
        double sw = 0.0;
        for (int64_t i = 0; i < n; i++) {
            sw += (double)sweeps[i];
        }
        *sweeps_mean = sw / (double)n;
        *accept = c->mh_steps > 0 && !gibbs ? acc_sum / (double)c->mh_steps : NAN;
        visible_to_grey(r, n, x, grey);
        const int cols = (int)ceil(sqrt((double)n));
        rc = write_grid(r, path, grey, n, r->train.dim, cols);
    }
    ebm_sampler_destroy(s);
    ebm_rng_destroy(rng);
    free(sweeps);
    free(grey);
    free(x);
    return rc != 0;
}

/*
 * Image completion (Taniguchi Fig. 3, there with the lower half masked): the
 * top half of each test image is clamped, the rest of the state starts
 * uniform and the local search finds a low-energy completion. Rows of the
 * picture: the images as the model sees them (binarised), the masked
 * inputs (hidden part dark grey), the completions.
 */
/* A dReLU RBM's completion (no local search, no mean field): the layers'
 * conditional modes in turn, h given v, then the free visible units given
 * h, COMPLETION_MODE_ROUNDS times: a local minimum of E with the shown
 * pixels fixed. */
static int complete_by_modes(const run *r, const ebm_model_t *m, int64_t n, float *x,
                             const uint8_t *clamp)
{
    const int64_t w = r->width, d = r->dim;
    float *v = malloc((size_t)(n * d) * sizeof *v); /* the shown pixels, kept */
    int rc = v != NULL ? EBM_OK : EBM_ENOMEM;
    for (int64_t i = 0; rc == EBM_OK && i < n; i++) {
        memcpy(v + i * d, x + i * w, (size_t)d * sizeof *v);
    }
    for (int t = 0; rc == EBM_OK && t < COMPLETION_MODE_ROUNDS; t++) {
        rc = ebm_model_layer_argmin(m, 1, n, x, w);
        if (rc == EBM_OK) {
            rc = ebm_model_layer_argmin(m, 0, n, x, w);
        }
        for (int64_t i = 0; rc == EBM_OK && i < n; i++) {
            for (int64_t j = 0; j < d; j++) {
                x[i * w + j] = clamp[j] ? v[i * d + j] : x[i * w + j];
            }
        }
    }
    free(v);
    return rc;
}

int trainer_write_completions(const run *r, const ebm_model_t *m, const char *path)
{
    const trainer_config *c = r->c;
    const int64_t n = c->n_completions < r->test.n ? c->n_completions : r->test.n;
    if (n < 1) {
        return 0;
    }
    const int64_t pixels = r->train.dim, shown = (int64_t)(r->train.height / 2) * r->train.width;
    const int64_t per_pixel = r->dim / pixels;
    float *x = calloc((size_t)(n * r->width), sizeof *x);
    float *grey = malloc((size_t)(3 * n * pixels) * sizeof *grey);
    uint8_t *clamp = calloc((size_t)r->width, 1);
    ebm_rng_t *rng = NULL;
    char err[ERR_SIZE] = "";
    int rc = x && grey && clamp ? ebm_rng_create(&rng, c->seed, 4) : EBM_ENOMEM;
    if (rc != EBM_OK) {
        free(x), free(grey), free(clamp);
        return trainer_complain(c, "completion: out of memory");
    }
    memset(clamp, 1, (size_t)(shown * per_pixel));
    rc = data_batch(&r->test, &r->enc, rng, NULL, n, x, r->width, err, sizeof err);
    if (rc == DATA_OK) {
        visible_to_grey(r, n, x, grey);                  /* row 1: the data */
        memcpy(grey + n * pixels, grey, (size_t)(n * pixels) * sizeof *grey);
        for (int64_t i = 0; i < n; i++) {                /* row 2: masked */
            for (int64_t p = shown; p < pixels; p++) {
                grey[(n + i) * pixels + p] = 0.3f;
            }
        }
        rc = ebm_model_random_state(m, rng, n, x, r->width, clamp, 0);
        if (rc == EBM_OK && c->hidden == TRAINER_HIDDEN_DRELU) {
            rc = complete_by_modes(r, m, n, x, clamp);
        } else if (rc == EBM_OK && c->units == TRAINER_POTTS) {
            /* Potts sites: the mean-field posterior's expected levels. */
            rc = ebm_model_mean_field(m, n, x, r->width, clamp, 0, 200, 1e-5);
            rc = rc > 0 ? EBM_OK : rc;
        } else if (rc == EBM_OK) {
            rc = ebm_model_local_search(m, rng, n, x, r->width, clamp, 0, c->search_sweeps,
                                        NULL);
            rc = rc > 0 ? EBM_OK : rc;
        }
        if (rc != EBM_OK) {
            snprintf(err, sizeof err, "%s", ebm_model_errmsg(m));
        } else {
            visible_to_grey(r, n, x, grey + 2 * n * pixels); /* row 3: completed */
        }
    }
    ebm_rng_destroy(rng);
    free(clamp);
    free(x);
    if (rc != 0) {
        free(grey);
        return trainer_complain(c, "completion: %s", err);
    }
    rc = write_grid(r, path, grey, 3 * n, pixels, (int)n);
    free(grey);
    return rc;
}
