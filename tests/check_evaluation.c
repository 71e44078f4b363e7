/*
 * Evaluation (include/ebm.h, "Exact evaluation"; tests/README.md, classes
 * 1, 3 and 4).
 *
 * Exact: log Z by enumeration against the brute force of ref_energy.c (and
 * against its closed form on models with zero parameters), log p(v) of
 * every visible configuration against brute force, summing to 1. AIS log Z
 * against exact enumeration, and the mean-field lower bound on log p(v)
 * against the exact log-likelihood.
 *
 * Bad input: as in check_energy.c, on the fixture models of tests.h; the
 * enumeration limits refuse at once (EBM_ELIMIT within 0.5 s).
 */
#include "tests.h"
#include "ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* Laws: AIS and the mean-field bound                                       */
/* ------------------------------------------------------------------------ */

/* A model with deterministic, clearly non-trivial parameters. */
static ebm_model_t *eval_model(int64_t n_layers, const int64_t *sizes, int vu, int hu, double scale)
{
    ebm_model_t *m = t_model(n_layers, sizes, vu, hu);
    int64_t np = ebm_model_param_count(m);
    float *p = malloc((size_t)np * sizeof *p);
    ck_assert_ptr_nonnull(p);
    for (int64_t i = 0; i < np; i++) {
        p[i] = (float)(scale * sin(1.3 * (double)i + 0.4));
    }
    int64_t off, rows, cols;
    if (ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &off, &rows, &cols) == EBM_OK) {
        for (int64_t i = 0; i < cols; i++) {
            p[off + i] = (float)(0.3 * sin((double)i));
        }
    }
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    free(p);
    return m;
}

typedef struct ais_case {
    int64_t n_layers;
    int64_t sizes[3];
    int vu, hu;
    double scale;
    int centred; /* offsets 0.5 + 0.45 sin(0.7 j) (spin: 0.9 sin) */
} ais_case;

/* Not trivial to enumerate, small enough to: RBM 14x10 (2^10 states),
 * DBM 6-6-4 (2^6), GRBM 5x8 (2^8 hidden states, v integrated); the
 * centred ones last (ais_base_matches_exact runs the first four). */
static const ais_case ais_cases[] = {
    {2, {14, 10, 0}, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 0.8, 0},
    {2, {14, 10, 0}, EBM_UNITS_SPIN, EBM_UNITS_SPIN, 0.8, 0},
    {3, {6, 6, 4}, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 0.8, 0},
    {3, {6, 6, 4}, EBM_UNITS_SPIN, EBM_UNITS_SPIN, 0.8, 0},
    {2, {5, 8, 0}, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY, 0.5, 0},
    {2, {14, 10, 0}, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 0.8, 1},
    {3, {6, 6, 4}, EBM_UNITS_SPIN, EBM_UNITS_SPIN, 0.8, 1},
};

static ebm_model_t *ais_model(const ais_case *c)
{
    ebm_model_t *m = eval_model(c->n_layers, c->sizes, c->vu, c->hu, c->scale);
    if (c->centred) {
        float mu[32];
        for (int64_t j = 0; j < ebm_model_state_width(m); j++) {
            mu[j] = (float)(c->vu == EBM_UNITS_SPIN ? 0.9 * sin(0.7 * (double)j)
                                                    : 0.5 + 0.45 * sin(0.7 * (double)j));
        }
        ck_assert_int_eq(ebm_model_set_offsets(m, mu, 0), EBM_OK);
    }
    return m;
}

/* The broken twin of the AIS tests: flip the first bias of layer l of m (0
 * becomes 1) and return the exact log Z of that model. */
static double flipped_log_z(ebm_model_t *m, int64_t l)
{
    int64_t np = ebm_model_param_count(m), off;
    float *p = malloc((size_t)np * sizeof *p);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, l, &off, NULL, NULL), EBM_OK);
    p[off] = -p[off] + (p[off] == 0.0f ? 1.0f : 0.0f);
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    free(p);
    double flipped;
    ck_assert_int_eq(ebm_model_log_partition_exact(m, &flipped), EBM_OK);
    return flipped;
}

/* The AIS tests' false-failure probability, each (Bonferroni over its
 * cases: |z| below ref_z_limit(AIS_FAIL_P / cases)). */
#define AIS_FAIL_P 1e-5

/*
 * AIS is consistent: with 10000 betas and 200 chains, z = (estimate -
 * exact log Z) / its standard error is within the Bonferroni limit for the
 * 7 cases, 4.82: a false failure has probability 1e-5 if z is normal, and
 * 2e-5 under the t law of a standard error from 200 chains (199 degrees
 * of freedom); the weights' skew adds little. Over 90 seeds per case (630
 * z-scores) the largest |z| was 3.2, the mean z per case -0.09 to +0.33
 * (AIS's bias is far below its standard error here) and its SD 0.88 to
 * 1.09. With 20 times more betas than 500 the standard error shrinks.
 * Broken twin: the same estimate against log Z of the model with one bias
 * flipped is outside the limit (at least 11.9 standard errors away over
 * the seeds). The four OpenBLAS kernel families of this machine give the
 * same estimates (to 1e-6).
 */
START_TEST(ais_matches_exact)
{
    const ais_case *c = &ais_cases[_i];
    ebm_model_t *m = ais_model(c);
    double exact, est, se, est_fine, se_fine;
    ck_assert_int_eq(ebm_model_log_partition_exact(m, &exact), EBM_OK);
    ebm_rng_t *rng;
    ck_assert_int_eq(ebm_rng_create(&rng, 17, (uint64_t)_i), EBM_OK);
    ck_assert_int_eq(ebm_model_log_partition_ais(m, rng, 200, 500, &est, &se), EBM_OK);
    int fine_betas = t_level() >= 2 ? 50000 : 10000;
    ck_assert_int_eq(ebm_model_log_partition_ais(m, rng, 200, fine_betas, &est_fine, &se_fine),
                     EBM_OK);
    const int cases = (int)(sizeof ais_cases / sizeof ais_cases[0]);
    const double limit = ref_z_limit(AIS_FAIL_P / cases);
    /* broken twin: a model with the first visible bias flipped */
    const double flipped = flipped_log_z(m, c->vu == EBM_UNITS_GAUSSIAN ? 1 : 0);
    T_VLOG("  AIS case %d: %.6f +- %.6f, exact %.6f (z %.2f, limit %.2f), twin %.1f se away\n",
           _i, est_fine, se_fine, exact, (est_fine - exact) / se_fine, limit,
           fabs(est_fine - flipped) / se_fine);
    ck_assert_msg(fabs(est_fine - exact) <= limit * se_fine + 1e-9,
                  "case %d: AIS %.6f +- %.6f, exact %.6f", _i, est_fine, se_fine, exact);
    ck_assert_msg(se_fine < se, "case %d: the standard error did not shrink (%g -> %g)", _i, se,
                  se_fine);
    ck_assert_msg(fabs(est_fine - flipped) > limit * se_fine, "case %d: the twin was not detected",
                  _i);
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
}
END_TEST

/*
 * AIS from a base distribution (ebm_model_log_partition_ais_base): on the
 * discrete cases, with base biases in [-1.5, 1.5], the estimate with 10000
 * betas is within the Bonferroni limit for the 4 cases, 4.71 standard
 * errors, of the exact log Z (false failure 1e-5, 2e-5 under the t law,
 * as in ais_matches_exact), and the flipped model's log Z is outside it
 * (the twin). Over 90 seeds per case (360 z-scores) the largest |z| was 3.9,
 * the mean z per case -0.04 to +0.13 and its SD 0.83 to 1.11; the twin was
 * at least 14.5 standard errors away. Exact case: an RBM with W = 0
 * and base = its visible biases has p_0 = p_1 on v, every chain's weight
 * is the same, and the estimate is log Z to 1e-9 with standard error 0.
 * Bad input: a Gaussian visible layer, a non-finite base bias; nothing
 * moves.
 */
START_TEST(ais_base_matches_exact)
{
    const ais_case *c = &ais_cases[_i];
    ebm_model_t *m = ais_model(c);
    double exact, est, se;
    ck_assert_int_eq(ebm_model_log_partition_exact(m, &exact), EBM_OK);
    float base[16];
    uint64_t us = 11 + (uint64_t)_i;
    for (int64_t i = 0; i < c->sizes[0]; i++) {
        base[i] = (float)(3.0 * t_uniform(&us) - 1.5);
    }
    ebm_rng_t *rng;
    ck_assert_int_eq(ebm_rng_create(&rng, 19, (uint64_t)_i), EBM_OK);
    const int betas = t_level() >= 2 ? 50000 : 10000;
    ck_assert_int_eq(ebm_model_log_partition_ais_base(m, rng, 200, betas, base, &est, &se), EBM_OK);
    const double limit = ref_z_limit(AIS_FAIL_P / 4);
    const double flipped = flipped_log_z(m, 0);
    T_VLOG("  AIS from a base, case %d: %.6f +- %.6f, exact %.6f (z %.2f, limit %.2f), twin %.1f "
           "se away\n",
           _i, est, se, exact, (est - exact) / se, limit, fabs(est - flipped) / se);
    ck_assert_msg(fabs(est - exact) <= limit * se + 1e-9, "case %d: AIS %.6f +- %.6f, exact %.6f",
                  _i, est, se, exact);
    ck_assert_msg(fabs(est - flipped) > limit * se, "case %d: the twin was not detected", _i);
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
}
END_TEST

START_TEST(ais_base_exact_and_bad_input)
{
    const int64_t sizes[2] = {6, 4};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    float p[34] = {0}, base[6];
    int64_t ob, oc;
    ck_assert_int_eq(ebm_model_param_count(m), 34);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, 0, &ob, NULL, NULL), EBM_OK);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, 1, &oc, NULL, NULL), EBM_OK);
    for (int i = 0; i < 6; i++) {
        p[ob + i] = base[i] = 0.4f * (float)i - 1.1f;
    }
    for (int j = 0; j < 4; j++) {
        p[oc + j] = 0.7f - 0.5f * (float)j;
    }
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    double exact, est, se;
    ck_assert_int_eq(ebm_model_log_partition_exact(m, &exact), EBM_OK);
    ebm_rng_t *rng = t_rng(23, 0);
    ck_assert_int_eq(ebm_model_log_partition_ais_base(m, rng, 10, 7, base, &est, &se), EBM_OK);
    ck_assert_msg(fabs(est - exact) < 1e-9 && se < 1e-12, "W = 0, base = b: %.12f +- %g, exact %.12f",
                  est, se, exact);
    /* bad input */
    const uint64_t h = t_rng_hash(rng);
    double z = -7.0;
    base[3] = NAN;
    ck_assert_int_eq(ebm_model_log_partition_ais_base(m, rng, 10, 7, base, &z, NULL), EBM_EVALUE);
    ck_assert(t_contains(ebm_model_errmsg(m), "base[3] is nan"));
    base[3] = 2e4f;
    ck_assert_int_eq(ebm_model_log_partition_ais_base(m, rng, 10, 7, base, &z, NULL), EBM_EVALUE);
    ck_assert(z == -7.0 && t_rng_hash(rng) == h);
    const int64_t gs[2] = {3, 2};
    ebm_model_t *g = t_model(2, gs, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
    ck_assert_int_eq(ebm_model_log_partition_ais_base(g, rng, 10, 7, base, &z, NULL),
                     EBM_EUNSUPPORTED);
    ck_assert(t_contains(ebm_model_errmsg(g), "Gaussian"));
    ck_assert_int_eq(ebm_model_log_partition_ais_base(g, rng, 10, 7, NULL, &z, NULL), EBM_OK);
    ebm_model_destroy(g);
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
}
END_TEST

START_TEST(ais_is_deterministic_and_checks_arguments)
{
    const int64_t sizes[2] = {4, 3};
    ebm_model_t *m = eval_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 0.5);
    ebm_rng_t *a, *b;
    ck_assert_int_eq(ebm_rng_create(&a, 5, 0), EBM_OK);
    ck_assert_int_eq(ebm_rng_create(&b, 5, 0), EBM_OK);
    double za, zb, sa, sb;
    ck_assert_int_eq(ebm_model_log_partition_ais(m, a, 10, 50, &za, &sa), EBM_OK);
    ck_assert_int_eq(ebm_model_log_partition_ais(m, b, 10, 50, &zb, &sb), EBM_OK);
    ck_assert(za == zb && sa == sb);
    ck_assert_int_eq(ebm_model_log_partition_ais(m, a, 10, 50, &za, NULL), EBM_OK);
    double z = 123.0;
    ck_assert_int_eq(ebm_model_log_partition_ais(m, a, 1, 50, &z, NULL), EBM_ESHAPE);
    ck_assert_ptr_nonnull(strstr(ebm_model_errmsg(m), "n_chains"));
    ck_assert_int_eq(ebm_model_log_partition_ais(m, a, 10, 0, &z, NULL), EBM_ESHAPE);
    ck_assert_ptr_nonnull(strstr(ebm_model_errmsg(m), "n_betas"));
    ck_assert_int_eq(ebm_model_log_partition_ais(m, NULL, 10, 5, &z, NULL), EBM_ENULL);
    ck_assert_int_eq(ebm_model_log_partition_ais(m, a, 10, 5, NULL, NULL), EBM_ENULL);
    ck_assert_int_eq(ebm_model_log_partition_ais(NULL, a, 10, 5, &z, NULL), EBM_ENULL);
    ck_assert(z == 123.0);
    ebm_rng_destroy(a);
    ebm_rng_destroy(b);
    ebm_model_destroy(m);
}
END_TEST

/*
 * The mean-field bound is a lower bound: for every visible configuration of
 * a small DBM it is at most the exact log p(v) and within a reasonable gap;
 * for an RBM the mean-field posterior of the single hidden layer is exact
 * (factorised given v), so the bound equals log p(v).
 */
START_TEST(bound_is_a_lower_bound)
{
    const int64_t dbm[3] = {4, 4, 3}, rbm[2] = {5, 4};
    for (int units = EBM_UNITS_BINARY; units <= EBM_UNITS_SPIN; units++) {
        for (int deep = 0; deep < 2; deep++) {
            ebm_model_t *m = deep ? eval_model(3, dbm, units, units, 0.9)
                                  : eval_model(2, rbm, units, units, 0.9);
            int64_t n0 = deep ? 4 : 5, nv = (int64_t)1 << n0;
            float *v = malloc((size_t)(nv * n0) * sizeof *v);
            double *exact = malloc((size_t)nv * sizeof *exact);
            double *bound = malloc((size_t)nv * sizeof *bound);
            for (int64_t k = 0; k < nv; k++) {
                for (int64_t i = 0; i < n0; i++) {
                    int bit = (int)(k >> i & 1);
                    v[k * n0 + i] = units == EBM_UNITS_SPIN ? (bit ? 1.0f : -1.0f) : (float)bit;
                }
            }
            double log_z;
            ck_assert_int_eq(ebm_model_log_partition_exact(m, &log_z), EBM_OK);
            ck_assert_int_eq(ebm_model_log_likelihood(m, log_z, nv, v, n0, exact), EBM_OK);
            ck_assert_int_eq(ebm_model_log_likelihood_bound(m, log_z, nv, v, n0, bound), EBM_OK);
            double worst_gap = 0.0;
            for (int64_t k = 0; k < nv; k++) {
                ck_assert_msg(bound[k] <= exact[k] + 1e-6, "units %d deep %d v %lld: bound %.8f > "
                              "log p %.8f", units, deep, (long long)k, bound[k], exact[k]);
                worst_gap = fmax(worst_gap, exact[k] - bound[k]);
            }
            if (!deep) {
                ck_assert_msg(worst_gap < 1e-5, "RBM bound should be exact, gap %g", worst_gap);
            } else {
                ck_assert_msg(worst_gap > 1e-6 && worst_gap < 5.0, "DBM gap %g", worst_gap);
            }
            free(v);
            free(exact);
            free(bound);
            ebm_model_destroy(m);
        }
    }
}
END_TEST

/* The proposal of ebm_model_log_likelihood_is, rebuilt from the public API:
 * the mean-field means of the sampled layers (mask sampled) for v, then for
 * every configuration of the sampled units the exact q(h) (with the uniform
 * component's weight eps) and log w(h) = -F(v, h) - log q_lib(h), F with the
 * layers of mask summed out, where q_lib has the library's weight 0.05.
 * Returns E_q[log w] - log_z and Var_q[log w] (q with eps: eps = 0.05 is the
 * library's proposal, any other a broken twin's). */
static void is_reference(const ebm_model_t *m, uint32_t sampled, uint32_t summed, const float *v,
                         double log_z, double eps, double *mean, double *var)
{
    const int64_t nl = ebm_model_num_layers(m), w = ebm_model_state_width(m);
    const int64_t n0 = ebm_model_layer_size(m, 0);
    const int spin = ebm_model_layer_units(m, 1) == EBM_UNITS_SPIN;
    float *mu = calloc((size_t)w, sizeof *mu), *x = calloc((size_t)w, sizeof *x);
    uint8_t *clamp = calloc((size_t)w, 1);
    memcpy(mu, v, (size_t)n0 * sizeof *mu);
    memset(clamp, 1, (size_t)n0);
    for (int64_t k = n0; k < w; k++) {
        mu[k] = spin ? 0.0f : 0.5f;
    }
    ck_assert_int_ge(ebm_model_mean_field(m, 1, mu, w, clamp, 0, 200, 1e-7), 0);
    int64_t units = 0, cols[64];
    for (int64_t l = 1; l < nl; l++) {
        for (int64_t a = 0; (sampled >> l & 1u) && a < ebm_model_layer_size(m, l); a++) {
            cols[units++] = ebm_model_layer_offset(m, l) + a;
        }
    }
    double e1 = 0.0, e2 = 0.0;
    for (int64_t h = 0; h < (INT64_C(1) << units); h++) {
        memcpy(x, v, (size_t)n0 * sizeof *x);
        double lqmf = 0.0;
        for (int64_t j = 0; j < units; j++) {
            const int on = (int)(h >> j & 1);
            const double p = spin ? 0.5 * (1.0 + mu[cols[j]]) : (double)mu[cols[j]];
            x[cols[j]] = on ? 1.0f : spin ? -1.0f : 0.0f;
            lqmf += on ? log(p) : log1p(-p);
        }
        double f;
        ck_assert_int_eq(ebm_model_free_energy(m, summed, 1, x, w, &f), EBM_OK);
        const double u = -(double)units * log(2.0);
        const double q = (1.0 - eps) * exp(lqmf) + eps * exp(u);
        const double lw = -f - log(0.95 * exp(lqmf) + 0.05 * exp(u));
        e1 += q * lw;
        e2 += q * lw * lw;
    }
    *mean = e1 - log_z;
    *var = e2 - e1 * e1;
    free(mu);
    free(x);
    free(clamp);
}

/*
 * The importance-sampled estimate (ebm_model_log_likelihood_is) on small
 * DBMs whose log p(v) is exact by enumeration, for every visible
 * configuration: a binary and a spin DBM 4-4-3 (layer 2 sampled, layer 1
 * summed out), the binary one also with weights of scale 2.5 (a multimodal
 * posterior), and a binary DBM 3-3-3-2 (layer 2 sampled, layers 1 and 3
 * summed out).
 *  - K = 1: its law is known exactly (is_reference: the proposal rebuilt
 *    from the mean-field posterior, its weights enumerated), so the mean of
 *    400 runs per v is within 5 standard errors of E_q[log w] (56 tests at 5
 *    sigma: false failure 3.2e-5; the largest |z| over 9 sets of seeds was
 *    3.4). Twin: the reference with the uniform component's weight 0.5
 *    instead of 0.05 must be rejected (|z| > 5 for some v; observed 9.6 to
 *    10.7 over the 9 sets).
 *  - K = 1, 16, 256, 4096 (24 runs each): pooled over v and runs, the mean
 *    estimate is at most log p(v) plus 5 pooled standard errors (a lower
 *    bound in expectation; 16 one-sided tests at 5 sigma: 4.6e-6). From
 *    K = 16 the mean is at least the mean-field bound's less 5 standard
 *    errors (its expectation is above it: observed 23 to 2100 standard
 *    errors above). At K = 4096 the mean gap is below K = 1's exact one
 *    (is_reference) and below 0.01 nats: observed 20 to 170 and 7.6 to 230
 *    standard errors below.
 * An RBM's estimate is exact whatever K.
 */
START_TEST(is_estimate_approaches_exact)
{
    static const struct {
        int nl;
        int64_t sizes[4];
        int units;
        double scale;
        uint32_t sampled, summed;
    } cases[] = {{3, {4, 4, 3, 0}, EBM_UNITS_BINARY, 0.9, 1u << 2, 1u << 1},
                 {3, {4, 4, 3, 0}, EBM_UNITS_SPIN, 0.9, 1u << 2, 1u << 1},
                 {3, {4, 4, 3, 0}, EBM_UNITS_BINARY, 2.5, 1u << 2, 1u << 1},
                 {4, {3, 3, 3, 2}, EBM_UNITS_BINARY, 0.9, 1u << 2, 1u << 1 | 1u << 3}};
    enum { R = 24, R1 = 400, NK = 4 };
    const int64_t ks[NK] = {1, 16, 256, 4096};
    double twin_z = 0.0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ebm_model_t *m =
            eval_model(cases[c].nl, cases[c].sizes, cases[c].units, cases[c].units, cases[c].scale);
        const int64_t n0 = cases[c].sizes[0], nv = (int64_t)1 << n0;
        float *v = malloc((size_t)(nv * n0) * sizeof *v);
        double *exact = malloc((size_t)nv * sizeof *exact), *bound = malloc((size_t)nv * sizeof *bound);
        double *est = malloc((size_t)nv * sizeof *est);
        double *sum = malloc((size_t)nv * sizeof *sum), *sum2 = malloc((size_t)nv * sizeof *sum2);
        for (int64_t k = 0; k < nv; k++) {
            for (int64_t i = 0; i < n0; i++) {
                const int bit = (int)(k >> i & 1);
                v[k * n0 + i] = cases[c].units == EBM_UNITS_SPIN ? (bit ? 1.0f : -1.0f) : (float)bit;
            }
        }
        double log_z, gap[NK], mean_bound = 0.0;
        ck_assert_int_eq(ebm_model_log_partition_exact(m, &log_z), EBM_OK);
        ck_assert_int_eq(ebm_model_log_likelihood(m, log_z, nv, v, n0, exact), EBM_OK);
        ck_assert_int_eq(ebm_model_log_likelihood_bound(m, log_z, nv, v, n0, bound), EBM_OK);
        for (int64_t k = 0; k < nv; k++) {
            mean_bound += bound[k] / (double)nv;
        }
        /* K = 1 against its exact law, and the twin's. */
        memset(sum, 0, (size_t)nv * sizeof *sum);
        for (int rep = 0; rep < R1; rep++) {
            ebm_rng_t *rng = t_rng(900 + (uint64_t)rep, c);
            ck_assert_int_eq(ebm_model_log_likelihood_is(m, rng, log_z, 1, nv, v, n0, est), EBM_OK);
            ebm_rng_destroy(rng);
            for (int64_t k = 0; k < nv; k++) {
                sum[k] += est[k] / R1;
            }
        }
        double worst = 0.0, gap1 = 0.0;
        for (int64_t k = 0; k < nv; k++) {
            double mean, var, tmean, tvar;
            is_reference(m, cases[c].sampled, cases[c].summed, v + k * n0, log_z, 0.05, &mean,
                         &var);
            gap1 += (exact[k] - mean) / (double)nv;
            is_reference(m, cases[c].sampled, cases[c].summed, v + k * n0, log_z, 0.5, &tmean,
                         &tvar);
            const double z = (sum[k] - mean) / sqrt(var / R1 + 1e-300);
            worst = fmax(worst, fabs(z));
            twin_z = fmax(twin_z, fabs(sum[k] - tmean) / sqrt(tvar / R1 + 1e-300));
            ck_assert_msg(fabs(z) < 5.0, "case %zu v %lld, K 1: mean %.6f, exact law's %.6f (z %.2f)",
                          c, (long long)k, sum[k], mean, z);
        }
        if (t_verbose()) {
            printf("is[%zu] K 1 against its exact law: largest |z| %.2f; its mean gap %.5f nats\n",
                   c, worst, gap1);
        }
        for (int ik = 0; ik < NK; ik++) {
            memset(sum, 0, (size_t)nv * sizeof *sum);
            memset(sum2, 0, (size_t)nv * sizeof *sum2);
            for (int rep = 0; rep < R; rep++) {
                ebm_rng_t *rng = t_rng(700 + (uint64_t)rep, (uint64_t)ik);
                ck_assert_int_eq(ebm_model_log_likelihood_is(m, rng, log_z, ks[ik], nv, v, n0, est),
                                 EBM_OK);
                ebm_rng_destroy(rng);
                for (int64_t k = 0; k < nv; k++) {
                    sum[k] += est[k];
                    sum2[k] += est[k] * est[k];
                }
            }
            double mean_est = 0.0, pooled_var = 0.0;
            gap[ik] = 0.0;
            for (int64_t k = 0; k < nv; k++) {
                const double mean = sum[k] / R;
                pooled_var += fmax(sum2[k] / R - mean * mean, 0.0) * R / (R - 1) / R;
                gap[ik] += (exact[k] - mean) / (double)nv;
                mean_est += mean / (double)nv;
            }
            const double se = sqrt(pooled_var) / (double)nv;
            if (t_verbose()) {
                printf("is[%zu] K %5lld: mean gap %.5f nats (se %.5f), mean estimate %.4f, "
                       "mean-field bound %.4f\n",
                       c, (long long)ks[ik], gap[ik], se, mean_est, mean_bound);
            }
            ck_assert_msg(gap[ik] >= -5.0 * se - 1e-9,
                          "case %zu K %lld: the estimate is above log p(v) by %.6f (se %.2g)", c,
                          (long long)ks[ik], -gap[ik], se);
            if (ks[ik] >= 16) {
                T_VLOG("is[%zu] K %5lld: above the mean-field bound by %.1f se\n", c,
                       (long long)ks[ik], (mean_est - mean_bound) / se);
                ck_assert_msg(mean_est >= mean_bound - 5.0 * se,
                              "case %zu K %lld: mean estimate %.5f below the mean-field bound %.5f "
                              "(se %.2g)", c, (long long)ks[ik], mean_est, mean_bound, se);
            }
            if (ik == NK - 1) {
                T_VLOG("is[%zu] K %5lld: gap below K 1's exact one by %.0f se, below 0.01 by %.1f "
                       "se\n", c, (long long)ks[ik], (gap1 - gap[ik]) / se, (0.01 - gap[ik]) / se);
                ck_assert_msg(gap[ik] < gap1 && gap[ik] < 0.01,
                              "case %zu: the gap went from %.5f (K 1, exact) to %.5f (K 4096, se "
                              "%.2g)", c, gap1, gap[ik], se);
            }
        }
        free(v);
        free(exact);
        free(bound);
        free(est);
        free(sum);
        free(sum2);
        ebm_model_destroy(m);
    }
    if (t_verbose()) {
        printf("is twin (uniform weight 0.5 in the reference): largest |z| %.2f\n", twin_z);
    }
    ck_assert_msg(twin_z > 5.0, "the twin's law passed: largest |z| %.2f", twin_z);
    /* An RBM: exact whatever K. */
    const int64_t rbm[2] = {4, 3};
    ebm_model_t *m = eval_model(2, rbm, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 1.5);
    const float v[4] = {1, 0, 1, 1};
    double log_z, exact, is;
    ebm_rng_t *rng = t_rng(7, 0);
    ck_assert_int_eq(ebm_model_log_partition_exact(m, &log_z), EBM_OK);
    ck_assert_int_eq(ebm_model_log_likelihood(m, log_z, 1, v, 4, &exact), EBM_OK);
    ck_assert_int_eq(ebm_model_log_likelihood_is(m, rng, log_z, 5, 1, v, 4, &is), EBM_OK);
    ck_assert_msg(fabs(is - exact) < 1e-9, "RBM: %.12f vs %.12f", is, exact);
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
}
END_TEST

START_TEST(bound_checks_arguments)
{
    const int64_t sizes[3] = {3, 3, 2};
    ebm_model_t *m = eval_model(3, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 0.5);
    float v[3] = {1, 0.5f, 0};
    double ll = 7.0;
    ck_assert_int_eq(ebm_model_log_likelihood_bound(m, 0.0, 1, v, 3, &ll), EBM_EVALUE);
    ck_assert_ptr_nonnull(strstr(ebm_model_errmsg(m), "0.5"));
    v[1] = 1.0f;
    ck_assert_int_eq(ebm_model_log_likelihood_bound(m, NAN, 1, v, 3, &ll), EBM_EVALUE);
    ck_assert_int_eq(ebm_model_log_likelihood_bound(m, 0.0, 1, v, 2, &ll), EBM_ESHAPE);
    ck_assert_int_eq(ebm_model_log_likelihood_bound(m, 0.0, 1, v, 3, NULL), EBM_ENULL);
    ck_assert(ll == 7.0);
    ck_assert_int_eq(ebm_model_log_likelihood_bound(m, 0.0, 0, NULL, 3, NULL), EBM_OK);
    ebm_model_destroy(m);
}
END_TEST

/* ebm_model_log_likelihood_is refuses bad arguments with a message naming
 * them, and changes neither ll nor the generator. */
START_TEST(is_checks_arguments)
{
    const int64_t sizes[3] = {3, 3, 2};
    ebm_model_t *m = eval_model(3, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 0.5);
    float v[9] = {1, 0, 1, 0, 1, 1, 1, 1, 0};
    double ll[3] = {7.0, 7.0, 7.0};
    ebm_rng_t *rng = t_rng(3, 0);
    uint64_t st0[EBM_RNG_STATE_WORDS], st1[EBM_RNG_STATE_WORDS];
    ck_assert_int_eq(ebm_rng_get_state(rng, st0), EBM_OK);
    static const struct {
        int64_t k, n, ldd;
        double log_z;
        int bad_value, null_rng;
        int code;
        const char *text;
    } bad[] = {{0, 2, 3, 0.0, 0, 0, EBM_EVALUE, "n_samples is 0"},
               {(INT64_C(1) << 30) + 1, 2, 3, 0.0, 0, 0, EBM_EVALUE, "n_samples"},
               {4, 2, 3, NAN, 0, 0, EBM_EVALUE, "log_z"},
               {4, 2, 2, 0.0, 0, 0, EBM_ESHAPE, "data"},
               {4, 2, 3, 0.0, 1, 0, EBM_EVALUE, "0.5"},
               {4, 2, 3, 0.0, 0, 1, EBM_ENULL, "rng"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v[4] = bad[i].bad_value ? 0.5f : 1.0f;
        const int rc = ebm_model_log_likelihood_is(m, bad[i].null_rng ? NULL : rng, bad[i].log_z,
                                                   bad[i].k, bad[i].n, v, bad[i].ldd, ll);
        ck_assert_int_eq(rc, bad[i].code);
        ck_assert_msg(strstr(ebm_model_errmsg(m), bad[i].text) != NULL, "case %zu: \"%s\"", i,
                      ebm_model_errmsg(m));
        ck_assert(ll[0] == 7.0 && ll[1] == 7.0);
        ck_assert_int_eq(ebm_rng_get_state(rng, st1), EBM_OK);
        ck_assert(memcmp(st0, st1, sizeof st0) == 0);
    }
    v[4] = 1.0f;
    ck_assert_int_eq(ebm_model_log_likelihood_is(m, rng, 0.0, 4, 2, v, 3, NULL), EBM_ENULL);
    ck_assert_int_eq(ebm_model_log_likelihood_is(NULL, rng, 0.0, 4, 2, v, 3, ll), EBM_ENULL);
    /* n = 0 draws nothing: rng does not move. */
    ck_assert_int_eq(ebm_model_log_likelihood_is(m, rng, 0.0, 4, 0, NULL, 3, NULL), EBM_OK);
    ck_assert_int_eq(ebm_rng_get_state(rng, st1), EBM_OK);
    ck_assert(memcmp(st0, st1, sizeof st0) == 0);
    /* Rows do not depend on n: rows 0 and 1 are the same in calls on 2 and
     * 3 rows; row 1 alone draws from stream row 0, so it differs. The
     * mean-field proposal comes from GEMMs of another shape (docs/
     * conventions.md, "Same bits"), so the estimates agree within 1e-5
     * (relative): the mean field stops within its tolerance (1e-7) of its
     * fixed point, and means in (0.1, 0.9) (inputs below 2) moved by 2e-7
     * move log q by about 2e-6. Each row draws 4 x 2 units from q, and a draw whose
     * uniform falls within rounding of its probability flips: about
     * 16 x 2^-24 = 1e-6. Row 1 alone is 7.8e-4 away, 18 times the
     * tolerance. */
    double two[2], one;
    ck_assert_int_eq(ebm_model_log_likelihood_is(m, rng, 0.0, 4, 3, v, 3, ll), EBM_OK);
    ck_assert_int_eq(ebm_rng_set_state(rng, st0), EBM_OK);
    ck_assert_int_eq(ebm_model_log_likelihood_is(m, rng, 0.0, 4, 2, v, 3, two), EBM_OK);
    for (int r = 0; r < 2; r++) {
        ck_assert_msg(fabs(two[r] - ll[r]) <= 1e-5 * (1.0 + fabs(ll[r])),
                      "row %d: %.17g on 2 rows, %.17g on 3", r, two[r], ll[r]);
    }
    ck_assert_int_eq(ebm_rng_set_state(rng, st0), EBM_OK);
    ck_assert_int_eq(ebm_model_log_likelihood_is(m, rng, 0.0, 4, 1, v + 3, 3, &one), EBM_OK);
    T_VLOG("  IS rows (%.4f, %.4f): 2 against 3 rows %.3g, %.3g; row 1 alone %.3g away\n", ll[0],
           ll[1], fabs(two[0] - ll[0]), fabs(two[1] - ll[1]), fabs(one - ll[1]));
    ck_assert(fabs(one - ll[1]) > 1e-5 * (1.0 + fabs(ll[1])));
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);

    /* A row's stream holds 2^34 words: K (units + 1) beyond it is refused.
     * 4-40-20: layer 2 (20 units) is sampled, so K <= 2^34 / 21. */
    const int64_t big[3] = {4, 40, 20};
    m = eval_model(3, big, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 0.5);
    rng = t_rng(4, 0);
    ck_assert_int_eq(ebm_rng_get_state(rng, st0), EBM_OK);
    const float v4[4] = {1, 0, 0, 1};
    ll[0] = 7.0;
    const int64_t k_max = (INT64_C(1) << 34) / 21;
    ck_assert_int_eq(ebm_model_log_likelihood_is(m, rng, 0.0, k_max + 1, 1, v4, 4, ll),
                     EBM_ELIMIT);
    ck_assert_msg(strstr(ebm_model_errmsg(m), "n_samples is 818089009") != NULL, "%s",
                  ebm_model_errmsg(m));
    ck_assert(ll[0] == 7.0);
    ck_assert_int_eq(ebm_rng_get_state(rng, st1), EBM_OK);
    ck_assert(memcmp(st0, st1, sizeof st0) == 0);
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Exact: log Z and the log-likelihood against enumeration                  */
/* ------------------------------------------------------------------------ */

START_TEST(log_partition)
{
    int mi = _i;
    for (int pi = 0; pi < REF_N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = ref_make_model(mi, pi, &R);
        double lz = NAN;
        ck_assert_int_eq(ebm_model_log_partition_exact(m, &lz), EBM_OK);
        double ref = ref_log_z(&R);
        ck_assert_msg(isfinite(lz), "%s: log Z = %g", R.ctx, lz);
        ck_assert_msg(ref_close_rel(lz, ref, 1e-10), "%s: log Z %.17g, reference %.17g", R.ctx, lz,
                      ref);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
    /* All parameters zero: Z = 2^(number of discrete units) times
     * (2 pi)^(n_0 / 2) for unit-variance Gaussian visible units. */
    const ref_mspec *s = &REF_MODELS[mi];
    ebm_model_t *m = t_model(s->nl, s->sizes, s->vis, s->hid);
    ref_t R;
    ref_init(&R, m, s->name);
    double lz = NAN;
    ck_assert_int_eq(ebm_model_log_partition_exact(m, &lz), EBM_OK);
    double ref = ref_discrete_bits(&R, ref_all_layers(&R)) * log(2.0) +
                 (ref_gauss0(&R) ? 0.5 * (double)R.n[0] * log(2.0 * REF_PI) : 0.0);
    ck_assert_msg(ref_close_rel(lz, ref, 1e-12), "%s zero model: log Z %.17g, expected %.17g",
                  s->name, lz, ref);
    ref_free_all(&R);
    ebm_model_destroy(m);
}
END_TEST

START_TEST(log_likelihood)
{
    int mi = _i;
    for (int pi = 0; pi < REF_N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = ref_make_model(mi, pi, &R);
        uint64_t rs = 11000 + (uint64_t)pi;
        double lz = ref_log_z(&R);
        int64_t n = ref_gauss0(&R) ? 12 : (1ll << R.n[0]);
        int64_t ldd = R.n[0] + 2;
        float *data = malloc((size_t)(n * ldd) * sizeof *data);
        float *row = malloc((size_t)R.width * sizeof *row);
        double *y = malloc((size_t)R.width * sizeof *y);
        double *ll = malloc((size_t)n * sizeof *ll);
        for (int64_t r = 0; r < n; r++) {
            ref_rand_state(&R, &rs, row);
            if (!ref_gauss0(&R)) {
                ref_set_from_code_f(&R, 1u, (uint64_t)r, row);
            }
            memcpy(data + r * ldd, row + R.off[0], (size_t)R.n[0] * sizeof *row);
            data[r * ldd + R.n[0]] = NAN; /* padding is never read */
            data[r * ldd + R.n[0] + 1] = NAN;
        }
        int rc = ebm_model_log_likelihood(m, lz, n, data, ldd, ll);
        ck_assert_msg(rc == EBM_OK, "%s log_likelihood: %s (%s)", R.ctx, ebm_error_name(rc),
                      ebm_model_errmsg(m));
        double psum = 0.0;
        for (int64_t r = 0; r < n; r++) {
            for (int64_t k = 0; k < R.width; k++) {
                y[k] = 0.0;
            }
            for (int64_t i = 0; i < R.n[0]; i++) {
                y[R.off[0] + i] = data[r * ldd + i];
            }
            double ref = -ref_free(&R, ref_all_layers(&R) & ~1u, y) - lz;
            ck_assert_msg(ref_close_rel(ll[r], ref, 1e-9),
                          "%s row %lld: log p(v) %.17g, brute force %.17g", R.ctx, (long long)r,
                          ll[r], ref);
            psum += exp(ll[r]);
        }
        if (!ref_gauss0(&R)) {
            ck_assert_msg(fabs(psum - 1.0) <= 1e-9, "%s: sum_v p(v) = %.17g", R.ctx, psum);
        }
        free(data);
        free(row);
        free(y);
        free(ll);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Bad input                                                                */
/* ------------------------------------------------------------------------ */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

START_TEST(log_partition_bad_input)
{
    double lz = 123.5;
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_rbm, NULL);
    t_snap_track(&s, "log_z", &lz, sizeof lz);
    FAILS(&s, EBM_ENULL, "log_z", NULL, ebm_model_log_partition_exact(g_rbm, NULL));

    /* 40 + 40 binary units: 2^40 states in either class. */
    const int64_t s40[2] = {40, 40};
    ebm_model_t *big = t_model(2, s40, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    t_random_params(big, 40, 0.1);
    t_snap_init(&s, T_MSG_MODEL, big, NULL);
    t_snap_track(&s, "log_z", &lz, sizeof lz);
    double t0 = now();
    FAILS(&s, EBM_ELIMIT, "40", NULL, ebm_model_log_partition_exact(big, &lz));
    double dt = now() - t0;
    CHECK(dt < 0.5, "log_partition_exact({40, 40}) took %.3f s to refuse", dt);
    ebm_model_destroy(big);

    /* GRBM 2 x 40: the visible layer is integrated, so the 40 hidden units
     * must be enumerated. */
    const int64_t g40[2] = {2, 40};
    big = t_model(2, g40, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
    t_snap_init(&s, T_MSG_MODEL, big, NULL);
    t_snap_track(&s, "log_z", &lz, sizeof lz);
    t0 = now();
    FAILS(&s, EBM_ELIMIT, "40", NULL, ebm_model_log_partition_exact(big, &lz));
    dt = now() - t0;
    CHECK(dt < 0.5, "log_partition_exact(GRBM {2, 40}) took %.3f s to refuse", dt);
    ebm_model_destroy(big);

    /* Spin DBM 33-1-33: odd class 1 unit, even class 66: fine and fast. */
    const int64_t s33[3] = {33, 1, 33};
    big = t_model(3, s33, EBM_UNITS_SPIN, EBM_UNITS_SPIN);
    OK(big, ebm_model_log_partition_exact(big, &lz));
    CHECK(isfinite(lz), "log Z of the 33-1-33 DBM is %g", lz);
    ebm_model_destroy(big);
    FINISH();
}
END_TEST

START_TEST(log_likelihood_bad_input)
{
    double lz;
    ck_assert_int_eq(ebm_model_log_partition_exact(g_rbm, &lz), EBM_OK);
    float data[3 * 6];
    double ll[3];
    for (int r = 0; r < 3; r++) {
        for (int j = 0; j < 6; j++) {
            data[r * 6 + j] = j >= 4 ? 0.5f : (float)((r + j) % 2);
        }
    }
    t_sentinel(ll, sizeof ll);
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_rbm, NULL);
    t_snap_track(&s, "data", data, sizeof data);
    t_snap_track(&s, "ll", ll, sizeof ll);
    FAILS(&s, EBM_EVALUE, "log_z", "nan", ebm_model_log_likelihood(g_rbm, NAN, 3, data, 6, ll));
    FAILS(&s, EBM_EVALUE, "log_z", "inf", ebm_model_log_likelihood(g_rbm, INFINITY, 3, data, 6, ll));
    FAILS(&s, EBM_EVALUE, "log_z", "inf", ebm_model_log_likelihood(g_rbm, -INFINITY, 3, data, 6, ll));
    FAILS(&s, EBM_ENULL, "data", NULL, ebm_model_log_likelihood(g_rbm, lz, 3, NULL, 6, ll));
    FAILS(&s, EBM_ENULL, "ll", NULL, ebm_model_log_likelihood(g_rbm, lz, 3, data, 6, NULL));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_log_likelihood(g_rbm, lz, -1, data, 6, ll));
    FAILS(&s, EBM_ESHAPE, "data", "3", ebm_model_log_likelihood(g_rbm, lz, 3, data, 3, ll));
    FAILS(&s, EBM_ESHAPE, "data", "0", ebm_model_log_likelihood(g_rbm, lz, 3, data, 0, ll));
    float keep = data[1 * 6 + 2];
    data[1 * 6 + 2] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 2", ebm_model_log_likelihood(g_rbm, lz, 3, data, 6, ll));
    data[1 * 6 + 2] = keep;
    OK(g_rbm, ebm_model_log_likelihood(g_rbm, lz, 3, data, 6, ll));

    /* Spin DBM: 0 is not a spin. */
    float dd[2 * 3] = {1, -1, 1, -1, 0, 1};
    double ld[2];
    t_sentinel(ld, sizeof ld);
    t_snap_init(&s, T_MSG_MODEL, g_dbm, NULL);
    t_snap_track(&s, "data", dd, sizeof dd);
    t_snap_track(&s, "ll", ld, sizeof ld);
    FAILS3(&s, EBM_EVALUE, "row 1", "0", "unit 1", ebm_model_log_likelihood(g_dbm, 1.0, 2, dd, 3, ld));
    FAILS(&s, EBM_ESHAPE, "data", "2", ebm_model_log_likelihood(g_dbm, 1.0, 2, dd, 2, ld));

    /* GRBM: non-finite data */
    float dg[2 * 3] = {0.1f, 0.2f, 0.3f, INFINITY, 0.5f, 0.6f};
    t_snap_init(&s, T_MSG_MODEL, g_grbm, NULL);
    t_snap_track(&s, "data", dg, sizeof dg);
    t_snap_track(&s, "ll", ld, sizeof ld);
    FAILS3(&s, EBM_EVALUE, "row 1", "inf", "unit 0", ebm_model_log_likelihood(g_grbm, 1.0, 2, dg, 3, ld));
    dg[3] = NAN;
    FAILS3(&s, EBM_EVALUE, "row 1", "nan", "unit 0", ebm_model_log_likelihood(g_grbm, 1.0, 2, dg, 3, ld));

    /* DBM 3-30-30: every hidden parity class has 30 units, 2^30 > 2^24
     * states per row: EBM_ELIMIT, quickly. */
    const int64_t s30[3] = {3, 30, 30};
    ebm_model_t *big = t_model(3, s30, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    float db[2 * 3] = {0, 1, 0, 1, 1, 0};
    t_snap_init(&s, T_MSG_MODEL, big, NULL);
    t_snap_track(&s, "data", db, sizeof db);
    t_snap_track(&s, "ll", ld, sizeof ld);
    double t0 = now();
    FAILS(&s, EBM_ELIMIT, "30", NULL, ebm_model_log_likelihood(big, 0.0, 2, db, 3, ld));
    double dt = now() - t0;
    CHECK(dt < 0.5, "log_likelihood(3-30-30) took %.3f s to refuse", dt);
    ebm_model_destroy(big);
    FINISH();
}
END_TEST

Suite *ebm_evaluation_suite(void)
{
    const t_test tests[] = {
        {"exact", log_partition, REF_N_MODELS, 60, NULL, NULL},
        {"exact", log_likelihood, REF_N_MODELS, 60, NULL, NULL},
        {"ais", ais_matches_exact, (int)(sizeof ais_cases / sizeof ais_cases[0]), 600, NULL, NULL},
        {"ais", ais_base_matches_exact, 4, 600, NULL, NULL},
        {"ais arguments", ais_is_deterministic_and_checks_arguments, 0, 600, NULL, NULL},
        {"ais arguments", ais_base_exact_and_bad_input, 0, 600, NULL, NULL},
        {"bound", bound_is_a_lower_bound, 0, 300, NULL, NULL},
        {"bound", bound_checks_arguments, 0, 300, NULL, NULL},
        {"importance sampling", is_estimate_approaches_exact, 0, 600, NULL, NULL},
        {"importance sampling", is_checks_arguments, 0, 60, NULL, NULL},
        {"bad input", log_partition_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", log_likelihood_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
    };
    return t_suite("evaluation", tests, sizeof tests / sizeof tests[0]);
}
