/* Evaluation: AIS log Z against exact enumeration, and the mean-field lower
 * bound on log p(v) against the exact log-likelihood. */
#include "tests.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
} ais_case;

/* Not trivial to enumerate, small enough to: RBM 14x10 (2^10 states),
 * DBM 6-6-4 (2^6), GRBM 5x8 (2^8 hidden states, v integrated). */
static const ais_case ais_cases[] = {
    {2, {14, 10, 0}, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 0.8},
    {2, {14, 10, 0}, EBM_UNITS_SPIN, EBM_UNITS_SPIN, 0.8},
    {3, {6, 6, 4}, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 0.8},
    {3, {6, 6, 4}, EBM_UNITS_SPIN, EBM_UNITS_SPIN, 0.8},
    {2, {5, 8, 0}, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY, 0.5},
};

/*
 * AIS is consistent: with 2000 betas and 200 chains its estimate is within
 * 3 standard errors of the exact log Z (a Gaussian tail of 0.27% per case;
 * the seed is fixed, so the test is deterministic), and with 20 times more
 * betas the standard error shrinks. The broken twin: the same estimate
 * compared with log Z of the model with one bias flipped is far outside.
 */
START_TEST(ais_matches_exact)
{
    const ais_case *c = &ais_cases[_i];
    ebm_model_t *m = eval_model(c->n_layers, c->sizes, c->vu, c->hu, c->scale);
    double exact, est, se, est_fine, se_fine;
    ck_assert_int_eq(ebm_model_log_partition_exact(m, &exact), EBM_OK);
    ebm_rng_t *rng;
    ck_assert_int_eq(ebm_rng_create(&rng, 17, (uint64_t)_i), EBM_OK);
    ck_assert_int_eq(ebm_model_log_partition_ais(m, rng, 200, 500, &est, &se), EBM_OK);
    int fine_betas = t_level() >= 2 ? 50000 : 10000;
    ck_assert_int_eq(ebm_model_log_partition_ais(m, rng, 200, fine_betas, &est_fine, &se_fine),
                     EBM_OK);
    ck_assert_msg(fabs(est_fine - exact) <= 3.0 * se_fine + 1e-9,
                  "case %d: AIS %.6f +- %.6f, exact %.6f", _i, est_fine, se_fine, exact);
    ck_assert_msg(se_fine < se, "case %d: the standard error did not shrink (%g -> %g)", _i, se,
                  se_fine);
    /* broken twin: a model with the first visible bias flipped */
    int64_t np = ebm_model_param_count(m), off;
    float *p = malloc((size_t)np * sizeof *p);
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, c->vu == EBM_UNITS_GAUSSIAN ? 1 : 0,
                                           &off, NULL, NULL),
                     EBM_OK);
    p[off] = -p[off] + (p[off] == 0.0f ? 1.0f : 0.0f);
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    double flipped;
    ck_assert_int_eq(ebm_model_log_partition_exact(m, &flipped), EBM_OK);
    ck_assert_msg(fabs(est_fine - flipped) > 3.0 * se_fine, "case %d: the twin was not detected",
                  _i);
    free(p);
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

Suite *ebm_evaluation_suite(void)
{
    Suite *s = suite_create("evaluation");
    TCase *tc = tcase_create("ais");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, ais_matches_exact, 0, (int)(sizeof ais_cases / sizeof ais_cases[0]));
    tcase_add_test(tc, ais_is_deterministic_and_checks_arguments);
    suite_add_tcase(s, tc);
    TCase *tb = tcase_create("bound");
    tcase_set_timeout(tb, 300);
    tcase_add_test(tb, bound_is_a_lower_bound);
    tcase_add_test(tb, bound_checks_arguments);
    suite_add_tcase(s, tb);
    return s;
}
