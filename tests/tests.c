/* The test runner and the helpers shared by the suites. */
#include "tests.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int t_level(void)
{
    const char *s = getenv("EBM_TEST_LEVEL");
    return (s != NULL && atoi(s) >= 2) ? 2 : 1;
}

ebm_model_t *t_model(int64_t n_layers, const int64_t *sizes, int visible_units, int hidden_units)
{
    ebm_model_t *m = NULL;
    char err[256];
    int rc = ebm_model_create(&m, n_layers, sizes, visible_units, hidden_units, err, sizeof err);
    ck_assert_msg(rc == EBM_OK, "ebm_model_create: %s", err);
    return m;
}

double t_uniform(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

void t_random_params(ebm_model_t *m, uint64_t seed, double scale)
{
    int64_t np = ebm_model_param_count(m);
    float *p = malloc((size_t)np * sizeof *p);
    ck_assert_ptr_nonnull(p);
    for (int64_t i = 0; i < np; i++) {
        p[i] = (float)((2.0 * t_uniform(&seed) - 1.0) * scale);
    }
    int64_t off, rows, cols;
    if (ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &off, &rows, &cols) == EBM_OK) {
        for (int64_t i = 0; i < rows * cols; i++) {
            p[off + i] = (float)(2.0 * t_uniform(&seed) - 1.0);
        }
    }
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    free(p);
}

uint64_t t_checksum(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 1099511628211ULL;
    }
    return h;
}

void t_fill_states(const ebm_model_t *m, int64_t n, float *x, int64_t ld, uint64_t seed)
{
    int64_t w = ebm_model_state_width(m);
    for (int64_t r = 0; r < n; r++) {
        for (int64_t c = w; c < ld; c++) {
            x[r * ld + c] = 0.5f;
        }
        for (int64_t l = 0; l < ebm_model_num_layers(m); l++) {
            int64_t off = ebm_model_layer_offset(m, l);
            for (int64_t j = 0; j < ebm_model_layer_size(m, l); j++) {
                double u = t_uniform(&seed);
                float v;
                switch (ebm_model_layer_units(m, l)) {
                case EBM_UNITS_BINARY: v = u < 0.5 ? 0.0f : 1.0f; break;
                case EBM_UNITS_SPIN: v = u < 0.5 ? -1.0f : 1.0f; break;
                default: v = (float)(4.0 * u - 2.0); break;
                }
                x[r * ld + off + j] = v;
            }
        }
    }
}

void t_fill_means(const ebm_model_t *m, int64_t n, float *mu, int64_t ld, uint64_t seed)
{
    int64_t w = ebm_model_state_width(m);
    for (int64_t r = 0; r < n; r++) {
        for (int64_t c = w; c < ld; c++) {
            mu[r * ld + c] = 7.0f; /* padding: never read */
        }
        for (int64_t l = 0; l < ebm_model_num_layers(m); l++) {
            int64_t off = ebm_model_layer_offset(m, l);
            for (int64_t j = 0; j < ebm_model_layer_size(m, l); j++) {
                double u = t_uniform(&seed);
                float v;
                switch (ebm_model_layer_units(m, l)) {
                case EBM_UNITS_BINARY: v = (float)u; break;
                case EBM_UNITS_SPIN: v = (float)(2.0 * u - 1.0); break;
                default: v = (float)(4.0 * u - 2.0); break;
                }
                mu[r * ld + off + j] = v;
            }
        }
    }
}

int t_contains(const char *hay, const char *needle)
{
    if (hay == NULL) {
        return 0;
    }
    size_t n = strlen(needle);
    for (const char *p = hay; *p != '\0'; p++) {
        size_t i = 0;
        while (i < n && p[i] != '\0' &&
               tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i])) {
            i++;
        }
        if (i == n) {
            return 1;
        }
    }
    return n == 0;
}

int main(void)
{
    SRunner *sr = srunner_create(ebm_rng_suite());
    srunner_add_suite(sr, ebm_simd_suite());
    srunner_add_suite(sr, ebm_model_suite());
    srunner_add_suite(sr, ebm_exact_suite());
    srunner_add_suite(sr, ebm_io_suite());
    srunner_add_suite(sr, ebm_badinput_suite());
    srunner_add_suite(sr, ebm_sampler_suite());
    srunner_add_suite(sr, ebm_langevin_suite());
    srunner_add_suite(sr, ebm_estimator_suite());
    srunner_add_suite(sr, ebm_evaluation_suite());
    srunner_add_suite(sr, ebm_threads_suite());
    srunner_add_suite(sr, ebm_faults_suite());
    srunner_add_suite(sr, ebm_alloc_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
