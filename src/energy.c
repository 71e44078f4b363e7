/* Layer inputs, energies and free energies in double with any set of
 * non-adjacent layers summed out, and the public energy calls. The MH
 * kernels' float energies with certified bounds are in energy_fast.c, the
 * parameter and state gradients in energy_grad.c. */
#include "error.h"
#include "model.h"
#include "energy.h"
#include "drelu.h"
#include "kernels.h"
#include "numerics.h"
#include "testing.h"
#include "threads.h"

#include <cblas.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const double LOG_2PI = 1.8378770664093454836;

/* ---- layer inputs ----------------------------------------------------- */

/* The matrix that carries layer l-1 into layer l: W_l, or diag(1/sigma^2) W_1
 * when layer 0 is Gaussian (it couples through v / sigma^2). */
static const float *weights_from_below(const ebm_model_t *m, int64_t l)
{
    return (l == 1 && m->logvar_off >= 0) ? m->w1_scaled : m->params + m->w_off[l];
}

static const double *weights_from_below_d(const ebm_model_t *m, int64_t l)
{
    return (l == 1 && m->logvar_off >= 0) ? m->w1_scaled_d : ebm__weights_d(m) + m->w_off[l];
}

void ebm__layer_input(const ebm_model_t *m, int64_t l, int64_t n, const float *x, int64_t ldx,
                      float *a, int64_t lda)
{
    int nl = (int)m->size[l];
    const float *b = m->bias + m->column[l];
    for (int64_t r = 0; r < n; r++) {
        memcpy(a + r * lda, b, (size_t)nl * sizeof *a);
    }
    if (n == 0) {
        return;
    }
    if (ebm__is_gaussian(m, l)) {
        /* Conditional mean mu + W_1 x_1. */
        int n1 = (int)m->size[1];
        EBM__BLAS(cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, nl, n1, 1.0f,
                              x + m->column[1], (int)ldx, m->params + m->w_off[1], n1, 1.0f, a,
                              (int)lda));
        return;
    }
    if (l > 0) {
        int nb = (int)m->size[l - 1];
        EBM__BLAS(cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, nl, nb, 1.0f,
                              x + m->column[l - 1], (int)ldx, weights_from_below(m, l), nl, 1.0f, a,
                              (int)lda));
    }
    if (l + 1 < m->n_layers) {
        int na = (int)m->size[l + 1];
        EBM__BLAS(cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, nl, na, 1.0f,
                              x + m->column[l + 1], (int)ldx, m->params + m->w_off[l + 1], na, 1.0f,
                              a, (int)lda));
    }
}

void ebm__layer_input_d(const ebm_model_t *m, int64_t l, int64_t n, const double *xd,
                        int64_t ldxd, double *a, int64_t lda)
{
    int nl = (int)m->size[l];
    const double *b = m->bias_d + m->column[l];
    for (int64_t r = 0; r < n; r++) {
        memcpy(a + r * lda, b, (size_t)nl * sizeof *a);
    }
    if (n == 0) {
        return;
    }
    if (ebm__is_gaussian(m, l)) {
        int n1 = (int)m->size[1];
        EBM__BLAS(cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, nl, n1, 1.0,
                              xd + m->column[1], (int)ldxd, ebm__weights_d(m) + m->w_off[1], n1,
                              1.0, a, (int)lda));
        return;
    }
    if (l > 0) {
        int nb = (int)m->size[l - 1];
        EBM__BLAS(cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, nl, nb, 1.0,
                              xd + m->column[l - 1], (int)ldxd, weights_from_below_d(m, l), nl, 1.0,
                              a, (int)lda));
    }
    if (l + 1 < m->n_layers) {
        int na = (int)m->size[l + 1];
        EBM__BLAS(cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, nl, na, 1.0,
                              xd + m->column[l + 1], (int)ldxd, ebm__weights_d(m) + m->w_off[l + 1],
                              na, 1.0, a, (int)lda));
    }
}

/* The rows of one ebm__mean_from_input call. */
typedef struct mean_rows {
    const ebm_model_t *m;
    int64_t l, lda;
    float *a;
} mean_rows;

static void mean_rows_run(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const mean_rows *c = ctx;
    const ebm_model_t *m = c->m;
    const int64_t l = c->l, nl = m->size[l];
    const ebm__kernels *kern = ebm__kern();
    for (int64_t r = begin; r < end; r++) {
        float *ar = c->a + r * c->lda;
        switch (m->units[l]) {
        case EBM_UNITS_BINARY: kern->sigmoid(nl, ar, ar); break;
        case EBM_UNITS_SPIN: kern->tanh(nl, ar); break;
        case EBM_UNITS_POTTS: /* each site's softmax, in double */
            for (int64_t i = 0; i < nl; i += m->categories[l]) {
                ebm__site_softmax(m->categories[l], ar + i, ar + i);
            }
            break;
        default: /* dReLU: each unit's mean given its input, in double */
            for (int64_t j = 0; j < nl; j++) {
                double gp, gn, d;
                ebm__drelu_shape(m, j, &gp, &gn, &d);
                ar[j] = (float)ebm__drelu_mean(gp, gn, ar[j] + d, ar[j] - d);
            }
            break;
        }
    }
}

void ebm__mean_from_input(const ebm_model_t *m, int64_t l, int64_t n, float *a, int64_t lda)
{
    const int units = m->units[l];
    if (units == EBM_UNITS_GAUSSIAN) {
        return; /* the input is the mean */
    }
    /* Work per unit: a vector sigmoid or tanh, a softmax, a dReLU mean. */
    const int64_t cost = units == EBM_UNITS_POTTS ? 8 : units == EBM_UNITS_DRELU ? 64 : 4;
    mean_rows c = {m, l, lda, a};
    ebm__for_rows(n, n * m->size[l] * cost, 0, mean_rows_run, &c);
}

/* ---- free energies (double precision) --------------------------------- */

int64_t ebm__free_energy_scratch(const ebm_model_t *m, int64_t rows)
{
    return rows * (m->width + m->max_size);
}

/* The tests' factor on the bound (testing.h): 1, below 1 the broken twin. */
static double bound_scale = 1.0;

double ebm__energy_set_bound_scale(double scale)
{
    const double old = bound_scale;
    bound_scale = scale;
    return old;
}

/*
 * The bound of lz_approx. With x = k |a|, e the kernel's ebm__expf of the
 * float -x and v_j its term: the float rounding of x moves e^-x by at most
 * 2^-24 x e^-x(1 - 2^-24) < 2^-25.4; ebm__expf is within 1.5 2^-24 e^xf +
 * 2^-149 of e^xf for every float xf in [-104, 0] (an exhaustive scan,
 * docs/performance.md item 33; the 2^-22 below also covers the 2 ulps
 * tests/check_simd.c asserts); ebm__log1pf01 is within 1.26 2^-24 of
 * log1p(e) for every float e in [0, 1] (tests/check_simd.c), and log1p
 * is 1-Lipschitz; glibc's exp and log1p (the exact path) are within 2^-51
 * of the true log1p(e^-x); both paths add lin(a) in double and round once.
 * So each term is within delta_j = 2^-22 e_j + 2^-22 + 2^-51 |v_j| of the
 * exact path's, and two sums of n terms in any order are within gamma_n =
 * 1.01 n 2^-53 of their terms' sums, relative to the sums of absolute
 * values (sums[1], itself rounded: the factors 1.001).
 */
static double lz_approx(int64_t n, const double *a, int spin, double *bound)
{
    double sums[2];
    const double s = ebm__kern()->lz_sum(n, a, spin, sums);
    const double gamma = 1.01 * (double)n * 0x1p-53;
    const double abs_sum = sums[1] * 1.001, e_sum = sums[0] * 1.001;
    const double delta = 0x1p-22 * (e_sum + (double)n) + 0x1p-51 * abs_sum;
    *bound = (delta + gamma * (2.0 * abs_sum + delta)) * bound_scale;
    return s;
}

/* free_energy_chunk's rows; err != NULL: lz_approx for binary and spin
 * summed layers, and err[r] bounds |f[r] - the exact path's f[r]|. */
static void free_energy_rows(const ebm_model_t *m, uint32_t sum_out, int64_t rows, const float *x,
                             int64_t ldx, double *f, double *err, double *work)
{
    const int64_t w = m->width;
    double *xd = work;            /* rows x width: the kept layers in double */
    double *t = work + rows * w;  /* rows x max_size */
    for (int64_t r = 0; r < rows; r++) {
        f[r] = m->shift;
        for (int64_t l = 0; l < m->n_layers; l++) {
            const float *src = x + r * ldx + m->column[l];
            double *dst = xd + r * w + m->column[l];
            int kept = !(sum_out >> l & 1u);
            for (int64_t j = 0; j < m->size[l]; j++) {
                dst[j] = kept ? (double)src[j] : 0.0;
            }
        }
    }
    /* Bias terms of the kept layers. */
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (sum_out >> l & 1u) {
            continue;
        }
        const double *b = m->bias_d + m->column[l];
        for (int64_t r = 0; r < rows; r++) {
            const double *xl = xd + r * w + m->column[l];
            double s = 0.0;
            if (ebm__is_gaussian(m, l)) {
                for (int64_t i = 0; i < m->size[l]; i++) {
                    double d = xl[i] - b[i];
                    s += 0.5 * d * d * m->inv_var_d[i];
                }
            } else {
                for (int64_t j = 0; j < m->size[l]; j++) {
                    s -= b[j] * xl[j];
                }
            }
            if (ebm__is_drelu(m, l)) {
                /* gp (h+)^2 / 2 + gn (h-)^2 / 2 - D |h| */
                for (int64_t j = 0; j < m->size[l]; j++) {
                    double gp, gn, d;
                    ebm__drelu_shape(m, j, &gp, &gn, &d);
                    const double h = xl[j];
                    s += 0.5 * (h > 0.0 ? gp : gn) * h * h - d * fabs(h);
                }
            }
            f[r] += s;
        }
    }
    /* Couplings between kept neighbours: -x_{l-1}^T W_l x_l. */
    for (int64_t l = 1; l < m->n_layers; l++) {
        if ((sum_out >> l & 1u) || (sum_out >> (l - 1) & 1u)) {
            continue;
        }
        int nl = (int)m->size[l];
        EBM__BLAS(cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, nl,
                              (int)m->size[l - 1], 1.0, xd + m->column[l - 1], (int)w,
                              weights_from_below_d(m, l), nl, 0.0, t, nl));
        for (int64_t r = 0; r < rows; r++) {
            const double *xl = xd + r * w + m->column[l];
            double s = 0.0;
            for (int64_t j = 0; j < nl; j++) {
                s += t[r * nl + j] * xl[j];
            }
            f[r] -= s;
        }
    }
    /* Summed-out layers: -sum_j log sum_{x_j} exp(a_j x_j), constants kept. */
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (!(sum_out >> l & 1u)) {
            continue;
        }
        int64_t nl = m->size[l];
        ebm__layer_input_d(m, l, rows, xd, w, t, nl);
        for (int64_t r = 0; r < rows; r++) {
            const double *a = t + r * nl;
            double s = 0.0, ds = 0.0;
            switch (m->units[l]) {
            case EBM_UNITS_BINARY:
                if (err != NULL) {
                    s = lz_approx(nl, a, 0, &ds);
                    break;
                }
                for (int64_t j = 0; j < nl; j++) {
                    s += ebm__softplus(a[j]);
                }
                break;
            case EBM_UNITS_SPIN:
                if (err != NULL) {
                    s = lz_approx(nl, a, 1, &ds);
                    break;
                }
                for (int64_t j = 0; j < nl; j++) {
                    s += ebm__log2cosh(a[j]);
                }
                break;
            case EBM_UNITS_POTTS:
                for (int64_t i = 0; i < nl; i += m->categories[l]) {
                    s += ebm__site_lse_d(m->categories[l], a + i);
                }
                break;
            case EBM_UNITS_DRELU:
                /* log of the integral of exp(-E(h) + a h) over h */
                for (int64_t j = 0; j < nl; j++) {
                    double gp, gn, d;
                    ebm__drelu_shape(m, j, &gp, &gn, &d);
                    s -= ebm__drelu_free(gp, gn, a[j] + d, a[j] - d);
                }
                break;
            default: {
                /* Gaussian v with c = W_1 x_1 (a = mu + c): the integral of
                 * exp(-0.5 (v-mu)^2/sigma^2 + v c/sigma^2) dv is
                 * sqrt(2 pi sigma^2) exp((2 mu c + c^2) / (2 sigma^2)). */
                const double *mu = m->params_d + m->b_off[0];
                const double *logvar = m->params_d + m->logvar_off;
                for (int64_t i = 0; i < nl; i++) {
                    double c = a[i] - mu[i];
                    s += 0.5 * (2.0 * mu[i] * c + c * c) * m->inv_var_d[i] +
                         0.5 * (LOG_2PI + logvar[i]);
                }
                break;
            }
            }
            f[r] -= s;
            if (err != NULL) {
                /* both paths round f[r] - s once: the distance grows by
                 * at most 2^-52 of the operands */
                err[r] = (err[r] + ds) * (1.0 + 0x1p-50) + 0x1p-50 * fabs(f[r]);
            }
        }
    }
}

void ebm__free_energy_chunk(const ebm_model_t *m, uint32_t sum_out, int64_t rows, const float *x,
                            int64_t ldx, double *f, double *work)
{
    free_energy_rows(m, sum_out, rows, x, ldx, f, NULL, work);
}

void ebm__free_energy_bounded(const ebm_model_t *m, uint32_t sum_out, int64_t rows,
                              const float *x, int64_t ldx, double *f, double *err, double *work)
{
    memset(err, 0, (size_t)rows * sizeof *err);
    free_energy_rows(m, sum_out, rows, x, ldx, f, err, work);
}

int ebm__free_energy(const ebm_model_t *m, ebm__msg *msg, uint32_t sum_out, int64_t n,
                     const float *x, int64_t ldx, double *f)
{
    int64_t chunk = n < EBM__CHUNK ? n : EBM__CHUNK;
    if (chunk == 0) {
        return EBM_OK;
    }
    double *work = malloc((size_t)ebm__free_energy_scratch(m, chunk) * sizeof *work);
    if (work == NULL) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for free-energy scratch");
    }
    for (int64_t r0 = 0; r0 < n; r0 += chunk) {
        int64_t rows = n - r0 < chunk ? n - r0 : chunk;
        ebm__free_energy_chunk(m, sum_out, rows, x + r0 * ldx, ldx, f + r0, work);
    }
    free(work);
    return EBM_OK;
}

/* Checks shared by the public energy calls (contract in energy.h). */
int ebm__check_energy_args(const ebm_model_t *m, ebm__msg *msg, uint32_t sum_out, int64_t n,
                           const float *x, int64_t ldx, const void *out, const char *out_name)
{
    int rc = ebm__check_sum_out(m, msg, sum_out);
    if (rc == EBM_OK) {
        rc = ebm__check_matrix(msg, "x", n, x, ldx, m->width);
    }
    if (rc == EBM_OK && n > 0 && out == NULL) {
        rc = ebm__fail(msg, EBM_ENULL, "%s is NULL", out_name);
    }
    if (rc == EBM_OK) {
        rc = ebm__check_states(m, msg, "x", ebm__all_layers(m) & ~sum_out, n, x, ldx);
    }
    return rc;
}

int ebm_model_free_energy(const ebm_model_t *m, uint32_t sum_out, int64_t n, const float *x,
                          int64_t ldx, double *f)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = ebm__check_energy_args(m, &msg, sum_out, n, x, ldx, f, "f");
    if (rc == EBM_OK) {
        rc = ebm__free_energy(m, &msg, sum_out, n, x, ldx, f);
    }
    return rc == EBM_OK ? rc : ebm__model_set_error(m, rc, &msg);
}

int ebm_model_energy(const ebm_model_t *m, int64_t n, const float *x, int64_t ldx, double *energy)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = ebm__check_energy_args(m, &msg, 0, n, x, ldx, energy, "energy");
    if (rc == EBM_OK) {
        rc = ebm__free_energy(m, &msg, 0, n, x, ldx, energy);
    }
    return rc == EBM_OK ? rc : ebm__model_set_error(m, rc, &msg);
}
