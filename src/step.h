/*
 * The kernels' contract (gibbs.c, mh.c, coupling.c, langevin.c,
 * tempering.c): what one step reads and what it produces. The sampler
 * (sampler.c) fills an ebm__kernel_in once per call, pointing at the
 * settings its handle holds, and keeps what it wants of the
 * ebm__kernel_out; a kernel never sees the handle, and data flows down
 * only.
 *
 * A kernel works on validated rows, in place. Row r draws from stream row
 * ids[r] (ids NULL: row r), so a caller that compacts its batch keeps
 * every row's randomness. Each takes what it needs from rng, writes the
 * outputs of its kind, and returns EBM_OK or an error with its message in
 * msg.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_STEP_H
#define EBM_STEP_H

#include "model.h"
#include "scratch.h"

#include <stdint.h>

/* The rows of one step of a sampler (ebm__sampler_run), for the public
 * calls and the estimator alike. */
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

/* The sampler's settings that its kernels read: the options of enum
 * ebm_sampler_option that shape a step (include/ebm.h says what each
 * does), and the switches of the tests. The sampler handle holds them
 * once, its option table writing the fields (sampler.c), and its kernels
 * read them through ebm__kernel_in. */
typedef struct ebm__sampler_settings {
    uint32_t clamp_layers;
    int coupling;
    int64_t langevin_steps;
    double step_size;
    int cosine;
    int64_t adjust_after;
    int scale_by_variance;
    int precondition; /* Langevin steps scaled by sigma_i^2 per visible unit */
    int closed_form;
    double global_prob; /* EBM_SAMPLER_GLOBAL_PROB: a row's chance of a global move */
    /* tests only (testing.h), no option: the global moves' broken twins
     * (EBM__GLOBAL_TWIN_*, global.h; 0: none) */
    int twin_global;
    /* tests only (testing.h), no option: the plain paths (double MH
     * energies, Gibbs-Langevin's general step); the Langevin adjustment
     * with the unpreconditioned density; the swap rule's sign flipped */
    int plain_energies, twin_density, twin_swap;
} ebm__sampler_settings;

/* The proposal of the global moves (ebm_sampler_set_proposal), held by
 * the sampler: n_rows visible rows of n_0 values (stride n_0) and the
 * chance that a unit (a Potts site) of a chosen row changes. n_rows 0:
 * none set. */
typedef struct ebm__proposal {
    int64_t n_rows;
    const float *rows;
    const uint64_t *bits; /* the rows' bits (ebm__global_row_bits) */
    double flip_prob;
} ebm__proposal;

/* What a kernel reads besides its rows: the model, the sampler's settings
 * (its own, not a copy: a kernel only reads them), what is particular to
 * this step, and the sampler's scratch. */
typedef struct ebm__kernel_in {
    const ebm_model_t *m;
    const ebm__sampler_settings *settings;
    ebm__arena *scratch; /* the kernel's work, laid out per call */
    int64_t iteration; /* this step's number t (the counter has moved) */
    /* EBM_SAMPLER_TEMPERING: the ladder (ascending, the last 1) */
    int64_t n_betas;
    const double *betas;
    /* MH: the input of layer 1 at x (ebm__step_in's entry_input), or NULL */
    const float *entry_input;
    /* coupled Gibbs: the residual tries a row may make before the step
     * fails with EBM_ELIMIT */
    int64_t residual_try_limit;
    /* EBM_SAMPLER_GLOBAL_PROB > 0: the proposal, and the global moves'
     * own scratch (the sweep of the other rows lays out `scratch`) */
    const ebm__proposal *proposal;
    ebm__arena *global_scratch;
} ebm__kernel_in;

/* What a kernel produces besides its rows. The sampler sets every field
 * to the value below before the call; a kernel writes those of its kind,
 * and only when it succeeds. */
typedef struct ebm__kernel_out {
    double accept_rate;  /* EBM_STAT_ACCEPT_RATE: of the MH or Langevin decisions (1) */
    double met_fraction; /* coupled steps: the fraction of rows met after the step (1) */
    double tries_mean, tries_max; /* coupled Gibbs: residual tries per loop, longest (0) */
    int64_t accepted;         /* MH moves accepted, both chains (0) */
    int64_t energy_rechecks;  /* MH decisions the float energies left to double, and chunks of
                                 the global moves' free energies left to the exact path (0) */
    /* The input of layer 1 at each row's new state (n x n_1, stride n_1, in
     * the scratch: valid until its next layout) after a Gibbs sweep that
     * drew layer 1 last, or a Gibbs-Langevin step in which every row took
     * its proposal (NULL). */
    const float *hidden_input;
    /* EBM_SAMPLER_TEMPERING: per adjacent pair k, the step's swaps,
     * accepted and proposed (arrays of n_betas - 1, the sampler's) */
    int64_t *swap_accepted, *swap_proposed;
    /* EBM_SAMPLER_GLOBAL_PROB > 0: EBM_STAT_GLOBAL_ACCEPT_RATE and
     * EBM_STAT_GLOBAL_BOTH_RATE (NaN), and the global moves' decisions
     * (0; a coupled row makes two) */
    double global_accept_rate, global_both_rate;
    int64_t global_decisions;
} ebm__kernel_out;

/* Layers of m whose units move (not in clamp_layers), of one parity (0
 * even, 1 odd). */
static inline uint32_t ebm__unclamped_layers(const ebm_model_t *m, uint32_t clamp_layers,
                                             int parity)
{
    uint32_t mask = 0;
    for (int64_t l = parity; l < m->n_layers; l += 2) {
        mask |= 1u << l;
    }
    return mask & ~clamp_layers;
}

#endif /* EBM_STEP_H */
