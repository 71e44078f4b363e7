/*
 * The Langevin kernels of a GRBM (EBM_SAMPLER_LANGEVIN and
 * EBM_SAMPLER_GIBBS_LANGEVIN, Liao et al. 2022, Algs. 1 and 2; include/ebm.h,
 * "Samplers and coupled chains"; tests/README.md, classes 1, 3 and 7)
 * against the exact distribution of a GRBM with 3 visible and 2 hidden
 * units (ref_langevin.c): its visible density is a mixture of four
 * Gaussians, so the moments of v, of (v, h) and the law of h are known
 * exactly.
 *
 * Statistical tests start many independent chains (tens of thousands of
 * rows) from exact draws of p(v, h), made by ref_langevin.c with the test's
 * own generator, and run a few steps: a kernel that leaves p invariant keeps
 * them exact draws, so no burn-in is needed and the rows are independent.
 * Each test fails a correct kernel with probability about 1e-6: the z
 * limits are Bonferroni-corrected two-sided normal quantiles (about 5.3
 * sigma for 10 quantities), the chi-square limit the matching quantile
 * with 3 degrees of freedom. Each has a broken twin that must fail.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tests.h"
#include "ref.h"
#include "testing.h" /* ebm__sampler_set_twin_density, ebm__sampler_set_plain */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NV REF_GRBM_NV           /* visible units */
#define NH REF_GRBM_NH           /* hidden units */
#define WIDTH REF_GRBM_WIDTH     /* state width */
#define NSTATES REF_GRBM_NSTATES /* hidden configurations */
#define FAIL_P 1e-6 /* false-failure probability of each statistical test */

/* The kernels' options (the exact moments of the model, its exact draws
 * and the closed-form moments of K Langevin steps are in ref_langevin.c). */
typedef ref_langevin_config config;

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */
/* ------------------------------------------------------------------------ */

/*
 * z-scores of the visible moments of the rows of x against the exact ones:
 * the 3 means (standard error from the exact variance), the 6 covariances
 * about the exact mean; with joint, the 6 cross moments E[v_i h_j], and the
 * chi-square of the 4 hidden states (3 degrees of freedom) in *chi2.
 */
static void moment_scores(const ref_grbm *g, int64_t n, const float *x, int64_t ldx, int joint,
                          ref_zlist *zl, double *chi2)
{
    double *q = malloc((size_t)n * sizeof *q);
    ck_assert_ptr_nonnull(q);
    zl->k = 0;
    for (int i = 0; i < NV; i++) {
        double sum = 0.0;
        for (int64_t r = 0; r < n; r++) {
            sum += x[r * ldx + i];
        }
        ref_z_add(zl, (sum / (double)n - g->ev[i]) / sqrt(g->cov[i][i] / (double)n), "mean v", i,
                  -1);
    }
    for (int i = 0; i < NV; i++) {
        for (int k = i; k < NV; k++) {
            for (int64_t r = 0; r < n; r++) {
                q[r] = (x[r * ldx + i] - g->ev[i]) * (x[r * ldx + k] - g->ev[k]);
            }
            ref_z_add(zl, ref_z_of(q, n, g->cov[i][k]), "cov v", i, k);
        }
    }
    if (joint) {
        for (int i = 0; i < NV; i++) {
            for (int j = 0; j < NH; j++) {
                for (int64_t r = 0; r < n; r++) {
                    q[r] = (double)x[r * ldx + i] * x[r * ldx + NV + j];
                }
                ref_z_add(zl, ref_z_of(q, n, g->evh[i][j]), "E v h", i, j);
            }
        }
        int64_t count[NSTATES] = {0};
        for (int64_t r = 0; r < n; r++) {
            int s = (x[r * ldx + NV] > 0.5f ? 2 : 0) + (x[r * ldx + NV + 1] > 0.5f ? 1 : 0);
            count[s]++;
        }
        *chi2 = 0.0;
        for (int s = 0; s < NSTATES; s++) {
            double e = g->ph[s] * (double)n, d = (double)count[s] - e;
            *chi2 += d * d / e;
        }
    }
    free(q);
}

/* ------------------------------------------------------------------------ */
/* Running the kernels                                                      */
/* ------------------------------------------------------------------------ */

static ebm_sampler_t *new_sampler(const ebm_model_t *m, const config *c)
{
    ebm_sampler_t *s = NULL;
    ck_assert_int_eq(ebm_sampler_create(&s, m, c->kind), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_LANGEVIN_STEPS, c->steps), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_double(s, EBM_SAMPLER_STEP_SIZE, c->step_size), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_COSINE, c->cosine), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_ADJUST_AFTER, c->adjust_after), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_CLOSED_FORM, c->closed_form), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_SCALE_BY_VARIANCE, c->scale_by_variance),
                     EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_PRECONDITION, c->precondition), EBM_OK);
    return s;
}

/* `calls` steps of a fresh sampler on x (twin: with the broken twin's
 * Metropolis ratios, ebm__sampler_set_twin_density); returns the mean
 * accept rate and the smallest in *min_rate (may be NULL). */
static double run_sampler(const ebm_model_t *m, const config *c, int twin, uint64_t seed,
                          int calls, int64_t n, float *x, int64_t ldx, double *min_rate)
{
    ebm_sampler_t *s = new_sampler(m, c);
    ebm__sampler_set_twin_density(s, twin);
    ebm_rng_t *r = t_rng(seed, 0);
    double sum = 0.0, lo = 1.0;
    for (int t = 0; t < calls; t++) {
        int rc = ebm_sampler_step(s, r, n, x, ldx);
        ck_assert_msg(rc == EBM_OK, "step %d: %s", t, ebm_sampler_errmsg(s));
        double rate = ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE);
        ck_assert(rate >= 0.0 && rate <= 1.0);
        ck_assert(ebm_sampler_stat(s, EBM_STAT_ITERATION) == (double)(t + 1));
        sum += rate;
        lo = rate < lo ? rate : lo;
    }
    ebm_sampler_destroy(s);
    ebm_rng_destroy(r);
    if (min_rate != NULL) {
        *min_rate = lo;
    }
    return sum / calls;
}

/* run_sampler with the library's own Metropolis ratios. */
static double run(const ebm_model_t *m, const config *c, uint64_t seed, int calls, int64_t n,
                  float *x, int64_t ldx, double *min_rate)
{
    return run_sampler(m, c, 0, seed, calls, n, x, ldx, min_rate);
}

/* The broken twin of the preconditioned adjustment: c adjusted at every
 * step, with the plain proposal's density in its Metropolis ratios
 * (ebm__sampler_set_twin_density), `calls` calls from x0 into x; returns
 * the largest |z| of the moments (joint: of p(v, h)) and the chi-square. */
static double plain_density_twin(const ref_grbm *g, config c, uint64_t seed, int calls,
                                 int64_t n, const float *x0, float *x, int joint, double *chi2,
                                 char worst[32])
{
    ref_zlist zl;
    int arg;
    memcpy(x, x0, (size_t)(n * WIDTH) * sizeof *x);
    c.adjust_after = 0;
    run_sampler(g->m, &c, 1, seed, calls, n, x, WIDTH, NULL);
    moment_scores(g, n, x, WIDTH, joint, &zl, chi2);
    const double zmax = ref_z_max(&zl, &arg);
    snprintf(worst, 32, "%s", zl.name[arg]);
    return zmax;
}

/* Fraction of rows whose visible layer differs between a and b. */
static double moved_fraction(int64_t n, const float *a, const float *b, int64_t ldx)
{
    int64_t moved = 0;
    for (int64_t r = 0; r < n; r++) {
        moved += memcmp(a + r * ldx, b + r * ldx, NV * sizeof *a) != 0;
    }
    return (double)moved / (double)n;
}

static int64_t stat_rows(int64_t level1, int64_t level2)
{
    return t_level() >= 2 ? level2 : level1;
}

/* ------------------------------------------------------------------------ */
/* 1. MALA keeps p(v)                                                       */
/* ------------------------------------------------------------------------ */

/*
 * LANGEVIN with adjust_after 0 (every step adjusted), a constant step of
 * 0.8 (alpha / sigma^2 from 0.40 to 1.08), 3 steps per call, 4 calls, from
 * 20,000 exact draws: the 3 means and 6 covariances stay within the
 * Bonferroni limit for 9 quantities (5.3 sigma; the largest |z| over 9
 * seeds was 3.1). Broken twin: the same run without the adjustment, whose
 * inflated variances give a largest |z| of about 14, must exceed it; and,
 * preconditioned, the adjustment with the plain proposal's density in its
 * ratio (11.5 to 15.6 over the 9 seeds). Loop: {binary, spin hidden units}
 * x {plain, preconditioned by diag(sigma^2): every unit's alpha / sigma^2
 * is 0.8}.
 */
START_TEST(mala_keeps_marginal)
{
    ref_grbm g;
    ref_grbm_setup(&g, (_i & 1) == 0 ? EBM_UNITS_BINARY : EBM_UNITS_SPIN);
    int64_t n = stat_rows(20000, 200000);
    float *x0 = t_floats(n * WIDTH), *x = t_floats(n * WIDTH);
    ref_grbm_draws(&g, 1001 + (uint64_t)_i, n, x0, WIDTH);
    config c = {EBM_SAMPLER_LANGEVIN, 3, 0.8, 0, 0, 1, 0, _i >> 1};
    ref_zlist zl;
    double chi2, lo;
    int arg;
    const double limit = ref_z_limit(FAIL_P / 9);

    memcpy(x, x0, (size_t)(n * WIDTH) * sizeof *x);
    double rate = run(g.m, &c, 77, 4, n, x, WIDTH, &lo);
    double moved = moved_fraction(n, x, x0, WIDTH);
    int64_t h_changed = 0;
    for (int64_t r = 0; r < n; r++) {
        h_changed += memcmp(x + r * WIDTH + NV, x0 + r * WIDTH + NV, NH * sizeof *x) != 0;
    }
    moment_scores(&g, n, x, WIDTH, 0, &zl, &chi2);
    double zmax = ref_z_max(&zl, &arg);
    if (t_verbose()) {
        printf("mala[%d]: accept %.3f (min %.3f), moved %.3f, max |z| %.2f (%s), limit %.2f\n", _i,
               rate, lo, moved, zmax, zl.name[arg], limit);
    }
    ck_assert_int_eq(h_changed, 0);
    ck_assert_msg(lo > 0.2 && lo < 1.0, "accept rate %g", lo);
    ck_assert_msg(moved > 0.5, "only %g of the rows moved", moved);
    ck_assert_msg(zmax < limit, "MALA: |z| = %g for %s (limit %g)", zmax, zl.name[arg], limit);

    /* Broken twin: unadjusted Langevin at the same step. */
    memcpy(x, x0, (size_t)(n * WIDTH) * sizeof *x);
    c.adjust_after = -1;
    rate = run(g.m, &c, 77, 4, n, x, WIDTH, NULL);
    ck_assert(rate == 1.0);
    moment_scores(&g, n, x, WIDTH, 0, &zl, &chi2);
    zmax = ref_z_max(&zl, &arg);
    if (t_verbose()) {
        printf("mala[%d] twin (unadjusted): max |z| %.2f (%s)\n", _i, zmax, zl.name[arg]);
    }
    ck_assert_msg(zmax > limit, "broken twin passed: max |z| %g", zmax);
    if (c.precondition) {
        /* Broken twin of the preconditioned adjustment: the plain
         * proposal's density in the ratio. */
        char worst[32];
        zmax = plain_density_twin(&g, c, 77, 4, n, x0, x, 0, &chi2, worst);
        if (t_verbose()) {
            printf("mala[%d] twin (plain density): max |z| %.2f (%s)\n", _i, zmax, worst);
        }
        ck_assert_msg(zmax > limit, "broken twin (plain density) passed: max |z| %g", zmax);
    }

    free(x0);
    free(x);
    ebm_model_destroy(g.m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 2. Unadjusted Langevin: the bias shrinks with the step                   */
/* ------------------------------------------------------------------------ */

/* Mean of ||v||^2 minus its exact value, and its standard error. */
static void second_moment_error(const ref_grbm *g, int64_t n, const float *x, double *err,
                                double *se)
{
    double *q = malloc((size_t)n * sizeof *q);
    ck_assert_ptr_nonnull(q);
    for (int64_t r = 0; r < n; r++) {
        q[r] = 0.0;
        for (int i = 0; i < NV; i++) {
            q[r] += (double)x[r * WIDTH + i] * x[r * WIDTH + i];
        }
    }
    double mean;
    ref_mean_and_se(q, n, &mean, se);
    *err = mean - g->ev2;
    free(q);
}

/*
 * Unadjusted LANGEVIN, constant steps alpha = 0.6 and alpha / 4, 20 steps
 * from 80,000 fresh exact draws each: the error e of E||v||^2 is
 * significant at alpha and |e| drops significantly at alpha / 4 (both at
 * the Bonferroni limit for 2 comparisons, 5.0 sigma). The expected z-scores
 * are about 20 and 12, so a correct kernel misses either by chance with
 * probability far below 1e-6. Broken twin: alpha against alpha itself (fresh
 * draws and seed) shows no significant drop.
 */
static void ula_error(const ref_grbm *g, uint64_t draw_seed, int64_t n, double step, uint64_t seed,
                      double *err, double *se)
{
    float *x = t_floats(n * WIDTH);
    ref_grbm_draws(g, draw_seed, n, x, WIDTH);
    config c = {EBM_SAMPLER_LANGEVIN, 20, step, 0, -1, 1, 0, 0};
    run(g->m, &c, seed, 1, n, x, WIDTH, NULL);
    second_moment_error(g, n, x, err, se);
    free(x);
}

START_TEST(ula_bias_shrinks)
{
    ref_grbm g;
    ref_grbm_setup(&g, EBM_UNITS_BINARY);
    int64_t n = stat_rows(80000, 800000);
    const double limit = ref_z_limit(FAIL_P / 2), alpha = 0.6;
    double e1, s1, e2, s2, e3, s3;
    ula_error(&g, 2002, n, alpha, 5, &e1, &s1);
    ula_error(&g, 2003, n, alpha / 4, 6, &e2, &s2);
    double z_bias = e1 / s1, z_drop = (fabs(e1) - fabs(e2)) / sqrt(s1 * s1 + s2 * s2);
    if (t_verbose()) {
        printf("ula: E||v||^2 error %.4f +- %.4f at %.2f, %.4f +- %.4f at %.2f (ratio %.2f); "
               "z bias %.1f, z drop %.1f, limit %.2f\n",
               e1, s1, alpha, e2, s2, alpha / 4, e1 / e2, z_bias, z_drop, limit);
    }
    ck_assert_msg(z_bias > limit, "no significant bias at alpha: z %g", z_bias);
    ck_assert_msg(z_drop > limit, "the bias did not drop: z %g", z_drop);

    /* Broken twin: the same step twice. */
    ula_error(&g, 2004, n, alpha, 7, &e3, &s3);
    double z_twin = (fabs(e1) - fabs(e3)) / sqrt(s1 * s1 + s3 * s3);
    if (t_verbose()) {
        printf("ula twin (alpha vs alpha): z drop %.2f\n", z_twin);
    }
    ck_assert_msg(z_twin < limit, "broken twin passed: z %g", z_twin);
    ebm_model_destroy(g.m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 3. Adjusted Gibbs-Langevin keeps p(v, h)                                 */
/* ------------------------------------------------------------------------ */

/*
 * GIBBS_LANGEVIN with adjust_after 0, K = 10 inner steps of alpha0 = 0.9
 * (cosine schedule on or off), 3 calls from 80,000 exact draws of p(v, h):
 * 3 means, 6 covariances, 6 cross moments E[v_i h_j] and the chi-square of
 * the 4 hidden states, 16 comparisons in all (z limit 5.4 sigma, chi-square
 * limit 36.4, the 1 - 1e-6/16 quantile). Broken twin: the same run
 * unadjusted must exceed them (its largest |z| is about 16 with the cosine
 * schedule, whose last small steps hide much of the bias, and about 55
 * without); preconditioned, so must the adjustment with the plain
 * proposal's density in its ratio (25.6 to 33.8 over 9 seeds). Loop:
 * {binary, spin} x {constant, cosine} x {plain, preconditioned}.
 */
START_TEST(gibbs_langevin_keeps_joint)
{
    ref_grbm g;
    ref_grbm_setup(&g, (_i & 1) ? EBM_UNITS_SPIN : EBM_UNITS_BINARY);
    int cosine = _i >> 1 & 1;
    int64_t n = stat_rows(80000, 800000);
    float *x0 = t_floats(n * WIDTH), *x = t_floats(n * WIDTH);
    ref_grbm_draws(&g, 3003 + (uint64_t)_i, n, x0, WIDTH);
    config c = {EBM_SAMPLER_GIBBS_LANGEVIN, 10, 0.9, cosine, 0, 1, 0, _i >> 2};
    const double limit = ref_z_limit(FAIL_P / 16), chi_limit = ref_chi2_3_limit(FAIL_P / 16);
    ref_zlist zl;
    double chi2, lo;
    int arg;

    memcpy(x, x0, (size_t)(n * WIDTH) * sizeof *x);
    double rate = run(g.m, &c, 88, 3, n, x, WIDTH, &lo);
    double moved = moved_fraction(n, x, x0, WIDTH);
    moment_scores(&g, n, x, WIDTH, 1, &zl, &chi2);
    double zmax = ref_z_max(&zl, &arg);
    if (t_verbose()) {
        printf("gibbs-langevin[%d]: accept %.3f (min %.3f), moved %.3f, max |z| %.2f (%s), "
               "chi2 %.2f; limits %.2f, %.2f\n",
               _i, rate, lo, moved, zmax, zl.name[arg], chi2, limit, chi_limit);
    }
    ck_assert_msg(lo > 0.1 && lo < 1.0, "accept rate %g", lo);
    ck_assert_msg(moved > 0.25, "only %g of the rows moved", moved);
    ck_assert_msg(zmax < limit, "Gibbs-Langevin: |z| = %g for %s (limit %g)", zmax, zl.name[arg],
                  limit);
    ck_assert_msg(chi2 < chi_limit, "Gibbs-Langevin: chi-square %g (limit %g)", chi2, chi_limit);

    memcpy(x, x0, (size_t)(n * WIDTH) * sizeof *x);
    c.adjust_after = -1;
    rate = run(g.m, &c, 88, 3, n, x, WIDTH, NULL);
    ck_assert(rate == 1.0);
    moment_scores(&g, n, x, WIDTH, 1, &zl, &chi2);
    zmax = ref_z_max(&zl, &arg);
    if (t_verbose()) {
        printf("gibbs-langevin[%d] twin (unadjusted): max |z| %.2f (%s), chi2 %.2f\n", _i, zmax,
               zl.name[arg], chi2);
    }
    ck_assert_msg(zmax > limit || chi2 > chi_limit, "broken twin passed: |z| %g, chi-square %g",
                  zmax, chi2);
    if (c.precondition && !c.cosine) {
        /* Broken twin of the preconditioned adjustment: eq. 12 with the
         * plain closed form's density (|z| about 30; under the cosine
         * schedule, whose small last steps hide it, only about 5.5). */
        char worst[32];
        zmax = plain_density_twin(&g, c, 88, 3, n, x0, x, 1, &chi2, worst);
        if (t_verbose()) {
            printf("gibbs-langevin[%d] twin (plain density): max |z| %.2f (%s), chi2 %.2f\n", _i,
                   zmax, worst, chi2);
        }
        ck_assert_msg(zmax > limit || chi2 > chi_limit,
                      "broken twin (plain density) passed: |z| %g, chi-square %g", zmax, chi2);
    }

    free(x0);
    free(x);
    ebm_model_destroy(g.m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 4. Closed form (eq. 11) against step by step                             */
/* ------------------------------------------------------------------------ */

/* Sample mean and variance (about the sample mean) of column i. */
static void column_moments(int64_t n, const float *x, int i, double *mean, double *var)
{
    double sum = 0.0, sum2 = 0.0;
    for (int64_t r = 0; r < n; r++) {
        sum += x[r * WIDTH + i];
    }
    *mean = sum / (double)n;
    for (int64_t r = 0; r < n; r++) {
        double d = x[r * WIDTH + i] - *mean;
        sum2 += d * d;
    }
    *var = sum2 / (double)(n - 1);
}

/*
 * From a fixed (v, h) in every one of 100,000 rows, one unadjusted
 * GIBBS_LANGEVIN step with K = 10, by the closed form and step by step, for
 * constant steps, the cosine schedule, the cosine schedule with
 * scale_by_variance, and constant and cosine preconditioned steps. Per path
 * and unit, the mean of v' is compared with the
 * recursion's mean (standard error sqrt(s/N)) and the variance about it
 * with s (standard error s sqrt(2/N), exact for a Gaussian); the two paths
 * are compared with each other (two-sample z of means and variances). 18
 * comparisons per schedule, 90 in all: z limit 5.7 sigma (the largest |z|
 * over 9 seeds was 2.6). Broken twin: the variance with beta_k for
 * beta_k^2 must fail for every schedule (its largest |z| was 85.9 to 94.3).
 */
START_TEST(closed_form_matches_steps)
{
    ref_grbm g;
    ref_grbm_setup(&g, EBM_UNITS_BINARY);
    int64_t n = stat_rows(100000, 1000000);
    float *x = t_floats(n * WIDTH), *y = t_floats(n * WIDTH);
    const double v0[NV] = {1.0, -0.5, 2.0};
    const float h0[NH] = {1.0f, 0.0f};
    double cm[NV];
    for (int i = 0; i < NV; i++) {
        cm[i] = g.mu[i] + g.w[i][0] * h0[0] + g.w[i][1] * h0[1];
    }
    enum { SCHEDULES = 5 };
    const double limit = ref_z_limit(FAIL_P / (18 * SCHEDULES));
    const config schedules[SCHEDULES] = {
        {EBM_SAMPLER_GIBBS_LANGEVIN, 10, 0.3, 0, -1, 1, 0, 0},
        {EBM_SAMPLER_GIBBS_LANGEVIN, 10, 0.5, 1, -1, 1, 0, 0},
        {EBM_SAMPLER_GIBBS_LANGEVIN, 10, 0.4, 1, -1, 1, 1, 0},
        {EBM_SAMPLER_GIBBS_LANGEVIN, 10, 0.3, 0, -1, 1, 0, 1},
        {EBM_SAMPLER_GIBBS_LANGEVIN, 10, 0.5, 1, -1, 1, 0, 1},
    };
    for (int sc = 0; sc < SCHEDULES; sc++) {
        ref_zlist zl = {0};
        double twin_max = 0.0;
        float *out[2] = {x, y};
        double mean[2][NV], var[2][NV], fm[NV], fv[NV], bm[NV], bv[NV];
        ref_langevin_moments(&g, &schedules[sc], v0, cm, 0, fm, fv);
        ref_langevin_moments(&g, &schedules[sc], v0, cm, 1, bm, bv);
        for (int path = 0; path < 2; path++) {
            config c = schedules[sc];
            c.closed_form = path == 0;
            for (int64_t r = 0; r < n; r++) {
                for (int i = 0; i < NV; i++) {
                    out[path][r * WIDTH + i] = (float)v0[i];
                }
                out[path][r * WIDTH + NV] = h0[0];
                out[path][r * WIDTH + NV + 1] = h0[1];
            }
            double rate = run(g.m, &c, 99 + (uint64_t)path, 1, n, out[path], WIDTH, NULL);
            ck_assert(rate == 1.0);
            for (int i = 0; i < NV; i++) {
                column_moments(n, out[path], i, &mean[path][i], &var[path][i]);
                /* The variance about the exact mean: unbiased for fv. */
                double ss = 0.0;
                for (int64_t r = 0; r < n; r++) {
                    double d = out[path][r * WIDTH + i] - fm[i];
                    ss += d * d;
                }
                ss /= (double)n;
                ref_z_add(&zl, (mean[path][i] - fm[i]) / sqrt(fv[i] / (double)n), "mean path v",
                          path, i);
                ref_z_add(&zl, (ss - fv[i]) / (fv[i] * sqrt(2.0 / (double)n)), "var path v", path,
                          i);
                double tw = fabs(ss - bv[i]) / (bv[i] * sqrt(2.0 / (double)n));
                twin_max = tw > twin_max ? tw : twin_max;
            }
        }
        for (int i = 0; i < NV; i++) {
            ref_z_add(&zl, (mean[0][i] - mean[1][i]) / sqrt((var[0][i] + var[1][i]) / (double)n),
                      "paths mean v", i, -1);
            ref_z_add(&zl,
                      (var[0][i] - var[1][i]) /
                          sqrt(2.0 * (var[0][i] * var[0][i] + var[1][i] * var[1][i]) / (double)n),
                      "paths var v", i, -1);
        }
        int arg;
        double zmax = ref_z_max(&zl, &arg);
        if (t_verbose()) {
            printf("closed form[%d]: mean %.4f %.4f %.4f var %.4f %.4f %.4f; max |z| %.2f (%s), "
                   "twin max |z| %.1f, limit %.2f\n",
                   sc, fm[0], fm[1], fm[2], fv[0], fv[1], fv[2], zmax, zl.name[arg], twin_max,
                   limit);
        }
        ck_assert_msg(zmax < limit, "schedule %d: |z| = %g for %s (limit %g)", sc, zmax,
                      zl.name[arg], limit);
        ck_assert_msg(twin_max > limit, "schedule %d: broken twin passed (|z| %g)", sc, twin_max);
    }
    free(x);
    free(y);
    ebm_model_destroy(g.m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The drift, exactly                                                       */
/* ------------------------------------------------------------------------ */

/*
 * One unadjusted step with K = 1 and a constant step alpha moves v to
 * v - alpha g + sqrt(2 alpha) xi, with the same xi for the same seed. Two
 * runs with alpha1 = 0.5 and alpha2 = 0.125 give g exactly:
 *   g = (sqrt(2 alpha2) d1 - sqrt(2 alpha1) d2) / (alpha1 sqrt(2 alpha2) - alpha2 sqrt(2 alpha1)),
 * d = v - v'. LANGEVIN's g must be dF/dv with layer 1 summed out,
 * GIBBS_LANGEVIN's (closed form or not) dE/dv at the current h
 * (ebm_model_energy_grad_input with sum_out {1} and {}), on a 7x5 GRBM with
 * random parameters and a padded stride, so the GEMM layout is exercised.
 * Preconditioned (EBM_SAMPLER_PRECONDITION), unit i moves by alpha sigma_i^2
 * g_i with noise sqrt(2 alpha sigma_i^2) xi_i, and the same formula gives
 * sigma_i^2 g_i. Loop: binary, spin hidden units.
 */
START_TEST(drift_is_the_energy_gradient)
{
    const int64_t sizes[2] = {7, 5}, n = 40, ld = 15, n0 = 7;
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_GAUSSIAN,
                             _i == 0 ? EBM_UNITS_BINARY : EBM_UNITS_SPIN);
    t_random_params(m, 4242 + (uint64_t)_i, 0.5);
    float *x = t_floats(n * ld), *x1 = t_floats(n * ld), *x2 = t_floats(n * ld);
    float *grad = t_floats(n * n0);
    ebm_rng_t *r = t_rng(11, 0);
    ck_assert_int_eq(ebm_model_random_state(m, r, n, x, ld, NULL, 0), EBM_OK);
    ebm_rng_destroy(r);
    int64_t off;
    float *theta = t_floats(ebm_model_param_count(m));
    ebm_model_get_params(m, theta);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &off, NULL, NULL), EBM_OK);
    const double a1 = 0.5, a2 = 0.125, s1 = sqrt(2 * a1), s2 = sqrt(2 * a2);
    const config cs[3] = {{EBM_SAMPLER_LANGEVIN, 1, a1, 0, -1, 1, 0, 0},
                          {EBM_SAMPLER_GIBBS_LANGEVIN, 1, a1, 0, -1, 1, 0, 0},
                          {EBM_SAMPLER_GIBBS_LANGEVIN, 1, a1, 0, -1, 0, 0, 0}};
    for (int k = 0; k < 6; k++) {
        config c = cs[k % 3];
        c.precondition = k >= 3;
        memcpy(x1, x, (size_t)(n * ld) * sizeof *x);
        memcpy(x2, x, (size_t)(n * ld) * sizeof *x);
        run(m, &c, 12, 1, n, x1, ld, NULL);
        c.step_size = a2;
        run(m, &c, 12, 1, n, x2, ld, NULL);
        uint32_t sum_out = c.kind == EBM_SAMPLER_LANGEVIN ? 1u << 1 : 0u;
        ck_assert_int_eq(ebm_model_energy_grad_input(m, sum_out, 0, n, x, ld, grad, n0), EBM_OK);
        double worst = 0.0;
        for (int64_t row = 0; row < n; row++) {
            for (int64_t i = 0; i < n0; i++) {
                double d1 = x[row * ld + i] - x1[row * ld + i];
                double d2 = x[row * ld + i] - x2[row * ld + i];
                double g = (s2 * d1 - s1 * d2) / (a1 * s2 - a2 * s1);
                double want = grad[row * n0 + i] * (c.precondition ? exp(theta[off + i]) : 1.0);
                double err = fabs(g - want) / (1.0 + fabs(want));
                worst = err > worst ? err : worst;
            }
        }
        if (t_verbose()) {
            printf("drift[%d] kernel %d: worst relative error %.2g\n", _i, k, worst);
        }
        ck_assert_msg(worst < 1e-4, "kernel %d: drift off by %g", k, worst);
        if (c.kind == EBM_SAMPLER_LANGEVIN) {
            for (int64_t row = 0; row < n; row++) {
                ck_assert(memcmp(x1 + row * ld + n0, x + row * ld + n0, 5 * sizeof *x) == 0);
            }
        }
    }
    free(theta);
    free(x);
    free(x1);
    free(x2);
    free(grad);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 5. Determinism and row independence                                      */
/* ------------------------------------------------------------------------ */

/* Every kernel variant: both kinds, adjusted or not, closed form or steps,
 * preconditioned or not. */
static const config VARIANTS[] = {
    {EBM_SAMPLER_LANGEVIN, 3, 0.5, 1, -1, 1, 0, 0},
    {EBM_SAMPLER_LANGEVIN, 3, 0.5, 0, 0, 1, 0, 0},
    {EBM_SAMPLER_LANGEVIN, 4, 0.3, 1, 0, 1, 1, 0},
    {EBM_SAMPLER_GIBBS_LANGEVIN, 10, 0.9, 1, -1, 1, 0, 0},
    {EBM_SAMPLER_GIBBS_LANGEVIN, 10, 0.9, 1, 0, 1, 0, 0},
    {EBM_SAMPLER_GIBBS_LANGEVIN, 10, 0.9, 0, -1, 0, 0, 0},
    {EBM_SAMPLER_GIBBS_LANGEVIN, 10, 0.9, 1, 0, 0, 1, 0},
    {EBM_SAMPLER_LANGEVIN, 3, 0.5, 0, 0, 1, 0, 1},
    {EBM_SAMPLER_GIBBS_LANGEVIN, 10, 0.9, 1, 0, 1, 0, 1},
    {EBM_SAMPLER_GIBBS_LANGEVIN, 10, 0.9, 1, 0, 0, 0, 1},
};
#define N_VARIANTS ((int)(sizeof VARIANTS / sizeof VARIANTS[0]))

/* v of the same row from two batch shapes: within this (absolute). */
#define V_TOL 1e-4

/*
 * Rows of b against the same rows of a (n rows, stride ld) where b came
 * from a batch of another size: h bit for bit and v within V_TOL. Returns
 * the number of rows that differ; *v_diff is the largest difference of v
 * over the others, *v_bits the number of those whose v differs at all.
 */
static int64_t rows_apart(int64_t n, const float *a, const float *b, int64_t ld, double *v_diff,
                          int64_t *v_bits)
{
    int64_t apart = 0;
    for (int64_t r = 0; r < n; r++) {
        const float *ar = a + r * ld, *br = b + r * ld;
        double d = 0.0;
        for (int i = 0; i < NV; i++) {
            d = fmax(d, fabs((double)ar[i] - (double)br[i]));
        }
        if (d > V_TOL || memcmp(ar + NV, br + NV, NH * sizeof *ar) != 0) {
            apart++;
        } else {
            *v_diff = fmax(*v_diff, d);
            *v_bits += memcmp(ar, br, NV * sizeof *ar) != 0;
        }
    }
    return apart;
}

/*
 * Two calls on 600 rows (three chunks of 256 rows) with a padded stride:
 * the same seed gives the same bytes, padding untouched. The first 300
 * rows alone, and row 0 alone, are the same rows as in the full batch, and
 * the rows past a batch are untouched; their GEMMs have other shapes, so
 * they are compared within float rounding (docs/conventions.md, "Same
 * bits"): h exactly, v within V_TOL = 1e-4. A last-bit change of every
 * input v (nextafterf) moves v after the two calls by at most 1.3e-6 in
 * every variant. A decision whose uniform falls within rounding of its
 * probability may flip and send its row elsewhere: each of the 301 rows
 * makes at most 2 x 10 accept decisions, whose ratios a last-bit change of
 * v moves by about 1e-6 (relative), and 2 x 2 h draws (about 2^-24 each),
 * so about 6e-3 rows are expected apart; two are allowed, and three or
 * more fail a correct kernel with probability below 4e-8 per variant.
 * The four OpenBLAS kernel families of this machine give the full batch's
 * bits in every row. The twin, b's rows against a's next rows, must differ
 * in all 299. The accept rate is in [0, 1], and 1 without adjustment.
 */
START_TEST(deterministic_and_row_independent)
{
    const config *c = &VARIANTS[_i];
    ref_grbm g;
    ref_grbm_setup(&g, EBM_UNITS_BINARY);
    const int64_t n = 600, ld = 7;
    float *x0 = t_floats(n * ld), *a = t_floats(n * ld), *b = t_floats(n * ld);
    for (int64_t k = 0; k < n * ld; k++) {
        x0[k] = -123.0f; /* padding */
    }
    ref_grbm_draws(&g, 5005, n, x0, ld);
    const int64_t sizes[3] = {n, 300, 1};
    int64_t apart = 0, v_bits = 0;
    double v_diff = 0.0;
    for (int t = 0; t < 3; t++) {
        float *dst = t == 0 ? a : b;
        memcpy(dst, x0, (size_t)(n * ld) * sizeof *dst);
        ebm_sampler_t *s = new_sampler(g.m, c);
        ebm_rng_t *r = t_rng(31337, 0);
        for (int call = 0; call < 2; call++) {
            ck_assert_int_eq(ebm_sampler_step(s, r, sizes[t], dst, ld), EBM_OK);
            double rate = ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE);
            ck_assert(rate >= 0.0 && rate <= 1.0);
            if (c->adjust_after < 0) {
                ck_assert(rate == 1.0);
            }
        }
        ebm_sampler_destroy(s);
        ebm_rng_destroy(r);
        if (t == 0) {
            /* Rerun on b: the same bytes. */
            memcpy(b, x0, (size_t)(n * ld) * sizeof *b);
            s = new_sampler(g.m, c);
            r = t_rng(31337, 0);
            for (int call = 0; call < 2; call++) {
                ck_assert_int_eq(ebm_sampler_step(s, r, n, b, ld), EBM_OK);
            }
            ebm_sampler_destroy(s);
            ebm_rng_destroy(r);
            ck_assert(memcmp(a, b, (size_t)(n * ld) * sizeof *a) == 0);
            ck_assert(moved_fraction(n, a, x0, ld) > 0.1);
        } else {
            apart += rows_apart(sizes[t], a, b, ld, &v_diff, &v_bits);
            for (int64_t k = sizes[t] * ld; k < n * ld; k++) {
                ck_assert(b[k] == x0[k]); /* rows past the batch untouched */
            }
        }
        if (t == 1) {
            double twin_diff = 0.0;
            int64_t twin_bits = 0;
            const int64_t twin = rows_apart(299, a + ld, b, ld, &twin_diff, &twin_bits);
            ck_assert_msg(twin == 299, "variant %d: the twin (the next rows) matched %lld rows", _i,
                          (long long)(299 - twin));
        }
    }
    T_VLOG("  langevin rows[%d]: %lld of 301 rows apart; v within %.3g, %lld with other bits\n", _i,
           (long long)apart, v_diff, (long long)v_bits);
    ck_assert_msg(apart <= 2,
                  "variant %d: %lld rows of smaller batches differ from the full batch's", _i,
                  (long long)apart);
    for (int64_t r = 0; r < n; r++) {
        ck_assert(a[r * ld + 5] == -123.0f && a[r * ld + 6] == -123.0f);
    }
    free(x0);
    free(a);
    free(b);
    ebm_model_destroy(g.m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 6. The adjust counter                                                    */
/* ------------------------------------------------------------------------ */

/* adjust_after = 2: calls t = 1, 2 make no decision (accept rate exactly
 * 1); t = 3, 4 do, and with these large steps reject some rows. Setting the
 * counter back to 0 restarts the count. */
START_TEST(adjust_counter)
{
    ref_grbm g;
    ref_grbm_setup(&g, EBM_UNITS_BINARY);
    const int64_t n = 2000;
    float *x = t_floats(n * WIDTH);
    ref_grbm_draws(&g, 6006, n, x, WIDTH);
    const config cs[2] = {{EBM_SAMPLER_LANGEVIN, 2, 0.8, 0, 2, 1, 0, 0},
                          {EBM_SAMPLER_GIBBS_LANGEVIN, 10, 0.9, 1, 2, 1, 0, 0}};
    for (int k = 0; k < 2; k++) {
        ebm_sampler_t *s = new_sampler(g.m, &cs[k]);
        ebm_rng_t *r = t_rng(42, 0);
        for (int pass = 0; pass < 2; pass++) {
            for (int t = 1; t <= 4; t++) {
                ck_assert_int_eq(ebm_sampler_step(s, r, n, x, WIDTH), EBM_OK);
                double rate = ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE);
                ck_assert(ebm_sampler_stat(s, EBM_STAT_ITERATION) == (double)t);
                if (t <= 2) {
                    ck_assert_msg(rate == 1.0, "kind %d, t = %d: rate %g", k, t, rate);
                } else {
                    ck_assert_msg(rate > 0.0 && rate < 1.0, "kind %d, t = %d: rate %g", k, t,
                                  rate);
                }
            }
            ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_ITERATION, 0), EBM_OK);
        }
        ebm_sampler_destroy(s);
        ebm_rng_destroy(r);
    }
    free(x);
    ebm_model_destroy(g.m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Edge cases: zero steps, clamps, diverging steps                          */
/* ------------------------------------------------------------------------ */

/* K = 1 with the cosine schedule has alpha_1 = 0: LANGEVIN skips the step
 * (x unchanged, no decision); GIBBS_LANGEVIN keeps v and draws h | v. */
START_TEST(zero_step_is_skipped)
{
    ref_grbm g;
    ref_grbm_setup(&g, EBM_UNITS_BINARY);
    const int64_t n = 500;
    float *x0 = t_floats(n * WIDTH), *x = t_floats(n * WIDTH);
    ref_grbm_draws(&g, 7007, n, x0, WIDTH);
    for (int k = 0; k < 2; k++) {
        config c = {k == 0 ? EBM_SAMPLER_LANGEVIN : EBM_SAMPLER_GIBBS_LANGEVIN, 1, 0.5, 1, 0, 1,
                    0, 0};
        memcpy(x, x0, (size_t)(n * WIDTH) * sizeof *x);
        run(g.m, &c, 1, 2, n, x, WIDTH, NULL);
        ck_assert(moved_fraction(n, x, x0, WIDTH) == 0.0);
        if (k == 0) {
            ck_assert(memcmp(x, x0, (size_t)(n * WIDTH) * sizeof *x) == 0);
        } else {
            ck_assert(memcmp(x, x0, (size_t)(n * WIDTH) * sizeof *x) != 0);
        }
    }
    free(x0);
    free(x);
    ebm_model_destroy(g.m);
}
END_TEST

/* EBM_SAMPLER_CLAMP_LAYERS: bit 0 holds v (LANGEVIN: nothing moves;
 * GIBBS_LANGEVIN: only h), bit 1 holds h (GIBBS_LANGEVIN moves only v). */
START_TEST(clamped_layers_hold)
{
    ref_grbm g;
    ref_grbm_setup(&g, EBM_UNITS_BINARY);
    const int64_t n = 500;
    float *x0 = t_floats(n * WIDTH), *x = t_floats(n * WIDTH);
    ref_grbm_draws(&g, 8008, n, x0, WIDTH);
    for (int k = 0; k < 2; k++) {
        for (int clamp = 1; clamp <= 3; clamp++) {
            config c = {k == 0 ? EBM_SAMPLER_LANGEVIN : EBM_SAMPLER_GIBBS_LANGEVIN, 5, 0.5, 0, 0,
                        1, 0, 0};
            ebm_sampler_t *s = new_sampler(g.m, &c);
            ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, clamp), EBM_OK);
            ebm_rng_t *r = t_rng(9, 0);
            memcpy(x, x0, (size_t)(n * WIDTH) * sizeof *x);
            ck_assert_int_eq(ebm_sampler_step(s, r, n, x, WIDTH), EBM_OK);
            int64_t v_moved = 0, h_moved = 0;
            for (int64_t row = 0; row < n; row++) {
                v_moved += memcmp(x + row * WIDTH, x0 + row * WIDTH, NV * sizeof *x) != 0;
                h_moved += memcmp(x + row * WIDTH + NV, x0 + row * WIDTH + NV, NH * sizeof *x) != 0;
            }
            int v_free = !(clamp & 1);
            int h_free = k == 1 && !(clamp & 2);
            ck_assert_msg((v_moved > 0) == v_free, "kind %d clamp %d: %lld rows of v moved", k,
                          clamp, (long long)v_moved);
            ck_assert_msg((h_moved > 0) == h_free, "kind %d clamp %d: %lld rows of h moved", k,
                          clamp, (long long)h_moved);
            ebm_sampler_destroy(s);
            ebm_rng_destroy(r);
        }
    }
    free(x0);
    free(x);
    ebm_model_destroy(g.m);
}
END_TEST

/* A step so large that every proposal overflows float: every row is
 * rejected (accept rate 0, adjusted or not) and the states stay valid. */
START_TEST(diverging_steps_are_rejected)
{
    ref_grbm g;
    ref_grbm_setup(&g, EBM_UNITS_BINARY);
    const int64_t n = 300;
    float *x0 = t_floats(n * WIDTH), *x = t_floats(n * WIDTH);
    ref_grbm_draws(&g, 9009, n, x0, WIDTH);
    for (int v = 0; v < N_VARIANTS; v++) {
        config c = VARIANTS[v];
        c.step_size = 1e300;
        memcpy(x, x0, (size_t)(n * WIDTH) * sizeof *x);
        double rate = run(g.m, &c, 3, 1, n, x, WIDTH, NULL);
        ck_assert_msg(rate == 0.0, "variant %d: accept rate %g", v, rate);
        ck_assert(memcmp(x, x0, (size_t)(n * WIDTH) * sizeof *x) == 0);
        /* The states are still valid input. */
        rate = run(g.m, &VARIANTS[v], 4, 1, n, x, WIDTH, NULL);
        ck_assert(rate > 0.0);
    }
    free(x0);
    free(x);
    ebm_model_destroy(g.m);
}
END_TEST

/* Three unadjusted closed-form Gibbs-Langevin steps of a 40-70 GRBM on 64
 * rows at a stride past the state (the columns past it set to 7), with
 * `diverge` every fifth row's v at 1e36 and steps of size 30 (|beta_0| up
 * to about 29^10), so that those rows overflow and are rejected; `plain` takes the
 * general path (ebm__sampler_set_plain). x gets the rows, rate[t] step
 * t's accept rate, *rng_hash the generator's state after. */
enum { FP_ROWS = 64, FP_NV = 40, FP_NH = 70, FP_LD = FP_NV + FP_NH + 3 };

static void closed_form_run(int variant, int diverge, int plain, uint64_t seed, float *x,
                            double *rate, uint64_t *rng_hash)
{
    static const int64_t sizes[2] = {FP_NV, FP_NH};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
    t_random_params(m, 41, 0.3);
    ebm_rng_t *r = t_rng(seed, 0);
    for (int64_t i = 0; i < FP_ROWS * FP_LD; i++) {
        x[i] = 7.0f;
    }
    ck_assert_int_eq(ebm_model_random_state(m, r, FP_ROWS, x, FP_LD, NULL, 0), EBM_OK);
    for (int64_t row = 0; diverge && row < FP_ROWS; row += 5) {
        for (int64_t i = 0; i < FP_NV; i++) {
            x[row * FP_LD + i] = 1e36f;
        }
    }
    /* scaled by the mean variance or preconditioned; constant or cosine */
    config c = {EBM_SAMPLER_GIBBS_LANGEVIN, 10, diverge ? 30.0 : 0.5, variant & 1, -1, 1,
                !(variant & 2), (variant & 2) != 0};
    ebm_sampler_t *s = new_sampler(m, &c);
    ebm__sampler_set_plain(s, plain);
    for (int t = 0; t < 3; t++) {
        ck_assert_int_eq(ebm_sampler_step(s, r, FP_ROWS, x, FP_LD), EBM_OK);
        rate[t] = ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE);
    }
    *rng_hash = t_rng_hash(r);
    ebm_sampler_destroy(s);
    ebm_rng_destroy(r);
    ebm_model_destroy(m);
}

/* The unadjusted closed-form step of both layers (closed_form_step in
 * src/langevin.c, which writes v' and h' straight into x) gives the
 * general path's bits: rows, columns past them, accept rates and the
 * generator, also when some rows diverge (accept rate 0, those rows kept).
 * The twin, the fast path from another seed, must differ. */
START_TEST(closed_form_fast_path_is_plain)
{
    const size_t bytes = (size_t)(FP_ROWS * FP_LD) * sizeof(float);
    float *x1 = t_floats(FP_ROWS * FP_LD), *x2 = t_floats(FP_ROWS * FP_LD);
    double rate1[3], rate2[3];
    uint64_t h1, h2;
    for (int variant = 0; variant < 4; variant++) {
        for (int diverge = 0; diverge < 2; diverge++) {
            closed_form_run(variant, diverge, 0, 3, x1, rate1, &h1);
            closed_form_run(variant, diverge, 1, 3, x2, rate2, &h2);
            ck_assert_msg(memcmp(x1, x2, bytes) == 0, "variant %d diverge %d: rows differ",
                          variant, diverge);
            ck_assert(memcmp(rate1, rate2, sizeof rate1) == 0 && h1 == h2);
            ck_assert_msg(diverge ? rate1[0] == 0.0 : rate1[0] == 1.0, "variant %d: rate %g",
                          variant, rate1[0]);
            if (diverge) { /* the diverging rows kept v; the others moved */
                ck_assert(x1[0] == 1e36f && x1[FP_LD] != 1e36f);
            }
            closed_form_run(variant, diverge, 0, 4, x2, rate2, &h2);
            ck_assert_msg(memcmp(x1, x2, bytes) != 0, "the twin (another seed) passed");
        }
    }
    free(x1);
    free(x2);
}
END_TEST

/* The sampler's statistics, EBM_STAT_ACCEPT_RATE .. EBM_STAT_ITERATION. */
static void sampler_stats(const ebm_sampler_t *s, double *out)
{
    for (int k = 1; k < EBM_STAT_COUNT; k++) {
        out[k - 1] = ebm_sampler_stat(s, k);
    }
}

/* EBM_SAMPLER_PRECONDITION and EBM_SAMPLER_SCALE_BY_VARIANCE together are
 * refused with EBM_EVALUE naming both, before anything moves: by both
 * kernels' steps (x, the generator and the statistics unchanged; also for
 * n = 0) and by a GRBM_CD gradient that would use them (grad and the
 * generator unchanged); either option alone runs. */
START_TEST(one_step_scaling_at_a_time)
{
    ref_grbm g;
    ref_grbm_setup(&g, EBM_UNITS_BINARY);
    const int64_t n = 20, np = ebm_model_param_count(g.m);
    float *x0 = t_floats(n * WIDTH), *x = t_floats(n * WIDTH), *grad = t_floats(np);
    ref_grbm_draws(&g, 9100, n, x0, WIDTH);
    const int kinds[2] = {EBM_SAMPLER_LANGEVIN, EBM_SAMPLER_GIBBS_LANGEVIN};
    for (int k = 0; k < 2; k++) {
        /* preconditioned alone first, so that the statistics are not the defaults */
        config c = {kinds[k], 3, 0.5, 0, 0, 1, 0, 1};
        ebm_sampler_t *s = new_sampler(g.m, &c);
        ebm_rng_t *r = t_rng(5, 0);
        memcpy(x, x0, (size_t)(n * WIDTH) * sizeof *x);
        ck_assert_int_eq(ebm_sampler_step(s, r, n, x, WIDTH), EBM_OK);
        ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_SCALE_BY_VARIANCE, 1), EBM_OK);
        uint64_t st0[EBM_RNG_STATE_WORDS], st1[EBM_RNG_STATE_WORDS];
        double stat0[EBM_STAT_COUNT - 1], stat1[EBM_STAT_COUNT - 1];
        ck_assert_int_eq(ebm_rng_get_state(r, st0), EBM_OK);
        sampler_stats(s, stat0);
        memcpy(x0, x, (size_t)(n * WIDTH) * sizeof *x);
        for (int64_t rows = n; rows >= 0; rows -= n) {
            ck_assert_int_eq(ebm_sampler_step(s, r, rows, x, WIDTH), EBM_EVALUE);
            ck_assert_ptr_nonnull(strstr(ebm_sampler_errmsg(s), "EBM_SAMPLER_PRECONDITION"));
            ck_assert_ptr_nonnull(strstr(ebm_sampler_errmsg(s), "EBM_SAMPLER_SCALE_BY_VARIANCE"));
            ck_assert_int_eq(ebm_rng_get_state(r, st1), EBM_OK);
            ck_assert(memcmp(st0, st1, sizeof st0) == 0);
            ck_assert(memcmp(x, x0, (size_t)(n * WIDTH) * sizeof *x) == 0);
            sampler_stats(s, stat1);
            ck_assert(memcmp(stat0, stat1, sizeof stat0) == 0);
        }
        ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_PRECONDITION, 0), EBM_OK);
        ck_assert_int_eq(ebm_sampler_step(s, r, n, x, WIDTH), EBM_OK); /* scaled alone */

        ebm_estimator_t *e = NULL;
        const int so = EBM_ESTIMATOR_SAMPLER_OPTION;
        ck_assert_int_eq(ebm_estimator_create(&e, g.m, EBM_ESTIMATOR_GRBM_CD), EBM_OK);
        ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_SAMPLER, kinds[k]), EBM_OK);
        ck_assert_int_eq(ebm_estimator_set_int(e, so + EBM_SAMPLER_PRECONDITION, 1), EBM_OK);
        ck_assert_int_eq(ebm_estimator_set_int(e, so + EBM_SAMPLER_SCALE_BY_VARIANCE, 1),
                         EBM_OK);
        for (int64_t i = 0; i < np; i++) {
            grad[i] = 7.0f;
        }
        ck_assert_int_eq(ebm_rng_get_state(r, st0), EBM_OK);
        ck_assert_int_eq(ebm_estimator_gradient(e, r, n, x0, WIDTH, grad), EBM_EVALUE);
        ck_assert_ptr_nonnull(strstr(ebm_estimator_errmsg(e), "EBM_SAMPLER_PRECONDITION"));
        ck_assert_int_eq(ebm_rng_get_state(r, st1), EBM_OK);
        ck_assert(memcmp(st0, st1, sizeof st0) == 0);
        for (int64_t i = 0; i < np; i++) {
            ck_assert(grad[i] == 7.0f);
        }
        ck_assert_int_eq(ebm_estimator_set_int(e, so + EBM_SAMPLER_SCALE_BY_VARIANCE, 0),
                         EBM_OK);
        ck_assert_int_eq(ebm_estimator_gradient(e, r, n, x0, WIDTH, grad), EBM_OK);
        /* a GRBM_CD of Gibbs steps does not use them: both set is no error */
        ck_assert_int_eq(ebm_estimator_set_int(e, so + EBM_SAMPLER_SCALE_BY_VARIANCE, 1),
                         EBM_OK);
        ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_SAMPLER, EBM_SAMPLER_GIBBS),
                         EBM_OK);
        ck_assert_int_eq(ebm_estimator_gradient(e, r, n, x0, WIDTH, grad), EBM_OK);
        ebm_estimator_destroy(e);
        ebm_rng_destroy(r);
        ebm_sampler_destroy(s);
        ref_grbm_draws(&g, 9100, n, x0, WIDTH);
    }
    free(grad);
    free(x0);
    free(x);
    ebm_model_destroy(g.m);
}
END_TEST

/* ------------------------------------------------------------------------ */

Suite *ebm_langevin_suite(void)
{
    const int stat_timeout = t_level() >= 2 ? 600 : 60;
    const t_test tests[] = {
        {"stationarity", mala_keeps_marginal, 4, stat_timeout, NULL, NULL},
        {"stationarity", ula_bias_shrinks, 0, stat_timeout, NULL, NULL},
        {"stationarity", gibbs_langevin_keeps_joint, 8, stat_timeout, NULL, NULL},
        {"stationarity", closed_form_matches_steps, 0, stat_timeout, NULL, NULL},
        {"kernel", drift_is_the_energy_gradient, 2, 20, NULL, NULL},
        {"kernel", deterministic_and_row_independent, N_VARIANTS, 20, NULL, NULL},
        {"kernel", adjust_counter, 0, 20, NULL, NULL},
        {"kernel", zero_step_is_skipped, 0, 20, NULL, NULL},
        {"kernel", clamped_layers_hold, 0, 20, NULL, NULL},
        {"kernel", diverging_steps_are_rejected, 0, 20, NULL, NULL},
        {"kernel", closed_form_fast_path_is_plain, 0, 20, NULL, NULL},
        {"kernel", one_step_scaling_at_a_time, 0, 20, NULL, NULL},
    };
    return t_suite("langevin", tests, sizeof tests / sizeof tests[0]);
}
