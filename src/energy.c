/* Energies, free energies with any set of non-adjacent layers summed out,
 * their parameter gradients, and the layer inputs they are made of. */
#include "error.h"
#include "model.h"
#include "energy.h"
#include "drelu.h"
#include "kernels.h"
#include "numerics.h"
#include "threads.h"

#include <cblas.h>
#include <pthread.h>
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
    return (l == 1 && m->logvar_off >= 0) ? m->w1_scaled_d : m->params_d + m->w_off[l];
}

void ebm__layer_input(const ebm_model_t *m, int64_t l, int64_t n, const float *x, int64_t ldx,
                      float *a, int64_t lda)
{
    int nl = (int)m->size[l];
    const float *b = m->bias + m->offset[l];
    for (int64_t r = 0; r < n; r++) {
        memcpy(a + r * lda, b, (size_t)nl * sizeof *a);
    }
    if (n == 0) {
        return;
    }
    if (ebm__is_gaussian(m, l)) {
        /* Conditional mean mu + W_1 x_1. */
        int n1 = (int)m->size[1];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, nl, n1, 1.0f,
                    x + m->offset[1], (int)ldx, m->params + m->w_off[1], n1, 1.0f, a, (int)lda);
        return;
    }
    if (l > 0) {
        int nb = (int)m->size[l - 1];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, nl, nb, 1.0f,
                    x + m->offset[l - 1], (int)ldx, weights_from_below(m, l), nl, 1.0f, a,
                    (int)lda);
    }
    if (l + 1 < m->n_layers) {
        int na = (int)m->size[l + 1];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, nl, na, 1.0f,
                    x + m->offset[l + 1], (int)ldx, m->params + m->w_off[l + 1], na, 1.0f, a,
                    (int)lda);
    }
}

void ebm__layer_input_d(const ebm_model_t *m, int64_t l, int64_t n, const double *xd,
                        int64_t ldxd, double *a, int64_t lda)
{
    int nl = (int)m->size[l];
    const double *b = m->bias_d + m->offset[l];
    for (int64_t r = 0; r < n; r++) {
        memcpy(a + r * lda, b, (size_t)nl * sizeof *a);
    }
    if (n == 0) {
        return;
    }
    if (ebm__is_gaussian(m, l)) {
        int n1 = (int)m->size[1];
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, nl, n1, 1.0,
                    xd + m->offset[1], (int)ldxd, m->params_d + m->w_off[1], n1, 1.0, a, (int)lda);
        return;
    }
    if (l > 0) {
        int nb = (int)m->size[l - 1];
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, nl, nb, 1.0,
                    xd + m->offset[l - 1], (int)ldxd, weights_from_below_d(m, l), nl, 1.0, a,
                    (int)lda);
    }
    if (l + 1 < m->n_layers) {
        int na = (int)m->size[l + 1];
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, nl, na, 1.0,
                    xd + m->offset[l + 1], (int)ldxd, m->params_d + m->w_off[l + 1], na, 1.0, a,
                    (int)lda);
    }
}

void ebm__mean_from_input(const ebm_model_t *m, int64_t l, int64_t n, float *a, int64_t lda)
{
    const int64_t nl = m->size[l];
    const ebm__kernels *kern = ebm__kern();
    switch (m->units[l]) {
    case EBM_UNITS_BINARY:
        EBM__FOR_ROWS(r, n, n * nl * 4, {
            kern->sigmoid(nl, a + r * lda, a + r * lda);
        });
        break;
    case EBM_UNITS_SPIN:
        EBM__FOR_ROWS(r, n, n * nl * 4, {
            kern->tanh(nl, a + r * lda);
        });
        break;
    case EBM_UNITS_POTTS: {
        /* Each site's softmax, in double. */
        const int64_t q = m->categories[l];
        EBM__FOR_ROWS(r, n, n * nl * 8, {
            for (int64_t i = 0; i < nl; i += q) {
                ebm__site_softmax(q, a + r * lda + i, a + r * lda + i);
            }
        });
        break;
    }
    case EBM_UNITS_DRELU:
        /* Each unit's mean given its input, in double. */
        EBM__FOR_ROWS(r, n, n * nl * 64, {
            float *ar = a + r * lda;
            for (int64_t j = 0; j < nl; j++) {
                double gp, gn, d;
                ebm__drelu_shape(m, j, &gp, &gn, &d);
                ar[j] = (float)ebm__drelu_mean(gp, gn, ar[j] + d, ar[j] - d);
            }
        });
        break;
    default: /* Gaussian: the input is the mean */
        break;
    }
}

/* ---- energies of binary and spin states from float GEMMs --------------- */

int ebm__energy_fast_ok(const ebm_model_t *m)
{
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (!ebm__is_discrete(m, l)) {
            return 0;
        }
    }
    return 1;
}

/*
 * With every |x_i| <= 1, the float sum t_j = sum_i x_i W_ij over K terms has
 * |fl(t_j) - t_j| <= gamma_K sum_i |W_ij|, gamma_K = K u / (1 - K u), u =
 * 2^-24, whatever the order of the additions (Higham, Accuracy and Stability
 * of Numerical Algorithms, 2nd ed., sec. 3.1); the products with x_j in
 * {-1, 0, 1} are exact, and so |e - E| <= sum_l gamma_{K_l} ||W_l||_1
 * (entrywise) for the terms summed in double afterwards. The double path's
 * own rounding (gamma_K with u = 2^-53) is added, so that a decision
 * outside twice this bound is the decision of either path.
 */
static double weight_norm(const ebm_model_t *m, int64_t l) /* sum |W_l|, entrywise */
{
    const float *wl = m->params + m->w_off[l];
    const int64_t count = m->size[l - 1] * m->size[l];
    double sum = 0.0;
    for (int64_t i = 0; i < count; i++) {
        sum += fabsf(wl[i]);
    }
    return sum;
}

static double bias_norm(const ebm_model_t *m, int64_t l)
{
    const float *b = m->bias + m->offset[l];
    double sum = 0.0;
    for (int64_t j = 0; j < m->size[l]; j++) {
        sum += fabsf(b[j]);
    }
    return sum;
}

static double gamma_k(double k, double unit)
{
    return k * unit / (1.0 - k * unit);
}

static void compute_bounds(const ebm_model_t *m, double *fast, double *from_input)
{
    double wn[EBM_MAX_LAYERS] = {0.0}, bn = 0.0;
    *fast = 0.0;
    for (int64_t l = 1; l < m->n_layers; l++) {
        wn[l] = weight_norm(m, l);
        const double k = (double)m->size[l - 1], kd = k + (double)m->size[l] + 2.0;
        *fast += (gamma_k(k, 0x1p-24) + gamma_k(kd, 0x1p-53)) * wn[l] * (1.0 + 1e-6);
    }
    /* The bias sums (with c), in double in both paths but in different
     * orders. */
    const double gb = gamma_k((double)m->width + 2.0, 0x1p-53);
    bn = fabs(m->shift);
    for (int64_t l = 0; l < m->n_layers; l++) {
        bn += bias_norm(m, l);
    }
    *fast += 2.0 * gb * bn;
    if (from_input == NULL) {
        return;
    }
    /* a_1j is a float sum of the K = n_0 + n_2 + 1 exact terms b_1j, x_0i W_1ij
     * and x_2k W_2jk, in whatever order the GEMMs add them: within gamma_K
     * of their sums of magnitudes (Higham, as above), so x_1.a_1 with |x_1j|
     * <= 1 is within gamma_K (||b_1||_1 + ||W_1||_1 + ||W_2||_1). Both
     * paths' double sums are trees of at most 2 width + 2 additions over
     * terms whose magnitudes sum to at most the norms of all parameters. */
    const double k = (double)m->size[0] + (m->n_layers > 2 ? (double)m->size[2] : 0.0) + 1.0;
    const double n1 = bias_norm(m, 1) + wn[1] + wn[2];
    double all = bn;
    for (int64_t l = 1; l < m->n_layers; l++) {
        all += wn[l];
    }
    *from_input = gamma_k(k, 0x1p-24) * n1 * (1.0 + 1e-6) +
                  2.0 * gamma_k(2.0 * (double)m->width + 2.0, 0x1p-53) * all;
}

/* The bounds are O(parameters) to compute and change only with the
 * parameters: a one-row MH step must not pay for them, so the model keeps
 * them from their first use until its next change. */
void ebm__energy_bounds(const ebm_model_t *m, double *fast, double *from_input)
{
    ebm_model_t *mm = (ebm_model_t *)(uintptr_t)m; /* logically mutable cache */
    pthread_mutex_lock(&mm->lock);
    if (!mm->bounds_valid) {
        compute_bounds(m, &mm->bound_fast, &mm->bound_input);
        mm->bounds_valid = 1;
    }
    *fast = mm->bound_fast;
    if (from_input != NULL) {
        *from_input = mm->bound_input;
    }
    pthread_mutex_unlock(&mm->lock);
}

double ebm__energy_fast_bound(const ebm_model_t *m)
{
    double fast;
    ebm__energy_bounds(m, &fast, NULL);
    return fast;
}

void ebm__energy_from_input(const ebm_model_t *m, int64_t rows, const float *x, int64_t ldx,
                            const float *a1, double *e)
{
    const int64_t n1 = m->size[1];
    for (int64_t r = 0; r < rows; r++) {
        double s = m->shift;
        for (int64_t l = 0; l < m->n_layers; l++) {
            if (l == 1) {
                continue;
            }
            const double *b = m->bias_d + m->offset[l];
            const float *xl = x + r * ldx + m->offset[l];
            for (int64_t j = 0; j < m->size[l]; j++) {
                s -= b[j] * (double)xl[j];
            }
        }
        const float *x1 = x + r * ldx + m->offset[1], *ar = a1 + r * n1;
        for (int64_t j = 0; j < n1; j++) {
            s -= (double)x1[j] * (double)ar[j];
        }
        e[r] = s;
    }
}

void ebm__energy_fast(const ebm_model_t *m, int64_t rows, const float *x, int64_t ldx, double *e,
                      float *t)
{
    for (int64_t r = 0; r < rows; r++) {
        double s = m->shift;
        for (int64_t l = 0; l < m->n_layers; l++) {
            const double *b = m->bias_d + m->offset[l];
            const float *xl = x + r * ldx + m->offset[l];
            for (int64_t j = 0; j < m->size[l]; j++) {
                s -= b[j] * (double)xl[j];
            }
        }
        e[r] = s;
    }
    for (int64_t l = 1; l < m->n_layers; l++) {
        const int nl = (int)m->size[l];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, nl, (int)m->size[l - 1],
                    1.0f, x + m->offset[l - 1], (int)ldx, m->params + m->w_off[l], nl, 0.0f, t, nl);
        for (int64_t r = 0; r < rows; r++) {
            const float *xl = x + r * ldx + m->offset[l], *tr = t + r * nl;
            double s = 0.0;
            for (int64_t j = 0; j < nl; j++) {
                s += (double)tr[j] * (double)xl[j];
            }
            e[r] -= s;
        }
    }
}

/* ---- free energies (double precision) --------------------------------- */

int64_t ebm__free_energy_scratch(const ebm_model_t *m, int64_t rows)
{
    return rows * (m->width + m->max_size);
}

void ebm__free_energy_chunk(const ebm_model_t *m, uint32_t sum_out, int64_t rows, const float *x,
                            int64_t ldx, double *f, double *work)
{
    const int64_t w = m->width;
    double *xd = work;            /* rows x width: the kept layers in double */
    double *t = work + rows * w;  /* rows x max_size */
    for (int64_t r = 0; r < rows; r++) {
        f[r] = m->shift;
        for (int64_t l = 0; l < m->n_layers; l++) {
            const float *src = x + r * ldx + m->offset[l];
            double *dst = xd + r * w + m->offset[l];
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
        const double *b = m->bias_d + m->offset[l];
        for (int64_t r = 0; r < rows; r++) {
            const double *xl = xd + r * w + m->offset[l];
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
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, nl, (int)m->size[l - 1],
                    1.0, xd + m->offset[l - 1], (int)w, weights_from_below_d(m, l), nl, 0.0, t,
                    nl);
        for (int64_t r = 0; r < rows; r++) {
            const double *xl = xd + r * w + m->offset[l];
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
            double s = 0.0;
            switch (m->units[l]) {
            case EBM_UNITS_BINARY:
                for (int64_t j = 0; j < nl; j++) {
                    s += ebm__softplus(a[j]);
                }
                break;
            case EBM_UNITS_SPIN:
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
        }
    }
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

/* Checks shared by the public energy calls. */
static int check_energy_args(const ebm_model_t *m, ebm__msg *msg, uint32_t sum_out, int64_t n,
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
    int rc = check_energy_args(m, &msg, sum_out, n, x, ldx, f, "f");
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
    int rc = check_energy_args(m, &msg, 0, n, x, ldx, energy, "energy");
    if (rc == EBM_OK) {
        rc = ebm__free_energy(m, &msg, 0, n, x, ldx, energy);
    }
    return rc == EBM_OK ? rc : ebm__model_set_error(m, rc, &msg);
}

/* ---- gradients (float, one GEMM per weight block) ---------------------- */

/* Rows per chunk of the gradient: large enough for GEMM efficiency. */
#define GRAD_CHUNK 1024

/* xh (rows x width) = x with each summed-out layer replaced by its
 * conditional mean given its (kept) neighbours. */
static void expected_state(const ebm_model_t *m, uint32_t sum_out, int64_t rows, const float *x,
                           int64_t ldx, float *xh)
{
    const int64_t w = m->width;
    for (int64_t r = 0; r < rows; r++) {
        memcpy(xh + r * w, x + r * ldx, (size_t)w * sizeof *xh);
    }
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (sum_out >> l & 1u) {
            ebm__layer_input(m, l, rows, xh, w, xh + m->offset[l], w);
            ebm__mean_from_input(m, l, rows, xh + m->offset[l], w);
        }
    }
}

int64_t ebm__energy_grad_scratch(const ebm_model_t *m, int64_t rows)
{
    /* xh, the coefficient-scaled layer, the float coefficients; with
     * Gaussian visible units also v / sigma^2 and the n0 x n1 block of
     * W_1's gradient. */
    int64_t gauss = m->logvar_off >= 0 ? rows * m->size[0] + m->size[0] * m->size[1] : 0;
    return rows * (m->width + m->max_size + 1) + gauss;
}

/*
 * With Gaussian visible units kept (not summed out), W_1's gradient block
 * P = sum_r c_r (v_r / sigma^2) x1_r^T also gives the log-variances' term
 * sum_r c_r v_ri a_ri / sigma_i^2 (a = W_1 x_1) as sum_j W_ij P_ij: so a
 * is never formed (no n x n0 x n1 GEMM). g_W -= P, g_s += that sum.
 */
static void add_gaussian_weight_grad(const ebm_model_t *m, const float *p, float *g)
{
    const int64_t n0 = m->size[0], n1 = m->size[1];
    const float *w1 = m->params + m->w_off[1];
    const ebm__kernels *kern = ebm__kern();
    for (int64_t i = 0; i < n0; i++) {
        double trace = kern->sub_dot(n1, w1 + i * n1, p + i * n1, g + m->w_off[1] + i * n1);
        g[m->logvar_off + i] += (float)trace;
    }
}

/*
 * The dReLU layer's shape gradient (layer 1; a its inputs, n x n_1, needed
 * only when it is summed out): a kept unit h gives dE/dlog gp = gp (h+)^2 /
 * 2, dE/dlog gn = gn (h-)^2 / 2 and dE/dD = -|h|; a summed-out one the
 * expectations of these under its conditional law (drelu.h's moments).
 */
static void add_drelu_shape_grad(const ebm_model_t *m, int summed, int64_t n, const float *x,
                                 int64_t ldx, const float *a, const double *coef, float *g)
{
    const int64_t n1 = m->size[1];
    float *glp = g + m->shape_off, *gln = glp + n1, *gd = gln + n1;
    for (int64_t j = 0; j < n1; j++) {
        double gp, gn, d, sp = 0.0, sn = 0.0, sd = 0.0;
        ebm__drelu_shape(m, j, &gp, &gn, &d);
        for (int64_t r = 0; r < n; r++) {
            if (summed) {
                ebm__drelu_moments mo;
                const double t = a[r * n1 + j];
                ebm__drelu_moments_of(gp, gn, t + d, t - d, &mo);
                sp += coef[r] * 0.5 * gp * mo.pp * mo.m2p;
                sn += coef[r] * 0.5 * gn * mo.pn * mo.m2n;
                sd -= coef[r] * (mo.pp * mo.m1p - mo.pn * mo.m1n);
            } else {
                const double h = x[r * ldx + m->offset[1] + j];
                *(h > 0.0 ? &sp : &sn) += coef[r] * 0.5 * (h > 0.0 ? gp : gn) * h * h;
                sd -= coef[r] * fabs(h);
            }
        }
        glp[j] += (float)sp;
        gln[j] += (float)sn;
        gd[j] += (float)sd;
    }
}

void ebm__energy_grad_rows(const ebm_model_t *m, uint32_t sum_out, int64_t n, const float *x,
                           int64_t ldx, const double *coef, float *g, float *work)
{
    const int64_t n0 = m->size[0];
    float *cx = work + n * m->width, *cf = cx + n * m->max_size, *vs = cf + n, *p = vs + n * n0;
    const int gauss = m->logvar_off >= 0, summed = sum_out & 1u;
    /* xh: x itself when no layer is summed out, else the expected state;
     * centred, x - mu: dE/db_l = -(x_l - mu_l) and dE/dW_l = -(x_{l-1} -
     * mu_{l-1})(x_l - mu_l)^T (summed layers by their conditional means). */
    const float *xh = x;
    int64_t ldh = ldx;
    if (sum_out != 0 || m->centred) {
        expected_state(m, sum_out, n, x, ldx, work);
        xh = work;
        ldh = m->width;
    }
    if (m->centred) {
        for (int64_t r = 0; r < n; r++) {
            for (int64_t j = 0; j < m->width; j++) {
                work[r * m->width + j] -= m->offsets[j];
            }
        }
    }
    for (int64_t r = 0; r < n; r++) {
        cf[r] = (float)coef[r];
    }
    if (gauss) {
        /* With s = log sigma^2, d = v - mu and a = W_1 x_1 (Liao eqs. 15-16):
         * kept v:   dE/dmu = -d/sigma^2, dE/ds = -d^2/(2 sigma^2) + v a/sigma^2
         *           (the second term from W_1's gradient, below);
         * summed v: v ~ N(mu + a, sigma^2) gives E[d] = a,
         *           E[d^2] = a^2 + sigma^2, E[v] a = (mu + a) a. */
        const int64_t n1 = m->size[1];
        float *av = cx; /* n x n0 */
        if (summed) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)n0, (int)n1, 1.0f,
                        xh + m->offset[1], (int)ldh, m->params + m->w_off[1], (int)n1, 0.0f, av,
                        (int)n0);
        }
        const float *mu = m->params + m->b_off[0];
        for (int64_t i = 0; i < n0; i++) {
            double gm = 0.0, gs = 0.0, inv = m->inv_var_d[i];
            for (int64_t r = 0; r < n; r++) {
                if (summed) {
                    double a = av[r * n0 + i];
                    gm -= coef[r] * a * inv;
                    gs += coef[r] * (-0.5 - 0.5 * a * a * inv + ((double)mu[i] + a) * a * inv);
                } else {
                    double d = (double)xh[r * ldh + i] - mu[i];
                    gm -= coef[r] * d * inv;
                    gs -= coef[r] * 0.5 * d * d * inv;
                }
            }
            g[m->b_off[0] + i] += (float)gm;
            g[m->logvar_off + i] += (float)gs;
        }
        /* v enters W_1's gradient as v / sigma^2. */
        for (int64_t r = 0; r < n; r++) {
            for (int64_t i = 0; i < n0; i++) {
                vs[r * n0 + i] = xh[r * ldh + i] * m->inv_var[i];
            }
        }
    }
    for (int64_t l = 0; l < m->n_layers; l++) {
        int nl = (int)m->size[l];
        const float *xl = xh + m->offset[l];
        /* dE/db_l = -x_l (binary, spin): column sums weighted by coef. */
        if (!ebm__is_gaussian(m, l)) {
            ebm__kern()->col_sums(n, nl, xl, ldh, coef, g + m->b_off[l]);
        }
        if (l == 0) {
            continue;
        }
        /* dE/dW_l = -x_{l-1} x_l^T: one GEMM over the rows. */
        for (int64_t r = 0; r < n; r++) {
            for (int j = 0; j < nl; j++) {
                cx[r * nl + j] = cf[r] * xl[r * ldh + j];
            }
        }
        int nb = (int)m->size[l - 1];
        const float *below = l == 1 && gauss ? vs : xh + m->offset[l - 1];
        int ldb = l == 1 && gauss ? (int)n0 : (int)ldh;
        if (l == 1 && gauss && !summed) {
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nb, nl, (int)n, 1.0f, below, ldb,
                        cx, nl, 0.0f, p, nl);
            add_gaussian_weight_grad(m, p, g);
        } else {
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nb, nl, (int)n, -1.0f, below,
                        ldb, cx, nl, 1.0f, g + m->w_off[l], nl);
        }
    }
    if (m->shape_off >= 0) {
        const int summed1 = sum_out >> 1 & 1u;
        if (summed1) {
            ebm__layer_input(m, 1, n, x, ldx, cx, m->size[1]);
        }
        add_drelu_shape_grad(m, summed1, n, x, ldx, cx, coef, g);
    }
}

int ebm_model_energy_grad(const ebm_model_t *m, uint32_t sum_out, int64_t n, const float *x,
                          int64_t ldx, const double *coef, float *grad)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = check_energy_args(m, &msg, sum_out, n, x, ldx, grad, "grad");
    if (rc == EBM_OK && n > 0 && coef == NULL) {
        rc = ebm__fail(&msg, EBM_ENULL, "coef is NULL");
    }
    for (int64_t r = 0; rc == EBM_OK && r < n; r++) {
        if (!isfinite(coef[r]) || fabs(coef[r]) > 1e30) {
            rc = ebm__fail(&msg, EBM_EVALUE, "coef[%lld] is %g; coefficients must be finite",
                           (long long)r, coef[r]);
        }
    }
    for (int64_t i = 0; rc == EBM_OK && grad != NULL && i < m->n_params; i++) {
        if (!isfinite(grad[i])) {
            rc = ebm__fail(&msg, EBM_EVALUE,
                           "grad[%lld] is %g on entry; the gradient accumulated into must be finite",
                           (long long)i, (double)grad[i]);
        }
    }
    if (rc != EBM_OK) {
        return ebm__model_set_error(m, rc, &msg);
    }
    if (n == 0) {
        return EBM_OK;
    }
    /* Into scratch first, so that a failure leaves grad alone. */
    const int64_t chunk = n < GRAD_CHUNK ? n : GRAD_CHUNK;
    float *g = calloc((size_t)m->n_params, sizeof *g);
    float *work = malloc((size_t)ebm__energy_grad_scratch(m, chunk) * sizeof *work);
    if (g == NULL || work == NULL) {
        free(g);
        free(work);
        return ebm__model_set_error(m, ebm__fail(&msg, EBM_ENOMEM, "out of memory for the gradient"),
                                    &msg);
    }
    for (int64_t r0 = 0; r0 < n; r0 += chunk) {
        int64_t rows = n - r0 < chunk ? n - r0 : chunk;
        ebm__energy_grad_rows(m, sum_out, rows, x + r0 * ldx, ldx, coef + r0, g, work);
    }
    for (int64_t i = 0; i < m->n_params; i++) {
        if (!isfinite(g[i] + grad[i])) {
            rc = ebm__fail(&msg, EBM_EVALUE,
                           "the gradient is not finite at parameter %lld (grad %g + the rows' "
                           "%g); grad unchanged",
                           (long long)i, (double)grad[i], (double)g[i]);
            break;
        }
    }
    if (rc == EBM_OK) {
        for (int64_t i = 0; i < m->n_params; i++) {
            grad[i] += g[i];
        }
    }
    free(g);
    free(work);
    return rc == EBM_OK ? rc : ebm__model_set_error(m, rc, &msg);
}

int ebm_model_energy_grad_input(const ebm_model_t *m, uint32_t sum_out, int64_t l, int64_t n,
                                const float *x, int64_t ldx, float *out, int64_t ldo)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = ebm__check_layer(m, &msg, "l", l, 0);
    if (rc == EBM_OK && (sum_out >> l & 1u)) {
        rc = ebm__fail(&msg, EBM_EVALUE, "layer %lld is in sum_out (0x%x); it has no value to "
                       "differentiate by", (long long)l, (unsigned)sum_out);
    }
    if (rc == EBM_OK) {
        rc = check_energy_args(m, &msg, sum_out, n, x, ldx, out, "out");
    }
    if (rc == EBM_OK) {
        rc = ebm__check_matrix(&msg, "out", n, out, ldo, m->size[l]);
    }
    if (rc != EBM_OK) {
        return ebm__model_set_error(m, rc, &msg);
    }
    if (n == 0) {
        return EBM_OK;
    }
    const int64_t w = m->width, nl = m->size[l];
    int64_t chunk = n < GRAD_CHUNK ? n : GRAD_CHUNK;
    /* All rows' results in scratch, copied out once they are all finite. */
    float *xh = malloc((size_t)(chunk * w) * sizeof *xh);
    float *a = malloc((size_t)(chunk * nl) * sizeof *a);
    float *res = malloc((size_t)(n * nl) * sizeof *res);
    if (xh == NULL || a == NULL || res == NULL) {
        free(xh);
        free(a);
        free(res);
        return ebm__model_set_error(m, ebm__fail(&msg, EBM_ENOMEM, "out of memory"), &msg);
    }
    for (int64_t r0 = 0; r0 < n; r0 += chunk) {
        int64_t rows = n - r0 < chunk ? n - r0 : chunk;
        expected_state(m, sum_out, rows, x + r0 * ldx, ldx, xh);
        ebm__layer_input(m, l, rows, xh, w, a, nl);
        for (int64_t r = 0; r < rows; r++) {
            float *o = res + (r0 + r) * nl;
            const float *ar = a + r * nl;
            if (ebm__is_gaussian(m, l)) {
                /* dE/dv = (v - mu - W_1 x_1) / sigma^2 (Liao eq. 28). */
                const float *v = xh + r * w;
                for (int64_t i = 0; i < nl; i++) {
                    o[i] = (v[i] - ar[i]) * m->inv_var[i];
                }
            } else if (ebm__is_drelu(m, l)) {
                /* dE/dh = gp h - a - D for h > 0, gn h - a + D for h < 0;
                 * at h = 0, -a (between the one-sided derivatives). */
                const float *h = xh + r * w + m->offset[l];
                for (int64_t j = 0; j < nl; j++) {
                    double gp, gn, d;
                    ebm__drelu_shape(m, j, &gp, &gn, &d);
                    o[j] = (float)(h[j] > 0.0f   ? gp * h[j] - ar[j] - d
                                   : h[j] < 0.0f ? gn * h[j] - ar[j] + d
                                                 : -(double)ar[j]);
                }
            } else {
                for (int64_t j = 0; j < nl; j++) {
                    o[j] = -ar[j];
                }
            }
        }
    }
    free(xh);
    free(a);
    if (!ebm__kern()->values_ok(n * nl, res, EBM_UNITS_GAUSSIAN)) {
        free(res);
        return ebm__model_set_error(m, ebm__fail_overflow(&msg, "energy_grad_input"), &msg);
    }
    for (int64_t r = 0; r < n; r++) {
        memcpy(out + r * ldo, res + r * nl, (size_t)nl * sizeof *out);
    }
    free(res);
    return EBM_OK;
}
