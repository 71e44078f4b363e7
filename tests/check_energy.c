/*
 * Energies, free energies and their gradients (include/ebm.h, "Energies,
 * free energies and their gradients"; tests/README.md, classes 1 and 4).
 *
 * Exact: on the tiny models of ref_energy.c (RBMs, DBMs of three and four
 * layers, GRBMs, a Gaussian DBM; four parameter sets each, the last with
 * |W| up to 50) every energy, and every free energy of every valid sum-out
 * mask, against brute-force enumeration (relative error 1e-10); gradients
 * in the parameters and in the states against central differences (one
 * Richardson step) of the brute-force free energy in a double copy of the
 * parameters. The reference is checked first: its quadrature against the
 * closed form, sum_kept exp(-F_S) against Z.
 *
 * Bad input: every argument of every call on the fixture models (tests.h):
 * the documented code, a message naming the argument or value, and nothing
 * changed (parameters, states and outputs checksummed before and after).
 * The checks are soft: every broken promise is printed, the test fails at
 * its end.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tests.h"
#include "model.h" /* the lazy double weights: params_d, weights_d_valid */
#include "ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The double weights an axpy leaves stale                                  */
/* ------------------------------------------------------------------------ */

/* Energies, free energies (sum_out) and layer 0's log-probabilities of x
 * (4 rows) in double, into out (12 values); the last read W_1 in double
 * also in a GRBM, whose other paths use diag(1/sigma^2) W_1. */
static int64_t double_results(const ebm_model_t *m, uint32_t sum_out, const float *x, double *out)
{
    const int64_t w = ebm_model_state_width(m), n = 4;
    int64_t k = 0;
    ck_assert_int_eq(ebm_model_energy(m, n, x, w, out + k), EBM_OK);
    k += n;
    ck_assert_int_eq(ebm_model_free_energy(m, sum_out, n, x, w, out + k), EBM_OK);
    k += n;
    ck_assert_int_eq(ebm_model_layer_logprob(m, 0, n, x, w, x, w, out + k), EBM_OK);
    return k + n;
}

/* ebm_model_axpy_params leaves the double copy of the weights stale and the
 * first call that reads it refreshes it: after each of three steps every
 * double result equals, bit for bit, a fresh model's given the same
 * parameters by ebm_model_set_params (its copy made at once). The twin: the
 * same model with the weights of before the step (what a stale copy would
 * compute with) differs, so the comparison can fail. Binary DBM, GRBM,
 * centred RBM (its axpy reads the weights at once to centre the biases). */
START_TEST(axpy_double_weights_follow)
{
    static const struct {
        int64_t n_layers, sizes[3];
        int visible, hidden, centred;
        uint32_t sum_out;
    } cases[] = {
        {3, {6, 5, 4}, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 0, 0x5},
        {2, {5, 4, 0}, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY, 0, 0x2},
        {2, {6, 5, 0}, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 1, 0x1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ebm_model_t *m = t_model(cases[c].n_layers, cases[c].sizes, cases[c].visible,
                                 cases[c].hidden);
        ebm_model_t *fresh = t_model(cases[c].n_layers, cases[c].sizes, cases[c].visible,
                                     cases[c].hidden);
        ebm_model_t *twin = t_model(cases[c].n_layers, cases[c].sizes, cases[c].visible,
                                    cases[c].hidden);
        t_random_params(m, 40 + c, 0.5);
        const int64_t w = ebm_model_state_width(m), np = ebm_model_param_count(m), nw = m->b_off[0];
        float mu[16], x[4 * 16], before[128], q[128], g[128];
        double r1[12], r2[12], r3[12];
        t_fill_means(m, 1, mu, w, 50 + c);
        for (int64_t j = 0; j < w; j++) {
            mu[j] = cases[c].centred ? mu[j] : 0.0f;
        }
        ck_assert_int_eq(ebm_model_set_offsets(m, mu, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_set_offsets(fresh, mu, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_set_offsets(twin, mu, 0), EBM_OK);
        t_fill_states(m, 4, x, w, 60 + c);
        uint64_t st = 70 + c;
        for (int64_t i = 0; i < np; i++) {
            g[i] = (float)(t_uniform(&st) - 0.5);
        }
        double_results(m, cases[c].sum_out, x, r1); /* the copy is fresh */
        for (int step = 0; step < 3; step++) {
            ck_assert_int_eq(ebm_model_get_params(m, before), EBM_OK);
            ck_assert_int_eq(ebm_model_axpy_params(m, 0.25f, g), EBM_OK);
            ck_assert_int_eq(__atomic_load_n(&m->weights_d_valid, __ATOMIC_RELAXED),
                             cases[c].centred);
            const int64_t k = double_results(m, cases[c].sum_out, x, r1);
            ck_assert_int_eq(__atomic_load_n(&m->weights_d_valid, __ATOMIC_RELAXED), 1);
            for (int64_t i = 0; i < np; i++) {
                ck_assert(m->params_d[i] == (double)m->params[i]);
            }
            ck_assert_int_eq(ebm_model_get_params(m, q), EBM_OK);
            ck_assert_int_eq(ebm_model_set_params(fresh, q), EBM_OK);
            double_results(fresh, cases[c].sum_out, x, r2);
            ck_assert_mem_eq(r1, r2, (size_t)k * sizeof *r1);
            memcpy(q, before, (size_t)nw * sizeof *q); /* the twin: weights of before */
            ck_assert_int_eq(ebm_model_set_params(twin, q), EBM_OK);
            double_results(twin, cases[c].sum_out, x, r3);
            ck_assert_msg(memcmp(r1, r3, (size_t)k * sizeof *r1) != 0,
                          "case %zu step %d: stale weights give the same results", c, step);
        }
        ebm_model_destroy(twin);
        ebm_model_destroy(fresh);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Exact: energies and free energies against enumeration                    */
/* ------------------------------------------------------------------------ */

/* The quadrature agrees with the closed form; the brute-force F_S satisfies
 * sum_kept exp(-F_S) = Z on a discrete model (a property of the reference,
 * so that a failure elsewhere is not a bug of the reference). */
START_TEST(ref_selfcheck)
{
    for (int mi = 0; mi < REF_N_MODELS; mi++) {
        for (int pi = 0; pi < REF_N_PSETS; pi++) {
            ref_t R;
            ebm_model_t *m = ref_make_model(mi, pi, &R);
            uint64_t rs = 77;
            double *y = malloc((size_t)R.width * sizeof *y);
            float *xf = malloc((size_t)R.width * sizeof *xf);
            if (ref_gauss0(&R)) {
                for (int t = 0; t < 8; t++) {
                    ref_rand_state(&R, &rs, xf);
                    ref_row_to_d(&R, xf, y);
                    double q = ref_glogint(&R, y, REF_QUAD), c = ref_glogint(&R, y, REF_CLOSED);
                    ck_assert_msg(ref_close_rel(q, c, 1e-12), "%s quadrature %.17g closed %.17g",
                                  R.ctx, q, c);
                }
            }
            /* Input formula = energy difference (binary) or half of it (spin). */
            for (int t = 0; t < 8; t++) {
                ref_rand_state(&R, &rs, xf);
                ref_row_to_d(&R, xf, y);
                for (int l = 0; l < R.nl; l++) {
                    if (!ref_is_discrete(&R, l)) {
                        continue;
                    }
                    for (int64_t j = 0; j < R.n[l]; j++) {
                        double save = y[R.off[l] + j], mag;
                        y[R.off[l] + j] = 1.0;
                        double eu = ref_energy(&R, y);
                        y[R.off[l] + j] = ref_down(R.units[l]);
                        double ed = ref_energy(&R, y);
                        y[R.off[l] + j] = save;
                        double a = ref_input(&R, l, y, j, &mag);
                        double d = (ed - eu) / (R.units[l] == EBM_UNITS_SPIN ? 2.0 : 1.0);
                        ck_assert_msg(fabs(a - d) <= 1e-11 * fmax(1.0, mag), "%s input", R.ctx);
                    }
                }
            }
            double lz = ref_log_z(&R);
            ck_assert(isfinite(lz));
            if (!ref_gauss0(&R)) {
                /* Z by F_S for S = {1}: sum over all other layers. */
                uint32_t S = 2u;
                uint32_t kept = ref_all_layers(&R) & ~S;
                ref_lse acc;
                ref_lse_init(&acc);
                for (uint64_t code = 0; code < (1ull << ref_discrete_bits(&R, kept)); code++) {
                    ref_rand_state(&R, &rs, xf);
                    ref_row_to_d(&R, xf, y);
                    ref_set_from_code(&R, kept, code, y);
                    ref_lse_add(&acc, -ref_free(&R, S, y));
                }
                ck_assert_msg(ref_close_rel(ref_lse_val(&acc), lz, 1e-12), "%s", R.ctx);
            }
            free(y);
            free(xf);
            ref_free_all(&R);
            ebm_model_destroy(m);
        }
    }
}
END_TEST

START_TEST(energy_all_states)
{
    int mi = _i;
    for (int pi = 0; pi < REF_N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = ref_make_model(mi, pi, &R);
        uint64_t rs = 1000 + (uint64_t)pi;
        int64_t n;
        float *x = ref_all_states(&R, 6, &rs, &n);
        /* A padded copy: ldx > width. */
        int64_t ld = R.width + 3;
        float *xp = malloc((size_t)(n * ld) * sizeof *xp);
        for (int64_t r = 0; r < n; r++) {
            memcpy(xp + r * ld, x + r * R.width, (size_t)R.width * sizeof *x);
            for (int64_t k = R.width; k < ld; k++) {
                xp[r * ld + k] = NAN; /* padding is never read */
            }
        }
        double *e = malloc((size_t)n * sizeof *e), *e2 = malloc((size_t)n * sizeof *e2);
        double *y = malloc((size_t)R.width * sizeof *y);
        ck_assert_int_eq(ebm_model_energy(m, n, x, R.width, e), EBM_OK);
        ck_assert_int_eq(ebm_model_energy(m, n, xp, ld, e2), EBM_OK);
        for (int64_t r = 0; r < n; r++) {
            ref_row_to_d(&R, x + r * R.width, y);
            double ref = ref_energy(&R, y);
            ck_assert_msg(ref_close_rel(e[r], ref, 1e-10),
                          "%s row %lld: energy %.17g, reference %.17g", R.ctx, (long long)r, e[r],
                          ref);
            ck_assert_msg(e2[r] == e[r], "%s row %lld: energy depends on ldx (%.17g vs %.17g)",
                          R.ctx, (long long)r, e2[r], e[r]);
        }
        free(x);
        free(xp);
        free(e);
        free(e2);
        free(y);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

START_TEST(free_energy_all_masks)
{
    int mi = _i;
    for (int pi = 0; pi < REF_N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = ref_make_model(mi, pi, &R);
        uint64_t rs = 2000 + (uint64_t)pi;
        double lz = ref_log_z(&R);
        double *y = malloc((size_t)R.width * sizeof *y);
        int n_masks = 0;
        for (uint32_t S = 0; S <= ref_all_layers(&R); S++) {
            if (!ref_mask_valid(&R, S)) {
                continue;
            }
            n_masks++;
            uint32_t kept = ref_all_layers(&R) & ~S;
            int gkept = ref_gauss0(&R) && !(S & 1u);
            int reps = gkept ? 5 : 1;
            int64_t nk = (int64_t)(1ll << ref_discrete_bits(&R, kept)) * reps;
            float *x = malloc((size_t)(nk * R.width) * sizeof *x);
            float *x2 = malloc((size_t)(nk * R.width) * sizeof *x2);
            double *f = malloc((size_t)nk * sizeof *f), *f2 = malloc((size_t)nk * sizeof *f2);
            int64_t r = 0;
            for (uint64_t code = 0; code < (1ull << ref_discrete_bits(&R, kept)); code++) {
                for (int k = 0; k < reps; k++, r++) {
                    float *row = x + r * R.width;
                    ref_rand_state(&R, &rs, row); /* layers of S: random valid values */
                    ref_set_from_code_f(&R, kept, code, row);
                    /* The same kept values, other values in the layers of S. */
                    float *row2 = x2 + r * R.width;
                    ref_rand_state(&R, &rs, row2);
                    for (int l = 0; l < R.nl; l++) {
                        if ((kept >> l) & 1u) {
                            memcpy(row2 + R.off[l], row + R.off[l], (size_t)R.n[l] * sizeof *row);
                        }
                    }
                }
            }
            ck_assert_int_eq(ebm_model_free_energy(m, S, nk, x, R.width, f), EBM_OK);
            ck_assert_int_eq(ebm_model_free_energy(m, S, nk, x2, R.width, f2), EBM_OK);
            ref_lse acc;
            ref_lse_init(&acc);
            for (r = 0; r < nk; r++) {
                ref_row_to_d(&R, x + r * R.width, y);
                double ref = ref_free(&R, S, y);
                ck_assert_msg(ref_close_rel(f[r], ref, 1e-10),
                              "%s S=0x%x row %lld: free energy %.17g, reference %.17g", R.ctx, S,
                              (long long)r, f[r], ref);
                ck_assert_msg(ref_close_rel(f2[r], f[r], 1e-12),
                              "%s S=0x%x row %lld: F_S depends on the values of the summed-out "
                              "layers (%.17g vs %.17g)",
                              R.ctx, S, (long long)r, f2[r], f[r]);
                ref_lse_add(&acc, -f[r]);
            }
            if (!gkept) {
                ck_assert_msg(ref_close_rel(ref_lse_val(&acc), lz, 1e-10),
                              "%s S=0x%x: log sum_kept exp(-F_S) = %.17g, log Z = %.17g", R.ctx, S,
                              ref_lse_val(&acc), lz);
            }
            if (S == 0) {
                double *e = malloc((size_t)nk * sizeof *e);
                ck_assert_int_eq(ebm_model_energy(m, nk, x, R.width, e), EBM_OK);
                for (r = 0; r < nk; r++) {
                    ck_assert_msg(ref_close_rel(f[r], e[r], 1e-12), "%s: F_0 != E", R.ctx);
                }
                free(e);
            }
            free(x);
            free(x2);
            free(f);
            free(f2);
        }
        ck_assert_int_ge(n_masks, 3);

        /* Invalid masks: adjacent layers, bits >= n_layers. Nothing is written. */
        float *x = malloc((size_t)(2 * R.width) * sizeof *x);
        ref_rand_state(&R, &rs, x);
        ref_rand_state(&R, &rs, x + R.width);
        float *g = calloc((size_t)R.np, sizeof *g);
        float *o = malloc((size_t)(2 * R.width) * sizeof *o);
        double coef[2] = {1.0, -0.5};
        for (uint32_t S = 0; S <= ref_all_layers(&R); S++) {
            if (ref_mask_valid(&R, S)) {
                continue;
            }
            double f[2] = {-123.0, -123.0};
            ck_assert_int_eq(ebm_model_free_energy(m, S, 2, x, R.width, f), EBM_EVALUE);
            ck_assert(f[0] == -123.0 && f[1] == -123.0);
            ck_assert_int_eq(ebm_model_energy_grad(m, S, 2, x, R.width, coef, g), EBM_EVALUE);
        }
        for (int b = R.nl; b < 32; b++) {
            uint32_t bad[3] = {1u << b, (1u << b) | 1u, (1u << b) | 2u};
            for (int k = 0; k < 3; k++) {
                double f[2] = {-123.0, -123.0};
                ck_assert_msg(ebm_model_free_energy(m, bad[k], 2, x, R.width, f) == EBM_EVALUE,
                              "%s: sum_out 0x%x accepted", R.ctx, bad[k]);
                ck_assert(f[0] == -123.0 && f[1] == -123.0);
                ck_assert_int_eq(ebm_model_energy_grad(m, bad[k], 2, x, R.width, coef, g),
                                 EBM_EVALUE);
                ck_assert_int_eq(ebm_model_energy_grad_input(m, bad[k], R.nl - 1, 2, x, R.width,
                                                             o, R.width),
                                 EBM_EVALUE);
            }
        }
        for (int64_t k = 0; k < R.np; k++) {
            ck_assert_msg(g[k] == 0.0f, "%s: a failed energy_grad wrote grad", R.ctx);
        }
        /* grad_input for a layer in S. */
        ck_assert_int_eq(ebm_model_energy_grad_input(m, 1u, 0, 2, x, R.width, o, R.width),
                         EBM_EVALUE);
        ck_assert_int_eq(ebm_model_energy_grad_input(m, 2u, 1, 2, x, R.width, o, R.width),
                         EBM_EVALUE);
        free(x);
        free(g);
        free(o);
        free(y);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Exact: gradients against finite differences                              */
/* ------------------------------------------------------------------------ */

START_TEST(energy_grad)
{
    int mi = _i;
    for (int pi = 0; pi < REF_N_PSETS; pi++) {
        /* h = 1e-3, except for a Gaussian layer with |W| up to 50: there the
         * exponent of the Gaussian integral, c^2 / (2 sigma^2) with
         * c = (W_1 x_1)_i, is ~1e4, so are its derivatives in mu and logvar,
         * and the truncation error ~h^4 F^(5) of the Richardson difference
         * needs h = 1e-5 (the double round-off, ~1e-16 |F| / h, stays ~1000
         * times below the tolerance). */
        double fd_step = (REF_MODELS[mi].vis == G_ && REF_PSETS[pi].scale > 3.0) ? 1e-5 : 1e-3;
        ref_t R;
        ebm_model_t *m = ref_make_model(mi, pi, &R);
        uint64_t rs = 9000 + (uint64_t)pi;
        const int64_t n = 6;
        float *x = malloc((size_t)(n * R.width) * sizeof *x);
        double *yd = malloc((size_t)(n * R.width) * sizeof *yd);
        double coef[6];
        float *g1 = malloc((size_t)R.np * sizeof *g1), *g2 = malloc((size_t)R.np * sizeof *g2);
        float *g0 = malloc((size_t)R.np * sizeof *g0), *g3 = malloc((size_t)R.np * sizeof *g3);
        for (uint32_t S = 0; S <= ref_all_layers(&R); S++) {
            if (!ref_mask_valid(&R, S)) {
                continue;
            }
            double csum = 0.0;
            for (int64_t r = 0; r < n; r++) {
                ref_rand_state(&R, &rs, x + r * R.width);
                ref_row_to_d(&R, x + r * R.width, yd + r * R.width);
                double mag = 0.1 + 2.9 * t_uniform(&rs);
                coef[r] = (t_uniform(&rs) < 0.5) ? -mag : mag;
                csum += fabs(coef[r]);
            }
            memset(g1, 0, (size_t)R.np * sizeof *g1);
            int rc = ebm_model_energy_grad(m, S, n, x, R.width, coef, g1);
            ck_assert_msg(rc == EBM_OK, "%s S=0x%x energy_grad: %s (%s)", R.ctx, S,
                          ebm_error_name(rc), ebm_model_errmsg(m));
            for (int64_t k = 0; k < R.np; k++) {
                double fd = ref_fd_param(&R, k, S, n, yd, coef, fd_step);
                ck_assert_msg(fabs(g1[k] - fd) <= 1e-3 * fabs(fd) + 1e-4 * csum,
                              "%s S=0x%x param %lld: grad %.9g, finite difference %.9g", R.ctx, S,
                              (long long)k, g1[k], fd);
            }
            /* Accumulation: a second call adds the same amount. */
            memcpy(g2, g1, (size_t)R.np * sizeof *g1);
            ck_assert_int_eq(ebm_model_energy_grad(m, S, n, x, R.width, coef, g2), EBM_OK);
            for (int64_t k = 0; k < R.np; k++) {
                ck_assert_msg(fabs(g2[k] - 2.0 * g1[k]) <= 1e-6 * fabs(g1[k]) + 1e-7 * csum,
                              "%s S=0x%x param %lld: two calls give %.9g, one %.9g", R.ctx, S,
                              (long long)k, g2[k], g1[k]);
                g0[k] = (float)(t_uniform(&rs) - 0.5);
                g3[k] = g0[k];
            }
            ck_assert_int_eq(ebm_model_energy_grad(m, S, n, x, R.width, coef, g3), EBM_OK);
            for (int64_t k = 0; k < R.np; k++) {
                ck_assert_msg(fabs((g3[k] - g0[k]) - g1[k]) <=
                                  1e-6 * fabs(g1[k]) + 1e-6 + 1e-7 * csum,
                              "%s S=0x%x param %lld: grad is not accumulated (+=)", R.ctx, S,
                              (long long)k);
            }
            /* Linearity in coef: splitting the batch gives the same sum. */
            memset(g2, 0, (size_t)R.np * sizeof *g2);
            ck_assert_int_eq(ebm_model_energy_grad(m, S, 2, x, R.width, coef, g2), EBM_OK);
            ck_assert_int_eq(
                ebm_model_energy_grad(m, S, n - 2, x + 2 * R.width, R.width, coef + 2, g2),
                EBM_OK);
            for (int64_t k = 0; k < R.np; k++) {
                ck_assert_msg(fabs(g2[k] - g1[k]) <= 1e-5 * fabs(g1[k]) + 1e-5 * csum,
                              "%s S=0x%x: split batch differs", R.ctx, S);
            }
        }
        free(x);
        free(yd);
        free(g0);
        free(g1);
        free(g2);
        free(g3);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* Batches past the library's internal chunk sizes (rows are processed in
 * chunks of a few hundred / a thousand): gradients, state gradients and
 * log-likelihoods of 2100 rows against the reference. */
START_TEST(large_batches)
{
    const int which[2] = {2, 6}; /* binary DBM 3-3-2, GRBM 3x2 */
    for (int w = 0; w < 2; w++) {
        int mi = which[w];
        ref_t R;
        ebm_model_t *m = ref_make_model(mi, 0, &R);
        uint64_t rs = 15000;
        const int64_t n = 2100;
        float *x = malloc((size_t)(n * R.width) * sizeof *x);
        double *yd = malloc((size_t)(n * R.width) * sizeof *yd);
        double *coef = malloc((size_t)n * sizeof *coef);
        float *g = malloc((size_t)R.np * sizeof *g);
        double csum = 0.0;
        for (int64_t r = 0; r < n; r++) {
            ref_rand_state(&R, &rs, x + r * R.width);
            ref_row_to_d(&R, x + r * R.width, yd + r * R.width);
            coef[r] = (t_uniform(&rs) - 0.3) / (double)n;
            csum += fabs(coef[r]);
        }
        const uint32_t masks[2] = {0u, 2u};
        for (int k = 0; k < 2; k++) {
            uint32_t S = masks[k];
            memset(g, 0, (size_t)R.np * sizeof *g);
            ck_assert_int_eq(ebm_model_energy_grad(m, S, n, x, R.width, coef, g), EBM_OK);
            for (int64_t q = 0; q < R.np; q++) {
                double fd = ref_fd_param(&R, q, S, n, yd, coef, 1e-3);
                ck_assert_msg(fabs(g[q] - fd) <= 1e-3 * fabs(fd) + 1e-4 * csum,
                              "%s S=0x%x n=%lld param %lld: grad %.9g, finite difference %.9g",
                              R.ctx, S, (long long)n, (long long)q, g[q], fd);
            }
        }
        /* State gradient of layer 0 with layer 1 summed out. */
        int64_t n0 = R.n[0];
        float *out = malloc((size_t)(n * n0) * sizeof *out);
        ck_assert_int_eq(ebm_model_energy_grad_input(m, 2u, 0, n, x, R.width, out, n0), EBM_OK);
        for (int64_t r = 0; r < n; r += 7) {
            double *y = yd + r * R.width;
            for (int64_t i = 0; i < n0; i++) {
                double h = 1e-5, save = y[i];
                y[i] = save + h;
                double fp = ref_free(&R, 2u, y);
                y[i] = save - h;
                double fm = ref_free(&R, 2u, y);
                y[i] = save;
                double fd = (fp - fm) / (2.0 * h);
                ck_assert_msg(fabs(out[r * n0 + i] - fd) <= 1e-4 * (1.0 + fabs(fd)),
                              "%s n=%lld row %lld: dF/dv %.9g, finite difference %.9g", R.ctx,
                              (long long)n, (long long)r, out[r * n0 + i], fd);
            }
        }
        /* Log-likelihood of many rows. */
        float *data = malloc((size_t)(n * n0) * sizeof *data);
        double *ll = malloc((size_t)n * sizeof *ll);
        for (int64_t r = 0; r < n; r++) {
            memcpy(data + r * n0, x + r * R.width + R.off[0], (size_t)n0 * sizeof *data);
        }
        double lz = ref_log_z(&R);
        ck_assert_int_eq(ebm_model_log_likelihood(m, lz, n, data, n0, ll), EBM_OK);
        for (int64_t r = 0; r < n; r++) {
            double ref = -ref_free(&R, ref_all_layers(&R) & ~1u, yd + r * R.width) - lz;
            ck_assert_msg(ref_close_rel(ll[r], ref, 1e-9),
                          "%s n=%lld row %lld: log p(v) %.17g, %.17g", R.ctx, (long long)n,
                          (long long)r, ll[r], ref);
        }
        free(data);
        free(ll);
        free(out);
        free(x);
        free(yd);
        free(coef);
        free(g);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

START_TEST(energy_grad_input)
{
    int mi = _i;
    for (int pi = 0; pi < REF_N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = ref_make_model(mi, pi, &R);
        uint64_t rs = 10000 + (uint64_t)pi;
        const int64_t n = 6;
        float *x = malloc((size_t)(n * R.width) * sizeof *x);
        double *y = malloc((size_t)R.width * sizeof *y);
        for (int64_t r = 0; r < n; r++) {
            ref_rand_state(&R, &rs, x + r * R.width);
        }
        for (int l = 0; l < R.nl; l++) {
            int64_t nl_ = R.n[l];
            float *out = malloc((size_t)(n * (nl_ + 1)) * sizeof *out);
            float *a = malloc((size_t)(n * nl_) * sizeof *a);
            ck_assert_int_eq(ebm_model_layer_input(m, l, n, x, R.width, a, nl_), EBM_OK);
            for (uint32_t S = 0; S <= ref_all_layers(&R); S++) {
                if (!ref_mask_valid(&R, S) || ((S >> l) & 1u)) {
                    continue;
                }
                int64_t ldo = nl_ + 1;
                for (int64_t k = 0; k < n * ldo; k++) {
                    out[k] = 0.25f;
                }
                int rc = ebm_model_energy_grad_input(m, S, l, n, x, R.width, out, ldo);
                ck_assert_msg(rc == EBM_OK, "%s S=0x%x l=%d grad_input: %s (%s)", R.ctx, S, l,
                              ebm_error_name(rc), ebm_model_errmsg(m));
                int nb_in_s = ((l > 0) && ((S >> (l - 1)) & 1u)) ||
                              ((l + 1 < R.nl) && ((S >> (l + 1)) & 1u));
                for (int64_t r = 0; r < n; r++) {
                    ck_assert(out[r * ldo + nl_] == 0.25f);
                    for (int64_t j = 0; j < nl_; j++) {
                        ref_row_to_d(&R, x + r * R.width, y);
                        double mag;
                        (void)ref_input(&R, l, y, j, &mag);
                        if (!ref_is_discrete(&R, l)) {
                            mag = (fabs(y[j] - ref_B(&R, 0, j)) + mag) / ref_S2(&R, j);
                        }
                        /* dF_S/dx_lj by central differences of the reference
                         * (x_l treated as real: F_S is multilinear / smooth in it). */
                        double h = ref_is_discrete(&R, l) ? 1e-4 : 1e-5, d[2];
                        double save = y[R.off[l] + j];
                        for (int t = 0; t < 2; t++) {
                            double hh = t == 0 ? h : 0.5 * h;
                            y[R.off[l] + j] = save + hh;
                            double fp = ref_free(&R, S, y);
                            y[R.off[l] + j] = save - hh;
                            double fm = ref_free(&R, S, y);
                            d[t] = (fp - fm) / (2.0 * hh);
                        }
                        y[R.off[l] + j] = save;
                        double fd = (4.0 * d[1] - d[0]) / 3.0;
                        float got = out[r * ldo + j];
                        ck_assert_msg(fabs(got - fd) <= 1e-5 * (1.0 + mag) + 1e-4 * fabs(fd),
                                      "%s S=0x%x layer %d row %lld unit %lld: dF/dx %.9g, finite "
                                      "difference %.9g",
                                      R.ctx, S, l, (long long)r, (long long)j, got, fd);
                        if (ref_is_discrete(&R, l) && !nb_in_s) {
                            float al = a[r * nl_ + j];
                            ck_assert_msg(fabs(got + al) <= 1e-6 * (1.0 + fabs(al)),
                                          "%s layer %d: grad_input %.9g != -input %.9g", R.ctx, l,
                                          got, al);
                        }
                    }
                }
            }
            free(out);
            free(a);
        }
        free(x);
        free(y);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Bad input                                                                */
/* ------------------------------------------------------------------------ */

/* RBM 4x3, 3 rows, ldx 9 (2 padding columns). */
START_TEST(energy_bad_input)
{
    float x[3 * 9];
    double e[3];
    t_fill_states(g_rbm, 3, x, 9, 7);
    t_sentinel(e, sizeof e);
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_rbm, NULL);
    t_snap_track(&s, "x", x, sizeof x);
    t_snap_track(&s, "energy", e, sizeof e);
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_energy(g_rbm, 3, NULL, 9, e));
    FAILS(&s, EBM_ENULL, "energy", NULL, ebm_model_energy(g_rbm, 3, x, 9, NULL));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_energy(g_rbm, -1, x, 9, e));
    FAILS(&s, EBM_ESHAPE, "x", "6", ebm_model_energy(g_rbm, 3, x, 6, e));
    FAILS(&s, EBM_ESHAPE, "x", "0", ebm_model_energy(g_rbm, 3, x, 0, e));
    FAILS(&s, EBM_ESHAPE, "x", "-9", ebm_model_energy(g_rbm, 3, x, -9, e));
    float keep = x[1 * 9 + 2];
    x[1 * 9 + 2] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 2", ebm_model_energy(g_rbm, 3, x, 9, e));
    x[1 * 9 + 2] = keep;
    keep = x[2 * 9 + 5];
    x[2 * 9 + 5] = 2.0f; /* hidden */
    FAILS3(&s, EBM_EVALUE, "row 2", "2", "unit 5", ebm_model_energy(g_rbm, 3, x, 9, e));
    x[2 * 9 + 5] = -1.0f; /* a spin value in a binary layer */
    FAILS3(&s, EBM_EVALUE, "row 2", "-1", "unit 5", ebm_model_energy(g_rbm, 3, x, 9, e));
    x[2 * 9 + 5] = keep;
    keep = x[0];
    x[0] = NAN;
    FAILS(&s, EBM_EVALUE, "row 0", "nan", ebm_model_energy(g_rbm, 3, x, 9, e));
    x[0] = keep;
    /* Padding columns (0.5) are not read. */
    OK(g_rbm, ebm_model_energy(g_rbm, 3, x, 9, e));

    /* Spin DBM: 0 and 0.5 are not spins. */
    float y[2 * 8];
    double f[2];
    t_fill_states(g_dbm, 2, y, 8, 8);
    t_sentinel(f, sizeof f);
    t_snap_init(&s, T_MSG_MODEL, g_dbm, NULL);
    t_snap_track(&s, "x", y, sizeof y);
    t_snap_track(&s, "energy", f, sizeof f);
    keep = y[1 * 8 + 5];
    y[1 * 8 + 5] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "row 1", "unit 5", "0", ebm_model_energy(g_dbm, 2, y, 8, f));
    y[1 * 8 + 5] = keep;
    keep = y[0];
    y[0] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 0", "unit 0", "0.5", ebm_model_energy(g_dbm, 2, y, 8, f));
    y[0] = keep;
    FAILS(&s, EBM_ESHAPE, "x", "7", ebm_model_energy(g_dbm, 2, y, 7, f));

    /* GRBM: non-finite visible values, 0.5 in the binary hidden layer. */
    float z[2 * 5];
    t_fill_states(g_grbm, 2, z, 5, 9);
    t_sentinel(f, sizeof f);
    t_snap_init(&s, T_MSG_MODEL, g_grbm, NULL);
    t_snap_track(&s, "x", z, sizeof z);
    t_snap_track(&s, "energy", f, sizeof f);
    keep = z[1 * 5 + 1];
    z[1 * 5 + 1] = NAN;
    FAILS3(&s, EBM_EVALUE, "row 1", "nan", "unit 1", ebm_model_energy(g_grbm, 2, z, 5, f));
    z[1 * 5 + 1] = INFINITY;
    FAILS3(&s, EBM_EVALUE, "row 1", "inf", "unit 1", ebm_model_energy(g_grbm, 2, z, 5, f));
    z[1 * 5 + 1] = -INFINITY;
    FAILS3(&s, EBM_EVALUE, "row 1", "inf", "unit 1", ebm_model_energy(g_grbm, 2, z, 5, f));
    z[1 * 5 + 1] = keep;
    keep = z[4];
    z[4] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 0", "0.5", "unit 4", ebm_model_energy(g_grbm, 2, z, 5, f));
    z[4] = keep;
    OK(g_grbm, ebm_model_energy(g_grbm, 2, z, 5, f));
    FINISH();
}
END_TEST

START_TEST(free_energy_bad_input)
{
    float x[3 * 9];
    double f[3];
    t_fill_states(g_rbm, 3, x, 9, 10);
    t_sentinel(f, sizeof f);
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_rbm, NULL);
    t_snap_track(&s, "x", x, sizeof x);
    t_snap_track(&s, "f", f, sizeof f);
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_free_energy(g_rbm, 2, 3, NULL, 9, f));
    FAILS(&s, EBM_ENULL, "f", NULL, ebm_model_free_energy(g_rbm, 2, 3, x, 9, NULL));
    FAILS(&s, EBM_ESHAPE, "n", "-2", ebm_model_free_energy(g_rbm, 2, -2, x, 9, f));
    FAILS(&s, EBM_ESHAPE, "x", "6", ebm_model_free_energy(g_rbm, 2, 3, x, 6, f));
    /* sum_out: adjacent layers, bits past L */
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_rbm, 0x3, 3, x, 9, f));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_rbm, 0x4, 3, x, 9, f));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_rbm, 0x6, 3, x, 9, f));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_rbm, 0x80000000u, 3, x, 9, f));
    /* invalid values in a kept layer */
    float keep = x[1 * 9 + 2];
    x[1 * 9 + 2] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 2", ebm_model_free_energy(g_rbm, 2, 3, x, 9, f));
    FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 2", ebm_model_free_energy(g_rbm, 0, 3, x, 9, f));
    x[1 * 9 + 2] = keep;
    /* values of a summed-out layer are ignored */
    x[1 * 9 + 5] = 0.5f;
    OK(g_rbm, ebm_model_free_energy(g_rbm, 2, 3, x, 9, f));

    float y[2 * 8];
    double g[2];
    t_fill_states(g_dbm, 2, y, 8, 11);
    t_sentinel(g, sizeof g);
    t_snap_init(&s, T_MSG_MODEL, g_dbm, NULL);
    t_snap_track(&s, "x", y, sizeof y);
    t_snap_track(&s, "f", g, sizeof g);
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_dbm, 0x6, 2, y, 8, g));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_dbm, 0x3, 2, y, 8, g));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_dbm, 0x7, 2, y, 8, g));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_dbm, 0x8, 2, y, 8, g));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_dbm, 0x9, 2, y, 8, g));
    keep = y[1 * 8 + 3];
    y[1 * 8 + 3] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "row 1", "unit 3", "0", ebm_model_free_energy(g_dbm, 0x5, 2, y, 8, g));
    y[1 * 8 + 3] = keep;

    float z[2 * 5];
    t_fill_states(g_grbm, 2, z, 5, 12);
    t_snap_init(&s, T_MSG_MODEL, g_grbm, NULL);
    t_snap_track(&s, "x", z, sizeof z);
    t_snap_track(&s, "f", g, sizeof g);
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_grbm, 0x3, 2, z, 5, g));
    z[2] = NAN;
    FAILS(&s, EBM_EVALUE, "row 0", "nan", ebm_model_free_energy(g_grbm, 0x2, 2, z, 5, g));
    /* visible summed out: its (NaN) values are ignored */
    OK(g_grbm, ebm_model_free_energy(g_grbm, 0x1, 2, z, 5, g));
    FINISH();
}
END_TEST

START_TEST(energy_grad_bad_input)
{
    float x[3 * 9], grad[19];
    double coef[3] = {1.0, -0.5, 2.0};
    t_fill_states(g_rbm, 3, x, 9, 13);
    for (int i = 0; i < 19; i++) {
        grad[i] = 0.125f * (float)i - 1.0f;
    }
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_rbm, NULL);
    t_snap_track(&s, "x", x, sizeof x);
    t_snap_track(&s, "coef", coef, sizeof coef);
    t_snap_track(&s, "grad", grad, sizeof grad);
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_energy_grad(g_rbm, 0, 3, NULL, 9, coef, grad));
    FAILS(&s, EBM_ENULL, "coef", NULL, ebm_model_energy_grad(g_rbm, 0, 3, x, 9, NULL, grad));
    FAILS(&s, EBM_ENULL, "grad", NULL, ebm_model_energy_grad(g_rbm, 0, 3, x, 9, coef, NULL));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_energy_grad(g_rbm, 0, -1, x, 9, coef, grad));
    FAILS(&s, EBM_ESHAPE, "x", "6", ebm_model_energy_grad(g_rbm, 0, 3, x, 6, coef, grad));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad(g_rbm, 0x3, 3, x, 9, coef, grad));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad(g_rbm, 0x4, 3, x, 9, coef, grad));
    coef[1] = NAN;
    FAILS(&s, EBM_EVALUE, "coef[1]", "nan", ebm_model_energy_grad(g_rbm, 0, 3, x, 9, coef, grad));
    coef[1] = -0.5;
    coef[2] = INFINITY;
    FAILS(&s, EBM_EVALUE, "coef[2]", "inf", ebm_model_energy_grad(g_rbm, 2, 3, x, 9, coef, grad));
    coef[2] = 2.0;
    coef[0] = -INFINITY;
    FAILS(&s, EBM_EVALUE, "coef[0]", "inf", ebm_model_energy_grad(g_rbm, 0, 3, x, 9, coef, grad));
    coef[0] = 1.0;
    float keep = x[1 * 9 + 2];
    x[1 * 9 + 2] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 2", ebm_model_energy_grad(g_rbm, 0, 3, x, 9, coef, grad));
    x[1 * 9 + 2] = keep;
    OK(g_rbm, ebm_model_energy_grad(g_rbm, 2, 3, x, 9, coef, grad));

    /* DBM: spin values, sum_out */
    float y[2 * 8], gy[23];
    double cy[2] = {0.5, 0.5};
    t_fill_states(g_dbm, 2, y, 8, 14);
    memset(gy, 0, sizeof gy);
    t_snap_init(&s, T_MSG_MODEL, g_dbm, NULL);
    t_snap_track(&s, "x", y, sizeof y);
    t_snap_track(&s, "grad", gy, sizeof gy);
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad(g_dbm, 0x6, 2, y, 8, cy, gy));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad(g_dbm, 0x8, 2, y, 8, cy, gy));
    y[1 * 8 + 7] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "row 1", "unit 7", "0", ebm_model_energy_grad(g_dbm, 0x2, 2, y, 8, cy, gy));

    /* GRBM: finite coefficients whose contribution overflows float: grad
     * must be left unchanged. sigma^2 = e^-30, v = 1e6. */
    float p[14], z[2 * 5], gz[14];
    double cz[2] = {1e20, 1e20};
    ck_assert_int_eq(ebm_model_get_params(g_grbm, p), EBM_OK);
    p[11] = p[12] = p[13] = -30.0f;
    ck_assert_int_eq(ebm_model_set_params(g_grbm, p), EBM_OK);
    t_fill_states(g_grbm, 2, z, 5, 15);
    z[0] = z[5] = 1e6f;
    for (int i = 0; i < 14; i++) {
        gz[i] = 0.5f;
    }
    t_snap_init(&s, T_MSG_MODEL, g_grbm, NULL);
    t_snap_track(&s, "x", z, sizeof z);
    t_snap_track(&s, "grad", gz, sizeof gz);
    FAILS(&s, EBM_EVALUE, NULL, NULL, ebm_model_energy_grad(g_grbm, 0, 2, z, 5, cz, gz));
    z[3] = NAN; /* a NaN in the binary hidden layer */
    cz[0] = cz[1] = 1.0;
    FAILS(&s, EBM_EVALUE, "row 0", "nan", ebm_model_energy_grad(g_grbm, 0, 2, z, 5, cz, gz));
    FINISH();
}
END_TEST

START_TEST(energy_grad_input_bad_input)
{
    /* DBM 3-3-2: l = 1 has 3 units. */
    float x[3 * 8], out[3 * 4];
    t_fill_states(g_dbm, 3, x, 8, 16);
    t_sentinel(out, sizeof out);
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_dbm, NULL);
    t_snap_track(&s, "x", x, sizeof x);
    t_snap_track(&s, "out", out, sizeof out);
    FAILS(&s, EBM_ESHAPE, "-1", NULL, ebm_model_energy_grad_input(g_dbm, 0, -1, 3, x, 8, out, 4));
    FAILS(&s, EBM_ESHAPE, "3", NULL, ebm_model_energy_grad_input(g_dbm, 0, 3, 3, x, 8, out, 4));
    FAILS(&s, EBM_ESHAPE, "4", NULL, ebm_model_energy_grad_input(g_dbm, 0, 4, 3, x, 8, out, 4));
    /* l in S */
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad_input(g_dbm, 0x2, 1, 3, x, 8, out, 4));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad_input(g_dbm, 0x5, 0, 3, x, 8, out, 4));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad_input(g_dbm, 0x5, 2, 3, x, 8, out, 4));
    /* bad S */
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad_input(g_dbm, 0x6, 0, 3, x, 8, out, 4));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad_input(g_dbm, 0x8, 1, 3, x, 8, out, 4));
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_energy_grad_input(g_dbm, 0, 1, 3, NULL, 8, out, 4));
    FAILS(&s, EBM_ENULL, "out", NULL, ebm_model_energy_grad_input(g_dbm, 0, 1, 3, x, 8, NULL, 4));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_energy_grad_input(g_dbm, 0, 1, -1, x, 8, out, 4));
    FAILS(&s, EBM_ESHAPE, "x", "7", ebm_model_energy_grad_input(g_dbm, 0, 1, 3, x, 7, out, 4));
    FAILS(&s, EBM_ESHAPE, "out", "2", ebm_model_energy_grad_input(g_dbm, 0, 1, 3, x, 8, out, 2));
    FAILS(&s, EBM_ESHAPE, "out", "0", ebm_model_energy_grad_input(g_dbm, 0, 1, 3, x, 8, out, 0));
    FAILS(&s, EBM_ESHAPE, "out", "-3", ebm_model_energy_grad_input(g_dbm, 0, 1, 3, x, 8, out, -3));
    float keep = x[2 * 8 + 7];
    x[2 * 8 + 7] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "row 2", "unit 7", "0", ebm_model_energy_grad_input(g_dbm, 0, 1, 3, x, 8, out, 4));
    /* ... but a summed-out layer's values are ignored */
    OK(g_dbm, ebm_model_energy_grad_input(g_dbm, 0x4, 1, 3, x, 8, out, 4));
    x[2 * 8 + 7] = keep;

    /* GRBM: Gaussian l = 0 */
    float z[2 * 5], oz[2 * 3];
    t_fill_states(g_grbm, 2, z, 5, 17);
    t_sentinel(oz, sizeof oz);
    t_snap_init(&s, T_MSG_MODEL, g_grbm, NULL);
    t_snap_track(&s, "x", z, sizeof z);
    t_snap_track(&s, "out", oz, sizeof oz);
    keep = z[1 * 5 + 2];
    z[1 * 5 + 2] = INFINITY;
    FAILS3(&s, EBM_EVALUE, "row 1", "inf", "unit 2", ebm_model_energy_grad_input(g_grbm, 0, 0, 2, z, 5, oz, 3));
    z[1 * 5 + 2] = keep;
    FAILS(&s, EBM_ESHAPE, "out", "2", ebm_model_energy_grad_input(g_grbm, 0, 0, 2, z, 5, oz, 2));
    FAILS(&s, EBM_ESHAPE, "2", NULL, ebm_model_energy_grad_input(g_grbm, 0, 2, 2, z, 5, oz, 3));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad_input(g_grbm, 0x1, 0, 2, z, 5, oz, 3));
    /* layer 1 given a summed-out visible layer: the Inf is not read */
    z[1 * 5 + 2] = INFINITY;
    OK(g_grbm, ebm_model_energy_grad_input(g_grbm, 0x1, 1, 2, z, 5, oz, 3));
    FINISH();
}
END_TEST

Suite *ebm_energy_suite(void)
{
    const t_test tests[] = {
        {"reference", ref_selfcheck, 0, 60, NULL, NULL},
        {"energy", energy_all_states, REF_N_MODELS, 60, NULL, NULL},
        {"energy", free_energy_all_masks, REF_N_MODELS, 60, NULL, NULL},
        {"gradient", energy_grad, REF_N_MODELS, 60, NULL, NULL},
        {"gradient", energy_grad_input, REF_N_MODELS, 60, NULL, NULL},
        {"gradient", large_batches, 0, 60, NULL, NULL},
        {"energy", axpy_double_weights_follow, 0, 60, NULL, NULL},
        {"bad input", energy_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", free_energy_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", energy_grad_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", energy_grad_input_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
    };
    return t_suite("energy", tests, sizeof tests / sizeof tests[0]);
}
