/* The energy's gradients: in the parameters (dF_S/dtheta summed over rows
 * with coefficients, one float GEMM per weight block; Gaussian visible
 * units and dReLU shapes by their closed forms) and in one layer's state. */
#include "error.h"
#include "model.h"
#include "energy.h"
#include "drelu.h"
#include "kernels.h"
#include "threads.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


/* Rows per chunk of the gradient: large enough for GEMM efficiency. */
#define GRAD_CHUNK 1024

/* xh (rows x width) = x with each summed-out layer replaced by its
 * conditional mean given its (kept) neighbours. */
static void expected_state(const ebm_model_t *m, uint32_t sum_out, int64_t rows, const float *x,
                           int64_t ldx, float *xh)
{
    const int64_t w = m->width;
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (!(sum_out >> l & 1u)) { /* a summed-out layer is written below */
            const int64_t c = m->column[l];
            for (int64_t r = 0; r < rows; r++) {
                memcpy(xh + r * w + c, x + r * ldx + c, (size_t)m->size[l] * sizeof *xh);
            }
        }
    }
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (sum_out >> l & 1u) {
            ebm__layer_input(m, l, rows, xh, w, xh + m->column[l], w);
            ebm__mean_from_input(m, l, rows, xh + m->column[l], w);
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
                const double h = x[r * ldx + m->column[1] + j];
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
                work[r * m->width + j] -= m->mu[j];
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
            EBM__BLAS(cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)n0, (int)n1,
                                  1.0f, xh + m->column[1], (int)ldh, m->params + m->w_off[1],
                                  (int)n1, 0.0f, av, (int)n0));
        }
        const float *mu = m->params + m->b_off[0];
        if (summed) {
            for (int64_t i = 0; i < n0; i++) {
                double gm = 0.0, gs = 0.0, inv = m->inv_var_d[i];
                for (int64_t r = 0; r < n; r++) {
                    double a = av[r * n0 + i];
                    gm -= coef[r] * a * inv;
                    gs += coef[r] * (-0.5 - 0.5 * a * a * inv + ((double)mu[i] + a) * a * inv);
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
        } else { /* the same sums and v / sigma^2 in one pass over the rows */
            ebm__kern()->grbm_visible_grad(n, n0, xh, ldh, mu, m->inv_var, m->inv_var_d, coef,
                                           vs, g + m->b_off[0], g + m->logvar_off);
        }
    }
    for (int64_t l = 0; l < m->n_layers; l++) {
        int nl = (int)m->size[l];
        const float *xl = xh + m->column[l];
        /* dE/db_l = -x_l (binary, spin): column sums weighted by coef. */
        if (!ebm__is_gaussian(m, l)) {
            ebm__kern()->col_sums(n, nl, xl, ldh, coef, g + m->b_off[l]);
        }
        if (l == 0) {
            continue;
        }
        /* dE/dW_l = -x_{l-1} x_l^T: one GEMM over the rows. */
        ebm__kern()->scale_rows(n, nl, cf, xl, ldh, cx, nl);
        int nb = (int)m->size[l - 1];
        const float *below = l == 1 && gauss ? vs : xh + m->column[l - 1];
        int ldb = l == 1 && gauss ? (int)n0 : (int)ldh;
        if (l == 1 && gauss && !summed) {
            EBM__BLAS(cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nb, nl, (int)n, 1.0f,
                                  below, ldb, cx, nl, 0.0f, p, nl));
            add_gaussian_weight_grad(m, p, g);
        } else {
            EBM__BLAS(cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nb, nl, (int)n, -1.0f,
                                  below, ldb, cx, nl, 1.0f, g + m->w_off[l], nl));
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
    int rc = ebm__check_energy_args(m, &msg, sum_out, n, x, ldx, grad, "grad");
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
        return ebm__model_error(m, EBM_ENOMEM, "out of memory for the gradient");
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
        rc = ebm__check_energy_args(m, &msg, sum_out, n, x, ldx, out, "out");
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
        return ebm__model_error(m, EBM_ENOMEM, "out of memory");
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
                const float *h = xh + r * w + m->column[l];
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
