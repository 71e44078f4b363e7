/* Parallel tempering (EBM_SAMPLER_TEMPERING, ebm.h).
 *
 * The reference (below, from ebm.h's definition): a chain of R replicas
 * z_0 .. z_{R-1} of a tiny model; one step = each replica moved by the
 * Gibbs kernel of its tempered model (weights and biases times beta_k:
 * tref_matrix on a scaled copy), then the even pairs, then the odd pairs,
 * each pair (k, k + 1) exchanged with probability min(1, exp((beta_k -
 * beta_{k+1}) (E(z_k) - E(z_{k+1})))). Its law after one step from any
 * start is computed exactly over the S^R joint states.
 *
 * 1. design: the reference keeps prod_k p_beta_k (||pi P - pi||_1 below
 *    1e-12); its broken twin (the log ratio's sign flipped) does not.
 * 2. step law: the library's step from fixed starts, every row's joint
 *    state counted, chi-square against the reference's law (p >= 1e-6 over
 *    the starts, Bonferroni: false failure below 1e-6 per model); the
 *    twin's law must be rejected from some start, and so must the
 *    library's twin (ebm__sampler_set_twin_swap) against the true law.
 * 3. rows: a chain's result depends on neither n nor the other chains,
 *    and EBM_SAMPLER_ROW_OFFSET gives a slice the rows of the whole batch;
 *    swap counts and EBM_STAT_SWAP_RATE agree.
 * 4. a GRBM: the beta = 0 replica is N(mu, sigma^2) x uniform h exactly in
 *    the stationary law, whatever the swaps do (the swap rule uses E - E_G).
 * 5. bad input: ladders, shapes, clamps, kinds; nothing changes.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tests.h"
#include "ref.h"
#include "testing.h" /* ebm__sampler_set_twin_swap */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PT_MAXR 3

/* The tiny models: R = 3 on 8 states (512 joint states), R = 2 on 32. */
typedef struct pt_spec {
    const char *name;
    int nl;
    int64_t sizes[3];
    int units;
    uint64_t seed;
    double scale;
    int nb;
    double betas[PT_MAXR];
} pt_spec;

static const pt_spec PT_MODELS[] = {
    {"binary RBM 2x1, R = 3", 2, {2, 1, 0}, EBM_UNITS_BINARY, 71, 2.5, 3, {0.2, 0.6, 1.0}},
    {"spin RBM 2x1, R = 3", 2, {2, 1, 0}, EBM_UNITS_SPIN, 72, 1.2, 3, {0.0, 0.5, 1.0}},
    {"binary DBM 1-1-1, R = 3", 3, {1, 1, 1}, EBM_UNITS_BINARY, 73, 3.0, 3, {0.3, 0.7, 1.0}},
    {"binary RBM 3x2, R = 2", 2, {3, 2, 0}, EBM_UNITS_BINARY, 74, 2.0, 2, {0.4, 1.0}},
};
#define PT_N_MODELS ((int)(sizeof PT_MODELS / sizeof PT_MODELS[0]))

typedef struct pt_ref {
    tref R;
    int nb, S, J; /* J = S^nb joint states */
    double betas[PT_MAXR];
    double *P[PT_MAXR]; /* the tempered Gibbs kernels, S x S */
    double E[64];       /* E(state) of the model (beta = 1) */
} pt_ref;

static ebm_model_t *pt_model(const pt_spec *ps, pt_ref *pr)
{
    ebm_model_t *m = t_model(ps->nl, ps->sizes, ps->units, ps->units);
    t_random_params(m, ps->seed, ps->scale);
    tref_load(&pr->R, m, 0, NULL);
    pr->nb = ps->nb;
    pr->S = pr->R.S;
    pr->J = 1;
    for (int k = 0; k < ps->nb; k++) {
        pr->J *= pr->S;
        pr->betas[k] = ps->betas[k];
        tref T = pr->R;
        for (int l = 0; l < T.nl; l++) {
            for (int j = 0; j < TREF_MAXW; j++) {
                T.b[l][j] *= ps->betas[k];
            }
            for (int j = 0; j < 16; j++) {
                T.W[l][j] *= ps->betas[k];
            }
        }
        pr->P[k] = t_malloc((size_t)pr->S * pr->S * sizeof *pr->P[k]);
        tref_matrix(&T, EBM_SAMPLER_GIBBS, pr->P[k]);
    }
    for (int s = 0; s < pr->S; s++) {
        double x[TREF_MAXW];
        tref_row(&pr->R, s, x);
        pr->E[s] = tref_energy(&pr->R, x);
    }
    return m;
}

static void pt_ref_free(pt_ref *pr)
{
    for (int k = 0; k < pr->nb; k++) {
        free(pr->P[k]);
    }
}

/* Replica k's state of joint state j. */
static int pt_digit(const pt_ref *pr, int j, int k)
{
    for (int i = 0; i < k; i++) {
        j /= pr->S;
    }
    return j % pr->S;
}

/* The law after one step from joint start j0 (sign -1: the broken twin). */
static void pt_step_law(const pt_ref *pr, int j0, double sign, double *law, double *work)
{
    const int J = pr->J, S = pr->S;
    for (int j = 0; j < J; j++) {
        double p = 1.0;
        for (int k = 0; k < pr->nb; k++) {
            p *= pr->P[k][pt_digit(pr, j0, k) * S + pt_digit(pr, j, k)];
        }
        law[j] = p;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int k = pass; k + 1 < pr->nb; k += 2) {
            memset(work, 0, (size_t)J * sizeof *work);
            int place = 1;
            for (int i = 0; i < k; i++) {
                place *= S;
            }
            for (int j = 0; j < J; j++) {
                const int a = pt_digit(pr, j, k), b = pt_digit(pr, j, k + 1);
                const double lr = sign * (pr->betas[k] - pr->betas[k + 1]) * (pr->E[a] - pr->E[b]);
                const double acc = lr >= 0 ? 1.0 : exp(lr);
                const int swapped = j + (b - a) * place + (a - b) * place * S;
                work[swapped] += acc * law[j];
                work[j] += (1.0 - acc) * law[j];
            }
            memcpy(law, work, (size_t)J * sizeof *law);
        }
    }
}

/* The product of the replicas' laws. */
static void pt_pi(const pt_ref *pr, double *pi)
{
    double p[PT_MAXR][64];
    for (int k = 0; k < pr->nb; k++) {
        double z = 0.0;
        for (int s = 0; s < pr->S; s++) {
            p[k][s] = exp(-pr->betas[k] * pr->E[s]);
            z += p[k][s];
        }
        for (int s = 0; s < pr->S; s++) {
            p[k][s] /= z;
        }
    }
    for (int j = 0; j < pr->J; j++) {
        pi[j] = 1.0;
        for (int k = 0; k < pr->nb; k++) {
            pi[j] *= p[k][pt_digit(pr, j, k)];
        }
    }
}

static ebm_sampler_t *pt_sampler(const ebm_model_t *m, int nb, const double *betas)
{
    ebm_sampler_t *s = t_sampler(m, EBM_SAMPLER_TEMPERING, 0, EBM_COUPLING_CRN);
    ck_assert_int_eq(ebm_sampler_set_ladder(s, nb, betas), EBM_OK);
    return s;
}

/* ------------------------------------------------------------------------ */
/* 1. The reference keeps the product law                                   */
/* ------------------------------------------------------------------------ */

START_TEST(pt_design)
{
    const pt_spec *ps = &PT_MODELS[_i];
    pt_ref pr;
    ebm_model_t *m = pt_model(ps, &pr);
    const int J = pr.J;
    double *pi = t_malloc((size_t)J * sizeof *pi), *law = t_malloc((size_t)J * sizeof *law);
    double *work = t_malloc((size_t)J * sizeof *work), *next[2];
    next[0] = t_calloc((size_t)J, sizeof *next[0]);
    next[1] = t_calloc((size_t)J, sizeof *next[1]);
    pt_pi(&pr, pi);
    for (int j0 = 0; j0 < J; j0++) {
        for (int t = 0; t < 2; t++) {
            pt_step_law(&pr, j0, t ? -1.0 : 1.0, law, work);
            double total = 0.0;
            for (int j = 0; j < J; j++) {
                next[t][j] += pi[j0] * law[j];
                total += law[j];
            }
            T_ASSERT_MSG(fabs(total - 1.0) < 1e-12, "%s: a row of the kernel sums to %.17g",
                         ps->name, total);
        }
    }
    double err = 0.0, twin = 0.0;
    for (int j = 0; j < J; j++) {
        err += fabs(next[0][j] - pi[j]);
        twin += fabs(next[1][j] - pi[j]);
    }
    T_VLOG("  %s: ||pi P - pi||_1 = %.3g, the twin's %.3g\n", ps->name, err, twin);
    T_ASSERT_MSG(err <= 1e-12, "%s: the product law moves by %g", ps->name, err);
    T_ASSERT_MSG(twin > 1e-3, "%s: the twin keeps the product law (%g)", ps->name, twin);
    free(pi);
    free(law);
    free(work);
    free(next[0]);
    free(next[1]);
    pt_ref_free(&pr);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 2. The library's step follows the reference                              */
/* ------------------------------------------------------------------------ */

/* One step of s from joint start j0 on `chains` chains; counts of the joint
 * states after it. */
static void pt_count(const pt_ref *pr, ebm_sampler_t *s, ebm_rng_t *rng, int j0, int64_t chains,
                     float *x, double *cnt)
{
    const int w = pr->R.width, nb = pr->nb;
    for (int64_t c = 0; c < chains; c++) {
        for (int k = 0; k < nb; k++) {
            tref_fill_rows(&pr->R, pt_digit(pr, j0, k), 1, x + (c * nb + k) * w);
        }
    }
    ck_assert_int_eq(ebm_sampler_step(s, rng, chains * nb, x, w), EBM_OK);
    memset(cnt, 0, (size_t)pr->J * sizeof *cnt);
    for (int64_t c = 0; c < chains; c++) {
        int j = 0, place = 1;
        for (int k = 0; k < nb; k++) {
            const int code = tref_code(&pr->R, x + (c * nb + k) * w);
            T_ASSERT_MSG(code >= 0, "chain %lld left the state space", (long long)c);
            j += code * place;
            place *= pr->S;
        }
        cnt[j] += 1.0;
    }
}

START_TEST(pt_step_law_matches)
{
    const pt_spec *ps = &PT_MODELS[_i];
    pt_ref pr;
    ebm_model_t *m = pt_model(ps, &pr);
    const int J = pr.J, starts = 4;
    const int64_t chains = t_scaled(60000);
    ebm_sampler_t *s = pt_sampler(m, ps->nb, ps->betas);
    ebm_sampler_t *twin = pt_sampler(m, ps->nb, ps->betas);
    ebm__sampler_set_twin_swap(twin, 1);
    ebm_rng_t *rng = t_rng(7100 + (uint64_t)_i, 0);
    float *x = t_floats(chains * ps->nb * pr.R.width);
    double *law = t_malloc((size_t)J * sizeof *law), *twin_law = t_malloc((size_t)J * sizeof *law);
    double *work = t_malloc((size_t)J * sizeof *work), *cnt = t_malloc((size_t)J * sizeof *cnt);
    const double alpha = 1e-6 / starts;
    uint64_t rs = 99 + (uint64_t)_i;
    int twin_law_fails = 0, twin_code_fails = 0;
    double worst = 1.0;
    for (int t = 0; t < starts; t++) {
        const int j0 = (int)(t_uniform(&rs) * J);
        pt_step_law(&pr, j0, 1.0, law, work);
        pt_step_law(&pr, j0, -1.0, twin_law, work);
        pt_count(&pr, s, rng, j0, chains, x, cnt);
        char what[160];
        snprintf(what, sizeof what, "%s from joint state %d", ps->name, j0);
        ref_gof g = ref_expect_fit(what, cnt, law, J, (double)chains, alpha);
        worst = fmin(worst, g.p);
        twin_law_fails += ref_gof_fails(ref_chisq(cnt, twin_law, J, (double)chains), alpha);
        pt_count(&pr, twin, rng, j0, chains, x, cnt);
        twin_code_fails += ref_gof_fails(ref_chisq(cnt, law, J, (double)chains), alpha);
    }
    T_VLOG("  %s: %d starts x %lld chains, smallest p %.3g; the twin rule's law rejected from "
           "%d starts, the library's twin from %d\n",
           ps->name, starts, (long long)chains, worst, twin_law_fails, twin_code_fails);
    T_ASSERT_MSG(twin_law_fails > 0, "%s: the twin's law was not rejected", ps->name);
    T_ASSERT_MSG(twin_code_fails > 0, "%s: the library's twin was not rejected", ps->name);
    free(x);
    free(law);
    free(twin_law);
    free(work);
    free(cnt);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_sampler_destroy(twin);
    pt_ref_free(&pr);
    ebm_model_destroy(m);
}
END_TEST

/* Per-pair swap counts from the stationary law: chains drawn exactly from
 * prod_k p_beta_k (inverse CDF over the 8 states) on the binary RBM 2x1 with
 * a ladder of 4 (3 pairs, both passes); one step keeps that law before each
 * pass, so pair k accepts with probability E[min(1, exp((b_k - b_{k+1})
 * (E(z_k) - E(z_{k+1}))))] under independent z_k ~ p_b_k, z_{k+1} ~
 * p_b_{k+1}. Each pair's count within 5 SE (binomial; false failure about
 * 2e-6 over 3 pairs). Twin: pair k's count against pair k + 1's value. */
START_TEST(pt_pair_rates)
{
    pt_spec ps = PT_MODELS[0];
    ps.nb = 3; /* (pt_model's kernels are not used here: a ladder of 4 below) */
    pt_ref pr;
    ebm_model_t *m = pt_model(&ps, &pr);
    const double betas[4] = {0.0, 0.3, 0.65, 1.0};
    const int S = pr.S, R = 4;
    double p[4][64];
    for (int k = 0; k < R; k++) {
        double z = 0.0;
        for (int a = 0; a < S; a++) {
            p[k][a] = exp(-betas[k] * pr.E[a]);
            z += p[k][a];
        }
        for (int a = 0; a < S; a++) {
            p[k][a] /= z;
        }
    }
    double expect[3];
    for (int k = 0; k < 3; k++) {
        expect[k] = 0.0;
        for (int a = 0; a < S; a++) {
            for (int b = 0; b < S; b++) {
                const double lr = (betas[k] - betas[k + 1]) * (pr.E[a] - pr.E[b]);
                expect[k] += p[k][a] * p[k + 1][b] * (lr >= 0 ? 1.0 : exp(lr));
            }
        }
    }
    const int64_t chains = t_scaled(200000), w = pr.R.width;
    float *x = t_floats(chains * R * w);
    uint64_t rs = 404;
    for (int64_t c = 0; c < chains; c++) {
        for (int k = 0; k < R; k++) {
            double u = t_uniform(&rs), acc = 0.0;
            int a = 0;
            while (a < S - 1 && (acc += p[k][a]) <= u) {
                a++;
            }
            tref_fill_rows(&pr.R, a, 1, x + (c * R + k) * w);
        }
    }
    ebm_sampler_t *s = pt_sampler(m, R, betas);
    ebm_rng_t *rng = t_rng(405, 0);
    ck_assert_int_eq(ebm_sampler_step(s, rng, chains * R, x, w), EBM_OK);
    int64_t acc[3], prop[3];
    ck_assert_int_eq(ebm_sampler_swap_counts(s, 3, acc, prop), EBM_OK);
    double worst = 0.0, twin = INFINITY;
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(prop[k], chains);
        const double z = ref_binom_z((double)acc[k], (double)chains, expect[k]);
        T_VLOG("  pair %d: accepted %.5f, expected %.5f (z %.2f)\n", k,
               (double)acc[k] / (double)chains, expect[k], z);
        worst = fmax(worst, fabs(z));
        if (k < 2) {
            twin = fmin(twin, fabs(ref_binom_z((double)acc[k], (double)chains, expect[k + 1])));
        }
    }
    T_ASSERT_MSG(worst < 5.0, "a pair's swap rate is off by %.2f SE", worst);
    T_ASSERT_MSG(twin > 5.0, "the twin (the next pair's rate) passed: %.2f SE", twin);
    free(x);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    pt_ref_free(&pr);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 3. Rows, offsets and statistics                                          */
/* ------------------------------------------------------------------------ */

/* A DBM 3-4-2 (binary), ladder of 4; chains 0..2 of a call on 3 chains
 * equal chains 0..2 of a call on 7, and chain c of that call equals a call
 * on chain c alone with EBM_SAMPLER_ROW_OFFSET 4c; ten steps each. The
 * smaller calls run GEMMs of other shapes (docs/conventions.md, "Same
 * bits"), so a draw or a swap whose uniform falls within rounding of its
 * probability may flip and send its chain elsewhere: the 10 chains
 * compared make about 40 x 10 x 9 = 3,600 draws (about 2^-24 each) and 300
 * swap decisions (energies below 45: about 4e-6 each), so about 1.4e-3
 * chains are expected apart; one is allowed, and two fail a correct
 * sampler with probability below 1e-6. */
START_TEST(pt_rows)
{
    const int64_t sizes[3] = {3, 4, 2};
    ebm_model_t *m = t_model(3, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    t_random_params(m, 75, 1.5);
    const double betas[4] = {0.1, 0.4, 0.7, 1.0};
    const int64_t w = ebm_model_state_width(m), R = 4, steps = 10;
    float *big = t_floats(7 * R * w), *small = t_floats(3 * R * w), *one = t_floats(R * w);
    t_fill_states(m, 7 * R, big, w, 5);
    memcpy(small, big, (size_t)(3 * R * w) * sizeof *small);
    ebm_sampler_t *s = pt_sampler(m, 4, betas);
    ebm_rng_t *r1 = t_rng(31, 0), *r2 = t_rng(31, 0);
    int64_t acc[3], prop[3], total_acc = 0;
    for (int t = 0; t < steps; t++) {
        ck_assert_int_eq(ebm_sampler_step(s, r1, 7 * R, big, w), EBM_OK);
        ck_assert_int_eq(ebm_sampler_swap_counts(s, 3, acc, prop), EBM_OK);
        double a = 0.0;
        for (int k = 0; k < 3; k++) {
            ck_assert_int_eq(prop[k], 7);
            ck_assert(acc[k] >= 0 && acc[k] <= 7);
            a += (double)acc[k];
            total_acc += acc[k];
        }
        ck_assert(fabs(ebm_sampler_stat(s, EBM_STAT_SWAP_RATE) - a / 21.0) < 1e-15);
        ck_assert_int_eq(ebm_sampler_step(s, r2, 3 * R, small, w), EBM_OK);
    }
    T_ASSERT_MSG(total_acc > 0, "no swap was accepted in %lld proposals", (long long)(21 * steps));
    ck_assert_uint_eq(t_rng_hash(r1), t_rng_hash(r2));
    int apart = 0;
    for (int64_t c = 0; c < 3; c++) {
        apart += memcmp(big + c * R * w, small + c * R * w, (size_t)(R * w) * sizeof *big) != 0;
    }
    for (int64_t c = 0; c < 7; c++) {
        float *start = t_floats(7 * R * w);
        t_fill_states(m, 7 * R, start, w, 5);
        memcpy(one, start + c * R * w, (size_t)(R * w) * sizeof *one);
        ebm_rng_t *r3 = t_rng(31, 0);
        ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_ROW_OFFSET, c * R), EBM_OK);
        for (int t = 0; t < steps; t++) {
            ck_assert_int_eq(ebm_sampler_step(s, r3, R, one, w), EBM_OK);
        }
        ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_ROW_OFFSET, 0), EBM_OK);
        apart += memcmp(one, big + c * R * w, (size_t)(R * w) * sizeof *one) != 0;
        ebm_rng_destroy(r3);
        free(start);
    }
    T_VLOG("  pt rows: %d of 10 chains apart from the batch's\n", apart);
    T_ASSERT_MSG(apart <= 1, "%d of 10 chains of smaller calls (3 chains, or one at its row "
                 "offset) differ from the batch's", apart);
    /* A call on 0 rows: no swaps; other kinds report NaN. */
    ck_assert_int_eq(ebm_sampler_step(s, r1, 0, big, w), EBM_OK);
    ck_assert_int_eq(ebm_sampler_swap_counts(s, 3, acc, prop), EBM_OK);
    ck_assert(acc[0] == 0 && prop[0] == 0 && ebm_sampler_stat(s, EBM_STAT_SWAP_RATE) == 1.0);
    ebm_sampler_t *g = t_sampler(m, EBM_SAMPLER_GIBBS, 0, EBM_COUPLING_CRN);
    ck_assert_int_eq(ebm_sampler_step(g, r1, 2, big, w), EBM_OK);
    ck_assert(isnan(ebm_sampler_stat(g, EBM_STAT_SWAP_RATE)));
    ebm_sampler_destroy(g);
    free(big);
    free(small);
    free(one);
    ebm_rng_destroy(r1);
    ebm_rng_destroy(r2);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 4. A GRBM                                                                */
/* ------------------------------------------------------------------------ */

/* GRBM 2x2, ladder {0, 0.5, 1}: at beta = 0 the law is v ~ N(mu,
 * sigma^2) independent of a uniform h, whatever the swaps. After 200
 * steps of 4000 chains from N(0, 1) noise, the beta = 0 rows' v has mean
 * mu and variance sigma^2, and h's mean is 1/2, within 5 SE (false
 * failure about 1e-5 over the 6 statistics). The twin (swap sign flipped)
 * moves the model's low-energy states to beta = 0 and fails. */
static double grbm_worst_z(int twin)
{
    const int64_t sizes[2] = {2, 2};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
    t_random_params(m, 76, 1.5);
    const double betas[3] = {0.0, 0.5, 1.0};
    ebm_sampler_t *s = pt_sampler(m, 3, betas);
    ebm__sampler_set_twin_swap(s, twin);
    const int64_t chains = t_scaled(4000), n = 3 * chains, w = 4;
    float *x = t_floats(n * w);
    t_fill_states(m, n, x, w, 6);
    ebm_rng_t *rng = t_rng(77, 0);
    for (int t = 0; t < 200; t++) {
        ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_OK);
    }
    int64_t o;
    float p[16];
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    double worst = 0.0;
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, 0, &o, NULL, NULL), EBM_OK);
        const double mu = p[o + i];
        ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &o, NULL, NULL), EBM_OK);
        const double var = exp(p[o + i]);
        double *q = t_malloc((size_t)chains * sizeof *q), *q2 = t_malloc((size_t)chains * sizeof *q2);
        double *h = t_malloc((size_t)chains * sizeof *h);
        for (int64_t c = 0; c < chains; c++) {
            const double d = x[3 * c * w + i] - mu;
            q[c] = d / sqrt(var);
            q2[c] = d * d / var;
            h[c] = x[3 * c * w + 2 + i];
        }
        worst = fmax(worst, fabs(ref_z_of(q, chains, 0.0)));
        worst = fmax(worst, fabs(ref_z_of(q2, chains, 1.0)));
        worst = fmax(worst, fabs(ref_z_of(h, chains, 0.5)));
        free(q);
        free(q2);
        free(h);
    }
    free(x);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
    return worst;
}

START_TEST(pt_grbm)
{
    const double z = grbm_worst_z(0), zt = grbm_worst_z(1);
    T_VLOG("  GRBM: beta = 0 replicas, largest |z| %.2f; the twin's %.2f\n", z, zt);
    T_ASSERT_MSG(z < 5.0, "GRBM: the beta = 0 replicas are off by %.2f SE", z);
    T_ASSERT_MSG(zt > 5.0, "GRBM: the twin was not caught (%.2f SE)", zt);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 5. Bad input                                                             */
/* ------------------------------------------------------------------------ */

/* After a failed call: x, rng, the step counter (1 good step), the swap
 * counts and the swap rate are those after the last good step. */
static void pt_unchanged(const ebm_sampler_t *s, const ebm_rng_t *rng, uint64_t rng_hash,
                         const float *x, const float *saved, size_t bytes, int64_t acc0,
                         int64_t prop0, double rate0)
{
    int64_t acc, prop;
    ck_assert(memcmp(x, saved, bytes) == 0);
    ck_assert_uint_eq(t_rng_hash(rng), rng_hash);
    ck_assert_int_eq(ebm_sampler_stat(s, EBM_STAT_ITERATION), 1);
    ck_assert_int_eq(ebm_sampler_swap_counts(s, 1, &acc, &prop), EBM_OK);
    ck_assert(acc == acc0 && prop == prop0);
    ck_assert(ebm_sampler_stat(s, EBM_STAT_SWAP_RATE) == rate0);
}

START_TEST(pt_bad_input)
{
    const int64_t sizes[2] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    t_random_params(m, 78, 1.0);
    const int64_t w = 5;
    ebm_sampler_t *s = t_sampler(m, EBM_SAMPLER_TEMPERING, 0, EBM_COUPLING_CRN);
    ebm_rng_t *rng = t_rng(79, 0);
    float x[8 * 5], saved[8 * 5];
    t_fill_states(m, 8, x, w, 7);
    memcpy(saved, x, sizeof x);
    const uint64_t h0 = t_rng_hash(rng);
    int64_t acc[4];
    /* no ladder yet */
    ck_assert_int_eq(ebm_sampler_step(s, rng, 4, x, w), EBM_EVALUE);
    T_ASSERT(t_contains(ebm_sampler_errmsg(s), "ebm_sampler_set_ladder"));
    ck_assert_uint_eq(t_rng_hash(rng), h0);
    ck_assert_int_eq(ebm_sampler_swap_counts(s, 1, acc, NULL), EBM_EVALUE);
    /* bad ladders, each named, the sampler unchanged */
    struct {
        int64_t n;
        double b[4];
        int code;
        const char *says;
    } bad[] = {
        {1, {1.0}, EBM_ESHAPE, "n_betas is 1"},
        {1025, {0}, EBM_ESHAPE, "n_betas is 1025"},
        {2, {0.5, 0.9}, EBM_EVALUE, "must be 1"},
        {3, {NAN, 0.5, 1.0}, EBM_EVALUE, "betas[0] is nan"},
        {3, {0.6, 0.2, 1.0}, EBM_EVALUE, "increase"},
        {2, {-0.1, 1.0}, EBM_EVALUE, "betas[0] is -0.1"},
        {2, {0.5, 1.5}, EBM_EVALUE, "betas[1] is 1.5"},
        {2, {0.0, 1.0}, EBM_OK, ""},
        {3, {0.0, 1.0, 1.0}, EBM_EVALUE, "increase"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const int rc = ebm_sampler_set_ladder(s, bad[i].n, bad[i].b);
        T_ASSERT_MSG(rc == bad[i].code, "ladder %zu: %d, expected %d (%s)", i, rc, bad[i].code,
                     ebm_sampler_errmsg(s));
        T_ASSERT_MSG(rc == EBM_OK || t_contains(ebm_sampler_errmsg(s), bad[i].says),
                     "ladder %zu: the message \"%s\" does not say \"%s\"", i, ebm_sampler_errmsg(s),
                     bad[i].says);
    }
    ck_assert_int_eq(ebm_sampler_set_ladder(s, 2, NULL), EBM_ENULL);
    ck_assert_int_eq(ebm_sampler_set_ladder(NULL, 2, bad[7].b), EBM_ENULL);
    /* the ladder {0, 1} of bad[7] stands: 2 rows per chain. A good step,
     * then every failure below leaves its statistics and counts alone. */
    ck_assert(isnan(ebm_sampler_stat(s, EBM_STAT_SWAP_RATE)));
    ck_assert_int_eq(ebm_sampler_step(s, rng, 4, x, w), EBM_OK);
    memcpy(saved, x, sizeof x);
    const uint64_t h1 = t_rng_hash(rng);
    int64_t acc0[1], prop0[1];
    ck_assert_int_eq(ebm_sampler_swap_counts(s, 1, acc0, prop0), EBM_OK);
    ck_assert_int_eq(prop0[0], 2);
    const double rate0 = ebm_sampler_stat(s, EBM_STAT_SWAP_RATE);
    ck_assert(rate0 == (double)acc0[0] / 2.0);
    ck_assert_int_eq(ebm_sampler_set_ladder(s, 3, bad[3].b), EBM_EVALUE);
    ck_assert_int_eq(ebm_sampler_swap_counts(s, 2, acc, NULL), EBM_ESHAPE);
    ck_assert_int_eq(ebm_sampler_swap_counts(NULL, 1, acc, NULL), EBM_ENULL);
    ck_assert_int_eq(ebm_sampler_step(s, rng, 3, x, w), EBM_ESHAPE);
    T_ASSERT(t_contains(ebm_sampler_errmsg(s), "n is 3"));
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, 1), EBM_OK);
    ck_assert_int_eq(ebm_sampler_step(s, rng, 4, x, w), EBM_EUNSUPPORTED);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, 0), EBM_OK);
    uint8_t met[4];
    ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, 4, x, w, saved, w, met), EBM_EUNSUPPORTED);
    x[3] = 0.5f; /* not a binary value */
    ck_assert_int_eq(ebm_sampler_step(s, rng, 4, x, w), EBM_EVALUE);
    x[3] = saved[3];
    pt_unchanged(s, rng, h1, x, saved, sizeof x, acc0[0], prop0[0], rate0);
    /* another kind has no ladder */
    ebm_sampler_t *g = t_sampler(m, EBM_SAMPLER_GIBBS, 0, EBM_COUPLING_CRN);
    ck_assert_int_eq(ebm_sampler_set_ladder(g, 2, bad[7].b), EBM_EUNSUPPORTED);
    ck_assert_int_eq(ebm_sampler_swap_counts(g, 1, acc, NULL), EBM_EVALUE);
    ebm_sampler_destroy(g);
    /* parameters so large that a tempered input overflows: the step fails
     * and changes nothing */
    float p[11];
    ck_assert_int_eq(ebm_model_param_count(m), 11);
    for (int i = 0; i < 11; i++) {
        p[i] = 3e38f;
    }
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    for (int r = 0; r < 4; r++) {
        for (int j = 0; j < 5; j++) {
            x[r * 5 + j] = 1.0f;
        }
    }
    memcpy(saved, x, sizeof x);
    ck_assert_int_eq(ebm_sampler_step(s, rng, 4, x, w), EBM_EVALUE);
    pt_unchanged(s, rng, h1, x, saved, sizeof x, acc0[0], prop0[0], rate0);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

Suite *ebm_tempering_suite(void)
{
    const double slow = t_level() >= 2 ? 20.0 : 1.0;
    const t_test tests[] = {
        {"design", pt_design, PT_N_MODELS, 30 * slow, NULL, NULL},
        {"step_law", pt_step_law_matches, PT_N_MODELS, 120 * slow, NULL, NULL},
        {"pair rates", pt_pair_rates, 0, 60 * slow, NULL, NULL},
        {"rows", pt_rows, 0, 30 * slow, NULL, NULL},
        {"gaussian", pt_grbm, 0, 60 * slow, NULL, NULL},
        {"bad input", pt_bad_input, 0, 10 * slow, NULL, NULL},
    };
    return t_suite("tempering", tests, sizeof tests / sizeof tests[0]);
}
