/* The argument checks every public call uses (ebm__check_*): matrix shapes
 * and strides, states of each kind of unit, layer indices, sum-out and
 * clamp masks. Each returns EBM_OK or a code with its message in msg. */
#include "error.h"
#include "model.h"
#include "kernels.h"

#include <math.h>
#include <stdint.h>

int ebm__check_matrix(ebm__msg *msg, const char *name, int64_t n, const void *x, int64_t ld,
                      int64_t width)
{
    if (n < 0) {
        return ebm__fail(msg, EBM_ESHAPE, "n is %lld; it must be >= 0", (long long)n);
    }
    if (n > EBM__BLAS_MAX) {
        return ebm__fail(msg, EBM_ESHAPE, "n is %lld; at most %lld rows per call", (long long)n,
                         (long long)EBM__BLAS_MAX);
    }
    if (n == 0) {
        return EBM_OK;
    }
    if (x == NULL) {
        return ebm__fail(msg, EBM_ENULL, "%s is NULL", name);
    }
    if (ld < width || ld > EBM__BLAS_MAX) {
        return ebm__fail(msg, EBM_ESHAPE, "the row stride of %s is %lld; it must be from %lld to %lld",
                         name, (long long)ld, (long long)width, (long long)EBM__BLAS_MAX);
    }
    int64_t span;
    if (ebm__mul_overflow(n - 1, ld, &span) || span > INT64_MAX - width) {
        return ebm__fail(msg, EBM_ESHAPE, "%s: %lld rows of stride %lld overflow", name,
                         (long long)n, (long long)ld);
    }
    return EBM_OK;
}

/* Whether v may stand at unit j of layer l (binary: 0 or 1; spin: -1 or +1;
 * else finite): EBM_OK, or EBM_EVALUE naming row r, the unit and the domain. */
static int check_value(const ebm_model_t *m, ebm__msg *msg, const char *name, int64_t l, int64_t r,
                       int64_t j, float v)
{
    int ok;
    switch (m->units[l]) {
    case EBM_UNITS_BINARY: ok = v == 0.0f || v == 1.0f; break;
    case EBM_UNITS_SPIN: ok = v == -1.0f || v == 1.0f; break;
    default: ok = isfinite(v); break;
    }
    if (ok) {
        return EBM_OK;
    }
    static const char *const domain[] = {"binary units take 0 or 1", "spin units take -1 or +1",
                                         "Gaussian units take finite values", "",
                                         "dReLU units take finite values"};
    return ebm__fail(msg, EBM_EVALUE, "%s: row %lld, unit %lld (layer %lld, unit %lld) is %g; %s",
                     name, (long long)r, (long long)(m->column[l] + j), (long long)l, (long long)j,
                     (double)v, domain[m->units[l]]);
}

/* Every site of Potts layer l in row r of the caller's matrix holds one 1
 * and q - 1 zeros; col0 is the layer's first column in the caller's row. */
static int check_sites(const ebm_model_t *m, ebm__msg *msg, const char *name, int64_t l,
                       int64_t r, int64_t col0, const float *xl)
{
    const int64_t q = m->categories[l];
    for (int64_t i = 0; i < m->size[l]; i += q) {
        int64_t ones = 0, bad = -1;
        for (int64_t k = 0; k < q; k++) {
            ones += xl[i + k] == 1.0f;
            bad = bad < 0 && xl[i + k] != 0.0f && xl[i + k] != 1.0f ? k : bad;
        }
        if (bad >= 0) {
            return ebm__fail(msg, EBM_EVALUE,
                             "%s: row %lld, unit %lld (layer %lld, site %lld, category %lld) is "
                             "%g; Potts units take 0 or 1",
                             name, (long long)r, (long long)(col0 + i + bad), (long long)l,
                             (long long)(i / q), (long long)bad, (double)xl[i + bad]);
        }
        if (ones != 1) {
            return ebm__fail(msg, EBM_EVALUE,
                             "%s: row %lld, units %lld to %lld (layer %lld, site %lld) hold %lld "
                             "ones; a Potts site holds exactly one",
                             name, (long long)r, (long long)(col0 + i),
                             (long long)(col0 + i + q - 1), (long long)l, (long long)(i / q),
                             (long long)ones);
        }
    }
    return EBM_OK;
}

int ebm__check_states(const ebm_model_t *m, ebm__msg *msg, const char *name, uint32_t layer_mask,
                      int64_t n, const float *x, int64_t ldx)
{
    for (int64_t r = 0; r < n; r++) {
        const float *row = x + r * ldx;
        for (int64_t l = 0; l < m->n_layers; l++) {
            if (!(layer_mask >> l & 1u)) {
                continue;
            }
            const float *xl = row + m->column[l];
            if (ebm__is_potts(m, l)) {
                EBM__PROPAGATE(check_sites(m, msg, name, l, r, m->column[l], xl));
                continue;
            }
            if (ebm__kern()->values_ok(m->size[l], xl, m->units[l])) {
                continue;
            }
            for (int64_t j = 0; j < m->size[l]; j++) {
                EBM__PROPAGATE(check_value(m, msg, name, l, r, j, xl[j]));
            }
        }
    }
    return EBM_OK;
}

int ebm__check_layer_values(const ebm_model_t *m, ebm__msg *msg, const char *name, int64_t l,
                            int64_t n, const float *xl, int64_t ld)
{
    int rc = ebm__check_matrix(msg, name, n, xl, ld, m->size[l]);
    for (int64_t r = 0; r < n && rc == EBM_OK; r++) {
        if (ebm__is_potts(m, l)) {
            rc = check_sites(m, msg, name, l, r, 0, xl + r * ld);
            continue;
        }
        if (ebm__kern()->values_ok(m->size[l], xl + r * ld, m->units[l])) {
            continue;
        }
        for (int64_t j = 0; j < m->size[l] && rc == EBM_OK; j++) {
            rc = check_value(m, msg, name, l, r, j, xl[r * ld + j]);
        }
    }
    return rc;
}

int ebm__check_sum_out(const ebm_model_t *m, ebm__msg *msg, uint32_t sum_out)
{
    if (sum_out & ~ebm__all_layers(m)) {
        return ebm__fail(msg, EBM_EVALUE, "sum_out is 0x%x; the model has layers 0 .. %lld only",
                         (unsigned)sum_out, (long long)(m->n_layers - 1));
    }
    if (sum_out & (sum_out >> 1)) {
        unsigned both = sum_out & (sum_out >> 1);
        int l = 0;
        while (!(both >> l & 1u)) {
            l++;
        }
        return ebm__fail(msg, EBM_EVALUE,
                         "sum_out is 0x%x: layers %d and %d are adjacent; summed-out layers must "
                         "be pairwise non-adjacent",
                         (unsigned)sum_out, l, l + 1);
    }
    return EBM_OK;
}

int ebm__check_clamp(const ebm_model_t *m, ebm__msg *msg, int64_t n, const uint8_t *clamp,
                     int64_t ldc)
{
    if (clamp == NULL || n == 0) {
        return EBM_OK;
    }
    const int64_t rows = ldc == 0 ? 1 : n;
    EBM__PROPAGATE(ldc == 0 ? EBM_OK : ebm__check_matrix(msg, "clamp", n, clamp, ldc, m->width));
    /* A Potts site is clamped whole or not at all. */
    for (int64_t r = 0; ebm__is_potts(m, 0) && r < rows; r++) {
        const uint8_t *c = clamp + r * ldc;
        const int64_t q = m->categories[0];
        for (int64_t i = 0; i < m->size[0]; i += q) {
            for (int64_t k = 1; k < q; k++) {
                if ((c[i + k] != 0) != (c[i] != 0)) {
                    return ebm__fail(msg, EBM_EVALUE,
                                     "clamp: row %lld clamps part of site %lld of layer 0 (units "
                                     "%lld to %lld); a Potts site is clamped whole or not at all",
                                     (long long)r, (long long)(i / q), (long long)i,
                                     (long long)(i + q - 1));
                }
            }
        }
    }
    return EBM_OK;
}

int ebm__check_layer(const ebm_model_t *m, ebm__msg *msg, const char *name, int64_t l, int64_t lo)
{
    if (l < lo || l >= m->n_layers) {
        return ebm__fail(msg, EBM_ESHAPE, "%s is %lld; it must be from %lld to %lld", name,
                         (long long)l, (long long)lo, (long long)(m->n_layers - 1));
    }
    return EBM_OK;
}
