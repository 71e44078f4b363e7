/* Qiu et al. (2020) section 6.1: UCD training of a binary RBM 16-16 on the 32
 * rows of 4x4 bars-and-stripes, as examples/bas_ucd.c trains it: W, b, c all
 * N(0, 0.1^2); per iteration, 1000 chains started at rows drawn uniformly
 * from the 32 (EBM_ESTIMATOR_UCD, k = 1, EBM_COUPLING_CRN: on BAS models it
 * meets as soon as BLOCKWISE, whose steps cost more; docs/coupling_times.md),
 * the positive phase swapped for the exact one over the 32 rows (one
 * energy_grad call),
 * then SGD theta += 0.1 g. One iteration = all of that.
 *
 * Three full runs from the same start: with no cap on coupling steps (exact
 * and unbiased; the headline, "ucd_bas"), with EBM_ESTIMATOR_MAX_STEPS =
 * 100, the peer's max_mcmc ("ucd_bas_cap100"), and exact with global moves
 * from the 32 rows ("ucd_bas_global", docs/global_moves.md: a step is a
 * global move with probability GLOBAL_PROB, its proposal a row with each
 * unit flipped with probability FLIP_PROB, bas_ucd's defaults for
 * ucd-global). The time is the mean over the whole run (not a median),
 * with the first and last 1000 iterations beside it, since the coupling
 * times change as the model learns. Peer: the C++ code of Qiu et al.
 * (cdtau, capped at max_mcmc = 100, Eigen build; bench/peers/cdtau), timed
 * by make bench in the same run, else its 1.26 ms of issue 25; goals: 2x
 * the peer for the capped run, the peer's capped time for the exact runs
 * (the peer runs only capped). usage: ucd_bas [iterations] (default
 * 10000) */
#include "common.h"
#include "common/bas.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SIDE = 4, NV = SIDE * SIDE, NH = 16, CHAINS = 1000, WINDOW = 1000 };
#define GLOBAL_PROB 0.5
#define FLIP_PROB 0.02

typedef struct problem {
    int64_t n;     /* 32 rows */
    float *states; /* n x (NV + NH): the rows, hidden units 0 */
    int64_t iters;
} problem;

typedef struct result {
    double total_s, first_s, last_s, gflop, loglik;
    bench_stats stats;
} result;

/* One training run; cap = 0: no cap on coupling steps; global: with global
 * moves. The runs start from the same model: s.rng (seed 1, stream 0) draws
 * W in bench_step_setup, then the biases, as bas_ucd.c's initial_params. */
static void train(const problem *p, int64_t cap, int global, result *r)
{
    const int64_t sizes[2] = {NV, NH}, w = NV + NH;
    bench_step s = {0};
    bench_step_setup(&s, 2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, EBM_INIT_GAUSSIAN, 0.1,
                     EBM_ESTIMATOR_UCD);
    int rc = ebm_model_get_params(s.m, s.grad);
    for (int64_t l = 0; l < 2 && rc == EBM_OK; l++) { /* biases N(0, 0.1^2) */
        int64_t offset, cols;
        if ((rc = ebm_model_param_block(s.m, EBM_PARAM_BIAS, l, &offset, NULL, &cols)) ||
            (rc = ebm_rng_normal(s.rng, cols, s.grad + offset))) {
            break;
        }
        for (int64_t j = 0; j < cols; j++) {
            s.grad[offset + j] *= 0.1f;
        }
    }
    if (rc != EBM_OK || (rc = ebm_model_set_params(s.m, s.grad)) != EBM_OK) {
        bench_fail("bias initialisation", rc, ebm_model_errmsg(s.m));
    }
    if ((rc = ebm_estimator_set_int(s.e, EBM_ESTIMATOR_K, 1)) ||
        (rc = ebm_estimator_set_int(s.e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_COUPLING,
                                    EBM_COUPLING_CRN)) ||
        (rc = ebm_estimator_set_int(s.e, EBM_ESTIMATOR_MAX_STEPS, cap)) ||
        (global && ((rc = ebm_estimator_set_double(
                         s.e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_GLOBAL_PROB, GLOBAL_PROB)) ||
                    (rc = ebm_estimator_set_proposal(s.e, p->n, p->states, NV + NH, FLIP_PROB))))) {
        bench_fail("estimator options", rc, ebm_estimator_errmsg(s.e));
    }
    float *batch = bench_alloc((size_t)CHAINS * NV * sizeof *batch);
    float *u = bench_alloc((size_t)CHAINS * sizeof *u);
    int64_t *counts = bench_alloc((size_t)p->n * sizeof *counts);
    double *coef = bench_alloc((size_t)p->n * sizeof *coef);
    memset(r, 0, sizeof *r);
    const int64_t flops0 = bench_flops();

    for (int64_t it = 0; it < p->iters; it++) {
        const double t0 = cli_now();
        /* The chains' starts: CHAINS rows drawn uniformly from the n. */
        if ((rc = ebm_rng_uniform(s.rng, CHAINS, u)) != EBM_OK) {
            bench_fail("ebm_rng_uniform", rc, ebm_rng_errmsg(s.rng));
        }
        memset(counts, 0, (size_t)p->n * sizeof *counts);
        for (int64_t k = 0; k < CHAINS; k++) {
            int64_t i = (int64_t)(u[k] * (float)p->n);
            i = i < p->n ? i : p->n - 1;
            memcpy(batch + k * NV, p->states + i * w, NV * sizeof *batch);
            counts[i]++;
        }
        if ((rc = ebm_estimator_gradient(s.e, s.rng, CHAINS, batch, NV, s.grad)) != EBM_OK) {
            bench_fail("ebm_estimator_gradient", rc, ebm_estimator_errmsg(s.e));
        }
        /* Swap the drawn rows' positive phase for the exact one over the n. */
        for (int64_t i = 0; i < p->n; i++) {
            coef[i] = (double)counts[i] / CHAINS - 1.0 / (double)p->n;
        }
        if ((rc = ebm_model_energy_grad(s.m, 1u << 1, p->n, p->states, w, coef, s.grad)) ||
            (rc = ebm_model_axpy_params(s.m, 0.1f, s.grad))) {
            bench_fail("positive phase and update", rc, ebm_model_errmsg(s.m));
        }
        const double dt = cli_now() - t0;
        r->total_s += dt;
        r->first_s += it < WINDOW ? dt : 0.0;
        r->last_s += it >= p->iters - WINDOW ? dt : 0.0;
        bench_stats_add(&r->stats, s.e);
    }
    r->gflop = 1e-9 * (double)(bench_flops() - flops0) / (double)p->iters;

    /* The exact log-likelihood reached, summed over the rows (a sanity check). */
    double log_z, *ll = coef;
    if ((rc = ebm_model_log_partition_exact(s.m, &log_z)) ||
        (rc = ebm_model_log_likelihood(s.m, log_z, p->n, p->states, w, ll))) {
        bench_fail("exact log-likelihood", rc, ebm_model_errmsg(s.m));
    }
    for (int64_t i = 0; i < p->n; i++) {
        r->loglik += ll[i];
    }
    free(coef);
    free(counts);
    free(u);
    free(batch);
    bench_step_free(&s);
}

static void report(const char *name, const problem *p, const result *r, double roof)
{
    const int64_t window = p->iters < WINDOW ? p->iters : WINDOW;
    const double first_ms = 1e3 * r->first_s / (double)window;
    const double last_ms = 1e3 * r->last_s / (double)window;
    const double tau = bench_stats_mean(&r->stats, EBM_ESTIMATOR_STAT_TAU_MEAN);
    const double tau_max = r->stats.max[EBM_ESTIMATOR_STAT_TAU_MAX];
    const double capped = r->stats.sum[EBM_ESTIMATOR_STAT_CAPPED];
    const double accept = bench_stats_mean(&r->stats, EBM_ESTIMATOR_STAT_ACCEPT_RATE);
    const int capped_run = strcmp(name, "ucd_bas_cap100") == 0; /* the peer's setting */
    const int global_run = strcmp(name, "ucd_bas_global") == 0;
    char moves[96] = "", note[320], json[320];
    if (global_run) {
        snprintf(moves, sizeof moves, ", global moves %.2f with flips %.2f (acceptance %.3f)",
                 GLOBAL_PROB, FLIP_PROB, accept);
    }
    snprintf(note, sizeof note,
             "%lld iterations%s: first %lld %.3f ms, last %lld %.3f ms; tau %.3f (max %.0f), "
             "%.0f capped chains; log-likelihood %.2f (optimum %.2f)",
             (long long)p->iters, moves, (long long)window, first_ms, (long long)window, last_ms,
             tau, tau_max, capped, r->loglik, bas_max_log_likelihood(SIDE));
    snprintf(json, sizeof json,
             "\"iters\": %lld, \"first_ms\": %.4f, \"last_ms\": %.4f, \"tau_mean\": %.4f, "
             "\"tau_max\": %.0f, \"capped\": %.0f, \"accept_rate\": %.4f, \"loglik\": %.3f",
             (long long)p->iters, first_ms, last_ms, tau, tau_max, capped, accept, r->loglik);
    /* the peer runs capped: the capped run's goal is half its time, the
     * exact runs' its time */
    bench_line l = {.bench = name, .ms_per_step = 1e3 * r->total_s / (double)p->iters,
                    .gflop_per_step = r->gflop, .sgemm_gflops = roof, .peer_ms = 1.26,
                    .peer_rss_mib = 100, .goal_speedup = capped_run ? 2 : 1, .note = note,
                    .json_extra = json};
    bench_report(&l);
}

int main(int argc, char **argv)
{
    problem p = {bas_rows(SIDE), NULL, 10000};
    if (argc > 1 && cli_parse_int(argv[1], 1, INT64_C(1) << 40, &p.iters) != 0) {
        fprintf(stderr, "usage: ucd_bas [iterations] (default 10000)\n");
        return 2;
    }
    p.states = calloc((size_t)(p.n * (NV + NH)), sizeof *p.states);
    if (p.states == NULL || bas_generate(SIDE, p.states, NV + NH) != 0) {
        bench_fail("bas_generate", EBM_ENOMEM, "the data");
    }
    printf("ucd_bas: UCD on 4x4 bars-and-stripes, binary RBM 16-16, %d chains, lr 0.1, %lld "
           "iterations; mean ms per iteration\n", CHAINS, (long long)p.iters);
    const double roof = bench_sgemm_gflops(0, 0, CHAINS, NH, NV); /* hidden inputs */
    result r;
    train(&p, 0, 0, &r);
    report("ucd_bas", &p, &r, roof);
    train(&p, 100, 0, &r);
    report("ucd_bas_cap100", &p, &r, roof);
    train(&p, 0, 1, &r);
    report("ucd_bas_global", &p, &r, roof);
    free(p.states);
    return 0;
}
