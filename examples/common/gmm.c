/* Gaussian mixtures with diagonal covariances: see gmm.h. */
#include "gmm.h"

#include <math.h>
#include <string.h>

static const double LOG_2PI = 1.8378770664093454836;

int gmm_liao(gmm *g, int kind)
{
    /* Liao et al.'s published code (main.py, create_dataset). */
    static const double w[3] = {0.33, 0.33, 0.34};
    static const double mu[3][2] = {{-5, -5}, {5, -5}, {0, 5}};
    static const double sd_iso[3][2] = {{1, 1}, {1, 1}, {1, 1}};
    static const double sd_aniso[3][2] = {{1.25, 0.5}, {1.25, 0.5}, {0.5, 1.25}};
    if (kind != GMM_ISOTROPIC && kind != GMM_ANISOTROPIC) {
        return -1;
    }
    memset(g, 0, sizeof *g);
    g->name = kind == GMM_ISOTROPIC ? "isotropic" : "anisotropic";
    g->k = 3;
    g->dim = 2;
    for (int c = 0; c < 3; c++) {
        g->w[c] = w[c];
        for (int d = 0; d < 2; d++) {
            g->mu[c][d] = mu[c][d];
            g->sd[c][d] = kind == GMM_ISOTROPIC ? sd_iso[c][d] : sd_aniso[c][d];
        }
    }
    return 0;
}

int gmm_sample(const gmm *g, ebm_rng_t *rng, int64_t n, float *x, int64_t ldx, int *comp)
{
    float u, z[GMM_MAX_DIM];
    for (int64_t r = 0; r < n; r++) {
        int rc = ebm_rng_uniform(rng, 1, &u);
        if (rc == EBM_OK) {
            rc = ebm_rng_normal(rng, g->dim, z);
        }
        if (rc != EBM_OK) {
            return rc;
        }
        int c = 0;
        double cum = g->w[0];
        while (c + 1 < g->k && (double)u >= cum) {
            cum += g->w[++c];
        }
        for (int d = 0; d < g->dim; d++) {
            x[r * ldx + d] = (float)(g->mu[c][d] + g->sd[c][d] * (double)z[d]);
        }
        if (comp != NULL) {
            comp[r] = c;
        }
    }
    return 0;
}

/* log w_c + log N(x; mu_c, diag(sd_c^2)). */
static double log_joint(const gmm *g, int c, const double *x)
{
    double s = log(g->w[c]) - 0.5 * g->dim * LOG_2PI;
    for (int d = 0; d < g->dim; d++) {
        const double z = (x[d] - g->mu[c][d]) / g->sd[c][d];
        s -= 0.5 * z * z + log(g->sd[c][d]);
    }
    return s;
}

double gmm_log_density(const gmm *g, const double *x)
{
    double lj[GMM_MAX_COMPONENTS], top = -INFINITY, sum = 0.0;
    for (int c = 0; c < g->k; c++) {
        lj[c] = log_joint(g, c, x);
        top = lj[c] > top ? lj[c] : top;
    }
    for (int c = 0; c < g->k; c++) {
        sum += exp(lj[c] - top);
    }
    return top + log(sum);
}

int gmm_assign(const gmm *g, const double *x)
{
    int best = 0;
    double top = log_joint(g, 0, x);
    for (int c = 1; c < g->k; c++) {
        const double lj = log_joint(g, c, x);
        if (lj > top) {
            top = lj;
            best = c;
        }
    }
    return best;
}

double gmm_nearest_distance(const gmm *g, const double *x)
{
    double best = INFINITY;
    for (int c = 0; c < g->k; c++) {
        double s = 0.0;
        for (int d = 0; d < g->dim; d++) {
            const double z = (x[d] - g->mu[c][d]) / g->sd[c][d];
            s += z * z;
        }
        best = s < best ? s : best;
    }
    return sqrt(best);
}
