/* The README's example: an RBM, its energies, free energies and exact log Z. */
#include <ebm.h>
#include <stdio.h>

int main(void)
{
    int64_t sizes[2] = {6, 4};                 /* 6 visible, 4 hidden units */
    ebm_model_t *m;
    ebm_rng_t *rng;
    char err[256];
    if (ebm_model_create(&m, 2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    ebm_rng_create(&rng, 42, 0);
    ebm_model_init(m, rng, EBM_INIT_ORTHOGONAL, 1.0);
    float x[2][10] = {{1, 0, 1, 1, 0, 0, 1, 0, 0, 1}, {0, 1, 1, 0, 1, 0, 0, 0, 1, 1}};
    double e[2], f[2], log_z, ll[2];
    ebm_model_energy(m, 2, &x[0][0], 10, e);               /* E(v, h) */
    ebm_model_free_energy(m, 1u << 1, 2, &x[0][0], 10, f); /* F(v): h summed out */
    ebm_model_log_partition_exact(m, &log_z);
    ebm_model_log_likelihood(m, log_z, 2, &x[0][0], 10, ll);
    printf("E = %.4f %.4f  F = %.4f %.4f  log Z = %.4f  log p(v) = %.4f %.4f\n",
           e[0], e[1], f[0], f[1], log_z, ll[0], ll[1]);
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
    return 0;
}
