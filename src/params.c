/* The model's parameters: get, set and axpy, each validating every value
 * (finite; log-variances and dReLU log gammas within +-EBM__LOGVAR_MAX)
 * before the model changes, and naming a bad one by its block and index. */
#include "error.h"
#include "model.h"
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Name parameter i as its block and index, e.g. "W_2[3,4]". */
static void param_name(const ebm_model_t *m, int64_t i, char *buf, size_t size)
{
    if (m->shape_off >= 0 && i >= m->shape_off) {
        static const char *const rows[3] = {"log_gamma_plus_1", "log_gamma_minus_1", "delta_1"};
        const int64_t k = i - m->shape_off, n = m->size[1];
        snprintf(buf, size, "%s[%lld]", rows[k / n], (long long)(k % n));
        return;
    }
    if (m->logvar_off >= 0 && i >= m->logvar_off) {
        snprintf(buf, size, "logvar_0[%lld]", (long long)(i - m->logvar_off));
        return;
    }
    for (int64_t l = m->n_layers - 1; l >= 0; l--) {
        if (i >= m->b_off[l]) {
            snprintf(buf, size, "b_%lld[%lld]", (long long)l, (long long)(i - m->b_off[l]));
            return;
        }
    }
    for (int64_t l = m->n_layers - 1; l >= 1; l--) {
        if (i >= m->w_off[l]) {
            int64_t k = i - m->w_off[l];
            snprintf(buf, size, "W_%lld[%lld,%lld]", (long long)l, (long long)(k / m->size[l]),
                     (long long)(k % m->size[l]));
            return;
        }
    }
    snprintf(buf, size, "parameter %lld", (long long)i);
}

/* 0 if value v may stand at index i, else an error with a message. */
static int check_param_value(const ebm_model_t *m, ebm__msg *msg, const char *name, int64_t i,
                             double v)
{
    char where[64];
    if (!isfinite(v)) {
        param_name(m, i, where, sizeof where);
        return ebm__fail(msg, EBM_EVALUE, "%s: %s (index %lld) is %g; parameters must be finite",
                         name, where, (long long)i, v);
    }
    if (m->shape_off >= 0 && i >= m->shape_off && i < m->shape_off + 2 * m->size[1] &&
        fabs(v) > EBM__LOGVAR_MAX) {
        param_name(m, i, where, sizeof where);
        return ebm__fail(msg, EBM_EVALUE,
                         "%s: %s (index %lld) is %g; dReLU log gammas must be within +-%g",
                         name, where, (long long)i, v, EBM__LOGVAR_MAX);
    }
    if (m->logvar_off >= 0 && i >= m->logvar_off && i < m->logvar_off + m->size[0] &&
        fabs(v) > EBM__LOGVAR_MAX) {
        param_name(m, i, where, sizeof where);
        return ebm__fail(msg, EBM_EVALUE,
                         "%s: %s (index %lld) is %g; log-variances must be within +-%g",
                         name, where, (long long)i, v, EBM__LOGVAR_MAX);
    }
    return EBM_OK;
}

int ebm__check_params(const ebm_model_t *m, ebm__msg *msg, const char *name, const float *p)
{
    for (int64_t i = 0; i < m->n_params; i++) {
        EBM__PROPAGATE(check_param_value(m, msg, name, i, p[i]));
    }
    return EBM_OK;
}

int ebm_model_get_params(const ebm_model_t *m, float *out)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    if (out == NULL) {
        return ebm__model_error(m, EBM_ENULL, "out is NULL");
    }
    memcpy(out, m->params, (size_t)m->n_params * sizeof *out);
    return EBM_OK;
}

int ebm_model_set_params(ebm_model_t *m, const float *in)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    if (in == NULL) {
        return ebm__model_error(m, EBM_ENULL, "in is NULL");
    }
    int rc = ebm__check_params(m, &msg, "in", in);
    if (rc != EBM_OK) {
        return ebm__model_set_error(m, rc, &msg);
    }
    memmove(m->params, in, (size_t)m->n_params * sizeof *in);
    ebm__model_refresh(m);
    return EBM_OK;
}

int ebm_model_axpy_params(ebm_model_t *m, float alpha, const float *g)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    if (g == NULL) {
        return ebm__model_error(m, EBM_ENULL, "g is NULL");
    }
    if (!isfinite(alpha)) {
        return ebm__model_error(m, EBM_EVALUE, "alpha is %g; it must be finite", (double)alpha);
    }
    /* First pass checks every result, so that a failure changes nothing: a
     * quick scan (NaN fails every comparison), then the exact check with a
     * message only if it found something. */
    const ebm__kernels *k = ebm__kern();
    const int suspect = k->update_suspect(m->n_params, alpha, g, m->params);
    for (int64_t i = suspect ? 0 : m->n_params; i < m->n_params; i++) {
        if (!isfinite(g[i])) {
            char where[64];
            param_name(m, i, where, sizeof where);
            return ebm__model_error(m, EBM_EVALUE, "g[%lld] (%s) is %g; gradients must be finite",
                                    (long long)i, where, (double)g[i]);
        }
        int rc = check_param_value(m, &msg, "theta + alpha*g", i, m->params[i] + alpha * g[i]);
        if (rc != EBM_OK) {
            return ebm__model_set_error(m, rc, &msg);
        }
    }
    /* The bounded blocks (log-variances, dReLU log gammas) are checked even
     * when the scan found nothing: their bound is not float's. */
    const int64_t bounded = m->logvar_off >= 0   ? m->logvar_off
                            : m->shape_off >= 0 ? m->shape_off
                                                : m->n_params;
    for (int64_t i = bounded; i < m->n_params; i++) {
        int rc = check_param_value(m, &msg, "theta + alpha*g", i, m->params[i] + alpha * g[i]);
        if (rc != EBM_OK) {
            return ebm__model_set_error(m, rc, &msg);
        }
    }
    /* The double weights wait for a call that reads them (ebm__weights_d);
     * the small blocks after them are read directly, so they follow now. */
    const int64_t nw = m->b_off[0];
    __atomic_store_n(&m->weights_d_valid, 0, __ATOMIC_RELAXED);
    k->update_apply(nw, alpha, g, m->params, NULL);
    k->update_apply(m->n_params - nw, alpha, g + nw, m->params + nw, m->params_d + nw);
    ebm__refresh_gaussian(m);
    ebm__refresh_bias(m);
    m->bounds_valid = 0;
    return EBM_OK;
}
