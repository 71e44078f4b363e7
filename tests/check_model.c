/*
 * The model handle (include/ebm.h, "Version", "Errors", "Model";
 * tests/README.md, classes 1, 3, 4 and 11): version and codes, shape and
 * the documented parameter layout, parameters, initialisation (with
 * statistical checks and their broken twins), const calls from two threads
 * (run under ThreadSanitizer by make check-tsan: CK_RUN_SUITE=model).
 *
 * Handles: every model call on a NULL model, messages (per model, copied,
 * truncated), empty batches with NULL buffers, and failures of every kind
 * that leave the handle working exactly as an untouched twin.
 *
 * Bad input of create, the accessors, parameter blocks, parameters and
 * init: the documented code, a message naming the argument or value (in
 * the model, or in errbuf for create), and nothing changed (parameters,
 * generator, outputs checksummed before and after), on the fixture models
 * of tests.h. The checks are soft: every broken promise is printed, the
 * test fails at its end.
 */
#include "tests.h"
#include "ref.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Version, shape, parameters, initialisation, threads                      */
/* ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------ */
/* Exact: the documented parameter layout                                   */
/* ------------------------------------------------------------------------ */

/* The header documents [W_1 .. W_L | b_0 .. b_L | logvar_0]. */
START_TEST(param_layout)
{
    for (int mi = 0; mi < REF_N_MODELS; mi++) {
        ref_t R;
        ebm_model_t *m = ref_make_model(mi, 0, &R);
        int64_t k = 0;
        for (int l = 1; l < R.nl; l++) {
            ck_assert_int_eq(R.woff[l], k);
            k += R.n[l - 1] * R.n[l];
        }
        for (int l = 0; l < R.nl; l++) {
            ck_assert_int_eq(R.boff[l], k);
            k += R.n[l];
        }
        if (ref_gauss0(&R)) {
            ck_assert_int_eq(R.lvoff, k);
            k += R.n[0];
        }
        ck_assert_int_eq(k, R.np);
        /* get_params returns exactly what t_random_params set (set/get round trip). */
        float *p = malloc((size_t)R.np * sizeof *p);
        ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
        ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
        float *q = malloc((size_t)R.np * sizeof *q);
        ck_assert_int_eq(ebm_model_get_params(m, q), EBM_OK);
        ck_assert(memcmp(p, q, (size_t)R.np * sizeof *p) == 0);
        free(p);
        free(q);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Handles: NULL models, messages, empty batches, no poisoning              */
/* ------------------------------------------------------------------------ */

START_TEST(versions_and_codes)
{
    const char *v = ebm_version_string();
    CHECK(v != NULL && strcmp(v, EBM_VERSION_STRING) == 0, "ebm_version_string() is \"%s\"",
          v ? v : "(null)");
    CHECK(ebm_version_number() == EBM_VERSION_NUMBER, "ebm_version_number() is %d",
          ebm_version_number());
    CHECK(ebm_abi_version() == EBM_ABI_VERSION, "ebm_abi_version() is %d", ebm_abi_version());
    CHECK(ebm_rng_state_words() == EBM_RNG_STATE_WORDS, "ebm_rng_state_words() is %d",
          ebm_rng_state_words());
    static const char *const names[] = {"EBM_OK",     "EBM_ENULL",   "EBM_ESHAPE",
                                        "EBM_EVALUE", "EBM_ENOMEM",  "EBM_EIO",
                                        "EBM_EFORMAT", "EBM_EUNSUPPORTED", "EBM_ELIMIT",
                                        "EBM_EINTERNAL"};
    for (int c = 0; c >= -9; c--) {
        const char *n = ebm_error_name(c), *t = ebm_strerror(c);
        CHECK(n != NULL && strcmp(n, names[-c]) == 0, "ebm_error_name(%d) is \"%s\"", c,
              n ? n : "(null)");
        CHECK(t != NULL && t[0] != '\0', "ebm_strerror(%d) is empty or NULL", c);
        for (int d = c + 1; d <= 0 && t != NULL; d++) {
            CHECK(strcmp(t, ebm_strerror(d)) != 0, "ebm_strerror(%d) == ebm_strerror(%d)", c, d);
        }
    }
    /* Any int: never NULL, never empty, never the name of a known code. */
    const int odd[] = {INT_MIN, INT_MIN + 1, -1000000, -100, -10, 1, 2, 9, 100, INT_MAX};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        const char *n = ebm_error_name(odd[i]), *t = ebm_strerror(odd[i]);
        CHECK(t != NULL && t[0] != '\0', "ebm_strerror(%d) is empty or NULL", odd[i]);
        CHECK(n != NULL && n[0] != '\0', "ebm_error_name(%d) is empty or NULL", odd[i]);
        for (int k = 0; k < 10 && n != NULL; k++) {
            CHECK(strcmp(n, names[k]) != 0, "ebm_error_name(%d) is \"%s\"", odd[i], n);
        }
    }
    for (int c = -2000; c <= 2000; c++) {
        CHECK(ebm_strerror(c) != NULL && ebm_error_name(c) != NULL, "NULL text for code %d", c);
    }
    FINISH();
}
END_TEST

START_TEST(null_model_handle)
{
    /* Every model call with m = NULL and otherwise valid arguments. */
    float x[3 * 7], a[3 * 4], grad[64], p[64], mu[3 * 7];
    double e[3], coef[3] = {1.0, 1.0, 1.0}, lz = 123.0;
    uint8_t clamp[7] = {0};
    int64_t sweeps[3], off = -5, rows = -5, cols = -5;
    unsigned char buf[4096];
    size_t size = 77;
    char msg[32];
    t_fill_states(g_rbm, 3, x, 7, 1);
    t_fill_means(g_rbm, 3, mu, 7, 2);
    t_sentinel(a, sizeof a);
    t_sentinel(e, sizeof e);
    t_sentinel(sweeps, sizeof sweeps);
    t_sentinel(buf, sizeof buf);
    t_sentinel(msg, sizeof msg);
    for (int i = 0; i < 64; i++) {
        grad[i] = 0.25f * (float)i;
        p[i] = 0.0f;
    }
    t_snap s;
    t_snap_init(&s, T_MSG_NONE, NULL, g_rng);
    t_snap_track(&s, "x", x, sizeof x);
    t_snap_track(&s, "the output buffer", a, sizeof a);
    t_snap_track(&s, "energy", e, sizeof e);
    t_snap_track(&s, "grad", grad, sizeof grad);
    t_snap_track(&s, "mu", mu, sizeof mu);
    t_snap_track(&s, "sweeps", sweeps, sizeof sweeps);
    t_snap_track(&s, "buf", buf, sizeof buf);
    t_snap_track(&s, "msg", msg, sizeof msg);
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_param_block(NULL, EBM_PARAM_WEIGHT, 1, &off, &rows, &cols));
    CHECK(off == -5 && rows == -5 && cols == -5, "param_block(NULL) wrote its outputs");
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_get_params(NULL, p));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_set_params(NULL, p));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_axpy_params(NULL, 1.0f, p));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_init(NULL, g_rng, EBM_INIT_GAUSSIAN, 1.0));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_save_buffer(NULL, buf, sizeof buf, &size));
    CHECK(size == 77, "save_buffer(NULL) wrote *size");
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_errmsg_copy(NULL, msg, sizeof msg));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_energy(NULL, 3, x, 7, e));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_free_energy(NULL, 2, 3, x, 7, e));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_energy_grad(NULL, 0, 3, x, 7, coef, grad));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_energy_grad_input(NULL, 0, 1, 3, x, 7, a, 3));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_layer_input(NULL, 1, 3, x, 7, a, 3));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_layer_mean(NULL, 1, 3, x, 7, a, 3));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_layer_logprob(NULL, 1, 3, x, 7, x + 4, 7, e));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_layer_argmin(NULL, 1, 3, x, 7));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_layer_sample(NULL, 1, g_rng, 3, x, 7));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_random_state(NULL, g_rng, 3, x, 7, clamp, 0));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_local_search(NULL, g_rng, 3, x, 7, NULL, 0, 10, sweeps));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_mean_field(NULL, 3, mu, 7, NULL, 0, 10, 1e-6));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_log_partition_exact(NULL, &lz));
    CHECK(lz == 123.0, "log_partition_exact(NULL) wrote log_z");
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_log_likelihood(NULL, 1.0, 3, x, 7, e));

    /* save(NULL, path) creates no file. */
    char dir[] = "/tmp/ebm_badinput_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/m.ebm", dir);
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_save(NULL, path));
    CHECK(access(path, F_OK) != 0, "ebm_model_save(NULL, path) created %s", path);
    int entries = t_count_entries(dir);
    CHECK(entries == 0, "ebm_model_save(NULL, path) left %d file(s) in %s", entries, dir);
    (void)unlink(path);
    (void)rmdir(dir);

    /* Accessors: -1; destroy: no-op; messages: never NULL. */
    CHECK(ebm_model_num_layers(NULL) == -1, "num_layers(NULL) is not -1");
    CHECK(ebm_model_layer_size(NULL, 0) == -1, "layer_size(NULL, 0) is not -1");
    CHECK(ebm_model_layer_offset(NULL, 0) == -1, "layer_offset(NULL, 0) is not -1");
    CHECK(ebm_model_layer_units(NULL, 0) == -1, "layer_units(NULL, 0) is not -1");
    CHECK(ebm_model_state_width(NULL) == -1, "state_width(NULL) is not -1");
    CHECK(ebm_model_param_count(NULL) == -1, "param_count(NULL) is not -1");
    CHECK(ebm_model_save_size(NULL) == -1, "save_size(NULL) is not -1");
    CHECK(ebm_model_errmsg(NULL) != NULL, "ebm_model_errmsg(NULL) is NULL");
    ebm_model_destroy(NULL);
    FINISH();
}
END_TEST

START_TEST(errmsg_bad_input)
{
    char buf[16];
    CHECK(ebm_model_errmsg(NULL) != NULL, "ebm_model_errmsg(NULL) is NULL");
    const int64_t sizes[2] = {4, 3};
    ebm_model_t *fresh = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    CHECK(ebm_model_errmsg(fresh) != NULL && ebm_model_errmsg(fresh)[0] == '\0',
          "a fresh model's message is not \"\" but \"%s\"", ebm_model_errmsg(fresh));
    memset(buf, 'Z', sizeof buf);
    int rc = ebm_model_errmsg_copy(NULL, buf, sizeof buf);
    CHECK(rc == EBM_ENULL && buf[0] == 'Z', "errmsg_copy(NULL, buf) returned %s or wrote buf",
          ebm_error_name(rc));
    rc = ebm_model_errmsg_copy(fresh, NULL, 8);
    CHECK(rc == EBM_ENULL, "errmsg_copy(m, NULL, 8) returned %s", ebm_error_name(rc));
    /* Truncation to size, NUL-terminated; size 0 writes nothing. */
    ck_assert_int_eq(ebm_model_param_block(fresh, 99, 0, NULL, NULL, NULL), EBM_EVALUE);
    const char *msg = ebm_model_errmsg(fresh);
    ck_assert_uint_gt(strlen(msg), 5);
    rc = ebm_model_errmsg_copy(fresh, buf, 6);
    CHECK(rc == EBM_OK && buf[5] == '\0' && strncmp(buf, msg, 5) == 0 && buf[6] == 'Z',
          "errmsg_copy(size 6) did not truncate to 5 characters");
    memset(buf, 'Z', sizeof buf);
    rc = ebm_model_errmsg_copy(fresh, buf, 0);
    CHECK(rc == EBM_OK && buf[0] == 'Z', "errmsg_copy(size 0) returned %s or wrote buf",
          ebm_error_name(rc));
    rc = ebm_model_errmsg_copy(fresh, buf, 1);
    CHECK(rc == EBM_OK && buf[0] == '\0' && buf[1] == 'Z', "errmsg_copy(size 1) is not \"\"");
    ebm_model_destroy(fresh);
    FINISH();
}
END_TEST

/* errmsg_copy(m, NULL, n) fails on a model: the header promises a message. */
START_TEST(errmsg_copy_null_buf_leaves_message)
{
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_rbm, NULL);
    FAILS(&s, EBM_ENULL, "buf", NULL, ebm_model_errmsg_copy(g_rbm, NULL, 8));
    FINISH();
}
END_TEST

START_TEST(errmsg_is_per_model)
{
    ebm_model_t *c = t_new_grbm();
    float x[7] = {1, 0, 0.5f, 1, 0, 1, 0};
    double e;
    ck_assert_int_eq(ebm_model_param_block(g_dbm, 77, 0, NULL, NULL, NULL), EBM_EVALUE);
    char b_msg[600];
    snprintf(b_msg, sizeof b_msg, "%s", ebm_model_errmsg(g_dbm));
    ck_assert(t_contains(b_msg, "77"));
    /* A failure on A leaves B's and C's messages alone. */
    ck_assert_int_eq(ebm_model_energy(g_rbm, 1, x, 7, &e), EBM_EVALUE);
    CHECK(t_contains(ebm_model_errmsg(g_rbm), "0.5"), "A's message \"%s\"", ebm_model_errmsg(g_rbm));
    CHECK(strcmp(ebm_model_errmsg(g_dbm), b_msg) == 0,
          "a failure on model A changed model B's message to \"%s\"", ebm_model_errmsg(g_dbm));
    CHECK(ebm_model_errmsg(c)[0] == '\0', "a failure on model A changed model C's message to \"%s\"",
          ebm_model_errmsg(c));
    char copy[600];
    ck_assert_int_eq(ebm_model_errmsg_copy(g_dbm, copy, sizeof copy), EBM_OK);
    CHECK(strcmp(copy, b_msg) == 0, "errmsg_copy(B) is \"%s\"", copy);
    /* A failure on a generator leaves the models alone, and the reverse. */
    char a_msg[600];
    snprintf(a_msg, sizeof a_msg, "%s", ebm_model_errmsg(g_rbm));
    ck_assert_int_eq(ebm_rng_uniform(g_rng, -4, NULL), EBM_ESHAPE);
    CHECK(strcmp(ebm_model_errmsg(g_rbm), a_msg) == 0, "an rng failure changed a model message");
    char r_msg[600];
    snprintf(r_msg, sizeof r_msg, "%s", ebm_rng_errmsg(g_rng));
    ck_assert_int_eq(ebm_model_layer_sample(g_rbm, 5, g_rng, 1, x, 7), EBM_ESHAPE);
    CHECK(strcmp(ebm_rng_errmsg(g_rng), r_msg) == 0,
          "a model failure changed the rng message to \"%s\"", ebm_rng_errmsg(g_rng));
    ebm_rng_t *r2 = t_fresh_rng();
    CHECK(ebm_rng_errmsg(r2)[0] == '\0', "rng failure leaked into another generator");
    ebm_rng_destroy(r2);
    ebm_model_destroy(c);
    FINISH();
}
END_TEST

START_TEST(empty_batches_with_null_buffers)
{
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_dbm, g_rng);
    NOOP(&s, ebm_model_energy(g_dbm, 0, NULL, 8, NULL));
    NOOP(&s, ebm_model_free_energy(g_dbm, 0x2, 0, NULL, 8, NULL));
    NOOP(&s, ebm_model_energy_grad(g_dbm, 0x5, 0, NULL, 8, NULL, NULL));
    NOOP(&s, ebm_model_energy_grad_input(g_dbm, 0, 1, 0, NULL, 8, NULL, 3));
    NOOP(&s, ebm_model_layer_input(g_dbm, 1, 0, NULL, 8, NULL, 3));
    NOOP(&s, ebm_model_layer_mean(g_dbm, 2, 0, NULL, 8, NULL, 2));
    NOOP(&s, ebm_model_layer_logprob(g_dbm, 0, 0, NULL, 8, NULL, 3, NULL));
    NOOP(&s, ebm_model_layer_argmin(g_dbm, 1, 0, NULL, 8));
    NOOP(&s, ebm_model_layer_sample(g_dbm, 1, g_rng, 0, NULL, 8));
    NOOP(&s, ebm_model_random_state(g_dbm, g_rng, 0, NULL, 8, NULL, 0));
    NOOP(&s, ebm_model_local_search(g_dbm, g_rng, 0, NULL, 8, NULL, 0, 10, NULL));
    NOOP(&s, ebm_model_mean_field(g_dbm, 0, NULL, 8, NULL, 0, 10, 1e-6));
    NOOP(&s, ebm_model_log_likelihood(g_dbm, 1.0, 0, NULL, 3, NULL));
    /* a grad buffer with n = 0 is left alone */
    float grad[23];
    for (int i = 0; i < 23; i++) {
        grad[i] = (float)i;
    }
    t_snap_track(&s, "grad", grad, sizeof grad);
    NOOP(&s, ebm_model_energy_grad(g_dbm, 0, 0, NULL, 8, NULL, grad));
    s.src = T_MSG_RNG;
    NOOP(&s, ebm_rng_uniform(g_rng, 0, NULL));
    NOOP(&s, ebm_rng_normal(g_rng, 0, NULL));
    FINISH();
}
END_TEST

START_TEST(failures_do_not_poison_the_handle)
{
    ebm_model_t *twin = t_new_rbm();
    ebm_rng_t *r2 = t_fresh_rng();
    float x[3 * 7], bad[3 * 7], p[19], a1[9], a2[9];
    double e1[3], e2[3], f1[3], f2[3], lz1, lz2;
    t_fill_states(g_rbm, 3, x, 7, 32);
    memcpy(bad, x, sizeof x);
    bad[1 * 7 + 2] = 0.5f;
    ck_assert_int_eq(ebm_model_get_params(g_rbm, p), EBM_OK);
    p[0] = NAN;
    /* A run of failures of every kind on g_rbm and g_rng. */
    CHECK(ebm_model_energy(g_rbm, 3, bad, 7, e1) == EBM_EVALUE, "energy(0.5)");
    CHECK(ebm_model_set_params(g_rbm, p) == EBM_EVALUE, "set_params(NaN)");
    CHECK(ebm_model_axpy_params(g_rbm, NAN, p) == EBM_EVALUE, "axpy(NaN)");
    CHECK(ebm_model_init(g_rbm, g_rng, 7, 1.0) == EBM_EVALUE, "init(7)");
    CHECK(ebm_model_free_energy(g_rbm, 3, 3, x, 7, f1) == EBM_EVALUE, "free_energy(0x3)");
    CHECK(ebm_model_layer_sample(g_rbm, 1, g_rng, 3, bad, 7) == EBM_EVALUE, "sample(0.5)");
    CHECK(ebm_model_local_search(g_rbm, g_rng, 3, x, 7, NULL, 0, 0, NULL) == EBM_EVALUE,
          "local_search(0)");
    CHECK(ebm_model_log_likelihood(g_rbm, NAN, 3, x, 7, e1) == EBM_EVALUE, "ll(NaN)");
    CHECK(ebm_rng_uniform(g_rng, -1, a1) == EBM_ESHAPE, "uniform(-1)");
    /* ... then every result equals the untouched twin's, bit for bit. */
    OK(g_rbm, ebm_model_energy(g_rbm, 3, x, 7, e1));
    OK(twin, ebm_model_energy(twin, 3, x, 7, e2));
    CHECK(memcmp(e1, e2, sizeof e1) == 0, "energies differ after failures");
    OK(g_rbm, ebm_model_free_energy(g_rbm, 2, 3, x, 7, f1));
    OK(twin, ebm_model_free_energy(twin, 2, 3, x, 7, f2));
    CHECK(memcmp(f1, f2, sizeof f1) == 0, "free energies differ after failures");
    OK(g_rbm, ebm_model_layer_mean(g_rbm, 1, 3, x, 7, a1, 3));
    OK(twin, ebm_model_layer_mean(twin, 1, 3, x, 7, a2, 3));
    CHECK(memcmp(a1, a2, sizeof a1) == 0, "layer means differ after failures");
    OK(g_rbm, ebm_model_log_partition_exact(g_rbm, &lz1));
    OK(twin, ebm_model_log_partition_exact(twin, &lz2));
    CHECK(lz1 == lz2, "log Z differs after failures");
    float y1[3 * 7], y2[3 * 7];
    memcpy(y1, x, sizeof x);
    memcpy(y2, x, sizeof x);
    OK(g_rbm, ebm_model_layer_sample(g_rbm, 1, g_rng, 3, y1, 7));
    OK(twin, ebm_model_layer_sample(twin, 1, r2, 3, y2, 7));
    CHECK(memcmp(y1, y2, sizeof y1) == 0, "samples differ after failures");
    CHECK(t_rng_hash(g_rng) == t_rng_hash(r2), "rng states differ after failures");
    ebm_model_destroy(twin);
    ebm_rng_destroy(r2);
    FINISH();
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Bad input: create, accessors, parameters, init                           */
/* ------------------------------------------------------------------------ */

/* create with errbuf: code, message in errbuf (NUL-terminated, within size),
 * no model handed out. */
static void create_fails(int line, int code, const char *n1, const char *n2, int64_t n_layers,
                         const int64_t *sizes, int vis, int hid)
{
    char eb[160];
    memset(eb, 'Z', sizeof eb);
    ebm_model_t *m = NULL;
    int rc = ebm_model_create(&m, n_layers, sizes, vis, hid, eb, 128);
    const char *msg = memchr(eb, '\0', 128) != NULL ? eb : "(not NUL-terminated)";
    if (rc != code) {
        t_soft_fail_at(
            __FILE__, line,
            "ebm_model_create(n_layers %lld, vis %d, hid %d) returned %s, expected %s: \"%s\"",
            (long long)n_layers, vis, hid, ebm_error_name(rc), ebm_error_name(code), msg);
    }
    if (m != NULL) {
        t_soft_fail_at(__FILE__, line, "ebm_model_create failed but handed out a model");
        if (rc == EBM_OK) {
            ebm_model_destroy(m);
        }
    }
    if (memchr(eb, '\0', 128) == NULL) {
        t_soft_fail_at(__FILE__, line, "errbuf is not NUL-terminated within errbuf_size");
    } else if (eb[0] == '\0') {
        t_soft_fail_at(__FILE__, line, "errbuf is empty after a failed create");
    } else {
        if (n1 != NULL && !t_contains(eb, n1)) {
            t_soft_fail_at(__FILE__, line, "create: errbuf \"%s\" does not mention \"%s\"", eb, n1);
        }
        if (n2 != NULL && !t_contains(eb, n2)) {
            t_soft_fail_at(__FILE__, line, "create: errbuf \"%s\" does not mention \"%s\"", eb, n2);
        }
    }
    for (size_t i = 128; i < sizeof eb; i++) {
        if (eb[i] != 'Z') {
            t_soft_fail_at(__FILE__, line, "create wrote errbuf[%zu], past errbuf_size", i);
            break;
        }
    }
}

START_TEST(create_bad_input)
{
    const int64_t ok2[2] = {4, 3}, zero[2] = {4, 0}, neg[2] = {-3, 3};
    int64_t big[33];
    for (int i = 0; i < 33; i++) {
        big[i] = 2;
    }
    char eb[128];
    memset(eb, 'Z', sizeof eb);
    int rc = ebm_model_create(NULL, 2, ok2, EBM_UNITS_BINARY, EBM_UNITS_BINARY, eb, sizeof eb);
    CHECK(rc == EBM_ENULL, "create(out NULL) returned %s", ebm_error_name(rc));
    CHECK(memchr(eb, '\0', sizeof eb) != NULL && t_contains(eb, "out"),
          "create(out NULL): errbuf does not mention \"out\"");
    create_fails(__LINE__, EBM_ENULL, "sizes", NULL, 2, NULL, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_ESHAPE, "n_layers", "1", 1, ok2, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_ESHAPE, "n_layers", "0", 0, ok2, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_ESHAPE, "n_layers", "-1", -1, ok2, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_ESHAPE, "n_layers", "33", 33, big, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_ESHAPE, "sizes[1]", "0", 2, zero, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_ESHAPE, "sizes[0]", "-3", 2, neg, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_EVALUE, "visible_units", "3", 2, ok2, 3, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_EVALUE, "visible_units", "-1", 2, ok2, -1, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_EVALUE, "hidden_units", "2", 2, ok2, EBM_UNITS_BINARY,
                 EBM_UNITS_GAUSSIAN);
    create_fails(__LINE__, EBM_EVALUE, "hidden_units", "7", 2, ok2, EBM_UNITS_SPIN, 7);
    /* The state width must fit in a BLAS int. */
    const int64_t wide[2] = {2147483647, 2};
    create_fails(__LINE__, EBM_ELIMIT, "sizes", NULL, 2, wide, EBM_UNITS_BINARY, EBM_UNITS_BINARY);

    /* errbuf NULL or of size 0: the code alone; a short errbuf: truncated. */
    ebm_model_t *m = NULL;
    rc = ebm_model_create(&m, 1, ok2, EBM_UNITS_BINARY, EBM_UNITS_BINARY, NULL, 100);
    CHECK(rc == EBM_ESHAPE && m == NULL, "create(errbuf NULL) returned %s", ebm_error_name(rc));
    memset(eb, 'Z', sizeof eb);
    rc = ebm_model_create(&m, 1, ok2, EBM_UNITS_BINARY, EBM_UNITS_BINARY, eb, 0);
    CHECK(rc == EBM_ESHAPE, "create(errbuf_size 0) returned %s", ebm_error_name(rc));
    CHECK(eb[0] == 'Z', "create wrote errbuf of size 0");
    rc = ebm_model_create(&m, 1, ok2, EBM_UNITS_BINARY, EBM_UNITS_BINARY, eb, 6);
    CHECK(rc == EBM_ESHAPE, "create(errbuf_size 6) returned %s", ebm_error_name(rc));
    CHECK(memchr(eb, '\0', 6) != NULL && strlen(eb) == 5 && eb[6] == 'Z',
          "create: errbuf of size 6 not truncated to 5 characters");
    FINISH();
}
END_TEST

/* A model too large for memory: 65536 x 32768 weights are 2^31 floats plus
 * their double copy (24 GB). Every dimension fits a BLAS int, so the shape is
 * valid; created in a child under a 1 GB address-space limit, it must fail
 * cleanly with EBM_ENOMEM. (Skipped under ASan and TSan, whose shadow memory
 * does not run under an address-space limit.) */
START_TEST(create_too_large_for_memory)
{
#if !defined(T_ASAN) && !defined(T_TSAN)
    const int64_t sizes[2] = {65536, 32768};
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct rlimit lim = {(rlim_t)1 << 30, (rlim_t)1 << 30};
        (void)setrlimit(RLIMIT_AS, &lim);
        /* No stdio here. */
        ebm_model_t *m = NULL;
        char err[256] = "";
        int rc = ebm_model_create(&m, 2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, err, sizeof err);
        _exit(rc == EBM_ENOMEM && m == NULL && strstr(err, "memory") != NULL ? 0 : 1);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "creating a 65536 x 32768 model under a 1 GB limit did not fail with EBM_ENOMEM "
          "and a message (status %d)", status);
    FINISH();
#endif
}
END_TEST

START_TEST(accessors_bad_index)
{
    ebm_model_t *ms[3] = {g_rbm, g_dbm, g_grbm};
    for (int k = 0; k < 3; k++) {
        int64_t L1 = ebm_model_num_layers(ms[k]);
        const int64_t bad[] = {-1, L1, L1 + 1, INT64_MIN, INT64_MAX};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            CHECK(ebm_model_layer_size(ms[k], bad[i]) == -1, "model %d: layer_size(%lld) is %lld",
                  k, (long long)bad[i], (long long)ebm_model_layer_size(ms[k], bad[i]));
            CHECK(ebm_model_layer_offset(ms[k], bad[i]) == -1, "model %d: layer_offset(%lld)", k,
                  (long long)bad[i]);
            CHECK(ebm_model_layer_units(ms[k], bad[i]) == -1, "model %d: layer_units(%lld)", k,
                  (long long)bad[i]);
        }
    }
    FINISH();
}
END_TEST

START_TEST(param_block_bad_input)
{
    int64_t out3[3] = {-77, -77, -77};
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_rbm, NULL);
    t_snap_track(&s, "offset/rows/cols", out3, sizeof out3);
    /* kind out of range */
    FAILS(&s, EBM_EVALUE, "kind", "4", ebm_model_param_block(g_rbm, 4, 0, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_EVALUE, "kind", "-1", ebm_model_param_block(g_rbm, -1, 1, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_EVALUE, "kind", "1000", ebm_model_param_block(g_rbm, 1000, 1, &out3[0], &out3[1], &out3[2]));
    /* layer index out of range: W_l for l = 1..L, b_l for l = 0..L */
    FAILS(&s, EBM_ESHAPE, "0", NULL, ebm_model_param_block(g_rbm, EBM_PARAM_WEIGHT, 0, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "2", NULL, ebm_model_param_block(g_rbm, EBM_PARAM_WEIGHT, 2, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "-1", NULL, ebm_model_param_block(g_rbm, EBM_PARAM_WEIGHT, -1, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "-1", NULL, ebm_model_param_block(g_rbm, EBM_PARAM_BIAS, -1, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "2", NULL, ebm_model_param_block(g_rbm, EBM_PARAM_BIAS, 2, &out3[0], &out3[1], &out3[2]));
    /* logvar of a binary or spin model */
    FAILS(&s, EBM_EUNSUPPORTED, "kind", NULL, ebm_model_param_block(g_rbm, EBM_PARAM_LOGVAR, 0, &out3[0], &out3[1], &out3[2]));
    /* the shape block of a model without dReLU units */
    FAILS(&s, EBM_EUNSUPPORTED, "EBM_PARAM_SHAPE", "has none", ebm_model_param_block(g_rbm, EBM_PARAM_SHAPE, 1, &out3[0], &out3[1], &out3[2]));
    t_snap_init(&s, T_MSG_MODEL, g_dbm, NULL);
    t_snap_track(&s, "offset/rows/cols", out3, sizeof out3);
    FAILS(&s, EBM_EUNSUPPORTED, "kind", NULL, ebm_model_param_block(g_dbm, EBM_PARAM_LOGVAR, 0, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "3", NULL, ebm_model_param_block(g_dbm, EBM_PARAM_WEIGHT, 3, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "3", NULL, ebm_model_param_block(g_dbm, EBM_PARAM_BIAS, 3, &out3[0], &out3[1], &out3[2]));
    /* logvar of a GRBM: layer 0 only */
    t_snap_init(&s, T_MSG_MODEL, g_grbm, NULL);
    t_snap_track(&s, "offset/rows/cols", out3, sizeof out3);
    FAILS(&s, EBM_ESHAPE, "1", NULL, ebm_model_param_block(g_grbm, EBM_PARAM_LOGVAR, 1, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "-1", NULL, ebm_model_param_block(g_grbm, EBM_PARAM_LOGVAR, -1, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "2", NULL, ebm_model_param_block(g_grbm, EBM_PARAM_WEIGHT, 2, &out3[0], &out3[1], &out3[2]));
    /* Valid: NULL outputs are allowed; the handle still works. */
    OK(g_grbm, ebm_model_param_block(g_grbm, EBM_PARAM_LOGVAR, 0, NULL, NULL, NULL));
    OK(g_grbm, ebm_model_param_block(g_grbm, EBM_PARAM_LOGVAR, 0, &out3[0], &out3[1], &out3[2]));
    CHECK(out3[0] == 11 && out3[1] == 1 && out3[2] == 3, "GRBM logvar block is %lld (%lld x %lld)",
          (long long)out3[0], (long long)out3[1], (long long)out3[2]);
    FINISH();
}
END_TEST

START_TEST(get_set_params_bad_input)
{
    float p[64];
    int64_t np = ebm_model_param_count(g_rbm); /* 19 */
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_rbm, NULL);
    FAILS(&s, EBM_ENULL, "out", NULL, ebm_model_get_params(g_rbm, NULL));
    FAILS(&s, EBM_ENULL, "in", NULL, ebm_model_set_params(g_rbm, NULL));
    ck_assert_int_eq(ebm_model_get_params(g_rbm, p), EBM_OK);
    t_snap_track(&s, "in", p, (size_t)np * sizeof *p);
    p[5] = NAN; /* W_1[1,2] */
    FAILS(&s, EBM_EVALUE, "nan", "5", ebm_model_set_params(g_rbm, p));
    p[5] = 0.0f;
    p[18] = INFINITY; /* b_1[2] */
    FAILS(&s, EBM_EVALUE, "inf", "18", ebm_model_set_params(g_rbm, p));
    p[18] = 0.0f;
    p[0] = -INFINITY;
    FAILS(&s, EBM_EVALUE, "inf", "0", ebm_model_set_params(g_rbm, p));

    /* GRBM: log-variances (indices 11..13) within [-30, 30]. */
    float q[64];
    t_snap_init(&s, T_MSG_MODEL, g_grbm, NULL);
    ck_assert_int_eq(ebm_model_get_params(g_grbm, q), EBM_OK);
    t_snap_track(&s, "in", q, 14 * sizeof *q);
    q[12] = 31.0f;
    FAILS(&s, EBM_EVALUE, "31", "12", ebm_model_set_params(g_grbm, q));
    q[12] = -30.5f;
    FAILS(&s, EBM_EVALUE, "-30.5", "12", ebm_model_set_params(g_grbm, q));
    q[12] = NAN;
    FAILS(&s, EBM_EVALUE, "nan", "12", ebm_model_set_params(g_grbm, q));
    q[12] = 0.0f;
    q[6] = INFINITY; /* the mean b_0[0] */
    FAILS(&s, EBM_EVALUE, "inf", "6", ebm_model_set_params(g_grbm, q));
    q[6] = 0.0f;
    /* The boundaries themselves are valid. */
    q[11] = 30.0f;
    q[13] = -30.0f;
    OK(g_grbm, ebm_model_set_params(g_grbm, q));
    FINISH();
}
END_TEST

START_TEST(axpy_params_bad_input)
{
    float g[64] = {0};
    int64_t np = ebm_model_param_count(g_rbm);
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, g_rbm, NULL);
    t_snap_track(&s, "g", g, (size_t)np * sizeof *g);
    FAILS(&s, EBM_ENULL, "g", NULL, ebm_model_axpy_params(g_rbm, 1.0f, NULL));
    FAILS(&s, EBM_EVALUE, "alpha", "nan", ebm_model_axpy_params(g_rbm, NAN, g));
    FAILS(&s, EBM_EVALUE, "alpha", "inf", ebm_model_axpy_params(g_rbm, INFINITY, g));
    FAILS(&s, EBM_EVALUE, "alpha", "inf", ebm_model_axpy_params(g_rbm, -INFINITY, g));
    for (int i = 0; i < np; i++) {
        g[i] = 0.01f * (float)(i + 1);
    }
    g[3] = INFINITY;
    FAILS(&s, EBM_EVALUE, "g[3]", "inf", ebm_model_axpy_params(g_rbm, 0.5f, g));
    g[3] = 0.0f;
    g[7] = NAN;
    FAILS(&s, EBM_EVALUE, "g[7]", "nan", ebm_model_axpy_params(g_rbm, 0.5f, g));
    g[7] = 0.0f;
    /* Even alpha = 0 does not make a non-finite g acceptable. */
    g[np - 1] = NAN;
    FAILS(&s, EBM_EVALUE, "g[18]", "nan", ebm_model_axpy_params(g_rbm, 0.0f, g));
    g[np - 1] = 0.0f;
    /* Finite alpha and g, non-finite result. */
    g[0] = 1e10f;
    FAILS(&s, EBM_EVALUE, "inf", NULL, ebm_model_axpy_params(g_rbm, 1e30f, g));
    float p[64];
    ck_assert_int_eq(ebm_model_get_params(g_rbm, p), EBM_OK);
    p[2] = 3e38f;
    ck_assert_int_eq(ebm_model_set_params(g_rbm, p), EBM_OK);
    memset(g, 0, sizeof g);
    g[2] = 3e38f;
    FAILS(&s, EBM_EVALUE, "inf", NULL, ebm_model_axpy_params(g_rbm, 1.0f, g));

    /* GRBM: a finite step that would push a log-variance past +-30. */
    float gg[64] = {0};
    t_snap_init(&s, T_MSG_MODEL, g_grbm, NULL);
    t_snap_track(&s, "g", gg, 14 * sizeof *gg);
    gg[11] = 40.0f;
    FAILS(&s, EBM_EVALUE, "g", NULL, ebm_model_axpy_params(g_grbm, 1.0f, gg));
    FAILS(&s, EBM_EVALUE, "g", NULL, ebm_model_axpy_params(g_grbm, -1.0f, gg));
    gg[11] = 0.0f;
    gg[13] = 1e6f;
    FAILS(&s, EBM_EVALUE, "g", NULL, ebm_model_axpy_params(g_grbm, 1e-4f, gg));
    /* A valid step still works after the failures. */
    float before[64], after[64];
    ck_assert_int_eq(ebm_model_get_params(g_grbm, before), EBM_OK);
    memset(gg, 0, sizeof gg);
    gg[0] = 1.0f;
    OK(g_grbm, ebm_model_axpy_params(g_grbm, 0.5f, gg));
    ck_assert_int_eq(ebm_model_get_params(g_grbm, after), EBM_OK);
    CHECK(after[0] == before[0] + 0.5f && memcmp(after + 1, before + 1, 13 * sizeof(float)) == 0,
          "axpy after failures did not apply the step");
    FINISH();
}
END_TEST

START_TEST(init_bad_input)
{
    ebm_model_t *ms[3] = {g_rbm, g_dbm, g_grbm};
    for (int k = 0; k < 3; k++) {
        ebm_model_t *m = ms[k];
        t_soft_context("%s", k == 0 ? "RBM" : (k == 1 ? "DBM" : "GRBM"));
        t_snap s;
        t_snap_init(&s, T_MSG_MODEL, m, g_rng);
        FAILS(&s, EBM_ENULL, "rng", NULL, ebm_model_init(m, NULL, EBM_INIT_ORTHOGONAL, 1.0));
        FAILS(&s, EBM_EVALUE, "scheme", "7", ebm_model_init(m, g_rng, 7, 1.0));
        FAILS(&s, EBM_EVALUE, "scheme", "-1", ebm_model_init(m, g_rng, -1, 1.0));
        FAILS(&s, EBM_EVALUE, "scheme", "2", ebm_model_init(m, g_rng, 2, 1.0));
        FAILS(&s, EBM_EVALUE, "scale", "0", ebm_model_init(m, g_rng, EBM_INIT_ORTHOGONAL, 0.0));
        FAILS(&s, EBM_EVALUE, "scale", "0", ebm_model_init(m, g_rng, EBM_INIT_GAUSSIAN, -0.0));
        FAILS(&s, EBM_EVALUE, "scale", "-1", ebm_model_init(m, g_rng, EBM_INIT_GAUSSIAN, -1.0));
        FAILS(&s, EBM_EVALUE, "scale", "nan", ebm_model_init(m, g_rng, EBM_INIT_ORTHOGONAL, NAN));
        FAILS(&s, EBM_EVALUE, "scale", "inf", ebm_model_init(m, g_rng, EBM_INIT_GAUSSIAN, INFINITY));
    }
    t_soft_context("%s", "");
    /* Not poisoned: init after the failures equals init of a twin. */
    ebm_model_t *twin = t_new_dbm();
    ebm_rng_t *r2 = t_fresh_rng();
    OK(g_dbm, ebm_model_init(g_dbm, g_rng, EBM_INIT_ORTHOGONAL, 0.5));
    OK(twin, ebm_model_init(twin, r2, EBM_INIT_ORTHOGONAL, 0.5));
    CHECK(t_model_hash(g_dbm) == t_model_hash(twin),
          "init after failed inits differs from a twin's");
    CHECK(t_rng_hash(g_rng) == t_rng_hash(r2), "rng after failed inits differs from a twin's");
    ebm_model_destroy(twin);
    ebm_rng_destroy(r2);
    FINISH();
}
END_TEST

Suite *ebm_model_suite(void)
{
    const t_test tests[] = {
        {"model", version_and_codes, 0, 120, NULL, NULL},
        {"model", shape_and_layout, 0, 120, NULL, NULL},
        {"model", params_set_get_axpy, 0, 120, NULL, NULL},
        {"model", init_orthogonal_is_orthogonal, 0, 120, NULL, NULL},
        {"model", init_orthogonal_is_haar, 0, 120, NULL, NULL},
        {"model", init_gaussian_and_spin_biases, 0, 120, NULL, NULL},
        {"model", init_grbm_defaults, 0, 120, NULL, NULL},
        {"model", const_calls_are_thread_safe, 0, 120, NULL, NULL},
        {"layout", param_layout, 0, 60, NULL, NULL},
        {"handles", versions_and_codes, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"handles", null_model_handle, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"handles", errmsg_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"handles", errmsg_copy_null_buf_leaves_message, 0, 10, t_fixture_setup,
         t_fixture_teardown},
        {"handles", errmsg_is_per_model, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"handles", failures_do_not_poison_the_handle, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"handles", empty_batches_with_null_buffers, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", create_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", create_too_large_for_memory, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", accessors_bad_index, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", param_block_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", get_set_params_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", axpy_params_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
        {"bad input", init_bad_input, 0, 10, t_fixture_setup, t_fixture_teardown},
    };
    return t_suite("model", tests, sizeof tests / sizeof tests[0]);
}
