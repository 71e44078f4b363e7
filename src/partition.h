/*
 * What the evaluation files share (partition.c, ais.c, likelihood.c): the
 * size of a parity class of layers and the checks of the log-likelihood
 * calls. The evaluation calls themselves are public (ebm.h).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_PARTITION_H
#define EBM_PARTITION_H

#include "error.h"
#include "model.h"

#include <stdint.h>

/* log2 of the number of configurations of the layers in mask: a unit has
 * 2 values, a Potts site q. */
double ebm__class_bits(const ebm_model_t *m, uint32_t mask);
/* The mask of the layers l = parity, parity + 2, ... (0: even, 1: odd). */
uint32_t ebm__parity_mask(const ebm_model_t *m, int parity);
/* The checks of the log-likelihood calls: log_z finite, data n rows of
 * n_0 valid visible values (stride ldd), ll not NULL when n > 0. Returns
 * EBM_OK or the first failure's code, its message in msg. */
int ebm__check_ll_args(const ebm_model_t *m, ebm__msg *msg, double log_z, int64_t n,
                       const float *data, int64_t ldd, const double *ll);

#endif /* EBM_PARTITION_H */
