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
#include "step.h"

/* One MH step of n rows (step.h); writes accept_rate, accepted and
 * energy_rechecks (and the coupled step met_fraction). */
int ebm__mh_step(const ebm__kernel_in *k, ebm__kernel_out *out, ebm__msg *msg, ebm_rng_t *rng,
                 const int64_t *ids, int64_t n, float *x, int64_t ldx);
int ebm__coupled_mh_step(const ebm__kernel_in *k, ebm__kernel_out *out, ebm__msg *msg,
                         ebm_rng_t *rng, const int64_t *ids, int64_t n, float *x, int64_t ldx,
                         float *y, int64_t ldy, uint8_t *met);

#endif /* EBM_MH_H */
