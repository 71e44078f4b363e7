/*
 * Langevin, MALA and Gibbs-Langevin steps of a GRBM (langevin.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_LANGEVIN_H
#define EBM_LANGEVIN_H

#include "error.h"
#include "rng.h"
#include "step.h"

/* One call's Langevin steps of n rows (step.h); writes accept_rate (and
 * the Gibbs-Langevin step hidden_input). */
int ebm__langevin_step(const ebm__kernel_in *k, ebm__kernel_out *out, ebm__msg *msg,
                       ebm_rng_t *rng, const int64_t *ids, int64_t n, float *x, int64_t ldx);
int ebm__gibbs_langevin_step(const ebm__kernel_in *k, ebm__kernel_out *out, ebm__msg *msg,
                             ebm_rng_t *rng, const int64_t *ids, int64_t n, float *x,
                             int64_t ldx);

#endif /* EBM_LANGEVIN_H */
