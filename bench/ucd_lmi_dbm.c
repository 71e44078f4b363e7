/* One UCD-LMI gradient (Taniguchi et al. 2023; EBM_ESTIMATOR_UCD_LMI with
 * its default options: no cap on coupling steps, coupled positive phase) of a
 * spin DBM 784-784-784 at its orthogonal initialisation (scale 1), on a batch
 * of 1000 rows of 1-bit Fashion-MNIST (grey >= 0.5, as spins -1/+1).
 * The model is not updated: the step is the gradient alone. Each step takes
 * its own batch (the first 6000 training images); the time is the median of
 * 5 steps after 1 warm-up. Peer: the paper's PyTorch code (unbiased_dbm,
 * PyTorch 1.13 on the CPU; bench/peers/peer_ucd_lmi_dbm.py), timed by make
 * bench in the same run, else its 2753 ms of issue 25; goal 10x the peer.
 * Skipped (exit 0) if Fashion-MNIST is not installed. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

enum { D = 784, BATCH = 1000, WARMUP = 1, REPS = 5, STEPS = WARMUP + REPS };

int main(void)
{
    float *data = bench_alloc((size_t)STEPS * BATCH * D * sizeof *data);
    if (!bench_fashion_mnist(STEPS * BATCH, DATA_THRESHOLD, 1, data)) {
        printf("ucd_lmi_dbm: skipped: Fashion-MNIST is not installed (%s): %s\n",
               DATA_FASHION_MNIST_DIR, DATA_FASHION_MNIST_INSTALL);
        free(data);
        return 0;
    }
    const int64_t sizes[3] = {D, D, D};
    bench_step c = {NULL, NULL, NULL, data, BATCH, STEPS, NULL, NULL, 0, {0}};
    bench_step_setup(&c, 3, sizes, EBM_UNITS_SPIN, EBM_UNITS_SPIN, EBM_INIT_ORTHOGONAL, 1.0,
                     EBM_ESTIMATOR_UCD_LMI);

    printf("ucd_lmi_dbm: UCD-LMI gradient, spin DBM 784-784-784 at orthogonal init, batch %d of "
           "1-bit Fashion-MNIST; median of %d steps after %d warm-up\n", BATCH, REPS, WARMUP);
    const double roof = bench_sgemm_gflops(0, 0, BATCH, D, D); /* layer inputs */
    for (int i = 0; i < WARMUP; i++) {
        bench_step_run(&c);
    }
    c.stats = (bench_stats){0}; /* statistics of the timed steps only */
    const bench_timing t = bench_time(bench_step_run, &c, 0, REPS);

    const bench_stats *st = &c.stats;
    const double tau = bench_stats_mean(st, EBM_ESTIMATOR_STAT_TAU_MEAN);
    const double tau_max = st->max[EBM_ESTIMATOR_STAT_TAU_MAX];
    const double ptau = bench_stats_mean(st, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN);
    const double ptau_max = st->max[EBM_ESTIMATOR_STAT_POSITIVE_TAU_MAX];
    const double sweeps = bench_stats_mean(st, EBM_ESTIMATOR_STAT_SWEEPS_MEAN);
    const double capped = st->sum[EBM_ESTIMATOR_STAT_CAPPED];
    const double accept = bench_stats_mean(st, EBM_ESTIMATOR_STAT_ACCEPT_RATE);
    char note[256], json[512];
    snprintf(note, sizeof note, "tau %.2f (max %.0f), positive tau %.2f (max %.0f), local search "
             "%.2f sweeps, %.0f capped rows, accept %.3f", tau, tau_max, ptau, ptau_max, sweeps,
             capped, accept);
    snprintf(json, sizeof json, "\"tau_mean\": %.4f, \"tau_max\": %.0f, \"positive_tau_mean\": "
             "%.4f, \"positive_tau_max\": %.0f, \"sweeps_mean\": %.4f, \"capped\": %.0f, "
             "\"accept_rate\": %.4f", tau, tau_max, ptau, ptau_max, sweeps, capped, accept);
    bench_line l = {.bench = "ucd_lmi_dbm", .ms_per_step = 1e3 * t.median_s,
                    .gflop_per_step = t.gflop, .sgemm_gflops = roof, .peer_ms = 2753, .peer_rss_mib = 370,
                    .goal_speedup = 10, .note = note, .json_extra = json};
    bench_report(&l);

    bench_step_free(&c);
    free(data);
    return 0;
}
