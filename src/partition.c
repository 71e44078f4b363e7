/* Exact log partition function and exact log-likelihood by enumerating one
 * parity class of layers and summing the other out analytically. */
#include "error.h"
#include "model.h"
#include "rng.h"
#include "energy.h"
#include "drelu.h"
#include "conditional.h"
#include "numerics.h"
#include "search.h"

#include <stdlib.h>
#include <string.h>

static const double LOG_2PI = 1.8378770664093454836;
static const double LN2 = 0.69314718055994530942;

/* Largest enumeration: 2^32 states for log Z, 2^24 per row for log p(v). */
#define LOGZ_MAX_BITS 32
#define LL_MAX_BITS 24

/* log2 of the number of configurations of the layers in mask: a unit has
 * 2 values, a Potts site q. */
static double class_bits(const ebm_model_t *m, uint32_t mask)
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
                float *xl = ew->state + r * w + m->offset[l];
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
    /* A Gaussian layer or a dReLU layer (layer 1) cannot be enumerated: it
     * is always integrated out. */
    uint32_t enum_mask = odd;
    if (!ebm__is_gaussian(m, 0) &&
        (ebm__is_drelu(m, 1) || class_bits(m, even) < class_bits(m, odd))) {
        enum_mask = even;
    }
    const double bits = class_bits(m, enum_mask);
    if (bits > LOGZ_MAX_BITS + 1e-9) {
        return ebm__model_set_error(
            m,
            ebm__fail(&msg, EBM_ELIMIT,
                      "exact log Z would enumerate 2^%.4g states (the %s layers); the limit is "
                      "2^%d: use AIS",
                      bits, enum_mask == even ? "even" : "odd", LOGZ_MAX_BITS),
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

/* Checks shared by the two log-likelihood calls. */
static int check_ll_args(const ebm_model_t *m, ebm__msg *msg, double log_z, int64_t n,
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
    int rc = check_ll_args(m, &msg, log_z, n, data, ldd, ll);
    /* Enumerate the smaller hidden parity class, sum out the other. */
    uint32_t odd = parity_mask(m, 1), even_hidden = parity_mask(m, 0) & ~1u;
    uint32_t enum_mask = class_bits(m, even_hidden) < class_bits(m, odd) ? even_hidden : odd;
    if (m->n_layers == 2) {
        enum_mask = 0; /* RBM, GRBM: the visible free energy in closed form */
    }
    const double bits = class_bits(m, enum_mask);
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

/* ---- annealed importance sampling -------------------------------------- */

/* beta_k, k = 1..K, of the documented schedule: uniform steps on [0, 0.5]
 * for the first 10% of k, on [0.5, 0.9] for the next 30%, on [0.9, 1] for
 * the rest. */
static double ais_beta(int64_t k, int64_t K)
{
    const double edge[4] = {0.0, 0.5, 0.9, 1.0};
    const double frac[4] = {0.0, 0.1, 0.4, 1.0};
    double u = (double)k / (double)K;
    for (int seg = 0; seg < 3; seg++) {
        if (u <= frac[seg + 1]) {
            double t = (u - frac[seg]) / (frac[seg + 1] - frac[seg]);
            return edge[seg] + t * (edge[seg + 1] - edge[seg]);
        }
    }
    return 1.0;
}

/* log of the per-unit partition sum of a summed-out unit at input t. */
static double unit_log_sum(int units, double t)
{
    return units == EBM_UNITS_SPIN ? ebm__log2cosh(t) : ebm__softplus(t);
}

/* The same for unit j of layer l, also dReLU units: the log of the integral
 * of exp(-S(h) + t h), S(h) = gp (h+)^2 / 2 + gn (h-)^2 / 2 - D |h| (its
 * self-energy, untempered on the AIS path). */
static double layer_unit_log_sum(const ebm_model_t *m, int64_t l, int64_t j, double t)
{
    if (!ebm__is_drelu(m, l)) {
        return unit_log_sum(m->units[l], t);
    }
    double gp, gn, d;
    ebm__drelu_shape(m, j, &gp, &gn, &d);
    return -ebm__drelu_free(gp, gn, t + d, t - d);
}

int ebm_model_log_partition_ais(const ebm_model_t *m, ebm_rng_t *rng, int64_t n_chains,
                                int64_t n_betas, double *log_z, double *std_err)
{
    return ebm_model_log_partition_ais_base(m, rng, n_chains, n_betas, NULL, log_z, std_err);
}

int ebm_model_log_partition_ais_base(const ebm_model_t *m, ebm_rng_t *rng, int64_t n_chains,
                                     int64_t n_betas, const float *base, double *log_z,
                                     double *std_err)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = EBM_OK;
    if (rng == NULL || log_z == NULL) {
        rc = ebm__fail(&msg, EBM_ENULL, "%s is NULL", rng == NULL ? "rng" : "log_z");
    } else if (n_chains < 2 || n_chains > EBM__BLAS_MAX) {
        rc = ebm__fail(&msg, EBM_ESHAPE, "n_chains is %lld; AIS needs 2 to %lld chains",
                       (long long)n_chains, (long long)EBM__BLAS_MAX);
    } else if (n_betas < 1 || n_betas > INT32_MAX) {
        rc = ebm__fail(&msg, EBM_ESHAPE, "n_betas is %lld; it must be from 1 to %d",
                       (long long)n_betas, INT32_MAX);
    } else if (base != NULL && ebm__is_gaussian(m, 0)) {
        rc = ebm__fail(&msg, EBM_EUNSUPPORTED,
                       "base is not NULL, but the visible layer is Gaussian: its base is "
                       "N(mu, sigma^2) already (pass NULL)");
    }
    for (int64_t i = 0; rc == EBM_OK && base != NULL && i < m->size[0]; i++) {
        if (!(fabsf(base[i]) <= 1e4f)) {
            rc = ebm__fail(&msg, EBM_EVALUE, "base[%lld] is %g; base biases must be finite, "
                           "within +-1e4", (long long)i, (double)base[i]);
        }
    }
    if (rc != EBM_OK) {
        return ebm__model_set_error(m, rc, &msg);
    }
    const int64_t n = n_chains, w = m->width;
    float *x = malloc((size_t)(n * w + n * m->max_size + w) * sizeof *x);
    double *lw = calloc((size_t)n, sizeof *lw);
    if (x == NULL || lw == NULL) {
        free(x);
        free(lw);
        return ebm__model_set_error(m, ebm__fail(&msg, EBM_ENOMEM, "out of memory for AIS"), &msg);
    }
    float *a = x + n * w, *draw = a + n * m->max_size;

    /* p_0: uniform discrete units, N(mu, sigma^2) Gaussian units, dReLU
     * units by their self-energy alone; with a base, independent visible
     * units with input base[i]. */
    double log_z0 = 0.0;
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (ebm__is_gaussian(m, l)) {
            for (int64_t i = 0; i < m->size[l]; i++) {
                log_z0 += 0.5 * (LOG_2PI + m->params_d[m->logvar_off + i]);
            }
        } else if (l == 0 && base != NULL && ebm__is_potts(m, 0)) {
            for (int64_t i = 0; i < m->size[0]; i += m->categories[0]) {
                log_z0 += ebm__site_lse(m->categories[0], base + i);
            }
        } else if (l == 0 && base != NULL) {
            for (int64_t i = 0; i < m->size[0]; i++) {
                log_z0 += unit_log_sum(m->units[0], (double)base[i]);
            }
        } else if (ebm__is_potts(m, l)) {
            log_z0 += (double)(m->size[l] / m->categories[l]) * log((double)m->categories[l]);
        } else if (ebm__is_drelu(m, l)) {
            for (int64_t j = 0; j < m->size[l]; j++) {
                log_z0 += layer_unit_log_sum(m, l, j, 0.0);
            }
        } else {
            log_z0 += (double)m->size[l] * log(2.0);
        }
    }
    const ebm__rng_mark rng_saved = ebm__rng_save(rng);
    ebm__stream st = ebm__rng_take_stream(rng);
    ebm__random_units(m, &st, NULL, n, x, w, ebm__all_layers(m), NULL, 0, draw);
    const int64_t n0 = m->size[0];
    if (base != NULL) {
        ebm__stream st0 = ebm__rng_take_stream(rng);
        for (int64_t r = 0; r < n; r++) {
            memcpy(a + r * n0, base, (size_t)n0 * sizeof *a);
        }
        ebm__sample_from_input(m, 0, &st0, NULL, 0, n, a, n0, x, w);
    }
    if (ebm__is_gaussian(m, 0)) {
        const float *mu = m->params + m->b_off[0], *logvar = m->params + m->logvar_off;
        for (int64_t r = 0; r < n; r++) {
            for (int64_t i = 0; i < m->size[0]; i++) {
                x[r * w + i] = mu[i] + expf(0.5f * logvar[i]) * x[r * w + i];
            }
        }
    }

    double beta_prev = 0.0;
    for (int64_t k = 1; k <= n_betas; k++) {
        const double beta = ais_beta(k, n_betas);
        /* Weights: log p*_beta(x) - log p*_beta_prev(x) at the current even
         * layers, odd layers summed out: the discrete even biases give
         * (beta - beta_prev) b.x (with a base, (beta - beta_prev) (b -
         * base).x for the visible layer), the odd layers their log-sums. */
        for (int64_t l = 0; l < m->n_layers; l += 2) {
            if (ebm__is_gaussian(m, l)) {
                continue; /* its quadratic term does not depend on beta */
            }
            const double *b = m->bias_d + m->offset[l];
            const float *b0 = l == 0 ? base : NULL;
            for (int64_t r = 0; r < n; r++) {
                const float *xl = x + r * w + m->offset[l];
                double s = 0.0;
                for (int64_t j = 0; j < m->size[l]; j++) {
                    s += (b[j] - (b0 != NULL ? (double)b0[j] : 0.0)) * xl[j];
                }
                lw[r] += (beta - beta_prev) * s;
            }
        }
        ebm__stream sweep[EBM_MAX_LAYERS];
        ebm__rng_take_streams(rng, (int)m->n_layers, sweep);
        for (int64_t l = 1; l < m->n_layers; l += 2) {
            const int64_t nl = m->size[l];
            ebm__layer_input(m, l, n, x, w, a, nl);
            for (int64_t r = 0; r < n; r++) {
                double s = 0.0;
                for (int64_t j = 0; j < nl; j++) {
                    double t = a[r * nl + j];
                    s += layer_unit_log_sum(m, l, j, beta * t) -
                         layer_unit_log_sum(m, l, j, beta_prev * t);
                }
                lw[r] += s;
            }
            /* The transition at beta: the odd layers given the even ones ... */
            ebm__temper_input(m, l, n, a, nl, &beta, 1);
            ebm__sample_from_input(m, l, &sweep[l], NULL, 0, n, a, nl, x + m->offset[l], w);
        }
        /* ... then the even layers given the odd ones (the visible layer
         * with (1 - beta) base added to its input). */
        for (int64_t l = 0; l < m->n_layers; l += 2) {
            const int64_t nl = m->size[l];
            ebm__layer_input(m, l, n, x, w, a, nl);
            ebm__temper_input(m, l, n, a, nl, &beta, 1);
            for (int64_t r = 0; l == 0 && base != NULL && beta < 1.0 && r < n; r++) {
                for (int64_t j = 0; j < nl; j++) {
                    a[r * nl + j] = (float)((double)a[r * nl + j] + (1.0 - beta) * base[j]);
                }
            }
            ebm__sample_from_input(m, l, &sweep[l], NULL, 0, n, a, nl, x + m->offset[l], w);
        }
        beta_prev = beta;
    }
    /* log Z = log Z_0 + log mean(w); the standard error by the delta method. */
    double lmax = -INFINITY;
    for (int64_t r = 0; r < n; r++) {
        lmax = lw[r] > lmax ? lw[r] : lmax;
    }
    double mean = 0.0, sq = 0.0;
    for (int64_t r = 0; r < n; r++) {
        double wr = exp(lw[r] - lmax);
        mean += wr;
        sq += wr * wr;
    }
    mean /= (double)n;
    double var = (sq / (double)n - mean * mean) * (double)n / (double)(n - 1);
    free(x);
    free(lw);
    /* The path ends at exp(-E + c) (c: the centring constant, not in
     * the weights). */
    const double z = log_z0 + lmax + log(mean) - m->shift;
    const double se = sqrt(var > 0 ? var : 0.0) / (mean * sqrt((double)n));
    if (!isfinite(z) || !isfinite(se)) {
        ebm__rng_restore(rng, &rng_saved);
        return ebm__model_set_error(
            m,
            ebm__fail(&msg, EBM_EVALUE,
                      "AIS importance weights are not finite (the parameters are too large for "
                      "the annealing path); log_z and rng are unchanged"),
            &msg);
    }
    *log_z = z;
    if (std_err != NULL) {
        *std_err = se;
    }
    return EBM_OK;
}

/* ---- mean-field lower bound -------------------------------------------- */

/* Entropy of a factorised unit with mean q of x (binary: P(1) = q; spin:
 * P(+1) = (1 + q)/2). */
static double unit_entropy(int units, double q)
{
    double p = units == EBM_UNITS_SPIN ? 0.5 * (1.0 + q) : q;
    double h = 0.0;
    if (p > 0.0) {
        h -= p * log(p);
    }
    if (p < 1.0) {
        h -= (1.0 - p) * log1p(-p);
    }
    return h;
}

/* The mean-field posterior of each data row, the bound's Q and the IS
 * estimate's proposal: v clamped, the hidden units started at the uniform
 * law's means, 200 iterations at most, tolerance 1e-7. mu: n x width;
 * clamp: width bytes of scratch. */
static int posterior_means(const ebm_model_t *m, ebm__msg *msg, int64_t n, const float *data,
                           int64_t ldd, float *mu, uint8_t *clamp)
{
    const int64_t w = m->width;
    memset(clamp, 0, (size_t)w);
    memset(clamp, 1, (size_t)m->size[0]);
    for (int64_t r = 0; r < n; r++) {
        float *row = mu + r * w;
        memcpy(row, data + r * ldd, (size_t)m->size[0] * sizeof *row);
        for (int64_t k = m->size[0]; k < w; k++) {
            row[k] = m->units[1] == EBM_UNITS_SPIN ? 0.0f : 0.5f;
        }
    }
    const int rc = ebm__mean_field(m, msg, n, mu, w, clamp, 0, 200, 1e-7);
    return rc >= 0 ? EBM_OK : rc;
}

int ebm_model_log_likelihood_bound(const ebm_model_t *m, double log_z, int64_t n,
                                   const float *data, int64_t ldd, double *ll)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = check_ll_args(m, &msg, log_z, n, data, ldd, ll);
    if (rc == EBM_OK && ebm__is_drelu(m, 1)) {
        rc = ebm__fail(&msg, EBM_EUNSUPPORTED,
                       "the mean-field bound is not supported for dReLU hidden units; an RBM's "
                       "log p(v) is exact: ebm_model_log_likelihood");
    }
    if (rc != EBM_OK) {
        return ebm__model_set_error(m, rc, &msg);
    }
    if (n == 0) {
        return EBM_OK;
    }
    const int64_t w = m->width;
    float *mu = malloc((size_t)(n * w) * sizeof *mu);
    uint8_t *clamp = malloc((size_t)w);
    double *work = malloc((size_t)ebm__free_energy_scratch(m, EBM__CHUNK) * sizeof *work);
    double *e = malloc((size_t)n * sizeof *e);
    if (mu == NULL || clamp == NULL || work == NULL || e == NULL) {
        free(mu);
        free(clamp);
        free(work);
        free(e);
        return ebm__model_set_error(m, ebm__fail(&msg, EBM_ENOMEM, "out of memory"), &msg);
    }
    rc = posterior_means(m, &msg, n, data, ldd, mu, clamp);
    if (rc == EBM_OK) {
        for (int64_t r0 = 0; r0 < n; r0 += EBM__CHUNK) {
            int64_t rows = n - r0 < EBM__CHUNK ? n - r0 : EBM__CHUNK;
            ebm__free_energy_chunk(m, 0, rows, mu + r0 * w, w, e + r0, work);
        }
        for (int64_t r = 0; r < n && rc == EBM_OK; r++) {
            double h = 0.0;
            for (int64_t k = m->size[0]; k < w; k++) {
                h += unit_entropy(m->units[1], mu[r * w + k]);
            }
            e[r] = -e[r] + h - log_z;
            if (!isfinite(e[r])) {
                rc = ebm__fail(&msg, EBM_EVALUE,
                               "the bound of row %lld is not finite (%g): the parameters are too "
                               "large, or log_z (%g) is not finite; ll is unchanged",
                               (long long)r, e[r], log_z);
            }
        }
        if (rc == EBM_OK) {
            memcpy(ll, e, (size_t)n * sizeof *ll);
        }
    }
    free(mu);
    free(clamp);
    free(work);
    free(e);
    return rc == EBM_OK ? EBM_OK : ebm__model_set_error(m, rc, &msg);
}

/* ---- importance-sampled log p(v) for DBMs ------------------------------ */

/* The defensive mixture weight of the uniform component (Hesterberg 1995):
 * every importance weight is then at most p~(v, h) 2^m / EPS for m sampled
 * units, however far the mean-field posterior is from the true one. */
static const double IS_DEFENSIVE = 0.05;

/* The largest n_samples per row. */
#define IS_MAX_SAMPLES (INT64_C(1) << 30)

/* A row's stream holds 2^34 words; more would carry into the next row. */
#define IS_ROW_WORDS (INT64_C(1) << 34)

/* The probability with which "u < p" holds for the library's uniforms
 * u = k 2^-24, k uniform on 0 .. 2^24 - 1: ceil(p 2^24) 2^-24. The
 * proposal's density must be that of the draws, not p (a mean of 1e-10
 * turns a unit on with probability 2^-24). */
static double drawn_probability(double p)
{
    return p <= 0.0 ? 0.0 : p >= 1.0 ? 1.0 : ceil(p * 0x1p24) * 0x1p-24;
}

/* log(exp(a) + exp(b)) for a, b not both -inf. */
static double log_add(double a, double b)
{
    const double hi = a > b ? a : b, lo = a > b ? b : a;
    return lo == -INFINITY ? hi : hi + log1p(exp(lo - hi));
}

int ebm_model_log_likelihood_is(const ebm_model_t *m, ebm_rng_t *rng, double log_z,
                                int64_t n_samples, int64_t n, const float *data, int64_t ldd,
                                double *ll)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = rng == NULL ? ebm__fail(&msg, EBM_ENULL, "rng is NULL") : EBM_OK;
    if (rc == EBM_OK && (n_samples < 1 || n_samples > IS_MAX_SAMPLES)) {
        rc = ebm__fail(&msg, EBM_EVALUE, "n_samples is %lld; it takes 1 to 2^30",
                       (long long)n_samples);
    }
    if (rc == EBM_OK) {
        rc = check_ll_args(m, &msg, log_z, n, data, ldd, ll);
    }
    if (rc == EBM_OK && n > (int64_t)UINT32_MAX + 1) {
        rc = ebm__fail(&msg, EBM_ESHAPE, "n is %lld; at most 2^32 rows", (long long)n);
    }
    /* Sample the hidden parity class with fewer units, sum out the other. */
    const uint32_t odd = parity_mask(m, 1), even_hidden = parity_mask(m, 0) & ~1u;
    const uint32_t sampled =
        m->n_layers == 2 ? 0u : class_bits(m, even_hidden) < class_bits(m, odd) ? even_hidden : odd;
    const uint32_t summed = ebm__all_layers(m) & ~sampled & ~1u;
    const int64_t w = m->width, K = sampled != 0 ? n_samples : 1;
    int64_t units = 0; /* sampled units per state */
    for (int64_t l = 0; l < m->n_layers; l++) {
        units += sampled >> l & 1u ? m->size[l] : 0;
    }
    if (rc == EBM_OK && K > IS_ROW_WORDS / (units + 1)) {
        rc = ebm__fail(&msg, EBM_ELIMIT,
                       "n_samples is %lld; with %lld sampled units per state a row's stream "
                       "holds at most %lld",
                       (long long)n_samples, (long long)units,
                       (long long)(IS_ROW_WORDS / (units + 1)));
    }
    if (rc != EBM_OK) {
        return ebm__model_set_error(m, rc, &msg);
    }
    if (n == 0) {
        return EBM_OK; /* nothing drawn: rng does not move */
    }
    float *mu = malloc((size_t)(n * w) * sizeof *mu);
    uint8_t *clamp = malloc((size_t)w);
    float *x = calloc((size_t)(EBM__CHUNK * w), sizeof *x);
    float *u = malloc((size_t)(units + 1) * sizeof *u);
    double *f = malloc(EBM__CHUNK * sizeof *f), *lq = malloc(EBM__CHUNK * sizeof *lq);
    double *work = malloc((size_t)ebm__free_energy_scratch(m, EBM__CHUNK) * sizeof *work);
    double *acc = malloc((size_t)n * sizeof *acc);
    /* the current row's proposal factors: p, log p, log(1 - p) per unit */
    double *pq = malloc((size_t)(3 * (units > 0 ? units : 1)) * sizeof *pq);
    if (mu == NULL || clamp == NULL || x == NULL || u == NULL || f == NULL || lq == NULL ||
        work == NULL || acc == NULL || pq == NULL) {
        rc = ebm__fail(&msg, EBM_ENOMEM, "out of memory");
    }
    const ebm__rng_mark rng_saved = ebm__rng_save(rng);
    const ebm__stream st = ebm__rng_take_stream(rng);
    if (rc == EBM_OK && sampled != 0) {
        rc = posterior_means(m, &msg, n, data, ldd, mu, clamp); /* the proposal's factors */
    }
    /* States t = r K + k in chunks: row r's sample k draws units + 1
     * uniforms (the mixture's choice, then the units) from stream row r at
     * word k (units + 1). log w = -F_summed(v, h) - log q(h), with q the
     * law of the draws (drawn_probability). */
    const double eps = drawn_probability(IS_DEFENSIVE);
    const double log_eps = log(eps), log_keep = log1p(-eps);
    int64_t factors_row = -1;
    for (int64_t t0 = 0; rc == EBM_OK && t0 < n * K; t0 += EBM__CHUNK) {
        const int64_t count = n * K - t0 < EBM__CHUNK ? n * K - t0 : EBM__CHUNK;
        for (int64_t i = 0; i < count; i++) {
            const int64_t r = (t0 + i) / K, k = (t0 + i) % K;
            float *xs = x + i * w;
            memcpy(xs, data + r * ldd, (size_t)m->size[0] * sizeof *xs);
            ebm__stream_uniform(&st, (uint32_t)r, (uint64_t)k * (uint64_t)(units + 1), units + 1,
                                u);
            if (r != factors_row) { /* a row's K samples share its factors */
                for (int64_t l = 1, j = 0; l < m->n_layers; l++) {
                    const int spin = m->units[l] == EBM_UNITS_SPIN;
                    const float *ml = mu + r * w + m->offset[l];
                    for (int64_t a = 0; (sampled >> l & 1u) && a < m->size[l]; a++, j++) {
                        const double p =
                            drawn_probability(spin ? 0.5 * (1.0 + (double)ml[a]) : (double)ml[a]);
                        pq[3 * j] = p;
                        pq[3 * j + 1] = log(p);
                        pq[3 * j + 2] = log1p(-p);
                    }
                }
                factors_row = r;
            }
            const int uniform = (double)u[0] < eps;
            double log_qmf = 0.0;
            int64_t j = 0;
            for (int64_t l = 1; l < m->n_layers; l++) {
                if (!(sampled >> l & 1u)) {
                    continue;
                }
                const int spin = m->units[l] == EBM_UNITS_SPIN;
                float *hl = xs + m->offset[l];
                for (int64_t a = 0; a < m->size[l]; a++, j++) {
                    const int on = (double)u[j + 1] < (uniform ? 0.5 : pq[3 * j]);
                    hl[a] = on ? 1.0f : spin ? -1.0f : 0.0f;
                    log_qmf += on ? pq[3 * j + 1] : pq[3 * j + 2];
                }
            }
            lq[i] = log_add(log_keep + log_qmf, log_eps - (double)units * LN2);
        }
        ebm__free_energy_chunk(m, summed, count, x, w, f, work);
        for (int64_t i = 0; i < count; i++) {
            const int64_t r = (t0 + i) / K, k = (t0 + i) % K;
            const double lw = -f[i] - lq[i];
            acc[r] = k == 0 ? lw : log_add(acc[r], lw);
        }
    }
    for (int64_t r = 0; rc == EBM_OK && r < n; r++) {
        acc[r] = acc[r] - log((double)K) - log_z;
        if (!isfinite(acc[r])) {
            rc = ebm__fail(&msg, EBM_EVALUE,
                           "the estimate of row %lld is not finite (%g): the parameters are too "
                           "large; ll and rng are unchanged",
                           (long long)r, acc[r]);
        }
    }
    if (rc == EBM_OK) {
        memcpy(ll, acc, (size_t)n * sizeof *ll);
    } else {
        ebm__rng_restore(rng, &rng_saved);
    }
    free(mu);
    free(clamp);
    free(x);
    free(u);
    free(f);
    free(lq);
    free(work);
    free(acc);
    free(pq);
    return rc == EBM_OK ? EBM_OK : ebm__model_set_error(m, rc, &msg);
}
