/*
 * A GRBM with 3 visible and 2 hidden units whose exact visible density is
 * a mixture of four Gaussians (ref.h),
 *   p(v) = sum_h p(h) N(v; mu + W h, diag(sigma^2)),
 *   p(h) proportional to exp(-F_0(h)),
 * with F_0 the free energy with layer 0 summed out (ebm_model_free_energy
 * with sum_out = 1, constants kept), so that the moments of v, of (v, h) and
 * the law of h are computed here exactly, in double; exact draws of p(v, h)
 * with the test's own generator; and the moments of K Langevin steps with h
 * fixed (Liao et al. 2022, eq. 11) by the forward recursion of one step.
 *
 * SPDX-License-Identifier: MIT
 */
#include "ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NV REF_GRBM_NV
#define NH REF_GRBM_NH
#define WIDTH REF_GRBM_WIDTH
#define NSTATES REF_GRBM_NSTATES

/* Four components 2.5 to 4.8 sigma apart (Mahalanobis) with weights from
 * 0.07 to 0.40 (binary hidden units) or 0.08 to 0.52 (spin): clearly
 * multimodal. The variances differ per unit and average 1.42, so that
 * EBM_SAMPLER_SCALE_BY_VARIANCE visibly changes the steps. */
static const double MU[NV] = {0.5, -0.3, 0.2};
static const double LOGVAR[NV] = {0.4, -0.3, 0.7};
static const double W0[NV][NH] = {{2.0, 0.3}, {-0.4, 2.2}, {1.2, -1.0}};

void ref_grbm_setup(ref_grbm *g, int hid)
{
    memset(g, 0, sizeof *g);
    int64_t sizes[2] = {NV, NH};
    g->m = t_model(2, sizes, EBM_UNITS_GAUSSIAN, hid);
    g->hid = hid;
    /* Spin hidden units move the means by 2 W: a smaller W keeps the same
     * separation; the biases even out the weights of the components. */
    double scale = hid == EBM_UNITS_SPIN ? 0.75 : 1.3;
    const double b_bin[NH] = {-3.5, -4.2}, b_spin[NH] = {-0.56, 0.57};
    for (int i = 0; i < NV; i++) {
        g->mu[i] = MU[i];
        g->sig2[i] = exp(LOGVAR[i]);
        for (int j = 0; j < NH; j++) {
            g->w[i][j] = scale * W0[i][j];
        }
    }
    for (int j = 0; j < NH; j++) {
        g->b[j] = hid == EBM_UNITS_SPIN ? b_spin[j] : b_bin[j];
    }
    int64_t np = ebm_model_param_count(g->m), off;
    float *p = calloc((size_t)np, sizeof *p);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(ebm_model_param_block(g->m, EBM_PARAM_WEIGHT, 1, &off, NULL, NULL), EBM_OK);
    for (int i = 0; i < NV; i++) {
        for (int j = 0; j < NH; j++) {
            p[off + i * NH + j] = (float)g->w[i][j];
        }
    }
    ck_assert_int_eq(ebm_model_param_block(g->m, EBM_PARAM_BIAS, 0, &off, NULL, NULL), EBM_OK);
    for (int i = 0; i < NV; i++) {
        p[off + i] = (float)MU[i];
    }
    ck_assert_int_eq(ebm_model_param_block(g->m, EBM_PARAM_BIAS, 1, &off, NULL, NULL), EBM_OK);
    for (int j = 0; j < NH; j++) {
        p[off + j] = (float)g->b[j];
    }
    ck_assert_int_eq(ebm_model_param_block(g->m, EBM_PARAM_LOGVAR, 0, &off, NULL, NULL), EBM_OK);
    for (int i = 0; i < NV; i++) {
        p[off + i] = (float)LOGVAR[i];
    }
    ck_assert_int_eq(ebm_model_set_params(g->m, p), EBM_OK);
    free(p);
    /* The parameters as the model stores them (floats), in double. */
    for (int i = 0; i < NV; i++) {
        g->mu[i] = (float)g->mu[i];
        g->sig2[i] = exp((double)(float)LOGVAR[i]);
        for (int j = 0; j < NH; j++) {
            g->w[i][j] = (float)g->w[i][j];
        }
    }

    /* p(h) from F_0(h): the visible layer summed out, constants kept. */
    float lo = hid == EBM_UNITS_SPIN ? -1.0f : 0.0f;
    float x[NSTATES * WIDTH] = {0};
    double f[NSTATES], fmin = INFINITY, z = 0.0;
    for (int s = 0; s < NSTATES; s++) {
        g->hval[s][0] = (s >> 1) ? 1.0f : lo;
        g->hval[s][1] = (s & 1) ? 1.0f : lo;
        x[s * WIDTH + NV] = g->hval[s][0];
        x[s * WIDTH + NV + 1] = g->hval[s][1];
    }
    ck_assert_int_eq(ebm_model_free_energy(g->m, 1u, NSTATES, x, WIDTH, f), EBM_OK);
    for (int s = 0; s < NSTATES; s++) {
        fmin = fmin < f[s] ? fmin : f[s];
    }
    for (int s = 0; s < NSTATES; s++) {
        g->ph[s] = exp(-(f[s] - fmin));
        z += g->ph[s];
    }
    for (int s = 0; s < NSTATES; s++) {
        g->ph[s] /= z;
        for (int i = 0; i < NV; i++) {
            g->comp[s][i] = g->mu[i] + g->w[i][0] * g->hval[s][0] + g->w[i][1] * g->hval[s][1];
        }
    }
    /* Mixture moments: E v = sum p m_h; Cov = sum p m_h m_h^T - E v E v^T + diag(sigma^2). */
    for (int s = 0; s < NSTATES; s++) {
        for (int i = 0; i < NV; i++) {
            g->ev[i] += g->ph[s] * g->comp[s][i];
            for (int j = 0; j < NH; j++) {
                g->evh[i][j] += g->ph[s] * g->comp[s][i] * g->hval[s][j];
            }
            for (int k = 0; k < NV; k++) {
                g->cov[i][k] += g->ph[s] * g->comp[s][i] * g->comp[s][k];
            }
        }
    }
    for (int i = 0; i < NV; i++) {
        for (int k = 0; k < NV; k++) {
            g->cov[i][k] -= g->ev[i] * g->ev[k];
        }
        g->cov[i][i] += g->sig2[i];
        g->ev2 += g->cov[i][i] + g->ev[i] * g->ev[i];
    }
}

static double ref_normal_draw(uint64_t *state)
{
    double u1 = t_uniform(state), u2 = t_uniform(state);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * REF_PI * u2);
}

/* n exact draws of p(v, h): h ~ p(h), then v ~ N(mu + W h, sigma^2). */
void ref_grbm_draws(const ref_grbm *g, uint64_t seed, int64_t n, float *x, int64_t ldx)
{
    for (int64_t r = 0; r < n; r++) {
        double u = t_uniform(&seed), c = 0.0;
        int s = 0;
        while (s < NSTATES - 1 && u >= (c += g->ph[s])) {
            s++;
        }
        float *row = x + r * ldx;
        for (int i = 0; i < NV; i++) {
            row[i] = (float)(g->comp[s][i] + sqrt(g->sig2[i]) * ref_normal_draw(&seed));
        }
        row[NV] = g->hval[s][0];
        row[NV + 1] = g->hval[s][1];
    }
}

/* The step sizes as documented: alpha0 (times mean sigma^2 with
 * scale_by_variance), cosine-annealed by Liao eq. 22. */
void ref_langevin_steps(const ref_grbm *g, const ref_langevin_config *c, double *alpha)
{
    double alpha0 = c->step_size;
    if (c->scale_by_variance) {
        alpha0 *= (g->sig2[0] + g->sig2[1] + g->sig2[2]) / NV;
    }
    for (int64_t k = 1; k <= c->steps; k++) {
        alpha[k - 1] = c->cosine ? 0.5 * alpha0 * (1.0 + cos(REF_PI * (double)k / (double)c->steps))
                                 : alpha0;
    }
}

/*
 * Mean and variance of v after K Langevin steps with h fixed, by the
 * forward recursion of one step (not by eq. 11's products):
 *   m_k = (1 - a_k/sigma^2) m_{k-1} + a_k c / sigma^2,
 *   s_k = (1 - a_k/sigma^2)^2 s_{k-1} + 2 a_k,    m_0 = v, s_0 = 0,
 * with a_k = alpha_k, or alpha_k sigma^2 when preconditioned.
 * `broken` uses (1 - a_k/sigma^2) unsquared in s_k: eq. 11 with beta_k
 * in place of beta_k^2, the twin that must fail.
 */
void ref_langevin_moments(const ref_grbm *g, const ref_langevin_config *c, const double *v,
                          const double *cm, int broken, double *mean, double *var)
{
    double alpha[64];
    ref_langevin_steps(g, c, alpha);
    for (int i = 0; i < NV; i++) {
        double mk = v[i], sk = 0.0;
        for (int64_t k = 0; k < c->steps; k++) {
            const double a = alpha[k] * (c->precondition ? g->sig2[i] : 1.0);
            double f = 1.0 - a / g->sig2[i];
            mk = f * mk + a * cm[i] / g->sig2[i];
            sk = (broken ? f : f * f) * sk + 2.0 * a;
        }
        mean[i] = mk;
        var[i] = sk;
    }
}
