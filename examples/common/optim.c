/* Stochastic gradient ascent: see optim.h. */
#include "optim.h"

#include <math.h>

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

int optim_sgd_step(optim_sgd *o, ebm_model_t *m, const float *g)
{
    double scale = 1.0;
    const int64_t n = ebm_model_param_count(m);
    if (g != NULL && n > 0) {
        double sq = 0.0;
        for (int64_t i = 0; i < n; i++) {
            sq += (double)g[i] * (double)g[i];
        }
        o->last_norm = sqrt(sq);
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
