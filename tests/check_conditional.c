/*
 * Conditionals of one layer given its neighbours (include/ebm.h,
 * "Conditionals of one layer given its neighbours"; tests/README.md,
 * classes 1 and 4): layer inputs, means, log-probabilities, argmins,
 * samples and random states.
 *
 * Exact: on the tiny models of ref_energy.c, for every state, every layer
 * and every candidate value of the layer, log p(x_l | rest) against the
 * brute-force conditional (the logit of each unit equals the energy
 * difference; the probabilities sum to 1), the inputs and means against
 * the energy differences and the brute-force conditional expectation, the
 * Gaussian density in closed form and as -E + F_{0}; argmins against the
 * brute-force lowest energy (ties go up); samples take the mode where the
 * logit exceeds 40 and do not depend on n; random states are valid, leave
 * clamped units alone and are roughly balanced.
 *
 * Bad input: as in check_energy.c, on the fixture models of tests.h.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tests.h"
#include "ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Exact: conditionals, argmins and draws against enumeration               */
/* ------------------------------------------------------------------------ */

START_TEST(conditionals)
{
    int mi = _i;
    for (int pi = 0; pi < REF_N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = ref_make_model(mi, pi, &R);
        uint64_t rs = 3000 + (uint64_t)pi;
        int64_t n;
        float *x = ref_all_states(&R, 3, &rs, &n);
        double *y = malloc((size_t)R.width * sizeof *y);
        for (int l = 0; l < R.nl; l++) {
            int64_t nl_ = R.n[l];
            int units = R.units[l];
            float *a = malloc((size_t)(n * nl_) * sizeof *a);
            float *mean = malloc((size_t)(n * nl_) * sizeof *mean);
            float *a2 = malloc((size_t)(n * nl_) * sizeof *a2);
            ck_assert_int_eq(ebm_model_layer_input(m, l, n, x, R.width, a, nl_), EBM_OK);
            ck_assert_int_eq(ebm_model_layer_mean(m, l, n, x, R.width, mean, nl_), EBM_OK);
            /* The values of layer l itself are ignored by layer_input. */
            float *xs = malloc((size_t)(n * R.width) * sizeof *xs);
            memcpy(xs, x, (size_t)(n * R.width) * sizeof *x);
            for (int64_t r = 0; r < n; r++) {
                float tmp[64];
                ref_rand_state(&R, &rs, tmp);
                memcpy(xs + r * R.width + R.off[l], tmp + R.off[l], (size_t)nl_ * sizeof *tmp);
            }
            ck_assert_int_eq(ebm_model_layer_input(m, l, n, xs, R.width, a2, nl_), EBM_OK);
            ck_assert_msg(memcmp(a, a2, (size_t)(n * nl_) * sizeof *a) == 0,
                          "%s layer %d: layer_input depends on layer l's own values", R.ctx, l);
            free(xs);

            if (units == EBM_UNITS_GAUSSIAN) {
                /* Conditional mean mu + W_1 x_1; log p = Gaussian density. */
                int nc = 3;
                float *xl = malloc((size_t)(n * nc * nl_) * sizeof *xl);
                float *xr = malloc((size_t)(n * nc * R.width) * sizeof *xr);
                double *lp = malloc((size_t)(n * nc) * sizeof *lp);
                for (int64_t r = 0; r < n; r++) {
                    ref_row_to_d(&R, x + r * R.width, y);
                    for (int64_t i = 0; i < nl_; i++) {
                        double mag, mref = ref_input(&R, 0, y, i, &mag);
                        ck_assert_msg(fabs(a[r * nl_ + i] - mref) <= 1e-5 * fmax(1.0, mag),
                                      "%s Gaussian input row %lld unit %lld: %.9g vs %.9g", R.ctx,
                                      (long long)r, (long long)i, a[r * nl_ + i], mref);
                        ck_assert_msg(fabs(mean[r * nl_ + i] - mref) <= 1e-5 * fmax(1.0, mag),
                                      "%s Gaussian mean", R.ctx);
                    }
                    for (int c = 0; c < nc; c++) {
                        memcpy(xr + (r * nc + c) * R.width, x + r * R.width,
                               (size_t)R.width * sizeof *x);
                        for (int64_t i = 0; i < nl_; i++) {
                            xl[(r * nc + c) * nl_ + i] = ref_rand_v(&R, i, &rs);
                        }
                    }
                }
                ck_assert_int_eq(
                    ebm_model_layer_logprob(m, 0, n * nc, xr, R.width, xl, nl_, lp), EBM_OK);
                for (int64_t r = 0; r < n * nc; r++) {
                    ref_row_to_d(&R, xr + r * R.width, y);
                    double ref = 0.0;
                    for (int64_t i = 0; i < nl_; i++) {
                        double mu = ref_input(&R, 0, y, i, NULL), s2 = ref_S2(&R, i);
                        double d = xl[r * nl_ + i] - mu;
                        ref += -0.5 * d * d / s2 - 0.5 * log(2.0 * REF_PI * s2);
                    }
                    ck_assert_msg(ref_close_rel(lp[r], ref, 1e-9),
                                  "%s Gaussian logprob row %lld: %.17g vs %.17g", R.ctx,
                                  (long long)r, lp[r], ref);
                }
                /* Brute-force check of the density: -E + integral identity:
                 * log p(v | x_1) = -E(v, x) + (Gaussian part of F_{0}). */
                for (int64_t r = 0; r < n * nc; r += 7) {
                    ref_row_to_d(&R, xr + r * R.width, y);
                    for (int64_t i = 0; i < nl_; i++) {
                        y[i] = xl[r * nl_ + i];
                    }
                    double ref = -ref_energy(&R, y) + ref_free(&R, 1u, y);
                    ck_assert_msg(ref_close_rel(lp[r], ref, 1e-9),
                                  "%s Gaussian logprob vs -E + F_{0}: %.17g vs %.17g", R.ctx, lp[r],
                                  ref);
                }
                free(xl);
                free(xr);
                free(lp);
                free(a);
                free(a2);
                free(mean);
                continue;
            }

            /* Discrete layer: enumerate the 2^n_l candidates of every row. */
            int64_t nc = 1ll << nl_;
            float *xr = malloc((size_t)(n * nc * R.width) * sizeof *xr);
            float *xl = malloc((size_t)(n * nc * nl_) * sizeof *xl);
            double *lp = malloc((size_t)(n * nc) * sizeof *lp);
            double *ec = malloc((size_t)nc * sizeof *ec);
            for (int64_t r = 0; r < n; r++) {
                for (int64_t c = 0; c < nc; c++) {
                    memcpy(xr + (r * nc + c) * R.width, x + r * R.width,
                           (size_t)R.width * sizeof *x);
                    for (int64_t j = 0; j < nl_; j++) {
                        xl[(r * nc + c) * nl_ + j] = ((c >> j) & 1) ? 1.0f : (float)ref_down(units);
                    }
                }
            }
            ck_assert_int_eq(ebm_model_layer_logprob(m, l, n * nc, xr, R.width, xl, nl_, lp),
                             EBM_OK);
            for (int64_t r = 0; r < n; r++) {
                ref_row_to_d(&R, x + r * R.width, y);
                ref_lse acc;
                ref_lse_init(&acc);
                double psum = 0.0;
                for (int64_t c = 0; c < nc; c++) {
                    for (int64_t j = 0; j < nl_; j++) {
                        y[R.off[l] + j] = xl[(r * nc + c) * nl_ + j];
                    }
                    ec[c] = ref_energy(&R, y);
                    ref_lse_add(&acc, -ec[c]);
                    psum += exp(lp[r * nc + c]);
                }
                ck_assert_msg(fabs(psum - 1.0) <= 1e-10, "%s layer %d row %lld: sum p = %.17g",
                              R.ctx, l, (long long)r, psum);
                for (int64_t c = 0; c < nc; c++) {
                    double ref = -ec[c] - ref_lse_val(&acc);
                    double got = lp[r * nc + c];
                    ck_assert_msg(ref_close_rel(got, ref, 1e-9),
                                  "%s layer %d row %lld cand %lld: logprob %.17g, reference %.17g",
                                  R.ctx, l, (long long)r, (long long)c, got, ref);
                    /* Logit of unit j: only unit j differs between c and c ^ (1 << j). */
                    for (int64_t j = 0; j < nl_; j++) {
                        if (!((c >> j) & 1)) {
                            continue;
                        }
                        int64_t cd = c ^ (1ll << j);
                        double logit = lp[r * nc + c] - lp[r * nc + cd];
                        double dref = ec[cd] - ec[c];
                        ck_assert_msg(fabs(logit - dref) <= 1e-9 * (1.0 + fabs(dref)),
                                      "%s layer %d row %lld unit %lld: logit %.17g, E(down) - "
                                      "E(up) = %.17g",
                                      R.ctx, l, (long long)r, (long long)j, logit, dref);
                    }
                }
                /* Inputs and means. */
                for (int64_t j = 0; j < nl_; j++) {
                    double mag;
                    ref_row_to_d(&R, x + r * R.width, y);
                    (void)ref_input(&R, l, y, j, &mag);
                    y[R.off[l] + j] = 1.0;
                    double eu = ref_energy(&R, y);
                    y[R.off[l] + j] = ref_down(units);
                    double ed = ref_energy(&R, y);
                    double aref = (ed - eu) / (units == EBM_UNITS_SPIN ? 2.0 : 1.0);
                    float al = a[r * nl_ + j], ml = mean[r * nl_ + j];
                    ck_assert_msg(fabs(al - aref) <= 1e-5 * fmax(1.0, mag),
                                  "%s layer %d row %lld unit %lld: input %.9g, reference %.17g",
                                  R.ctx, l, (long long)r, (long long)j, al, aref);
                    double mf = ref_mean_of_input(units, al);
                    ck_assert_msg(fabs(ml - mf) <= 1e-6,
                                  "%s layer %d: mean %.9g != f(input) %.9g", R.ctx, l, ml, mf);
                    /* Brute-force conditional expectation of unit j. */
                    double ex = 0.0;
                    for (int64_t c = 0; c < nc; c++) {
                        double v = ((c >> j) & 1) ? 1.0 : ref_down(units);
                        ex += v * exp(-ec[c] - ref_lse_val(&acc));
                    }
                    ck_assert_msg(fabs(ml - ex) <= 1e-5 + 1e-6 * mag,
                                  "%s layer %d row %lld unit %lld: mean %.9g, E[x|rest] %.12g",
                                  R.ctx, l, (long long)r, (long long)j, ml, ex);
                }
            }
            free(xr);
            free(xl);
            free(lp);
            free(ec);
            free(a);
            free(a2);
            free(mean);
        }
        free(x);
        free(y);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

START_TEST(argmin)
{
    int mi = _i;
    for (int pi = 0; pi < REF_N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = ref_make_model(mi, pi, &R);
        uint64_t rs = 4000 + (uint64_t)pi;
        int64_t n;
        float *x0 = ref_all_states(&R, 4, &rs, &n);
        int64_t ld = R.width + 2;
        float *x = malloc((size_t)(n * ld) * sizeof *x);
        double *y = malloc((size_t)R.width * sizeof *y);
        int skipped = 0;
        for (int l = 0; l < R.nl; l++) {
            for (int64_t r = 0; r < n; r++) {
                memcpy(x + r * ld, x0 + r * R.width, (size_t)R.width * sizeof *x);
                x[r * ld + R.width] = 0.25f;
                x[r * ld + R.width + 1] = 0.25f;
            }
            ck_assert_int_eq(ebm_model_layer_argmin(m, l, n, x, ld), EBM_OK);
            for (int64_t r = 0; r < n; r++) {
                const float *xr = x + r * ld, *x0r = x0 + r * R.width;
                for (int64_t k = 0; k < R.width; k++) {
                    if (k < R.off[l] || k >= R.off[l] + R.n[l]) {
                        ck_assert_msg(memcmp(&xr[k], &x0r[k], sizeof *xr) == 0,
                                      "%s argmin of layer %d changed column %lld", R.ctx, l,
                                      (long long)k);
                    }
                }
                ck_assert(xr[R.width] == 0.25f && xr[R.width + 1] == 0.25f);
                ref_row_to_d(&R, x0r, y);
                if (!ref_is_discrete(&R, l)) {
                    for (int64_t i = 0; i < R.n[l]; i++) {
                        double mag, mref = ref_input(&R, 0, y, i, &mag);
                        ck_assert_msg(fabs(xr[i] - mref) <= 1e-5 * fmax(1.0, mag),
                                      "%s Gaussian argmin %.9g, mean %.17g", R.ctx, xr[i], mref);
                    }
                    continue;
                }
                /* Brute force: the configuration of layer l with the lowest E. */
                double best = INFINITY;
                uint64_t bc = 0;
                for (uint64_t c = 0; c < (1ull << R.n[l]); c++) {
                    ref_set_from_code(&R, 1u << l, c, y);
                    double e = ref_energy(&R, y);
                    if (e < best) {
                        best = e;
                        bc = c;
                    }
                }
                ref_set_from_code(&R, 1u << l, bc, y);
                for (int64_t j = 0; j < R.n[l]; j++) {
                    double want = y[R.off[l] + j];
                    if (xr[R.off[l] + j] != want) {
                        double mag, a = ref_input(&R, l, y, j, &mag);
                        ck_assert_msg(fabs(a) <= 1e-6 * fmax(1.0, mag),
                                      "%s layer %d row %lld unit %lld: argmin %g, brute force %g "
                                      "(input %.17g)",
                                      R.ctx, l, (long long)r, (long long)j, xr[R.off[l] + j], want,
                                      a);
                        skipped++;
                    }
                }
            }
        }
        ck_assert_int_le(skipped, 2);
        free(x0);
        free(x);
        free(y);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* Ties (input exactly 0) go to 1 / +1. */
START_TEST(argmin_ties)
{
    for (int mi = 0; mi < REF_N_MODELS; mi++) {
        const ref_mspec *s = &REF_MODELS[mi];
        ebm_model_t *m = t_model(s->nl, s->sizes, s->vis, s->hid);
        ref_t R;
        ref_init(&R, m, s->name);
        uint64_t rs = 5;
        float *x = malloc((size_t)(4 * R.width) * sizeof *x);
        for (int r = 0; r < 4; r++) {
            ref_rand_state(&R, &rs, x + r * R.width);
        }
        for (int l = 0; l < R.nl; l++) {
            if (!ref_is_discrete(&R, l)) {
                continue;
            }
            ck_assert_int_eq(ebm_model_layer_argmin(m, l, 4, x, R.width), EBM_OK);
            for (int r = 0; r < 4; r++) {
                for (int64_t j = 0; j < R.n[l]; j++) {
                    ck_assert_msg(x[r * R.width + R.off[l] + j] == 1.0f,
                                  "%s zero model: argmin of a zero input is %g, not 1", s->name,
                                  x[r * R.width + R.off[l] + j]);
                }
            }
        }
        free(x);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
    /* A nonzero tie: 1x1 RBM with b_0 = 1, W = -1, h = 1: input of v is 1 - 1 = 0. */
    for (int u = 0; u < 2; u++) {
        int64_t sizes[2] = {1, 1};
        ebm_model_t *m = t_model(2, sizes, u == 0 ? B_ : S_, u == 0 ? B_ : S_);
        ref_t R;
        ref_init(&R, m, "1x1");
        float p[3];
        p[R.woff[1]] = -1.0f;
        p[R.boff[0]] = 1.0f;
        p[R.boff[1]] = 0.0f;
        ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
        float x[2] = {0, 1};
        x[R.off[0]] = (float)ref_down(R.units[0]);
        x[R.off[1]] = 1.0f;
        float a = -7.0f;
        ck_assert_int_eq(ebm_model_layer_input(m, 0, 1, x, 2, &a, 1), EBM_OK);
        ck_assert(a == 0.0f);
        ck_assert_int_eq(ebm_model_layer_argmin(m, 0, 1, x, 2), EBM_OK);
        ck_assert_msg(x[R.off[0]] == 1.0f, "tie with nonzero parameters went to %g",
                      x[R.off[0]]);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

START_TEST(random_state)
{
    int mi = _i;
    ref_t R;
    ebm_model_t *m = ref_make_model(mi, 0, &R);
    const int64_t n = 8;
    int64_t ld = R.width + 2, ldc = R.width + 1;
    float *x = malloc((size_t)(n * ld) * sizeof *x);
    float *x3 = malloc((size_t)(3 * ld) * sizeof *x3);
    uint8_t *clamp = calloc((size_t)(n * ldc), 1);
    uint64_t rs = 12000;
    for (int64_t r = 0; r < n; r++) {
        for (int64_t k = 0; k < R.width; k++) {
            clamp[r * ldc + k] = (uint8_t)(t_uniform(&rs) < 0.3 ? 1 : 0);
        }
    }
    for (int variant = 0; variant < 3; variant++) {
        const uint8_t *cl = variant == 0 ? NULL : clamp;
        int64_t lc = variant == 2 ? 0 : ldc;
        for (int64_t k = 0; k < n * ld; k++) {
            x[k] = 0.25f; /* a sentinel: never a valid binary/spin value */
        }
        memcpy(x3, x, (size_t)(3 * ld) * sizeof *x);
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 42, 7), EBM_OK);
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, x, ld, cl, lc), EBM_OK);
        ebm_rng_destroy(rng);
        ck_assert_int_eq(ebm_rng_create(&rng, 42, 7), EBM_OK);
        ck_assert_int_eq(ebm_model_random_state(m, rng, 3, x3, ld, cl, lc), EBM_OK);
        ebm_rng_destroy(rng);
        ck_assert_msg(memcmp(x, x3, (size_t)(3 * ld) * sizeof *x) == 0,
                      "%s: random_state row draws depend on n", R.ctx);
        for (int64_t r = 0; r < n; r++) {
            const uint8_t *cr = cl == NULL ? NULL : cl + (lc == 0 ? 0 : r * lc);
            for (int l = 0; l < R.nl; l++) {
                for (int64_t j = 0; j < R.n[l]; j++) {
                    int64_t k = R.off[l] + j;
                    float v = x[r * ld + k];
                    if (cr != NULL && cr[k]) {
                        ck_assert_msg(v == 0.25f, "%s: random_state wrote a clamped unit", R.ctx);
                    } else {
                        ck_assert_msg(t_unit_ok(R.units[l], v, 0),
                                      "%s: random_state wrote %g to layer %d", R.ctx, v, l);
                    }
                }
            }
            ck_assert(x[r * ld + R.width] == 0.25f && x[r * ld + R.width + 1] == 0.25f);
        }
    }
    /* Rough balance over many rows (about 6 standard errors). */
    const int64_t nb = 4096;
    float *xb = malloc((size_t)(nb * R.width) * sizeof *xb);
    ebm_rng_t *rng = NULL;
    ck_assert_int_eq(ebm_rng_create(&rng, 43, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_random_state(m, rng, nb, xb, R.width, NULL, 0), EBM_OK);
    ebm_rng_destroy(rng);
    for (int64_t k = 0; k < R.width; k++) {
        double s = 0.0, s2 = 0.0;
        for (int64_t r = 0; r < nb; r++) {
            s += xb[r * R.width + k];
            s2 += (double)xb[r * R.width + k] * xb[r * R.width + k];
        }
        int l = 0;
        while (l + 1 < R.nl && k >= R.off[l + 1]) {
            l++;
        }
        double mean = s / (double)nb;
        double expect = R.units[l] == EBM_UNITS_BINARY ? 0.5 : 0.0;
        double se = R.units[l] == EBM_UNITS_BINARY ? 0.5 / 64.0 : 1.0 / 64.0;
        ck_assert_msg(fabs(mean - expect) <= 6.0 * se, "%s column %lld: mean %g", R.ctx,
                      (long long)k, mean);
        if (R.units[l] == EBM_UNITS_GAUSSIAN) {
            ck_assert_msg(fabs(s2 / (double)nb - 1.0) <= 0.15, "%s: N(0,1) variance %g", R.ctx,
                          s2 / (double)nb);
        }
    }
    free(xb);
    free(x);
    free(x3);
    free(clamp);
    ref_free_all(&R);
    ebm_model_destroy(m);
}
END_TEST

/*
 * ebm_model_layer_sample of every layer on 8 rows (padded stride): only the
 * layer's columns move, to valid values, units with |logit| > 40 take
 * their mode, and the first 3 rows drawn alone are the same draws. Those
 * went through GEMMs of another shape (docs/conventions.md, "Same bits"):
 * Gaussian draws are compared within 1e-5 (1 + m + |v|), m the sum of the
 * mean's absolute terms (a float sum of at most 4 terms rounds within
 * 5 ulp of m); the rest bit for bit. A discrete draw flips where its
 * uniform falls within rounding of its probability: about 135 draws per
 * model, each with probability below 2e-6 (inputs of terms up to 50), so
 * one row is allowed apart and two fail with probability below 4e-8.
 */
START_TEST(layer_sample)
{
    int mi = _i;
    int apart = 0;
    double worst_rel = 0.0;
    for (int pi = 0; pi < REF_N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = ref_make_model(mi, pi, &R);
        const int64_t n = 8;
        int64_t ld = R.width + 2;
        uint64_t rs = 13000 + (uint64_t)pi;
        float *x0 = malloc((size_t)(n * ld) * sizeof *x0);
        float *x = malloc((size_t)(n * ld) * sizeof *x);
        float *x3 = malloc((size_t)(3 * ld) * sizeof *x3);
        double *y = malloc((size_t)R.width * sizeof *y);
        for (int64_t r = 0; r < n; r++) {
            ref_rand_state(&R, &rs, x0 + r * ld);
            x0[r * ld + R.width] = 0.25f;
            x0[r * ld + R.width + 1] = 0.25f;
        }
        int decided = 0;
        for (int l = 0; l < R.nl; l++) {
            memcpy(x, x0, (size_t)(n * ld) * sizeof *x);
            memcpy(x3, x0, (size_t)(3 * ld) * sizeof *x);
            ebm_rng_t *rng = NULL;
            ck_assert_int_eq(ebm_rng_create(&rng, 77, (uint64_t)l), EBM_OK);
            ck_assert_int_eq(ebm_model_layer_sample(m, l, rng, n, x, ld), EBM_OK);
            ebm_rng_destroy(rng);
            ck_assert_int_eq(ebm_rng_create(&rng, 77, (uint64_t)l), EBM_OK);
            ck_assert_int_eq(ebm_model_layer_sample(m, l, rng, 3, x3, ld), EBM_OK);
            ebm_rng_destroy(rng);
            for (int64_t r = 0; r < 3; r++) {
                ref_row_to_d(&R, x0 + r * ld, y);
                int is_apart = 0;
                for (int64_t k = 0; k < ld; k++) {
                    const float u = x[r * ld + k], v = x3[r * ld + k];
                    if (k < R.off[l] || k >= R.off[l] + R.n[l] || ref_is_discrete(&R, l)) {
                        is_apart |= memcmp(&u, &v, sizeof u) != 0;
                    } else {
                        double mag;
                        ref_input(&R, l, y, k - R.off[l], &mag);
                        const double d = fabs((double)u - (double)v);
                        is_apart |= !(d <= 1e-5 * (1.0 + mag + fabs((double)u)));
                        worst_rel = fmax(worst_rel, d / (1.0 + mag + fabs((double)u)));
                    }
                }
                apart += is_apart;
            }
            for (int64_t r = 0; r < n; r++) {
                for (int64_t k = 0; k < ld; k++) {
                    int in_l = k >= R.off[l] && k < R.off[l] + R.n[l];
                    float v = x[r * ld + k];
                    if (!in_l) {
                        ck_assert_msg(memcmp(&v, &x0[r * ld + k], sizeof v) == 0,
                                      "%s: layer_sample(%d) wrote column %lld", R.ctx, l,
                                      (long long)k);
                    } else {
                        ck_assert_msg(t_unit_ok(R.units[l], v, 0), "%s: layer_sample(%d) wrote %g",
                                      R.ctx, l, v);
                    }
                }
                /* Units with an overwhelming input must take their mode. */
                ref_row_to_d(&R, x0 + r * ld, y);
                for (int64_t j = 0; j < R.n[l] && ref_is_discrete(&R, l); j++) {
                    double a = ref_input(&R, l, y, j, NULL);
                    double logit = R.units[l] == EBM_UNITS_SPIN ? 2.0 * a : a;
                    if (fabs(logit) > 40.0) {
                        decided++;
                        float want = logit > 0 ? 1.0f : (float)ref_down(R.units[l]);
                        ck_assert_msg(x[r * ld + R.off[l] + j] == want,
                                      "%s layer %d: logit %g but sampled %g", R.ctx, l, logit,
                                      x[r * ld + R.off[l] + j]);
                    }
                }
            }
        }
        if (REF_PSETS[pi].scale >= 50.0) {
            ck_assert_int_gt(decided, 0);
        }
        free(x0);
        free(x);
        free(x3);
        free(y);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
    T_VLOG("  layer_sample %s: %d rows apart from n = 8 to n = 3; Gaussian draws within %.3g\n",
           REF_MODELS[mi].name, apart, worst_rel);
    ck_assert_msg(apart <= 1, "%s: %d rows of 3-row draws differ from the 8-row draws",
                  REF_MODELS[mi].name, apart);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Bad input                                                                */
/* ------------------------------------------------------------------------ */

typedef int (*layer_out_fn)(const ebm_model_t *, int64_t, int64_t, const float *, int64_t,
                            float *, int64_t);

START_TEST(layer_input_mean_bad_input)
{
    static const struct {
        const char *name, *out;
        layer_out_fn fn;
    } fns[2] = {{"ebm_model_layer_input", "a", ebm_model_layer_input},
                {"ebm_model_layer_mean", "mean", ebm_model_layer_mean}};
    for (int k = 0; k < 2; k++) {
        layer_out_fn fn = fns[k].fn;
        t_soft_context("%s", fns[k].name);
        float x[3 * 8], a[3 * 4];
        t_fill_states(g_dbm, 3, x, 8, 18);
        t_sentinel(a, sizeof a);
        t_snap s;
        t_snap_init(&s, T_MSG_MODEL, g_dbm, NULL);
        t_snap_track(&s, "x", x, sizeof x);
        t_snap_track(&s, fns[k].out, a, sizeof a);
        FAILS(&s, EBM_ESHAPE, "-1", NULL, fn(g_dbm, -1, 3, x, 8, a, 4));
        FAILS(&s, EBM_ESHAPE, "3", NULL, fn(g_dbm, 3, 3, x, 8, a, 4));
        FAILS(&s, EBM_ENULL, "x", NULL, fn(g_dbm, 1, 3, NULL, 8, a, 4));
        FAILS(&s, EBM_ENULL, fns[k].out, NULL, fn(g_dbm, 1, 3, x, 8, NULL, 4));
        FAILS(&s, EBM_ESHAPE, "n", "-1", fn(g_dbm, 1, -1, x, 8, a, 4));
        FAILS(&s, EBM_ESHAPE, "x", "7", fn(g_dbm, 1, 3, x, 7, a, 4));
        FAILS(&s, EBM_ESHAPE, fns[k].out, "2", fn(g_dbm, 1, 3, x, 8, a, 2));
        FAILS(&s, EBM_ESHAPE, fns[k].out, "1", fn(g_dbm, 2, 3, x, 8, a, 1));
        float keep = x[1 * 8 + 1];
        x[1 * 8 + 1] = 0.0f; /* layer 0, a neighbour of 1 */
        FAILS3(&s, EBM_EVALUE, "row 1", "unit 1", "0", fn(g_dbm, 1, 3, x, 8, a, 4));
        x[1 * 8 + 1] = keep;
        keep = x[2 * 8 + 6];
        x[2 * 8 + 6] = 0.5f; /* layer 2, a neighbour of 1 */
        FAILS3(&s, EBM_EVALUE, "row 2", "unit 6", "0.5", fn(g_dbm, 1, 3, x, 8, a, 4));
        x[2 * 8 + 6] = keep;
        /* layer 1's own values are ignored */
        x[0 * 8 + 4] = 0.5f;
        OK(g_dbm, fn(g_dbm, 1, 3, x, 8, a, 4));

        float z[2 * 5], az[2 * 3];
        t_fill_states(g_grbm, 2, z, 5, 19);
        t_sentinel(az, sizeof az);
        t_snap_init(&s, T_MSG_MODEL, g_grbm, NULL);
        t_snap_track(&s, "x", z, sizeof z);
        t_snap_track(&s, fns[k].out, az, sizeof az);
        z[1 * 5 + 0] = NAN;
        FAILS3(&s, EBM_EVALUE, "row 1", "nan", "unit 0", fn(g_grbm, 1, 2, z, 5, az, 3));
        z[1 * 5 + 0] = 1.0f;
        z[1 * 5 + 3] = 0.5f;
        FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 3", fn(g_grbm, 0, 2, z, 5, az, 3));
        z[1 * 5 + 3] = 1.0f;
        FAILS(&s, EBM_ESHAPE, "2", NULL, fn(g_grbm, 2, 2, z, 5, az, 3));
        FAILS(&s, EBM_ESHAPE, fns[k].out, "2", fn(g_grbm, 0, 2, z, 5, az, 2));
    }
    t_soft_context("%s", "");
    FINISH();
}
END_TEST

START_TEST(layer_logprob_bad_input)
{
    float x[3 * 8], xl[3 * 4];
    double lp[3];
    t_fill_states(g_dbm, 3, x, 8, 20);
    for (int r = 0; r < 3; r++) {
        for (int j = 0; j < 4; j++) {
            xl[r * 4 + j] = j == 3 ? 0.5f : ((r + j) % 2 ? 1.0f : -1.0f); /* col 3: padding */
        }
    }
    t_sentinel(lp, sizeof lp);
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_dbm, NULL);
    t_snap_track(&s, "x", x, sizeof x);
    t_snap_track(&s, "xl", xl, sizeof xl);
    t_snap_track(&s, "logp", lp, sizeof lp);
    FAILS(&s, EBM_ESHAPE, "-1", NULL, ebm_model_layer_logprob(g_dbm, -1, 3, x, 8, xl, 4, lp));
    FAILS(&s, EBM_ESHAPE, "3", NULL, ebm_model_layer_logprob(g_dbm, 3, 3, x, 8, xl, 4, lp));
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_layer_logprob(g_dbm, 1, 3, NULL, 8, xl, 4, lp));
    FAILS(&s, EBM_ENULL, "xl", NULL, ebm_model_layer_logprob(g_dbm, 1, 3, x, 8, NULL, 4, lp));
    FAILS(&s, EBM_ENULL, "logp", NULL, ebm_model_layer_logprob(g_dbm, 1, 3, x, 8, xl, 4, NULL));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_layer_logprob(g_dbm, 1, -1, x, 8, xl, 4, lp));
    FAILS(&s, EBM_ESHAPE, "x", "7", ebm_model_layer_logprob(g_dbm, 1, 3, x, 7, xl, 4, lp));
    FAILS(&s, EBM_ESHAPE, "xl", "2", ebm_model_layer_logprob(g_dbm, 1, 3, x, 8, xl, 2, lp));
    FAILS(&s, EBM_ESHAPE, "xl", "1", ebm_model_layer_logprob(g_dbm, 2, 3, x, 8, xl, 1, lp));
    float keep = xl[1 * 4 + 2];
    xl[1 * 4 + 2] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "xl", "row 1", "0", ebm_model_layer_logprob(g_dbm, 1, 3, x, 8, xl, 4, lp));
    xl[1 * 4 + 2] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "xl", "row 1", "0.5", ebm_model_layer_logprob(g_dbm, 1, 3, x, 8, xl, 4, lp));
    xl[1 * 4 + 2] = keep;
    keep = x[2 * 8 + 0];
    x[2 * 8 + 0] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "row 2", "unit 0", "0", ebm_model_layer_logprob(g_dbm, 1, 3, x, 8, xl, 4, lp));
    x[2 * 8 + 0] = keep;
    x[1 * 8 + 3] = 0.5f; /* layer 1 in x is not read */
    OK(g_dbm, ebm_model_layer_logprob(g_dbm, 1, 3, x, 8, xl, 4, lp));

    /* RBM: 0.5 in a binary candidate at row 1 unit 2 */
    float xr[2 * 7], xlr[2 * 4] = {0, 1, 1, 0, 1, 0, 0.5f, 1};
    double lr[2];
    t_fill_states(g_rbm, 2, xr, 7, 21);
    t_sentinel(lr, sizeof lr);
    t_snap_init(&s, T_MSG_MODEL, g_rbm, NULL);
    t_snap_track(&s, "xl", xlr, sizeof xlr);
    t_snap_track(&s, "logp", lr, sizeof lr);
    FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 2", ebm_model_layer_logprob(g_rbm, 0, 2, xr, 7, xlr, 4, lr));
    FAILS(&s, EBM_ESHAPE, "2", NULL, ebm_model_layer_logprob(g_rbm, 2, 2, xr, 7, xlr, 4, lr));

    /* GRBM: non-finite Gaussian candidates */
    float xg[2 * 5], xlg[2 * 3] = {0.1f, 0.2f, 0.3f, 0.4f, NAN, 0.6f};
    double lg[2];
    t_fill_states(g_grbm, 2, xg, 5, 22);
    t_sentinel(lg, sizeof lg);
    t_snap_init(&s, T_MSG_MODEL, g_grbm, NULL);
    t_snap_track(&s, "xl", xlg, sizeof xlg);
    t_snap_track(&s, "logp", lg, sizeof lg);
    FAILS3(&s, EBM_EVALUE, "xl", "row 1", "nan", ebm_model_layer_logprob(g_grbm, 0, 2, xg, 5, xlg, 3, lg));
    xlg[4] = -INFINITY;
    FAILS3(&s, EBM_EVALUE, "xl", "row 1", "inf", ebm_model_layer_logprob(g_grbm, 0, 2, xg, 5, xlg, 3, lg));
    xlg[4] = 0.5f;
    xg[3] = 0.5f; /* hidden neighbour of layer 0 */
    FAILS3(&s, EBM_EVALUE, "row 0", "0.5", "unit 3", ebm_model_layer_logprob(g_grbm, 0, 2, xg, 5, xlg, 3, lg));
    FINISH();
}
END_TEST

START_TEST(layer_argmin_sample_bad_input)
{
    float x[3 * 8];
    t_fill_states(g_dbm, 3, x, 8, 23);
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_dbm, g_rng);
    t_snap_track(&s, "x", x, sizeof x);
    t_soft_context("%s", "ebm_model_layer_argmin");
    FAILS(&s, EBM_ESHAPE, "-1", NULL, ebm_model_layer_argmin(g_dbm, -1, 3, x, 8));
    FAILS(&s, EBM_ESHAPE, "3", NULL, ebm_model_layer_argmin(g_dbm, 3, 3, x, 8));
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_layer_argmin(g_dbm, 1, 3, NULL, 8));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_layer_argmin(g_dbm, 1, -1, x, 8));
    FAILS(&s, EBM_ESHAPE, "x", "7", ebm_model_layer_argmin(g_dbm, 1, 3, x, 7));
    float keep = x[2 * 8 + 2];
    x[2 * 8 + 2] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "row 2", "unit 2", "0", ebm_model_layer_argmin(g_dbm, 1, 3, x, 8));
    t_soft_context("%s", "ebm_model_layer_sample");
    FAILS3(&s, EBM_EVALUE, "row 2", "unit 2", "0", ebm_model_layer_sample(g_dbm, 1, g_rng, 3, x, 8));
    x[2 * 8 + 2] = keep;
    FAILS(&s, EBM_ENULL, "rng", NULL, ebm_model_layer_sample(g_dbm, 1, NULL, 3, x, 8));
    FAILS(&s, EBM_ESHAPE, "-1", NULL, ebm_model_layer_sample(g_dbm, -1, g_rng, 3, x, 8));
    FAILS(&s, EBM_ESHAPE, "3", NULL, ebm_model_layer_sample(g_dbm, 3, g_rng, 3, x, 8));
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_layer_sample(g_dbm, 1, g_rng, 3, NULL, 8));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_layer_sample(g_dbm, 1, g_rng, -1, x, 8));
    FAILS(&s, EBM_ESHAPE, "x", "7", ebm_model_layer_sample(g_dbm, 1, g_rng, 3, x, 7));

    /* GRBM: a NaN visible value poisons the hidden conditional; a 0.5 hidden
     * value the visible one. */
    float z[2 * 5];
    t_fill_states(g_grbm, 2, z, 5, 24);
    t_snap_init(&s, T_MSG_MODEL, g_grbm, g_rng);
    t_snap_track(&s, "x", z, sizeof z);
    z[1 * 5 + 2] = NAN;
    FAILS3(&s, EBM_EVALUE, "row 1", "nan", "unit 2", ebm_model_layer_sample(g_grbm, 1, g_rng, 2, z, 5));
    t_soft_context("%s", "ebm_model_layer_argmin");
    FAILS3(&s, EBM_EVALUE, "row 1", "nan", "unit 2", ebm_model_layer_argmin(g_grbm, 1, 2, z, 5));
    z[1 * 5 + 2] = 0.0f;
    z[4] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 0", "0.5", "unit 4", ebm_model_layer_argmin(g_grbm, 0, 2, z, 5));
    t_soft_context("%s", "ebm_model_layer_sample");
    FAILS3(&s, EBM_EVALUE, "row 0", "0.5", "unit 4", ebm_model_layer_sample(g_grbm, 0, g_rng, 2, z, 5));
    t_soft_context("%s", "");
    /* layer l's own values are replaced, so they may be anything */
    z[5] = NAN;
    OK(g_grbm, ebm_model_layer_sample(g_grbm, 0, g_rng, 1, z + 5, 5));
    x[1 * 8 + 4] = 0.5f;
    OK(g_dbm, ebm_model_layer_argmin(g_dbm, 1, 3, x, 8));
    FINISH();
}
END_TEST

START_TEST(random_state_bad_input)
{
    float x[3 * 9];
    uint8_t clamp[3 * 9];
    t_fill_states(g_rbm, 3, x, 9, 25);
    memset(clamp, 0, sizeof clamp);
    clamp[1] = 1;
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_rbm, g_rng);
    t_snap_track(&s, "x", x, sizeof x);
    FAILS(&s, EBM_ENULL, "rng", NULL, ebm_model_random_state(g_rbm, NULL, 3, x, 9, NULL, 0));
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_random_state(g_rbm, g_rng, 3, NULL, 9, NULL, 0));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_random_state(g_rbm, g_rng, -1, x, 9, NULL, 0));
    FAILS(&s, EBM_ESHAPE, "x", "6", ebm_model_random_state(g_rbm, g_rng, 3, x, 6, NULL, 0));
    FAILS(&s, EBM_ESHAPE, "x", "-9", ebm_model_random_state(g_rbm, g_rng, 3, x, -9, NULL, 0));
    FAILS(&s, EBM_ESHAPE, "clamp", "3", ebm_model_random_state(g_rbm, g_rng, 3, x, 9, clamp, 3));
    FAILS(&s, EBM_ESHAPE, "clamp", "6", ebm_model_random_state(g_rbm, g_rng, 3, x, 9, clamp, 6));
    FAILS(&s, EBM_ESHAPE, "clamp", "-9", ebm_model_random_state(g_rbm, g_rng, 3, x, 9, clamp, -9));
    OK(g_rbm, ebm_model_random_state(g_rbm, g_rng, 3, x, 9, clamp, 9));
    OK(g_rbm, ebm_model_random_state(g_rbm, g_rng, 3, x, 9, clamp, 0));
    FINISH();
}
END_TEST

Suite *ebm_conditional_suite(void)
{
    const t_test tests[] = {
        {"conditional", conditionals, REF_N_MODELS, 60, NULL, NULL},
        {"conditional", argmin, REF_N_MODELS, 60, NULL, NULL},
        {"conditional", argmin_ties, 0, 60, NULL, NULL},
        {"conditional", random_state, REF_N_MODELS, 60, NULL, NULL},
        {"conditional", layer_sample, REF_N_MODELS, 60, NULL, NULL},
        {"bad input", layer_input_mean_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", layer_logprob_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", layer_argmin_sample_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", random_state_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
    };
    return t_suite("conditional", tests, sizeof tests / sizeof tests[0]);
}
