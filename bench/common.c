/* Shared helpers of the benchmark programs: bench/common.h. */
#include "common.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* ---- FLOP counting by linker wrapping (-Wl,--wrap=cblas_...) ------------ */

/* The linker sends every undefined reference to cblas_X to __wrap_cblas_X,
 * and __real_cblas_X to the BLAS. Dimensions are int, as in OpenBLAS's
 * default (32-bit) interface and the reference CBLAS. */
void __real_cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta,
                        enum CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta, float *c,
                        int ldc);
void __wrap_cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta,
                        enum CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta, float *c,
                        int ldc);
void __real_cblas_dgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta,
                        enum CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha,
                        const double *a, int lda, const double *b, int ldb, double beta,
                        double *c, int ldc);
void __wrap_cblas_dgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta,
                        enum CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha,
                        const double *a, int lda, const double *b, int ldb, double beta,
                        double *c, int ldc);

static int64_t gemm_flops; /* the library makes its BLAS calls from one thread */

void __wrap_cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta,
                        enum CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta, float *c,
                        int ldc)
{
    gemm_flops += 2 * (int64_t)m * n * k;
    __real_cblas_sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void __wrap_cblas_dgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta,
                        enum CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha,
                        const double *a, int lda, const double *b, int ldb, double beta,
                        double *c, int ldc)
{
    gemm_flops += 2 * (int64_t)m * n * k;
    __real_cblas_dgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

int64_t bench_flops(void) { return gemm_flops; }

/* ---- errors, memory ----------------------------------------------------- */

void bench_fail(const char *what, int rc, const char *msg)
{
    fprintf(stderr, "bench: %s: %s: %s\n", what, ebm_error_name(rc), msg);
    exit(1);
}

void *bench_alloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL) {
        bench_fail("malloc", EBM_ENOMEM, "out of memory");
    }
    return p;
}

/* ---- timing --------------------------------------------------------------- */

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, compare_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

bench_timing bench_time(bench_op op, void *ctx, int warmup, int reps)
{
    double *t = bench_alloc((size_t)reps * sizeof *t);
    for (int i = 0; i < warmup; i++) {
        op(ctx);
    }
    const int64_t flops0 = gemm_flops;
    for (int i = 0; i < reps; i++) {
        const double t0 = cli_now();
        op(ctx);
        t[i] = cli_now() - t0;
    }
    bench_timing r = {median(t, reps), 1e-9 * (double)(gemm_flops - flops0) / reps};
    free(t);
    return r;
}

double bench_sgemm_gflops(int trans_a, int trans_b, int m, int n, int k)
{
    float *a = bench_alloc((size_t)m * k * sizeof *a), *b = bench_alloc((size_t)k * n * sizeof *b);
    float *c = bench_alloc((size_t)m * n * sizeof *c);
    for (int64_t i = 0; i < (int64_t)m * k; i++) {
        a[i] = (float)(i % 7) * 0.25f - 0.75f;
    }
    for (int64_t i = 0; i < (int64_t)k * n; i++) {
        b[i] = (float)(i % 5) * 0.25f - 0.5f;
    }
    /* Row-major: op(A) is m x k, stored k x m when transposed; likewise B. */
    const enum CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans;
    const enum CBLAS_TRANSPOSE tb = trans_b ? CblasTrans : CblasNoTrans;
    const int lda = trans_a ? m : k, ldb = trans_b ? k : n;
    enum { MAX_REPS = 200 };
    double t[MAX_REPS];
    double t0 = cli_now();
    __real_cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
    const double once = cli_now() - t0;
    int reps = once > 0 ? (int)(0.3 / once) : MAX_REPS;
    reps = reps < 5 ? 5 : reps > MAX_REPS ? MAX_REPS : reps;
    for (int i = 0; i < reps; i++) {
        t0 = cli_now();
        __real_cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
        t[i] = cli_now() - t0;
    }
    free(c);
    free(b);
    free(a);
    return 2e-9 * (double)m * n * k / median(t, reps);
}

/* ---- estimator statistics ---------------------------------------------------- */

void bench_stats_add(bench_stats *s, const ebm_estimator_t *e)
{
    for (int i = 0; i < BENCH_N_STATS; i++) {
        const double x = ebm_estimator_stat(e, i);
        s->sum[i] += x;
        s->max[i] = s->calls == 0 || x > s->max[i] ? x : s->max[i];
    }
    s->calls++;
}

double bench_stats_mean(const bench_stats *s, int stat)
{
    return s->calls > 0 ? s->sum[stat] / (double)s->calls : 0.0;
}

/* ---- process figures -------------------------------------------------------- */

double bench_peak_rss_mib(void)
{
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 ? (double)u.ru_maxrss / 1024.0 : 0.0; /* KiB */
}

int bench_threads(void)
{
    const char *s = getenv("OPENBLAS_NUM_THREADS");
    return s != NULL ? atoi(s) : 0;
}

/* ---- report ------------------------------------------------------------------- */

/* A JSON number, or null for a figure that does not apply (<= 0). */
static void json_number(char *buf, size_t size, double x)
{
    if (x > 0) {
        snprintf(buf, size, "%g", x);
    } else {
        snprintf(buf, size, "null");
    }
}

/* OpenBLAS's name of the kernel family it runs (by CPU, or by
 * OPENBLAS_CORETYPE); absent from other BLAS libraries. */
extern char *openblas_get_corename(void) __attribute__((weak));

static const char *blas_core(void)
{
    const char *name = openblas_get_corename != NULL ? openblas_get_corename() : NULL;
    return name != NULL && strlen(name) < 32 && strchr(name, '"') == NULL ? name : "unknown";
}

/* A positive finite figure from the environment, or `fallback`. */
static double env_figure(const char *name, double fallback)
{
    const char *s = getenv(name);
    char *end;
    const double x = s != NULL ? strtod(s, &end) : 0.0;
    return s != NULL && end != s && *end == '\0' && x > 0 && x < 1e12 ? x : fallback;
}

void bench_report(const bench_line *l)
{
    const double sec = 1e-3 * l->ms_per_step;
    const double frac = l->sgemm_gflops > 0 && sec > 0 ? l->gflop_per_step / l->sgemm_gflops / sec
                                                       : 0.0;
    const double rss = bench_peak_rss_mib();
    const int threads = bench_threads();
    /* the peer measured in this session, where make bench ran it */
    const double peer_now = l->peer_ms > 0 ? env_figure("BENCH_PEER_MS", 0) : 0;
    const int this_run = peer_now > 0;
    const double peer_ms = this_run ? peer_now : l->peer_ms;
    const double peer_rss_mib =
        this_run ? env_figure("BENCH_PEER_RSS_MIB", 0) : l->peer_rss_mib;
    double goal_ms = 0;
    char goal_what[48] = "";
    if (l->goal_roofline > 0 && l->sgemm_gflops > 0) {
        goal_ms = 1e3 * l->gflop_per_step / l->sgemm_gflops / l->goal_roofline;
        snprintf(goal_what, sizeof goal_what, "%g of the roofline", l->goal_roofline);
    } else if (l->goal_speedup > 0 && peer_ms > 0) {
        goal_ms = peer_ms / l->goal_speedup;
        snprintf(goal_what, sizeof goal_what, "%gx the peer", l->goal_speedup);
    }
    const char *met = goal_ms <= 0 ? "null" : l->ms_per_step <= goal_ms ? "true" : "false";
    char thr[16], peer[32], goal[32], peer_rss[32];
    json_number(thr, sizeof thr, threads);
    json_number(peer, sizeof peer, peer_ms);
    json_number(goal, sizeof goal, goal_ms);
    json_number(peer_rss, sizeof peer_rss, peer_rss_mib);

    printf("%-20s %s%sthreads %-7s %10.3f ms/step %9.4g GFLOP %7.1f GFLOP/s = %5.1f%% of sgemm "
           "%.1f GFLOP/s (%s)  RSS %.0f MiB",
           l->bench, l->shape ? l->shape : "", l->shape ? "  " : "", threads > 0 ? thr : "default",
           l->ms_per_step,
           l->gflop_per_step, sec > 0 ? l->gflop_per_step / sec : 0.0, 100 * frac,
           l->sgemm_gflops, blas_core(), rss);
    if (peer_ms > 0) {
        printf("  | peer %g ms (%s): %.2fx", peer_ms, this_run ? "this run" : "issue 25",
               peer_ms / l->ms_per_step);
    }
    if (peer_rss_mib > 0) {
        printf(", peer RSS %g MiB", peer_rss_mib);
    }
    if (goal_ms > 0) {
        printf("  | goal %.4g ms (%s): %s", goal_ms, goal_what,
               l->ms_per_step <= goal_ms ? "met" : "not met");
    }
    printf("%s%s\n", l->note ? "  | " : "", l->note ? l->note : "");

    printf("{\"bench\": \"%s\", ", l->bench);
    if (l->shape) {
        printf("\"shape\": \"%s\", ", l->shape);
    }
    printf("\"threads\": %s, \"ms_per_step\": %.4f, \"gflop_per_step\": %.6g, "
           "\"sgemm_gflops\": %.1f, \"roofline_fraction\": %.4f, \"peak_rss_mib\": %.1f, "
           "\"peer_ms\": %s, \"peer_source\": %s, \"peer_rss_mib\": %s, \"goal_ms\": %s, "
           "\"goal_met\": %s, \"blas_core\": \"%s\"%s%s}\n",
           thr, l->ms_per_step, l->gflop_per_step, l->sgemm_gflops, frac, rss, peer,
           peer_ms <= 0 ? "null" : this_run ? "\"this run\"" : "\"issue 25\"", peer_rss, goal,
           met, blas_core(), l->json_extra ? ", " : "", l->json_extra ? l->json_extra : "");
    fflush(stdout);
}

/* ---- data --------------------------------------------------------------------- */

static void data_fail(int rc, const char *err)
{
    fprintf(stderr, "bench: %s: %s\n", data_strerror(rc), err);
    exit(1);
}

int bench_fashion_mnist(int64_t n, int binarize, int spin, float *out)
{
    const char *path = DATA_FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz";
    if (access(path, R_OK) != 0) {
        return 0;
    }
    char err[512];
    data_set d;
    int rc = data_load_idx(&d, path, NULL, n, err, sizeof err);
    if (rc != DATA_OK || d.n < n) {
        data_fail(rc != DATA_OK ? rc : DATA_EFORMAT, rc != DATA_OK ? err : "too few images");
    }
    float *mean = bench_alloc((size_t)d.dim * sizeof *mean);
    float *sd = bench_alloc((size_t)d.dim * sizeof *sd);
    data_encoding enc = data_encoding_make(binarize, spin);
    if (binarize == DATA_GREY) {
        enc.mean = mean;
        enc.sd = sd;
        if ((rc = data_standardize_fit(&d, 0.05f, mean, sd)) != DATA_OK) {
            data_fail(rc, "data_standardize_fit");
        }
    }
    if ((rc = data_batch(&d, &enc, NULL, NULL, n, out, d.dim, err, sizeof err)) != DATA_OK) {
        data_fail(rc, err);
    }
    free(sd);
    free(mean);
    data_set_free(&d);
    return 1;
}

/* ---- a step on a pool of batches ----------------------------------------------- */

void bench_step_setup(bench_step *s, int64_t n_layers, const int64_t *sizes, int visible_units,
                      int hidden_units, int scheme, double scale, int kind)
{
    char err[256];
    int rc = ebm_model_create(&s->m, n_layers, sizes, visible_units, hidden_units, err,
                              sizeof err);
    if (rc != EBM_OK) {
        bench_fail("ebm_model_create", rc, err);
    }
    if ((rc = ebm_rng_create(&s->rng, 1, 0)) != EBM_OK) {
        bench_fail("ebm_rng_create", rc, "");
    }
    if ((rc = ebm_model_init(s->m, s->rng, scheme, scale)) != EBM_OK) {
        bench_fail("ebm_model_init", rc, ebm_model_errmsg(s->m));
    }
    if ((rc = ebm_estimator_create(&s->e, s->m, kind)) != EBM_OK) {
        bench_fail("ebm_estimator_create", rc, ebm_model_errmsg(s->m));
    }
    s->grad = bench_alloc((size_t)ebm_model_param_count(s->m) * sizeof *s->grad);
}

void bench_step_free(bench_step *s)
{
    free(s->grad);
    ebm_estimator_destroy(s->e);
    ebm_rng_destroy(s->rng);
    ebm_model_destroy(s->m);
}

void bench_step_run(void *step)
{
    bench_step *s = step;
    const int64_t n0 = ebm_model_layer_size(s->m, 0);
    const float *batch = s->pool + (s->calls++ % s->n_batches) * s->batch * n0;
    int rc = ebm_estimator_gradient(s->e, s->rng, s->batch, batch, n0, s->grad);
    if (rc != EBM_OK) {
        bench_fail("ebm_estimator_gradient", rc, ebm_estimator_errmsg(s->e));
    }
    bench_stats_add(&s->stats, s->e);
    if (s->sgd != NULL && (rc = optim_sgd_step(s->sgd, s->m, s->grad)) != EBM_OK) {
        bench_fail("optim_sgd_step", rc, ebm_model_errmsg(s->m));
    }
}
