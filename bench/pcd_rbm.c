/* One PCD-1 step of a binary RBM 784-500, batch 100, 100 persistent chains:
 * EBM_ESTIMATOR_PCD's gradient and the SGD update theta += 0.01 g
 * (ebm_model_axpy_params). Data: 1-bit Fashion-MNIST (grey >= 0.5) as 0/1,
 * the first 6000 training images in 60 batches taken in turn, or, if it is
 * not installed, random Bernoulli(0.13) rows (about Fashion-MNIST's share of
 * ones). W starts N(0, 0.01^2), biases 0, as scikit-learn's BernoulliRBM;
 * f sums out h (EBM_MARGINALIZE_ODD), as its gradient does (v_neg^T
 * E[h | v_neg]). The time is the median of 200 steps after 20 warm-up steps.
 * Peer: scikit-learn 1.2.1's BernoulliRBM (float64; bench/peers/peer_pcd_rbm.py),
 * timed by make bench in the same run, else its 11.2 ms of issue 25; goal 4x
 * the peer. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

enum { D = 784, H = 500, BATCH = 100, CHAINS = 100, POOL = 60, WARMUP = 20, REPS = 200 };

int main(void)
{
    const int64_t sizes[2] = {D, H};
    optim_sgd sgd = optim_sgd_plain(0.01); /* theta += 0.01 g by ebm_model_axpy_params */
    float *data = bench_alloc((size_t)POOL * BATCH * D * sizeof *data);
    bench_step c = {NULL, NULL, NULL, data, BATCH, POOL, NULL, &sgd, 0, {0}};
    bench_step_setup(&c, 2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, EBM_INIT_GAUSSIAN, 0.01,
                     EBM_ESTIMATOR_PCD);
    int rc = ebm_estimator_set_int(c.e, EBM_ESTIMATOR_CHAINS, CHAINS);
    if (rc != EBM_OK) {
        bench_fail("ebm_estimator_set_int(CHAINS)", rc, ebm_estimator_errmsg(c.e));
    }
    rc = ebm_estimator_set_int(c.e, EBM_ESTIMATOR_MARGINALIZE, EBM_MARGINALIZE_ODD);
    if (rc != EBM_OK) {
        bench_fail("ebm_estimator_set_int(MARGINALIZE)", rc, ebm_estimator_errmsg(c.e));
    }
    const char *source = "fashion-mnist";
    if (!bench_fashion_mnist(POOL * BATCH, DATA_THRESHOLD, 0, data)) {
        source = "bernoulli-0.13";
        if ((rc = ebm_rng_uniform(c.rng, (int64_t)POOL * BATCH * D, data)) != EBM_OK) {
            bench_fail("ebm_rng_uniform", rc, ebm_rng_errmsg(c.rng));
        }
        for (int64_t i = 0; i < (int64_t)POOL * BATCH * D; i++) {
            data[i] = data[i] < 0.13f ? 1.0f : 0.0f;
        }
    }

    printf("pcd_rbm: PCD-1 gradient + SGD update, binary RBM %d-%d, batch %d, %d chains, data %s; "
           "median of %d steps after %d warm-up\n", D, H, BATCH, CHAINS, source, REPS, WARMUP);
    const double roof = bench_sgemm_gflops(0, 0, BATCH, H, D); /* hidden inputs */
    const bench_timing t = bench_time(bench_step_run, &c, WARMUP, REPS);
    char note[64], json[64];
    snprintf(note, sizeof note, "data %s", source);
    snprintf(json, sizeof json, "\"data\": \"%s\"", source);
    bench_line l = {.bench = "pcd_rbm", .ms_per_step = 1e3 * t.median_s, .gflop_per_step = t.gflop,
                    .sgemm_gflops = roof, .peer_ms = 11.2, .peer_rss_mib = 158,
                    .goal_speedup = 4, .note = note, .json_extra = json};
    bench_report(&l);

    bench_step_free(&c);
    free(data);
    return 0;
}
