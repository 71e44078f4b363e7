/*
 * Parallel tempering (tempering.c): Gibbs sweeps of replicas at a ladder of
 * inverse temperatures, and replica exchange by the Metropolis rule.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_TEMPERING_H
#define EBM_TEMPERING_H

#include "error.h"
#include "rng.h"
#include "step.h"

/* The largest ladder. */
#define EBM__MAX_BETAS 1024

/* Checks of a ladder (n_betas, betas) as ebm_sampler_set_ladder takes it. */
int ebm__check_ladder(ebm__msg *msg, int64_t n_betas, const double *betas);

/* What a tempering step needs of its rows, checked before it moves
 * anything: a ladder (n_betas > 0), n a multiple of its length, no clamped
 * layer. */
int ebm__tempering_check(ebm__msg *msg, int64_t n_betas, uint32_t clamp_layers, int64_t n);

/* One tempering step on n validated rows (step.h; the checks above
 * passed): a Gibbs sweep of row r at beta_{r mod R}, then the swaps of the
 * even pairs, then of the odd pairs. Writes swap_accepted and
 * swap_proposed. keep: x is left as it was on failure. */
int ebm__tempering_step(const ebm__kernel_in *k, ebm__kernel_out *out, ebm__msg *msg,
                        ebm_rng_t *rng, const int64_t *ids, int64_t n, float *x, int64_t ldx,
                        int keep);

#endif /* EBM_TEMPERING_H */
