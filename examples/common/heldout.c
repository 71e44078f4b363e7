/* The held-out log-likelihood during training: see heldout.h. */
#include "heldout.h"

#include <stddef.h>

double heldout_mean(const double *x, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        s += x[i];
    }
    return s / (double)n;
}

int heldout_score(const heldout_set *h, const ebm_model_t *m, int64_t step, double *ll,
                  double *ll_mean, double *log_z, double *log_z_se, double *is_mean)
{
    ebm_rng_t *rng = NULL;
    int rc;
    *log_z_se = 0.0;
    if (h->exact) {
        rc = ebm_model_log_partition_exact(m, log_z);
    } else {
        rc = ebm_rng_create(&rng, h->seed, h->ais_stream + (uint64_t)step);
        if (rc == EBM_OK) {
            rc = ebm_model_log_partition_ais_base(m, rng, h->ais_chains, h->ais_betas,
                                                  h->ais_base, log_z, log_z_se);
        }
    }
    if (rc == EBM_OK) {
        rc = h->bound ? ebm_model_log_likelihood_bound(m, *log_z, h->n, h->x, h->dim, ll)
                      : ebm_model_log_likelihood(m, *log_z, h->n, h->x, h->dim, ll);
    }
    if (rc == EBM_OK) {
        *ll_mean = heldout_mean(ll, h->n);
    }
    if (rc == EBM_OK && h->is_samples > 0) {
        ebm_rng_destroy(rng);
        rc = ebm_rng_create(&rng, h->seed, h->is_stream + (uint64_t)step);
        if (rc == EBM_OK) {
            rc = ebm_model_log_likelihood_is(m, rng, *log_z, h->is_samples, h->n, h->x, h->dim,
                                             ll);
        }
        if (rc == EBM_OK) {
            *is_mean = heldout_mean(ll, h->n);
        }
    }
    ebm_rng_destroy(rng);
    return rc;
}
