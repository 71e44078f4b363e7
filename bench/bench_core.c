/* Core operations at the UCD-LMI benchmark shape (spin DBM 784-784-784,
 * batch 1000), against the sgemm roofline measured in the same run. Prints a
 * human line and a JSON line per operation; asserts nothing about time. */
#include <cblas.h>
#include <ebm.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Median of `reps` timings of op(ctx). */
typedef void (*op_fn)(void *ctx);
static double median_time(op_fn op, void *ctx, int reps)
{
    double t[64];
    op(ctx); /* warm-up */
    for (int i = 0; i < reps; i++) {
        double t0 = now();
        op(ctx);
        t[i] = now() - t0;
    }
    for (int i = 1; i < reps; i++) {
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double s = t[j];
            t[j] = t[j - 1];
            t[j - 1] = s;
        }
    }
    return t[reps / 2];
}

enum { N = 1000, D = 784, WIDTH = 3 * D };

typedef struct ctx {
    ebm_model_t *m;
    ebm_rng_t *rng;
    float *x, *x0, *a, *grad, *ga, *gb, *gc;
    double *e, *coef;
} ctx;

static void op_sgemm(void *p)
{
    ctx *c = p;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, D, D, 1.0f, c->ga, D, c->gb, D, 0.0f,
                c->gc, D);
}
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

static void report(const char *name, double sec, double gflop, double roof_gflops)
{
    double frac = gflop > 0 ? (gflop / roof_gflops) / sec : 0;
    printf("%-18s %9.3f ms  %7.3f GFLOP  %6.1f GFLOP/s  %5.1f%% of sgemm roofline\n", name,
           1e3 * sec, gflop, gflop / sec, 100 * frac);
    printf("{\"bench\": \"core_%s\", \"ms_per_step\": %.4f, \"gflop_per_step\": %.4f, "
           "\"roofline_fraction\": %.4f}\n",
           name, 1e3 * sec, gflop, frac);
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
    c.x = malloc(sizeof(float) * N * WIDTH);
    c.x0 = malloc(sizeof(float) * N * WIDTH);
    c.a = malloc(sizeof(float) * N * D);
    c.grad = calloc((size_t)ebm_model_param_count(c.m), sizeof(float));
    c.ga = malloc(sizeof(float) * N * D);
    c.gb = malloc(sizeof(float) * D * D);
    c.gc = malloc(sizeof(float) * N * D);
    c.e = malloc(sizeof(double) * N);
    c.coef = malloc(sizeof(double) * N);
    ebm_model_random_state(c.m, c.rng, N, c.x0, WIDTH, NULL, 0);
    for (int i = 0; i < N * WIDTH; i++) {
        c.x[i] = c.x0[i];
    }
    ebm_rng_uniform(c.rng, N * D, c.ga);
    ebm_rng_uniform(c.rng, D * D, c.gb);
    for (int i = 0; i < N; i++) {
        c.coef[i] = 1.0 / N;
    }
    const double g = 2.0 * N * D * D * 1e-9; /* one N x D x D GEMM */
    double roof = g / median_time(op_sgemm, &c, 15);
    printf("libebm %s core operations, spin DBM 784-784-784, batch %d\n", ebm_version_string(), N);
    report("sgemm_roofline", g / roof, g, roof);
    report("energy_double", median_time(op_energy, &c, 9), 2 * g, roof);
    report("free_energy_odd", median_time(op_free_energy, &c, 9), 2 * g, roof);
    report("layer_input", median_time(op_layer_input, &c, 15), 2 * g, roof);
    report("layer_sample", median_time(op_layer_sample, &c, 15), 2 * g, roof);
    report("energy_grad_odd", median_time(op_grad, &c, 9), 4 * g, roof);
    double t = median_time(op_local_search, &c, 5);
    printf("local search: %.2f sweeps per row on average\n", (double)last_sweeps_total / N);
    report("local_search", t, 4 * g * (double)last_sweeps_total / N, roof);
    ebm_rng_destroy(c.rng);
    ebm_model_destroy(c.m);
    return 0;
}
