/*
 * The sampler handle's struct (sampler.c), shared with its kernels.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_SAMPLER_H
#define EBM_SAMPLER_H

#include "error.h"
#include "model.h"
#include "rng.h"
#include "scratch.h"

#define EBM__N_SAMPLER_STATS EBM_STAT_COUNT

struct ebm_sampler {
    const ebm_model_t *m;
    int kind;
    /* options (enum ebm_sampler_option) */
    uint32_t clamp_layers;
    int coupling;
    int64_t langevin_steps;
    double step_size;
    int cosine;
    int64_t adjust_after;
    int scale_by_variance;
    int closed_form;
    int64_t iteration;
    /* statistics of the last call (enum ebm_sampler_stat) */
    double stat[EBM__N_SAMPLER_STATS];
    /* MH energies: plain_energies (set only by tests) turns the float-GEMM
     * path off; energy_rechecks counts the decisions it left to double. */
    int plain_energies;
    int64_t energy_rechecks;
    /* After a Gibbs step that drew layer 1 last (models of two or three
     * layers), or a Gibbs-Langevin step in which every row took its
     * proposal: the input of layer 1 at each row's new state (n x n_1,
     * stride n_1, in the scratch: valid until the next call), else NULL. */
    const float *hidden_input;
    /* Set by an internal caller right before an MH call that will run
     * (mh_run clears it first thing): the hidden_input of the Gibbs step
     * that made that call's x, so that E(x) needs no GEMM
     * (ebm__energy_from_input). */
    const float *entry_input;
    ebm__scratch scratch; /* kept between calls, grown on demand */
    char errmsg[EBM__MSG_SIZE];
};

/* Layers whose units move (not clamped), of one parity (0 even, 1 odd). */
static inline uint32_t ebm__free_layers(const ebm_sampler_t *s, int parity)
{
    uint32_t mask = 0;
    for (int64_t l = parity; l < s->m->n_layers; l += 2) {
        mask |= 1u << l;
    }
    return mask & ~s->clamp_layers;
}

/* The kernels (gibbs.c, mh.c, coupling.c, langevin.c) work on validated
 * rows, in place. Row r draws from stream row ids[r] (ids NULL: row r), so
 * a caller that compacts its batch keeps every row's randomness. Each takes
 * what it needs from rng, sets the stats of the call, and returns EBM_OK
 * or an error with its message in msg. They never call back into
 * sampler.c, which validates, dispatches and undoes failed calls. */

#endif /* EBM_SAMPLER_H */
