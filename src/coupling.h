/*
 * The coupled Gibbs step (coupling.c): maximal couplings of two Gibbs
 * transitions, by EBM_SAMPLER_COUPLING: MAXIMAL and CRN couple the first
 * block of layers, BLOCKWISE both blocks; the reflection-maximal coupling
 * for a Gaussian block.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_COUPLING_H
#define EBM_COUPLING_H

#include "error.h"
#include "rng.h"
#include "step.h"

/* The residual tries a row of a coupled Gibbs step may make before the
 * step fails with EBM_ELIMIT (ebm__kernel_in's residual_try_limit; tests
 * lower it, testing.h). */
#define EBM__RESIDUAL_TRY_LIMIT (INT64_C(1) << 22)

/* One coupled sweep of the rows of x and y (step.h); keep as in
 * ebm__gibbs_step, for x and y. Writes accept_rate, met_fraction,
 * tries_mean and tries_max. */
int ebm__coupled_gibbs_step(const ebm__kernel_in *k, ebm__kernel_out *out, ebm__msg *msg,
                            ebm_rng_t *rng, const int64_t *ids, int64_t n, float *x, int64_t ldx,
                            float *y, int64_t ldy, uint8_t *met, int keep);

#endif /* EBM_COUPLING_H */
