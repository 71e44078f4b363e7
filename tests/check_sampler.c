/*
 * Samplers (include/ebm.h, "Samplers and coupled chains"; tests/README.md,
 * classes 2, 3, 4 and 7): single steps of EBM_SAMPLER_GIBBS and
 * EBM_SAMPLER_MH_UNIFORM; the coupled steps are in check_coupling.c, the
 * Langevin kernels in check_langevin.c.
 *
 * Every kernel is written down a second time in ref_sampler.c, in double
 * precision, as an exact transition matrix on tiny models (binary and spin
 * RBM 3x2, binary and spin DBM 2-2-2, posterior variants with clamped
 * layers). Then (1) the reference kernels leave the exact pi invariant
 * (||pi P - pi||_1 <= 1e-12), MH is reversible, and the coupled laws have
 * the single kernel as both marginals and meet with the maximal
 * probability; (2) the library's draws follow the reference by chi-square
 * tests at the 1 - 1e-6 / (number of tests) level, each paired with a
 * broken twin (a bias sign flipped) that must fail; (3) a GRBM's Gibbs step
 * draws v' ~ N(mu + W h, sigma^2) and h' ~ p(h | v'); (4) determinism and
 * row independence (single and coupled steps), statistics; (5) bad input:
 * codes, messages naming the argument, nothing changed (states, generator,
 * statistics); (6) the MH energies of the float path stay within their
 * certified bound and move the chains as the double path does.
 *
 * The statistical tests use fixed seeds; each compares with the exact law
 * at a threshold that a correct implementation crosses with probability
 * about 1e-6 per test function.
 *
 * EBM_TEST_LEVEL=2 multiplies the sample sizes by 10. EBM_TEST_VERBOSE=1
 * prints the statistics of every test on stderr.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tests.h"
#include "ref.h"
#include "energy.h" /* the MH energy paths */
#include "sampler.h" /* ebm__sampler_run, ebm__sampler_hidden_input */
#include "testing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOPT (EBM_SAMPLER_ROW_OFFSET + 1)

/* Table values of the chi-square upper quantiles check ref_gamma_q. */
START_TEST(chi_selfcheck)
{
    static const struct {
        int df;
        double x, p;
    } tab[] = {{1, 23.928127, 1e-6},   {1, 3.841459, 0.05},    {2, 13.815511, 0.001},
               {10, 29.588298, 0.001}, {30, 59.702660, 0.001}, {100, 149.449252, 0.001},
               {5, 1.145476, 0.95}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        double p = ref_gamma_q(0.5 * tab[i].df, 0.5 * tab[i].x);
        T_ASSERT_MSG(fabs(p - tab[i].p) < 1e-3 * tab[i].p, "Q(df %d, %g) = %.8g, table %.8g",
                     tab[i].df, tab[i].x, p, tab[i].p);
    }
    /* Merging: 3 big cells and 100 cells expecting 1 each, which go in
     * groups of 5: 23 groups, a perfect fit. */
    double prob[103], obs[103];
    for (int i = 0; i < 103; i++) {
        prob[i] = i < 3 ? 0.3 : 0.1 / 100;
        obs[i] = i < 3 ? 300 : 1;
    }
    ref_gof g = ref_chisq(obs, prob, 103, 1000);
    T_ASSERT(g.df == 22 && g.stat == 0.0 && g.p == 1.0 && g.impossible == 0);
    prob[5] = 0.0;
    g = ref_chisq(obs, prob, 103, 1000);
    T_ASSERT(g.impossible == 1.0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 1. The kernels' design: invariance and reversibility                     */
/* ------------------------------------------------------------------------ */

START_TEST(kernel_design)
{
    const tref_mspec *ms = &TREF_MODELS[_i];
    ebm_model_t *m = tref_make_model(ms);
    tref R;
    tref_load_model(ms, m, &R);
    const int S = R.S;
    double *P = t_malloc((size_t)S * S * sizeof *P), *pi = t_malloc((size_t)S * sizeof *pi);
    for (int kind = EBM_SAMPLER_GIBBS; kind <= EBM_SAMPLER_MH_UNIFORM; kind++) {
        tref_matrix(&R, kind, P);
        double worst = 0.0, worst_db = 0.0, worst_row = 0.0;
        for (int k = 0; k < S; k++) {
            double rs = 0.0;
            for (int k2 = 0; k2 < S; k2++) {
                T_ASSERT(P[k * S + k2] >= 0.0);
                rs += P[k * S + k2];
            }
            worst_row = fmax(worst_row, fabs(rs - 1.0));
        }
        for (int k0 = 0; k0 < S; k0++) {
            int first = 1; /* one class per set of clamped values */
            for (int k = 0; k < k0; k++) {
                first &= !tref_same_clamped_k(&R, k, k0);
            }
            if (!first) {
                continue;
            }
            tref_pi(&R, k0, pi);
            double l1 = 0.0;
            for (int y = 0; y < S; y++) {
                double s = 0.0;
                for (int x = 0; x < S; x++) {
                    s += pi[x] * P[x * S + y];
                }
                l1 += fabs(s - pi[y]);
            }
            worst = fmax(worst, l1);
            if (kind == EBM_SAMPLER_MH_UNIFORM) {
                for (int x = 0; x < S; x++) {
                    for (int y = 0; y < S; y++) {
                        worst_db =
                            fmax(worst_db, fabs(pi[x] * P[x * S + y] - pi[y] * P[y * S + x]));
                    }
                }
            }
        }
        T_VLOG(
            "  %s, %s: rows sum to 1 within %.2g, ||pi P - pi||_1 = %.2g, detailed balance %.2g\n",
            ms->name, kind == 0 ? "Gibbs" : "MH", worst_row, worst, worst_db);
        T_ASSERT_MSG(worst_row <= 1e-12, "%s: a row of P sums to 1 +- %g", ms->name, worst_row);
        T_ASSERT_MSG(worst <= 1e-12, "%s kind %d: ||pi P - pi||_1 = %g", ms->name, kind, worst);
        T_ASSERT_MSG(worst_db <= 1e-12, "%s: MH detailed balance off by %g", ms->name, worst_db);
    }
    /* The coupled laws have the single kernel as both marginals, and the
     * Gibbs couplings meet with the maximal probability. */
    double *J = t_malloc((size_t)S * S * sizeof *J);
    double *PM = t_malloc((size_t)S * S * sizeof *PM);
    tref_matrix(&R, EBM_SAMPLER_MH_UNIFORM, PM);
    tref_matrix(&R, EBM_SAMPLER_GIBBS, P);
    uint64_t st = 99;
    for (int t = 0; t < 20; t++) {
        int kx = (int)(t_uniform(&st) * S), ky = (int)(t_uniform(&st) * S);
        if (!tref_same_clamped_k(&R, kx, ky)) {
            continue;
        }
        for (int v = 0; v < TREF_N_VARIANTS; v++) {
            const double *K = v == TREF_MH ? PM : P;
            tref_joint(&R, v, kx, ky, J);
            double err = 0.0, diag = 0.0, bound = 0.0;
            for (int a = 0; a < S; a++) {
                double sx = 0.0, sy = 0.0;
                for (int b = 0; b < S; b++) {
                    sx += J[a * S + b];
                    sy += J[b * S + a];
                }
                err = fmax(err, fmax(fabs(sx - K[kx * S + a]), fabs(sy - K[ky * S + a])));
                diag += J[a * S + a];
                bound += fmin(K[kx * S + a], K[ky * S + a]);
            }
            T_ASSERT_MSG(err <= 1e-12, "%s %s: a coupled marginal is off by %g", ms->name,
                         TREF_VARIANT_NAME[v], err);
            /* MH too: with a common proposal and a common uniform the
             * chains meet with probability sum_z min(P(x,z), P(y,z)). */
            T_ASSERT_MSG(fabs(diag - bound) <= 1e-12, "%s %s: meeting %g, bound %g", ms->name,
                         TREF_VARIANT_NAME[v], diag, bound);
        }
    }
    free(J);
    free(PM);
    free(P);
    free(pi);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 2. The library follows P                                                 */
/* ------------------------------------------------------------------------ */

/* _i = 2 * model + kind */
START_TEST(step_law)
{
    const tref_mspec *ms = &TREF_MODELS[_i / 2];
    const int kind = _i % 2;
    ebm_model_t *m = tref_make_model(ms);
    tref R, T;
    tref_load_model(ms, m, &R);
    T = R;
    T.b[tref_top_free_layer(ms)][0] = -T.b[tref_top_free_layer(ms)][0]; /* the broken twin */
    const int S = R.S, w = R.width;
    double *P = t_malloc((size_t)S * S * sizeof *P), *PT = t_malloc((size_t)S * S * sizeof *PT);
    tref_matrix(&R, kind, P);
    tref_matrix(&T, kind, PT);
    ebm_sampler_t *s = t_sampler(m, kind, ms->clamp, EBM_COUPLING_CRN);
    ebm_rng_t *rng = t_rng(2000 + (uint64_t)_i, 0);
    const int64_t n = t_scaled(40000);
    const double alpha = 1e-6 / S; /* Bonferroni over the start states */
    float *x = t_malloc((size_t)(n * w) * sizeof *x);
    double *cnt = t_malloc((size_t)S * sizeof *cnt), worst = 1.0, stat_sum = 0.0;
    int twin_fails = 0;
    for (int k = 0; k < S; k++) {
        tref_fill_rows(&R, k, n, x);
        ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_OK);
        memset(cnt, 0, (size_t)S * sizeof *cnt);
        for (int64_t r = 0; r < n; r++) {
            int c = tref_code(&R, x + r * w);
            T_ASSERT_MSG(c >= 0, "%s: row %lld left the state space", ms->name, (long long)r);
            cnt[c] += 1.0;
        }
        char what[160];
        snprintf(what, sizeof what, "%s %s from state %d", ms->name, kind ? "MH" : "Gibbs", k);
        ref_gof g = ref_chisq(cnt, P + k * S, S, (double)n);
        T_ASSERT_MSG(g.impossible == 0.0, "%s: %.0f draws where P is 0", what, g.impossible);
        T_ASSERT_MSG(g.p >= alpha, "%s: chi2 %.2f, %d df, p = %.3g < %.3g", what, g.stat, g.df, g.p,
                     alpha);
        worst = fmin(worst, g.p);
        stat_sum += g.stat - g.df;
        twin_fails += ref_gof_fails(ref_chisq(cnt, PT + k * S, S, (double)n), alpha);
    }
    T_VLOG("  %s %s: %d start states x %lld rows, smallest p %.3g, sum(chi2 - df) %.1f, "
           "twin fails from %d states\n",
           ms->name, kind ? "MH" : "Gibbs", S, (long long)n, worst, stat_sum, twin_fails);
    T_ASSERT_MSG(twin_fails > 0, "%s: the broken twin (bias sign flipped) was not detected",
                 ms->name);
    free(x);
    free(cnt);
    free(P);
    free(PT);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 3. Gaussian layers: a GRBM 2x2                                           */
/* ------------------------------------------------------------------------ */

/* The single Gibbs step of the GRBM: v' ~ N(mu + W h, sigma^2), h' ~ p(h | v'). */
START_TEST(grbm_step)
{
    tref R;
    ebm_model_t *m = tref_make_grbm(&R);
    ebm_sampler_t *s = t_sampler(m, EBM_SAMPLER_GIBBS, 0, EBM_COUPLING_CRN);
    ebm_rng_t *rng = t_rng(5100, 0);
    const int64_t n = t_scaled(100000);
    const int w = R.width;
    float *x = t_malloc((size_t)(n * w) * sizeof *x);
    const float start[4] = {0.4f, -2.0f, 1.0f, 0.0f};
    for (int64_t r = 0; r < n; r++) {
        memcpy(x + r * w, start, sizeof start);
    }
    double mean[2];
    tref_grbm_mean(&R, start, mean);
    ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_OK);
    tref_check_normal("GRBM Gibbs step v'", &R, n, x, mean, 1e-6 / 2);
    tref_check_hidden("GRBM Gibbs step", &R, n, x);
    /* broken twin: the mean of another h */
    const float other[4] = {0.4f, -2.0f, 0.0f, 1.0f};
    double wrong[2];
    tref_grbm_mean(&R, other, wrong);
    double s0 = 0.0;
    for (int64_t r = 0; r < n; r++) {
        s0 += ((double)x[r * w] - wrong[0]) / exp(0.5 * R.logvar[0]);
    }
    T_ASSERT_MSG(fabs(s0 / sqrt((double)n)) >= 5.0, "the v' mean test cannot fail");
    free(x);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 4. Determinism, row independence, statistics                             */
/* ------------------------------------------------------------------------ */

typedef struct setup {
    const char *name;
    int model; /* -1: the GRBM */
    int kind, coupling;
    uint32_t clamp;
} setup;

static const setup SETUPS[] = {
    {"binary DBM Gibbs CRN", 2, EBM_SAMPLER_GIBBS, EBM_COUPLING_CRN, 0},
    {"binary DBM Gibbs MAXIMAL", 2, EBM_SAMPLER_GIBBS, EBM_COUPLING_MAXIMAL, 0},
    {"binary DBM Gibbs BLOCKWISE", 2, EBM_SAMPLER_GIBBS, EBM_COUPLING_BLOCKWISE, 0},
    {"spin DBM MH", 3, EBM_SAMPLER_MH_UNIFORM, 0, 0},
    {"binary DBM posterior MH", 4, EBM_SAMPLER_MH_UNIFORM, 0, 1},
    {"GRBM Gibbs CRN (reflection)", -1, EBM_SAMPLER_GIBBS, EBM_COUPLING_CRN, 0},
    {"GRBM Gibbs MAXIMAL", -1, EBM_SAMPLER_GIBBS, EBM_COUPLING_MAXIMAL, 0},
    {"GRBM Gibbs BLOCKWISE (reflection, then h)", -1, EBM_SAMPLER_GIBBS, EBM_COUPLING_BLOCKWISE, 0},
    {"GRBM posterior MH", -1, EBM_SAMPLER_MH_UNIFORM, 0, 1},
};
#define N_SETUPS ((int)(sizeof SETUPS / sizeof SETUPS[0]))

static ebm_model_t *setup_model(const setup *su, tref *R)
{
    if (su->model < 0) {
        ebm_model_t *g = tref_make_grbm(R);
        R->clamp = su->clamp;
        return g;
    }
    ebm_model_t *m = tref_make_model(&TREF_MODELS[su->model]);
    tref_load_model(&TREF_MODELS[su->model], m, R);
    return m;
}

/* n random rows for x, and y equal to x in every third row. */
static void random_pairs(const ebm_model_t *m, uint64_t seed, int64_t n, int w, float *x, float *y)
{
    ebm_rng_t *r = t_rng(seed, 0);
    ck_assert_int_eq(ebm_model_random_state(m, r, n, x, w, NULL, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_random_state(m, r, n, y, w, NULL, 0), EBM_OK);
    for (int64_t i = 0; i < n; i += 3) {
        memcpy(y + i * w, x + i * w, (size_t)w * sizeof *x);
    }
    ebm_rng_destroy(r);
}

/* The posterior setups share the clamped visible values between chains. */
static void share_clamped(const setup *su, const tref *R, int64_t n, float *x, float *y)
{
    for (int64_t i = 0; i < n; i++) {
        for (int c = 0; c < R->width; c++) {
            if (su->clamp >> R->layer_of[c] & 1u) {
                y[i * R->width + c] = x[i * R->width + c];
            }
        }
    }
}

/* steps: single steps (coupled 0) or coupled steps, 2 calls, rng seed. */
static void run_steps(ebm_sampler_t *s, int coupled, uint64_t seed, int64_t n, float *x,
                      int64_t ldx, float *y, uint8_t *met)
{
    ebm_rng_t *r = t_rng(seed, 0);
    for (int c = 0; c < 2; c++) {
        int rc = coupled ? ebm_sampler_coupled_step(s, r, n, x, ldx, y, ldx, met)
                         : ebm_sampler_step(s, r, n, x, ldx);
        T_ASSERT_MSG(rc == EBM_OK, "step: %s", ebm_sampler_errmsg(s));
    }
    ebm_rng_destroy(r);
}

/* v' of the same GRBM row from two batch shapes: within this (absolute). */
#define V_TOL 1e-5

/*
 * Row r of x (and of y and met when coupled; stride ld) against the same
 * row of the reference run (xr, yr, metr; stride w), where the row went
 * through GEMMs of another shape: discrete units and met bit for bit,
 * Gaussian units within V_TOL; 1 if the row is apart. *v_diff: the largest
 * difference of a Gaussian unit in a row that is not apart.
 */
static int row_apart(const tref *R, int coupled, int64_t r, const float *x, const float *y,
                     const uint8_t *met, const float *xr, const float *yr, const uint8_t *metr,
                     int64_t ld, double *v_diff)
{
    const int w = R->width;
    double d = 0.0;
    for (int chain = 0; chain < 1 + coupled; chain++) {
        const float *a = (chain ? y : x) + r * ld, *b = (chain ? yr : xr) + r * w;
        for (int c = 0; c < w; c++) {
            if (R->units[R->layer_of[c]] == G_) {
                d = fmax(d, fabs((double)a[c] - (double)b[c]));
            } else if (memcmp(&a[c], &b[c], sizeof *a) != 0) {
                return 1;
            }
        }
    }
    if (d > V_TOL || (coupled && met[r] != metr[r])) {
        return 1;
    }
    *v_diff = fmax(*v_diff, d);
    return 0;
}

/*
 * Determinism and row independence, per setup, for single and coupled
 * steps (2 calls of 300 rows, more than one 256-row chunk): the same seed
 * gives the same bytes and another seed other ones; row r of a batch whose
 * other rows hold other states is the batch's row r, bit for bit (the same
 * shapes). Rows through GEMMs of other shapes or layouts (docs/
 * conventions.md, "Same bits") are compared by row_apart: 9 rows of prefix
 * batches, the 300 rows with a padded stride, rows [137, 300) alone with
 * EBM_SAMPLER_ROW_OFFSET 137. A GRBM's v' (a mean of two terms plus a
 * scaled normal, |v'| < 8) is within a few ulp (1e-6) of another rounding,
 * V_TOL 1e-5; a decision flips where its uniform falls within rounding of
 * its probability: these 472 rows make about 11,000 draws (about 2^-24
 * each) and 1,900 accept decisions (energies below 10: about 1e-6 each),
 * so about 2.6e-3 rows are expected apart; two are allowed, and three or
 * more fail a correct sampler with probability below 3e-9. On the four
 * OpenBLAS kernel families of this machine every row has the batch's
 * bits. Twin: rows [137, 300) numbered from 0 must be apart in more than
 * two rows (observed: 112 to 163 of 163).
 */
START_TEST(determinism_and_rows)
{
    const setup *su = &SETUPS[_i];
    tref R;
    ebm_model_t *m = setup_model(su, &R);
    const int w = R.width;
    const int64_t n = 300; /* more than one 256-row chunk */
    ebm_sampler_t *s = t_sampler(m, su->kind, su->clamp, su->coupling);
    float *x0 = t_malloc((size_t)(n * w) * sizeof *x0),
          *y0 = t_malloc((size_t)(n * w) * sizeof *y0);
    float *x = t_malloc((size_t)(n * w) * sizeof *x), *y = t_malloc((size_t)(n * w) * sizeof *y);
    float *xa = t_malloc((size_t)(n * w) * sizeof *xa),
          *ya = t_malloc((size_t)(n * w) * sizeof *ya);
    float *xo = t_malloc((size_t)(n * w) * sizeof *xo),
          *yo = t_malloc((size_t)(n * w) * sizeof *yo);
    uint8_t *met = t_malloc((size_t)n), *meta = t_malloc((size_t)n);
    random_pairs(m, 71 + (uint64_t)_i, n, w, x0, y0);
    random_pairs(m, 171 + (uint64_t)_i, n, w, xo, yo); /* other rows */
    share_clamped(su, &R, n, x0, y0);
    share_clamped(su, &R, n, xo, yo);
    for (int coupled = 0; coupled < 2; coupled++) {
        /* Same seed, same bytes (twice with a fresh sampler too). */
        memcpy(x, x0, (size_t)(n * w) * sizeof *x);
        memcpy(y, y0, (size_t)(n * w) * sizeof *y);
        run_steps(s, coupled, 9, n, x, w, y, met);
        memcpy(xa, x0, (size_t)(n * w) * sizeof *x);
        memcpy(ya, y0, (size_t)(n * w) * sizeof *y);
        ebm_sampler_t *s2 = t_sampler(m, su->kind, su->clamp, su->coupling);
        run_steps(s2, coupled, 9, n, xa, w, ya, meta);
        ebm_sampler_destroy(s2);
        T_ASSERT_MSG(memcmp(x, xa, (size_t)(n * w) * sizeof *x) == 0, "%s: same seed, other x",
                     su->name);
        if (coupled) {
            T_ASSERT(memcmp(y, ya, (size_t)(n * w) * sizeof *y) == 0);
            T_ASSERT(memcmp(met, meta, (size_t)n) == 0);
        }
        /* Another seed moves something. */
        memcpy(xa, x0, (size_t)(n * w) * sizeof *x);
        memcpy(ya, y0, (size_t)(n * w) * sizeof *y);
        run_steps(s, coupled, 10, n, xa, w, ya, meta);
        T_ASSERT_MSG(memcmp(x, xa, (size_t)(n * w) * sizeof *x) != 0, "%s: seed ignored", su->name);
        /* Row r depends on row r only: a prefix batch (another shape), and
         * a batch whose other rows hold other states (the same shape). */
        int64_t apart = 0, twin_apart = 0;
        double v_diff = 0.0, twin_diff = 0.0;
        static const int64_t rows[] = {0, 1, 2, 3, 100, 255, 256, 257, 299};
        for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
            const int64_t r = rows[k];
            memcpy(xa, x0, (size_t)((r + 1) * w) * sizeof *x);
            memcpy(ya, y0, (size_t)((r + 1) * w) * sizeof *y);
            run_steps(s, coupled, 9, r + 1, xa, w, ya, meta);
            apart += row_apart(&R, coupled, r, xa, ya, meta, x, y, met, w, &v_diff);
            memcpy(xa, xo, (size_t)(n * w) * sizeof *x);
            memcpy(ya, yo, (size_t)(n * w) * sizeof *y);
            memcpy(xa + r * w, x0 + r * w, (size_t)w * sizeof *x);
            memcpy(ya + r * w, y0 + r * w, (size_t)w * sizeof *y);
            run_steps(s, coupled, 9, n, xa, w, ya, meta);
            T_ASSERT_MSG(memcmp(xa + r * w, x + r * w, (size_t)w * sizeof *x) == 0,
                         "%s: row %lld of x depends on the other rows", su->name, (long long)r);
            if (coupled) {
                T_ASSERT_MSG(memcmp(ya + r * w, y + r * w, (size_t)w * sizeof *y) == 0 &&
                                 meta[r] == met[r],
                             "%s: row %lld of the coupled step depends on the other rows", su->name,
                             (long long)r);
            }
        }
        /* A row stride with padding: the same rows, padding untouched. */
        const int ld = w + 3;
        float *xp = t_malloc((size_t)(n * ld) * sizeof *xp),
              *yp = t_malloc((size_t)(n * ld) * sizeof *yp);
        for (int64_t r = 0; r < n; r++) {
            for (int c = 0; c < ld; c++) {
                xp[r * ld + c] = c < w ? x0[r * w + c] : 12345.0f;
                yp[r * ld + c] = c < w ? y0[r * w + c] : -777.0f;
            }
        }
        run_steps(s, coupled, 9, n, xp, ld, yp, meta);
        for (int64_t r = 0; r < n; r++) {
            apart += row_apart(&R, coupled, r, xp, yp, meta, x, y, met, ld, &v_diff);
            for (int c = w; c < ld; c++) {
                T_ASSERT(xp[r * ld + c] == 12345.0f && yp[r * ld + c] == -777.0f);
            }
        }
        free(xp);
        free(yp);
        /* Rows [o, n) alone with EBM_SAMPLER_ROW_OFFSET o are the same rows
         * of the whole batch; numbered from 0 instead (the twin), they are
         * not. */
        const int64_t o = 137;
        for (int offset = 1; offset >= 0; offset--) {
            memcpy(xa, x0 + o * w, (size_t)((n - o) * w) * sizeof *x);
            memcpy(ya, y0 + o * w, (size_t)((n - o) * w) * sizeof *y);
            T_ASSERT(ebm_sampler_set_int(s, EBM_SAMPLER_ROW_OFFSET, offset ? o : 0) == EBM_OK);
            run_steps(s, coupled, 9, n - o, xa, w, ya, meta);
            for (int64_t r = 0; r < n - o; r++) {
                if (offset) {
                    apart += row_apart(&R, coupled, r, xa, ya, meta, x + o * w, y + o * w,
                                       met + o, w, &v_diff);
                } else {
                    twin_apart += row_apart(&R, coupled, r, xa, ya, meta, x + o * w, y + o * w,
                                            met + o, w, &twin_diff);
                }
            }
        }
        T_VLOG("  %s%s: %lld of 472 rows apart, v' within %.3g; twin: %lld of 163 apart\n",
               su->name, coupled ? " (coupled)" : "", (long long)apart, v_diff,
               (long long)twin_apart);
        T_ASSERT_MSG(apart <= 2, "%s: %lld rows of other batches differ from the batch's", su->name,
                     (long long)apart);
        T_ASSERT_MSG(twin_apart > 2, "%s: rows %lld.. numbered from 0 match the batch's: the "
                     "twin cannot fail", su->name, (long long)o);
        T_ASSERT(ebm_sampler_set_int(s, EBM_SAMPLER_ROW_OFFSET, 0) == EBM_OK);
    }
    free(x0);
    free(y0);
    free(x);
    free(y);
    free(xa);
    free(ya);
    free(xo);
    free(yo);
    free(met);
    free(meta);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

START_TEST(statistics)
{
    const setup *su = &SETUPS[_i];
    tref R;
    ebm_model_t *m = setup_model(su, &R);
    const int w = R.width;
    const int64_t n = 3000;
    ebm_sampler_t *s = t_sampler(m, su->kind, su->clamp, su->coupling);
    ebm_rng_t *rng = t_rng(6000 + (uint64_t)_i, 0);
    float *x = t_malloc((size_t)(n * w) * sizeof *x), *y = t_malloc((size_t)(n * w) * sizeof *y);
    uint8_t *met = t_malloc((size_t)n);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 0.0);
    random_pairs(m, 81, n, w, x, y);
    share_clamped(su, &R, n, x, y);
    /* Coupled step: met fraction, tries, accept rate, rows. */
    int64_t apart = 0; /* rows whose chains differ: two MH decisions each */
    for (int64_t r = 0; r < n; r++) {
        apart += memcmp(x + r * w, y + r * w, (size_t)w * sizeof *x) != 0;
    }
    ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met), EBM_OK);
    double nmet = 0.0;
    for (int64_t r = 0; r < n; r++) {
        nmet += met[r];
    }
    const double mf = ebm_sampler_stat(s, EBM_STAT_MET_FRACTION);
    const double tm = ebm_sampler_stat(s, EBM_STAT_TRIES_MEAN);
    const double tx = ebm_sampler_stat(s, EBM_STAT_TRIES_MAX);
    const double ar = ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE);
    T_VLOG("  %s: met fraction %.4f, tries mean %.3f max %.0f, accept rate %.4f\n", su->name, mf,
           tm, tx, ar);
    T_ASSERT_MSG(fabs(mf - nmet / n) < 1e-12, "%s: MET_FRACTION %g, met flags say %g", su->name, mf,
                 nmet / n);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ROWS) == (double)n);
    T_ASSERT(ar >= 0.0 && ar <= 1.0);
    T_ASSERT(tm >= 0.0 && tx >= 0.0 && tx == floor(tx) && tx >= tm);
    if (su->kind == EBM_SAMPLER_GIBBS) {
        T_ASSERT_MSG(ar == 1.0, "%s: a Gibbs step has no Metropolis decision: accept rate %g",
                     su->name, ar);
        if (su->model >= 0 || su->coupling == EBM_COUPLING_MAXIMAL) {
            /* rejection loops ran for the rows that did not meet */
            T_ASSERT_MSG(nmet < n && tm >= 1.0 && tx >= 1.0, "%s: tries mean %g max %g", su->name,
                         tm, tx);
        }
    } else {
        T_ASSERT(tm == 0.0 && tx == 0.0);
        /* The exact count the estimator sums (EBM_ESTIMATOR_STAT_MH_ACCEPTED):
         * the rate over n + apart decisions, not over n rows. */
        T_ASSERT_MSG(apart > 0 && s->accepted == llround(ar * (double)(n + apart)),
                     "%s: %lld accepted, rate %g over %lld decisions", su->name,
                     (long long)s->accepted, ar, (long long)(n + apart));
    }
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 1.0);
    /* Rows all equal: met fraction 1, no tries. */
    memcpy(y, x, (size_t)(n * w) * sizeof *x);
    ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met), EBM_OK);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_MET_FRACTION) == 1.0);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_TRIES_MAX) == 0.0);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 2.0);
    /* MH single step from one state: the accept rate against its exact
     * expectation sum_z min(1, exp(E(x) - E(z))) / M. */
    if (su->kind == EBM_SAMPLER_MH_UNIFORM) {
        const int k0 = 1;
        tref_fill_rows(&R, k0, n, x);
        ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_OK);
        double xr[TREF_MAXW], zr[TREF_MAXW], expect = 0.0, moved = 0.0;
        tref_row(&R, k0, xr);
        for (int k = 0; k < R.S; k++) {
            tref_row(&R, k, zr);
            if (tref_same_clamped(&R, xr, zr)) {
                expect += tref_accept(&R, xr, zr) / tref_mh_states(&R);
            }
        }
        for (int64_t r = 0; r < n; r++) {
            moved += tref_code(&R, x + r * w) != k0;
        }
        double a = ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE);
        double z = ref_binom_z(a * n, (double)n, expect);
        T_VLOG("  %s: MH accept rate %.4f, exact %.4f (z %.2f), moved %.4f\n", su->name, a, expect,
               z, moved / n);
        T_ASSERT_MSG(fabs(z) < 5.0 && a >= moved / n,
                     "%s: accept rate %.4f, exact %.4f, moved "
                     "%.4f",
                     su->name, a, expect, moved / n);
    } else {
        ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_OK);
        T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE) == 1.0);
    }
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ROWS) == (double)n);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 3.0);
    /* A failed call does not count; resets. */
    float bad = x[0];
    x[0] = NAN;
    ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_EVALUE);
    x[0] = bad;
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 3.0);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_ITERATION, 0), EBM_OK);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 0.0);
    ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_OK);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 1.0);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_ITERATION, 41), EBM_OK);
    ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, NULL), EBM_OK);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 42.0);
    /* Unknown statistics */
    T_ASSERT(isnan(ebm_sampler_stat(s, -1)) && isnan(ebm_sampler_stat(s, EBM_STAT_COUNT)));
    T_ASSERT(isnan(ebm_sampler_stat(NULL, EBM_STAT_ROWS)));
    free(x);
    free(y);
    free(met);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 5. Bad input                                                             */
/* ------------------------------------------------------------------------ */

/* Everything a failing call must leave as it was. */
typedef struct world {
    ebm_sampler_t *s;
    ebm_rng_t *rng;
    float *x, *y;
    uint8_t *met;
    size_t nx, ny, nm;
} world;

typedef struct snap {
    uint64_t x, y, met, rng[EBM_RNG_STATE_WORDS];
    double stats[EBM_STAT_COUNT]; /* compared bytewise: NaN == NaN */
} snap;

static snap take(const world *wd)
{
    snap s;
    s.x = t_checksum(wd->x, wd->nx * sizeof(float));
    s.y = t_checksum(wd->y, wd->ny * sizeof(float));
    s.met = t_checksum(wd->met, wd->nm);
    ebm_rng_get_state(wd->rng, s.rng);
    for (int k = 0; k <= EBM_STAT_ITERATION; k++) {
        s.stats[k] = ebm_sampler_stat(wd->s, k);
    }
    return s;
}

/* A failed call on wd->s: its code, a message naming each needle (NULL:
 * none), and nothing changed. */
static void expect_refused(int line, const world *wd, const snap *before, int rc, int code,
                           const char *what, const char *n1, const char *n2)
{
    snap after = take(wd);
    const char *msg = ebm_sampler_errmsg(wd->s);
    if (rc != code) {
        t_soft_fail_at(__FILE__, line, "%s returned %s, expected %s (message \"%s\")", what,
                       ebm_error_name(rc), ebm_error_name(code), msg);
        return;
    }
    if ((n1 != NULL && !t_contains(msg, n1)) || (n2 != NULL && !t_contains(msg, n2))) {
        t_soft_fail_at(__FILE__, line, "%s: message \"%s\" does not name \"%s\"%s%s", what, msg, n1,
                       n2 != NULL ? " and " : "", n2 != NULL ? n2 : "");
    }
    if (after.x != before->x || after.y != before->y || after.met != before->met) {
        t_soft_fail_at(__FILE__, line, "%s changed x, y or met", what);
    }
    if (memcmp(after.rng, before->rng, sizeof after.rng) != 0) {
        t_soft_fail_at(__FILE__, line, "%s moved the generator", what);
    }
    for (int k = 0; k <= EBM_STAT_ITERATION; k++) {
        if (memcmp(&after.stats[k], &before->stats[k], sizeof after.stats[k]) != 0) {
            t_soft_fail_at(__FILE__, line, "%s changed statistic %d (%g -> %g)", what, k,
                           before->stats[k], after.stats[k]);
        }
    }
}

#define REFUSED(code, call, n1, n2)                                                                \
    do {                                                                                           \
        snap before_ = take(&wd);                                                                  \
        int rc_ = (call);                                                                          \
        expect_refused(__LINE__, &wd, &before_, rc_, (code), #call, (n1), (n2));                   \
    } while (0)

START_TEST(bad_create)
{
    static char not_null; /* its address: a garbage *out that must become NULL */
    t_soft_reset();
    static const int64_t rbm[2] = {3, 2}, dbm[3] = {2, 3, 2};
    ebm_model_t *m = t_model(2, rbm, B_, B_);
    ebm_model_t *g3 = t_model(3, dbm, G_, B_);
    ebm_sampler_t *s = (ebm_sampler_t *)(void *)&not_null; /* garbage: must become NULL */
    int rc = ebm_sampler_create(&s, NULL, EBM_SAMPLER_GIBBS);
    CHECK(rc == EBM_ENULL, "create with a NULL model returned %s", ebm_error_name(rc));
    CHECK(s == NULL, "create with a NULL model left *out = %p (must be NULL on failure)",
          (void *)s);
    rc = ebm_sampler_create(NULL, m, EBM_SAMPLER_GIBBS);
    CHECK(rc == EBM_ENULL && t_contains(ebm_model_errmsg(m), "out"),
          "create(out NULL): %s, message \"%s\"", ebm_error_name(rc), ebm_model_errmsg(m));
    static const int kinds[] = {-1, 5, 1000};
    for (size_t i = 0; i < 3; i++) {
        char v[16];
        snprintf(v, sizeof v, "%d", kinds[i]);
        s = (ebm_sampler_t *)(void *)&not_null;
        rc = ebm_sampler_create(&s, m, kinds[i]);
        CHECK(rc == EBM_EVALUE && s == NULL, "create(kind %d): %s, out %p", kinds[i],
              ebm_error_name(rc), (void *)s);
        CHECK(t_contains(ebm_model_errmsg(m), "kind") && t_contains(ebm_model_errmsg(m), v),
              "create(kind %d): message \"%s\"", kinds[i], ebm_model_errmsg(m));
    }
    static const int lk[] = {EBM_SAMPLER_LANGEVIN, EBM_SAMPLER_GIBBS_LANGEVIN};
    for (int i = 0; i < 2; i++) {
        s = (ebm_sampler_t *)(void *)&not_null;
        rc = ebm_sampler_create(&s, m, lk[i]);
        CHECK(rc == EBM_EUNSUPPORTED && s == NULL, "create(kind %d) on an RBM: %s", lk[i],
              ebm_error_name(rc));
        CHECK(t_contains(ebm_model_errmsg(m), "LANGEVIN") && t_contains(ebm_model_errmsg(m), "GRBM"),
              "create(LANGEVIN) on an RBM: message \"%s\"", ebm_model_errmsg(m));
        s = (ebm_sampler_t *)(void *)&not_null;
        rc = ebm_sampler_create(&s, g3, lk[i]);
        CHECK(rc == EBM_EUNSUPPORTED && s == NULL, "create(kind %d) on a Gaussian DBM: %s", lk[i],
              ebm_error_name(rc));
    }
    /* The other kinds are fine on all these models. */
    static const int any[] = {EBM_SAMPLER_GIBBS, EBM_SAMPLER_MH_UNIFORM, EBM_SAMPLER_TEMPERING};
    for (int i = 0; i < 3; i++) {
        const int k = any[i];
        rc = ebm_sampler_create(&s, g3, k);
        CHECK(rc == EBM_OK && s != NULL, "create(kind %d) on a Gaussian DBM: %s", k,
              ebm_error_name(rc));
        ebm_sampler_destroy(s);
    }
    ebm_sampler_destroy(NULL);
    CHECK(ebm_sampler_errmsg(NULL) != NULL, "ebm_sampler_errmsg(NULL) is NULL");
    ck_assert_int_eq(ebm_sampler_create(&s, m, EBM_SAMPLER_GIBBS), EBM_OK);
    CHECK(ebm_sampler_errmsg(s) != NULL && ebm_sampler_errmsg(s)[0] == '\0',
          "a fresh sampler's message is \"%s\"", ebm_sampler_errmsg(s));
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
    ebm_model_destroy(g3);
    FINISH();
}
END_TEST

/* Options: codes, messages, and a refused value changes nothing (the
 * sampler then behaves exactly like a fresh one with the good settings). */
START_TEST(bad_options)
{
    t_soft_reset();
    const tref_mspec *ms = &TREF_MODELS[2];
    ebm_model_t *m = tref_make_model(ms);
    tref R;
    tref_load_model(ms, m, &R);
    const int w = R.width;
    enum { N = 64 };
    float x[N * 6], y[N * 6], x2[N * 6], y2[N * 6];
    uint8_t met[N], met2[N];
    world wd = {NULL, NULL, x, y, met, N * 6, N * 6, N};
    wd.s = t_sampler(m, EBM_SAMPLER_GIBBS, 1, EBM_COUPLING_MAXIMAL);
    wd.rng = t_rng(1, 0);
    ebm_sampler_t *s = wd.s;
    random_pairs(m, 5, N, w, x, y);
    memset(met, 7, sizeof met);
    CHECK(ebm_sampler_set_int(NULL, EBM_SAMPLER_COUPLING, 0) == EBM_ENULL, "set_int(NULL)");
    CHECK(ebm_sampler_set_double(NULL, EBM_SAMPLER_STEP_SIZE, 0.1) == EBM_ENULL,
          "set_double(NULL)");
    REFUSED(EBM_EVALUE, ebm_sampler_set_int(s, 99, 0), "99", NULL);
    REFUSED(EBM_EVALUE, ebm_sampler_set_int(s, -1, 0), "-1", NULL);
    REFUSED(EBM_EVALUE, ebm_sampler_set_double(s, 99, 0.5), "99", NULL);
    REFUSED(EBM_EVALUE, ebm_sampler_set_double(s, -3, 0.5), "-3", NULL);
    /* int options given as double, and the double option as int */
    static const char *const names[NOPT] = {
        "EBM_SAMPLER_CLAMP_LAYERS",      "EBM_SAMPLER_COUPLING",    "EBM_SAMPLER_LANGEVIN_STEPS",
        "EBM_SAMPLER_STEP_SIZE",         "EBM_SAMPLER_COSINE",      "EBM_SAMPLER_ADJUST_AFTER",
        "EBM_SAMPLER_SCALE_BY_VARIANCE", "EBM_SAMPLER_CLOSED_FORM", "EBM_SAMPLER_ITERATION",
        "EBM_SAMPLER_PRECONDITION",      "EBM_SAMPLER_ROW_OFFSET"};
    for (int o = 0; o < NOPT; o++) {
        if (o == EBM_SAMPLER_STEP_SIZE) {
            REFUSED(EBM_EVALUE, ebm_sampler_set_int(s, o, 1), names[o], "double");
        } else {
            REFUSED(EBM_EVALUE, ebm_sampler_set_double(s, o, 1.0), names[o], NULL);
        }
    }
    /* out-of-range values (the DBM has 3 layers: masks 0..7) */
    static const struct {
        int option;
        int64_t value;
        const char *text;
    } bad[] = {
        {EBM_SAMPLER_CLAMP_LAYERS, 8, "8"},   {EBM_SAMPLER_CLAMP_LAYERS, 1 << 20, "1048576"},
        {EBM_SAMPLER_CLAMP_LAYERS, -1, "-1"}, {EBM_SAMPLER_COUPLING, 5, "5"},
        {EBM_SAMPLER_COUPLING, -1, "-1"},     {EBM_SAMPLER_COUPLING, 3, "3"},
        {EBM_SAMPLER_LANGEVIN_STEPS, 0, "0"}, {EBM_SAMPLER_LANGEVIN_STEPS, -5, "-5"},
        {EBM_SAMPLER_COSINE, 2, "2"},         {EBM_SAMPLER_COSINE, -1, "-1"},
        {EBM_SAMPLER_ADJUST_AFTER, -2, "-2"}, {EBM_SAMPLER_SCALE_BY_VARIANCE, 3, "3"},
        {EBM_SAMPLER_CLOSED_FORM, -1, "-1"},  {EBM_SAMPLER_ITERATION, -1, "-1"},
        {EBM_SAMPLER_PRECONDITION, 2, "2"},   {EBM_SAMPLER_ROW_OFFSET, -1, "-1"},
        {EBM_SAMPLER_ROW_OFFSET, INT64_C(1) << 32, "4294967296"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        REFUSED(EBM_EVALUE, ebm_sampler_set_int(s, bad[i].option, bad[i].value),
                names[bad[i].option], bad[i].text);
    }
    static const struct {
        double v;
        const char *text;
    } bad_d[] = {{0.0, "0"},        {-1.0, "-1"},       {NAN, "nan"},
                 {INFINITY, "inf"}, {-INFINITY, "inf"}, {-0.0, "0"}};
    for (size_t i = 0; i < sizeof bad_d / sizeof bad_d[0]; i++) {
        REFUSED(EBM_EVALUE, ebm_sampler_set_double(s, EBM_SAMPLER_STEP_SIZE, bad_d[i].v),
                "EBM_SAMPLER_STEP_SIZE", bad_d[i].text);
    }
    /* Values at the edges are accepted. */
    CHECK(ebm_sampler_set_int(s, EBM_SAMPLER_ADJUST_AFTER, -1) == EBM_OK, "adjust -1");
    CHECK(ebm_sampler_set_int(s, EBM_SAMPLER_LANGEVIN_STEPS, 1) == EBM_OK, "steps 1");
    CHECK(ebm_sampler_set_double(s, EBM_SAMPLER_STEP_SIZE, 1e-30) == EBM_OK, "step size 1e-30");
    CHECK(ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, 7) == EBM_OK, "clamp all layers");
    CHECK(ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, 1) == EBM_OK, "clamp 1");
    /* After all that, s behaves like a fresh sampler with clamp 1, MAXIMAL. */
    memcpy(x2, x, sizeof x);
    memcpy(y2, y, sizeof y);
    ebm_sampler_t *fresh = t_sampler(m, EBM_SAMPLER_GIBBS, 1, EBM_COUPLING_MAXIMAL);
    for (int i = 0; i < N; i++) { /* the posterior: shared visible units */
        memcpy(y + i * w, x + i * w, 2 * sizeof *x);
    }
    memcpy(y2, y, sizeof y);
    ebm_rng_t *r1 = t_rng(3, 0), *r2 = t_rng(3, 0);
    ck_assert_int_eq(ebm_sampler_coupled_step(s, r1, N, x, w, y, w, met), EBM_OK);
    ck_assert_int_eq(ebm_sampler_coupled_step(fresh, r2, N, x2, w, y2, w, met2), EBM_OK);
    CHECK(memcmp(x, x2, sizeof x) == 0 && memcmp(y, y2, sizeof y) == 0 &&
              memcmp(met, met2, sizeof met) == 0,
          "a refused option changed the sampler's behaviour");
    CHECK(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 1.0, "iteration %g",
          ebm_sampler_stat(s, EBM_STAT_ITERATION));
    ebm_rng_destroy(r1);
    ebm_rng_destroy(r2);
    ebm_sampler_destroy(fresh);
    ebm_sampler_destroy(wd.s);
    ebm_rng_destroy(wd.rng);
    ebm_model_destroy(m);
    FINISH();
}
END_TEST

/* Step and coupled step: NULLs, shapes, invalid states, kinds. */
START_TEST(bad_steps)
{
    t_soft_reset();
    const tref_mspec *ms = &TREF_MODELS[2]; /* binary DBM 2-2-2 */
    ebm_model_t *m = tref_make_model(ms);
    tref R;
    tref_load_model(ms, m, &R);
    const int w = R.width;
    enum { N = 5 };
    float x[N * 6], y[N * 6];
    uint8_t met[N];
    world wd = {NULL, NULL, x, y, met, N * 6, N * 6, N};
    wd.rng = t_rng(2, 0);
    random_pairs(m, 6, N, w, x, y);
    memset(met, 0xAB, sizeof met);
    ebm_rng_t *rng = wd.rng;
    for (int kind = EBM_SAMPLER_GIBBS; kind <= EBM_SAMPLER_MH_UNIFORM; kind++) {
        wd.s = t_sampler(m, kind, 0, EBM_COUPLING_CRN);
        ebm_sampler_t *s = wd.s;
        /* one good call first, so that the counter is not 0 */
        ck_assert_int_eq(ebm_sampler_step(s, rng, N, x, w), EBM_OK);
        CHECK(ebm_sampler_step(NULL, rng, N, x, w) == EBM_ENULL, "step(NULL sampler)");
        CHECK(ebm_sampler_coupled_step(NULL, rng, N, x, w, y, w, met) == EBM_ENULL,
              "coupled_step(NULL sampler)");
        REFUSED(EBM_ENULL, ebm_sampler_step(s, NULL, N, x, w), "rng", NULL);
        REFUSED(EBM_ENULL, ebm_sampler_step(s, rng, N, NULL, w), "x", NULL);
        REFUSED(EBM_ESHAPE, ebm_sampler_step(s, rng, -1, x, w), "n", "-1");
        REFUSED(EBM_ESHAPE, ebm_sampler_step(s, rng, N, x, w - 1), "x", "5");
        REFUSED(EBM_ESHAPE, ebm_sampler_step(s, rng, N, x, 0), "x", "0");
        REFUSED(EBM_ENULL, ebm_sampler_coupled_step(s, NULL, N, x, w, y, w, met), "rng", NULL);
        REFUSED(EBM_ENULL, ebm_sampler_coupled_step(s, rng, N, NULL, w, y, w, met), "x", NULL);
        REFUSED(EBM_ENULL, ebm_sampler_coupled_step(s, rng, N, x, w, NULL, w, met), "y", NULL);
        REFUSED(EBM_ESHAPE, ebm_sampler_coupled_step(s, rng, -3, x, w, y, w, met), "n", "-3");
        REFUSED(EBM_ESHAPE, ebm_sampler_coupled_step(s, rng, N, x, w - 1, y, w, met), "x", "5");
        REFUSED(EBM_ESHAPE, ebm_sampler_coupled_step(s, rng, N, x, w, y, w - 2, met), "y", "4");
        /* rows past stream row 2^32 - 1 */
        ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_ROW_OFFSET, UINT32_MAX - 3), EBM_OK);
        REFUSED(EBM_ESHAPE, ebm_sampler_step(s, rng, N, x, w), "EBM_SAMPLER_ROW_OFFSET",
                "4294967292");
        REFUSED(EBM_ESHAPE, ebm_sampler_coupled_step(s, rng, N, x, w, y, w, met),
                "EBM_SAMPLER_ROW_OFFSET", "4294967292");
        ck_assert_int_eq(ebm_sampler_step(s, rng, 4, x, w), EBM_OK); /* up to row 2^32 - 1 */
        ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_ROW_OFFSET, 0), EBM_OK);
        /* invalid states: 0.5 in a binary layer, NaN, -1 in a binary layer,
         * in x and in y, in the first, a middle and the last row */
        static const struct {
            int row, col;
            float v;
            const char *text;
        } inv[] = {{0, 0, 0.5f, "0.5"},
                   {2, 3, NAN, "nan"},
                   {4, 5, -1.0f, "-1"},
                   {1, 2, INFINITY, "inf"},
                   {3, 4, 2.0f, "2"}};
        for (size_t i = 0; i < sizeof inv / sizeof inv[0]; i++) {
            float *cell_x = &x[inv[i].row * w + inv[i].col],
                  *cell_y = &y[inv[i].row * w + inv[i].col];
            float keep = *cell_x;
            *cell_x = inv[i].v;
            REFUSED(EBM_EVALUE, ebm_sampler_step(s, rng, N, x, w), "x", inv[i].text);
            REFUSED(EBM_EVALUE, ebm_sampler_coupled_step(s, rng, N, x, w, y, w, met), "x",
                    inv[i].text);
            *cell_x = keep;
            keep = *cell_y;
            *cell_y = inv[i].v;
            REFUSED(EBM_EVALUE, ebm_sampler_coupled_step(s, rng, N, x, w, y, w, met), "y",
                    inv[i].text);
            *cell_y = keep;
        }
        /* n = 0 with NULL states is a no-op; met NULL is allowed */
        CHECK(ebm_sampler_step(s, rng, 0, NULL, w) == EBM_OK, "step(n = 0, x NULL)");
        CHECK(ebm_sampler_coupled_step(s, rng, 0, NULL, w, NULL, w, NULL) == EBM_OK,
              "coupled_step(n = 0)");
        CHECK(ebm_sampler_coupled_step(s, rng, N, x, w, y, w, NULL) == EBM_OK,
              "coupled_step(met NULL)");
        ebm_sampler_destroy(s);
    }
    /* spin layers: 0 is not a spin value */
    {
        const tref_mspec *sp = &TREF_MODELS[3];
        ebm_model_t *ms2 = tref_make_model(sp);
        wd.s = t_sampler(ms2, EBM_SAMPLER_GIBBS, 0, EBM_COUPLING_CRN);
        ebm_rng_t *r2 = t_rng(4, 0);
        ck_assert_int_eq(ebm_model_random_state(ms2, r2, N, x, w, NULL, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_random_state(ms2, r2, N, y, w, NULL, 0), EBM_OK);
        ebm_rng_destroy(r2);
        x[7] = 0.0f;
        REFUSED(EBM_EVALUE, ebm_sampler_step(wd.s, rng, N, x, w), "x", "spin");
        x[7] = 1.0f;
        y[11] = 0.0f;
        REFUSED(EBM_EVALUE, ebm_sampler_coupled_step(wd.s, rng, N, x, w, y, w, met), "y", "spin");
        ebm_sampler_destroy(wd.s);
        ebm_model_destroy(ms2);
    }
    /* GRBM: MH_UNIFORM with the Gaussian layer free; NaN visible; the
     * Langevin kinds have no coupled step. */
    {
        tref G;
        ebm_model_t *g = tref_make_grbm(&G);
        const int gw = G.width;
        ebm_rng_t *r2 = t_rng(8, 0);
        ck_assert_int_eq(ebm_model_random_state(g, r2, N, x, gw, NULL, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_random_state(g, r2, N, y, gw, NULL, 0), EBM_OK);
        ebm_rng_destroy(r2);
        wd.nx = wd.ny = (size_t)(N * gw);
        wd.s = t_sampler(g, EBM_SAMPLER_MH_UNIFORM, 0, EBM_COUPLING_CRN);
        REFUSED(EBM_EUNSUPPORTED, ebm_sampler_step(wd.s, rng, N, x, gw), "MH_UNIFORM", "Gaussian");
        REFUSED(EBM_EUNSUPPORTED, ebm_sampler_coupled_step(wd.s, rng, N, x, gw, y, gw, met),
                "MH_UNIFORM", "Gaussian");
        ck_assert_int_eq(ebm_sampler_set_int(wd.s, EBM_SAMPLER_CLAMP_LAYERS, 2), EBM_OK);
        REFUSED(EBM_EUNSUPPORTED, ebm_sampler_step(wd.s, rng, N, x, gw), "MH_UNIFORM", NULL);
        ck_assert_int_eq(ebm_sampler_set_int(wd.s, EBM_SAMPLER_CLAMP_LAYERS, 1), EBM_OK);
        CHECK(ebm_sampler_step(wd.s, rng, N, x, gw) == EBM_OK, "MH on the GRBM posterior: %s",
              ebm_sampler_errmsg(wd.s));
        ebm_sampler_destroy(wd.s);
        wd.s = t_sampler(g, EBM_SAMPLER_GIBBS, 0, EBM_COUPLING_CRN);
        float keep = x[gw + 1];
        x[gw + 1] = NAN;
        REFUSED(EBM_EVALUE, ebm_sampler_step(wd.s, rng, N, x, gw), "x", "nan");
        x[gw + 1] = keep;
        keep = y[2 * gw];
        y[2 * gw] = -INFINITY;
        REFUSED(EBM_EVALUE, ebm_sampler_coupled_step(wd.s, rng, N, x, gw, y, gw, met), "y", "inf");
        y[2 * gw] = keep;
        ebm_sampler_destroy(wd.s);
        for (int kind = EBM_SAMPLER_LANGEVIN; kind <= EBM_SAMPLER_GIBBS_LANGEVIN; kind++) {
            ck_assert_int_eq(ebm_sampler_create(&wd.s, g, kind), EBM_OK);
            REFUSED(EBM_EUNSUPPORTED, ebm_sampler_coupled_step(wd.s, rng, N, x, gw, y, gw, met),
                    "LANGEVIN", NULL);
            ebm_sampler_destroy(wd.s);
        }
        ebm_model_destroy(g);
    }
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
    FINISH();
}
END_TEST

/* Parameters so large that a layer input overflows float: the coupled step
 * refuses (EBM_EVALUE) and changes nothing (states, generator, statistics
 * of the last successful call), or runs and keeps valid states. */
START_TEST(huge_parameters)
{
    t_soft_reset();
    static const int64_t sizes[2] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, B_, B_);
    int64_t np = ebm_model_param_count(m);
    float *p = t_malloc((size_t)np * sizeof *p);
    for (int64_t i = 0; i < np; i++) {
        p[i] = (i % 2 ? 1 : -1) * 3e38f;
    }
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    free(p);
    enum { N = 8, W = 5 };
    float x[N * W], y[N * W];
    uint8_t met[N];
    for (int i = 0; i < N * W; i++) {
        x[i] = 1.0f;
        y[i] = (float)(i % 2);
    }
    memset(met, 0xAB, sizeof met);
    world wd = {NULL, t_rng(3, 0), x, y, met, N * W, N * W, N};
    for (int c = 0; c < 2; c++) {
        wd.s = t_sampler(m, EBM_SAMPLER_GIBBS, 0, c);
        float one[W] = {1, 1, 1, 1, 1}, two[W] = {1, 1, 1, 1, 1};
        ck_assert_int_eq(ebm_sampler_coupled_step(wd.s, wd.rng, 1, one, W, two, W, NULL), EBM_OK);
        snap before = take(&wd);
        int rc = ebm_sampler_coupled_step(wd.s, wd.rng, N, x, W, y, W, met);
        if (rc != EBM_OK) {
            expect_refused(__LINE__, &wd, &before, rc, EBM_EVALUE, "coupled step, huge params",
                           "overflow", NULL);
        } else {
            for (int i = 0; i < N * W; i++) {
                CHECK(x[i] == 0.0f || x[i] == 1.0f, "x[%d] = %g", i, (double)x[i]);
                CHECK(y[i] == 0.0f || y[i] == 1.0f, "y[%d] = %g", i, (double)y[i]);
            }
        }
        ebm_sampler_destroy(wd.s);
    }
    ebm_rng_destroy(wd.rng);
    ebm_model_destroy(m);
    FINISH();
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 6. MH energies: float GEMMs with a certified bound = the double path     */
/* ------------------------------------------------------------------------ */

/* A spin or binary DBM; `tied` makes many energies nearly equal (weights
 * about +-3000, zero biases), so that decisions fall inside the bound and go
 * to double. */
static ebm_model_t *mh_model(int units, int tied, const int64_t *sizes, int nl, uint64_t seed);

/* The same, centred with every offset 0.9 (spin: 0.8), after its biases are
 * set: the energies then carry a constant c of hundreds, which every
 * energy path must add. */
static void mh_centre(ebm_model_t *m)
{
    const int64_t w = ebm_model_state_width(m);
    float *mu = malloc((size_t)w * sizeof *mu);
    for (int64_t j = 0; j < w; j++) {
        mu[j] = ebm_model_layer_units(m, 0) == EBM_UNITS_SPIN ? 0.8f : 0.9f;
    }
    ck_assert_int_eq(ebm_model_set_offsets(m, mu, 0), EBM_OK);
    free(mu);
}

static ebm_model_t *mh_model(int units, int tied, const int64_t *sizes, int nl, uint64_t seed)
{
    ebm_model_t *m = NULL;
    char err[256];
    ck_assert_int_eq(ebm_model_create(&m, nl, sizes, units, units, err, sizeof err), EBM_OK);
    ebm_rng_t *rng = NULL;
    ck_assert_int_eq(ebm_rng_create(&rng, seed, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 1.0), EBM_OK);
    if (tied) {
        int64_t np = ebm_model_param_count(m);
        float *p = malloc((size_t)np * sizeof *p), *u = malloc((size_t)np * sizeof *u);
        ck_assert_int_eq(ebm_rng_uniform(rng, np, u), EBM_OK);
        int64_t nw = 0;
        for (int l = 1; l < nl; l++) {
            nw += sizes[l - 1] * sizes[l];
        }
        for (int64_t i = 0; i < np; i++) {
            /* +-3000 (1 + u/1000): near ties that float rounding can flip */
            float c = 3e3f * (1.0f + 1e-3f * u[(i * 7 + 3) % np]);
            p[i] = i < nw ? (u[i] < 0.5f ? -c : c) : 0.0f;
        }
        ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
        free(p);
        free(u);
    }
    ebm_rng_destroy(rng);
    return m;
}

/* |fast - double| <= bound for random and extreme states of wide models. */
START_TEST(mh_energy_bound)
{
    const int64_t sizes[3] = {300, 200, 100}, n = 200;
    for (int c = 0; c < 4; c++) {
        const int units = c % 2, centred = c / 2;
        ebm_model_t *m = mh_model(units, 0, sizes, 3, 31 + (uint64_t)units);
        if (centred) {
            mh_centre(m);
        }
        const int64_t w = ebm_model_state_width(m);
        float *x = malloc((size_t)(n * w) * sizeof *x), *t = malloc((size_t)(n * 300) * sizeof *t);
        double *ef = malloc((size_t)n * sizeof *ef), *ed = malloc((size_t)n * sizeof *ed);
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 5, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, x, w, NULL, 0), EBM_OK);
        for (int64_t k = 0; k < w; k++) {
            x[k] = 1.0f; /* row 0: every unit up */
        }
        ebm__energy_fast(m, n, x, w, ef, t);
        ck_assert_int_eq(ebm_model_energy(m, n, x, w, ed), EBM_OK);
        double bound = ebm__energy_fast_bound(m), worst = 0.0;
        for (int64_t r = 0; r < n; r++) {
            worst = fmax(worst, fabs(ef[r] - ed[r]));
        }
        ck_assert_msg(worst <= bound, "case %d: |float - double| energy %g > bound %g", c, worst,
                      bound);
        ck_assert_msg(worst > 0.0 && bound < 5.0, "case %d: error %g, bound %g", c, worst, bound);
        free(x);
        free(t);
        free(ef);
        free(ed);
        ebm_rng_destroy(rng);
        ebm_model_destroy(m);
    }
}
END_TEST

/* The model keeps its energy bounds until its parameters change: after each
 * way of changing them (set_params, axpy, init, load) the bounds are those
 * of a fresh model with the same parameters, not the old ones. */
static void fresh_bounds(const ebm_model_t *m, double *fast, double *input)
{
    const int64_t np = ebm_model_param_count(m);
    float *p = malloc((size_t)np * sizeof *p);
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    int64_t sizes[3];
    for (int64_t l = 0; l < 3; l++) {
        sizes[l] = ebm_model_layer_size(m, l);
    }
    ebm_model_t *f = NULL;
    ck_assert_int_eq(ebm_model_create(&f, 3, sizes, ebm_model_layer_units(m, 0),
                                      ebm_model_layer_units(m, 1), NULL, 0),
                     EBM_OK);
    ck_assert_int_eq(ebm_model_set_params(f, p), EBM_OK);
    ebm__energy_bounds(f, fast, input);
    ebm_model_destroy(f);
    free(p);
}

static void bounds_are_fresh(const ebm_model_t *m, double old_fast, const char *how)
{
    double fast, input, want_fast, want_input;
    ebm__energy_bounds(m, &fast, &input);
    fresh_bounds(m, &want_fast, &want_input);
    ck_assert_msg(fast == want_fast && input == want_input && fast != old_fast,
                  "after %s: bounds %.17g, %.17g; a fresh model's %.17g, %.17g; before %.17g",
                  how, fast, input, want_fast, want_input, old_fast);
}

START_TEST(energy_bounds_follow_parameters)
{
    const int64_t sizes[3] = {30, 20, 10};
    ebm_model_t *m = mh_model(EBM_UNITS_SPIN, 0, sizes, 3, 77);
    const int64_t np = ebm_model_param_count(m);
    float *p = malloc((size_t)np * sizeof *p);
    double fast, input;
    ebm__energy_bounds(m, &fast, &input); /* cached now */
    bounds_are_fresh(m, -1.0, "the first use");
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    for (int64_t i = 0; i < np; i++) {
        p[i] *= 2.0f;
    }
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    bounds_are_fresh(m, fast, "set_params");
    ebm__energy_bounds(m, &fast, &input);
    ck_assert_int_eq(ebm_model_axpy_params(m, 0.5f, p), EBM_OK);
    bounds_are_fresh(m, fast, "axpy_params");
    ebm__energy_bounds(m, &fast, &input);
    ebm_rng_t *rng = NULL;
    ck_assert_int_eq(ebm_rng_create(&rng, 8, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 0.3), EBM_OK);
    bounds_are_fresh(m, fast, "init");
    ebm__energy_bounds(m, &fast, &input);
    /* A loaded model computes its own; and a failed change keeps them. */
    const int64_t size = ebm_model_save_size(m);
    void *buf = malloc((size_t)size);
    size_t used = 0;
    ck_assert_int_eq(ebm_model_save_buffer(m, buf, (size_t)size, &used), EBM_OK);
    ebm_model_t *loaded = NULL;
    ck_assert_int_eq(ebm_model_load_buffer(&loaded, buf, used, NULL, 0), EBM_OK);
    double lfast, linput;
    ebm__energy_bounds(loaded, &lfast, &linput);
    ck_assert(lfast == fast && linput == input);
    p[0] = NAN;
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_EVALUE);
    double kept_fast, kept_input;
    ebm__energy_bounds(m, &kept_fast, &kept_input);
    ck_assert(kept_fast == fast && kept_input == input);
    ebm_model_destroy(loaded);
    ebm_rng_destroy(rng);
    free(buf);
    free(p);
    ebm_model_destroy(m);
}
END_TEST

/* E(x) from the input of layer 1 (ebm__energy_from_input, as UCD-LMI's
 * first MH step takes it from the Gibbs sweep before it) against the double
 * energies: within the from_input bound of ebm__energy_bounds for random
 * and all-up states of wide models of two and three layers with biases;
 * its twin, which forgets layer 0's bias term, is not. */
START_TEST(mh_energy_from_input_bound)
{
    const int64_t sizes[3] = {300, 200, 100}, n = 200;
    for (int c = 0; c < 8; c++) {
        const int units = c % 2 ? EBM_UNITS_SPIN : EBM_UNITS_BINARY, nl = c % 4 < 2 ? 3 : 2;
        const int centred = c >= 4;
        ebm_model_t *m = mh_model(units, 0, sizes, nl, 61 + (uint64_t)c);
        const int64_t w = ebm_model_state_width(m), np = ebm_model_param_count(m);
        float *p = malloc((size_t)np * sizeof *p);
        ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
        int64_t b0 = 0; /* layer 0's bias block */
        for (int64_t l = 0; l < nl; l++) {
            int64_t off, cols;
            ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, l, &off, NULL, &cols),
                             EBM_OK);
            b0 = l == 0 ? off : b0;
            for (int64_t j = 0; j < cols; j++) {
                p[off + j] = 0.5f + 0.01f * (float)(j % 17);
            }
        }
        ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
        if (centred) {
            mh_centre(m);
        }
        float *x = malloc((size_t)(n * w) * sizeof *x), *a = malloc((size_t)(n * 200) * sizeof *a);
        double *ef = malloc((size_t)n * sizeof *ef), *ed = malloc((size_t)n * sizeof *ed);
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 5, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, x, w, NULL, 0), EBM_OK);
        for (int64_t k = 0; k < w; k++) {
            x[k] = 1.0f; /* row 0: every unit up */
        }
        ebm__layer_input(m, 1, n, x, w, a, 200);
        ebm__energy_from_input(m, n, x, w, a, ef);
        ck_assert_int_eq(ebm_model_energy(m, n, x, w, ed), EBM_OK);
        double fast, bound, worst = 0.0, worst_twin = 0.0;
        ebm__energy_bounds(m, &fast, &bound);
        for (int64_t r = 0; r < n; r++) {
            double b0x0 = 0.0;
            for (int64_t j = 0; j < 300; j++) {
                b0x0 += (double)p[b0 + j] * (double)x[r * w + j];
            }
            worst = fmax(worst, fabs(ef[r] - ed[r]));
            worst_twin = fmax(worst_twin, fabs(ef[r] + b0x0 - ed[r]));
        }
        ck_assert_msg(worst <= bound, "case %d: |from input - double| energy %g > bound %g", c,
                      worst, bound);
        ck_assert_msg(worst > 0.0 && bound < 10.0 && bound > fast,
                      "case %d: error %g, bound %g (GEMM path's %g)", c, worst, bound, fast);
        /* (centred, b_0.x_0 is not the term: the centred twin is the energy
         * without c, caught by the bound above) */
        ck_assert_msg(centred || worst_twin > bound, "case %d: the twin without b_0 passed", c);
        free(p);
        free(x);
        free(a);
        free(ef);
        free(ed);
        ebm_rng_destroy(rng);
        ebm_model_destroy(m);
    }
}
END_TEST

/* An MH step that takes E(x) from the input of layer 1 (entry_input) moves
 * the chains as the double path does: after Gibbs steps, with the input
 * they leave, and (the tied model, whose Gibbs steps would leave no near
 * ties) at the states the MH steps reach, with the input ebm__layer_input
 * makes there, where the bound leaves decisions to double. Its twin, given
 * the input of the row after each row, does not. */
START_TEST(mh_entry_input_agrees)
{
    const int64_t sizes[3] = {12, 10, 8}, n = 2000, steps = 20;
    const int units = _i % 2 ? EBM_UNITS_SPIN : EBM_UNITS_BINARY, tied = _i % 4 / 2;
    const int centred = _i >= 4;
    ebm_model_t *m = mh_model(units, tied, sizes, 3, 70 + (uint64_t)_i);
    if (centred) {
        mh_centre(m);
    }
    const int64_t w = ebm_model_state_width(m);
    float *x[3], *a = malloc((size_t)(n * 10) * sizeof *a);
    int64_t rechecks = 0;
    for (int path = 0; path < 3; path++) { /* fast, plain, the twin */
        ebm_sampler_t *s = NULL, *g = NULL;
        ck_assert_int_eq(ebm_sampler_create(&s, m, EBM_SAMPLER_MH_UNIFORM), EBM_OK);
        ck_assert_int_eq(ebm_sampler_create(&g, m, EBM_SAMPLER_GIBBS), EBM_OK);
        ebm__sampler_set_plain(s, path == 1);
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 9, 1), EBM_OK);
        x[path] = malloc((size_t)(n * w) * sizeof *x[path]);
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, x[path], w, NULL, 0), EBM_OK);
        for (int64_t t = 0; t < steps; t++) {
            const float *input = a;
            if (tied) {
                ebm__layer_input(m, 1, n, x[path], w, a, 10);
            } else {
                ck_assert_int_eq(ebm_sampler_step(g, rng, n, x[path], w), EBM_OK);
                ck_assert_ptr_nonnull(input = ebm__sampler_hidden_input(g));
            }
            ebm__msg msg;
            const ebm__step_in in = {.n = n - 1, .x = x[path], .ldx = w, .keep = 1,
                                     .entry_input = input + (path == 2 ? 10 : 0)};
            ck_assert_int_eq(ebm__sampler_run(s, &msg, rng, &in, NULL), EBM_OK);
        }
        if (path == 0) {
            rechecks = ebm__sampler_energy_rechecks(s);
        }
        ebm_rng_destroy(rng);
        ebm_sampler_destroy(s);
        ebm_sampler_destroy(g);
    }
    const size_t bytes = (size_t)(n * w) * sizeof *x[0];
    ck_assert_msg(memcmp(x[0], x[1], bytes) == 0,
                  "case %d: E(x) from the Gibbs step's input moved the chains differently", _i);
    ck_assert_msg(memcmp(x[2], x[1], bytes) != 0, "case %d: the twin passed", _i);
    if (tied && !centred) {
        ck_assert_msg(rechecks >= 10, "case %d: only %lld decisions went to double", _i,
                      (long long)rechecks);
    }
    for (int path = 0; path < 3; path++) {
        free(x[path]);
    }
    free(a);
    ebm_model_destroy(m);
}
END_TEST

/* The same generator gives the same states with the float path as with the
 * double path, single and coupled, including the decisions the float
 * path's bound leaves to double (the tied model makes many). */
START_TEST(mh_energy_paths_agree)
{
    const int64_t sizes[3] = {12, 10, 8}, n = 2000, steps = 30;
    const int units = _i % 2 ? EBM_UNITS_SPIN : EBM_UNITS_BINARY, tied = _i % 4 / 2;
    const int centred = _i >= 4;
    ebm_model_t *m = mh_model(units, tied, sizes, 3, 40 + (uint64_t)_i);
    if (centred) {
        mh_centre(m);
    }
    const int64_t w = ebm_model_state_width(m);
    float *x[2], *y[2];
    int64_t rechecks = 0;
    for (int path = 0; path < 2; path++) {
        ebm_sampler_t *s = NULL;
        ck_assert_int_eq(ebm_sampler_create(&s, m, EBM_SAMPLER_MH_UNIFORM), EBM_OK);
        ebm__sampler_set_plain(s, path);
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 9, 1), EBM_OK);
        x[path] = malloc((size_t)(n * w) * sizeof *x[path]);
        y[path] = malloc((size_t)(n * w) * sizeof *y[path]);
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, x[path], w, NULL, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, y[path], w, NULL, 0), EBM_OK);
        for (int64_t t = 0; t < steps; t++) {
            ck_assert_int_eq(ebm_sampler_step(s, rng, n / 2, x[path], w), EBM_OK);
            ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n / 2, x[path] + n / 2 * w, w,
                                                      y[path], w, NULL), EBM_OK);
        }
        if (path == 0) {
            rechecks = ebm__sampler_energy_rechecks(s);
        } else {
            ck_assert_int_eq(ebm__sampler_energy_rechecks(s), 0);
        }
        ebm_rng_destroy(rng);
        ebm_sampler_destroy(s);
    }
    ck_assert_msg(memcmp(x[0], x[1], (size_t)(n * w) * sizeof *x[0]) == 0 &&
                      memcmp(y[0], y[1], (size_t)(n * w) * sizeof *y[0]) == 0,
                  "case %d: the float-energy path moved the chains differently", _i);
    if (tied && !centred) {
        ck_assert_msg(rechecks >= 10, "case %d: only %lld decisions went to double", _i,
                      (long long)rechecks);
    }
    for (int path = 0; path < 2; path++) {
        free(x[path]);
        free(y[path]);
    }
    ebm_model_destroy(m);
}
END_TEST

Suite *ebm_sampler_suite(void)
{
    const double slow = t_level() >= 2 ? 20.0 : 1.0;
    const t_test tests[] = {
        {"design", chi_selfcheck, 0, 30 * slow, NULL, NULL},
        {"design", kernel_design, TREF_N_MODELS, 30 * slow, NULL, NULL},
        {"step_law", step_law, 2 * TREF_N_MODELS, 60 * slow, NULL, NULL},
        {"gaussian", grbm_step, 0, 60 * slow, NULL, NULL},
        {"rows", determinism_and_rows, N_SETUPS, 30 * slow, NULL, NULL},
        {"rows", statistics, N_SETUPS, 30 * slow, NULL, NULL},
        {"rows", mh_energy_bound, 0, 30 * slow, NULL, NULL},
        {"rows", energy_bounds_follow_parameters, 0, 30 * slow, NULL, NULL},
        {"rows", mh_energy_paths_agree, 8, 30 * slow, NULL, NULL},
        {"rows", mh_energy_from_input_bound, 0, 30 * slow, NULL, NULL},
        {"rows", mh_entry_input_agrees, 8, 30 * slow, NULL, NULL},
        {"bad input", bad_create, 0, 10 * slow, NULL, NULL},
        {"bad input", bad_options, 0, 10 * slow, NULL, NULL},
        {"bad input", bad_steps, 0, 10 * slow, NULL, NULL},
        {"bad input", huge_parameters, 0, 10 * slow, NULL, NULL},
    };
    return t_suite("sampler", tests, sizeof tests / sizeof tests[0]);
}
