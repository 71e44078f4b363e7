/* A program written only against the installed <ebm.h>, built through
 * pkg-config and through CMake (tests/install/cmake) by tests/install/run.sh
 * and deb.sh: energies, free energies and log Z of a small DBM agree with
 * enumeration done here. Prints "N passed, N failed". */
#include <ebm.h>

#include <math.h>
#include <stdio.h>

enum { L0 = 3, L1 = 3, L2 = 2, W = L0 + L1 + L2 };

static double brute_energy(const float *p, const float *x)
{
    const float *w1 = p, *w2 = p + L0 * L1, *b = p + L0 * L1 + L1 * L2;
    double e = 0;
    for (int k = 0; k < W; k++) {
        e -= b[k] * x[k];
    }
    for (int i = 0; i < L0; i++) {
        for (int j = 0; j < L1; j++) {
            e -= x[i] * w1[i * L1 + j] * x[L0 + j];
        }
    }
    for (int j = 0; j < L1; j++) {
        for (int k = 0; k < L2; k++) {
            e -= x[L0 + j] * w2[j * L2 + k] * x[L0 + L1 + k];
        }
    }
    return e;
}

static void state_of(unsigned code, float *x)
{
    for (int k = 0; k < W; k++) {
        x[k] = (float)((code >> k) & 1u);
    }
}

int main(void)
{
    int passed = 0, failed = 0;
    const int64_t sizes[] = {L0, L1, L2};
    char err[256];
    ebm_model_t *m = NULL;
    if (ebm_model_create(&m, 3, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, err, sizeof err) != EBM_OK) {
        printf("create failed: %s\n0 passed, 1 failed\n", err);
        return 1;
    }
    float p[L0 * L1 + L1 * L2 + W];
    for (int i = 0; i < (int)(sizeof p / sizeof p[0]); i++) {
        p[i] = (float)sin(1.0 + 1.7 * i) * 1.5f;
    }
    ebm_model_set_params(m, p);

    double z = 0, z_even_layers = 0;
    for (unsigned code = 0; code < (1u << W); code++) {
        float x[W];
        double e;
        state_of(code, x);
        double ref = brute_energy(p, x);
        ebm_model_energy(m, 1, x, W, &e);
        (fabs(e - ref) <= 1e-10 * fmax(1.0, fabs(ref)) ? passed++ : failed++);
        z += exp(-ref);
    }
    /* F with layer 1 summed out, for every (v, h2). */
    for (unsigned code = 0; code < (1u << W); code++) {
        if ((code >> L0) & ((1u << L1) - 1u)) {
            continue; /* one representative per (v, h2): h1 bits zero */
        }
        float x[W];
        state_of(code, x);
        double s = 0, f;
        for (unsigned h = 0; h < (1u << L1); h++) {
            float y[W];
            state_of(code | (h << L0), y);
            s += exp(-brute_energy(p, y));
        }
        ebm_model_free_energy(m, 0x2u, 1, x, W, &f);
        (fabs(f + log(s)) <= 1e-10 * fmax(1.0, fabs(f)) ? passed++ : failed++);
        z_even_layers += exp(-f);
    }
    double log_z;
    ebm_model_log_partition_exact(m, &log_z);
    (fabs(log_z - log(z)) <= 1e-10 * fabs(log(z)) ? passed++ : failed++);
    (fabs(log(z_even_layers) - log(z)) <= 1e-10 * fabs(log(z)) ? passed++ : failed++);
    ebm_model_destroy(m);
    printf("outside (libebm %s, ABI %d): %d passed, %d failed\n", ebm_version_string(),
           ebm_abi_version(), passed, failed);
    return failed == 0 ? 0 : 1;
}
