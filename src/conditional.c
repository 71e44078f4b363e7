/* Conditionals of one layer given its neighbours: inputs, means,
 * log-probabilities, argmins, draws; and uniform random states. */
#include "error.h"
#include "model.h"
#include "rng.h"
#include "energy.h"
#include "conditional.h"
#include "drelu.h"
#include "kernels.h"
#include "numerics.h"
#include "threads.h"

#include <stdlib.h>
#include <string.h>

static const double LOG_2PI = 1.8378770664093454836;

/* Words of a row's stream used for normals: far from the uniforms at 0. */
#define NORMAL_WORDS (UINT64_C(1) << 32)

/* The draws of `rows` rows of discrete layer l: p(+1 | a) of a spin is
 * e^a / (e^a + e^-a) = sigmoid(2a); a Potts site by ebm__potts_draw. */
static void draw_rows(const ebm_model_t *m, int64_t l, int64_t rows, const float *a, int64_t lda,
                      const float *u, int64_t ldu, float *xl, int64_t ldx)
{
    if (ebm__is_potts(m, l)) {
        for (int64_t r = 0; r < rows; r++) {
            ebm__potts_draw(m->categories[l], m->size[l], a + r * lda, u + r * ldu, xl + r * ldx);
        }
        return;
    }
    const int spin = m->units[l] == EBM_UNITS_SPIN;
    ebm__kern()->bernoulli(rows, m->size[l], a, lda, spin ? 2.0f : 1.0f, spin ? -1.0f : 0.0f, u,
                           ldu, xl, ldx);
}

/* The rows of one ebm__draw_from_uniforms call, split in blocks of 64
 * rows (one kernel call each). */
typedef struct draw_job {
    const ebm_model_t *m;
    int64_t l, n, lda, ldu, ldx;
    const float *a, *u;
    float *xl;
} draw_job;

static void draw_blocks(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const draw_job *c = ctx;
    for (int64_t b = begin; b < end; b++) {
        const int64_t r = b * 64;
        draw_rows(c->m, c->l, c->n - r < 64 ? c->n - r : 64, c->a + r * c->lda, c->lda,
                  c->u + r * c->ldu, c->ldu, c->xl + r * c->ldx, c->ldx);
    }
}

void ebm__draw_from_uniforms(const ebm_model_t *m, int64_t l, int64_t n, const float *a,
                             int64_t lda, const float *u, int64_t ldu, float *xl, int64_t ldx)
{
    draw_job c = {m, l, n, lda, ldu, ldx, a, u, xl};
    ebm__for_rows((n + 63) / 64, n * m->size[l] * 8, 0, draw_blocks, &c);
}

/* One draw per site of q categories from the softmax of its inputs a, by
 * the inverse CDF in double with the uniform u[i] at the site's first
 * column; written one-hot into x (which may be u: u[i] is read first). */
void ebm__potts_draw(int64_t q, int64_t nl, const float *a, const float *u, float *x)
{
    for (int64_t i = 0; i < nl; i += q) {
        const double t = (double)u[i];
        ebm__site_softmax(q, a + i, x + i); /* x's site as scratch */
        const int64_t pick = ebm__site_pick(q, x + i, t);
        for (int64_t k = 0; k < q; k++) {
            x[i + k] = k == pick ? 1.0f : 0.0f;
        }
    }
}

/* The rows of one ebm__sample_from_input call. */
typedef struct sample_job {
    const ebm_model_t *m;
    int64_t l, lda, ldx;
    const ebm__stream *s;
    const int64_t *rows;
    uint64_t word;
    const float *a;
    float *xl;
} sample_job;

/* dReLU rows: unit j from words 8 (word + j) on: a dReLU layer's stream
 * draws nothing else, and 8 (word + j) < 2^34 words, a row's share. */
static void drelu_rows(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const sample_job *c = ctx;
    const int64_t nl = c->m->size[c->l];
    for (int64_t r = begin; r < end; r++) {
        float *o = c->xl + r * c->ldx;
        const float *ar = c->a + r * c->lda;
        const uint32_t row = ebm__row_id(c->rows, r);
        for (int64_t j = 0; j < nl; j++) {
            double gp, gn, d;
            ebm__drelu_shape(c->m, j, &gp, &gn, &d);
            o[j] = (float)ebm__drelu_draw(gp, gn, ar[j] + d, ar[j] - d, c->s, row,
                                          8 * (c->word + (uint64_t)j));
        }
    }
}

/* Binary, spin, Potts and Gaussian rows, each from its own stream row. */
static void sample_rows(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const sample_job *c = ctx;
    const ebm_model_t *m = c->m;
    const int64_t l = c->l, nl = m->size[l];
    for (int64_t r = begin; r < end; r++) {
        float *o = c->xl + r * c->ldx;
        const float *ar = c->a + r * c->lda;
        const uint32_t row = ebm__row_id(c->rows, r);
        if (!ebm__is_gaussian(m, l)) {
            ebm__stream_uniform(c->s, row, c->word, nl, o);
            draw_rows(m, l, 1, ar, c->lda, o, c->ldx, o, c->ldx);
            continue;
        }
        const float *logvar = m->params + m->logvar_off;
        ebm__stream_normal(c->s, row, NORMAL_WORDS + 2 * c->word, nl, o);
        for (int64_t i = 0; i < nl; i++) {
            o[i] = ar[i] + expf(0.5f * logvar[i]) * o[i];
        }
    }
}

void ebm__sample_from_input(const ebm_model_t *m, int64_t l, const ebm__stream *s,
                            const int64_t *rows, uint64_t word, int64_t n, const float *a,
                            int64_t lda, float *xl, int64_t ldx)
{
    const int64_t nl = m->size[l];
    sample_job c = {m, l, lda, ldx, s, rows, word, a, xl};
    if (ebm__is_drelu(m, l)) {
        ebm__for_rows(n, n * nl * 200, 0, drelu_rows, &c);
        return;
    }
    /* Discrete units: the output rows hold the uniforms, then the draws;
     * short rows get their uniforms all at once. */
    if (!ebm__is_gaussian(m, l) && nl <= EBM__SHORT_ROW) {
        ebm__stream_uniform_rows(s, n, rows, word, nl, xl, ldx);
        ebm__draw_from_uniforms(m, l, n, a, lda, xl, ldx, xl, ldx);
        return;
    }
    ebm__for_rows(n, n * nl * 8, 0, sample_rows, &c);
}

/* log p(x | a) of one unit in double: binary x a - softplus(a), spin
 * x a - log(2 cosh a) = log sigmoid(2 x a), Gaussian N(x; a, sigma^2). */
static inline double unit_logprob(int units, double x, double a, double logvar, double inv_var)
{
    switch (units) {
    case EBM_UNITS_BINARY: return x > 0.5 ? ebm__log_sigmoid(a) : ebm__log_sigmoid(-a);
    case EBM_UNITS_SPIN: return ebm__log_sigmoid(2.0 * x * a);
    default: {
        double d = x - a;
        return -0.5 * (d * d * inv_var + LOG_2PI + logvar);
    }
    }
}

/* log p(h | a) of unit j of the dReLU layer (ebm__drelu_logprob). */
static double drelu_logprob(const ebm_model_t *m, int64_t j, double h, double a)
{
    double gp, gn, d;
    ebm__drelu_shape(m, j, &gp, &gn, &d);
    return ebm__drelu_logprob(gp, gn, a + d, a - d, h);
}

/* log p(x | a) of the one-hot sites of q categories: sum over sites of
 * a(site, x) - log sum_k exp a(site, k); the inputs in float (af) or in
 * double (ad, when af is NULL). */
static double potts_logprob(int64_t q, int64_t nl, const float *x, const float *af,
                            const double *ad)
{
    double s = 0.0;
    for (int64_t i = 0; i < nl; i += q) {
        for (int64_t k = 0; k < q; k++) {
            s += x[i + k] != 0.0f ? (af != NULL ? (double)af[i + k] : ad[i + k]) : 0.0;
        }
        s -= af != NULL ? ebm__site_lse(q, af + i) : ebm__site_lse_d(q, ad + i);
    }
    return s;
}

void ebm__add_layer_logprob(const ebm_model_t *m, int64_t l, int64_t n, const float *a,
                            int64_t lda, const float *xl, int64_t ldx, double *logp)
{
    const int64_t nl = m->size[l];
    const int gauss = ebm__is_gaussian(m, l);
    if (ebm__is_potts(m, l)) {
        for (int64_t r = 0; r < n; r++) {
            logp[r] += potts_logprob(m->categories[l], nl, xl + r * ldx, a + r * lda, NULL);
        }
        return;
    }
    for (int64_t r = 0; r < n; r++) {
        double s = 0.0;
        for (int64_t j = 0; j < nl; j++) {
            s += ebm__is_drelu(m, l)
                     ? drelu_logprob(m, j, xl[r * ldx + j], a[r * lda + j])
                     : unit_logprob(m->units[l], xl[r * ldx + j], a[r * lda + j],
                                    gauss ? m->params_d[m->logvar_off + j] : 0.0,
                                    gauss ? m->inv_var_d[j] : 0.0);
        }
        logp[r] += s;
    }
}

void ebm__random_units(const ebm_model_t *m, const ebm__stream *s, const int64_t *rows, int64_t n,
                       float *x, int64_t ldx, uint32_t layers, const uint8_t *clamp, int64_t ldc,
                       float *draw)
{
    for (int64_t r = 0; r < n; r++) {
        const uint8_t *c = clamp == NULL ? NULL : clamp + r * ldc;
        float *row = x + r * ldx;
        uint32_t id = ebm__row_id(rows, r);
        ebm__stream_uniform(s, id, 0, m->width, draw);
        for (int64_t l = 0; l < m->n_layers; l++) {
            if (!(layers >> l & 1u)) {
                continue;
            }
            float *d = draw + m->column[l];
            if (ebm__is_potts(m, l)) {
                /* A uniform category per site (the uniform at its first
                 * column); a clamped site (whole, ebm__check_clamp) is kept. */
                const int64_t q = m->categories[l];
                for (int64_t i = 0; i < m->size[l]; i += q) {
                    const int64_t k0 = m->column[l] + i;
                    if (c != NULL && c[k0]) {
                        continue;
                    }
                    int64_t pick = (int64_t)((double)d[i] * (double)q);
                    pick = pick < q ? pick : q - 1;
                    for (int64_t k = 0; k < q; k++) {
                        row[k0 + k] = k == pick ? 1.0f : 0.0f;
                    }
                }
                continue;
            }
            if (!ebm__is_discrete(m, l)) { /* Gaussian, dReLU: N(0, 1) */
                ebm__stream_normal(s, id, NORMAL_WORDS, m->size[l], d);
            }
            for (int64_t j = 0; j < m->size[l]; j++) {
                int64_t k = m->column[l] + j;
                if (c != NULL && c[k]) {
                    continue;
                }
                switch (m->units[l]) {
                case EBM_UNITS_BINARY: row[k] = d[j] < 0.5f ? 0.0f : 1.0f; break;
                case EBM_UNITS_SPIN: row[k] = d[j] < 0.5f ? -1.0f : 1.0f; break;
                default: row[k] = d[j]; break;
                }
            }
        }
    }
}

/* Checks shared by the calls that condition layer l on its neighbours in x. */
static int check_conditional(const ebm_model_t *m, ebm__msg *msg, int64_t l, int64_t n,
                             const float *x, int64_t ldx)
{
    int rc = ebm__check_layer(m, msg, "l", l, 0);
    if (rc == EBM_OK) {
        rc = ebm__check_matrix(msg, "x", n, x, ldx, m->width);
    }
    if (rc == EBM_OK) {
        rc = ebm__check_states(m, msg, "x", ebm__neighbours(m, l), n, x, ldx);
    }
    return rc;
}

/* The inputs (mean = 0) or the means (mean = 1) of layer l at n checked
 * rows of x, into new memory *res (n x n_l; NULL for n = 0), or
 * EBM_EVALUE if any is not finite (the parameters are too large: x and
 * the caller's output stay as they were), or EBM_ENOMEM. */
static int conditional_result(const ebm_model_t *m, ebm__msg *msg, int64_t l, int64_t n,
                              const float *x, int64_t ldx, int mean, float **res)
{
    const int64_t nl = m->size[l];
    *res = NULL;
    if (n == 0) {
        return EBM_OK;
    }
    float *a = malloc((size_t)(n * nl) * sizeof *a);
    if (a == NULL) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for %lld x %lld results", (long long)n,
                         (long long)nl);
    }
    ebm__layer_input(m, l, n, x, ldx, a, nl);
    if (mean) {
        ebm__mean_from_input(m, l, n, a, nl);
    }
    if (!ebm__kern()->values_ok(n * nl, a, EBM_UNITS_GAUSSIAN)) {
        free(a);
        return ebm__fail_overflow(msg, mean ? "layer mean" : "layer input");
    }
    *res = a;
    return EBM_OK;
}

/* Copy n rows of a conditional result to the caller's matrix, and free it. */
static void copy_result(int64_t n, int64_t nl, float *res, float *out, int64_t ldo)
{
    for (int64_t r = 0; r < n; r++) {
        memcpy(out + r * ldo, res + r * nl, (size_t)nl * sizeof *out);
    }
    free(res);
}

int ebm_model_layer_input(const ebm_model_t *m, int64_t l, int64_t n, const float *x, int64_t ldx,
                          float *a, int64_t lda)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = check_conditional(m, &msg, l, n, x, ldx);
    if (rc == EBM_OK) {
        rc = ebm__check_matrix(&msg, "a", n, a, lda, m->size[l]);
    }
    float *res = NULL;
    if (rc == EBM_OK) {
        rc = conditional_result(m, &msg, l, n, x, ldx, 0, &res);
    }
    if (rc != EBM_OK) {
        return ebm__model_set_error(m, rc, &msg);
    }
    copy_result(n, m->size[l], res, a, lda);
    return EBM_OK;
}

int ebm_model_layer_mean(const ebm_model_t *m, int64_t l, int64_t n, const float *x, int64_t ldx,
                         float *mean, int64_t ldm)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = check_conditional(m, &msg, l, n, x, ldx);
    if (rc == EBM_OK) {
        rc = ebm__check_matrix(&msg, "mean", n, mean, ldm, m->size[l]);
    }
    float *res = NULL;
    if (rc == EBM_OK) {
        rc = conditional_result(m, &msg, l, n, x, ldx, 1, &res);
    }
    if (rc != EBM_OK) {
        return ebm__model_set_error(m, rc, &msg);
    }
    copy_result(n, m->size[l], res, mean, ldm);
    return EBM_OK;
}

int ebm_model_layer_logprob(const ebm_model_t *m, int64_t l, int64_t n, const float *x,
                            int64_t ldx, const float *xl, int64_t ldxl, double *logp)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = check_conditional(m, &msg, l, n, x, ldx);
    if (rc == EBM_OK) {
        rc = ebm__check_layer_values(m, &msg, "xl", l, n, xl, ldxl);
    }
    if (rc == EBM_OK && n > 0 && logp == NULL) {
        rc = ebm__fail(&msg, EBM_ENULL, "logp is NULL");
    }
    if (rc != EBM_OK) {
        return ebm__model_set_error(m, rc, &msg);
    }
    if (n == 0) {
        return EBM_OK;
    }
    const int64_t w = m->width, nl = m->size[l];
    const int64_t chunk = n < EBM__CHUNK ? n : EBM__CHUNK;
    double *xd = malloc((size_t)(chunk * (w + nl)) * sizeof *xd);
    if (xd == NULL) {
        return ebm__model_error(m, EBM_ENOMEM, "out of memory");
    }
    double *a = xd + chunk * w;
    for (int64_t r0 = 0; r0 < n; r0 += chunk) {
        int64_t rows = n - r0 < chunk ? n - r0 : chunk;
        /* Only the neighbours are read; they are valid states. */
        for (int64_t r = 0; r < rows; r++) {
            for (int64_t k = 0; k < w; k++) {
                float v = x[(r0 + r) * ldx + k];
                xd[r * w + k] = isfinite(v) ? v : 0.0;
            }
        }
        ebm__layer_input_d(m, l, rows, xd, w, a, nl);
        for (int64_t r = 0; r < rows; r++) {
            const float *v = xl + (r0 + r) * ldxl;
            const double *ar = a + r * nl;
            const int gauss = ebm__is_gaussian(m, l);
            if (ebm__is_potts(m, l)) {
                logp[r0 + r] = potts_logprob(m->categories[l], nl, v, NULL, ar);
                continue;
            }
            double s = 0.0;
            for (int64_t j = 0; j < nl; j++) {
                s += ebm__is_drelu(m, l) ? drelu_logprob(m, j, v[j], ar[j])
                                         : unit_logprob(m->units[l], v[j], ar[j],
                                                        gauss ? m->params_d[m->logvar_off + j]
                                                              : 0.0,
                                                        gauss ? m->inv_var_d[j] : 0.0);
            }
            logp[r0 + r] = s;
        }
    }
    free(xd);
    return EBM_OK;
}

/* The conditional argmin of one unit from its input (ties go up). */
static float argmin_of(int units, float a)
{
    switch (units) {
    case EBM_UNITS_BINARY: return a >= 0.0f ? 1.0f : 0.0f;
    case EBM_UNITS_SPIN: return a >= 0.0f ? 1.0f : -1.0f;
    default: return a; /* Gaussian: the input is the mean, which is the mode */
    }
}

/* Shared by argmin and sample: validate, compute the input into scratch
 * (n x n_l, then n x n_l more for the sample's draws); finite inputs only. */
static int input_scratch(const ebm_model_t *m, ebm__msg *msg, int64_t l, int64_t n, const float *x,
                         int64_t ldx, float **a)
{
    *a = NULL;
    int rc = check_conditional(m, msg, l, n, x, ldx);
    if (rc != EBM_OK || n == 0) {
        return rc;
    }
    const int64_t nl = m->size[l];
    *a = malloc((size_t)(2 * n * nl) * sizeof **a);
    if (*a == NULL) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for %lld x %lld inputs", (long long)n,
                         (long long)nl);
    }
    ebm__layer_input(m, l, n, x, ldx, *a, nl);
    if (!ebm__kern()->values_ok(n * nl, *a, EBM_UNITS_GAUSSIAN)) {
        free(*a);
        *a = NULL;
        return ebm__fail_overflow(msg, "layer input");
    }
    return EBM_OK;
}

int ebm_model_layer_argmin(const ebm_model_t *m, int64_t l, int64_t n, float *x, int64_t ldx)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    float *a;
    int rc = input_scratch(m, &msg, l, n, x, ldx, &a);
    if (rc != EBM_OK) {
        return ebm__model_set_error(m, rc, &msg);
    }
    const int64_t nl = m->size[l];
    if (ebm__is_drelu(m, l) && n > 0) {
        /* The modes into the scratch's second half first: one that
         * overflows float leaves x as it was. */
        float *modes = a + n * nl;
        for (int64_t r = 0; r < n; r++) {
            for (int64_t j = 0; j < nl; j++) {
                double gp, gn, d;
                ebm__drelu_shape(m, j, &gp, &gn, &d);
                const double t = a[r * nl + j];
                modes[r * nl + j] = (float)ebm__drelu_mode(gp, gn, t + d, t - d);
            }
        }
        if (!ebm__kern()->values_ok(n * nl, modes, EBM_UNITS_GAUSSIAN)) {
            free(a);
            return ebm__model_set_error(m, ebm__fail_overflow(&msg, "layer argmin"), &msg);
        }
        for (int64_t r = 0; r < n; r++) {
            memcpy(x + r * ldx + m->column[l], modes + r * nl, (size_t)nl * sizeof *x);
        }
        free(a);
        return EBM_OK;
    }
    for (int64_t r = 0; r < n; r++) {
        float *xl = x + r * ldx + m->column[l];
        const float *ar = a + r * nl;
        if (ebm__is_potts(m, l)) {
            /* Each site's category of the largest input (the lowest of ties). */
            const int64_t q = m->categories[l];
            for (int64_t i = 0; i < nl; i += q) {
                int64_t best = 0;
                for (int64_t k = 1; k < q; k++) {
                    best = ar[i + k] > ar[i + best] ? k : best;
                }
                for (int64_t k = 0; k < q; k++) {
                    xl[i + k] = k == best ? 1.0f : 0.0f;
                }
            }
            continue;
        }
        for (int64_t j = 0; j < nl; j++) {
            xl[j] = argmin_of(m->units[l], ar[j]);
        }
    }
    free(a);
    return EBM_OK;
}

int ebm_model_layer_sample(const ebm_model_t *m, int64_t l, ebm_rng_t *rng, int64_t n, float *x,
                           int64_t ldx)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    if (rng == NULL) {
        return ebm__model_error(m, EBM_ENULL, "rng is NULL");
    }
    float *a;
    int rc = input_scratch(m, &msg, l, n, x, ldx, &a);
    if (rc != EBM_OK) {
        return ebm__model_set_error(m, rc, &msg);
    }
    if (n == 0) {
        return EBM_OK;
    }
    /* Draws into scratch: a Gaussian draw can overflow where its mean did not. */
    const int64_t nl = m->size[l];
    float *draws = a + n * nl;
    const ebm__rng_mark rng_saved = ebm__rng_save(rng);
    ebm__stream s = ebm__rng_take_stream(rng);
    ebm__sample_from_input(m, l, &s, NULL, 0, n, a, nl, draws, nl);
    if (!ebm__kern()->values_ok(n * nl, draws, EBM_UNITS_GAUSSIAN)) {
        free(a);
        ebm__rng_restore(rng, &rng_saved);
        return ebm__model_set_error(m, ebm__fail_overflow(&msg, "layer sample"), &msg);
    }
    for (int64_t r = 0; r < n; r++) {
        memcpy(x + r * ldx + m->column[l], draws + r * nl, (size_t)nl * sizeof *x);
    }
    free(a);
    return EBM_OK;
}

int ebm_model_random_state(const ebm_model_t *m, ebm_rng_t *rng, int64_t n, float *x, int64_t ldx,
                           const uint8_t *clamp, int64_t ldc)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = rng == NULL ? ebm__fail(&msg, EBM_ENULL, "rng is NULL") : EBM_OK;
    if (rc == EBM_OK) {
        rc = ebm__check_matrix(&msg, "x", n, x, ldx, m->width);
    }
    if (rc == EBM_OK) {
        rc = ebm__check_clamp(m, &msg, n, clamp, ldc);
    }
    float *draw = NULL;
    if (rc == EBM_OK && n > 0) {
        draw = malloc((size_t)m->width * sizeof *draw);
        if (draw == NULL) {
            rc = ebm__fail(&msg, EBM_ENOMEM, "out of memory");
        }
    }
    if (rc != EBM_OK) {
        return ebm__model_set_error(m, rc, &msg);
    }
    if (n == 0) {
        return EBM_OK;
    }
    ebm__stream s = ebm__rng_take_stream(rng);
    ebm__random_units(m, &s, NULL, n, x, ldx, ebm__all_layers(m), clamp, ldc, draw);
    free(draw);
    return EBM_OK;
}

void ebm__temper_input(const ebm_model_t *m, int64_t l, int64_t n, float *a, int64_t lda,
                       const double *betas, int64_t n_betas)
{
    const int64_t nl = m->size[l];
    const float *mu = m->params + m->b_off[0];
    const int gaussian = ebm__is_gaussian(m, l);
    for (int64_t r = 0; r < n; r++) {
        const double beta = betas[r % n_betas];
        if (beta == 1.0) {
            continue; /* the model's own input, unrounded */
        }
        float *ar = a + r * lda;
        for (int64_t j = 0; j < nl; j++) {
            ar[j] = gaussian ? (float)(mu[j] + beta * (ar[j] - mu[j])) : (float)(beta * ar[j]);
        }
    }
}
