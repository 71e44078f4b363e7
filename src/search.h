/*
 * Local search and mean field on validated arguments (search.c), for the
 * library's own callers: a failure's message goes to msg, not to the
 * model, so that an estimator reports its own errors. The public
 * ebm_model_local_search and ebm_model_mean_field validate, then call these.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_SEARCH_H
#define EBM_SEARCH_H

#include "error.h"
#include "model.h"

/* As ebm_model_local_search, row r's coin from stream row ids[r] (ids
 * NULL: row r): the rows stopped by the cap, or an error (x, sweeps and
 * rng unchanged). */
int ebm__local_search(const ebm_model_t *m, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                      int64_t n, float *x, int64_t ldx, const uint8_t *clamp, int64_t ldc,
                      int64_t max_sweeps, int64_t *sweeps);
/* As ebm_model_mean_field: the rows that missed tol, or an error (mu unchanged). */
int ebm__mean_field(const ebm_model_t *m, ebm__msg *msg, int64_t n, float *mu, int64_t ldmu,
                    const uint8_t *clamp, int64_t ldc, int64_t max_iter, double tol);

#endif /* EBM_SEARCH_H */
