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
#include "sampler.h"

/* The largest ladder. */
#define EBM__MAX_BETAS 1024

/* Checks of a ladder (n_betas, betas) as ebm_sampler_set_ladder takes it. */
int ebm__check_ladder(ebm__msg *msg, int64_t n_betas, const double *betas);

/* What a tempering step needs of its rows, checked before it moves
 * anything: a ladder, n a multiple of its length, no clamped layer. */
int ebm__tempering_check(const ebm_sampler_t *s, ebm__msg *msg, int64_t n);

/* One step of s (EBM_SAMPLER_TEMPERING) on n validated rows (the checks
 * above passed): a Gibbs sweep of row r at beta_{r mod R}, then the swaps
 * of the even pairs, then of the odd pairs. On success s's swap counts
 * and EBM_STAT_SWAP_RATE are this step's; on failure they are unchanged.
 * keep: x is left as it was on failure. */
int ebm__tempering_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                        int64_t n, float *x, int64_t ldx, int keep);

/* The swap_counts calls: a ladder of R (0: none yet) whose per-pair counts
 * are acc and prop; checks n_pairs against it and copies into accepted
 * and proposed (either may be NULL). kind names the handle's kind. */
int ebm__swap_counts(ebm__msg *msg, const char *kind, int64_t R, const int64_t *acc,
                     const int64_t *prop, int64_t n_pairs, int64_t *accepted, int64_t *proposed);

/* Tests only: 1 flips the sign of the swaps' log acceptance ratio (the
 * broken twin of the exchange rule). */
void ebm__sampler_set_twin_swap(ebm_sampler_t *s, int twin);

#endif /* EBM_TEMPERING_H */
