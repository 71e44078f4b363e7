/* The limit: cblas_sgemm GFLOP/s at every GEMM shape the benchmarked steps
 * use, row-major, as the library calls them (energy.c): a layer's input from
 * below is NN, from above NT (C = X W^T), a weight gradient TN (X_below^T C).
 * M x N x K means C (M x N) = op(A) (M x K) op(B) (K x N). One human line and
 * one JSON line per shape. */
#include "common.h"

#include <stdio.h>

typedef struct shape {
    int m, n, k, trans_a, trans_b;
    const char *used_by;
} shape;

static const shape shapes[] = {
    {1000, 784, 784, 0, 0, "ucd_lmi_dbm: layer input from below"},
    {1000, 784, 784, 0, 1, "ucd_lmi_dbm: layer input from above"},
    {784, 784, 1000, 1, 0, "ucd_lmi_dbm: weight gradient"},
    {100, 500, 784, 0, 0, "pcd_rbm: hidden input"},
    {100, 784, 500, 0, 1, "pcd_rbm: visible input"},
    {784, 500, 100, 1, 0, "pcd_rbm: weight gradient"},
    {1000, 16, 16, 0, 0, "ucd_bas: hidden input"},
    {1000, 16, 16, 0, 1, "ucd_bas: visible input"},
    {16, 16, 1000, 1, 0, "ucd_bas: weight gradient"},
    {512, 4096, 784, 0, 0, "grbm_gibbs_langevin: hidden input"},
    {512, 784, 4096, 0, 1, "grbm_gibbs_langevin: visible mean"},
    {784, 4096, 512, 1, 0, "grbm_gibbs_langevin: weight gradient"},
};

int main(void)
{
    printf("cblas_sgemm at the benchmarks' shapes (M x N x K, op(A) op(B))\n");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const shape *s = &shapes[i];
        const double gflop = 2e-9 * s->m * s->n * s->k;
        const double rate = bench_sgemm_gflops(s->trans_a, s->trans_b, s->m, s->n, s->k);
        char name[64];
        snprintf(name, sizeof name, "%dx%dx%d %c%c", s->m, s->n, s->k, s->trans_a ? 'T' : 'N',
                 s->trans_b ? 'T' : 'N');
        bench_line l = {.bench = "sgemm_roofline", .shape = name, .ms_per_step = 1e3 * gflop / rate,
                        .gflop_per_step = gflop, .sgemm_gflops = rate, .note = s->used_by};
        bench_report(&l);
    }
    return 0;
}
