/*
 * The Gibbs kernel (gibbs.c): block sweeps, even layers then odd.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_GIBBS_H
#define EBM_GIBBS_H

#include "error.h"
#include "rng.h"
#include "step.h"

/* One Gibbs sweep of n rows (even free layers given odd, then odd given
 * even; the free layers are those not in k->settings->clamp_layers); layer
 * l draws from layer_streams[l], row r from stream row rows[r] (NULL: r);
 * a: n x max_size scratch. Returns 0, with x partly drawn, at the first layer
 * input that overflowed float (parameters too large), else 1. */
int ebm__gibbs_sweep(const ebm__kernel_in *k, const ebm__stream *layer_streams,
                     const int64_t *rows, int64_t n, float *x, int64_t ldx, float *a);
/* One sweep of n rows (step.h). keep: 1 leaves x as it was on any failure
 * (the public calls); 0 lets a failed step leave it partly drawn, for
 * callers that discard it (the estimator's scratch chains). Writes
 * accept_rate and hidden_input. */
int ebm__gibbs_step(const ebm__kernel_in *k, ebm__kernel_out *out, ebm__msg *msg, ebm_rng_t *rng,
                    const int64_t *ids, int64_t n, float *x, int64_t ldx, int keep);

#endif /* EBM_GIBBS_H */
