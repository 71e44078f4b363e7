/* One coupled Metropolis-Hastings step (EBM_SAMPLER_MH_UNIFORM, Taniguchi
 * Alg. 3) on a single row of a spin DBM 784-784-784 at orthogonal init,
 * whose two chains differ: the step a UCD-LMI row repeats, until its chains
 * meet or reach the cap, once an accepted proposal has parted them. Such a
 * row's steps run one at a time, so per-call costs that do not scale with
 * the rows (the energy bounds, set-up) decide its speed. The time is the
 * median of 1000 steps after 50 warm-up steps. No peer figure: the peers
 * run no such step alone (the paper's released code stops at the first
 * rejection, docs/samplers.md). */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

enum { N = 784, WARMUP = 50, REPS = 1000 };

typedef struct one_row {
    ebm_sampler_t *s;
    ebm_rng_t *rng;
    float *x, *y;
    int64_t w;
} one_row;

static void step(void *ctx)
{
    one_row *c = ctx;
    uint8_t met;
    const int rc = ebm_sampler_coupled_step(c->s, c->rng, 1, c->x, c->w, c->y, c->w, &met);
    if (rc != EBM_OK) {
        bench_fail("ebm_sampler_coupled_step", rc, ebm_sampler_errmsg(c->s));
    }
}

int main(void)
{
    const int64_t sizes[3] = {N, N, N};
    ebm_model_t *m = NULL;
    char err[256];
    int rc = ebm_model_create(&m, 3, sizes, EBM_UNITS_SPIN, EBM_UNITS_SPIN, err, sizeof err);
    if (rc != EBM_OK) {
        bench_fail("ebm_model_create", rc, err);
    }
    one_row c = {NULL, NULL, NULL, NULL, ebm_model_state_width(m)};
    if ((rc = ebm_rng_create(&c.rng, 1, 0)) != EBM_OK ||
        (rc = ebm_model_init(m, c.rng, EBM_INIT_ORTHOGONAL, 1.0)) != EBM_OK ||
        (rc = ebm_sampler_create(&c.s, m, EBM_SAMPLER_MH_UNIFORM)) != EBM_OK) {
        bench_fail("set-up", rc, ebm_model_errmsg(m));
    }
    c.x = bench_alloc((size_t)c.w * sizeof *c.x);
    c.y = bench_alloc((size_t)c.w * sizeof *c.y);
    if ((rc = ebm_model_random_state(m, c.rng, 1, c.x, c.w, NULL, 0)) != EBM_OK ||
        (rc = ebm_model_random_state(m, c.rng, 1, c.y, c.w, NULL, 0)) != EBM_OK) {
        bench_fail("ebm_model_random_state", rc, ebm_model_errmsg(m));
    }
    printf("mh_one_row: a coupled MH step on one row of a spin DBM %d-%d-%d whose chains "
           "differ, median of %d steps after %d warm-up\n", N, N, N, REPS, WARMUP);
    const bench_timing t = bench_time(step, &c, WARMUP, REPS);
    bench_line l = {.bench = "mh_one_row", .ms_per_step = 1e3 * t.median_s,
                    .gflop_per_step = t.gflop};
    bench_report(&l);
    ebm_sampler_destroy(c.s);
    ebm_rng_destroy(c.rng);
    ebm_model_destroy(m);
    free(c.x);
    free(c.y);
    return 0;
}
