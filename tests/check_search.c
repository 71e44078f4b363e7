/*
 * Local search and mean field (include/ebm.h, "Local search and mean
 * field"; tests/README.md, classes 1 and 4).
 *
 * Exact: every row of a local search follows the double-precision
 * trajectory of ref_search.c for one of the two orders (even layers first
 * or odd layers first) with the same sweep count, with and without clamped
 * units, capped and not, also on layers wide enough for the library's
 * incremental updates; it ends at a fixed point of every free unit's
 * argmin (brute force) without raising the energy; ties go up. Mean field
 * ends at a fixed point of mu = f(input(mu)) within its tolerance, clamped
 * units untouched, and gives the exact posterior means of an RBM in one
 * update.
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

/*
 * A decision whose input comes within TIE of 0, relative to the sum of its
 * absolute terms (ref_search.c's amin), may go either way in float: the
 * library sums the terms in float by GEMMs, whose order the BLAS picks
 * for their shape (the rows still moving), and its incremental path, its
 * own code and so the same on every machine, adds flips to kept inputs.
 * On the wide DBMs of local_search_wide (up to 100 terms) the GEMM's
 * inputs are within 2.2e-7 of the double ones (relative, the largest of
 * 69,000); on the tiny models (at most 7 terms) within 7 x 2^-24 = 4.2e-7.
 * Rows whose reference trajectory meets such a decision are "ambiguous":
 * neither their result nor a later argmin of them is compared.
 */
#define TIE 1e-5

/* ------------------------------------------------------------------------ */
/* Exact: local search and mean field against the reference                 */
/* ------------------------------------------------------------------------ */

/* One model and parameter set, 48 random starts; clamp_kind 0: nothing
 * clamped, 1: the visible layer clamped (ldc = 0, one mask row for all),
 * 2: a random half of the visible units clamped, a different mask per row.
 * Each start is run with max_sweeps 1000, 1 and 2 (fresh generator of the
 * same seed each time). The result must equal the reference trajectory of
 * one of the two orders (even-first / odd-first) with the same sweep count,
 * unless the row is ambiguous (TIE); at most 2 rows may be, a count that
 * depends on the seeds and the double reference only (no row of any case
 * comes within 1e-4 of a tie). */
static void run_local_search_case(int mi, int pi, int clamp_kind)
{
    ref_t R;
    ebm_model_t *m = ref_make_model(mi, pi, &R);
    const int64_t n = 48;
    int64_t ld = R.width + 1;
    float *x0 = malloc((size_t)(n * ld) * sizeof *x0);
    float *x = malloc((size_t)(n * ld) * sizeof *x);
    uint8_t *clamp = NULL;
    int64_t ldc = 0;
    uint64_t rs = 6000 + (uint64_t)pi * 10 + (uint64_t)clamp_kind;
    if (clamp_kind == 1) {
        clamp = calloc((size_t)R.width, 1);
        for (int64_t i = 0; i < R.n[0]; i++) {
            clamp[R.off[0] + i] = 1;
        }
        ldc = 0;
    } else if (clamp_kind == 2) {
        ldc = R.width + 2;
        clamp = calloc((size_t)(n * ldc), 1);
        for (int64_t r = 0; r < n; r++) {
            for (int64_t i = 0; i < R.n[0]; i++) {
                clamp[r * ldc + R.off[0] + i] = (uint8_t)(t_uniform(&rs) < 0.5 ? 1 : 0);
            }
            /* A nonzero byte other than 1 also clamps. */
            if (clamp[r * ldc + R.off[0]]) {
                clamp[r * ldc + R.off[0]] = 7;
            }
        }
    }
    ebm_rng_t *rng = NULL;
    ck_assert_int_eq(ebm_rng_create(&rng, 99 + (uint64_t)pi, 3), EBM_OK);
    for (int64_t r = 0; r < n; r++) {
        ref_rand_state(&R, &rs, x0 + r * ld);
        x0[r * ld + R.width] = 0.25f;
    }
    /* Also random starts from the library. */
    ck_assert_int_eq(ebm_model_random_state(m, rng, n / 2, x0, ld, clamp, ldc), EBM_OK);
    ebm_rng_destroy(rng);

    double *y = malloc((size_t)R.width * sizeof *y);
    double *ys = malloc((size_t)R.width * sizeof *ys);
    int64_t *sw = malloc((size_t)n * sizeof *sw);
    uint8_t *tied = calloc((size_t)n, 1); /* ambiguous rows of the uncapped search */
    const int64_t caps[3] = {1000, 1, 2};
    int order_seen[2] = {0, 0};
    int distinguishable = 0;
    for (int ci = 0; ci < 3; ci++) {
        int64_t cap = caps[ci];
        memcpy(x, x0, (size_t)(n * ld) * sizeof *x);
        ck_assert_int_eq(ebm_rng_create(&rng, 1234 + (uint64_t)pi, 0), EBM_OK);
        for (int64_t r = 0; r < n; r++) {
            sw[r] = -1;
        }
        int ret = ebm_model_local_search(m, rng, n, x, ld, clamp, ldc, cap, sw);
        ebm_rng_destroy(rng);
        ck_assert_msg(ret >= 0, "%s local_search: %s (%s)", R.ctx, ebm_error_name(ret),
                      ebm_model_errmsg(m));
        int cap_lo = 0, cap_hi = 0, ambiguous = 0;
        for (int64_t r = 0; r < n; r++) {
            const uint8_t *cr = (clamp == NULL) ? NULL : clamp + (ldc == 0 ? 0 : r * ldc);
            float *xr = x + r * ld;
            const float *x0r = x0 + r * ld;
            ck_assert_msg(sw[r] >= 1 && sw[r] <= cap, "%s row %lld: sweeps %lld (cap %lld)",
                          R.ctx, (long long)r, (long long)sw[r], (long long)cap);
            ck_assert(xr[R.width] == 0.25f);
            for (int64_t k = 0; k < R.width; k++) {
                ck_assert_msg(t_unit_ok(R.units[ref_layer_of(&R, k)], xr[k], 0),
                              "%s row %lld: local search wrote %g", R.ctx, (long long)r, xr[k]);
                if (cr != NULL && cr[k]) {
                    ck_assert_msg(memcmp(&xr[k], &x0r[k], sizeof *xr) == 0,
                                  "%s row %lld: clamped column %lld changed", R.ctx, (long long)r,
                                  (long long)k);
                }
            }
            /* The result must be one of the two orders' trajectories. */
            int match = 0, capped_if_match[2] = {0, 0}, matched[2] = {0, 0};
            double amin = INFINITY;
            double *yo[2];
            int64_t so[2];
            int co[2];
            for (int o = 0; o < 2; o++) {
                yo[o] = malloc((size_t)R.width * sizeof *y);
                ref_row_to_d(&R, x0r, yo[o]);
                co[o] = ref_local_search(&R, yo[o], cr, o, cap, &so[o], &amin);
                ref_row_to_d(&R, xr, y);
                int eq = 1;
                for (int64_t k = 0; k < R.width; k++) {
                    if (y[k] != yo[o][k]) {
                        eq = 0;
                    }
                }
                if (eq && so[o] == sw[r]) {
                    match = 1;
                    matched[o] = 1;
                    capped_if_match[o] = co[o];
                }
            }
            if (cap == 1000) {
                tied[r] = amin < TIE;
            }
            if (amin < TIE) {
                ambiguous++;
            } else {
                ck_assert_msg(match,
                              "%s cap %lld row %lld: the result (sweeps %lld) follows neither "
                              "order (even-first: %lld sweeps, odd-first: %lld sweeps)",
                              R.ctx, (long long)cap, (long long)r, (long long)sw[r],
                              (long long)so[0], (long long)so[1]);
                if (matched[0] && matched[1]) {
                    cap_lo += capped_if_match[0] && capped_if_match[1];
                    cap_hi += capped_if_match[0] || capped_if_match[1];
                } else {
                    int o = matched[0] ? 0 : 1;
                    cap_lo += capped_if_match[o];
                    cap_hi += capped_if_match[o];
                    if (cap == 1000) {
                        order_seen[o]++;
                        distinguishable++;
                    }
                }
            }
            if (cap == 1000) {
                /* Fixed point by brute force, and E did not go up. */
                ref_row_to_d(&R, xr, y);
                ref_row_to_d(&R, x0r, ys);
                if (amin >= TIE) {
                    ck_assert_msg(ref_is_fixed(&R, y, cr),
                                  "%s row %lld: the result is not a local minimum", R.ctx,
                                  (long long)r);
                    ck_assert_int_eq(sw[r] == 1, ref_is_fixed(&R, ys, cr));
                }
                double e_end = ref_energy(&R, y), e_start = ref_energy(&R, ys);
                ck_assert_msg(e_end <= e_start + 1e-9 * fmax(1.0, fabs(e_start)),
                              "%s row %lld: local search raised E from %.17g to %.17g", R.ctx,
                              (long long)r, e_start, e_end);
            }
            if (cap == 1) {
                ck_assert_int_eq(sw[r], 1);
            }
            free(yo[0]);
            free(yo[1]);
        }
        ck_assert_int_le(ambiguous, 2);
        ck_assert_msg(ret >= cap_lo && ret <= cap_hi + ambiguous,
                      "%s cap %lld: returned %d capped rows, expected %d..%d", R.ctx,
                      (long long)cap, ret, cap_lo, cap_hi + ambiguous);
        if (cap == 1000) {
            ck_assert_int_eq(ret, 0);
            /* The library's own argmin (a GEMM over all rows, where the
             * search's last sweep ran over the rows still moving) leaves
             * every row that is not ambiguous unchanged. */
            float *xc = malloc((size_t)(n * ld) * sizeof *xc);
            memcpy(xc, x, (size_t)(n * ld) * sizeof *x);
            if (clamp == NULL) {
                for (int l = 0; l < R.nl; l++) {
                    ck_assert_int_eq(ebm_model_layer_argmin(m, l, n, xc, ld), EBM_OK);
                    for (int64_t r = 0; r < n; r++) {
                        ck_assert_msg(tied[r] || memcmp(xc + r * ld, x + r * ld,
                                                        (size_t)ld * sizeof *x) == 0,
                                      "%s: layer_argmin(%d) moves row %lld of a local search "
                                      "result", R.ctx, l, (long long)r);
                    }
                }
            }
            free(xc);
        }
        if (cap == 1 && clamp_kind == 0) {
            ck_assert_msg(ret > 0, "%s: no row needed a second sweep", R.ctx);
        }
    }
    if (distinguishable >= 12) {
        ck_assert_msg(order_seen[0] > 0 && order_seen[1] > 0,
                      "%s: %d rows tell the orders apart but only one order was used (%d/%d)",
                      R.ctx, distinguishable, order_seen[0], order_seen[1]);
    }
    free(x0);
    free(x);
    free(y);
    free(ys);
    free(sw);
    free(tied);
    free(clamp);
    ref_free_all(&R);
    ebm_model_destroy(m);
}

START_TEST(local_search)
{
    int mi = _i;
    if (REF_MODELS[mi].vis == G_) {
        /* Gaussian visible units: only with the visible layer clamped. */
        for (int pi = 0; pi < REF_N_PSETS; pi++) {
            run_local_search_case(mi, pi, 1);
        }
        return;
    }
    for (int pi = 0; pi < REF_N_PSETS; pi++) {
        for (int ck = 0; ck < 3; ck++) {
            run_local_search_case(mi, pi, ck);
        }
    }
}
END_TEST

/* Layers wide enough that, after the first sweeps, the library updates layer
 * inputs from the few units that flipped (its incremental path): every row
 * that is not ambiguous (TIE) must still follow the double-precision
 * reference trajectory of one of the two orders, with the same sweep count,
 * and end at a fixed point of every layer's argmin (the library's, over all
 * rows). Its decisions stay at least TIE = 1e-5 from a tie, 45 times the
 * largest float error of an input measured on these models (2.2e-7,
 * relative). The ambiguous rows depend on the seeds and the double
 * reference only, not on the BLAS: 6, 2, 4 and 2 of the 96 (at most 8
 * allowed, so that 88 are compared). Spin and binary units; visible layer
 * free and clamped. */
START_TEST(local_search_wide)
{
    const int64_t sizes[4] = {60, 50, 40, 30}, n = 96;
    for (int kind = 0; kind < 4; kind++) {
        int units = kind < 2 ? EBM_UNITS_SPIN : EBM_UNITS_BINARY, clamped = kind & 1;
        ebm_model_t *m = NULL;
        char err[256];
        ck_assert_int_eq(ebm_model_create(&m, 4, sizes, units, units, err, sizeof err), EBM_OK);
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 77 + (uint64_t)kind, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 2.0), EBM_OK);
        ref_t R;
        ref_init(&R, m, units == EBM_UNITS_SPIN ? "wide spin DBM" : "wide binary DBM");
        const int64_t w = R.width;
        uint8_t *clamp = calloc((size_t)w, 1);
        for (int64_t j = 0; clamped && j < sizes[0]; j++) {
            clamp[j] = 1;
        }
        float *x0 = malloc((size_t)(n * w) * sizeof *x0), *x = malloc((size_t)(n * w) * sizeof *x);
        int64_t sw[96];
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, x0, w, NULL, 0), EBM_OK);
        memcpy(x, x0, (size_t)(n * w) * sizeof *x);
        ck_assert_int_eq(ebm_model_local_search(m, rng, n, x, w, clamped ? clamp : NULL, 0, 1000,
                                                sw), 0);
        double *y = malloc((size_t)w * sizeof *y), *yo = malloc((size_t)w * sizeof *yo);
        int ambiguous = 0;
        int64_t max_sweeps = 0;
        uint8_t tied[96];
        for (int64_t r = 0; r < n; r++) {
            double amin = INFINITY;
            int match = 0;
            ref_row_to_d(&R, x + r * w, y);
            for (int o = 0; o < 2; o++) {
                int64_t so;
                ref_row_to_d(&R, x0 + r * w, yo);
                ck_assert_int_eq(
                    ref_local_search(&R, yo, clamped ? clamp : NULL, o, 1000, &so, &amin), 0);
                match |= so == sw[r] && memcmp(y, yo, (size_t)w * sizeof *y) == 0;
            }
            max_sweeps = sw[r] > max_sweeps ? sw[r] : max_sweeps;
            tied[r] = amin < TIE;
            if (tied[r]) {
                ambiguous++;
                continue;
            }
            ck_assert_msg(match, "%s row %lld: the result (%lld sweeps) follows neither order",
                          R.ctx, (long long)r, (long long)sw[r]);
        }
        T_VLOG("  %s%s: %d of %lld rows ambiguous, up to %lld sweeps\n", R.ctx,
               clamped ? " (visible clamped)" : "", ambiguous, (long long)n,
               (long long)max_sweeps);
        ck_assert_msg(ambiguous <= 8, "%s: %d of %lld rows came within %g of a tie", R.ctx,
                      ambiguous, (long long)n, TIE);
        /* The incremental updates ran: rows kept sweeping after the first. */
        ck_assert_int_ge(max_sweeps, 4);
        float *xc = malloc((size_t)(n * w) * sizeof *xc);
        memcpy(xc, x, (size_t)(n * w) * sizeof *x);
        for (int l = clamped; l < 4; l++) {
            ck_assert_int_eq(ebm_model_layer_argmin(m, l, n, xc, w), EBM_OK);
        }
        for (int64_t r = 0; r < n; r++) {
            ck_assert_msg(tied[r] || memcmp(xc + r * w, x + r * w, (size_t)w * sizeof *x) == 0,
                          "%s: a layer argmin moves row %lld of a local search result", R.ctx,
                          (long long)r);
        }
        free(xc);
        free(y);
        free(yo);
        free(x0);
        free(x);
        free(clamp);
        ref_free_all(&R);
        ebm_rng_destroy(rng);
        ebm_model_destroy(m);
    }
}
END_TEST

/* GRBM and Gaussian DBM without clamping: the result is a fixed point of
 * every layer's argmin given the rest (v = the mean given h, h = the argmin
 * given v and the other layers). The library's argmin of a layer, a GEMM
 * over all 16 rows where the search's last sweep ran over the rows still
 * moving, leaves the other columns as they are, the discrete units that
 * are not within TIE of a tie as they are (none is: the nearest is 0.05
 * away; at most 2 may be, so that the test keeps its power), and v within
 * 1e-5 (1 + m + |v|), m the sum of the mean's absolute terms (a float sum
 * of at most 4 terms rounds within 5 ulp of m); v is also within that of
 * the reference's mean given h. */
START_TEST(local_search_gaussian_free)
{
    int tied = 0;
    double margin = INFINITY;
    for (int mi = 0; mi < REF_N_MODELS; mi++) {
        if (REF_MODELS[mi].vis != G_) {
            continue;
        }
        for (int pi = 0; pi < REF_N_PSETS; pi++) {
            ref_t R;
            ebm_model_t *m = ref_make_model(mi, pi, &R);
            const int64_t n = 16, w = R.width;
            float *x = malloc((size_t)(n * w) * sizeof *x);
            ebm_rng_t *rng = NULL;
            ck_assert_int_eq(ebm_rng_create(&rng, 5, 5), EBM_OK);
            ck_assert_int_eq(ebm_model_random_state(m, rng, n, x, w, NULL, 0), EBM_OK);
            int64_t sw[16];
            int ret = ebm_model_local_search(m, rng, n, x, w, NULL, 0, 1000, sw);
            ck_assert_msg(ret == 0, "%s: local search on a free Gaussian layer returned %d (%s)",
                          R.ctx, ret, ebm_model_errmsg(m));
            float *xc = malloc((size_t)(n * w) * sizeof *xc);
            double *y = malloc((size_t)w * sizeof *y);
            for (int l = 0; l < R.nl; l++) {
                memcpy(xc, x, (size_t)(n * w) * sizeof *x);
                ck_assert_int_eq(ebm_model_layer_argmin(m, l, n, xc, w), EBM_OK);
                for (int64_t r = 0; r < n; r++) {
                    ref_row_to_d(&R, x + r * w, y);
                    for (int64_t k = 0; k < w; k++) {
                        const float a = x[r * w + k], b = xc[r * w + k];
                        if (ref_layer_of(&R, k) != l) {
                            ck_assert(memcmp(&a, &b, sizeof a) == 0);
                            continue;
                        }
                        double mag;
                        const double in = ref_input(&R, l, y, k - R.off[l], &mag);
                        if (ref_is_discrete(&R, l)) {
                            margin = fmin(margin, fabs(in) / fmax(1.0, mag));
                            if (fabs(in) < TIE * fmax(1.0, mag)) {
                                tied++;
                                continue;
                            }
                            ck_assert_msg(a == b, "%s row %lld: layer %d argmin moves unit %lld",
                                          R.ctx, (long long)r, l, (long long)k);
                        } else {
                            const double tol = 1e-5 * (1.0 + mag + fabs((double)a));
                            ck_assert_msg(fabs((double)b - a) <= tol && fabs(in - a) <= tol,
                                          "%s row %lld unit %lld: v %.9g, the argmin %.9g, the "
                                          "mean given h %.9g", R.ctx, (long long)r, (long long)k,
                                          (double)a, (double)b, in);
                        }
                    }
                }
            }
            for (int64_t r = 0; r < n; r++) {
                ck_assert(sw[r] >= 1);
                ref_row_to_d(&R, x + r * w, y);
                ck_assert(ref_is_fixed(&R, y, NULL));
            }
            free(y);
            free(xc);
            free(x);
            ebm_rng_destroy(rng);
            ref_free_all(&R);
            ebm_model_destroy(m);
        }
    }
    T_VLOG("  free Gaussian layer: %d units within %g of a tie; the nearest at %.3g\n", tied, TIE,
           margin);
    ck_assert_int_le(tied, 2);
}
END_TEST

/* All-zero parameters: every input is 0, so from any start one sweep moves
 * every unit up and the second changes nothing. */
START_TEST(local_search_ties)
{
    for (int mi = 0; mi < REF_N_MODELS; mi++) {
        if (REF_MODELS[mi].vis == G_) {
            continue;
        }
        const ref_mspec *s = &REF_MODELS[mi];
        ebm_model_t *m = t_model(s->nl, s->sizes, s->vis, s->hid);
        ref_t R;
        ref_init(&R, m, s->name);
        const int64_t n = 8;
        float *x = malloc((size_t)(n * R.width) * sizeof *x);
        uint64_t rs = 9;
        for (int64_t r = 0; r < n; r++) {
            ref_rand_state(&R, &rs, x + r * R.width);
        }
        for (int64_t k = 0; k < R.width; k++) {
            x[k] = 1.0f; /* row 0 starts at the answer */
        }
        int all_up[8];
        for (int64_t r = 0; r < n; r++) {
            all_up[r] = 1;
            for (int64_t k = 0; k < R.width; k++) {
                all_up[r] &= x[r * R.width + k] == 1.0f;
            }
        }
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 1, 1), EBM_OK);
        int64_t sw[8];
        ck_assert_int_eq(ebm_model_local_search(m, rng, n, x, R.width, NULL, 0, 10, sw), 0);
        for (int64_t r = 0; r < n; r++) {
            for (int64_t k = 0; k < R.width; k++) {
                ck_assert_msg(x[r * R.width + k] == 1.0f, "%s: tie not broken upwards", s->name);
            }
            ck_assert_int_eq(sw[r], all_up[r] ? 1 : 2);
        }
        free(x);
        ebm_rng_destroy(rng);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* Parameters past float's range (weights of +-1e38 in a pattern, inputs
 * of +-inf and NaN): a binary or spin model's search still ends in valid
 * states, clamped units untouched, on the incremental path (32 rows), so
 * it needs no overflow check; its twin, the same model with a Gaussian
 * visible layer, overflows, and the search refuses with x unchanged. */
START_TEST(local_search_huge_weights)
{
    const int64_t sizes[4] = {60, 50, 40, 30}, n = 32;
    for (int kind = 0; kind < 5; kind++) {
        const int units = kind < 2 ? EBM_UNITS_SPIN : EBM_UNITS_BINARY, clamped = kind & 1;
        const int gaussian = kind == 4;
        ebm_model_t *m = NULL;
        char err[256];
        ck_assert_int_eq(ebm_model_create(&m, 4, sizes, gaussian ? EBM_UNITS_GAUSSIAN : units,
                                          units, err, sizeof err),
                         EBM_OK);
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 91 + (uint64_t)kind, 0), EBM_OK);
        const int64_t np = ebm_model_param_count(m);
        float *p = malloc((size_t)np * sizeof *p);
        ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
        const int64_t nw = sizes[0] * sizes[1] + sizes[1] * sizes[2] + sizes[2] * sizes[3];
        for (int64_t i = 0; i < nw; i++) {
            p[i] = i % 3 == 0 ? -1e38f : 1e38f; /* the weights come first */
        }
        ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
        const int64_t w = ebm_model_state_width(m);
        uint8_t *clamp = calloc((size_t)w, 1);
        memset(clamp, 1, clamped ? (size_t)sizes[0] : 0);
        float *x0 = malloc((size_t)(n * w) * sizeof *x0), *x = malloc((size_t)(n * w) * sizeof *x);
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, x0, w, NULL, 0), EBM_OK);
        memcpy(x, x0, (size_t)(n * w) * sizeof *x);
        const int rc = ebm_model_local_search(m, rng, n, x, w, clamped ? clamp : NULL, 0, 50, NULL);
        if (gaussian) {
            ck_assert_msg(rc == EBM_EVALUE, "Gaussian twin: the overflow was not refused (%d)", rc);
            ck_assert_msg(memcmp(x, x0, (size_t)(n * w) * sizeof *x) == 0,
                          "Gaussian twin: a refused search changed x");
        } else {
            ck_assert_msg(rc >= 0, "kind %d: %s", kind, ebm_model_errmsg(m));
            const float lo = units == EBM_UNITS_SPIN ? -1.0f : 0.0f;
            for (int64_t i = 0; i < n * w; i++) {
                ck_assert_msg(x[i] == lo || x[i] == 1.0f, "kind %d: value %g at %lld", kind,
                              (double)x[i], (long long)i);
                ck_assert_msg(!clamp[i % w] || x[i] == x0[i], "kind %d: clamped unit %lld moved",
                              kind, (long long)i);
            }
        }
        free(p);
        free(clamp);
        free(x0);
        free(x);
        ebm_rng_destroy(rng);
        ebm_model_destroy(m);
    }
}
END_TEST

START_TEST(mean_field)
{
    int mi = _i;
    for (int pi = 0; pi < 2; pi++) { /* the two parameter sets with scale 1 */
        for (int ck = 0; ck < 2; ck++) {
            if (ck == 1 && REF_MODELS[mi].vis == G_) {
                continue;
            }
            ref_t R;
            ebm_model_t *m = ref_make_model(mi, pi, &R);
            const int64_t n = 16;
            uint64_t rs = 7000 + (uint64_t)pi;
            float *mu = malloc((size_t)(n * R.width) * sizeof *mu);
            float *mu0 = malloc((size_t)(n * R.width) * sizeof *mu0);
            uint8_t *clamp;
            int64_t ldc;
            if (ck == 0) {
                clamp = calloc((size_t)R.width, 1);
                for (int64_t i = 0; i < R.n[0]; i++) {
                    clamp[R.off[0] + i] = 1;
                }
                ldc = 0;
            } else {
                ldc = R.width;
                clamp = calloc((size_t)(n * ldc), 1);
                for (int64_t r = 0; r < n; r++) {
                    for (int64_t i = 0; i < R.n[0]; i++) {
                        clamp[r * ldc + R.off[0] + i] = (uint8_t)(((r >> i) & 1) ? 1 : 0);
                    }
                }
            }
            for (int64_t r = 0; r < n; r++) {
                float *row = mu + r * R.width;
                ref_rand_state(&R, &rs, row);
                for (int l = 0; l < R.nl; l++) {
                    for (int64_t j = 0; j < R.n[l]; j++) {
                        const uint8_t *cr = clamp + (ldc == 0 ? 0 : r * ldc);
                        if (cr[R.off[l] + j] || !ref_is_discrete(&R, l)) {
                            continue;
                        }
                        double u = t_uniform(&rs);
                        row[R.off[l] + j] =
                            (float)(R.units[l] == EBM_UNITS_SPIN ? 2.0 * u - 1.0 : u);
                    }
                }
            }
            memcpy(mu0, mu, (size_t)(n * R.width) * sizeof *mu);
            double tol = 1e-6;
            int ret = ebm_model_mean_field(m, n, mu, R.width, clamp, ldc, 1000, tol);
            ck_assert_msg(ret == 0, "%s mean field returned %d (%s)", R.ctx, ret,
                          ebm_model_errmsg(m));
            double *y = malloc((size_t)R.width * sizeof *y);
            for (int64_t r = 0; r < n; r++) {
                const uint8_t *cr = clamp + (ldc == 0 ? 0 : r * ldc);
                ref_row_to_d(&R, mu + r * R.width, y);
                for (int l = 0; l < R.nl; l++) {
                    for (int64_t j = 0; j < R.n[l]; j++) {
                        int64_t k = R.off[l] + j;
                        if (cr[k]) {
                            ck_assert_msg(mu[r * R.width + k] == mu0[r * R.width + k],
                                          "%s: mean field changed a clamped unit", R.ctx);
                            continue;
                        }
                        double a = ref_input(&R, l, y, j, NULL);
                        double f = ref_mean_of_input(R.units[l], a);
                        ck_assert_msg(fabs(y[k] - f) <= 10.0 * tol,
                                      "%s row %lld layer %d unit %lld: mean %.9g, f(input) %.9g",
                                      R.ctx, (long long)r, l, (long long)j, y[k], f);
                    }
                }
            }
            free(y);
            free(mu);
            free(mu0);
            free(clamp);
            ref_free_all(&R);
            ebm_model_destroy(m);
        }
    }
}
END_TEST

/* RBM with the visible layer clamped: one update gives the exact posterior
 * means. */
START_TEST(mean_field_rbm_exact)
{
    for (int mi = 0; mi < REF_N_MODELS; mi++) {
        if (REF_MODELS[mi].nl != 2) {
            continue;
        }
        for (int pi = 0; pi < REF_N_PSETS; pi++) {
            ref_t R;
            ebm_model_t *m = ref_make_model(mi, pi, &R);
            const int64_t n = 8;
            uint64_t rs = 8000;
            float *mu = malloc((size_t)(n * R.width) * sizeof *mu);
            for (int64_t r = 0; r < n; r++) {
                ref_rand_state(&R, &rs, mu + r * R.width);
            }
            uint8_t *clamp = calloc((size_t)R.width, 1);
            for (int64_t i = 0; i < R.n[0]; i++) {
                clamp[R.off[0] + i] = 1;
            }
            ck_assert_int_eq(ebm_model_mean_field(m, n, mu, R.width, clamp, 0, 100, 1e-6), 0);
            double *y = malloc((size_t)R.width * sizeof *y);
            for (int64_t r = 0; r < n; r++) {
                ref_row_to_d(&R, mu + r * R.width, y);
                for (int64_t j = 0; j < R.n[1]; j++) {
                    double mag, f = ref_mean_of_input(R.units[1], ref_input(&R, 1, y, j, &mag));
                    ck_assert_msg(fabs(y[R.off[1] + j] - f) <= 1e-6 + 1e-7 * mag,
                                  "%s: RBM posterior mean %.9g, exact %.9g", R.ctx,
                                  y[R.off[1] + j], f);
                }
            }
            free(y);
            free(mu);
            free(clamp);
            ref_free_all(&R);
            ebm_model_destroy(m);
        }
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Bad input                                                                */
/* ------------------------------------------------------------------------ */

START_TEST(local_search_bad_input)
{
    float x[3 * 8];
    int64_t sweeps[3];
    uint8_t clamp[3 * 8];
    t_fill_states(g_dbm, 3, x, 8, 26);
    t_sentinel(sweeps, sizeof sweeps);
    memset(clamp, 0, sizeof clamp);
    clamp[0] = clamp[1] = clamp[2] = 1;
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_dbm, g_rng);
    t_snap_track(&s, "x", x, sizeof x);
    t_snap_track(&s, "sweeps", sweeps, sizeof sweeps);
    FAILS(&s, EBM_ENULL, "rng", NULL, ebm_model_local_search(g_dbm, NULL, 3, x, 8, NULL, 0, 10, sweeps));
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_local_search(g_dbm, g_rng, 3, NULL, 8, NULL, 0, 10, sweeps));
    FAILS(&s, EBM_EVALUE, "max_sweeps", "0", ebm_model_local_search(g_dbm, g_rng, 3, x, 8, NULL, 0, 0, sweeps));
    FAILS(&s, EBM_EVALUE, "max_sweeps", "-5", ebm_model_local_search(g_dbm, g_rng, 3, x, 8, NULL, 0, -5, sweeps));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_local_search(g_dbm, g_rng, -1, x, 8, NULL, 0, 10, sweeps));
    FAILS(&s, EBM_ESHAPE, "x", "7", ebm_model_local_search(g_dbm, g_rng, 3, x, 7, NULL, 0, 10, sweeps));
    FAILS(&s, EBM_ESHAPE, "clamp", "4", ebm_model_local_search(g_dbm, g_rng, 3, x, 8, clamp, 4, 10, sweeps));
    FAILS(&s, EBM_ESHAPE, "clamp", "-1", ebm_model_local_search(g_dbm, g_rng, 3, x, 8, clamp, -1, 10, sweeps));
    float keep = x[2 * 8 + 4];
    x[2 * 8 + 4] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "row 2", "unit 4", "0", ebm_model_local_search(g_dbm, g_rng, 3, x, 8, NULL, 0, 10, sweeps));
    x[2 * 8 + 4] = keep;
    /* an invalid value in a clamped unit is still invalid */
    keep = x[1 * 8 + 1];
    x[1 * 8 + 1] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "unit 1", "0.5", ebm_model_local_search(g_dbm, g_rng, 3, x, 8, clamp, 0, 10, sweeps));
    x[1 * 8 + 1] = keep;

    float xr[2 * 7];
    t_fill_states(g_rbm, 2, xr, 7, 27);
    t_snap_init(&s, T_MSG_MODEL, g_rbm, g_rng);
    t_snap_track(&s, "x", xr, sizeof xr);
    t_snap_track(&s, "sweeps", sweeps, sizeof sweeps);
    xr[1 * 7 + 2] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 2", ebm_model_local_search(g_rbm, g_rng, 2, xr, 7, NULL, 0, 10, sweeps));
    float z[2 * 5];
    t_fill_states(g_grbm, 2, z, 5, 28);
    t_snap_init(&s, T_MSG_MODEL, g_grbm, g_rng);
    t_snap_track(&s, "x", z, sizeof z);
    t_snap_track(&s, "sweeps", sweeps, sizeof sweeps);
    z[1] = NAN;
    FAILS3(&s, EBM_EVALUE, "row 0", "nan", "unit 1", ebm_model_local_search(g_grbm, g_rng, 2, z, 5, NULL, 0, 10, sweeps));
    z[1] = 0.0f;
    int rc = ebm_model_local_search(g_grbm, g_rng, 2, z, 5, NULL, 0, 100, sweeps);
    CHECK(rc >= 0, "local_search after failures returned %s: %s", ebm_error_name(rc),
          ebm_model_errmsg(g_grbm));
    FINISH();
}
END_TEST

START_TEST(mean_field_bad_input)
{
    float mu[3 * 9];
    uint8_t clamp[9] = {1, 1, 1, 0, 0, 0, 0, 0, 0};
    t_fill_means(g_dbm, 3, mu, 9, 29);
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_dbm, NULL);
    t_snap_track(&s, "mu", mu, sizeof mu);
    FAILS(&s, EBM_ENULL, "mu", NULL, ebm_model_mean_field(g_dbm, 3, NULL, 9, NULL, 0, 10, 1e-6));
    FAILS(&s, EBM_EVALUE, "max_iter", "0", ebm_model_mean_field(g_dbm, 3, mu, 9, NULL, 0, 0, 1e-6));
    FAILS(&s, EBM_EVALUE, "max_iter", "-1", ebm_model_mean_field(g_dbm, 3, mu, 9, NULL, 0, -1, 1e-6));
    FAILS(&s, EBM_EVALUE, "tol", "-1", ebm_model_mean_field(g_dbm, 3, mu, 9, NULL, 0, 10, -1.0));
    FAILS(&s, EBM_EVALUE, "tol", "nan", ebm_model_mean_field(g_dbm, 3, mu, 9, NULL, 0, 10, NAN));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_mean_field(g_dbm, -1, mu, 9, NULL, 0, 10, 1e-6));
    FAILS(&s, EBM_ESHAPE, "mu", "7", ebm_model_mean_field(g_dbm, 3, mu, 7, NULL, 0, 10, 1e-6));
    FAILS(&s, EBM_ESHAPE, "clamp", "5", ebm_model_mean_field(g_dbm, 3, mu, 9, clamp, 5, 10, 1e-6));
    FAILS(&s, EBM_ESHAPE, "clamp", "-2", ebm_model_mean_field(g_dbm, 3, mu, 9, clamp, -2, 10, 1e-6));
    float keep = mu[1 * 9 + 4];
    mu[1 * 9 + 4] = 1.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "1.5", "unit 4", ebm_model_mean_field(g_dbm, 3, mu, 9, NULL, 0, 10, 1e-6));
    mu[1 * 9 + 4] = -1.25f;
    FAILS3(&s, EBM_EVALUE, "row 1", "-1.25", "unit 4", ebm_model_mean_field(g_dbm, 3, mu, 9, clamp, 0, 10, 1e-6));
    mu[1 * 9 + 4] = NAN;
    FAILS3(&s, EBM_EVALUE, "row 1", "nan", "unit 4", ebm_model_mean_field(g_dbm, 3, mu, 9, NULL, 0, 10, 1e-6));
    mu[1 * 9 + 4] = keep;
    int rc = ebm_model_mean_field(g_dbm, 3, mu, 9, clamp, 0, 200, 1e-4);
    CHECK(rc >= 0, "mean_field after failures returned %s: %s", ebm_error_name(rc),
          ebm_model_errmsg(g_dbm));

    /* binary means in [0, 1] */
    float mr[2 * 7];
    t_fill_means(g_rbm, 2, mr, 7, 30);
    t_snap_init(&s, T_MSG_MODEL, g_rbm, NULL);
    t_snap_track(&s, "mu", mr, sizeof mr);
    mr[1 * 7 + 2] = -0.25f;
    FAILS3(&s, EBM_EVALUE, "row 1", "-0.25", "unit 2", ebm_model_mean_field(g_rbm, 2, mr, 7, NULL, 0, 10, 1e-6));
    mr[1 * 7 + 2] = 1.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "1.5", "unit 2", ebm_model_mean_field(g_rbm, 2, mr, 7, NULL, 0, 10, 1e-6));
    mr[1 * 7 + 2] = 0.5f;
    mr[6] = -1.0f; /* a spin value in a binary layer */
    FAILS3(&s, EBM_EVALUE, "row 0", "-1", "unit 6", ebm_model_mean_field(g_rbm, 2, mr, 7, NULL, 0, 10, 1e-6));

    /* GRBM: Gaussian finite, hidden in [0, 1] */
    float mg[2 * 5];
    t_fill_means(g_grbm, 2, mg, 5, 31);
    t_snap_init(&s, T_MSG_MODEL, g_grbm, NULL);
    t_snap_track(&s, "mu", mg, sizeof mg);
    mg[1 * 5 + 0] = INFINITY;
    FAILS3(&s, EBM_EVALUE, "row 1", "inf", "unit 0", ebm_model_mean_field(g_grbm, 2, mg, 5, NULL, 0, 10, 1e-6));
    mg[1 * 5 + 0] = NAN;
    FAILS3(&s, EBM_EVALUE, "row 1", "nan", "unit 0", ebm_model_mean_field(g_grbm, 2, mg, 5, NULL, 0, 10, 1e-6));
    mg[1 * 5 + 0] = 0.0f;
    mg[3] = 1.25f;
    FAILS3(&s, EBM_EVALUE, "row 0", "1.25", "unit 3", ebm_model_mean_field(g_grbm, 2, mg, 5, NULL, 0, 10, 1e-6));
    FINISH();
}
END_TEST

Suite *ebm_search_suite(void)
{
    const t_test tests[] = {
        {"local search", local_search, REF_N_MODELS, 60, NULL, NULL},
        {"local search", local_search_wide, 0, 60, NULL, NULL},
        {"local search", local_search_gaussian_free, 0, 60, NULL, NULL},
        {"local search", local_search_ties, 0, 60, NULL, NULL},
        {"local search", local_search_huge_weights, 0, 60, NULL, NULL},
        {"mean field", mean_field, REF_N_MODELS, 60, NULL, NULL},
        {"mean field", mean_field_rbm_exact, 0, 60, NULL, NULL},
        {"bad input", local_search_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", mean_field_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
    };
    return t_suite("search", tests, sizeof tests / sizeof tests[0]);
}
