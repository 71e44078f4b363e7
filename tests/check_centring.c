/* Centring (ebm_model_get/set/move_offsets, ebm.h).
 *
 * The centred energy itself is proven where every energy is: the reference
 * (ref_energy.c) writes E with x - mu from ebm.h's definition, and the
 * centred parameter set of REF_PSETS runs every exact test of energies,
 * free energies, conditionals, searches, gradients (finite differences)
 * and log Z; ref_gradient.c's exact gradient has the centred rows of the
 * estimators' unbiasedness table (check_estimator.c), and AIS has centred
 * cases (check_evaluation.c). This suite proves what is particular to
 * offsets:
 *
 * 1. keep_law: moving the offsets with keep_law (set_offsets(..., 1),
 *    move_offsets) leaves log p(x) of every state unchanged (the energies
 *    move by one constant, log Z with them); the broken twin (keep_law =
 *    0) changes it.
 * 2. the spin link: a spin model (W, b) is the binary model (4W, 2b) with
 *    every offset 1/2 (s = 2z - 1): energies of every state, log Z and the
 *    conditional means agree; the twin (offsets 0) does not.
 * 3. offsets back to 0: the model computes the bits of a model never
 *    centred (energies, gradient, saved bytes).
 * 4. move_offsets is the exponential moving average it documents, rate 0
 *    changes nothing, rate 1 reaches the target.
 * 5. bad input: each refused with its message, nothing changes.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tests.h"
#include "ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The REF_MODELS without Gaussian units (those have no offsets). */
static const int DISCRETE_MODELS[] = {0, 1, 2, 3, 4, 5, 9};
#define N_DISCRETE ((int)(sizeof DISCRETE_MODELS / sizeof DISCRETE_MODELS[0]))
#define CENTRED_PSET 4

/* log p(x) of every state of m (rows of x). */
static double *log_probs(const ebm_model_t *m, int64_t n, const float *x)
{
    const int64_t w = ebm_model_state_width(m);
    double *lp = malloc((size_t)n * sizeof *lp), log_z;
    ck_assert_ptr_nonnull(lp);
    ck_assert_int_eq(ebm_model_energy(m, n, x, w, lp), EBM_OK);
    ck_assert_int_eq(ebm_model_log_partition_exact(m, &log_z), EBM_OK);
    for (int64_t r = 0; r < n; r++) {
        lp[r] = -lp[r] - log_z;
    }
    return lp;
}

/* Offsets in the units' ranges from a seed. */
static void random_offsets(const ebm_model_t *m, uint64_t seed, float *mu)
{
    uint64_t us = seed;
    for (int64_t l = 0; l < ebm_model_num_layers(m); l++) {
        const int spin = ebm_model_layer_units(m, l) == EBM_UNITS_SPIN;
        for (int64_t j = 0; j < ebm_model_layer_size(m, l); j++) {
            const double u = t_uniform(&us);
            mu[ebm_model_layer_offset(m, l) + j] = (float)(spin ? 2.0 * u - 1.0 : u);
        }
    }
}

/* max_r |a_r - b_r| */
static double max_diff(int64_t n, const double *a, const double *b)
{
    double d = 0.0;
    for (int64_t r = 0; r < n; r++) {
        d = fmax(d, fabs(a[r] - b[r]));
    }
    return d;
}

/* ---- 1. keep_law ------------------------------------------------------------------ */

START_TEST(keep_law_keeps_the_law)
{
    const int mi = DISCRETE_MODELS[_i];
    ref_t R;
    ebm_model_t *m = ref_make_model(mi, CENTRED_PSET, &R);
    uint64_t rs = 7;
    int64_t n;
    float *x = ref_all_states(&R, 1, &rs, &n);
    const int64_t w = R.width;
    double *lp0 = log_probs(m, n, x), *e0 = malloc((size_t)n * sizeof *e0);
    ck_assert_ptr_nonnull(e0);
    ck_assert_int_eq(ebm_model_energy(m, n, x, w, e0), EBM_OK);
    float *mu = t_floats(w), *target = t_floats(w);
    random_offsets(m, 100 + (uint64_t)mi, mu);
    random_offsets(m, 200 + (uint64_t)mi, target);

    /* set_offsets(..., 1), then move_offsets: log p unchanged, energies
     * moved by one constant. The new biases are rounded to float: 1e-5. */
    ck_assert_int_eq(ebm_model_set_offsets(m, mu, 1), EBM_OK);
    double *lp1 = log_probs(m, n, x);
    ck_assert_int_eq(ebm_model_move_offsets(m, 0.3, target), EBM_OK);
    double *lp2 = log_probs(m, n, x), *e2 = malloc((size_t)n * sizeof *e2);
    ck_assert_ptr_nonnull(e2);
    ck_assert_int_eq(ebm_model_energy(m, n, x, w, e2), EBM_OK);
    const double d1 = max_diff(n, lp0, lp1), d2 = max_diff(n, lp0, lp2);
    double shift_spread = 0.0;
    for (int64_t r = 0; r < n; r++) {
        shift_spread = fmax(shift_spread, fabs((e2[r] - e0[r]) - (e2[0] - e0[0])));
    }
    T_VLOG("  %s: |d log p| %.2g (set), %.2g (moved); energy shift %.4g, spread %.2g\n", R.ctx,
           d1, d2, e2[0] - e0[0], shift_spread);
    ck_assert_msg(d1 < 1e-5 && d2 < 1e-5, "%s: log p moved by %g / %g", R.ctx, d1, d2);
    ck_assert_msg(shift_spread < 1e-5, "%s: the energies moved by %g apart", R.ctx, shift_spread);

    /* The twin: the same move without keep_law changes the law. */
    ck_assert_int_eq(ebm_model_set_offsets(m, mu, 0), EBM_OK);
    double *lp3 = log_probs(m, n, x);
    const double d3 = max_diff(n, lp2, lp3);
    ck_assert_msg(d3 > 0.05, "%s: the twin moved log p by %g only", R.ctx, d3);

    free(lp0);
    free(lp1);
    free(lp2);
    free(lp3);
    free(e0);
    free(e2);
    free(mu);
    free(target);
    free(x);
    ref_free_all(&R);
    ebm_model_destroy(m);
}
END_TEST

/* ---- 2. the spin link ------------------------------------------------------------- */

START_TEST(spin_is_half_centred_binary)
{
    static const int64_t sizes[] = {3, 3, 2};
    const int64_t w = 8, np = 9 + 6 + 8;
    ebm_model_t *spin = t_model(3, sizes, EBM_UNITS_SPIN, EBM_UNITS_SPIN);
    ebm_model_t *bin = t_model(3, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    ebm_model_t *twin = t_model(3, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    t_random_params(spin, 31, 1.5);
    float p[23], q[23], half[8];
    ck_assert_int_eq(ebm_model_param_count(spin), np);
    ck_assert_int_eq(ebm_model_get_params(spin, p), EBM_OK);
    int64_t nw;
    ck_assert_int_eq(ebm_model_param_block(spin, EBM_PARAM_BIAS, 0, &nw, NULL, NULL), EBM_OK);
    for (int64_t i = 0; i < np; i++) {
        q[i] = (i < nw ? 4.0f : 2.0f) * p[i]; /* exact in float */
    }
    for (int64_t j = 0; j < w; j++) {
        half[j] = 0.5f;
    }
    ck_assert_int_eq(ebm_model_set_params(bin, q), EBM_OK);
    ck_assert_int_eq(ebm_model_set_params(twin, q), EBM_OK);
    ck_assert_int_eq(ebm_model_set_offsets(bin, half, 0), EBM_OK);

    float z[256 * 8], s[256 * 8];
    for (int k = 0; k < 256; k++) {
        for (int j = 0; j < 8; j++) {
            z[k * 8 + j] = (float)(k >> j & 1);
            s[k * 8 + j] = 2.0f * z[k * 8 + j] - 1.0f;
        }
    }
    double es[256], eb[256], et[256], zs, zb, zt;
    ck_assert_int_eq(ebm_model_energy(spin, 256, s, w, es), EBM_OK);
    ck_assert_int_eq(ebm_model_energy(bin, 256, z, w, eb), EBM_OK);
    ck_assert_int_eq(ebm_model_energy(twin, 256, z, w, et), EBM_OK);
    double worst = 0.0;
    for (int k = 0; k < 256; k++) {
        worst = fmax(worst, fabs(es[k] - eb[k]) / (1.0 + fabs(es[k])));
    }
    ck_assert_msg(worst < 1e-12, "energies differ by %g (relative)", worst);
    ck_assert_msg(max_diff(256, es, et) > 0.1, "the twin's energies agree");
    ck_assert_int_eq(ebm_model_log_partition_exact(spin, &zs), EBM_OK);
    ck_assert_int_eq(ebm_model_log_partition_exact(bin, &zb), EBM_OK);
    ck_assert_int_eq(ebm_model_log_partition_exact(twin, &zt), EBM_OK);
    ck_assert_msg(fabs(zs - zb) < 1e-12 * (1.0 + fabs(zs)), "log Z %.17g vs %.17g", zs, zb);
    ck_assert_msg(fabs(zs - zt) > 0.1, "the twin's log Z agrees");

    /* P(z = 1 | rest) = (1 + E[s | rest]) / 2 for every layer, within
     * float rounding: the two models' inputs are sums of at most 6 float
     * terms (the binary model's bias with its offsets folded in) whose
     * partial sums stay below 16 and 8, so they are within 2.9e-6 and
     * 1.2e-6 of 2 a and a; sigmoid' <= 1/4 and tanh' / 2 <= 1/2, with 4 ulp
     * for each function, keep the means within 1.7e-6 of each other:
     * tolerance 4e-6 (observed: 9e-8 on the four OpenBLAS kernel families
     * of this machine). */
    double worst_mean = 0.0;
    for (int64_t l = 0; l < 3; l++) {
        const int64_t nl = sizes[l];
        float ms[256 * 3], mb[256 * 3];
        ck_assert_int_eq(ebm_model_layer_mean(spin, l, 256, s, w, ms, nl), EBM_OK);
        ck_assert_int_eq(ebm_model_layer_mean(bin, l, 256, z, w, mb, nl), EBM_OK);
        for (int64_t r = 0; r < 256 * nl; r++) {
            const double d = fabs((double)mb[r] - 0.5 * (1.0 + (double)ms[r]));
            worst_mean = fmax(worst_mean, d);
            ck_assert_msg(d < 4e-6, "layer %lld, entry %lld: %.9g vs %.9g", (long long)l,
                          (long long)r, (double)mb[r], 0.5 * (1.0 + ms[r]));
        }
    }
    T_VLOG("  spin identity: conditional means within %.3g\n", worst_mean);
    ebm_model_destroy(spin);
    ebm_model_destroy(bin);
    ebm_model_destroy(twin);
}
END_TEST

/* ---- 3. offsets back to 0 --------------------------------------------------------- */

START_TEST(zero_offsets_are_plain)
{
    static const int64_t sizes[] = {4, 3, 2};
    ebm_model_t *plain = t_model(3, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    ebm_model_t *back = t_model(3, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    t_random_params(plain, 41, 1.5);
    t_random_params(back, 41, 1.5);
    float mu[9], zero[9] = {0};
    random_offsets(back, 42, mu);
    ck_assert_int_eq(ebm_model_set_offsets(back, mu, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_set_offsets(back, zero, 0), EBM_OK);
    ck_assert_uint_eq(t_model_hash(plain), t_model_hash(back));

    float x[16 * 9];
    t_fill_states(plain, 16, x, 9, 43);
    double ep[16], eb[16], coef[16];
    for (int r = 0; r < 16; r++) {
        coef[r] = 1.0 + 0.1 * r;
    }
    for (uint32_t S = 0; S <= 5; S++) {
        if (S == 3) {
            continue; /* layers 0 and 1 are adjacent */
        }
        ck_assert_int_eq(ebm_model_free_energy(plain, S, 16, x, 9, ep), EBM_OK);
        ck_assert_int_eq(ebm_model_free_energy(back, S, 16, x, 9, eb), EBM_OK);
        ck_assert(memcmp(ep, eb, sizeof ep) == 0);
    }
    float gp[27] = {0}, gb[27] = {0};
    ck_assert_int_eq(ebm_model_param_count(plain), 27);
    ck_assert_int_eq(ebm_model_energy_grad(plain, 2, 16, x, 9, coef, gp), EBM_OK);
    ck_assert_int_eq(ebm_model_energy_grad(back, 2, 16, x, 9, coef, gb), EBM_OK);
    ck_assert(memcmp(gp, gb, sizeof gp) == 0);
    unsigned char bp[256], bb[256];
    size_t np_, nb_;
    ck_assert_int_eq(ebm_model_save_buffer(plain, bp, sizeof bp, &np_), EBM_OK);
    ck_assert_int_eq(ebm_model_save_buffer(back, bb, sizeof bb, &nb_), EBM_OK);
    ck_assert_uint_eq(np_, nb_);
    ck_assert(memcmp(bp, bb, np_) == 0);
    ebm_model_destroy(plain);
    ebm_model_destroy(back);
}
END_TEST

/* ---- 4. the moving average -------------------------------------------------------- */

START_TEST(move_is_the_average)
{
    static const int64_t sizes[] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_SPIN, EBM_UNITS_BINARY);
    t_random_params(m, 51, 1.0);
    float mu[5], target[5], got[5];
    random_offsets(m, 52, mu);
    random_offsets(m, 53, target);
    ck_assert_int_eq(ebm_model_set_offsets(m, mu, 0), EBM_OK);
    const uint64_t h = t_model_hash(m);
    ck_assert_int_eq(ebm_model_move_offsets(m, 0.0, target), EBM_OK);
    ck_assert_uint_eq(t_model_hash(m), h);
    ck_assert_int_eq(ebm_model_move_offsets(m, 0.25, target), EBM_OK);
    ck_assert_int_eq(ebm_model_get_offsets(m, got), EBM_OK);
    for (int j = 0; j < 5; j++) {
        const float want = (float)((double)mu[j] + 0.25 * ((double)target[j] - (double)mu[j]));
        ck_assert_msg(got[j] == want, "offset %d: %.9g, want %.9g", j, (double)got[j],
                      (double)want);
    }
    ck_assert_int_eq(ebm_model_move_offsets(m, 1.0, target), EBM_OK);
    ck_assert_int_eq(ebm_model_get_offsets(m, got), EBM_OK);
    ck_assert(memcmp(got, target, sizeof got) == 0);
    /* -0 is stored as +0 (as a file holds it), and a move by 0 keeps the
     * biases' bits, -0 included. */
    const float negzero[5] = {-0.0f, -0.0f, -0.0f, -0.0f, -0.0f};
    ck_assert_int_eq(ebm_model_set_offsets(m, negzero, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_get_offsets(m, got), EBM_OK);
    for (int j = 0; j < 5; j++) {
        ck_assert_msg(!signbit(got[j]), "offset %d kept its sign bit", j);
    }
    float p[11];
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    p[6] = -0.0f; /* b_0[0] */
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    ck_assert_int_eq(ebm_model_set_offsets(m, mu, 0), EBM_OK);
    const uint64_t h0 = t_model_hash(m);
    ck_assert_int_eq(ebm_model_set_offsets(m, mu, 1), EBM_OK);
    ck_assert_uint_eq(t_model_hash(m), h0);
    ebm_model_destroy(m);
}
END_TEST

/* ---- 5. bad input ----------------------------------------------------------------- */

START_TEST(offsets_bad_input)
{
    static const int64_t sizes[] = {3, 2}, gsizes[] = {2, 2};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_SPIN);
    ebm_model_t *g = t_model(2, gsizes, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
    t_random_params(m, 61, 1.0);
    float mu[5] = {0.5f, 0.25f, 1.0f, -0.5f, 0.75f}, bad[5], out[5];
    ck_assert_int_eq(ebm_model_set_offsets(m, mu, 0), EBM_OK);
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, m, NULL);

    ck_assert_int_eq(ebm_model_get_offsets(NULL, out), EBM_ENULL);
    FAILS(&s, EBM_ENULL, "out", NULL, ebm_model_get_offsets(m, NULL));
    ck_assert_int_eq(ebm_model_set_offsets(NULL, mu, 0), EBM_ENULL);
    FAILS(&s, EBM_ENULL, "mu", NULL, ebm_model_set_offsets(m, NULL, 0));
    FAILS(&s, EBM_EVALUE, "keep_law is 2", NULL, ebm_model_set_offsets(m, mu, 2));
    memcpy(bad, mu, sizeof bad);
    bad[1] = 1.5f;
    FAILS3(&s, EBM_EVALUE, "mu[1] (layer 0, unit 1) is 1.5", "binary", "[0, 1]",
           ebm_model_set_offsets(m, bad, 1));
    bad[1] = -0.25f;
    FAILS(&s, EBM_EVALUE, "mu[1]", "-0.25", ebm_model_set_offsets(m, bad, 0));
    memcpy(bad, mu, sizeof bad);
    bad[4] = -1.5f;
    FAILS3(&s, EBM_EVALUE, "mu[4] (layer 1, unit 1) is -1.5", "spin", "[-1, 1]",
           ebm_model_set_offsets(m, bad, 1));
    bad[4] = NAN;
    FAILS(&s, EBM_EVALUE, "mu[4]", "nan", ebm_model_set_offsets(m, bad, 1));
    ck_assert_int_eq(ebm_model_move_offsets(NULL, 0.5, mu), EBM_ENULL);
    FAILS(&s, EBM_ENULL, "target", NULL, ebm_model_move_offsets(m, 0.5, NULL));
    FAILS(&s, EBM_EVALUE, "rate is -0.1", "[0, 1]", ebm_model_move_offsets(m, -0.1, mu));
    FAILS(&s, EBM_EVALUE, "rate is 1.5", NULL, ebm_model_move_offsets(m, 1.5, mu));
    FAILS(&s, EBM_EVALUE, "rate is nan", NULL, ebm_model_move_offsets(m, NAN, mu));
    FAILS(&s, EBM_EVALUE, "target[4]", "nan", ebm_model_move_offsets(m, 0.5, bad));

    /* Moved biases beyond float's range: W = 3e38 and offsets moved by 1. */
    float huge[11];
    for (int i = 0; i < 11; i++) {
        huge[i] = 3e38f;
    }
    ck_assert_int_eq(ebm_model_set_params(m, huge), EBM_OK);
    float far[5] = {1.0f, 1.0f, 1.0f, -1.0f, -1.0f}, near[5] = {0, 0, 0, 1.0f, 1.0f};
    ck_assert_int_eq(ebm_model_set_offsets(m, near, 0), EBM_OK);
    t_snap_init(&s, T_MSG_MODEL, m, NULL);
    FAILS3(&s, EBM_EVALUE, "would make b_0[0] ", "beyond float", "unchanged",
           ebm_model_set_offsets(m, far, 1));

    /* A Gaussian-visible model has no offsets; zeros are accepted. */
    float gz[4] = {0}, gmu[4] = {0, 0, 0.5f, 0};
    t_snap_init(&s, T_MSG_MODEL, g, NULL);
    FAILS(&s, EBM_EUNSUPPORTED, "mu[2] (layer 1, unit 0) is 0.5", "Gaussian",
          ebm_model_set_offsets(g, gmu, 0));
    ck_assert_int_eq(ebm_model_set_offsets(g, gz, 1), EBM_OK);
    FINISH();
    ebm_model_destroy(m);
    ebm_model_destroy(g);
}
END_TEST

Suite *ebm_centring_suite(void)
{
    const t_test tests[] = {
        {"law", keep_law_keeps_the_law, N_DISCRETE, 60, NULL, NULL},
        {"spin link", spin_is_half_centred_binary, 0, 30, NULL, NULL},
        {"plain", zero_offsets_are_plain, 0, 30, NULL, NULL},
        {"average", move_is_the_average, 0, 30, NULL, NULL},
        {"bad input", offsets_bad_input, 0, 30, t_soft_setup, NULL},
    };
    return t_suite("centring", tests, sizeof tests / sizeof tests[0]);
}
