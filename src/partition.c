/* Exact log partition function and exact log-likelihood by enumerating one
 * parity class of layers and summing the other out analytically. */
#include "ebm_internal.h"

#include <stdlib.h>
#include <string.h>

/* Largest enumeration: 2^32 states for log Z, 2^24 per row for log p(v). */
#define LOGZ_MAX_BITS 32
#define LL_MAX_BITS 24

static int64_t class_bits(const ebm_model_t *m, uint32_t mask)
{
    int64_t bits = 0;
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (mask >> l & 1u) {
            bits += m->size[l];
        }
    }
    return bits;
}

/* Scratch for enumerate(): a chunk of states, their free energies, and the
 * free-energy work space. */
typedef struct enum_work {
    float *state;
    double *f;
    double *fe_work;
} enum_work;

static int enum_work_alloc(const ebm_model_t *m, enum_work *ew, ebm__msg *msg)
{
    ew->state = calloc((size_t)(EBM__CHUNK * m->width), sizeof *ew->state);
    ew->f = malloc(EBM__CHUNK * sizeof *ew->f);
    ew->fe_work = malloc((size_t)ebm__free_energy_scratch(m, EBM__CHUNK) * sizeof *ew->fe_work);
    if (ew->state == NULL || ew->f == NULL || ew->fe_work == NULL) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for the enumeration");
    }
    return EBM_OK;
}

static void enum_work_free(enum_work *ew)
{
    free(ew->state);
    free(ew->f);
    free(ew->fe_work);
}

/*
 * log sum over all configurations of the layers in enum_mask of
 * exp(-F_{sum_mask}(x)), with layer 0 set to v when v is not NULL. Chunks of
 * EBM__CHUNK states; each chunk's sum is taken relative to its own maximum
 * and merged into a running (max, sum) pair, so nothing overflows.
 */
static double enumerate(const ebm_model_t *m, uint32_t enum_mask, uint32_t sum_mask,
                        const float *v, enum_work *ew)
{
    const int64_t w = m->width;
    const uint64_t total = UINT64_C(1) << class_bits(m, enum_mask);
    if (v != NULL) {
        for (int64_t r = 0; r < EBM__CHUNK; r++) {
            memcpy(ew->state + r * w, v, (size_t)m->size[0] * sizeof *v);
        }
    }
    double run_max = -INFINITY, run_sum = 0.0;
    for (uint64_t k0 = 0; k0 < total; k0 += EBM__CHUNK) {
        int64_t rows = total - k0 < EBM__CHUNK ? (int64_t)(total - k0) : EBM__CHUNK;
        for (int64_t r = 0; r < rows; r++) {
            uint64_t k = k0 + (uint64_t)r;
            int bit = 0;
            for (int64_t l = 0; l < m->n_layers; l++) {
                if (!(enum_mask >> l & 1u)) {
                    continue;
                }
                float *xl = ew->state + r * w + m->offset[l];
                float low = m->units[l] == EBM_UNITS_SPIN ? -1.0f : 0.0f;
                for (int64_t j = 0; j < m->size[l]; j++, bit++) {
                    xl[j] = (k >> bit & 1u) ? 1.0f : low;
                }
            }
        }
        ebm__free_energy_chunk(m, sum_mask, rows, ew->state, w, ew->f, ew->fe_work);
        double cmax = -INFINITY;
        for (int64_t r = 0; r < rows; r++) {
            cmax = -ew->f[r] > cmax ? -ew->f[r] : cmax;
        }
        double csum = 0.0;
        for (int64_t r = 0; r < rows; r++) {
            csum += exp(-ew->f[r] - cmax);
        }
        if (cmax > run_max) {
            run_sum = run_sum * exp(run_max - cmax) + csum;
            run_max = cmax;
        } else {
            run_sum += csum * exp(cmax - run_max);
        }
    }
    return run_max + log(run_sum);
}

static uint32_t parity_mask(const ebm_model_t *m, int parity)
{
    uint32_t mask = 0;
    for (int64_t l = parity; l < m->n_layers; l += 2) {
        mask |= 1u << l;
    }
    return mask;
}

int ebm_model_log_partition_exact(const ebm_model_t *m, double *log_z)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    if (log_z == NULL) {
        return ebm__model_set_error(m, ebm__fail(&msg, EBM_ENULL, "log_z is NULL"), &msg);
    }
    uint32_t even = parity_mask(m, 0), odd = parity_mask(m, 1);
    /* A Gaussian layer cannot be enumerated: it is always integrated out. */
    uint32_t enum_mask = odd;
    if (!ebm__is_gaussian(m, 0) && class_bits(m, even) < class_bits(m, odd)) {
        enum_mask = even;
    }
    int64_t bits = class_bits(m, enum_mask);
    if (bits > LOGZ_MAX_BITS) {
        return ebm__model_set_error(
            m,
            ebm__fail(&msg, EBM_ELIMIT,
                      "exact log Z would enumerate 2^%lld states (the %s layers); the limit is "
                      "2^%d: use AIS",
                      (long long)bits, enum_mask == even ? "even" : "odd", LOGZ_MAX_BITS),
            &msg);
    }
    enum_work ew;
    int rc = enum_work_alloc(m, &ew, &msg);
    if (rc == EBM_OK) {
        *log_z = enumerate(m, enum_mask, ebm__all_layers(m) & ~enum_mask, NULL, &ew);
    }
    enum_work_free(&ew);
    return rc == EBM_OK ? rc : ebm__model_set_error(m, rc, &msg);
}

int ebm_model_log_likelihood(const ebm_model_t *m, double log_z, int64_t n, const float *data,
                             int64_t ldd, double *ll)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = EBM_OK;
    if (!isfinite(log_z)) {
        rc = ebm__fail(&msg, EBM_EVALUE, "log_z is %g; it must be finite", log_z);
    }
    if (rc == EBM_OK) {
        rc = ebm__check_layer_values(m, &msg, "data", 0, n, data, ldd);
    }
    if (rc == EBM_OK && n > 0 && ll == NULL) {
        rc = ebm__fail(&msg, EBM_ENULL, "ll is NULL");
    }
    /* Enumerate the smaller hidden parity class, sum out the other. */
    uint32_t odd = parity_mask(m, 1), even_hidden = parity_mask(m, 0) & ~1u;
    uint32_t enum_mask = class_bits(m, even_hidden) < class_bits(m, odd) ? even_hidden : odd;
    if (m->n_layers == 2) {
        enum_mask = 0; /* RBM, GRBM: the visible free energy in closed form */
    }
    int64_t bits = class_bits(m, enum_mask);
    if (rc == EBM_OK && bits > LL_MAX_BITS) {
        rc = ebm__fail(&msg, EBM_ELIMIT,
                       "exact log p(v) would enumerate 2^%lld hidden states per row; the limit "
                       "is 2^%d",
                       (long long)bits, LL_MAX_BITS);
    }
    enum_work ew = {0};
    if (rc == EBM_OK && n > 0) {
        rc = enum_work_alloc(m, &ew, &msg);
    }
    if (rc != EBM_OK) {
        enum_work_free(&ew);
        return ebm__model_set_error(m, rc, &msg);
    }
    uint32_t sum_mask = ebm__all_layers(m) & ~enum_mask & ~1u;
    if (enum_mask == 0) {
        /* Nothing to enumerate: whole chunks of rows at once. */
        for (int64_t r0 = 0; r0 < n; r0 += EBM__CHUNK) {
            int64_t rows = n - r0 < EBM__CHUNK ? n - r0 : EBM__CHUNK;
            for (int64_t r = 0; r < rows; r++) {
                memcpy(ew.state + r * m->width, data + (r0 + r) * ldd,
                       (size_t)m->size[0] * sizeof *data);
            }
            ebm__free_energy_chunk(m, sum_mask, rows, ew.state, m->width, ew.f, ew.fe_work);
            for (int64_t r = 0; r < rows; r++) {
                ll[r0 + r] = -ew.f[r] - log_z;
            }
        }
    }
    for (int64_t r = 0; r < n && enum_mask != 0; r++) {
        ll[r] = enumerate(m, enum_mask, sum_mask, data + r * ldd, &ew) - log_z;
    }
    enum_work_free(&ew);
    return EBM_OK;
}
