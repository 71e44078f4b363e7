/*
 * The Metropolis-Hastings kernel with a uniform independent proposal
 * (mh.c), single and coupled.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_MH_H
#define EBM_MH_H

#include "error.h"
#include "rng.h"
#include "sampler.h"

int ebm__mh_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids, int64_t n,
                 float *x, int64_t ldx);
int ebm__coupled_mh_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                         int64_t n, float *x, int64_t ldx, float *y, int64_t ldy, uint8_t *met);

#endif /* EBM_MH_H */
