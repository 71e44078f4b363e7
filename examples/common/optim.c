/* Stochastic gradient ascent: see optim.h. */
#include "optim.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const double pi = 3.14159265358979323846;

optim_sgd optim_sgd_plain(double lr)
{
    optim_sgd o = {lr, 0, 0, 0.0, 0, 0.0};
    return o;
}

double optim_sgd_rate(const optim_sgd *o)
{
    if (!o->cosine || o->total_steps < 1) {
        return o->lr;
    }
    const double t = o->step < o->total_steps ? (double)o->step : (double)o->total_steps;
    return 0.5 * o->lr * (1.0 + cos(pi * t / (double)o->total_steps));
}

/* ||g||_2 in double, in four independent sums (a quarter of the latency
 * of one running sum). */
static double grad_norm(int64_t n, const float *g)
{
    double sq[4] = {0.0, 0.0, 0.0, 0.0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        for (int k = 0; k < 4; k++) {
            sq[k] += (double)g[i + k] * (double)g[i + k];
        }
    }
    for (; i < n; i++) {
        sq[0] += (double)g[i] * (double)g[i];
    }
    return sqrt((sq[0] + sq[1]) + (sq[2] + sq[3]));
}

int optim_sgd_step(optim_sgd *o, ebm_model_t *m, const float *g)
{
    double scale = 1.0;
    const int64_t n = ebm_model_param_count(m);
    if (g != NULL && n > 0) {
        o->last_norm = grad_norm(n, g);
        if (o->clip_norm > 0.0 && o->last_norm > o->clip_norm) {
            scale = o->clip_norm / o->last_norm;
        }
    }
    int rc = ebm_model_axpy_params(m, (float)(optim_sgd_rate(o) * scale), g);
    if (rc == EBM_OK) {
        o->step++;
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* optim                                                                    */
/* ------------------------------------------------------------------------ */

optim_settings optim_settings_default(double lr)
{
    optim_settings s;
    memset(&s, 0, sizeof s);
    s.kind = OPTIM_SGD;
    s.lr = lr;
    s.schedule = OPTIM_CONSTANT;
    s.gamma = 1e-3;
    s.total_steps = 1;
    s.beta1 = 0.9;
    s.beta2 = 0.999;
    s.eps = 1e-8;
    return s;
}

const char *optim_settings_check(const optim_settings *s)
{
    if (s == NULL) {
        return "settings are NULL";
    }
    if (s->kind != OPTIM_SGD && s->kind != OPTIM_ADAM) {
        return "kind is not OPTIM_SGD or OPTIM_ADAM";
    }
    if (!(s->lr > 0.0) || !isfinite(s->lr)) {
        return "lr must be finite and > 0";
    }
    if (s->schedule < OPTIM_CONSTANT || s->schedule > OPTIM_COSINE) {
        return "schedule is not constant, invsqrt or cosine";
    }
    if (s->schedule == OPTIM_INVSQRT && !(s->gamma > 0.0 && isfinite(s->gamma))) {
        return "gamma must be finite and > 0 for the 1/sqrt schedule";
    }
    if (s->schedule == OPTIM_COSINE && s->total_steps < 1) {
        return "total_steps must be >= 1 for the cosine schedule";
    }
    if (!(s->momentum >= 0.0 && s->momentum < 1.0)) {
        return "momentum must be in [0, 1)";
    }
    if (s->kind == OPTIM_ADAM && !(s->beta1 >= 0.0 && s->beta1 < 1.0 && s->beta2 >= 0.0 &&
                                   s->beta2 < 1.0 && s->eps > 0.0)) {
        return "Adam needs beta1, beta2 in [0, 1) and eps > 0";
    }
    if (!(s->clip_norm >= 0.0) || !isfinite(s->clip_norm)) {
        return "clip_norm must be finite and >= 0";
    }
    return NULL;
}

int64_t optim_buffer_floats(const optim *o)
{
    if (o->set.kind == OPTIM_ADAM) {
        return 2 * o->n;
    }
    return o->set.momentum > 0.0 ? o->n : 0;
}

void optim_free(optim *o)
{
    if (o == NULL) {
        return;
    }
    free(o->m);
    free(o->v);
    free(o->dir);
    free(o->m_new);
    free(o->v_new);
    memset(o, 0, sizeof *o);
}

int optim_init(optim *o, const optim_settings *s, int64_t n_params)
{
    if (o == NULL) {
        return OPTIM_EARG;
    }
    memset(o, 0, sizeof *o);
    if (optim_settings_check(s) != NULL || n_params < 1 ||
        (uint64_t)n_params > SIZE_MAX / sizeof(float)) {
        return OPTIM_EARG;
    }
    o->set = *s;
    o->n = n_params;
    const size_t bytes = (size_t)n_params * sizeof(float);
    const int moments = s->kind == OPTIM_ADAM ? 2 : s->momentum > 0.0 ? 1 : 0;
    o->dir = malloc(bytes);
    int ok = o->dir != NULL;
    if (moments >= 1) {
        o->m = calloc((size_t)n_params, sizeof(float));
        o->m_new = malloc(bytes);
        ok = ok && o->m != NULL && o->m_new != NULL;
    }
    if (moments == 2) {
        o->v = calloc((size_t)n_params, sizeof(float));
        o->v_new = malloc(bytes);
        ok = ok && o->v != NULL && o->v_new != NULL;
    }
    if (!ok) {
        optim_free(o);
        return OPTIM_ENOMEM;
    }
    return OPTIM_OK;
}

double optim_rate(const optim *o)
{
    const optim_settings *s = &o->set;
    const double t = (double)o->step;
    switch (s->schedule) {
    case OPTIM_INVSQRT:
        return s->lr / sqrt(1.0 + s->gamma * t);
    case OPTIM_COSINE: {
        const double tt = t < (double)s->total_steps ? t : (double)s->total_steps;
        return 0.5 * s->lr * (1.0 + cos(pi * tt / (double)s->total_steps));
    }
    default:
        return s->lr;
    }
}

int optim_step(optim *o, ebm_model_t *m, const float *g)
{
    if (o == NULL || o->dir == NULL || m == NULL || g == NULL) {
        return EBM_ENULL;
    }
    if (ebm_model_param_count(m) != o->n) {
        return EBM_ESHAPE;
    }
    const int64_t n = o->n;
    const double norm = grad_norm(n, g);
    const float scale = o->set.clip_norm > 0.0 && norm > o->set.clip_norm
                            ? (float)(o->set.clip_norm / norm)
                            : 1.0f;
    const optim_settings *s = &o->set;
    if (s->kind == OPTIM_ADAM) {
        /* Bias corrections of step t + 1 (Kingma and Ba, Alg. 1). */
        const double t1 = (double)(o->step + 1);
        const float b1 = (float)s->beta1, b2 = (float)s->beta2, eps = (float)s->eps;
        const float c1 = (float)(1.0 / (1.0 - pow(s->beta1, t1)));
        const float c2 = (float)(1.0 / (1.0 - pow(s->beta2, t1)));
        for (int64_t i = 0; i < n; i++) {
            const float gi = scale * g[i];
            o->m_new[i] = b1 * o->m[i] + (1.0f - b1) * gi;
            o->v_new[i] = b2 * o->v[i] + (1.0f - b2) * gi * gi;
            o->dir[i] = c1 * o->m_new[i] / (sqrtf(c2 * o->v_new[i]) + eps);
        }
    } else if (o->m != NULL) {
        const float mu = (float)s->momentum;
        for (int64_t i = 0; i < n; i++) {
            o->m_new[i] = mu * o->m[i] + scale * g[i];
            o->dir[i] = o->m_new[i];
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            o->dir[i] = scale * g[i];
        }
    }
    const int rc = ebm_model_axpy_params(m, (float)optim_rate(o), o->dir);
    if (rc != EBM_OK) {
        return rc; /* buffers and step untouched: the scratch is discarded */
    }
    float *t;
    if (o->m != NULL) {
        t = o->m, o->m = o->m_new, o->m_new = t;
    }
    if (o->v != NULL) {
        t = o->v, o->v = o->v_new, o->v_new = t;
    }
    o->last_norm = norm;
    o->step++;
    return EBM_OK;
}

void optim_state_get(const optim *o, int64_t *step, float *buffers)
{
    *step = o->step;
    if (o->m != NULL) {
        memcpy(buffers, o->m, (size_t)o->n * sizeof(float));
    }
    if (o->v != NULL) {
        memcpy(buffers + o->n, o->v, (size_t)o->n * sizeof(float));
    }
}

int optim_state_set(optim *o, int64_t step, const float *buffers, int64_t n_floats)
{
    if (o == NULL || step < 0 || n_floats != optim_buffer_floats(o) ||
        (n_floats > 0 && buffers == NULL)) {
        return OPTIM_EARG;
    }
    o->step = step;
    if (o->m != NULL) {
        memcpy(o->m, buffers, (size_t)o->n * sizeof(float));
    }
    if (o->v != NULL) {
        memcpy(o->v, buffers + o->n, (size_t)o->n * sizeof(float));
    }
    return OPTIM_OK;
}

/* ------------------------------------------------------------------------ */
/* optim_average                                                            */
/* ------------------------------------------------------------------------ */

void optim_average_free(optim_average *a)
{
    if (a == NULL) {
        return;
    }
    free(a->mean);
    free(a->theta);
    memset(a, 0, sizeof *a);
    a->from = -1;
}

int optim_average_init(optim_average *a, int64_t n_params, int64_t from)
{
    if (a == NULL) {
        return OPTIM_EARG;
    }
    memset(a, 0, sizeof *a);
    a->from = -1;
    if (from < 0) {
        return OPTIM_OK;
    }
    if (n_params < 1 || (uint64_t)n_params > SIZE_MAX / sizeof(double)) {
        return OPTIM_EARG;
    }
    a->mean = calloc((size_t)n_params, sizeof *a->mean);
    a->theta = malloc((size_t)n_params * sizeof *a->theta);
    if (a->mean == NULL || a->theta == NULL) {
        optim_average_free(a);
        return OPTIM_ENOMEM;
    }
    a->n = n_params;
    a->from = from;
    return OPTIM_OK;
}

int optim_average_on(const optim_average *a)
{
    return a != NULL && a->mean != NULL;
}

int optim_average_update(optim_average *a, const ebm_model_t *m, int64_t step)
{
    if (!optim_average_on(a) || step <= a->from) {
        return EBM_OK;
    }
    if (m == NULL) {
        return EBM_ENULL;
    }
    if (ebm_model_param_count(m) != a->n) {
        return EBM_ESHAPE;
    }
    ebm_model_get_params(m, a->theta);
    const double k = (double)++a->count;
    for (int64_t i = 0; i < a->n; i++) {
        a->mean[i] += ((double)a->theta[i] - a->mean[i]) / k;
    }
    return EBM_OK;
}

int optim_average_get(const optim_average *a, float *out)
{
    if (!optim_average_on(a) || out == NULL || a->count == 0) {
        return OPTIM_EARG;
    }
    for (int64_t i = 0; i < a->n; i++) {
        out[i] = (float)a->mean[i];
    }
    return OPTIM_OK;
}

int optim_average_apply(optim_average *a, ebm_model_t *m)
{
    if (!optim_average_on(a) || m == NULL) {
        return EBM_ENULL;
    }
    if (ebm_model_param_count(m) != a->n) {
        return EBM_ESHAPE;
    }
    if (a->count == 0) {
        return EBM_EVALUE;
    }
    optim_average_get(a, a->theta);
    return ebm_model_set_params(m, a->theta);
}

int optim_average_state_set(optim_average *a, int64_t from, int64_t count, const double *mean,
                            int64_t n)
{
    if (!optim_average_on(a) || from != a->from || n != a->n || count < 0 ||
        (mean == NULL && count > 0)) {
        return OPTIM_EARG;
    }
    a->count = count;
    if (mean != NULL) {
        memcpy(a->mean, mean, (size_t)n * sizeof *a->mean);
    } else {
        memset(a->mean, 0, (size_t)n * sizeof *a->mean);
    }
    return OPTIM_OK;
}
