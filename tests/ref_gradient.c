/*
 * The exact gradient of the batch-average log-likelihood (ref.h),
 *     d/dtheta log p(v) = -E[dE/dtheta | v] + E_model[dE/dtheta],
 * computed here in double precision, independently of the library:
 *  - binary and spin models (RBM 3x2 and 4x3, DBM 3-3-2): all 2^width
 *    states are enumerated; the energy is written out from the parameter
 *    blocks (E = -sum_l b_l.x_l - sum_l x_{l-1}^T W_l x_l) and so is its
 *    derivative (dE/dW_l[i][j] = -x_{l-1,i} x_{l,j}, dE/db_l[j] = -x_{l,j});
 *    centred, every x there is x - mu (the offsets).
 *    The energies are checked against ebm_model_energy on every state.
 *  - GRBM (Gaussian visible v, binary or spin hidden h, sigma_i^2 =
 *    exp(logvar_i)): h is enumerated and v integrated in closed form.
 *    p(v, h) = p(h) N(v; m_h, diag(sigma^2)) with m_h = mu + W h and
 *        log p(h) = b.h + sum_i (m_hi^2 - mu_i^2) / (2 sigma_i^2) + const
 *    (checked against -ebm_model_free_energy(m, 1u, h) up to a constant).
 *    Per state, with a = W h:
 *        dE/dW_ij     = -(v_i / sigma_i^2) h_j
 *        dE/dmu_i     = -(v_i - mu_i) / sigma_i^2
 *        dE/dlogvar_i = -(v_i - mu_i)^2 / (2 sigma_i^2) + v_i a_i / sigma_i^2
 *        dE/db_j      = -h_j
 *    and with E[v_i | h] = m_hi, E[(v_i - mu_i)^2 | h] = sigma_i^2 + a_i^2:
 *        E[dE/dW_ij | h]     = -(m_hi / sigma_i^2) h_j
 *        E[dE/dmu_i | h]     = -a_i / sigma_i^2
 *        E[dE/dlogvar_i | h] = -(sigma_i^2 + a_i^2) / (2 sigma_i^2) + m_hi a_i / sigma_i^2
 *        E[dE/db_j | h]      = -h_j
 *    The positive phase of a data row is exact: -dF(v)/dtheta with h summed
 *    out, i.e. the per-state formulas with h_j replaced by E[h_j | v] =
 *    sigmoid(c_j) (binary) or tanh(c_j) (spin), c_j = b_j + sum_i v_i W_ij /
 *    sigma_i^2 (checked against ebm_model_energy_grad with sum_out = 1u<<1).
 *
 * SPDX-License-Identifier: MIT
 */
#include "ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXL 3  /* layers of the models enumerated here */
#define MAXW 12 /* their largest state width */

typedef struct lay {
    int64_t nl, w, np;
    int64_t size[MAXL], off[MAXL];
    int units[MAXL];
    int64_t woff[MAXL], boff[MAXL], lvoff;
    double mu[MAXW]; /* the offsets (binary and spin models) */
} lay;

static void lay_get(const ebm_model_t *m, lay *ly)
{
    memset(ly, 0, sizeof *ly);
    ly->nl = ebm_model_num_layers(m);
    ck_assert(ly->nl >= 2 && ly->nl <= MAXL);
    ly->w = ebm_model_state_width(m);
    ly->np = ebm_model_param_count(m);
    int64_t rows, cols;
    for (int64_t l = 0; l < ly->nl; l++) {
        ly->size[l] = ebm_model_layer_size(m, l);
        ly->off[l] = ebm_model_layer_offset(m, l);
        ly->units[l] = ebm_model_layer_units(m, l);
        ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, l, &ly->boff[l], &rows, &cols),
                         EBM_OK);
        ck_assert(rows == 1 && cols == ly->size[l]);
        if (l >= 1) {
            ck_assert_int_eq(
                ebm_model_param_block(m, EBM_PARAM_WEIGHT, l, &ly->woff[l], &rows, &cols), EBM_OK);
            ck_assert(rows == ly->size[l - 1] && cols == ly->size[l]);
        }
    }
    if (ly->w <= MAXW) {
        float mf[MAXW];
        ck_assert_int_eq(ebm_model_get_offsets(m, mf), EBM_OK);
        for (int64_t k = 0; k < ly->w; k++) {
            ly->mu[k] = mf[k];
        }
    }
    ly->lvoff = -1;
    if (ly->units[0] == G_) {
        ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &ly->lvoff, &rows, &cols),
                         EBM_OK);
    }
}

static double *params_d(const ebm_model_t *m, int64_t np)
{
    float *pf = malloc((size_t)np * sizeof *pf);
    double *p = malloc((size_t)np * sizeof *p);
    ck_assert(pf != NULL && p != NULL);
    ck_assert_int_eq(ebm_model_get_params(m, pf), EBM_OK);
    for (int64_t i = 0; i < np; i++) {
        p[i] = pf[i];
    }
    free(pf);
    return p;
}

/* State number k of a binary/spin model: bit i is unit i. */
static void state_of(const lay *ly, uint64_t k, float *x)
{
    for (int64_t l = 0; l < ly->nl; l++) {
        for (int64_t j = 0; j < ly->size[l]; j++) {
            int bit = (int)(k >> (ly->off[l] + j) & 1u);
            x[ly->off[l] + j] = ly->units[l] == S_ ? (bit ? 1.0f : -1.0f) : (float)bit;
        }
    }
}

/* x - mu at unit k of a binary/spin state. */
static double xc(const lay *ly, const float *x, int64_t k) { return x[k] - ly->mu[k]; }

static double energy_d(const lay *ly, const double *p, const float *x)
{
    double e = 0.0;
    for (int64_t l = 0; l < ly->nl; l++) {
        for (int64_t j = 0; j < ly->size[l]; j++) {
            e -= p[ly->boff[l] + j] * xc(ly, x, ly->off[l] + j);
        }
    }
    for (int64_t l = 1; l < ly->nl; l++) {
        for (int64_t i = 0; i < ly->size[l - 1]; i++) {
            for (int64_t j = 0; j < ly->size[l]; j++) {
                e -= xc(ly, x, ly->off[l - 1] + i) * p[ly->woff[l] + i * ly->size[l] + j] *
                     xc(ly, x, ly->off[l] + j);
            }
        }
    }
    return e;
}

/* acc += c * dE/dtheta at x (binary/spin). */
static void add_de(const lay *ly, const float *x, double c, double *acc)
{
    for (int64_t l = 0; l < ly->nl; l++) {
        for (int64_t j = 0; j < ly->size[l]; j++) {
            acc[ly->boff[l] + j] -= c * xc(ly, x, ly->off[l] + j);
        }
    }
    for (int64_t l = 1; l < ly->nl; l++) {
        for (int64_t i = 0; i < ly->size[l - 1]; i++) {
            for (int64_t j = 0; j < ly->size[l]; j++) {
                acc[ly->woff[l] + i * ly->size[l] + j] -=
                    c * xc(ly, x, ly->off[l - 1] + i) * xc(ly, x, ly->off[l] + j);
            }
        }
    }
}

/* g = (1/n) sum_r d/dtheta log p(v_r), binary or spin model, by enumeration. */
static void exact_grad_disc(const ebm_model_t *m, int64_t n, const float *data, int64_t ldd,
                            double *g)
{
    lay ly;
    lay_get(m, &ly);
    ck_assert(ly.w <= MAXW);
    const int64_t ns = (int64_t)1 << ly.w, np = ly.np, n0 = ly.size[0];
    double *p = params_d(m, np);
    double *e = malloc((size_t)ns * sizeof *e);
    double *gm = calloc((size_t)np, sizeof *gm), *gp = calloc((size_t)np, sizeof *gp);
    double *tmp = calloc((size_t)np, sizeof *tmp);
    ck_assert(e != NULL && gm != NULL && gp != NULL && tmp != NULL);
    float x[MAXW];
    double emin = INFINITY;
    for (int64_t k = 0; k < ns; k++) {
        state_of(&ly, (uint64_t)k, x);
        e[k] = energy_d(&ly, p, x);
        double el;
        ck_assert_int_eq(ebm_model_energy(m, 1, x, ly.w, &el), EBM_OK);
        ck_assert_msg(fabs(el - e[k]) <= 1e-9 * (1.0 + fabs(e[k])), "energy of state %lld: %.17g vs %.17g",
                      (long long)k, el, e[k]);
        emin = e[k] < emin ? e[k] : emin;
    }
    double z = 0.0;
    for (int64_t k = 0; k < ns; k++) {
        state_of(&ly, (uint64_t)k, x);
        double wk = exp(-(e[k] - emin));
        z += wk;
        add_de(&ly, x, wk, gm);
    }
    for (int64_t r = 0; r < n; r++) {
        const float *v = data + r * ldd;
        double zv = 0.0;
        memset(tmp, 0, (size_t)np * sizeof *tmp);
        for (int64_t k = 0; k < ns; k++) {
            state_of(&ly, (uint64_t)k, x);
            if (memcmp(x, v, (size_t)n0 * sizeof *x) != 0) {
                continue;
            }
            double wk = exp(-(e[k] - emin));
            zv += wk;
            add_de(&ly, x, wk, tmp);
        }
        ck_assert(zv > 0.0);
        for (int64_t i = 0; i < np; i++) {
            gp[i] += tmp[i] / zv / (double)n;
        }
    }
    for (int64_t i = 0; i < np; i++) {
        g[i] = -gp[i] + gm[i] / z;
    }
    free(p);
    free(e);
    free(gm);
    free(gp);
    free(tmp);
}

/* The same for a GRBM (closed forms in the header comment). */
static void exact_grad_grbm(const ebm_model_t *m, int64_t n, const float *data, int64_t ldd,
                            double *g)
{
    lay ly;
    lay_get(m, &ly);
    ck_assert(ly.nl == 2 && ly.units[0] == G_);
    const int64_t n0 = ly.size[0], n1 = ly.size[1], np = ly.np, w = ly.w;
    ck_assert(n0 <= 8 && n1 <= 8);
    const int spin = ly.units[1] == S_;
    double *p = params_d(m, np);
    double mu[8], s2[8], b[8], W[8][8];
    for (int64_t i = 0; i < n0; i++) {
        mu[i] = p[ly.boff[0] + i];
        s2[i] = exp(p[ly.lvoff + i]);
        for (int64_t j = 0; j < n1; j++) {
            W[i][j] = p[ly.woff[1] + i * n1 + j];
        }
    }
    for (int64_t j = 0; j < n1; j++) {
        b[j] = p[ly.boff[1] + j];
    }
    const int64_t nh = (int64_t)1 << n1;
    double lw[256], f0[256], lwmax = -INFINITY;
    float x[MAXW];
    memset(x, 0, sizeof x);
    for (int64_t k = 0; k < nh; k++) {
        double h[8], s = 0.0;
        for (int64_t j = 0; j < n1; j++) {
            int bit = (int)(k >> j & 1);
            h[j] = spin ? (bit ? 1.0 : -1.0) : bit;
            x[n0 + j] = (float)h[j];
            s += b[j] * h[j];
        }
        for (int64_t i = 0; i < n0; i++) {
            double a = 0.0;
            for (int64_t j = 0; j < n1; j++) {
                a += W[i][j] * h[j];
            }
            double mi = mu[i] + a;
            s += (mi * mi - mu[i] * mu[i]) / (2.0 * s2[i]);
        }
        lw[k] = s;
        lwmax = s > lwmax ? s : lwmax;
        ck_assert_int_eq(ebm_model_free_energy(m, 1u, 1, x, w, &f0[k]), EBM_OK);
    }
    /* -F_0(h) and log p~(h) differ by a constant. */
    for (int64_t k = 1; k < nh; k++) {
        double d = (lw[k] + f0[k]) - (lw[0] + f0[0]);
        ck_assert_msg(fabs(d) <= 1e-9 * (1.0 + fabs(lw[k]) + fabs(f0[k])),
                      "log p(h) of h = %lld differs from -F_0(h) by %g", (long long)k, d);
    }
    double *gm = calloc((size_t)np, sizeof *gm), *gp = calloc((size_t)np, sizeof *gp);
    ck_assert(gm != NULL && gp != NULL);
    double z = 0.0;
    for (int64_t k = 0; k < nh; k++) {
        double h[8], pk = exp(lw[k] - lwmax);
        z += pk;
        for (int64_t j = 0; j < n1; j++) {
            int bit = (int)(k >> j & 1);
            h[j] = spin ? (bit ? 1.0 : -1.0) : bit;
            gm[ly.boff[1] + j] -= pk * h[j];
        }
        for (int64_t i = 0; i < n0; i++) {
            double a = 0.0;
            for (int64_t j = 0; j < n1; j++) {
                a += W[i][j] * h[j];
            }
            double mi = mu[i] + a;
            for (int64_t j = 0; j < n1; j++) {
                gm[ly.woff[1] + i * n1 + j] -= pk * (mi / s2[i]) * h[j];
            }
            gm[ly.boff[0] + i] -= pk * a / s2[i];
            gm[ly.lvoff + i] += pk * (-(s2[i] + a * a) / (2.0 * s2[i]) + mi * a / s2[i]);
        }
    }
    for (int64_t i = 0; i < np; i++) {
        gm[i] /= z;
    }
    float *gf = malloc((size_t)np * sizeof *gf);
    double *gr = malloc((size_t)np * sizeof *gr);
    ck_assert(gf != NULL && gr != NULL);
    for (int64_t r = 0; r < n; r++) {
        const float *v = data + r * ldd;
        double eh[8];
        memset(gr, 0, (size_t)np * sizeof *gr);
        for (int64_t j = 0; j < n1; j++) {
            double c = b[j];
            for (int64_t i = 0; i < n0; i++) {
                c += v[i] * W[i][j] / s2[i];
            }
            eh[j] = spin ? tanh(c) : 1.0 / (1.0 + exp(-c));
            gr[ly.boff[1] + j] = eh[j];
        }
        for (int64_t i = 0; i < n0; i++) {
            double a = 0.0, d = v[i] - mu[i];
            for (int64_t j = 0; j < n1; j++) {
                a += W[i][j] * eh[j];
                gr[ly.woff[1] + i * n1 + j] = v[i] / s2[i] * eh[j];
            }
            gr[ly.boff[0] + i] = d / s2[i];
            gr[ly.lvoff + i] = d * d / (2.0 * s2[i]) - v[i] * a / s2[i];
        }
        /* The library's dF(v)/dtheta must be -gr. */
        memset(x, 0, sizeof x);
        memcpy(x, v, (size_t)n0 * sizeof *x);
        memset(gf, 0, (size_t)np * sizeof *gf);
        double one = 1.0;
        ck_assert_int_eq(ebm_model_energy_grad(m, 2u, 1, x, w, &one, gf), EBM_OK);
        for (int64_t i = 0; i < np; i++) {
            ck_assert_msg(fabs(gf[i] + gr[i]) <= 1e-5 * (1.0 + fabs(gr[i])),
                          "positive phase, parameter %lld: library %g, here %g", (long long)i,
                          -(double)gf[i], gr[i]);
            gp[i] += gr[i] / (double)n;
        }
    }
    for (int64_t i = 0; i < np; i++) {
        g[i] = gp[i] + gm[i];
    }
    free(gf);
    free(gr);
    free(gm);
    free(gp);
    free(p);
}

void ref_exact_grad(const ebm_model_t *m, int64_t n, const float *data, int64_t ldd, double *g)
{
    if (ebm_model_layer_units(m, 0) == G_) {
        exact_grad_grbm(m, n, data, ldd, g);
    } else {
        exact_grad_disc(m, n, data, ldd, g);
    }
}
