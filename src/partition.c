/* Exact evaluation by enumeration: log Z, and log p(v) of data rows,
 * enumerating one parity class of layers (the smaller one a Gaussian or
 * dReLU layer allows) and summing the other out analytically. Also the
 * helpers the other estimates share (partition.h). AIS: ais.c; the
 * mean-field bound and the importance-sampled log p(v): likelihood.c. */
#include "error.h"
#include "model.h"
#include "energy.h"
#include "partition.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest enumeration: 2^32 states for log Z, 2^24 per row for log p(v). */
#define LOGZ_MAX_BITS 32
#define LL_MAX_BITS 24

/* log2 of the number of configurations (contract in partition.h). */
double ebm__class_bits(const ebm_model_t *m, uint32_t mask)
{
    double bits = 0.0;
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (mask >> l & 1u) {
            const int64_t q = m->categories[l];
            bits += q > 1 ? (double)(m->size[l] / q) * log2((double)q) : (double)m->size[l];
        }
    }
    return bits;
}

/* The number of configurations, when class_bits is at most 32. */
static uint64_t class_count(const ebm_model_t *m, uint32_t mask)
{
    uint64_t count = 1;
    for (int64_t l = 0; l < m->n_layers; l++) {
        const int64_t q = m->categories[l];
        for (int64_t i = 0; (mask >> l & 1u) && i < m->size[l]; i += q) {
            count *= q > 1 ? (uint64_t)q : 2u;
        }
    }
    return count;
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
    const uint64_t total = class_count(m, enum_mask);
    if (v != NULL) {
        for (int64_t r = 0; r < EBM__CHUNK; r++) {
            memcpy(ew->state + r * w, v, (size_t)m->size[0] * sizeof *v);
        }
    }
    double run_max = -INFINITY, run_sum = 0.0;
    for (uint64_t k0 = 0; k0 < total; k0 += EBM__CHUNK) {
        int64_t rows = total - k0 < EBM__CHUNK ? (int64_t)(total - k0) : EBM__CHUNK;
        for (int64_t r = 0; r < rows; r++) {
            /* Configuration k in mixed radix: a digit of 2 per unit, of q
             * per Potts site, the first unit's lowest. */
            uint64_t k = k0 + (uint64_t)r;
            for (int64_t l = 0; l < m->n_layers; l++) {
                if (!(enum_mask >> l & 1u)) {
                    continue;
                }
                float *xl = ew->state + r * w + m->column[l];
                const int64_t q = m->categories[l];
                if (q > 1) {
                    for (int64_t i = 0; i < m->size[l]; i += q, k /= (uint64_t)q) {
                        for (int64_t c = 0; c < q; c++) {
                            xl[i + c] = (uint64_t)c == k % (uint64_t)q ? 1.0f : 0.0f;
                        }
                    }
                    continue;
                }
                float low = m->units[l] == EBM_UNITS_SPIN ? -1.0f : 0.0f;
                for (int64_t j = 0; j < m->size[l]; j++, k >>= 1) {
                    xl[j] = (k & 1u) ? 1.0f : low;
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

/* The layers of one parity (contract in partition.h). */
uint32_t ebm__parity_mask(const ebm_model_t *m, int parity)
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
        return ebm__model_error(m, EBM_ENULL, "log_z is NULL");
    }
    uint32_t even = ebm__parity_mask(m, 0), odd = ebm__parity_mask(m, 1);
    /* A Gaussian layer or a dReLU layer (layer 1) cannot be enumerated: it
     * is always integrated out. */
    uint32_t enum_mask = odd;
    if (!ebm__is_gaussian(m, 0) &&
        (ebm__is_drelu(m, 1) || ebm__class_bits(m, even) < ebm__class_bits(m, odd))) {
        enum_mask = even;
    }
    const double bits = ebm__class_bits(m, enum_mask);
    if (bits > LOGZ_MAX_BITS + 1e-9) {
        return ebm__model_error(
            m, EBM_ELIMIT,
            "exact log Z would enumerate 2^%.4g states (the %s layers); the limit is "
            "2^%d: use AIS", bits, enum_mask == even ? "even" : "odd", LOGZ_MAX_BITS);
    }
    enum_work ew;
    int rc = enum_work_alloc(m, &ew, &msg);
    if (rc == EBM_OK) {
        *log_z = enumerate(m, enum_mask, ebm__all_layers(m) & ~enum_mask, NULL, &ew);
    }
    enum_work_free(&ew);
    return rc == EBM_OK ? rc : ebm__model_set_error(m, rc, &msg);
}

/* Checks shared by the log-likelihood calls (contract in partition.h). */
int ebm__check_ll_args(const ebm_model_t *m, ebm__msg *msg, double log_z, int64_t n,
                       const float *data, int64_t ldd, const double *ll)
{
    if (!isfinite(log_z)) {
        return ebm__fail(msg, EBM_EVALUE, "log_z is %g; it must be finite", log_z);
    }
    int rc = ebm__check_layer_values(m, msg, "data", 0, n, data, ldd);
    if (rc == EBM_OK && n > 0 && ll == NULL) {
        rc = ebm__fail(msg, EBM_ENULL, "ll is NULL");
    }
    return rc;
}

int ebm_model_log_likelihood(const ebm_model_t *m, double log_z, int64_t n, const float *data,
                             int64_t ldd, double *ll)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = ebm__check_ll_args(m, &msg, log_z, n, data, ldd, ll);
    /* Enumerate the smaller hidden parity class, sum out the other. */
    uint32_t odd = ebm__parity_mask(m, 1), even_hidden = ebm__parity_mask(m, 0) & ~1u;
    uint32_t enum_mask =
        ebm__class_bits(m, even_hidden) < ebm__class_bits(m, odd) ? even_hidden : odd;
    if (m->n_layers == 2) {
        enum_mask = 0; /* RBM, GRBM: the visible free energy in closed form */
    }
    const double bits = ebm__class_bits(m, enum_mask);
    if (rc == EBM_OK && n > 0 && bits > LL_MAX_BITS + 1e-9) { /* n = 0 does nothing */
        rc = ebm__fail(&msg, EBM_ELIMIT,
                       "exact log p(v) would enumerate 2^%.4g hidden states per row; the limit "
                       "is 2^%d",
                       bits, LL_MAX_BITS);
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
