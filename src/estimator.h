/*
 * The estimator's internal hooks (estimator.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_ESTIMATOR_H
#define EBM_ESTIMATOR_H

#include "ebm.h"

/* Tests only: 1 makes the estimator and its samplers take their plain
 * paths (no reuse of a sampler's layer inputs, double MH energies). */
void ebm__estimator_set_plain(ebm_estimator_t *e, int plain);

#endif /* EBM_ESTIMATOR_H */
