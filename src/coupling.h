/*
 * The coupled Gibbs step (coupling.c): maximal and CRN couplings.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_COUPLING_H
#define EBM_COUPLING_H

#include "error.h"
#include "rng.h"
#include "sampler.h"

/* keep as in ebm__gibbs_step, for x and y. */
int ebm__coupled_gibbs_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                            int64_t n, float *x, int64_t ldx, float *y, int64_t ldy, uint8_t *met,
                            int keep);
/* The residual tries a row of a coupled Gibbs step may make before the
 * step fails with EBM_ELIMIT (2^22; tests lower it). */
extern int64_t ebm__residual_try_limit;

#endif /* EBM_COUPLING_H */
