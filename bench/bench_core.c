/* Core operations at the UCD-LMI benchmark shape (spin DBM 784-784-784,
 * batch 1000), against the sgemm roofline measured in the same run. Prints a
 * human line and a JSON line per operation; asserts nothing about time. */
#include "common.h"

#include <ebm.h>

#include <stdio.h>
#include <stdlib.h>

enum { N = 1000, D = 784, WIDTH = 3 * D };

typedef struct ctx {
    ebm_model_t *m;
    ebm_rng_t *rng;
    float *x, *x0, *a, *grad;
    double *e, *coef;
} ctx;

static void op_energy(void *p) { ctx *c = p; ebm_model_energy(c->m, N, c->x, WIDTH, c->e); }
static void op_free_energy(void *p)
{
    ctx *c = p;
    ebm_model_free_energy(c->m, 0x2u, N, c->x, WIDTH, c->e);
}
static void op_layer_input(void *p)
{
    ctx *c = p;
    ebm_model_layer_input(c->m, 1, N, c->x, WIDTH, c->a, D);
}
static void op_layer_sample(void *p) { ctx *c = p; ebm_model_layer_sample(c->m, 1, c->rng, N, c->x, WIDTH); }
static void op_grad(void *p)
{
    ctx *c = p;
    ebm_model_energy_grad(c->m, 0x2u, N, c->x, WIDTH, c->coef, c->grad);
}
static int64_t last_sweeps_total;
static void op_local_search(void *p)
{
    ctx *c = p;
    static int64_t sweeps[N];
    for (int i = 0; i < N * WIDTH; i++) {
        c->x[i] = c->x0[i];
    }
    ebm_model_local_search(c->m, c->rng, N, c->x, WIDTH, NULL, 0, 1000, sweeps);
    last_sweeps_total = 0;
    for (int i = 0; i < N; i++) {
        last_sweeps_total += sweeps[i];
    }
}

/* One operation, median of `reps` calls after a warm-up. The roofline
 * fraction uses the GEMM work the library did (counted by the wrappers); the
 * note gives the work of the plain path (plain_gflop GEMM GFLOP per call; for
 * the local search, per sweep), which a fast path may undercut. */
static void run(const char *name, bench_op op, ctx *c, int reps, double plain_gflop, double roof)
{
    bench_timing t = bench_time(op, c, 1, reps);
    if (op == op_local_search) {
        printf("local search: %.2f sweeps per row on average\n", (double)last_sweeps_total / N);
        plain_gflop *= (double)last_sweeps_total / N;
    }
    char bench[64], note[64];
    snprintf(bench, sizeof bench, "core_%s", name);
    snprintf(note, sizeof note, "plain path %.3f GFLOP", plain_gflop);
    bench_line l = {.bench = bench, .ms_per_step = 1e3 * t.median_s, .gflop_per_step = t.gflop,
                    .sgemm_gflops = roof, .note = note};
    bench_report(&l);
}

int main(void)
{
    ctx c;
    const int64_t sizes[3] = {D, D, D};
    char err[256];
    if (ebm_model_create(&c.m, 3, sizes, EBM_UNITS_SPIN, EBM_UNITS_SPIN, err, sizeof err) != EBM_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    ebm_rng_create(&c.rng, 1, 0);
    ebm_model_init(c.m, c.rng, EBM_INIT_ORTHOGONAL, 1.0);
    c.x = bench_alloc(sizeof(float) * N * WIDTH);
    c.x0 = bench_alloc(sizeof(float) * N * WIDTH);
    c.a = bench_alloc(sizeof(float) * N * D);
    c.grad = calloc((size_t)ebm_model_param_count(c.m), sizeof(float));
    c.e = bench_alloc(sizeof(double) * N);
    c.coef = bench_alloc(sizeof(double) * N);
    ebm_model_random_state(c.m, c.rng, N, c.x0, WIDTH, NULL, 0);
    for (int i = 0; i < N * WIDTH; i++) {
        c.x[i] = c.x0[i];
    }
    for (int i = 0; i < N; i++) {
        c.coef[i] = 1.0 / N;
    }
    const double g = 2.0 * N * D * D * 1e-9; /* one N x D x D GEMM */
    double roof = bench_sgemm_gflops(0, 0, N, D, D);
    printf("libebm %s core operations, spin DBM 784-784-784, batch %d\n", ebm_version_string(), N);
    bench_line roofline = {.bench = "core_sgemm_roofline", .ms_per_step = 1e3 * g / roof,
                           .gflop_per_step = g, .sgemm_gflops = roof};
    bench_report(&roofline);
    run("energy_double", op_energy, &c, 9, 2 * g, roof);
    run("free_energy_odd", op_free_energy, &c, 9, 2 * g, roof);
    run("layer_input", op_layer_input, &c, 15, 2 * g, roof);
    run("layer_sample", op_layer_sample, &c, 15, 2 * g, roof);
    run("energy_grad_odd", op_grad, &c, 9, 4 * g, roof);
    run("local_search", op_local_search, &c, 5, 4 * g, roof);
    free(c.coef);
    free(c.e);
    free(c.grad);
    free(c.a);
    free(c.x0);
    free(c.x);
    ebm_rng_destroy(c.rng);
    ebm_model_destroy(c.m);
    return 0;
}
