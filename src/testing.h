/*
 * Test hooks: switches and limits that only the tests set, to reach a
 * plain path, a broken twin (a deliberately wrong variant that a
 * statistical test must reject) or a failure that takes too long to reach
 * otherwise. The library never calls these; the tests include this header
 * and no other declaration of them.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_TESTING_H
#define EBM_TESTING_H

#include "ebm.h"

#include <stdint.h>

/* 1 makes s take its plain paths: MH steps compute every energy in double,
 * global moves every free energy by the exact path, Gibbs-Langevin steps
 * take the general step (no closed-form fast path). */
void ebm__sampler_set_plain(ebm_sampler_t *s, int plain);
/* The MH decisions of s that its float energies left to double, and the
 * chunks of the global moves' free energies that their bounds left to the
 * exact path, summed over its calls (0 on the plain path). */
int64_t ebm__sampler_energy_rechecks(const ebm_sampler_t *s);
/* The broken twin of the preconditioned adjustment: 1 makes the Metropolis
 * adjustment of s's Langevin kernels use the unpreconditioned proposal's
 * density while the proposals stay preconditioned. */
void ebm__sampler_set_twin_density(ebm_sampler_t *s, int twin);
/* The broken twin of the exchange rule: 1 flips the sign of the log
 * acceptance ratio of s's tempering swaps. */
void ebm__sampler_set_twin_swap(ebm_sampler_t *s, int twin);
/* The broken twins of the global moves (EBM_SAMPLER_GLOBAL_PROB): twin 1
 * accepts without the proposal's log q terms; twin 2 with the even
 * layers' own energy terms in place of the free energy F, the summed-out
 * (odd) layers' part of F left out; twin 3 with the proposals' bounded
 * free energies moved by 0.05, outside their bounds; 0 is the kernel. On
 * s, or on e's samplers. */
void ebm__sampler_set_twin_global(ebm_sampler_t *s, int twin);
void ebm__estimator_set_twin_global(ebm_estimator_t *e, int twin);
/* The residual tries a row of a coupled Gibbs step may make before the
 * step fails with EBM_ELIMIT, for every sampler and estimator of the
 * process from the next step on (default EBM__RESIDUAL_TRY_LIMIT, 2^22;
 * not safe while other threads step). Returns the previous limit. */
int64_t ebm__set_residual_try_limit(int64_t limit);
/* 1 makes e and its samplers take their plain paths (no reuse of a
 * sampler's layer inputs, double MH energies, Gibbs-Langevin's general
 * step). */
void ebm__estimator_set_plain(ebm_estimator_t *e, int plain);
/* e's tempering sampler (EBM_ESTIMATOR_PT), or NULL. */
ebm_sampler_t *ebm__estimator_tempering(const ebm_estimator_t *e);

/* The factor on the bounds of ebm__free_energy_bounded (energy.h; 1 by
 * default; for every model of the process, not safe while other threads
 * compute): below 1 the broken twin whose bounds fail, large values make
 * the global moves recheck every chunk. Returns the previous factor. */
double ebm__energy_set_bound_scale(double scale);

/* The broken twin of the threads' split (threads.h): 1 makes every part
 * of a threaded row loop after the first skip its last row. */
void ebm__threads_set_twin(int on);
/* The work below which a row loop runs on the calling thread (default
 * EBM__PARALLEL_MIN): the thread tests lower it to 1 so that every loop
 * of their calls is split. Returns the previous value. */
int64_t ebm__threads_set_min_work(int64_t work);

#endif /* EBM_TESTING_H */
