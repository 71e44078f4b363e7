/* Shared helpers of the benchmark programs (not a benchmark itself).
 *
 * Every benchmark is linked with
 *   -Wl,--wrap=cblas_sgemm -Wl,--wrap=cblas_dgemm
 * so that each of these calls, the library's included (libebm.a leaves them
 * undefined for libopenblas to provide), goes through a wrapper in common.c
 * that adds its FLOPs (2 M N K) to a counter. The sgemm rate a step is
 * compared with is measured in the same process, with the same threads,
 * through __real_cblas_sgemm, which is not counted.
 *
 * Each result is one human line and one JSON line (bench_report):
 *   roofline_fraction = (gflop_per_step / sgemm_gflops) / seconds_per_step,
 * the share of the step's time that its counted GEMM work would take at the
 * measured sgemm rate. Benchmarks print figures and assert nothing about time.
 * Errors end the program (bench_fail): these are programs, not library code.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include "common/cli.h" /* cli_now: seconds on a monotonic clock */
#include "common/data.h"
#include "common/optim.h"

#include <ebm.h>
#include <stddef.h>
#include <stdint.h>

/** Print "<what>: <error name>: <msg>" to stderr and exit(1). */
void bench_fail(const char *what, int rc, const char *msg);
/** malloc that exits on failure. */
void *bench_alloc(size_t bytes);

/** GEMM FLOPs counted by the wrappers since the program started. */
int64_t bench_flops(void);

/** A timed operation: one step of a benchmark. */
typedef void (*bench_op)(void *ctx);
typedef struct bench_timing {
    double median_s; /* median seconds per call over the timed calls */
    double gflop;    /* mean counted GFLOP per timed call */
} bench_timing;
/** Call op(ctx) `warmup` times untimed, then `reps` times timed (reps >= 1). */
bench_timing bench_time(bench_op op, void *ctx, int warmup, int reps);

/** cblas_sgemm GFLOP/s, row-major, C (m x n) = op(A) (m x k) op(B) (k x n),
 *  op = transpose where trans_a / trans_b is nonzero: the median of enough
 *  uncounted calls to take about 0.3 s (5 at least), after one warm-up. */
double bench_sgemm_gflops(int trans_a, int trans_b, int m, int n, int k);

/** Peak resident set size of the process so far, MiB (getrusage). */
double bench_peak_rss_mib(void);
/** OPENBLAS_NUM_THREADS, or 0 if it is not set (OpenBLAS then picks). */
int bench_threads(void);

/** Estimator statistics (enum ebm_estimator_stat) over several gradient calls. */
#define BENCH_N_STATS EBM_ESTIMATOR_STAT_COUNT
typedef struct bench_stats {
    int64_t calls;
    double sum[BENCH_N_STATS], max[BENCH_N_STATS];
} bench_stats;
/** Add the statistics of e's last gradient call. */
void bench_stats_add(bench_stats *s, const ebm_estimator_t *e);
/** @return the mean over the calls of a statistic (0 before any call). */
double bench_stats_mean(const bench_stats *s, int stat);

/** One result. */
typedef struct bench_line {
    const char *bench;      /* "ucd_lmi_dbm" */
    const char *shape;      /* NULL, or a "shape" field ("1000x784x784 NN") */
    double ms_per_step;     /* the step's time (a median unless said otherwise) */
    double gflop_per_step;  /* counted GEMM GFLOP per step */
    double sgemm_gflops;    /* sgemm rate at the step's dominant shape */
    double peer_ms;         /* the peer's time at issue 25 (docs/performance.md); <= 0: none */
    double peer_rss_mib;    /* the peer's peak RSS then; <= 0: none */
    double goal_speedup;    /* goal: peer_ms / goal_speedup; <= 0: none */
    double goal_roofline;   /* goal: this roofline fraction (instead); <= 0: none */
    const char *note;       /* NULL, or more text for the human line */
    const char *json_extra; /* NULL, or more JSON fields: "\"tau_mean\": 2.5" */
} bench_line;
/**
 * Print the human line and the JSON line of a result to stdout. The
 * environment's BENCH_PEER_MS and BENCH_PEER_RSS_MIB, where set (make bench
 * sets them when it has run the peer in the same session, bench/peers/),
 * replace l->peer_ms and l->peer_rss_mib: "peer_source" says which.
 */
void bench_report(const bench_line *l);

/**
 * The first n training images of Fashion-MNIST, encoded into out (n x 784):
 * DATA_THRESHOLD: 1-bit (grey >= 0.5) as 0/1, or -1/+1 if spin; DATA_GREY:
 * standardised per pixel (mean and sd of these n rows, sd at least 0.05, as
 * train_grbm's default). Only these rows are ever read, so that the peak RSS
 * stays the benchmark's own.
 * @return 1, or 0 if the data set is not installed (out untouched); other
 *         errors end the program
 */
int bench_fashion_mnist(int64_t n, int binarize, int spin, float *out);

/** A step on the batches of a pool, taken in turn: a bench_op. */
typedef struct bench_step {
    ebm_model_t *m;
    ebm_estimator_t *e;
    ebm_rng_t *rng;
    const float *pool;          /* n_batches x batch rows of n_0 values */
    int64_t batch, n_batches;
    float *grad;                /* [param_count] */
    optim_sgd *sgd;             /* the update after the gradient; NULL: none */
    int64_t calls;
    bench_stats stats;          /* of the gradient calls */
} bench_step;
/** Create s->m (as ebm_model_create), s->rng (seed 1, stream 0), initialise
 *  the model (ebm_model_init(scheme, scale)), create s->e of estimator `kind`
 *  and s->grad. Errors end the program. */
void bench_step_setup(bench_step *s, int64_t n_layers, const int64_t *sizes, int visible_units,
                      int hidden_units, int scheme, double scale, int kind);
/** ebm_estimator_gradient on the next batch, then sgd's update if any. */
void bench_step_run(void *step);
/** Free what bench_step_setup created. */
void bench_step_free(bench_step *s);

#endif
