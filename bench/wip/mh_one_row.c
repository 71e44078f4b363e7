#include <ebm.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(void)
{
    const int64_t sizes[3] = {784, 784, 784};
    ebm_model_t *m = NULL; ebm_rng_t *rng = NULL; ebm_sampler_t *s = NULL;
    ebm_model_create(&m, 3, sizes, EBM_UNITS_SPIN, EBM_UNITS_SPIN, NULL, 0);
    ebm_rng_create(&rng, 1, 0);
    ebm_model_init(m, rng, EBM_INIT_ORTHOGONAL, 1.0);
    ebm_sampler_create(&s, m, EBM_SAMPLER_MH_UNIFORM);
    const int64_t w = ebm_model_state_width(m);
    float *x = malloc(w * sizeof *x), *y = malloc(w * sizeof *y);
    ebm_model_random_state(m, rng, 1, x, w, NULL, 0);
    ebm_model_random_state(m, rng, 1, y, w, NULL, 0);
    uint8_t met;
    for (int i = 0; i < 50; i++) ebm_sampler_coupled_step(s, rng, 1, x, w, y, w, &met);
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        for (int i = 0; i < 1000; i++) ebm_sampler_coupled_step(s, rng, 1, x, w, y, w, &met);
        double t = (now() - t0) / 1000;
        if (t < best) best = t;
    }
    printf("one-row coupled MH step, DBM 784-784-784: %.1f us\n", 1e6 * best);
    return 0;
}
