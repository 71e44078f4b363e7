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
    int precondition;   /* Langevin steps scaled by sigma_i^2 per visible unit */
    int closed_form;
    int64_t iteration;
    int64_t row_offset; /* stream row of row r: row_offset + r */
    int64_t *row_ids;   /* row_offset + r, for the public calls (grown on demand) */
    size_t row_ids_cap;
    /* EBM_SAMPLER_TEMPERING: the ladder (n_betas 0 until set; ascending,
     * the last 1), and per adjacent pair k the swaps of the last call:
     * accepted, and proposed (one per chain) */
    int64_t n_betas;
    double *betas;
    int64_t *swap_accepted, *swap_proposed;
    int twin_swap; /* tests only: ebm__sampler_set_twin_swap */
    /* statistics of the last call (enum ebm_sampler_stat) */
    double stat[EBM__N_SAMPLER_STATS];
    int64_t accepted; /* MH moves accepted in the last call (both chains) */
    /* MH energies: plain_energies (set only by tests) turns the float-GEMM
     * path off; energy_rechecks counts the decisions it left to double. */
    int plain_energies;
    int64_t energy_rechecks;
    /* Langevin adjustments with the unpreconditioned density (tests only) */
    int twin_density;
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
    ebm__arena scratch; /* kept between calls, grown on demand */
    char errmsg[EBM__MSG_SIZE];
};

/* Layers whose units move (not clamped), of one parity (0 even, 1 odd). */
static inline uint32_t ebm__unclamped_layers(const ebm_sampler_t *s, int parity)
{
    uint32_t mask = 0;
    for (int64_t l = parity; l < s->m->n_layers; l += 2) {
        mask |= 1u << l;
    }
    return mask & ~s->clamp_layers;
}

/* One step of s on validated rows, for the public calls and the estimator
 * alike: the only dispatch to the kernels. */
typedef struct ebm__step_in {
    const int64_t *ids; /* the stream row of each row (NULL: row r) */
    int64_t n;
    float *x;
    int64_t ldx;
    float *y;     /* NULL: a single-chain step; else the coupled step of x and y */
    int64_t ldy;
    uint8_t *met; /* coupled: NULL or [n], 1 where the chains met */
    /* MH: the input of layer 1 at x left by the Gibbs step that made x
     * (ebm__sampler_hidden_input of that sampler), so that E(x) needs no
     * GEMM; NULL: none. */
    const float *entry_input;
    int keep; /* 1: x and y are left as they were on failure; 0: they may be
               * partly drawn (the estimator's scratch chains) */
} ebm__step_in;

/* The step counter moves (the kernels see t = counter + 1) and moves back
 * if the step fails; rng is the caller's to restore. */
int ebm__sampler_run(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const ebm__step_in *in);
/* After a successful step: the input of layer 1 at each new row (n x n_1,
 * stride n_1, in s's scratch: valid until s's next call) if the step left
 * it (a Gibbs sweep that drew layer 1 last, a Gibbs-Langevin step in which
 * every row took its proposal), else NULL. */
const float *ebm__sampler_hidden_input(const ebm_sampler_t *s);
/* Tests only: 1 makes MH compute every energy in double (plain path). */
void ebm__sampler_set_plain(ebm_sampler_t *s, int plain);
/* Tests only (the broken twin of the preconditioned adjustment): 1 makes
 * the Metropolis adjustment of the Langevin kernels use the
 * unpreconditioned proposal's density while the proposals stay
 * preconditioned. */
void ebm__sampler_set_twin_density(ebm_sampler_t *s, int twin);
/* The options' consistency for s's kind, checked before a step moves
 * anything: EBM_EVALUE if a Langevin kind has both
 * EBM_SAMPLER_PRECONDITION and EBM_SAMPLER_SCALE_BY_VARIANCE set. */
int ebm__sampler_check_options(const ebm_sampler_t *s, ebm__msg *msg);

/* The kernels (gibbs.c, mh.c, coupling.c, langevin.c, tempering.c) work on validated
 * rows, in place. Row r draws from stream row ids[r] (ids NULL: row r), so
 * a caller that compacts its batch keeps every row's randomness. Each takes
 * what it needs from rng, sets the stats of the call, and returns EBM_OK
 * or an error with its message in msg. They never call back into
 * sampler.c, which validates, dispatches and undoes failed calls. */

#endif /* EBM_SAMPLER_H */
