/* The model handle: version, codes, shape and layout, parameters,
 * initialisation (with statistical checks and their broken twins), threads. */
#include "tests.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

START_TEST(version_and_codes)
{
    ck_assert_str_eq(ebm_version_string(), EBM_VERSION_STRING);
    ck_assert_int_eq(ebm_version_number(), EBM_VERSION_NUMBER);
    ck_assert_int_eq(ebm_abi_version(), EBM_ABI_VERSION);
    ck_assert_int_eq(ebm_rng_state_words(), EBM_RNG_STATE_WORDS);
    ck_assert_int_eq(ebm_max_layers(), EBM_MAX_LAYERS);
    const int codes[] = {EBM_OK,     EBM_ENULL,  EBM_ESHAPE,       EBM_EVALUE,  EBM_ENOMEM,
                         EBM_EIO,    EBM_EFORMAT, EBM_EUNSUPPORTED, EBM_ELIMIT, EBM_EINTERNAL};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        ck_assert_int_eq(codes[i], -(int)i); /* frozen numbering */
        ck_assert_ptr_nonnull(ebm_strerror(codes[i]));
        ck_assert_str_ne(ebm_strerror(codes[i]), "unknown result code");
        ck_assert_ptr_nonnull(strstr(ebm_error_name(codes[i]), "EBM_"));
    }
    ck_assert_str_eq(ebm_strerror(12345), "unknown result code");
    ck_assert_str_eq(ebm_error_name(-77), "EBM_UNKNOWN");
}
END_TEST

START_TEST(shape_and_layout)
{
    const int64_t sizes[] = {5, 4, 3, 2};
    ebm_model_t *m = t_model(4, sizes, EBM_UNITS_BINARY, EBM_UNITS_SPIN);
    ck_assert_int_eq(ebm_model_num_layers(m), 4);
    ck_assert_int_eq(ebm_model_state_width(m), 14);
    int64_t offset = 0;
    for (int64_t l = 0; l < 4; l++) {
        ck_assert_int_eq(ebm_model_layer_size(m, l), sizes[l]);
        ck_assert_int_eq(ebm_model_layer_offset(m, l), offset);
        ck_assert_int_eq(ebm_model_layer_units(m, l), l == 0 ? EBM_UNITS_BINARY : EBM_UNITS_SPIN);
        offset += sizes[l];
    }
    /* The blocks tile [0, param_count) in the documented order. */
    int64_t next = 0, off, rows, cols;
    for (int64_t l = 1; l < 4; l++) {
        ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_WEIGHT, l, &off, &rows, &cols), EBM_OK);
        ck_assert_int_eq(off, next);
        ck_assert_int_eq(rows, sizes[l - 1]);
        ck_assert_int_eq(cols, sizes[l]);
        next += rows * cols;
    }
    for (int64_t l = 0; l < 4; l++) {
        ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, l, &off, &rows, &cols), EBM_OK);
        ck_assert_int_eq(off, next);
        ck_assert_int_eq(rows, 1);
        ck_assert_int_eq(cols, sizes[l]);
        next += cols;
    }
    ck_assert_int_eq(next, ebm_model_param_count(m));
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &off, &rows, &cols),
                     EBM_EUNSUPPORTED);
    ebm_model_destroy(m);

    const int64_t g[] = {3, 2};
    m = t_model(2, g, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &off, &rows, &cols), EBM_OK);
    ck_assert_int_eq(off, 3 * 2 + 3 + 2);
    ck_assert_int_eq(cols, 3);
    ck_assert_int_eq(ebm_model_param_count(m), off + 3);
    /* A new model has zero parameters: sigma = 1. */
    float p[14];
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    for (int i = 0; i < 14; i++) {
        ck_assert(p[i] == 0.0f);
    }
    ebm_model_destroy(m);
}
END_TEST

START_TEST(params_set_get_axpy)
{
    const int64_t sizes[] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
    int64_t np = ebm_model_param_count(m);
    float p[14], q[14], g[14];
    for (int64_t i = 0; i < np; i++) {
        p[i] = 0.25f * (float)(i - 5);
        g[i] = 1.0f;
    }
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    ck_assert_int_eq(ebm_model_get_params(m, q), EBM_OK);
    ck_assert_mem_eq(p, q, (size_t)np * sizeof *p);
    ck_assert_int_eq(ebm_model_axpy_params(m, 0.5f, g), EBM_OK);
    ck_assert_int_eq(ebm_model_get_params(m, q), EBM_OK);
    for (int64_t i = 0; i < np; i++) {
        ck_assert(q[i] == p[i] + 0.5f);
    }
    /* The energy follows the parameters (derived caches are refreshed). */
    float v[5] = {0.5f, -1.0f, 2.0f, 1.0f, 0.0f};
    double e1, e2;
    ck_assert_int_eq(ebm_model_energy(m, 1, v, 5, &e1), EBM_OK);
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    ck_assert_int_eq(ebm_model_energy(m, 1, v, 5, &e2), EBM_OK);
    ck_assert(e1 != e2);
    ebm_model_destroy(m);
}
END_TEST

/* Max |W^T W - I| (tall) or |W W^T - I| (wide), in double. */
static double orthogonality_error(const float *w, int64_t rows, int64_t cols, double scale)
{
    int tall = rows >= cols;
    int64_t k = tall ? cols : rows, len = tall ? rows : cols;
    double worst = 0;
    for (int64_t a = 0; a < k; a++) {
        for (int64_t b = 0; b < k; b++) {
            double s = 0;
            for (int64_t t = 0; t < len; t++) {
                double x = tall ? w[t * cols + a] : w[a * cols + t];
                double y = tall ? w[t * cols + b] : w[b * cols + t];
                s += x * y;
            }
            s /= scale * scale;
            worst = fmax(worst, fabs(s - (a == b ? 1.0 : 0.0)));
        }
    }
    return worst;
}

START_TEST(init_orthogonal_is_orthogonal)
{
    const int64_t shapes[][2] = {{50, 20}, {20, 50}, {30, 30}, {1, 7}, {200, 200}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        ebm_model_t *m = t_model(2, shapes[s], EBM_UNITS_BINARY, EBM_UNITS_BINARY);
        ebm_rng_t *rng;
        ck_assert_int_eq(ebm_rng_create(&rng, 11, s), EBM_OK);
        ck_assert_int_eq(ebm_model_init(m, rng, EBM_INIT_ORTHOGONAL, 2.0), EBM_OK);
        float *p = malloc((size_t)ebm_model_param_count(m) * sizeof *p);
        ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
        ck_assert_double_le(orthogonality_error(p, shapes[s][0], shapes[s][1], 2.0), 1e-5);
        /* binary biases start at zero */
        int64_t off, rows, cols;
        ebm_model_param_block(m, EBM_PARAM_BIAS, 0, &off, &rows, &cols);
        for (int64_t i = off; i < ebm_model_param_count(m); i++) {
            ck_assert(p[i] == 0.0f);
        }
        free(p);
        ebm_rng_destroy(rng);
        ebm_model_destroy(m);
    }
}
END_TEST

/*
 * Haar measure on O(n): E[trace Q] = 0 and Var[trace Q] = 1 for n >= 2.
 * A QR without Mezzadri's sign correction is biased: with the signs made
 * to give a positive diagonal of Q (the broken twin below) the mean trace is
 * far from 0. With N draws the mean trace has standard error 1/sqrt(N);
 * failing beyond 5 standard errors has probability 5.7e-7.
 */
static double mean_trace_z(int broken)
{
    const int64_t shape[] = {4, 4};
    const int draws = 4000;
    ebm_model_t *m = t_model(2, shape, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    ebm_rng_t *rng;
    ck_assert_int_eq(ebm_rng_create(&rng, 2026, 7), EBM_OK);
    float p[24];
    double sum = 0;
    for (int d = 0; d < draws; d++) {
        ck_assert_int_eq(ebm_model_init(m, rng, EBM_INIT_ORTHOGONAL, 1.0), EBM_OK);
        ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
        double tr = 0;
        for (int i = 0; i < 4; i++) {
            tr += broken ? fabs(p[i * 4 + i]) : p[i * 4 + i];
        }
        sum += tr;
    }
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
    return (sum / draws) * sqrt((double)draws);
}

START_TEST(init_orthogonal_is_haar)
{
    ck_assert_double_lt(fabs(mean_trace_z(0)), 5.0);
    ck_assert_double_gt(fabs(mean_trace_z(1)), 5.0); /* the broken twin must fail */
}
END_TEST

/* z-score of a sample mean and of a sample variance against (mu, var). */
static void moments_z(const float *x, int64_t n, double mu, double var, double kurt_excess,
                      double *zm, double *zv)
{
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) {
        s += x[i];
    }
    double mean = s / (double)n;
    for (int64_t i = 0; i < n; i++) {
        s2 += (x[i] - mean) * (x[i] - mean);
    }
    double v = s2 / (double)(n - 1);
    *zm = (mean - mu) / sqrt(var / (double)n);
    /* Var of the sample variance: var^2 (2/(n-1) + kurt_excess/n). */
    *zv = (v - var) / (var * sqrt(2.0 / (double)(n - 1) + kurt_excess / (double)n));
}

START_TEST(init_gaussian_and_spin_biases)
{
    /* W ~ N(0, 0.1^2); spin biases ~ Logistic(0, 0.5): variance pi^2 s^2 / 3,
     * excess kurtosis 1.2. Thresholds 5 sigma: false failure ~6e-7 each. */
    const int64_t sizes[] = {300, 200};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_SPIN, EBM_UNITS_SPIN);
    ebm_rng_t *rng;
    ck_assert_int_eq(ebm_rng_create(&rng, 5, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 0.1), EBM_OK);
    int64_t np = ebm_model_param_count(m);
    float *p = malloc((size_t)np * sizeof *p);
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    double zm, zv;
    moments_z(p, 300 * 200, 0.0, 0.01, 0.0, &zm, &zv);
    ck_assert_double_lt(fabs(zm), 5.0);
    ck_assert_double_lt(fabs(zv), 5.0);
    moments_z(p, 300 * 200, 0.0, 0.0121, 0.0, &zm, &zv); /* broken twin: sd 0.11 */
    ck_assert_double_gt(fabs(zv), 5.0);
    double logistic_var = 9.869604401089358 * 0.25 / 3.0; /* pi^2 s^2 / 3 */
    moments_z(p + 300 * 200, 500, 0.0, logistic_var, 1.2, &zm, &zv);
    ck_assert_double_lt(fabs(zm), 5.0);
    ck_assert_double_lt(fabs(zv), 5.0);
    /* Same seed, same bytes. */
    float *q = malloc((size_t)np * sizeof *q);
    ebm_rng_t *rng2;
    ck_assert_int_eq(ebm_rng_create(&rng2, 5, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_init(m, rng2, EBM_INIT_GAUSSIAN, 0.1), EBM_OK);
    ck_assert_int_eq(ebm_model_get_params(m, q), EBM_OK);
    ck_assert_mem_eq(p, q, (size_t)np * sizeof *p);
    free(p);
    free(q);
    ebm_rng_destroy(rng);
    ebm_rng_destroy(rng2);
    ebm_model_destroy(m);
}
END_TEST

START_TEST(init_grbm_defaults)
{
    const int64_t sizes[] = {6, 4};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
    t_random_params(m, 3, 1.0);
    ebm_rng_t *rng;
    ck_assert_int_eq(ebm_rng_create(&rng, 1, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 0.01), EBM_OK);
    float p[6 * 4 + 6 + 4 + 6];
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    for (int i = 24; i < 40; i++) {
        ck_assert(p[i] == 0.0f); /* mean, hidden bias and log-variance are 0 */
    }
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
}
END_TEST

/* Concurrent const calls on one model give the single-thread results. */
typedef struct energy_job {
    const ebm_model_t *m;
    const float *x;
    int64_t n;
    double *out;
    int rc;
} energy_job;

static void *energy_worker(void *arg)
{
    energy_job *job = arg;
    for (int rep = 0; rep < 20 && job->rc == EBM_OK; rep++) {
        job->rc = ebm_model_free_energy(job->m, 0x2u, job->n, job->x, 8, job->out);
        /* and a failing call, which writes the shared message slot */
        float bad = 0.5f;
        float row[8] = {bad, 0, 0, 0, 0, 0, 0, 0};
        double e;
        if (ebm_model_energy(job->m, 1, row, 8, &e) != EBM_EVALUE) {
            job->rc = -100;
        }
    }
    return NULL;
}

START_TEST(const_calls_are_thread_safe)
{
    const int64_t sizes[] = {5, 3};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    t_random_params(m, 9, 1.0);
    enum { N = 64 };
    float x[N * 8];
    uint64_t s = 1;
    for (int i = 0; i < N * 8; i++) {
        x[i] = t_uniform(&s) < 0.5 ? 0.0f : 1.0f;
    }
    double ref[N], out[2][N];
    ck_assert_int_eq(ebm_model_free_energy(m, 0x2u, N, x, 8, ref), EBM_OK);
    pthread_t th[2];
    energy_job jobs[2];
    for (int t = 0; t < 2; t++) {
        jobs[t] = (energy_job){m, x, N, out[t], EBM_OK};
        pthread_create(&th[t], NULL, energy_worker, &jobs[t]);
    }
    for (int t = 0; t < 2; t++) {
        pthread_join(th[t], NULL);
        ck_assert_int_eq(jobs[t].rc, EBM_OK);
        ck_assert_mem_eq(out[t], ref, sizeof ref);
    }
    char buf[256];
    ck_assert_int_eq(ebm_model_errmsg_copy(m, buf, sizeof buf), EBM_OK);
    ck_assert_ptr_nonnull(strstr(buf, "0.5"));
    ebm_model_destroy(m);
}
END_TEST

Suite *ebm_model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("model");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, version_and_codes);
    tcase_add_test(tc, shape_and_layout);
    tcase_add_test(tc, params_set_get_axpy);
    tcase_add_test(tc, init_orthogonal_is_orthogonal);
    tcase_add_test(tc, init_orthogonal_is_haar);
    tcase_add_test(tc, init_gaussian_and_spin_biases);
    tcase_add_test(tc, init_grbm_defaults);
    tcase_add_test(tc, const_calls_are_thread_safe);
    suite_add_tcase(s, tc);
    return s;
}
