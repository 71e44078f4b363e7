/*
 * Gradient estimators (include/ebm.h, "Gradient estimators"; tests/README.md,
 * test classes 3, 4 and 7): CD-k, PCD-k, UCD (Qiu et al. 2020), UCD-LMI
 * (Taniguchi et al. 2023) and the GRBM modified CD (Liao et al. 2022).
 *
 * Exact gradients. Every statistical test compares with the exact gradient
 * of the batch-average log-likelihood, computed independently of the
 * library in double precision by ref_gradient.c (enumeration of every
 * state; GRBMs with v integrated in closed form).
 *
 * The references are checked once more against central differences of
 * the library's exact log-likelihood (section 0).
 *
 * Unbiasedness (z-tests). A test makes `calls` gradient calls with a batch
 * of `rows` data rows (one or two distinct rows, repeated: the gradient is
 * linear in the batch); each call's gradient is the mean of `rows`
 * independent row estimates, so the calls are i.i.d. and nearly normal. For
 * every parameter z = (mean of the calls - exact) / (sample SD / sqrt(calls))
 * (plus a float-rounding floor of 2e-6 (1 + |exact|) in the SE), and a test
 * passes iff max |z| < 4.5. For a correct estimator P(|z| > 4.5) is 6.8e-6
 * per parameter (normal; 1.2e-5 with the t law of 199 degrees of freedom),
 * so with Bonferroni over the 11 to 23 parameters of a model a test fails
 * with probability about 1e-4 to 3e-4 (~1e-4 for 20 parameters with the
 * normal law). The seeds are fixed, so the suite is deterministic: the
 * probability is that of an unlucky seed. The machinery is paired with
 * broken twins that must reach max |z| > 6 (P < 1e-8 per parameter for a
 * correct estimator): CD-1, PCD-1 from fresh chains on a slowly mixing RBM,
 * a mean-field positive phase on a DBM, GRBM_CD with K = 1, and the exact
 * gradient of a model with one bias flipped; each twin is run on a model on
 * which the unbiased estimator passes.
 *
 * Sections: 0 the references; 1 unbiasedness (UCD on RBMs with the three
 * couplings and K = 0, 1, 3, every f and positive phase; UCD with the
 * coupled positive phase on binary and spin DBMs; UCD-LMI on DBMs and an
 * RBM; UCD on GRBMs with the reflection coupling (CRN and BLOCKWISE) and the
 * maximal one); 2 broken twins; 3 the
 * variance reduction of marginalising (prints the ratio); 4 statistics;
 * 5 determinism and row independence; 6 PCD chains and checkpoints; 7 GRBM
 * modified CD with its three samplers; 8 bad input (codes, messages naming
 * the argument and value, nothing changed).
 *
 * EBM_TEST_LEVEL=2 multiplies the number of calls by 5 and the rows per call
 * by 2.5 (t law of 999 degrees of freedom: 7.6e-6 per parameter).
 * EBM_TEST_VERBOSE=1 prints every test's statistics on stderr.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tests.h"
#include "ref.h"
#include "testing.h" /* ebm__estimator_set_plain, the tempering twin */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define Z_PASS 4.5 /* a correct estimator: max |z| below this */
#define Z_TWIN 6.0 /* a broken twin: max |z| above this */
#define MAXW 12    /* the largest state width of the models here */
#define SENTINEL 1234.5f

/* Calls per statistical test and data rows per call. */
static int64_t n_calls(void) { return t_level() >= 2 ? 1000 : 200; }
static int64_t n_rows(void) { return t_level() >= 2 ? 500 : 200; }

/* ------------------------------------------------------------------------ */
/* Running an estimator many times                                          */
/* ------------------------------------------------------------------------ */

typedef struct run {
    int64_t np, calls;
    double *mean, *var; /* of the per-call gradients */
    double tau_mean, tau_max, ptau_mean, capped, sweeps, accept_min, accept_max, seconds;
} run;

static void run_free(run *r)
{
    free(r->mean);
    free(r->var);
    r->mean = r->var = NULL;
}

/* `calls` calls with the batch data[n x n0]; reset_chains: PCD from fresh
 * chains every call. */
static void run_calls(ebm_estimator_t *e, const ebm_model_t *m, ebm_rng_t *rng, int64_t calls,
                      int64_t n, const float *data, int64_t ldd, int reset_chains, run *out)
{
    const int64_t np = ebm_model_param_count(m);
    memset(out, 0, sizeof *out);
    out->np = np;
    out->calls = calls;
    out->mean = calloc((size_t)np, sizeof *out->mean);
    out->var = calloc((size_t)np, sizeof *out->var);
    float *g = malloc((size_t)np * sizeof *g);
    ck_assert(out->mean != NULL && out->var != NULL && g != NULL);
    out->accept_min = 1.0;
    out->accept_max = 0.0;
    clock_t t0 = clock();
    for (int64_t c = 0; c < calls; c++) {
        if (reset_chains) {
            ck_assert_int_eq(ebm_estimator_set_chains(e, 0, NULL, 0), EBM_OK);
            ck_assert_int_eq(ebm_estimator_num_chains(e), 0);
        }
        int rc = ebm_estimator_gradient(e, rng, n, data, ldd, g);
        ck_assert_msg(rc == EBM_OK, "gradient call %lld: %s", (long long)c,
                      ebm_estimator_errmsg(e));
        for (int64_t i = 0; i < np; i++) { /* Welford */
            ck_assert(isfinite(g[i]));
            double d = g[i] - out->mean[i];
            out->mean[i] += d / (double)(c + 1);
            out->var[i] += d * (g[i] - out->mean[i]);
        }
        double tm = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_TAU_MEAN);
        double tx = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_TAU_MAX);
        double acc = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_ACCEPT_RATE);
        out->tau_mean += tm / (double)calls;
        out->tau_max = tx > out->tau_max ? tx : out->tau_max;
        out->ptau_mean += ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN) / (double)calls;
        out->capped += ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_CAPPED);
        out->sweeps += ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_SWEEPS_MEAN) / (double)calls;
        out->accept_min = acc < out->accept_min ? acc : out->accept_min;
        out->accept_max = acc > out->accept_max ? acc : out->accept_max;
        ck_assert(tx >= tm);
        ck_assert(acc >= 0.0 && acc <= 1.0);
    }
    out->seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
    for (int64_t i = 0; i < np; i++) {
        out->var[i] = calls > 1 ? out->var[i] / (double)(calls - 1) : 0.0;
    }
    free(g);
}

/* max over parameters of |mean - exact| / SE. */
static double max_abs_z(const run *r, const double *exact, int64_t *arg)
{
    double zmax = 0.0;
    *arg = 0;
    for (int64_t i = 0; i < r->np; i++) {
        double floor = 2e-6 * (1.0 + fabs(exact[i]));
        double se = sqrt(r->var[i] / (double)r->calls + floor * floor);
        double z = fabs(r->mean[i] - exact[i]) / se;
        if (z > zmax) {
            zmax = z;
            *arg = i;
        }
    }
    return zmax;
}

static double total_var(const run *r)
{
    double s = 0.0;
    for (int64_t i = 0; i < r->np; i++) {
        s += r->var[i];
    }
    return s;
}

/* ------------------------------------------------------------------------ */
/* Models, data and estimators                                              */
/* ------------------------------------------------------------------------ */

/* Distinct data rows of a model, deterministic in seed. */
static void make_rows(const ebm_model_t *m, uint64_t seed, int64_t count, float *rows)
{
    const int64_t n0 = ebm_model_layer_size(m, 0);
    const int units = ebm_model_layer_units(m, 0);
    for (int attempt = 0;; attempt++) {
        for (int64_t r = 0; r < count; r++) {
            for (int64_t i = 0; i < n0; i++) {
                double u = t_uniform(&seed);
                rows[r * n0 + i] = units == G_   ? (float)(3.0 * u - 1.5)
                                   : units == S_ ? (u < 0.5 ? -1.0f : 1.0f)
                                                 : (u < 0.5 ? 0.0f : 1.0f);
            }
        }
        if (count < 2 || memcmp(rows, rows + n0, (size_t)n0 * sizeof *rows) != 0) {
            return;
        }
        ck_assert(attempt < 100);
    }
}

/* A batch of n rows cycling through `count` distinct rows. */
static float *make_batch(int64_t n0, int64_t count, const float *rows, int64_t n)
{
    float *d = malloc((size_t)(n * n0) * sizeof *d);
    ck_assert_ptr_nonnull(d);
    for (int64_t r = 0; r < n; r++) {
        memcpy(d + r * n0, rows + (r % count) * n0, (size_t)n0 * sizeof *d);
    }
    return d;
}

static void set_int_ok(ebm_estimator_t *e, int option, int64_t value)
{
    int rc = ebm_estimator_set_int(e, option, value);
    ck_assert_msg(rc == EBM_OK, "set_int(%d, %lld): %s", option, (long long)value,
                  ebm_estimator_errmsg(e));
}

/* -1 keeps an option's default. */
static ebm_estimator_t *make_est(const ebm_model_t *m, int kind, int coupling, int k, int marg,
                                 int positive)
{
    ebm_estimator_t *e = NULL;
    int rc = ebm_estimator_create(&e, m, kind);
    ck_assert_msg(rc == EBM_OK, "ebm_estimator_create: %s", ebm_model_errmsg(m));
    if (coupling >= 0) {
        set_int_ok(e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_COUPLING, coupling);
    }
    if (k >= 0) {
        set_int_ok(e, EBM_ESTIMATOR_K, k);
    }
    if (marg >= 0) {
        set_int_ok(e, EBM_ESTIMATOR_MARGINALIZE, marg);
    }
    if (positive >= 0) {
        set_int_ok(e, EBM_ESTIMATOR_POSITIVE, positive);
    }
    return e;
}

/* Set one parameter of a model. */
static void set_param(ebm_model_t *m, int64_t index, float value)
{
    int64_t np = ebm_model_param_count(m);
    float *p = malloc((size_t)np * sizeof *p);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    p[index] = value;
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    free(p);
}

static int64_t bias_index(const ebm_model_t *m, int64_t l, int64_t j)
{
    int64_t off;
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, l, &off, NULL, NULL), EBM_OK);
    return off + j;
}

/* ------------------------------------------------------------------------ */
/* 0. The references                                                        */
/* ------------------------------------------------------------------------ */

/* The exact gradients of ref_gradient.c against central differences of the
 * library's exact log-likelihood (ebm_model_log_partition_exact and
 * ebm_model_log_likelihood, tested in the evaluation suite), step 2^-12 on the
 * float parameters (exactly representable), for every parameter of an RBM
 * 4x3, a spin DBM 3-3-2 and GRBMs with binary and spin hidden units: the
 * references of the statistical tests are the gradients of log p(v)
 * (observed relative agreement 1e-9 to 2e-8; limit 1e-6). */
static double log_lik(const ebm_model_t *m, const float *v)
{
    double lz, ll;
    ck_assert_int_eq(ebm_model_log_partition_exact(m, &lz), EBM_OK);
    ck_assert_int_eq(ebm_model_log_likelihood(m, lz, 1, v, ebm_model_layer_size(m, 0), &ll),
                     EBM_OK);
    return ll;
}

START_TEST(test_exact_reference)
{
    static const struct {
        int nl;
        int64_t sizes[3];
        int vis, hid;
        double scale;
    } models[4] = {{2, {4, 3, 0}, B_, B_, 1.5},
                   {3, {3, 3, 2}, S_, S_, 0.8},
                   {2, {3, 2, 0}, G_, B_, 1.0},
                   {2, {2, 2, 0}, G_, S_, 1.0}};
    const float h = 0x1p-12f;
    for (int t = 0; t < 4; t++) {
        ebm_model_t *m = t_model(models[t].nl, models[t].sizes, models[t].vis, models[t].hid);
        t_random_params(m, 50 + (uint64_t)t, models[t].scale);
        const int64_t np = ebm_model_param_count(m);
        float v[MAXW], p[64];
        make_rows(m, 51 + (uint64_t)t, 1, v);
        double g[64];
        ref_exact_grad(m, 1, v, ebm_model_layer_size(m, 0), g);
        ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
        double worst = 0.0;
        for (int64_t i = 0; i < np; i++) {
            float keep = p[i];
            p[i] = keep + h;
            ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
            double up = log_lik(m, v);
            p[i] = keep - h;
            ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
            double down = log_lik(m, v);
            p[i] = keep;
            double fd = (up - down) / (2.0 * (double)h);
            double err = fabs(fd - g[i]) / (1.0 + fabs(g[i]));
            worst = err > worst ? err : worst;
            ck_assert_msg(err <= 1e-6, "model %d, parameter %lld: exact %.10g, differences %.10g", t,
                          (long long)i, g[i], fd);
        }
        ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
        if (t_verbose()) {
            fprintf(stderr, "estimator: exact gradient of model %d vs differences: %.2g\n", t,
                    worst);
        }
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 1. Unbiasedness                                                          */
/* ------------------------------------------------------------------------ */

typedef struct ucfg {
    const char *name;
    int kind, nl;
    int64_t sizes[3];
    int vis, hid;
    double scale;
    uint64_t seed;
    int coupling, k, marg, positive; /* -1: default */
    int distinct;                    /* distinct data rows in the batch: 1 or 2 */
    int centred;                     /* offsets in [0.1, 0.9] (spin: [-0.8, 0.8]) */
} ucfg;

#define UCD_ EBM_ESTIMATOR_UCD
#define LMI_ EBM_ESTIMATOR_UCD_LMI
#define CRN_ EBM_COUPLING_CRN
#define MAX_ EBM_COUPLING_MAXIMAL
#define BLK_ EBM_COUPLING_BLOCKWISE
#define M_NONE EBM_MARGINALIZE_NONE
#define M_EVEN EBM_MARGINALIZE_EVEN
#define M_ODD EBM_MARGINALIZE_ODD
#define M_BOTH EBM_MARGINALIZE_BOTH
#define P_COUP EBM_POSITIVE_COUPLED

static const ucfg UCFG[] = {
    /* binary RBM 3x2 and 4x3: the three couplings, K = 1 and K = 3 (exact positive phase) */
    {"UCD RBM 3x2 CRN K=1", UCD_, 2, {3, 2}, B_, B_, 1.5, 101, CRN_, 1, -1, -1, 1, 0},
    {"UCD RBM 3x2 CRN K=3", UCD_, 2, {3, 2}, B_, B_, 1.5, 102, CRN_, 3, -1, -1, 1, 0},
    {"UCD RBM 3x2 MAXIMAL K=1", UCD_, 2, {3, 2}, B_, B_, 1.5, 103, MAX_, 1, -1, -1, 1, 0},
    {"UCD RBM 3x2 MAXIMAL K=3", UCD_, 2, {3, 2}, B_, B_, 1.5, 104, MAX_, 3, -1, -1, 2, 0},
    {"UCD RBM 4x3 CRN K=1", UCD_, 2, {4, 3, 0}, B_, B_, 1.2, 105, CRN_, 1, -1, -1, 1, 0},
    {"UCD RBM 4x3 CRN K=3", UCD_, 2, {4, 3, 0}, B_, B_, 1.2, 106, CRN_, 3, -1, -1, 2, 0},
    {"UCD RBM 4x3 MAXIMAL K=1", UCD_, 2, {4, 3, 0}, B_, B_, 1.2, 107, MAX_, 1, -1, -1, 1, 0},
    {"UCD RBM 4x3 MAXIMAL K=3", UCD_, 2, {4, 3, 0}, B_, B_, 1.2, 108, MAX_, 3, -1, -1, 1, 0},
    {"UCD RBM 3x2 BLOCKWISE K=1", UCD_, 2, {3, 2}, B_, B_, 1.5, 150, BLK_, 1, -1, -1, 1, 0},
    {"UCD RBM 4x3 BLOCKWISE K=3", UCD_, 2, {4, 3, 0}, B_, B_, 1.2, 151, BLK_, 3, -1, -1, 2, 0},
    {"UCD spin RBM 3x2 BLOCKWISE", UCD_, 2, {3, 2}, S_, S_, 0.8, 152, BLK_, -1, -1, -1, 2, 0},
    /* RBM: the other f, the other positive phases (mean field is exact on an
     * RBM, whose posterior factorises), K = 0, spin units */
    {"UCD RBM 3x2 two rows", UCD_, 2, {3, 2}, B_, B_, 1.5, 109, -1, -1, -1, -1, 2, 0},
    {"UCD RBM 3x2 marg NONE", UCD_, 2, {3, 2}, B_, B_, 1.5, 110, -1, -1, M_NONE, -1, 1, 0},
    {"UCD RBM 3x2 marg ODD", UCD_, 2, {3, 2}, B_, B_, 1.5, 111, -1, -1, M_ODD, -1, 1, 0},
    {"UCD RBM 3x2 marg BOTH", UCD_, 2, {3, 2}, B_, B_, 1.5, 112, -1, -1, M_BOTH, -1, 1, 0},
    {"UCD RBM 3x2 K=0", UCD_, 2, {3, 2}, B_, B_, 1.5, 113, -1, 0, -1, -1, 1, 0},
    {"UCD RBM 3x2 positive COUPLED", UCD_, 2, {3, 2}, B_, B_, 1.5, 114, -1, -1, -1, P_COUP, 1, 0},
    {"UCD RBM 3x2 positive SAMPLED", UCD_, 2, {3, 2}, B_, B_, 1.5, 115, -1, -1, -1,
     EBM_POSITIVE_SAMPLED, 1, 0},
    {"UCD RBM 3x2 positive MEAN_FIELD", UCD_, 2, {3, 2}, B_, B_, 1.5, 116, -1, -1, -1,
     EBM_POSITIVE_MEAN_FIELD, 1, 0},
    {"UCD spin RBM 3x2 CRN", UCD_, 2, {3, 2}, S_, S_, 0.8, 117, CRN_, -1, -1, -1, 2, 0},
    /* DBM 3-3-2, coupled positive phase (the default), f EVEN and NONE */
    {"UCD DBM binary EVEN", UCD_, 3, {3, 3, 2}, B_, B_, 1.2, 120, -1, -1, M_EVEN, P_COUP, 1, 0},
    {"UCD DBM binary CRN NONE", UCD_, 3, {3, 3, 2}, B_, B_, 1.2, 121, CRN_, -1, M_NONE, P_COUP,
     1, 0},
    {"UCD DBM spin CRN EVEN", UCD_, 3, {3, 3, 2}, S_, S_, 0.6, 122, CRN_, -1, M_EVEN, -1, 1, 0},
    {"UCD DBM spin NONE", UCD_, 3, {3, 3, 2}, S_, S_, 0.6, 123, -1, -1, M_NONE, -1, 2, 0},
    {"UCD DBM binary MAXIMAL K=2 BOTH", UCD_, 3, {3, 3, 2}, B_, B_, 1.2, 124, MAX_, 2, M_BOTH,
     -1, 1, 0},
    {"UCD DBM binary BLOCKWISE NONE", UCD_, 3, {3, 3, 2}, B_, B_, 1.2, 153, BLK_, -1, M_NONE,
     P_COUP, 1, 0},
    {"UCD DBM spin BLOCKWISE EVEN", UCD_, 3, {3, 3, 2}, S_, S_, 0.6, 154, BLK_, -1, M_EVEN, -1, 2, 0},
    /* UCD-LMI on DBMs 3-3-2: f BOTH (default) and NONE */
    {"LMI DBM binary BOTH", LMI_, 3, {3, 3, 2}, B_, B_, 1.2, 130, -1, -1, -1, -1, 1, 0},
    {"LMI DBM binary NONE", LMI_, 3, {3, 3, 2}, B_, B_, 1.2, 131, -1, -1, M_NONE, -1, 1, 0},
    {"LMI DBM spin BOTH", LMI_, 3, {3, 3, 2}, S_, S_, 0.6, 132, -1, -1, M_BOTH, -1, 1, 0},
    {"LMI DBM spin NONE", LMI_, 3, {3, 3, 2}, S_, S_, 0.6, 133, -1, -1, M_NONE, -1, 2, 0},
    {"LMI DBM binary EVEN K=2", LMI_, 3, {3, 3, 2}, B_, B_, 1.2, 134, -1, 2, M_EVEN, -1, 1, 0},
    {"LMI RBM 3x2 ODD", LMI_, 2, {3, 2}, B_, B_, 1.5, 135, -1, -1, M_ODD, -1, 1, 0},
    /* UCD on GRBMs (reflection-maximal coupling of v under CRN and BLOCKWISE) */
    {"UCD GRBM 3x2 CRN EVEN", UCD_, 2, {3, 2}, G_, B_, 1.0, 140, CRN_, -1, M_EVEN, -1, 1, 0},
    {"UCD GRBM 3x2 CRN NONE", UCD_, 2, {3, 2}, G_, B_, 1.0, 141, CRN_, -1, M_NONE, -1, 1, 0},
    {"UCD GRBM 3x2 MAXIMAL EVEN", UCD_, 2, {3, 2}, G_, B_, 1.0, 142, MAX_, -1, M_EVEN, -1, 2, 0},
    {"UCD GRBM 3x2 MAXIMAL NONE", UCD_, 2, {3, 2}, G_, B_, 1.0, 143, MAX_, -1, M_NONE, -1, 1, 0},
    {"UCD GRBM 3x2 CRN ODD K=2", UCD_, 2, {3, 2}, G_, B_, 1.0, 144, CRN_, 2, M_ODD, -1, 1, 0},
    {"UCD GRBM 3x2 BLOCKWISE NONE", UCD_, 2, {3, 2}, G_, B_, 1.0, 155, BLK_, -1, M_NONE, -1, 1, 0},
    {"UCD GRBM 2x2 spin hidden BOTH", UCD_, 2, {2, 2}, G_, S_, 0.8, 145, -1, -1, M_BOTH, -1,
     1, 0},
    /* centred models: the gradient in the centred parameters */
    {"UCD RBM 4x3 CRN centred", UCD_, 2, {4, 3, 0}, B_, B_, 1.2, 160, CRN_, -1, -1, -1, 2, 1},
    {"UCD spin RBM 3x2 MAXIMAL centred", UCD_, 2, {3, 2, 0}, S_, S_, 0.8, 161, MAX_, -1, -1, -1, 1,
     1},
    {"UCD DBM binary EVEN centred", UCD_, 3, {3, 3, 2}, B_, B_, 1.2, 162, -1, -1, M_EVEN, P_COUP,
     1, 1},
    {"LMI DBM binary BOTH centred", LMI_, 3, {3, 3, 2}, B_, B_, 1.2, 163, -1, -1, -1, -1, 1, 1},
    {"LMI DBM spin NONE centred", LMI_, 3, {3, 3, 2}, S_, S_, 0.6, 164, -1, -1, M_NONE, -1, 1, 1},
};
#define N_UCFG ((int)(sizeof UCFG / sizeof UCFG[0]))

/* Model, distinct rows and exact gradient of a configuration. */
static ebm_model_t *ucfg_model(const ucfg *c, float *rows, double **exact)
{
    ebm_model_t *m = t_model(c->nl, c->sizes, c->vis, c->hid);
    t_random_params(m, c->seed, c->scale);
    if (c->centred) {
        float mu[MAXW];
        uint64_t us = c->seed ^ 0x5bd1e995u; /* not the parameters' stream */
        for (int64_t j = 0; j < ebm_model_state_width(m); j++) {
            const double u = 0.1 + 0.8 * t_uniform(&us);
            mu[j] = (float)(c->vis == S_ ? 2.0 * u - 1.0 : u);
        }
        ck_assert_int_eq(ebm_model_set_offsets(m, mu, 0), EBM_OK);
    }
    make_rows(m, c->seed * 31 + 7, c->distinct, rows);
    *exact = malloc((size_t)ebm_model_param_count(m) * sizeof **exact);
    ck_assert_ptr_nonnull(*exact);
    ref_exact_grad(m, c->distinct, rows, ebm_model_layer_size(m, 0), *exact);
    return m;
}

static void ucfg_run(const ucfg *c, ebm_model_t *m, const float *rows, run *out)
{
    const int64_t n = n_rows(), n0 = ebm_model_layer_size(m, 0);
    float *data = make_batch(n0, c->distinct, rows, n);
    ebm_estimator_t *e = make_est(m, c->kind, c->coupling, c->k, c->marg, c->positive);
    ebm_rng_t *rng = t_rng(c->seed, 0xE57);
    run_calls(e, m, rng, n_calls(), n, data, n0, 0, out);
    ck_assert_msg(out->capped == 0.0, "%g rows capped without a cap", out->capped);
    ebm_rng_destroy(rng);
    ebm_estimator_destroy(e);
    free(data);
}

static void report(const char *name, double z, int64_t arg, const run *r)
{
    if (t_verbose()) {
        fprintf(stderr,
                "estimator: %-34s max|z| %6.2f (param %2lld)  tau %.2f (max %.0f) pos tau %.2f  "
                "var %.4g  sweeps %.2f  accept %.3f  %.2fs\n",
                name, z, (long long)arg, r->tau_mean, r->tau_max, r->ptau_mean, total_var(r),
                r->sweeps, r->accept_min, r->seconds);
    }
}

/* Each configuration fails a correct estimator with probability about
 * np * 1.2e-5 <= 3e-4 (np <= 23 parameters, threshold 4.5). */
START_TEST(test_unbiased)
{
    const ucfg *c = &UCFG[_i];
    float rows[2 * MAXW];
    double *exact;
    ebm_model_t *m = ucfg_model(c, rows, &exact);
    run r;
    ucfg_run(c, m, rows, &r);
    int64_t arg;
    double z = max_abs_z(&r, exact, &arg);
    report(c->name, z, arg, &r);
    ck_assert_msg(z < Z_PASS, "%s: parameter %lld: mean %.6g, exact %.6g, |z| = %.2f", c->name,
                  (long long)arg, r.mean[arg], exact[arg], z);
    ck_assert(r.tau_mean >= 1.0 && r.tau_max >= r.tau_mean);
    if (c->nl == 3) { /* coupled positive phase */
        ck_assert(r.ptau_mean >= 1.0);
    }
    if (c->kind == LMI_) {
        ck_assert(r.sweeps >= 1.0 && r.accept_max <= 1.0 && r.accept_min >= 0.0);
    }
    run_free(&r);
    free(exact);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 2. Broken twins                                                          */
/* ------------------------------------------------------------------------ */

/* Run an estimator on (m, one data row) and return max |z| against exact. */
static double z_of(ebm_model_t *m, ebm_estimator_t *e, const float *row, const double *exact,
                   uint64_t seed, int64_t calls, int64_t n, int reset, const char *name)
{
    const int64_t n0 = ebm_model_layer_size(m, 0);
    float *data = make_batch(n0, 1, row, n);
    ebm_rng_t *rng = t_rng(seed, 0x7717);
    run r;
    run_calls(e, m, rng, calls, n, data, n0, reset, &r);
    int64_t arg;
    double z = max_abs_z(&r, exact, &arg);
    report(name, z, arg, &r);
    run_free(&r);
    ebm_rng_destroy(rng);
    free(data);
    return z;
}

/* CD-1 on an RBM 3x2 with weights up to 3 is biased: it must miss the exact
 * gradient by more than 6 SE, while UCD on the same model and data passes.
 * Observed over 10 seeds: CD-1's max |z| 44.9 to 52.2, UCD's 1.1 to 2.9
 * (the four OpenBLAS kernel families of this machine give the same). */
START_TEST(test_twin_cd1)
{
    const int64_t sizes[2] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, B_, B_);
    t_random_params(m, 201, 3.0);
    const float row[3] = {1, 0, 1};
    double exact[32];
    ref_exact_grad(m, 1, row, 3, exact);
    ebm_estimator_t *e = make_est(m, UCD_, -1, -1, -1, -1);
    double zu = z_of(m, e, row, exact, 1, n_calls(), n_rows(), 0, "twin: UCD (passes)");
    ebm_estimator_destroy(e);
    e = make_est(m, EBM_ESTIMATOR_CD, -1, 1, -1, -1);
    double zc = z_of(m, e, row, exact, 2, n_calls(), n_rows(), 0, "twin: CD-1 (fails)");
    ebm_estimator_destroy(e);
    ck_assert_msg(zu < Z_PASS, "UCD: max |z| = %.2f", zu);
    ck_assert_msg(zc > Z_TWIN, "CD-1 was not caught: max |z| = %.2f", zc);
    ebm_model_destroy(m);
}
END_TEST

/* PCD-1 with 4 chains started afresh from uniform noise at every call
 * (5 calls per call of the other tests, 4 data rows), on an RBM 4x3 whose
 * Gibbs chain mixes slowly: all weights 2.5, visible biases -3.5, hidden
 * -4.5, so two modes, all units off (energy 0) and all on (energy -2.5,
 * 12 times as likely), behind a barrier (UCD's meeting times reach hundreds
 * of sweeps). One sweep from noise does not find the modes' balance, so the
 * estimate is biased (observed max |z| 48 to 52 over 10 seeds; 110 at
 * level 2). UCD on the same model passes (0.1 to 1.5). */
START_TEST(test_twin_pcd1)
{
    const int64_t sizes[2] = {4, 3};
    ebm_model_t *m = t_model(2, sizes, B_, B_);
    float p[19];
    for (int i = 0; i < 19; i++) {
        p[i] = i < 12 ? 2.5f : i < 16 ? -3.5f : -4.5f;
    }
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    const float row[4] = {1, 1, 0, 1};
    double exact[32];
    ref_exact_grad(m, 1, row, 4, exact);
    ebm_estimator_t *e = make_est(m, UCD_, -1, -1, -1, -1);
    double zu = z_of(m, e, row, exact, 3, n_calls(), n_rows(), 0, "twin: UCD slow RBM (passes)");
    ebm_estimator_destroy(e);
    e = make_est(m, EBM_ESTIMATOR_PCD, -1, 1, -1, -1);
    set_int_ok(e, EBM_ESTIMATOR_CHAINS, 4);
    double zp = z_of(m, e, row, exact, 4, 5 * n_calls(), 4, 1, "twin: PCD-1 fresh (fails)");
    ebm_estimator_destroy(e);
    ck_assert_msg(zu < Z_PASS, "UCD: max |z| = %.2f", zu);
    ck_assert_msg(zp > Z_TWIN, "PCD-1 from fresh chains was not caught: max |z| = %.2f", zp);
    ebm_model_destroy(m);
}
END_TEST

/* PT: exact replicas and the twin rule. The RBM 4x3 of test_twin_pcd1 (two
 * modes behind a barrier), ladder {0, 0.5, 1}. Every call starts from
 * chains drawn exactly from the product of the replicas' laws (inverse CDF
 * over the 128 states); one tempering step keeps that law, so f at the
 * beta = 1 rows has the model's expectation and PT-1 is unbiased. The twin
 * (ebm__sampler_set_twin_swap: the log ratio's sign flipped) moves the hot
 * replicas' states into the beta = 1 rows and must fail. 40 chains per
 * call. */
static double pt_exact_z(ebm_model_t *m, const float *row, const double *exact, int twin,
                         uint64_t seed, const char *name)
{
    const double betas[3] = {0.0, 0.5, 1.0};
    const int64_t chains = 40, R = 3, w = 7, S = 128, calls = n_calls();
    ebm_estimator_t *e = make_est(m, EBM_ESTIMATOR_PT, -1, 1, -1, -1);
    ck_assert_int_eq(ebm_estimator_set_ladder(e, R, betas), EBM_OK);
    ebm__sampler_set_twin_swap(ebm__estimator_tempering(e), twin);
    float *all = t_floats(S * w), *x = t_floats(chains * R * w);
    double e_all[128], cdf[3][128];
    for (int64_t k = 0; k < S; k++) {
        for (int64_t c = 0; c < w; c++) {
            all[k * w + c] = (float)(k >> c & 1);
        }
    }
    ck_assert_int_eq(ebm_model_energy(m, S, all, w, e_all), EBM_OK);
    for (int b = 0; b < R; b++) {
        double z = 0.0;
        for (int64_t k = 0; k < S; k++) {
            z += exp(-betas[b] * e_all[k]);
            cdf[b][k] = z;
        }
        for (int64_t k = 0; k < S; k++) {
            cdf[b][k] /= z;
        }
    }
    ebm_rng_t *rng = t_rng(seed, 0x7718);
    const int64_t np = ebm_model_param_count(m);
    run r = {.np = np, .calls = calls};
    r.mean = t_calloc((size_t)np, sizeof *r.mean);
    r.var = t_calloc((size_t)np, sizeof *r.var);
    float *g = t_floats(np);
    uint64_t us = seed;
    for (int64_t call = 0; call < calls; call++) {
        for (int64_t c = 0; c < chains * R; c++) {
            const double u = t_uniform(&us);
            int64_t k = 0;
            while (k < S - 1 && cdf[c % R][k] <= u) {
                k++;
            }
            memcpy(x + c * w, all + k * w, (size_t)w * sizeof *x);
        }
        ck_assert_int_eq(ebm_estimator_set_chains(e, chains * R, x, w), EBM_OK);
        ck_assert_msg(ebm_estimator_gradient(e, rng, 1, row, 4, g) == EBM_OK, "%s",
                      ebm_estimator_errmsg(e));
        for (int64_t i = 0; i < np; i++) {
            const double d = g[i] - r.mean[i];
            r.mean[i] += d / (double)(call + 1);
            r.var[i] += d * (g[i] - r.mean[i]);
        }
    }
    for (int64_t i = 0; i < np; i++) {
        r.var[i] /= (double)(calls - 1);
    }
    int64_t arg;
    const double z = max_abs_z(&r, exact, &arg);
    report(name, z, arg, &r);
    run_free(&r);
    free(g);
    free(all);
    free(x);
    ebm_rng_destroy(rng);
    ebm_estimator_destroy(e);
    return z;
}

START_TEST(test_pt_exact_chains)
{
    const int64_t sizes[2] = {4, 3};
    ebm_model_t *m = t_model(2, sizes, B_, B_);
    float p[19];
    for (int i = 0; i < 19; i++) {
        p[i] = i < 12 ? 2.5f : i < 16 ? -3.5f : -4.5f;
    }
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    const float row[4] = {1, 1, 0, 1};
    double exact[32];
    ref_exact_grad(m, 1, row, 4, exact);
    const double z = pt_exact_z(m, row, exact, 0, 5, "PT-1 from exact replicas (passes)");
    const double zt = pt_exact_z(m, row, exact, 1, 6, "twin: PT-1, swap sign flipped (fails)");
    ck_assert_msg(z < Z_PASS, "PT-1 from exact replicas: max |z| = %.2f", z);
    ck_assert_msg(zt > Z_TWIN, "the flipped swap rule was not caught: max |z| = %.2f", zt);
    ebm_model_destroy(m);
}
END_TEST

/* PT's chains, ladder and swap counts: chains persist (R rows each); a
 * ladder of the same length keeps them, another discards them; set_chains
 * takes whole chains only; the counts of a call add up to its swap rate;
 * the other kinds have no ladder. */
START_TEST(test_pt_chains_and_ladder)
{
    const int64_t sizes[2] = {4, 3};
    ebm_model_t *m = t_model(2, sizes, B_, B_);
    t_random_params(m, 91, 1.0);
    const float row[8] = {1, 0, 1, 1, 0, 0, 1, 0};
    float g[19], chains[12 * 7];
    const double b3[3] = {0.2, 0.6, 1.0}, b3b[3] = {0.3, 0.6, 1.0}, b2[2] = {0.5, 1.0};
    ebm_estimator_t *e = make_est(m, EBM_ESTIMATOR_PT, -1, 2, -1, -1);
    ebm_rng_t *rng = t_rng(92, 0);
    ck_assert_int_eq(ebm_estimator_gradient(e, rng, 2, row, 4, g), EBM_EVALUE);
    ck_assert(t_contains(ebm_estimator_errmsg(e), "ebm_estimator_set_ladder"));
    ck_assert_int_eq(ebm_estimator_set_chains(e, 3, chains, 7), EBM_EVALUE);
    ck_assert_int_eq(ebm_estimator_set_ladder(e, 3, b3), EBM_OK);
    set_int_ok(e, EBM_ESTIMATOR_CHAINS, 4);
    ck_assert_int_eq(ebm_estimator_gradient(e, rng, 2, row, 4, g), EBM_OK);
    ck_assert_int_eq(ebm_estimator_num_chains(e), 12);
    int64_t acc[2], prop[2];
    ck_assert_int_eq(ebm_estimator_swap_counts(e, 2, acc, prop), EBM_OK);
    ck_assert(prop[0] == 8 && prop[1] == 8); /* K = 2 steps of 4 chains */
    ck_assert(fabs(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_SWAP_RATE) -
                   (double)(acc[0] + acc[1]) / 16.0) < 1e-15);
    ck_assert_int_eq(ebm_estimator_swap_counts(e, 3, acc, prop), EBM_ESHAPE);
    ck_assert_int_eq(ebm_estimator_get_chains(e, chains, 7), EBM_OK);
    ck_assert_int_eq(ebm_estimator_set_ladder(e, 3, b3b), EBM_OK);
    ck_assert_int_eq(ebm_estimator_num_chains(e), 12);
    ck_assert_int_eq(ebm_estimator_set_chains(e, 5, chains, 7), EBM_ESHAPE);
    ck_assert(t_contains(ebm_estimator_errmsg(e), "n is 5"));
    ck_assert_int_eq(ebm_estimator_set_chains(e, 6, chains, 7), EBM_OK);
    ck_assert_int_eq(ebm_estimator_gradient(e, rng, 2, row, 4, g), EBM_OK);
    ck_assert_int_eq(ebm_estimator_num_chains(e), 6);
    ck_assert_int_eq(ebm_estimator_set_ladder(e, 2, b2), EBM_OK);
    ck_assert_int_eq(ebm_estimator_num_chains(e), 0);
    ck_assert_int_eq(ebm_estimator_set_ladder(e, 1, b2), EBM_ESHAPE);
    ck_assert_int_eq(ebm_estimator_set_ladder(NULL, 2, b2), EBM_ENULL);
    ck_assert_int_eq(ebm_estimator_swap_counts(NULL, 1, acc, prop), EBM_ENULL);
    ebm_estimator_t *pcd = make_est(m, EBM_ESTIMATOR_PCD, -1, 1, -1, -1);
    ck_assert_int_eq(ebm_estimator_set_ladder(pcd, 2, b2), EBM_EUNSUPPORTED);
    ck_assert_int_eq(ebm_estimator_swap_counts(pcd, 1, acc, prop), EBM_EVALUE);
    ck_assert_int_eq(ebm_estimator_gradient(pcd, rng, 2, row, 4, g), EBM_OK);
    ck_assert(isnan(ebm_estimator_stat(pcd, EBM_ESTIMATOR_STAT_SWAP_RATE)));
    ebm_estimator_destroy(pcd);
    ebm_estimator_destroy(e);
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
}
END_TEST

/* A mean-field positive phase on a DBM 3-3-2 with strong weights is biased;
 * UCD's coupled positive phase on the same model passes. Observed over 10
 * seeds: mean field's max |z| 54.4 to 61.7, the coupled phase's 1.0 to
 * 2.9. */
START_TEST(test_twin_mean_field)
{
    const int64_t sizes[3] = {3, 3, 2};
    ebm_model_t *m = t_model(3, sizes, B_, B_);
    t_random_params(m, 203, 2.0);
    const float row[3] = {1, 0, 1};
    double exact[32];
    ref_exact_grad(m, 1, row, 3, exact);
    ebm_estimator_t *e = make_est(m, UCD_, -1, -1, -1, P_COUP);
    double zu = z_of(m, e, row, exact, 5, n_calls(), n_rows(), 0, "twin: UCD DBM coupled (passes)");
    ebm_estimator_destroy(e);
    e = make_est(m, UCD_, -1, -1, -1, EBM_POSITIVE_MEAN_FIELD);
    double zm = z_of(m, e, row, exact, 6, n_calls(), n_rows(), 0, "twin: UCD DBM mean field (fails)");
    ck_assert_msg(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_MEAN_FIELD_MISSED) == 0.0,
                  "mean field did not converge");
    ebm_estimator_destroy(e);
    ck_assert_msg(zu < Z_PASS, "UCD coupled: max |z| = %.2f", zu);
    ck_assert_msg(zm > Z_TWIN, "the mean-field positive phase was not caught: max |z| = %.2f", zm);
    ebm_model_destroy(m);
}
END_TEST

/* The same UCD estimates against the exact gradient of the model with one
 * hidden bias flipped (b_1[0] = 1 -> -1) must fail; for the GRBM, with the
 * mean of visible unit 0 flipped (mu_0 = 0.8 -> -0.8). Observed over 10
 * seeds: max |z| 124 to 148 (RBM) and 1959 to 2200 (GRBM) against the
 * flipped models, 0.5 to 2.6 against the exact ones. */
START_TEST(test_twin_flipped_bias)
{
    static const struct {
        int vis;
        double scale;
        int64_t layer;
        float value;
    } cases[2] = {{B_, 1.5, 1, 1.0f}, {G_, 1.0, 0, 0.8f}};
    for (int t = 0; t < 2; t++) {
        const int64_t sizes[2] = {3, 2};
        ebm_model_t *m = t_model(2, sizes, cases[t].vis, B_);
        t_random_params(m, 204 + (uint64_t)t, cases[t].scale);
        int64_t bi = bias_index(m, cases[t].layer, 0);
        set_param(m, bi, cases[t].value);
        float row[3];
        make_rows(m, 77, 1, row);
        double exact[32], wrong[32];
        ref_exact_grad(m, 1, row, 3, exact);
        set_param(m, bi, -cases[t].value);
        ref_exact_grad(m, 1, row, 3, wrong);
        set_param(m, bi, cases[t].value);
        ebm_estimator_t *e = make_est(m, UCD_, -1, -1, -1, -1);
        float *data = make_batch(3, 1, row, n_rows());
        ebm_rng_t *rng = t_rng(7 + (uint64_t)t, 0x7717);
        run r;
        run_calls(e, m, rng, n_calls(), n_rows(), data, 3, 0, &r);
        int64_t a1, a2;
        double z1 = max_abs_z(&r, exact, &a1), z2 = max_abs_z(&r, wrong, &a2);
        report(t == 0 ? "twin: UCD RBM vs exact" : "twin: UCD GRBM vs exact", z1, a1, &r);
        report(t == 0 ? "twin: UCD RBM vs b flipped" : "twin: UCD GRBM vs mu flipped", z2, a2, &r);
        ck_assert_msg(z1 < Z_PASS, "UCD vs the exact gradient: max |z| = %.2f", z1);
        ck_assert_msg(z2 > Z_TWIN, "a flipped bias was not caught: max |z| = %.2f", z2);
        run_free(&r);
        ebm_rng_destroy(rng);
        free(data);
        ebm_estimator_destroy(e);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 3. Marginalisation lowers the variance                                   */
/* ------------------------------------------------------------------------ */

/* UCD-LMI on a spin DBM 3-3-2: the summed per-parameter variance of the
 * estimate with f = BOTH (Taniguchi eq. 27) against f = NONE, each from
 * 1000 calls of 100 rows (4000 at level 2). Each variance comes from 1000
 * nearly normal call means, so its relative SE is about sqrt(2 / 1000) =
 * 4.5%; over 8 seeds the ratio was 0.27 to 0.32 (mean 0.30, SD 0.018), so
 * the limit 0.6 is about 17 SD away: a false failure is out of reach, while
 * an f that lost most of the Rao-Blackwellisation would fail. */
START_TEST(test_variance_ratio)
{
    const int64_t sizes[3] = {3, 3, 2};
    ebm_model_t *m = t_model(3, sizes, S_, S_);
    t_random_params(m, 301, 0.6);
    float row[3];
    make_rows(m, 302, 1, row);
    const int64_t calls = t_level() >= 2 ? 4000 : 1000, n = 100;
    float *data = make_batch(3, 1, row, n);
    double v[2];
    const int margs[2] = {EBM_MARGINALIZE_BOTH, EBM_MARGINALIZE_NONE};
    for (int t = 0; t < 2; t++) {
        ebm_estimator_t *e = make_est(m, LMI_, -1, -1, margs[t], -1);
        ebm_rng_t *rng = t_rng(303, (uint64_t)t);
        run r;
        run_calls(e, m, rng, calls, n, data, 3, 0, &r);
        v[t] = total_var(&r) * (double)n; /* per data row */
        run_free(&r);
        ebm_rng_destroy(rng);
        ebm_estimator_destroy(e);
    }
    double ratio = v[0] / v[1];
    fprintf(stderr,
            "estimator: UCD-LMI spin DBM 3-3-2: summed variance per row BOTH %.4g, NONE %.4g, "
            "ratio %.3f (%lld calls x %lld rows each)\n",
            v[0], v[1], ratio, (long long)calls, (long long)n);
    ck_assert_msg(ratio < 0.6, "marginalising did not lower the variance: ratio %.3f", ratio);
    free(data);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 4. Statistics                                                            */
/* ------------------------------------------------------------------------ */

START_TEST(test_stats)
{
    const int64_t s2[2] = {4, 3}, s3[3] = {3, 3, 2};
    ebm_model_t *rbm = t_model(2, s2, B_, B_), *dbm = t_model(3, s3, S_, S_);
    t_random_params(rbm, 401, 1.2);
    t_random_params(dbm, 402, 0.6);
    const int64_t n = 64;
    float *data = make_batch(4, 1, (const float[]){1, 0, 1, 1}, n);
    float *sdata = make_batch(3, 1, (const float[]){1, -1, 1}, n);
    float g[64];
    ebm_rng_t *rng = t_rng(403, 0);

    /* Before any call: zeros, acceptance 1; NaN for NULL or unknown stats. */
    ebm_estimator_t *e = make_est(rbm, UCD_, -1, -1, -1, -1);
    ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_TAU_MEAN) == 0.0);
    ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_ACCEPT_RATE) == 1.0);
    ck_assert(isnan(ebm_estimator_stat(NULL, EBM_ESTIMATOR_STAT_TAU_MEAN)));
    ck_assert(isnan(ebm_estimator_stat(e, -1)));
    ck_assert(isnan(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_COUNT)));

    /* UCD on an RBM, no cap: tau >= 1, nothing capped, exact positive phase. */
    for (int k = 0; k <= 3; k += 3) {
        set_int_ok(e, EBM_ESTIMATOR_K, k);
        for (int c = 0; c < 5; c++) {
            ck_assert_int_eq(ebm_estimator_gradient(e, rng, n, data, 4, g), EBM_OK);
            double tm = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_TAU_MEAN);
            double tx = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_TAU_MAX);
            ck_assert_msg(tm >= 1.0, "tau mean %g", tm);
            ck_assert_msg(tx >= tm && tx == floor(tx), "tau max %g, mean %g", tx, tm);
            ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_CAPPED) == 0.0);
            ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN) == 0.0);
            ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_SWEEPS_MEAN) == 0.0);
            ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_ACCEPT_RATE) == 1.0);
        }
    }
    /* The cap: K = 1, MAX_STEPS = 1. A row meets at t = 1 only if the first
     * sweep leaves all 7 units unchanged, so most rows are capped. */
    set_int_ok(e, EBM_ESTIMATOR_K, 1);
    set_int_ok(e, EBM_ESTIMATOR_MAX_STEPS, 1);
    ck_assert_int_eq(ebm_estimator_gradient(e, rng, n, data, 4, g), EBM_OK);
    double capped = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_CAPPED);
    ck_assert_msg(capped > 0.0 && capped <= (double)n, "capped %g of %lld", capped, (long long)n);
    ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_TAU_MAX) <= 1.0);
    /* Removing the cap again: nothing capped. */
    set_int_ok(e, EBM_ESTIMATOR_MAX_STEPS, 0);
    ck_assert_int_eq(ebm_estimator_gradient(e, rng, n, data, 4, g), EBM_OK);
    ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_CAPPED) == 0.0);
    ebm_estimator_destroy(e);

    /* UCD on a DBM: coupled positive phase with its own tau; the cap counts
     * both phases. */
    e = make_est(dbm, UCD_, -1, -1, -1, -1);
    ck_assert_int_eq(ebm_estimator_gradient(e, rng, n, sdata, 3, g), EBM_OK);
    double ptm = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN);
    ck_assert(ptm >= 1.0 && ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MAX) >= ptm);
    ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_CAPPED) == 0.0);
    set_int_ok(e, EBM_ESTIMATOR_MAX_STEPS, 1);
    ck_assert_int_eq(ebm_estimator_gradient(e, rng, n, sdata, 3, g), EBM_OK);
    capped = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_CAPPED);
    ck_assert_msg(capped > 0.0 && capped <= 2.0 * (double)n, "capped %g", capped);
    ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MAX) <= 1.0);
    ebm_estimator_destroy(e);

    /* UCD-LMI: local-search sweeps (each search counts its last, unchanged
     * sweep, so >= 1), no search capped, MH acceptance in [0, 1], and MH
     * moves counted exactly when some are accepted, some over the calls
     * (check_sampler's statistics test checks the sampler's exact count). */
    e = make_est(dbm, LMI_, -1, -1, -1, -1);
    double accepted = 0.0;
    for (int c = 0; c < 5; c++) {
        ck_assert_int_eq(ebm_estimator_gradient(e, rng, n, sdata, 3, g), EBM_OK);
        double sw = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_SWEEPS_MEAN);
        double acc = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_ACCEPT_RATE);
        const double moves = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_MH_ACCEPTED);
        ck_assert_msg((moves > 0.0) == (acc > 0.0), "MH moves %g, acceptance %g", moves, acc);
        accepted += moves;
        ck_assert_msg(sw >= 1.0 && sw <= 10000.0, "sweeps %g", sw);
        ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_SEARCH_CAPPED) == 0.0);
        ck_assert_msg(acc >= 0.0 && acc <= 1.0, "accept %g", acc);
        ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_TAU_MEAN) >= 1.0);
        ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN) >= 1.0);
        ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_CAPPED) == 0.0);
    }
    ck_assert_msg(accepted > 0.0, "no MH move accepted in 5 calls on a 3-3-2 DBM");
    /* A search cap of 1 sweep stops the searches that needed more. */
    set_int_ok(e, EBM_ESTIMATOR_SEARCH_SWEEPS, 1);
    ck_assert_int_eq(ebm_estimator_gradient(e, rng, n, sdata, 3, g), EBM_OK);
    ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_SWEEPS_MEAN) == 1.0);
    ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_SEARCH_CAPPED) > 0.0);
    ebm_estimator_destroy(e);

    /* CD on a DBM: mean-field positive phase (AUTO), converged. */
    e = make_est(dbm, EBM_ESTIMATOR_CD, -1, -1, -1, -1);
    ck_assert_int_eq(ebm_estimator_gradient(e, rng, n, sdata, 3, g), EBM_OK);
    ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_MEAN_FIELD_MISSED) == 0.0);
    ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_TAU_MEAN) == 0.0);
    ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_MH_ACCEPTED) == 0.0);
    /* One mean-field iteration with tolerance 0 cannot converge. */
    set_int_ok(e, EBM_ESTIMATOR_MEAN_FIELD_ITERS, 1);
    ck_assert_int_eq(ebm_estimator_set_double(e, EBM_ESTIMATOR_MEAN_FIELD_TOL, 0.0), EBM_OK);
    ck_assert_int_eq(ebm_estimator_gradient(e, rng, n, sdata, 3, g), EBM_OK);
    ck_assert(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_MEAN_FIELD_MISSED) > 0.0);
    ebm_estimator_destroy(e);

    ebm_rng_destroy(rng);
    free(data);
    free(sdata);
    ebm_model_destroy(rbm);
    ebm_model_destroy(dbm);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 5. Determinism and rows                                                  */
/* ------------------------------------------------------------------------ */

typedef struct dcfg {
    int kind, nl;
    int64_t sizes[3];
    int vis, hid, sampler;
} dcfg;

static const dcfg DCFG[] = {
    {EBM_ESTIMATOR_CD, 2, {4, 3, 0}, B_, B_, -1},
    {EBM_ESTIMATOR_PCD, 2, {4, 3, 0}, B_, B_, -1},
    {UCD_, 2, {4, 3, 0}, B_, B_, -1},
    {UCD_, 3, {3, 3, 2}, S_, S_, -1},
    {LMI_, 3, {3, 3, 2}, B_, B_, -1},
    {EBM_ESTIMATOR_CD, 3, {3, 3, 2}, B_, B_, -1},
    {UCD_, 2, {3, 2, 0}, G_, B_, -1},
    {EBM_ESTIMATOR_GRBM_CD, 2, {3, 2, 0}, G_, B_, EBM_SAMPLER_GIBBS},
    {EBM_ESTIMATOR_GRBM_CD, 2, {3, 2, 0}, G_, B_, EBM_SAMPLER_LANGEVIN},
    {EBM_ESTIMATOR_GRBM_CD, 2, {3, 2, 0}, G_, S_, EBM_SAMPLER_GIBBS_LANGEVIN},
};

/* Same seed, same options: the same gradient bytes, the same rng state after
 * every call, the same statistics; two estimators or one estimator replayed
 * (PCD excepted: its chains move). */
START_TEST(test_determinism)
{
    const dcfg *c = &DCFG[_i];
    ebm_model_t *m = t_model(c->nl, c->sizes, c->vis, c->hid);
    t_random_params(m, 500 + (uint64_t)_i, 1.0);
    const int64_t n = 16, n0 = c->sizes[0], np = ebm_model_param_count(m);
    float rows[2 * MAXW];
    make_rows(m, 501, 2, rows);
    float *data = make_batch(n0, 2, rows, n);
    ebm_estimator_t *e[2];
    ebm_rng_t *r[2];
    float *g[2];
    for (int t = 0; t < 2; t++) {
        e[t] = make_est(m, c->kind, -1, c->kind == EBM_ESTIMATOR_GRBM_CD ? 6 : -1, -1, -1);
        if (c->sampler >= 0) {
            set_int_ok(e[t], EBM_ESTIMATOR_SAMPLER, c->sampler);
            set_int_ok(e[t], EBM_ESTIMATOR_BURN_IN, 2);
        }
        r[t] = t_rng(502, 9);
        g[t] = malloc((size_t)np * sizeof *g[t]);
    }
    uint64_t st[2][EBM_RNG_STATE_WORDS];
    for (int call = 0; call < 3; call++) {
        for (int t = 0; t < 2; t++) {
            ck_assert_int_eq(ebm_estimator_gradient(e[t], r[t], n, data, n0, g[t]), EBM_OK);
            ebm_rng_get_state(r[t], st[t]);
        }
        ck_assert_msg(memcmp(g[0], g[1], (size_t)np * sizeof *g[0]) == 0, "call %d differs", call);
        ck_assert(memcmp(st[0], st[1], sizeof st[0]) == 0);
        for (int s = 0; s <= EBM_ESTIMATOR_STAT_MEAN_FIELD_MISSED; s++) {
            double a = ebm_estimator_stat(e[0], s), b = ebm_estimator_stat(e[1], s);
            ck_assert_msg(a == b, "stat %d: %g vs %g", s, a, b);
        }
    }
    if (c->kind != EBM_ESTIMATOR_PCD) {
        /* Replay: rewind the generator of estimator 0 and repeat its last call. */
        uint64_t before[EBM_RNG_STATE_WORDS];
        ebm_rng_get_state(r[0], before);
        ck_assert_int_eq(ebm_estimator_gradient(e[0], r[0], n, data, n0, g[0]), EBM_OK);
        ck_assert_int_eq(ebm_rng_set_state(r[0], before), EBM_OK);
        ck_assert_int_eq(ebm_estimator_gradient(e[0], r[0], n, data, n0, g[1]), EBM_OK);
        ck_assert(memcmp(g[0], g[1], (size_t)np * sizeof *g[0]) == 0);
        /* The call advanced the generator. */
        ebm_rng_get_state(r[0], st[0]);
        ck_assert(memcmp(before, st[0], sizeof before) != 0);
    }
    /* Another seed, another estimate. */
    ebm_rng_t *other = t_rng(503, 9);
    ck_assert_int_eq(ebm_estimator_gradient(e[1], other, n, data, n0, g[1]), EBM_OK);
    ck_assert(memcmp(g[0], g[1], (size_t)np * sizeof *g[0]) != 0);
    ebm_rng_destroy(other);
    for (int t = 0; t < 2; t++) {
        ebm_estimator_destroy(e[t]);
        ebm_rng_destroy(r[t]);
        free(g[t]);
    }
    free(data);
    ebm_model_destroy(m);
}
END_TEST

/*
 * EBM_ESTIMATOR_ROW_OFFSET and _CHAIN_OFFSET split a batch exactly
 * (data-parallel training). A batch of 12 rows (4 distinct, so rows
 * differ) in one call (PCD and GRBM_CD: 12 chains), against its slices
 * [0, 5), [5, 9), [9, 12) in three estimators with offsets 0, 5, 9 (both)
 * and the same generator state: every slice's generator ends where the
 * whole batch's does; the meeting times are the same rows' (sum of n_k
 * times the slices' mean tau = n times the batch's, in both phases; the
 * largest tau is the largest of the slices'); sum_k n_k g_k / n equals the
 * batch's g up to float summation (2e-5 relative; observed below 1e-6);
 * for PCD, a second call leaves the slices' chains equal, bit for bit, to
 * the batch's rows. Twin: the same slices without offsets (each numbers
 * its rows from 0) must differ from the batch in the gradient (by 100
 * times the tolerance) or in the meeting times. Loop: the DCFG
 * configurations.
 *
 * The slices' GEMMs have other shapes than the batch's (docs/
 * conventions.md, "Same bits"): a decision whose uniform falls within
 * rounding of its probability may flip and change its row's chains, its
 * meeting time and the gradient by O(1 / 12). The 12 rows make at most
 * about 2,000 decisions (240 to 1,950, from the meeting times: the
 * verbose output), each flipped with probability about 2^-24 (1e-6 for
 * the 240 of the Langevin kernels' accept ratios), so a flip somewhere
 * has probability below 3e-4. So the batch is split from two generator
 * states: a wrong offset makes both disagree, a flip one of them, and both
 * disagree by flips with probability below 1e-7.
 */
START_TEST(test_row_offset_splits_batch)
{
    const dcfg *c = &DCFG[_i];
    ebm_model_t *m = t_model(c->nl, c->sizes, c->vis, c->hid);
    t_random_params(m, 520 + (uint64_t)_i, 1.0);
    enum { N = 12, SLICES = 3 };
    const int64_t first[SLICES + 1] = {0, 5, 9, N};
    const int64_t n0 = c->sizes[0], np = ebm_model_param_count(m), w = ebm_model_state_width(m);
    const int calls = c->kind == EBM_ESTIMATOR_PCD ? 2 : 1;
    float rows[4 * MAXW];
    make_rows(m, 521, 4, rows);
    float *data = make_batch(n0, 4, rows, N);
    float *g_all = malloc((size_t)np * sizeof *g_all), *g = malloc((size_t)np * sizeof *g);
    float *chains_all = malloc((size_t)(N * w) * sizeof *chains_all);
    float *chains = malloc((size_t)(N * w) * sizeof *chains);
    double *sum = malloc((size_t)np * sizeof *sum);
    int agree[2] = {0, 0};
    double twin_worst = 0.0;
    int twin_differs = 0;
    for (int state = 0; state < 2; state++) {
        ebm_estimator_t *e_all = make_est(m, c->kind, -1,
                                          c->kind == EBM_ESTIMATOR_GRBM_CD ? 6 : -1, -1, -1);
        if (c->sampler >= 0) {
            set_int_ok(e_all, EBM_ESTIMATOR_SAMPLER, c->sampler);
        }
        ebm_rng_t *r_all = t_rng(522 + (uint64_t)state, 0);
        double tau_all = 0.0;
        for (int call = 0; call < calls; call++) {
            ck_assert_int_eq(ebm_estimator_gradient(e_all, r_all, N, data, n0, g_all), EBM_OK);
            tau_all += ebm_estimator_stat(e_all, EBM_ESTIMATOR_STAT_TAU_MEAN) +
                       ebm_estimator_stat(e_all, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN);
        }
        uint64_t st_all[EBM_RNG_STATE_WORDS], st[EBM_RNG_STATE_WORDS];
        ebm_rng_get_state(r_all, st_all);
        double gmax = 0.0;
        for (int64_t i = 0; i < np; i++) {
            gmax = fabs(g_all[i]) > gmax ? fabs(g_all[i]) : gmax;
        }
        const double tol = 2e-5 * (1.0 + gmax);
        if (c->kind == EBM_ESTIMATOR_PCD) {
            ck_assert_int_eq(ebm_estimator_get_chains(e_all, chains_all, w), EBM_OK);
        }
        double worst[2] = {0.0, 0.0}; /* with offsets, and the twin */
        int taus_differ[2] = {0, 0};
        for (int twin = 0; twin < 2; twin++) {
            double tau_sum[2] = {0.0, 0.0}, tau_max[2] = {0.0, 0.0};
            memset(sum, 0, (size_t)np * sizeof *sum);
            for (int k = 0; k < SLICES; k++) {
                const int64_t nk = first[k + 1] - first[k];
                ebm_estimator_t *e = make_est(m, c->kind, -1,
                                              c->kind == EBM_ESTIMATOR_GRBM_CD ? 6 : -1, -1, -1);
                if (c->sampler >= 0) {
                    set_int_ok(e, EBM_ESTIMATOR_SAMPLER, c->sampler);
                }
                set_int_ok(e, EBM_ESTIMATOR_ROW_OFFSET, twin ? 0 : first[k]);
                set_int_ok(e, EBM_ESTIMATOR_CHAIN_OFFSET, twin ? 0 : first[k]); /* chains = rows */
                ebm_rng_t *r = t_rng(522 + (uint64_t)state, 0);
                for (int call = 0; call < calls; call++) {
                    ck_assert_int_eq(
                        ebm_estimator_gradient(e, r, nk, data + first[k] * n0, n0, g), EBM_OK);
                }
                ebm_rng_get_state(r, st);
                ck_assert_msg(memcmp(st, st_all, sizeof st) == 0, "slice %d: another rng state",
                              k);
                for (int64_t i = 0; i < np; i++) {
                    sum[i] += (double)nk * g[i];
                }
                for (int ph = 0; ph < 2; ph++) {
                    const int mean = ph == 0 ? EBM_ESTIMATOR_STAT_TAU_MEAN
                                             : EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN;
                    tau_sum[ph] += (double)nk * ebm_estimator_stat(e, mean);
                    const double mx = ebm_estimator_stat(e, mean + 1);
                    tau_max[ph] = mx > tau_max[ph] ? mx : tau_max[ph];
                }
                if (c->kind == EBM_ESTIMATOR_PCD) {
                    ck_assert_int_eq(ebm_estimator_get_chains(e, chains + first[k] * w, w),
                                     EBM_OK);
                }
                ebm_estimator_destroy(e);
                ebm_rng_destroy(r);
            }
            for (int64_t i = 0; i < np; i++) {
                const double d = fabs(sum[i] / N - g_all[i]);
                worst[twin] = d > worst[twin] ? d : worst[twin];
            }
            for (int ph = 0; ph < 2; ph++) {
                const int mean = ph == 0 ? EBM_ESTIMATOR_STAT_TAU_MEAN
                                         : EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN;
                taus_differ[twin] |=
                    fabs(tau_sum[ph] - N * ebm_estimator_stat(e_all, mean)) > 1e-9 ||
                    tau_max[ph] != ebm_estimator_stat(e_all, mean + 1);
            }
            if (c->kind == EBM_ESTIMATOR_PCD) {
                taus_differ[twin] |=
                    memcmp(chains, chains_all, (size_t)(N * w) * sizeof *chains) != 0;
            }
        }
        T_VLOG("row offset[%d], state %d: gradient off by %.3g (tolerance %.3g), twin by %.3g; "
               "taus/chains differ: %d, twin %d; decisions about %.0f\n",
               _i, state, worst[0], tol, worst[1], taus_differ[0], taus_differ[1],
               (double)N * (tau_all + 2.0 * calls) * (double)w * 2.0);
        agree[state] = worst[0] <= tol && !taus_differ[0];
        twin_differs |= worst[1] > 100 * tol || taus_differ[1];
        twin_worst = worst[1] > twin_worst ? worst[1] : twin_worst;
        ebm_estimator_destroy(e_all);
        ebm_rng_destroy(r_all);
    }
    ck_assert_msg(agree[0] || agree[1],
                  "the slices' gradient, meeting times or chains differ from the batch's, from "
                  "both generator states");
    ck_assert_msg(twin_differs, "twin (no offsets) matched the batch: gradient off by only %g",
                  twin_worst);
    free(sum);
    free(chains);
    free(chains_all);
    free(g);
    free(g_all);
    free(data);
    ebm_model_destroy(m);
}
END_TEST

/* Batches of changing sizes reuse and grow the estimator's scratch, with
 * offsets 0 (no row numbers) and with offsets: every call succeeds, and the
 * sanitizer and valgrind builds of the suite find no access outside it. */
START_TEST(test_growing_batches)
{
    const int64_t sizes[2] = {4, 4}, counts[5] = {100, 149, 7, 300, 149};
    ebm_model_t *m = t_model(2, sizes, B_, B_);
    t_random_params(m, 530, 1.0);
    float rows[4 * MAXW];
    make_rows(m, 531, 4, rows);
    float *data = make_batch(4, 4, rows, 300);
    float *g = malloc((size_t)ebm_model_param_count(m) * sizeof *g);
    const int kinds[3] = {EBM_ESTIMATOR_CD, UCD_, EBM_ESTIMATOR_PCD};
    for (int k = 0; k < 3; k++) {
        for (int offset = 0; offset < 2; offset++) {
            ebm_estimator_t *e = make_est(m, kinds[k], -1, -1, -1, -1);
            set_int_ok(e, EBM_ESTIMATOR_ROW_OFFSET, offset ? 1000 : 0);
            set_int_ok(e, EBM_ESTIMATOR_CHAIN_OFFSET, offset ? 77 : 0);
            ebm_rng_t *r = t_rng(532, 0);
            for (int c = 0; c < 5; c++) {
                ck_assert_msg(ebm_estimator_gradient(e, r, counts[c], data, 4, g) == EBM_OK,
                              "kind %d, %lld rows: %s", kinds[k], (long long)counts[c],
                              ebm_estimator_errmsg(e));
            }
            ebm_rng_destroy(r);
            ebm_estimator_destroy(e);
        }
    }
    free(g);
    free(data);
    ebm_model_destroy(m);
}
END_TEST

/* Rows are independent draws from stream rows 0..n-1 of the call. On a
 * 2-layer model (exact positive phase) the phases take the same sequences
 * whatever the other rows do, so row r's estimate est_r(v) depends only on
 * (rng, r, v), not on n or the other rows. With the same starting generator,
 * g([a]) = est_0(a) and g([a, b]) = (est_0(a) + est_1(b)) / 2, so
 *     g([a, b]) + g([b, a]) = g([a, a]) + g([b, b])
 *     2 g([a, b]) - g([a]) = 2 g([b, b]) - g([b])      (both est_1(b))
 * up to float rounding (1e-4; observed below 1e-7), while est_1(a) =
 * 2 g([a, a]) - g([a]) differs from est_0(a) (the rows use different
 * streams): CD-k, UCD and UCD-LMI on an RBM 4x3, 20 trials each. The
 * batches of 1 and 2 rows run GEMMs of other shapes (docs/conventions.md,
 * "Same bits"): a draw whose uniform falls within rounding of its
 * probability (about 2^-24 each) may flip and break its trial's identities
 * by O(1). A trial makes about 10 rows x 60 draws (tau below 3), so about
 * 2e-3 of the 60 trials are expected broken; one per kind is allowed, and
 * two fail a correct estimator with probability below 1e-6 per kind.
 * (On a DBM the negative phase starts after the longest
 * positive-phase chain of the batch, so these identities do not hold there;
 * the rows stay independent in law.) Exchangeability in law (swapping rows
 * leaves the exact gradient as it is) is covered by the unbiasedness tests
 * with two distinct rows. */
START_TEST(test_row_independence)
{
    const int kinds[3] = {EBM_ESTIMATOR_CD, UCD_, LMI_};
    const int64_t sizes[2] = {4, 3};
    ebm_model_t *m = t_model(2, sizes, B_, B_);
    t_random_params(m, 510, 1.2);
    const int64_t np = ebm_model_param_count(m);
    const float a[4] = {1, 0, 1, 1}, b[4] = {0, 1, 0, 0};
    /* batches: [a, b], [b, a], [a, a], [b, b], [a], [b] */
    const float *batch[6][2] = {{a, b}, {b, a}, {a, a}, {b, b}, {a, NULL}, {b, NULL}};
    for (int t = 0; t < 3; t++) {
        ebm_estimator_t *e = make_est(m, kinds[t], -1, 2, -1, -1);
        double worst1 = 0.0, worst2 = 0.0, differ = 0.0, tau = 0.0;
        int broken = 0;
        for (int trial = 0; trial < 20; trial++) {
            float g[6][32];
            double w1 = 0.0, w2 = 0.0;
            for (int p = 0; p < 6; p++) {
                float data[8];
                int64_t n = batch[p][1] != NULL ? 2 : 1;
                memcpy(data, batch[p][0], sizeof a);
                if (n == 2) {
                    memcpy(data + 4, batch[p][1], sizeof a);
                }
                ebm_rng_t *rng = t_rng(511 + (uint64_t)trial, 0);
                ck_assert_int_eq(ebm_estimator_gradient(e, rng, n, data, 4, g[p]), EBM_OK);
                ebm_rng_destroy(rng);
                tau += (double)n * ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_TAU_MEAN);
            }
            for (int64_t i = 0; i < np; i++) {
                double d1 = ((double)g[0][i] + g[1][i]) - ((double)g[2][i] + g[3][i]);
                double d2 = (2.0 * g[0][i] - g[4][i]) - (2.0 * g[3][i] - g[5][i]);
                double d3 = (2.0 * g[2][i] - g[4][i]) - g[4][i];
                w1 = fabs(d1) > w1 ? fabs(d1) : w1;
                w2 = fabs(d2) > w2 ? fabs(d2) : w2;
                differ = fabs(d3) > differ ? fabs(d3) : differ;
            }
            if (w1 > 1e-4 || w2 > 1e-4) {
                broken++;
            } else {
                worst1 = w1 > worst1 ? w1 : worst1;
                worst2 = w2 > worst2 ? w2 : worst2;
            }
        }
        T_VLOG("estimator: row independence, kind %d: %d of 20 trials broken; residuals %.3g, "
               "%.3g; rows differ by up to %.3g; mean tau %.2f\n",
               kinds[t], broken, worst1, worst2, differ, tau / 200.0);
        ck_assert_msg(broken <= 1, "kind %d: the identities fail in %d of 20 trials", kinds[t],
                      broken);
        ck_assert_msg(differ > 0.01, "kind %d: rows 0 and 1 gave the same estimates", kinds[t]);
        ebm_estimator_destroy(e);
    }
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 6. Persistent chains                                                     */
/* ------------------------------------------------------------------------ */

static void check_states(const ebm_model_t *m, int64_t n, const float *x, int64_t ldx)
{
    const int64_t nl = ebm_model_num_layers(m);
    for (int64_t r = 0; r < n; r++) {
        for (int64_t l = 0; l < nl; l++) {
            int u = ebm_model_layer_units(m, l);
            int64_t off = ebm_model_layer_offset(m, l);
            for (int64_t j = 0; j < ebm_model_layer_size(m, l); j++) {
                float v = x[r * ldx + off + j];
                ck_assert_msg(t_unit_ok(u, v, 0), "chain %lld, layer %lld, unit %lld: %g",
                              (long long)r, (long long)l, (long long)j, (double)v);
            }
        }
    }
}

START_TEST(test_pcd_chains)
{
    static const struct {
        int nl;
        int64_t sizes[3];
        int vis, hid;
    } models[3] = {{2, {4, 3, 0}, B_, B_}, {3, {3, 3, 2}, S_, S_}, {2, {3, 2, 0}, G_, B_}};
    for (int t = 0; t < 3; t++) {
        ebm_model_t *m = t_model(models[t].nl, models[t].sizes, models[t].vis, models[t].hid);
        t_random_params(m, 600 + (uint64_t)t, 1.0);
        const int64_t w = ebm_model_state_width(m), n0 = models[t].sizes[0];
        const int64_t np = ebm_model_param_count(m), ldo = w + 3;
        float rows[MAXW], g[64], g2[64];
        make_rows(m, 601, 1, rows);
        float *data = make_batch(n0, 1, rows, 6);
        float chains[16 * (MAXW + 3)], again[16 * (MAXW + 3)];
        ebm_rng_t *rng = t_rng(602, 0);

        /* Chains = the batch size by default. */
        ebm_estimator_t *e = make_est(m, EBM_ESTIMATOR_PCD, -1, 2, -1, -1);
        ck_assert_int_eq(ebm_estimator_num_chains(e), 0);
        ck_assert_int_eq(ebm_estimator_get_chains(e, chains, ldo), EBM_OK); /* zero rows */
        ck_assert_int_eq(ebm_estimator_gradient(e, rng, 6, data, n0, g), EBM_OK);
        ck_assert_int_eq(ebm_estimator_num_chains(e), 6);
        ebm_estimator_destroy(e);

        /* The CHAINS option. */
        e = make_est(m, EBM_ESTIMATOR_PCD, -1, 2, -1, -1);
        set_int_ok(e, EBM_ESTIMATOR_CHAINS, 9);
        ck_assert_int_eq(ebm_estimator_num_chains(e), 0);
        ck_assert_int_eq(ebm_estimator_gradient(e, rng, 6, data, n0, g), EBM_OK);
        ck_assert_int_eq(ebm_estimator_num_chains(e), 9);
        for (int64_t i = 0; i < 16 * ldo; i++) {
            chains[i] = SENTINEL;
        }
        ck_assert_int_eq(ebm_estimator_get_chains(e, chains, ldo), EBM_OK);
        check_states(m, 9, chains, ldo);
        for (int64_t r = 0; r < 9; r++) { /* the padding is not written */
            for (int64_t j = w; j < ldo; j++) {
                ck_assert(chains[r * ldo + j] == SENTINEL);
            }
        }
        ck_assert(chains[9 * ldo] == SENTINEL);
        /* The chains move from call to call (a 7- or 8-unit state, 9 chains). */
        ck_assert_int_eq(ebm_estimator_gradient(e, rng, 6, data, n0, g), EBM_OK);
        ck_assert_int_eq(ebm_estimator_get_chains(e, again, ldo), EBM_OK);
        check_states(m, 9, again, ldo);
        int moved = 0;
        for (int64_t r = 0; r < 9; r++) {
            moved |= memcmp(chains + r * ldo, again + r * ldo, (size_t)w * sizeof *chains) != 0;
        }
        ck_assert(moved);

        /* set_chains round trip, with a different count: the persistent
         * chains then decide the count. */
        ck_assert_int_eq(ebm_estimator_set_chains(e, 4, chains, ldo), EBM_OK);
        ck_assert_int_eq(ebm_estimator_num_chains(e), 4);
        ck_assert_int_eq(ebm_estimator_get_chains(e, again, w), EBM_OK);
        for (int64_t r = 0; r < 4; r++) {
            ck_assert(memcmp(again + r * w, chains + r * ldo, (size_t)w * sizeof *chains) == 0);
        }
        ck_assert_int_eq(ebm_estimator_gradient(e, rng, 6, data, n0, g), EBM_OK);
        ck_assert_int_eq(ebm_estimator_num_chains(e), 4);

        /* A checkpoint (chains + generator) restored into a fresh estimator
         * continues with identical gradients. */
        uint64_t state[EBM_RNG_STATE_WORDS];
        ck_assert_int_eq(ebm_estimator_get_chains(e, chains, ldo), EBM_OK);
        ck_assert_int_eq(ebm_rng_get_state(rng, state), EBM_OK);
        ebm_estimator_t *f = make_est(m, EBM_ESTIMATOR_PCD, -1, 2, -1, -1);
        set_int_ok(f, EBM_ESTIMATOR_CHAINS, 9);
        ck_assert_int_eq(ebm_estimator_set_chains(f, 4, chains, ldo), EBM_OK);
        ebm_rng_t *rng2 = t_rng(999, 999);
        ck_assert_int_eq(ebm_rng_set_state(rng2, state), EBM_OK);
        for (int c = 0; c < 4; c++) {
            ck_assert_int_eq(ebm_estimator_gradient(e, rng, 6, data, n0, g), EBM_OK);
            ck_assert_int_eq(ebm_estimator_gradient(f, rng2, 6, data, n0, g2), EBM_OK);
            ck_assert_msg(memcmp(g, g2, (size_t)np * sizeof *g) == 0, "call %d after restore", c);
        }
        ck_assert_int_eq(ebm_estimator_get_chains(e, chains, ldo), EBM_OK);
        ck_assert_int_eq(ebm_estimator_get_chains(f, again, ldo), EBM_OK);
        for (int64_t r = 0; r < 4; r++) {
            ck_assert(memcmp(chains + r * ldo, again + r * ldo, (size_t)w * sizeof *chains) == 0);
        }

        /* Reset: the next call starts CHAINS new chains. */
        ck_assert_int_eq(ebm_estimator_set_chains(e, 0, NULL, 0), EBM_OK);
        ck_assert_int_eq(ebm_estimator_num_chains(e), 0);
        ck_assert_int_eq(ebm_estimator_gradient(e, rng, 6, data, n0, g), EBM_OK);
        ck_assert_int_eq(ebm_estimator_num_chains(e), 9);

        /* Other kinds keep no persistent chains. */
        ebm_estimator_t *u = make_est(m, models[t].vis == G_ ? EBM_ESTIMATOR_GRBM_CD
                                                             : EBM_ESTIMATOR_CD, -1, -1, -1, -1);
        ck_assert_int_eq(ebm_estimator_gradient(u, rng, 6, data, n0, g), EBM_OK);
        ck_assert_int_eq(ebm_estimator_num_chains(u), 0);
        ebm_estimator_destroy(u);

        ebm_rng_destroy(rng2);
        ebm_estimator_destroy(f);
        ebm_estimator_destroy(e);
        ebm_rng_destroy(rng);
        free(data);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 7. GRBM modified CD                                                      */
/* ------------------------------------------------------------------------ */

/* GRBM_CD with each of its samplers (K = 5, burn-in 2 < K, Metropolis
 * adjustment on): finite gradients, acceptance in (0, 1) for the Langevin
 * kinds and 1 for Gibbs, no persistent chains. */
START_TEST(test_grbm_cd_samplers)
{
    const int64_t sizes[2] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, G_, B_);
    t_random_params(m, 701, 1.0);
    float rows[3];
    make_rows(m, 702, 1, rows);
    const int64_t n = 32, np = ebm_model_param_count(m);
    float *data = make_batch(3, 1, rows, n);
    const int samplers[3] = {EBM_SAMPLER_GIBBS, EBM_SAMPLER_LANGEVIN, EBM_SAMPLER_GIBBS_LANGEVIN};
    ebm_rng_t *rng = t_rng(703, 0);
    float g[3][16];
    for (int s = 0; s < 3; s++) {
        ebm_estimator_t *e = NULL;
        ck_assert_int_eq(ebm_estimator_create(&e, m, EBM_ESTIMATOR_GRBM_CD), EBM_OK);
        set_int_ok(e, EBM_ESTIMATOR_SAMPLER, samplers[s]);
        set_int_ok(e, EBM_ESTIMATOR_K, 5);
        set_int_ok(e, EBM_ESTIMATOR_BURN_IN, 2);
        set_int_ok(e, EBM_ESTIMATOR_CHAINS, 20);
        set_int_ok(e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_LANGEVIN_STEPS, 4);
        ck_assert_int_eq(ebm_estimator_set_double(
                             e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_STEP_SIZE, 0.05),
                         EBM_OK);
        set_int_ok(e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_ADJUST_AFTER, 0); /* MALA */
        for (int c = 0; c < 3; c++) {
            for (int64_t i = 0; i < np; i++) {
                g[s][i] = SENTINEL;
            }
            int rc = ebm_estimator_gradient(e, rng, n, data, 3, g[s]);
            ck_assert_msg(rc == EBM_OK, "sampler %d: %s", samplers[s], ebm_estimator_errmsg(e));
            for (int64_t i = 0; i < np; i++) {
                ck_assert(isfinite(g[s][i]) && g[s][i] != SENTINEL);
            }
            double acc = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_ACCEPT_RATE);
            ck_assert_msg(acc >= 0.0 && acc <= 1.0, "accept %g", acc);
            if (samplers[s] == EBM_SAMPLER_GIBBS) {
                ck_assert(acc == 1.0);
            } else {
                ck_assert_msg(acc > 0.0 && acc < 1.0, "sampler %d: accept %g", samplers[s], acc);
            }
            ck_assert_int_eq(ebm_estimator_num_chains(e), 0);
        }
        ebm_estimator_destroy(e);
    }
    ck_assert(memcmp(g[0], g[1], (size_t)np * sizeof g[0][0]) != 0);
    ck_assert(memcmp(g[1], g[2], (size_t)np * sizeof g[0][0]) != 0);

    /* The sampler-option passthrough reaches the sampler in use: on the same
     * seed, Langevin steps and step size change the Langevin kinds'
     * estimates and leave Gibbs's alone. */
    for (int s = 0; s < 3; s++) {
        float h[3][16];
        for (int v = 0; v < 3; v++) {
            ebm_estimator_t *e = NULL;
            ck_assert_int_eq(ebm_estimator_create(&e, m, EBM_ESTIMATOR_GRBM_CD), EBM_OK);
            set_int_ok(e, EBM_ESTIMATOR_SAMPLER, samplers[s]);
            set_int_ok(e, EBM_ESTIMATOR_K, 3);
            set_int_ok(e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_LANGEVIN_STEPS,
                       v == 1 ? 7 : 4);
            ck_assert_int_eq(ebm_estimator_set_double(e, EBM_ESTIMATOR_SAMPLER_OPTION +
                                                             EBM_SAMPLER_STEP_SIZE,
                                                      v == 2 ? 0.1 : 0.05),
                             EBM_OK);
            ebm_rng_t *r = t_rng(704, 0);
            ck_assert_int_eq(ebm_estimator_gradient(e, r, n, data, 3, h[v]), EBM_OK);
            ebm_rng_destroy(r);
            ebm_estimator_destroy(e);
        }
        int same1 = memcmp(h[0], h[1], (size_t)np * sizeof h[0][0]) == 0;
        int same2 = memcmp(h[0], h[2], (size_t)np * sizeof h[0][0]) == 0;
        ck_assert_msg(same1 == (samplers[s] == EBM_SAMPLER_GIBBS),
                      "sampler %d: EBM_SAMPLER_LANGEVIN_STEPS", samplers[s]);
        ck_assert_msg(same2 == (samplers[s] == EBM_SAMPLER_GIBBS),
                      "sampler %d: EBM_SAMPLER_STEP_SIZE", samplers[s]);
    }
    ebm_rng_destroy(rng);
    free(data);
    ebm_model_destroy(m);
}
END_TEST

/* Gibbs with K = 200 and burn-in 100 from N(0, I), 10 chains per call: the
 * chains of this well-mixing GRBM are at equilibrium after 100 steps up to a
 * bias far below the SE, so the mean of 200 independent calls (1000 at
 * level 2) must be within 4.5 SE plus 1e-3 (for the remaining bias) of the
 * exact gradient: false-failure probability as for the unbiasedness tests,
 * about 14 * 1.2e-5 = 1.7e-4. Its twin, K = 1 (one Gibbs step from N(0, I),
 * 100 chains per call), is biased and must miss by more than 6 SE
 * (observed max |z| 26; 65 at level 2). */
START_TEST(test_grbm_cd_converges)
{
    const int64_t sizes[2] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, G_, B_);
    t_random_params(m, 711, 1.0);
    float row[3];
    make_rows(m, 712, 1, row);
    double exact[16];
    ref_exact_grad(m, 1, row, 3, exact);
    const int64_t calls = t_level() >= 2 ? 1000 : 200;
    ebm_estimator_t *e = NULL;
    ck_assert_int_eq(ebm_estimator_create(&e, m, EBM_ESTIMATOR_GRBM_CD), EBM_OK);
    set_int_ok(e, EBM_ESTIMATOR_K, 200);
    set_int_ok(e, EBM_ESTIMATOR_BURN_IN, 100);
    set_int_ok(e, EBM_ESTIMATOR_CHAINS, 10);
    const int64_t np = ebm_model_param_count(m);
    float *data = make_batch(3, 1, row, 1);
    ebm_rng_t *rng = t_rng(713, 0);
    run r;
    run_calls(e, m, rng, calls, 1, data, 3, 0, &r);
    double zmax = 0.0;
    int64_t arg = 0;
    for (int64_t i = 0; i < np; i++) {
        double se = sqrt(r.var[i] / (double)calls);
        double z = (fabs(r.mean[i] - exact[i]) - 1e-3) / se;
        if (z > zmax) {
            zmax = z;
            arg = i;
        }
    }
    report("GRBM_CD Gibbs K=200 burn-in 100", zmax, arg, &r);
    ck_assert_msg(zmax < Z_PASS, "GRBM_CD K=200: parameter %lld: mean %.6g, exact %.6g, z %.2f",
                  (long long)arg, r.mean[arg], exact[arg], zmax);
    run_free(&r);
    set_int_ok(e, EBM_ESTIMATOR_K, 1);
    set_int_ok(e, EBM_ESTIMATOR_BURN_IN, 0);
    set_int_ok(e, EBM_ESTIMATOR_CHAINS, 100);
    run_calls(e, m, rng, calls, 1, data, 3, 0, &r);
    double z1 = max_abs_z(&r, exact, &arg);
    report("GRBM_CD Gibbs K=1 (twin, fails)", z1, arg, &r);
    ck_assert_msg(z1 > Z_TWIN, "GRBM_CD K=1 was not caught: max |z| = %.2f", z1);
    run_free(&r);
    ebm_rng_destroy(rng);
    free(data);
    ebm_estimator_destroy(e);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 8. Bad input                                                             */
/* ------------------------------------------------------------------------ */

#define EXPECT_FAIL(call, code, msg, n1, n2)                                                       \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        const char *m_ = (msg);                                                                    \
        ck_assert_msg(rc_ == (code), "%s: got %d (%s), expected %d", #call, rc_, m_, (code));      \
        ck_assert_msg(m_ != NULL && t_contains(m_, (n1)) && t_contains(m_, (n2)),                  \
                      "%s: message \"%s\" does not name \"%s\" / \"%s\"", #call, m_, (n1), (n2));  \
    } while (0)

START_TEST(test_bad_create)
{
    const int64_t s2[2] = {3, 2}, s3[3] = {3, 3, 2};
    ebm_model_t *bin = t_model(2, s2, B_, B_), *grbm = t_model(2, s2, G_, B_);
    ebm_model_t *gdbm = t_model(3, s3, G_, B_);
    static char not_null;
    ebm_estimator_t *const poison = (ebm_estimator_t *)(void *)&not_null;
    ebm_estimator_t *e = poison; /* *out must become NULL on failure */
    ck_assert_int_eq(ebm_estimator_create(&e, NULL, EBM_ESTIMATOR_CD), EBM_ENULL);
    ck_assert_ptr_null(e);
    ck_assert_int_eq(ebm_estimator_create(NULL, bin, EBM_ESTIMATOR_CD), EBM_ENULL);
    ck_assert(t_contains(ebm_model_errmsg(bin), "out"));
    e = poison;
    EXPECT_FAIL(ebm_estimator_create(&e, bin, 6), EBM_EVALUE, ebm_model_errmsg(bin), "kind", "6");
    ck_assert_ptr_null(e);
    e = poison;
    EXPECT_FAIL(ebm_estimator_create(&e, bin, -1), EBM_EVALUE, ebm_model_errmsg(bin), "kind", "-1");
    ck_assert_ptr_null(e);
    e = poison;
    EXPECT_FAIL(ebm_estimator_create(&e, bin, EBM_ESTIMATOR_GRBM_CD), EBM_EUNSUPPORTED,
                ebm_model_errmsg(bin), "GRBM", "");
    ck_assert_ptr_null(e);
    e = poison;
    EXPECT_FAIL(ebm_estimator_create(&e, gdbm, EBM_ESTIMATOR_GRBM_CD), EBM_EUNSUPPORTED,
                ebm_model_errmsg(gdbm), "GRBM", "");
    ck_assert_ptr_null(e);
    e = poison;
    EXPECT_FAIL(ebm_estimator_create(&e, grbm, EBM_ESTIMATOR_UCD_LMI), EBM_EUNSUPPORTED,
                ebm_model_errmsg(grbm), "UCD_LMI", "Gaussian");
    ck_assert_ptr_null(e);
    /* Every valid kind on the models that support it. */
    for (int k = EBM_ESTIMATOR_CD; k <= EBM_ESTIMATOR_GRBM_CD; k++) {
        ebm_model_t *m = k == EBM_ESTIMATOR_GRBM_CD ? grbm : bin;
        ck_assert_int_eq(ebm_estimator_create(&e, m, k), EBM_OK);
        ck_assert_ptr_nonnull(e);
        ck_assert_str_eq(ebm_estimator_errmsg(e), "");
        ebm_estimator_destroy(e);
    }
    ck_assert_int_eq(ebm_estimator_create(&e, gdbm, UCD_), EBM_OK); /* a GDBM: UCD works */
    ebm_estimator_destroy(e);
    ebm_estimator_destroy(NULL);
    ck_assert_ptr_nonnull(ebm_estimator_errmsg(NULL));
    ck_assert_int_eq(ebm_estimator_num_chains(NULL), -1);
    ebm_model_destroy(bin);
    ebm_model_destroy(grbm);
    ebm_model_destroy(gdbm);
}
END_TEST

/* Gradient of a fresh estimator built like `e` by `opts`, on the same seed:
 * to show that failed option calls changed nothing. */
typedef void (*opts_fn)(ebm_estimator_t *e);

static void grad_with(const ebm_model_t *m, int kind, opts_fn opts, ebm_estimator_t *e_or_null,
                      const float *data, int64_t n, int64_t ldd, float *g)
{
    ebm_estimator_t *e = e_or_null;
    if (e == NULL) {
        ck_assert_int_eq(ebm_estimator_create(&e, m, kind), EBM_OK);
        if (opts != NULL) {
            opts(e);
        }
    }
    ebm_rng_t *rng = t_rng(801, 1);
    int rc = ebm_estimator_gradient(e, rng, n, data, ldd, g);
    ck_assert_msg(rc == EBM_OK, "%s", ebm_estimator_errmsg(e));
    ebm_rng_destroy(rng);
    if (e_or_null == NULL) {
        ebm_estimator_destroy(e);
    }
}

static void opts_dbm(ebm_estimator_t *e)
{
    set_int_ok(e, EBM_ESTIMATOR_K, 2);
    set_int_ok(e, EBM_ESTIMATOR_MARGINALIZE, EBM_MARGINALIZE_NONE);
    set_int_ok(e, EBM_ESTIMATOR_MAX_STEPS, 50);
    set_int_ok(e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_COUPLING, EBM_COUPLING_MAXIMAL);
}

static void opts_grbm(ebm_estimator_t *e)
{
    set_int_ok(e, EBM_ESTIMATOR_SAMPLER, EBM_SAMPLER_GIBBS_LANGEVIN);
    set_int_ok(e, EBM_ESTIMATOR_K, 4);
    set_int_ok(e, EBM_ESTIMATOR_BURN_IN, 1);
    set_int_ok(e, EBM_ESTIMATOR_CHAINS, 5);
    set_int_ok(e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_LANGEVIN_STEPS, 3);
    ck_assert_int_eq(
        ebm_estimator_set_double(e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_STEP_SIZE, 0.02),
        EBM_OK);
}

START_TEST(test_bad_options)
{
    const int64_t s3[3] = {3, 3, 2}, s2[2] = {3, 2};
    ebm_model_t *dbm = t_model(3, s3, B_, B_), *grbm = t_model(2, s2, G_, B_);
    t_random_params(dbm, 810, 1.0);
    t_random_params(grbm, 811, 1.0);
    const float ddata[6] = {1, 0, 1, 0, 1, 1}, gdata[6] = {0.5f, -1, 0.2f, 1, 0, -0.3f};
    float g0[64], g1[64];
    const int64_t npd = ebm_model_param_count(dbm), npg = ebm_model_param_count(grbm);
    const int SO = EBM_ESTIMATOR_SAMPLER_OPTION;

    ck_assert_int_eq(ebm_estimator_set_int(NULL, EBM_ESTIMATOR_K, 1), EBM_ENULL);
    ck_assert_int_eq(ebm_estimator_set_double(NULL, EBM_ESTIMATOR_MEAN_FIELD_TOL, 1.0), EBM_ENULL);

    /* A UCD estimator on a DBM with some options set, then every bad option. */
    ebm_estimator_t *e = NULL;
    ck_assert_int_eq(ebm_estimator_create(&e, dbm, UCD_), EBM_OK);
    opts_dbm(e);
#define BAD_INT(opt, val, code, n1, n2)                                                            \
    EXPECT_FAIL(ebm_estimator_set_int(e, (opt), (val)), (code), ebm_estimator_errmsg(e), (n1), (n2))
#define BAD_DBL(opt, val, code, n1, n2)                                                            \
    EXPECT_FAIL(ebm_estimator_set_double(e, (opt), (val)), (code), ebm_estimator_errmsg(e), (n1),  \
                (n2))
    BAD_INT(99, 1, EBM_EVALUE, "option 99", "unknown");
    BAD_INT(-1, 1, EBM_EVALUE, "option -1", "unknown");
    BAD_INT(999, 1, EBM_EVALUE, "999", "unknown");
    BAD_INT(EBM_ESTIMATOR_K, -1, EBM_EVALUE, "EBM_ESTIMATOR_K", "-1");
    BAD_INT(EBM_ESTIMATOR_K, 1000000000, EBM_EVALUE, "EBM_ESTIMATOR_K", "1000000000");
    BAD_INT(EBM_ESTIMATOR_K, 1000000000, EBM_EVALUE, "EBM_ESTIMATOR_K", "to 100000000");
    BAD_INT(EBM_ESTIMATOR_MAX_STEPS, -1, EBM_EVALUE, "EBM_ESTIMATOR_MAX_STEPS is -1", "0 to 2147483647");
    BAD_INT(EBM_ESTIMATOR_CHAINS, -5, EBM_EVALUE, "EBM_ESTIMATOR_CHAINS", "-5");
    BAD_INT(EBM_ESTIMATOR_CHAINS, (int64_t)1 << 40, EBM_EVALUE, "EBM_ESTIMATOR_CHAINS",
            "1099511627776");
    BAD_INT(EBM_ESTIMATOR_MARGINALIZE, 4, EBM_EVALUE, "EBM_ESTIMATOR_MARGINALIZE", "4");
    BAD_INT(EBM_ESTIMATOR_MARGINALIZE, -1, EBM_EVALUE, "EBM_ESTIMATOR_MARGINALIZE", "-1");
    BAD_INT(EBM_ESTIMATOR_STEP_LIMIT, 0, EBM_EVALUE, "EBM_ESTIMATOR_STEP_LIMIT", "0");
    BAD_INT(EBM_ESTIMATOR_ROW_OFFSET, -1, EBM_EVALUE, "EBM_ESTIMATOR_ROW_OFFSET", "-1");
    BAD_INT(EBM_ESTIMATOR_ROW_OFFSET, INT64_C(1) << 32, EBM_EVALUE, "EBM_ESTIMATOR_ROW_OFFSET",
            "4294967296");
    BAD_INT(EBM_ESTIMATOR_CHAIN_OFFSET, -2, EBM_EVALUE, "EBM_ESTIMATOR_CHAIN_OFFSET", "-2");
    BAD_INT(EBM_ESTIMATOR_POSITIVE, 5, EBM_EVALUE, "EBM_ESTIMATOR_POSITIVE", "5");
    BAD_INT(EBM_ESTIMATOR_POSITIVE, EBM_POSITIVE_EXACT, EBM_EUNSUPPORTED, "EXACT", "3 layers");
    BAD_INT(EBM_ESTIMATOR_SAMPLER, EBM_SAMPLER_MH_UNIFORM, EBM_EVALUE, "EBM_ESTIMATOR_SAMPLER", "1");
    BAD_INT(EBM_ESTIMATOR_SAMPLER, EBM_SAMPLER_LANGEVIN, EBM_EUNSUPPORTED, "Langevin", "GRBM");
    BAD_INT(EBM_ESTIMATOR_BURN_IN, -1, EBM_EVALUE, "EBM_ESTIMATOR_BURN_IN", "-1");
    BAD_INT(EBM_ESTIMATOR_SEARCH_SWEEPS, 0, EBM_EVALUE, "EBM_ESTIMATOR_SEARCH_SWEEPS", "0");
    BAD_INT(EBM_ESTIMATOR_MEAN_FIELD_ITERS, 0, EBM_EVALUE, "EBM_ESTIMATOR_MEAN_FIELD_ITERS", "0");
    BAD_INT(EBM_ESTIMATOR_MEAN_FIELD_TOL, 1, EBM_EVALUE, "MEAN_FIELD_TOL", "double");
    BAD_DBL(EBM_ESTIMATOR_K, 1.0, EBM_EVALUE, "option 0", "not a double");
    BAD_DBL(EBM_ESTIMATOR_MEAN_FIELD_TOL, -1.0, EBM_EVALUE, "MEAN_FIELD_TOL", "-1");
    BAD_DBL(EBM_ESTIMATOR_MEAN_FIELD_TOL, NAN, EBM_EVALUE, "MEAN_FIELD_TOL", "nan");
    BAD_DBL(EBM_ESTIMATOR_MEAN_FIELD_TOL, INFINITY, EBM_EVALUE, "MEAN_FIELD_TOL", "inf");
    /* The sampler-option passthrough. */
    BAD_INT(SO + EBM_SAMPLER_CLAMP_LAYERS, 1, EBM_EVALUE, "CLAMP_LAYERS", "cannot");
    BAD_INT(SO + EBM_SAMPLER_CLAMP_LAYERS, 0, EBM_EVALUE, "CLAMP_LAYERS", "cannot");
    BAD_INT(SO + EBM_SAMPLER_ROW_OFFSET, 3, EBM_EVALUE, "EBM_SAMPLER_ROW_OFFSET",
            "EBM_ESTIMATOR_ROW_OFFSET");
    BAD_DBL(SO + EBM_SAMPLER_CLAMP_LAYERS, 1.0, EBM_EVALUE, "CLAMP_LAYERS", "");
    BAD_INT(SO + EBM_SAMPLER_COUPLING, 3, EBM_EVALUE, "COUPLING", "3");
    BAD_INT(SO + EBM_SAMPLER_LANGEVIN_STEPS, 0, EBM_EVALUE, "LANGEVIN_STEPS", "0");
    BAD_INT(SO + EBM_SAMPLER_STEP_SIZE, 1, EBM_EVALUE, "STEP_SIZE", "double");
    BAD_INT(SO + 99, 1, EBM_EVALUE, "99", "unknown");
    BAD_DBL(SO + EBM_SAMPLER_COUPLING, 1.0, EBM_EVALUE, "COUPLING", "not a double");
    BAD_DBL(SO + EBM_SAMPLER_STEP_SIZE, -0.1, EBM_EVALUE, "STEP_SIZE", "-0.1");
    BAD_DBL(SO + EBM_SAMPLER_STEP_SIZE, NAN, EBM_EVALUE, "STEP_SIZE", "nan");
    /* Nothing changed: the same gradient as a fresh estimator with the options. */
    grad_with(dbm, UCD_, opts_dbm, e, ddata, 2, 3, g0);
    grad_with(dbm, UCD_, opts_dbm, NULL, ddata, 2, 3, g1);
    ck_assert(memcmp(g0, g1, (size_t)npd * sizeof *g0) == 0);
    /* Kind-specific values. */
    BAD_INT(EBM_ESTIMATOR_POSITIVE, EBM_POSITIVE_EXACT, EBM_EUNSUPPORTED, "EXACT", "");
    ebm_estimator_destroy(e);
    ck_assert_int_eq(ebm_estimator_create(&e, dbm, EBM_ESTIMATOR_CD), EBM_OK);
    BAD_INT(EBM_ESTIMATOR_K, 0, EBM_EVALUE, "EBM_ESTIMATOR_K", "0");
    BAD_INT(EBM_ESTIMATOR_POSITIVE, EBM_POSITIVE_COUPLED, EBM_EUNSUPPORTED, "COUPLED",
            "EBM_ESTIMATOR_CD");
    ebm_estimator_destroy(e);
    ck_assert_int_eq(ebm_estimator_create(&e, dbm, EBM_ESTIMATOR_PCD), EBM_OK);
    BAD_INT(EBM_ESTIMATOR_POSITIVE, EBM_POSITIVE_COUPLED, EBM_EUNSUPPORTED, "COUPLED", "PCD");
    ebm_estimator_destroy(e);

    /* GRBM_CD with its options, then bad ones. */
    ck_assert_int_eq(ebm_estimator_create(&e, grbm, EBM_ESTIMATOR_GRBM_CD), EBM_OK);
    opts_grbm(e);
    BAD_INT(EBM_ESTIMATOR_SAMPLER, EBM_SAMPLER_MH_UNIFORM, EBM_EVALUE, "EBM_ESTIMATOR_SAMPLER", "1");
    BAD_INT(EBM_ESTIMATOR_SAMPLER, 4, EBM_EVALUE, "EBM_ESTIMATOR_SAMPLER", "4");
    BAD_INT(EBM_ESTIMATOR_K, 0, EBM_EVALUE, "EBM_ESTIMATOR_K", "0");
    BAD_INT(EBM_ESTIMATOR_POSITIVE, EBM_POSITIVE_COUPLED, EBM_EUNSUPPORTED, "COUPLED", "GRBM_CD");
    BAD_INT(SO + EBM_SAMPLER_ADJUST_AFTER, -2, EBM_EVALUE, "ADJUST_AFTER", "-2");
    BAD_INT(SO + EBM_SAMPLER_COSINE, 2, EBM_EVALUE, "COSINE", "2");
    BAD_INT(SO + EBM_SAMPLER_CLAMP_LAYERS, 2, EBM_EVALUE, "CLAMP_LAYERS", "cannot");
    BAD_DBL(SO + EBM_SAMPLER_STEP_SIZE, 0.0, EBM_EVALUE, "STEP_SIZE", "0");
    BAD_DBL(SO + EBM_SAMPLER_STEP_SIZE, INFINITY, EBM_EVALUE, "STEP_SIZE", "inf");
    grad_with(grbm, EBM_ESTIMATOR_GRBM_CD, opts_grbm, e, gdata, 2, 3, g0);
    grad_with(grbm, EBM_ESTIMATOR_GRBM_CD, opts_grbm, NULL, gdata, 2, 3, g1);
    ck_assert(memcmp(g0, g1, (size_t)npg * sizeof *g0) == 0);
    ebm_estimator_destroy(e);
#undef BAD_INT
#undef BAD_DBL
    ebm_model_destroy(dbm);
    ebm_model_destroy(grbm);
}
END_TEST

/* A failing gradient call: its code and message, and nothing changed (grad
 * filled with a sentinel and checksummed, generator state, PCD chains). */
typedef struct guard {
    float *grad;
    int64_t np;
    uint64_t sum;
    uint64_t rng_state[EBM_RNG_STATE_WORDS];
    const ebm_rng_t *rng;
} guard;

static void guard_arm(guard *gd, float *grad, int64_t np, const ebm_rng_t *rng)
{
    gd->grad = grad;
    gd->np = np;
    gd->rng = rng;
    for (int64_t i = 0; i < np; i++) {
        grad[i] = SENTINEL + (float)i;
    }
    gd->sum = t_checksum(grad, (size_t)np * sizeof *grad);
    ck_assert_int_eq(ebm_rng_get_state(rng, gd->rng_state), EBM_OK);
}

static void guard_check(const guard *gd, const char *what)
{
    ck_assert_msg(t_checksum(gd->grad, (size_t)gd->np * sizeof *gd->grad) == gd->sum,
                  "%s: grad changed", what);
    uint64_t now[EBM_RNG_STATE_WORDS];
    ck_assert_int_eq(ebm_rng_get_state(gd->rng, now), EBM_OK);
    ck_assert_msg(memcmp(now, gd->rng_state, sizeof now) == 0, "%s: rng changed", what);
}

#define BAD_GRAD(e, rng, n, data, ldd, code, n1, n2)                                               \
    do {                                                                                           \
        guard gd_;                                                                                 \
        guard_arm(&gd_, gbuf, np, (rng) != NULL ? (rng) : good_rng);                               \
        EXPECT_FAIL(ebm_estimator_gradient((e), (rng), (n), (data), (ldd), gbuf), (code),          \
                    ebm_estimator_errmsg(e), (n1), (n2));                                          \
        guard_check(&gd_, #n1);                                                                    \
    } while (0)

START_TEST(test_bad_gradient)
{
    static const struct {
        int nl;
        int64_t sizes[3];
        int vis, hid, kind;
    } models[4] = {{2, {3, 2, 0}, B_, B_, EBM_ESTIMATOR_PCD},
                   {3, {3, 3, 2}, S_, S_, LMI_},
                   {2, {3, 2, 0}, G_, B_, UCD_},
                   {2, {3, 2, 0}, G_, S_, EBM_ESTIMATOR_GRBM_CD}};
    for (int t = 0; t < 4; t++) {
        ebm_model_t *m = t_model(models[t].nl, models[t].sizes, models[t].vis, models[t].hid);
        t_random_params(m, 820 + (uint64_t)t, 1.0);
        const int64_t np = ebm_model_param_count(m), w = ebm_model_state_width(m);
        const int vis = models[t].vis;
        float data[4 * 4];
        make_rows(m, 821, 2, data);
        float gbuf[64], gref[64];
        ebm_rng_t *good_rng = t_rng(822, 0);
        ebm_estimator_t *e = NULL;
        ck_assert_int_eq(ebm_estimator_create(&e, m, models[t].kind), EBM_OK);

        ck_assert_int_eq(ebm_estimator_gradient(NULL, good_rng, 2, data, 3, gbuf), EBM_ENULL);
        BAD_GRAD(e, NULL, 2, data, 3, EBM_ENULL, "rng", "NULL");
        BAD_GRAD(e, good_rng, 2, NULL, 3, EBM_ENULL, "data", "NULL");
        {
            guard gd;
            guard_arm(&gd, gbuf, np, good_rng);
            EXPECT_FAIL(ebm_estimator_gradient(e, good_rng, 2, data, 3, NULL), EBM_ENULL,
                        ebm_estimator_errmsg(e), "grad", "NULL");
            guard_check(&gd, "grad NULL");
        }
        BAD_GRAD(e, good_rng, 0, data, 3, EBM_ESHAPE, "n is 0", "");
        BAD_GRAD(e, good_rng, -3, data, 3, EBM_ESHAPE, "n is -3", "");
        BAD_GRAD(e, good_rng, 2, data, 2, EBM_ESHAPE, "data", "2");
        BAD_GRAD(e, good_rng, 2, data, -1, EBM_ESHAPE, "data", "-1");
        /* Invalid values in the second row (row 1, unit 2). */
        float bad[6];
        memcpy(bad, data, sizeof bad);
        if (vis == B_) {
            bad[5] = 0.5f;
            BAD_GRAD(e, good_rng, 2, bad, 3, EBM_EVALUE, "row 1", "0.5");
            bad[5] = -1.0f;
            BAD_GRAD(e, good_rng, 2, bad, 3, EBM_EVALUE, "data", "-1");
        } else if (vis == S_) {
            bad[5] = 0.0f;
            BAD_GRAD(e, good_rng, 2, bad, 3, EBM_EVALUE, "row 1", "0");
            bad[5] = 0.5f;
            BAD_GRAD(e, good_rng, 2, bad, 3, EBM_EVALUE, "data", "0.5");
        } else {
            bad[5] = NAN;
            BAD_GRAD(e, good_rng, 2, bad, 3, EBM_EVALUE, "row 1", "nan");
            bad[5] = -INFINITY;
            BAD_GRAD(e, good_rng, 2, bad, 3, EBM_EVALUE, "data", "inf");
        }
        /* A stride larger than the row skips the padding: garbage there is fine. */
        float padded[8] = {data[0], data[1], data[2], NAN, data[3], data[4], data[5], NAN};
        /* Rows past stream row 2^32 - 1. */
        ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_ROW_OFFSET, UINT32_MAX), EBM_OK);
        BAD_GRAD(e, good_rng, 2, data, 3, EBM_ESHAPE, "EBM_ESTIMATOR_ROW_OFFSET", "4294967295");
        ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_ROW_OFFSET, 0), EBM_OK);
        if (models[t].kind == EBM_ESTIMATOR_PCD || models[t].kind == EBM_ESTIMATOR_GRBM_CD) {
            ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_CHAIN_OFFSET, UINT32_MAX),
                             EBM_OK);
            BAD_GRAD(e, good_rng, 2, data, 3, EBM_ESHAPE, "EBM_ESTIMATOR_CHAIN_OFFSET",
                     "4294967295");
            ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_CHAIN_OFFSET, 0), EBM_OK);
        }
        ck_assert_int_eq(ebm_estimator_num_chains(e), 0); /* failures made no PCD chains */
        grad_with(m, models[t].kind, NULL, e, padded, 2, 4, gbuf);
        {
            /* ... and equals the packed batch on a fresh estimator. */
            ebm_estimator_t *f = NULL;
            ck_assert_int_eq(ebm_estimator_create(&f, m, models[t].kind), EBM_OK);
            ebm_rng_t *rng = t_rng(801, 1);
            ck_assert_int_eq(ebm_estimator_gradient(f, rng, 2, data, 3, gref), EBM_OK);
            ck_assert(memcmp(gbuf, gref, (size_t)np * sizeof *gbuf) == 0);
            ebm_rng_destroy(rng);
            ebm_estimator_destroy(f);
        }
        /* PCD: a failing call leaves the chains as they were. */
        if (models[t].kind == EBM_ESTIMATOR_PCD) {
            float c0[8 * 8], c1[8 * 8];
            int64_t nc = ebm_estimator_num_chains(e);
            ck_assert_int_eq(nc, 2);
            ck_assert_int_eq(ebm_estimator_get_chains(e, c0, w), EBM_OK);
            bad[5] = 0.5f;
            BAD_GRAD(e, good_rng, 2, bad, 3, EBM_EVALUE, "row 1", "0.5");
            ck_assert_int_eq(ebm_estimator_num_chains(e), nc);
            ck_assert_int_eq(ebm_estimator_get_chains(e, c1, w), EBM_OK);
            ck_assert(memcmp(c0, c1, (size_t)(nc * w) * sizeof *c0) == 0);
        }
        ebm_estimator_destroy(e);
        ebm_rng_destroy(good_rng);
        ebm_model_destroy(m);
    }
}
END_TEST

/* A non-finite estimate is reported (EBM_EVALUE) and never returned: a GRBM
 * with sigma^2 = exp(-30) and data of 1e30 overflows v / sigma^2 in float
 * (the first Gibbs sweep's input of h). */
START_TEST(test_bad_nonfinite)
{
    const int64_t sizes[2] = {2, 2};
    ebm_model_t *m = t_model(2, sizes, G_, B_);
    t_random_params(m, 830, 1.0);
    int64_t lv;
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &lv, NULL, NULL), EBM_OK);
    set_param(m, lv, -30.0f);
    set_param(m, lv + 1, -30.0f);
    const int64_t np = ebm_model_param_count(m);
    const float data[2] = {1e30f, -1e30f};
    float gbuf[32];
    ebm_rng_t *good_rng = t_rng(831, 0);
    const int kinds[2] = {UCD_, EBM_ESTIMATOR_GRBM_CD};
    for (int t = 0; t < 2; t++) {
        ebm_estimator_t *e = make_est(m, kinds[t], -1, -1, -1, -1);
        BAD_GRAD(e, good_rng, 1, data, 2, EBM_EVALUE, "not finite", "changed");
        ebm_estimator_destroy(e);
    }
    ebm_rng_destroy(good_rng);
    ebm_model_destroy(m);
}
END_TEST

START_TEST(test_bad_chains)
{
    const int64_t sizes[2] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, B_, B_);
    t_random_params(m, 840, 1.0);
    const int64_t w = 5;
    ebm_estimator_t *e = make_est(m, EBM_ESTIMATOR_PCD, -1, -1, -1, -1);
    float good[3 * 5] = {1, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0};
    float out[3 * 5 + 1], out2[3 * 5];
    ck_assert_int_eq(ebm_estimator_get_chains(NULL, out, w), EBM_ENULL);
    ck_assert_int_eq(ebm_estimator_set_chains(NULL, 3, good, w), EBM_ENULL);
    ck_assert_int_eq(ebm_estimator_set_chains(e, 3, good, w), EBM_OK);
    uint64_t sum = t_checksum(good, sizeof good);
    EXPECT_FAIL(ebm_estimator_set_chains(e, -1, good, w), EBM_ESHAPE, ebm_estimator_errmsg(e),
                "n is -1", "");
    EXPECT_FAIL(ebm_estimator_set_chains(e, 2, NULL, w), EBM_ENULL, ebm_estimator_errmsg(e),
                "chains", "NULL");
    EXPECT_FAIL(ebm_estimator_set_chains(e, 2, good, 4), EBM_ESHAPE, ebm_estimator_errmsg(e),
                "chains", "4");
    float bad[3 * 5];
    memcpy(bad, good, sizeof bad);
    bad[2 * 5 + 4] = 0.5f;
    EXPECT_FAIL(ebm_estimator_set_chains(e, 3, bad, w), EBM_EVALUE, ebm_estimator_errmsg(e),
                "row 2", "0.5");
    bad[2 * 5 + 4] = -1.0f; /* a spin value in a binary hidden layer */
    EXPECT_FAIL(ebm_estimator_set_chains(e, 3, bad, w), EBM_EVALUE, ebm_estimator_errmsg(e),
                "chains", "-1");
    EXPECT_FAIL(ebm_estimator_get_chains(e, NULL, w), EBM_ENULL, ebm_estimator_errmsg(e), "out",
                "NULL");
    EXPECT_FAIL(ebm_estimator_get_chains(e, out, 4), EBM_ESHAPE, ebm_estimator_errmsg(e), "out",
                "4");
    /* The chains are those set last; `good` itself was not written. */
    ck_assert_int_eq(ebm_estimator_num_chains(e), 3);
    ck_assert_int_eq(ebm_estimator_get_chains(e, out2, w), EBM_OK);
    ck_assert(memcmp(out2, good, sizeof good) == 0);
    ck_assert(t_checksum(good, sizeof good) == sum);
    ebm_estimator_destroy(e);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */

/* Fast paths give the plain paths' bytes: GRBM modified CD with
 * Gibbs-Langevin reuses the step's input of h for f (unadjusted: every row
 * takes its proposal; adjusted: rejections send it back to the plain path;
 * binary and spin hidden units), so do PCD and CD-2 with h summed out after
 * a Gibbs step (binary and spin RBMs), and UCD-LMI (a spin DBM) for the
 * term of f(x_0) that sums out layer 1, whose MH steps also use float
 * energies with a certified bound, the first one's E(x_0) from the input
 * of layer 1 that the Gibbs sweep left. */
START_TEST(test_fast_paths_equal_plain)
{
    char err[256];
    for (int c = 0; c < 6; c++) {
        ebm_model_t *m = NULL;
        const int64_t grbm[2] = {20, 30}, dbm[3] = {12, 10, 8}, rbm[2] = {12, 9};
        const int is_grbm = c < 4 && c != 2; /* case 3: spin hidden units */
        const int is_rbm = c >= 4;           /* 4: PCD, binary; 5: CD-2, spin */
        const int units = c == 4 ? EBM_UNITS_BINARY : EBM_UNITS_SPIN;
        ck_assert_int_eq(is_grbm  ? ebm_model_create(&m, 2, grbm, EBM_UNITS_GAUSSIAN,
                                                     c == 3 ? EBM_UNITS_SPIN : EBM_UNITS_BINARY,
                                                     err, sizeof err)
                         : is_rbm ? ebm_model_create(&m, 2, rbm, units, units, err, sizeof err)
                                  : ebm_model_create(&m, 3, dbm, EBM_UNITS_SPIN, EBM_UNITS_SPIN,
                                                     err, sizeof err),
                         EBM_OK);
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 61 + (uint64_t)c, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 0.3), EBM_OK);
        const int64_t n = 300, n0 = is_grbm ? 20 : 12, np = ebm_model_param_count(m);
        float *data = malloc((size_t)(n * n0) * sizeof *data);
        float *g[2] = {malloc((size_t)np * sizeof(float)), malloc((size_t)np * sizeof(float))};
        ck_assert_int_eq(ebm_rng_uniform(rng, n * n0, data), EBM_OK);
        const float lo = c == 4 ? 0.0f : -1.0f;
        for (int64_t i = 0; i < n * n0; i++) {
            data[i] = is_grbm ? 4.0f * data[i] - 2.0f : (data[i] < 0.5f ? lo : 1.0f);
        }
        for (int plain = 0; plain < 2; plain++) {
            ebm_estimator_t *e = NULL;
            const int kind = is_grbm ? EBM_ESTIMATOR_GRBM_CD
                             : c == 4 ? EBM_ESTIMATOR_PCD
                             : c == 5 ? EBM_ESTIMATOR_CD
                                      : EBM_ESTIMATOR_UCD_LMI;
            ck_assert_int_eq(ebm_estimator_create(&e, m, kind), EBM_OK);
            if (is_rbm) {
                ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_MARGINALIZE,
                                                       EBM_MARGINALIZE_ODD), EBM_OK);
                ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_K, c == 5 ? 2 : 1),
                                 EBM_OK);
            } else if (is_grbm) {
                ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_SAMPLER,
                                                       EBM_SAMPLER_GIBBS_LANGEVIN), EBM_OK);
                ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_SAMPLER_OPTION +
                                                              EBM_SAMPLER_ADJUST_AFTER,
                                                       c == 1 ? 3 : -1), EBM_OK);
            } else {
                ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_MAX_STEPS, 50), EBM_OK);
            }
            ebm__estimator_set_plain(e, plain);
            ebm_rng_t *r = NULL;
            ck_assert_int_eq(ebm_rng_create(&r, 5, 5), EBM_OK);
            for (int call = 0; call < 3; call++) {
                ck_assert_int_eq(ebm_estimator_gradient(e, r, n, data, n0, g[plain]), EBM_OK);
            }
            if (c == 1) {
                ck_assert_msg(ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_ACCEPT_RATE) < 1.0,
                              "adjusted case: no proposal was rejected");
            }
            ebm_rng_destroy(r);
            ebm_estimator_destroy(e);
        }
        ck_assert_msg(memcmp(g[0], g[1], (size_t)np * sizeof(float)) == 0,
                      "case %d: the fast path's gradient differs from the plain path's", c);
        free(data);
        free(g[0]);
        free(g[1]);
        ebm_rng_destroy(rng);
        ebm_model_destroy(m);
    }
}
END_TEST

Suite *ebm_estimator_suite(void)
{
    /* Statistical tests: a few seconds natively; generous for valgrind. */
    const t_test tests[] = {
        {"reference", test_exact_reference, 0, 300, NULL, NULL},
        {"unbiased", test_unbiased, N_UCFG, 1800, NULL, NULL},
        {"twins", test_twin_cd1, 0, 1800, NULL, NULL},
        {"twins", test_twin_pcd1, 0, 1800, NULL, NULL},
        {"twins", test_twin_mean_field, 0, 1800, NULL, NULL},
        {"twins", test_twin_flipped_bias, 0, 1800, NULL, NULL},
        {"tempering", test_pt_exact_chains, 0, 1800, NULL, NULL},
        {"tempering", test_pt_chains_and_ladder, 0, 300, NULL, NULL},
        {"variance", test_variance_ratio, 0, 1800, NULL, NULL},
        {"grbm_cd", test_grbm_cd_samplers, 0, 1800, NULL, NULL},
        {"grbm_cd", test_grbm_cd_converges, 0, 1800, NULL, NULL},
        {"stats", test_stats, 0, 300, NULL, NULL},
        {"determinism", test_determinism, (int)(sizeof DCFG / sizeof DCFG[0]), 300, NULL, NULL},
        {"determinism", test_row_independence, 0, 300, NULL, NULL},
        {"determinism", test_row_offset_splits_batch, (int)(sizeof DCFG / sizeof DCFG[0]), 300,
         NULL, NULL},
        {"determinism", test_growing_batches, 0, 300, NULL, NULL},
        {"chains", test_pcd_chains, 0, 300, NULL, NULL},
        {"fast paths", test_fast_paths_equal_plain, 0, 300, NULL, NULL},
        {"bad input", test_bad_create, 0, 300, NULL, NULL},
        {"bad input", test_bad_options, 0, 300, NULL, NULL},
        {"bad input", test_bad_gradient, 0, 300, NULL, NULL},
        {"bad input", test_bad_nonfinite, 0, 300, NULL, NULL},
        {"bad input", test_bad_chains, 0, 300, NULL, NULL},
    };
    return t_suite("estimator", tests, sizeof tests / sizeof tests[0]);
}
