/* Annealed importance sampling of log Z (Neal 2001; Salakhutdinov and
 * Murray 2008): chains from a tractable p_0 (uniform discrete units, or
 * independent visible units with the caller's base biases) annealed to the
 * model through tempered Gibbs sweeps, the odd layers summed out in the
 * importance weights. */
#include "error.h"
#include "model.h"
#include "rng.h"
#include "energy.h"
#include "drelu.h"
#include "conditional.h"
#include "numerics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double LOG_2PI = 1.8378770664093454836;

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

/* The checks of an AIS call: rng and log_z not NULL, 2 to EBM__BLAS_MAX
 * chains, 1 to INT32_MAX temperatures, base NULL (always with Gaussian
 * visible units) or n_0 finite biases within +-1e4. Returns EBM_OK or the
 * first failure's code, its message in msg. */
static int check_ais_args(const ebm_model_t *m, ebm__msg *msg, const ebm_rng_t *rng,
                          int64_t n_chains, int64_t n_betas, const float *base,
                          const double *log_z)
{
    int rc = EBM_OK;
    if (rng == NULL || log_z == NULL) {
        rc = ebm__fail(msg, EBM_ENULL, "%s is NULL", rng == NULL ? "rng" : "log_z");
    } else if (n_chains < 2 || n_chains > EBM__BLAS_MAX) {
        rc = ebm__fail(msg, EBM_ESHAPE, "n_chains is %lld; AIS needs 2 to %lld chains",
                       (long long)n_chains, (long long)EBM__BLAS_MAX);
    } else if (n_betas < 1 || n_betas > INT32_MAX) {
        rc = ebm__fail(msg, EBM_ESHAPE, "n_betas is %lld; it must be from 1 to %d",
                       (long long)n_betas, INT32_MAX);
    } else if (base != NULL && ebm__is_gaussian(m, 0)) {
        rc = ebm__fail(msg, EBM_EUNSUPPORTED,
                       "base is not NULL, but the visible layer is Gaussian: its base is "
                       "N(mu, sigma^2) already (pass NULL)");
    }
    for (int64_t i = 0; rc == EBM_OK && base != NULL && i < m->size[0]; i++) {
        if (!(fabsf(base[i]) <= 1e4f)) {
            rc = ebm__fail(msg, EBM_EVALUE, "base[%lld] is %g; base biases must be finite, "
                           "within +-1e4", (long long)i, (double)base[i]);
        }
    }
    return rc;
}

/* log Z_0 of the path's start p_0: uniform discrete units, N(mu, sigma^2)
 * Gaussian units, dReLU units by their self-energy alone; with a base,
 * independent visible units with input base[i]. */
static double start_log_partition(const ebm_model_t *m, const float *base)
{
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
    return log_z0;
}

/* x (n rows of the state width) = n draws from p_0, from the next stream of
 * rng, and with a base the visible layer from the one after it. a: n x n_0
 * floats of scratch; draw: the scratch of ebm__random_units. */
static void draw_start(const ebm_model_t *m, ebm_rng_t *rng, const float *base, int64_t n,
                       float *x, float *a, float *draw)
{
    const int64_t w = m->width, n0 = m->size[0];
    ebm__stream st = ebm__rng_take_stream(rng);
    ebm__random_units(m, &st, NULL, n, x, w, ebm__all_layers(m), NULL, 0, draw);
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
}

/* lw[r] += the even layers' part of log p*_beta(x_r) - log p*_beta_prev(x_r):
 * the discrete even biases give (beta - beta_prev) b.x (with a base,
 * (beta - beta_prev) (b - base).x for the visible layer); a Gaussian
 * layer's quadratic term does not depend on beta. */
static void add_even_weights(const ebm_model_t *m, const float *base, double beta,
                             double beta_prev, int64_t n, const float *x, double *lw)
{
    const int64_t w = m->width;
    for (int64_t l = 0; l < m->n_layers; l += 2) {
        if (ebm__is_gaussian(m, l)) {
            continue;
        }
        const double *b = m->bias_d + m->column[l];
        const float *b0 = l == 0 ? base : NULL;
        for (int64_t r = 0; r < n; r++) {
            const float *xl = x + r * w + m->column[l];
            double s = 0.0;
            for (int64_t j = 0; j < m->size[l]; j++) {
                s += (b[j] - (b0 != NULL ? (double)b0[j] : 0.0)) * xl[j];
            }
            lw[r] += (beta - beta_prev) * s;
        }
    }
}

/* The rest of one temperature's weights and its transition: for each odd
 * layer, lw[r] += its log-sums at beta minus those at beta_prev (it is
 * summed out of the weights), then it is drawn at beta given the even
 * layers; then the even layers are drawn at beta given the odd ones (the
 * visible layer with (1 - beta) base added to its input). Takes n_layers
 * streams of rng; a: n x max_size floats of scratch. */
static void anneal_step(const ebm_model_t *m, ebm_rng_t *rng, const float *base, double beta,
                        double beta_prev, int64_t n, float *x, float *a, double *lw)
{
    const int64_t w = m->width;
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
        ebm__temper_input(m, l, n, a, nl, &beta, 1);
        ebm__sample_from_input(m, l, &sweep[l], NULL, 0, n, a, nl, x + m->column[l], w);
    }
    for (int64_t l = 0; l < m->n_layers; l += 2) {
        const int64_t nl = m->size[l];
        ebm__layer_input(m, l, n, x, w, a, nl);
        ebm__temper_input(m, l, n, a, nl, &beta, 1);
        for (int64_t r = 0; l == 0 && base != NULL && beta < 1.0 && r < n; r++) {
            for (int64_t j = 0; j < nl; j++) {
                a[r * nl + j] = (float)((double)a[r * nl + j] + (1.0 - beta) * base[j]);
            }
        }
        ebm__sample_from_input(m, l, &sweep[l], NULL, 0, n, a, nl, x + m->column[l], w);
    }
}

/* *lmax = max_r lw[r]; *mean and *var: the mean and the unbiased variance
 * of the n >= 2 weights exp(lw[r] - lmax). */
static void weight_moments(int64_t n, const double *lw, double *lmax, double *mean, double *var)
{
    double top = -INFINITY;
    for (int64_t r = 0; r < n; r++) {
        top = lw[r] > top ? lw[r] : top;
    }
    double sum = 0.0, sq = 0.0;
    for (int64_t r = 0; r < n; r++) {
        double wr = exp(lw[r] - top);
        sum += wr;
        sq += wr * wr;
    }
    sum /= (double)n;
    *lmax = top;
    *mean = sum;
    *var = (sq / (double)n - sum * sum) * (double)n / (double)(n - 1);
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
    int rc = check_ais_args(m, &msg, rng, n_chains, n_betas, base, log_z);
    if (rc != EBM_OK) {
        return ebm__model_set_error(m, rc, &msg);
    }
    const int64_t n = n_chains, w = m->width;
    float *x = malloc((size_t)(n * w + n * m->max_size + w) * sizeof *x);
    double *lw = calloc((size_t)n, sizeof *lw);
    if (x == NULL || lw == NULL) {
        free(x);
        free(lw);
        return ebm__model_error(m, EBM_ENOMEM, "out of memory for AIS");
    }
    float *a = x + n * w, *draw = a + n * m->max_size;
    const double log_z0 = start_log_partition(m, base);
    const ebm__rng_mark rng_saved = ebm__rng_save(rng);
    draw_start(m, rng, base, n, x, a, draw);
    /* lw: log p*_beta(x) - log p*_beta_prev(x) summed along the path, the
     * odd layers summed out. */
    double beta_prev = 0.0;
    for (int64_t k = 1; k <= n_betas; k++) {
        const double beta = ais_beta(k, n_betas);
        add_even_weights(m, base, beta, beta_prev, n, x, lw);
        anneal_step(m, rng, base, beta, beta_prev, n, x, a, lw);
        beta_prev = beta;
    }
    /* log Z = log Z_0 + log mean(w); the standard error by the delta method. */
    double lmax, mean, var;
    weight_moments(n, lw, &lmax, &mean, &var);
    free(x);
    free(lw);
    /* The path ends at exp(-E + c) (c: the centring constant, not in
     * the weights). */
    const double z = log_z0 + lmax + log(mean) - m->shift;
    const double se = sqrt(var > 0 ? var : 0.0) / (mean * sqrt((double)n));
    if (!isfinite(z) || !isfinite(se)) {
        ebm__rng_restore(rng, &rng_saved);
        return ebm__model_error(
            m, EBM_EVALUE,
            "AIS importance weights are not finite (the parameters are too large for "
            "the annealing path); log_z and rng are unchanged");
    }
    *log_z = z;
    if (std_err != NULL) {
        *std_err = se;
    }
    return EBM_OK;
}
