/* Centring: the centring offsets mu of binary and spin units (Montavon and Mueller
 * 2012; Melchior, Fischer and Wiskott 2016). The energy is
 *   E(x) = -sum_l b_l.(x_l - mu_l) - sum_l (x_{l-1} - mu_{l-1})^T W_l (x_l - mu_l);
 * the model keeps the biases and constant this expands to (model.c,
 * ebm__refresh_bias), so that every sampler, search and estimator runs
 * unchanged on them. */
#include "error.h"
#include "model.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int ebm_model_get_offsets(const ebm_model_t *m, float *out)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    if (out == NULL) {
        return ebm__model_error(m, EBM_ENULL, "out is NULL");
    }
    memcpy(out, m->mu, (size_t)m->width * sizeof *out);
    return EBM_OK;
}

int ebm__check_centring(const ebm_model_t *m, ebm__msg *msg, const char *name, const float *mu)
{
    for (int64_t l = 0; l < m->n_layers; l++) {
        const double lo = m->units[l] == EBM_UNITS_SPIN ? -1.0 : 0.0;
        for (int64_t j = 0; j < m->size[l]; j++) {
            const double v = mu[m->column[l] + j];
            if (ebm__is_gaussian(m, 0) && v != 0.0) {
                return ebm__fail(msg, EBM_EUNSUPPORTED,
                                 "%s[%lld] (layer %lld, unit %lld) is %g; a model with Gaussian "
                                 "visible units has no offsets (all must be 0)",
                                 name, (long long)(m->column[l] + j), (long long)l, (long long)j,
                                 v);
            }
            if (ebm__is_drelu(m, l) && v != 0.0) {
                return ebm__fail(msg, EBM_EUNSUPPORTED,
                                 "%s[%lld] (layer %lld, unit %lld) is %g; dReLU units have no "
                                 "offsets (theirs must be 0)",
                                 name, (long long)(m->column[l] + j), (long long)l, (long long)j,
                                 v);
            }
            if (!(v >= lo && v <= 1.0)) {
                return ebm__fail(msg, EBM_EVALUE,
                                 "%s[%lld] (layer %lld, unit %lld) is %g; offsets of %s units "
                                 "must be in [%g, 1]",
                                 name, (long long)(m->column[l] + j), (long long)l, (long long)j,
                                 v,
                                 m->units[l] == EBM_UNITS_SPIN    ? "spin"
                                 : m->units[l] == EBM_UNITS_POTTS ? "Potts"
                                                                  : "binary",
                                 lo);
            }
        }
    }
    return EBM_OK;
}

/*
 * Replace the offsets by mu; with keep_law, first move the biases so that
 * the centred biases bt, and so the distribution, stay the same:
 * b_l += W_l^T (mu'_{l-1} - mu_{l-1}) + W_{l+1} (mu'_{l+1} - mu_{l+1}).
 * The new biases are computed in double, checked, then stored.
 */
static int replace_centring(ebm_model_t *m, ebm__msg *msg, const float *mu, int keep_law)
{
    const int64_t w = m->width;
    double *b = NULL;
    if (keep_law) {
        b = malloc((size_t)w * sizeof *b);
        if (b == NULL) {
            return ebm__fail(msg, EBM_ENOMEM, "out of memory moving the biases");
        }
        memcpy(b, m->params_d + m->b_off[0], (size_t)w * sizeof *b);
        ebm__add_coupled(m, mu, m->mu, 1.0, b);
        for (int64_t j = 0; j < w; j++) {
            if (!(fabs(b[j]) <= FLT_MAX)) {
                int64_t l = m->n_layers - 1;
                while (m->column[l] > j) {
                    l--;
                }
                const int rc = ebm__fail(msg, EBM_EVALUE,
                                         "moving the offsets would make b_%lld[%lld] %g, beyond "
                                         "float's range; the model is unchanged",
                                         (long long)l, (long long)(j - m->column[l]), b[j]);
                free(b);
                return rc;
            }
        }
        for (int64_t j = 0; j < w; j++) {
            if (b[j] != m->params_d[m->b_off[0] + j]) { /* an unmoved bias keeps its bits */
                m->params[m->b_off[0] + j] = (float)b[j];
                m->params_d[m->b_off[0] + j] = (double)m->params[m->b_off[0] + j];
            }
        }
        free(b);
    }
    int centred = 0;
    for (int64_t j = 0; j < w; j++) {
        m->mu[j] = mu[j] + 0.0f; /* -0 is stored as +0, as a file holds it */
        centred |= mu[j] != 0.0f;
    }
    m->centred = centred;
    ebm__refresh_bias(m);
    m->bounds_valid = 0;
    return EBM_OK;
}

int ebm_model_set_offsets(ebm_model_t *m, const float *mu, int keep_law)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = EBM_OK;
    if (mu == NULL) {
        rc = ebm__fail(&msg, EBM_ENULL, "mu is NULL");
    } else if (keep_law != 0 && keep_law != 1) {
        rc = ebm__fail(&msg, EBM_EVALUE, "keep_law is %d; it must be 0 or 1", keep_law);
    } else {
        rc = ebm__check_centring(m, &msg, "mu", mu);
    }
    if (rc == EBM_OK) {
        rc = replace_centring(m, &msg, mu, keep_law);
    }
    return rc == EBM_OK ? rc : ebm__model_set_error(m, rc, &msg);
}

int ebm_model_move_offsets(ebm_model_t *m, double rate, const float *target)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = EBM_OK;
    if (target == NULL) {
        rc = ebm__fail(&msg, EBM_ENULL, "target is NULL");
    } else if (!(rate >= 0.0 && rate <= 1.0)) {
        rc = ebm__fail(&msg, EBM_EVALUE, "rate is %g; it must be in [0, 1]", rate);
    } else {
        rc = ebm__check_centring(m, &msg, "target", target);
    }
    float *mu = NULL;
    if (rc == EBM_OK) {
        mu = malloc((size_t)m->width * sizeof *mu);
        if (mu == NULL) {
            rc = ebm__fail(&msg, EBM_ENOMEM, "out of memory moving the offsets");
        }
    }
    if (rc == EBM_OK) {
        /* A convex combination of two values in the unit's range stays in it. */
        for (int64_t j = 0; j < m->width; j++) {
            const double old = m->mu[j];
            mu[j] = (float)(old + rate * ((double)target[j] - old));
        }
        rc = replace_centring(m, &msg, mu, 1);
    }
    free(mu);
    return rc == EBM_OK ? rc : ebm__model_set_error(m, rc, &msg);
}
