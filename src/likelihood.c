/* log p(v) of data rows from the mean-field posterior Q (v clamped): the
 * variational lower bound -E(v, mu) + H(Q) - log Z, and the importance-
 * sampled estimate whose proposal is a defensive mixture of Q and the
 * uniform law over the sampled parity class. */
#include "error.h"
#include "model.h"
#include "rng.h"
#include "energy.h"
#include "partition.h"
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double LN2 = 0.69314718055994530942;

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
    int rc = ebm__check_ll_args(m, &msg, log_z, n, data, ldd, ll);
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
        return ebm__model_error(m, EBM_ENOMEM, "out of memory");
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
        rc = ebm__check_ll_args(m, &msg, log_z, n, data, ldd, ll);
    }
    if (rc == EBM_OK && n > (int64_t)UINT32_MAX + 1) {
        rc = ebm__fail(&msg, EBM_ESHAPE, "n is %lld; at most 2^32 rows", (long long)n);
    }
    /* Sample the hidden parity class with fewer units, sum out the other. */
    const uint32_t odd = ebm__parity_mask(m, 1), even_hidden = ebm__parity_mask(m, 0) & ~1u;
    const int even_fewer = ebm__class_bits(m, even_hidden) < ebm__class_bits(m, odd);
    const uint32_t sampled = m->n_layers == 2 ? 0u : even_fewer ? even_hidden : odd;
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
                    const float *ml = mu + r * w + m->column[l];
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
                float *hl = xs + m->column[l];
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
