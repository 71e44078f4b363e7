/* One modified-CD step of Liao et al. (2022) with Gibbs-Langevin sampling,
 * set up as examples/train_grbm.c: a GRBM 784-4096 (Gaussian visible with
 * learned variances, binary hidden; W entries N(0, 1/(784 + 4096))),
 * EBM_ESTIMATOR_GRBM_CD with EBM_SAMPLER_GIBBS_LANGEVIN, K = 10 Gibbs steps
 * of 10 Langevin steps each (step size 1 times the mean variance, the
 * library's defaults otherwise: cosine schedule, closed-form inner steps,
 * no adjustment), 512 chains from N(0, I), then SGD theta += 0.01 g with
 * g's norm clipped at 10 (train_grbm's defaults; unclipped, the
 * log-variances diverge within a few steps).
 * Data: Fashion-MNIST standardised per pixel (sd floored at 0.05, fitted on
 * the rows used), 512 rows per step, each step its own batch; or N(0, 1)
 * rows if it is not installed. The time is the median of 5 steps after 1
 * warm-up. Peer: the paper's PyTorch code (PyTorch 1.13 on the CPU;
 * bench/peers/peer_grbm_gibbs_langevin.py), timed by make bench in the same
 * run, else its 5253 ms of issue 25; goal 0.9 of the step's roofline.
 * With the argument "precondition", the Langevin steps are preconditioned by
 * diag(sigma^2) (EBM_SAMPLER_PRECONDITION; step size 1 times each pixel's
 * variance) instead of scaled by the mean variance. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { D = 784, H = 4096, BATCH = 512, GIBBS = 10, LANGEVIN = 10, WARMUP = 1, REPS = 5,
       STEPS = WARMUP + REPS };

int main(int argc, char **argv)
{
    const int precondition = argc > 1 && strcmp(argv[1], "precondition") == 0;
    if (argc > 1 && !precondition) {
        fprintf(stderr, "usage: grbm_gibbs_langevin [precondition]\n");
        return 2;
    }
    const int64_t sizes[2] = {D, H};
    const int so = EBM_ESTIMATOR_SAMPLER_OPTION;
    optim_sgd sgd = optim_sgd_plain(0.01);
    sgd.clip_norm = 10.0;
    float *data = bench_alloc((size_t)STEPS * BATCH * D * sizeof *data);
    bench_step c = {NULL, NULL, NULL, data, BATCH, STEPS, NULL, &sgd, 0, {0}};
    bench_step_setup(&c, 2, sizes, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY, EBM_INIT_GAUSSIAN,
                     1.0 / sqrt(D + H), EBM_ESTIMATOR_GRBM_CD);
    int rc;
    if ((rc = ebm_estimator_set_int(c.e, EBM_ESTIMATOR_K, GIBBS)) ||
        (rc = ebm_estimator_set_int(c.e, EBM_ESTIMATOR_SAMPLER, EBM_SAMPLER_GIBBS_LANGEVIN)) ||
        (rc = ebm_estimator_set_int(c.e, so + EBM_SAMPLER_LANGEVIN_STEPS, LANGEVIN)) ||
        (rc = ebm_estimator_set_double(c.e, so + EBM_SAMPLER_STEP_SIZE, 1.0)) ||
        (rc = ebm_estimator_set_int(c.e, so + EBM_SAMPLER_SCALE_BY_VARIANCE, !precondition)) ||
        (precondition &&
         (rc = ebm_estimator_set_int(c.e, so + EBM_SAMPLER_PRECONDITION, 1)) != EBM_OK)) {
        bench_fail("estimator options", rc, ebm_estimator_errmsg(c.e));
    }
    const char *source = "fashion-mnist-standardised";
    if (!bench_fashion_mnist(STEPS * BATCH, DATA_GREY, 0, data)) {
        source = "normal-0-1";
        if ((rc = ebm_rng_normal(c.rng, (int64_t)STEPS * BATCH * D, data)) != EBM_OK) {
            bench_fail("ebm_rng_normal", rc, ebm_rng_errmsg(c.rng));
        }
    }

    printf("grbm_gibbs_langevin: modified CD, %d Gibbs-Langevin steps x %d Langevin steps, GRBM "
           "%d-%d, batch %d, data %s, + SGD update; median of %d steps after %d warm-up\n",
           GIBBS, LANGEVIN, D, H, BATCH, source, REPS, WARMUP);
    const double roof = bench_sgemm_gflops(0, 0, BATCH, H, D); /* hidden inputs */
    for (int i = 0; i < WARMUP; i++) {
        bench_step_run(&c);
    }
    c.stats = (bench_stats){0}; /* statistics of the timed steps only */
    const bench_timing t = bench_time(bench_step_run, &c, 0, REPS);
    char note[128], json[128];
    const double accept = bench_stats_mean(&c.stats, EBM_ESTIMATOR_STAT_ACCEPT_RATE);
    snprintf(note, sizeof note, "data %s, accept %.3f%s", source, accept,
             precondition ? ", preconditioned" : "");
    snprintf(json, sizeof json, "\"data\": \"%s\", \"accept_rate\": %.4f, \"precondition\": %d",
             source, accept, precondition);
    bench_line l = {.bench = "grbm_gibbs_langevin", .ms_per_step = 1e3 * t.median_s,
                    .gflop_per_step = t.gflop, .sgemm_gflops = roof, .peer_ms = 5253,
                    .peer_rss_mib = 760, .goal_roofline = 0.9, .note = note, .json_extra = json};
    bench_report(&l);

    bench_step_free(&c);
    free(data);
    return 0;
}
