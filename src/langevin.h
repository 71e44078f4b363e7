/*
 * Langevin, MALA and Gibbs-Langevin steps of a GRBM (langevin.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_LANGEVIN_H
#define EBM_LANGEVIN_H

#include "error.h"
#include "rng.h"
#include "sampler.h"

int ebm__langevin_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                       int64_t n, float *x, int64_t ldx);
int ebm__gibbs_langevin_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng,
                             const int64_t *ids, int64_t n, float *x, int64_t ldx);

#endif /* EBM_LANGEVIN_H */
