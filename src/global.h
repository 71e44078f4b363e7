/*
 * Global moves (global.c): the independence Metropolis-Hastings move of
 * EBM_SAMPLER_GLOBAL_PROB, single and coupled, from the proposal rows of
 * ebm_sampler_set_proposal (docs/global_moves.md).
 *
 * A step with global moves is a mixture: row r flips a coin from its
 * stream row; with probability p it makes a global move, else the
 * kernel's sweep. The sampler (sampler.c, the only dispatch) runs it in
 * three parts: ebm__global_begin draws the coins and makes every global
 * row's move into scratch, gathering the other rows; the sweep kernel
 * steps the gathered rows (their stream rows kept, so their draws are
 * those they would make in a step of all rows); ebm__global_end writes
 * both into the caller's rows. Nothing is written before the end, so a
 * sweep that fails leaves the rows as they were.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_GLOBAL_H
#define EBM_GLOBAL_H

#include "error.h"
#include "model.h"
#include "rng.h"
#include "step.h"

/* The broken twins of the tests (settings.twin_global, testing.h): the
 * acceptance without the proposal's log q terms; the acceptance with the
 * even layers' own energy terms only, the summed-out (odd) layers'
 * free-energy difference left out; the proposals' bounded free energies
 * moved by EBM__GLOBAL_TWIN_SHIFT, outside their bounds. */
enum {
    EBM__GLOBAL_TWIN_NONE = 0,
    EBM__GLOBAL_TWIN_NO_Q = 1,
    EBM__GLOBAL_TWIN_NO_SUMMED = 2,
    EBM__GLOBAL_TWIN_BOUND = 3
};
#define EBM__GLOBAL_TWIN_SHIFT 0.05

/* EBM_EUNSUPPORTED, with the reason in msg, for a model that global moves
 * do not support (a Gaussian or dReLU layer); else EBM_OK. */
int ebm__global_supported(const ebm_model_t *m, ebm__msg *msg);

/* 64-bit words of one row's bits (ebm__global_row_bits) for n units. */
static inline int64_t ebm__global_bit_words(int64_t n) { return (n + 63) / 64; }

/* The bits of n rows of n_0 units (stride ld): bit j of row r, word j / 64
 * of bits + r ebm__global_bit_words(n_0), is 1 where unit j holds its upper
 * value (1, +1, or a Potts site's category). The Hamming distance of two
 * rows is the popcount of their bits' XOR, halved for Potts sites
 * (ebm_sampler_set_proposal keeps the proposal rows' bits). */
void ebm__global_row_bits(const ebm_model_t *m, int64_t n, const float *rows, int64_t ld,
                          uint64_t *bits);

/* One step's global rows and the rows left to the sweep, in the
 * global scratch (k->global_scratch): valid until its next layout. */
typedef struct ebm__global_split {
    /* The rows for the sweep: n_sweep rows of width values (stride width)
     * gathered from x (and y), with their stream rows. */
    int64_t n_sweep;
    const int64_t *sweep_ids;
    float *sweep_x, *sweep_y;
    /* inside: the rows of each kind, and the global rows' outcome */
    int64_t n_global, width;
    int64_t *global_rows, *sweep_rows;
    float *proposal;    /* n_global x width: x' of each global row */
    uint8_t *accept;    /* [2 n_global]: x's decision, y's */
    int64_t accepted, both;
    int64_t rechecks; /* chunks of free energies the bounds left to the exact path */
} ebm__global_split;

/* Part one of a step of n rows with EBM_SAMPLER_GLOBAL_PROB > 0 (x, and
 * y for a coupled step, validated; k's proposal set): takes the global
 * moves' streams from rng, draws the coins, makes the global moves into
 * scratch (the proposal and each chain's decision) and gathers the other
 * rows into g. Writes nothing of x or y. Returns EBM_OK, or EBM_ENOMEM or
 * EBM_EVALUE (a layer input that overflowed float) with msg set. */
int ebm__global_begin(const ebm__kernel_in *k, ebm__global_split *g, ebm__msg *msg,
                      ebm_rng_t *rng, const int64_t *ids, int64_t n, const float *x, int64_t ldx,
                      const float *y, int64_t ldy);
/* Part three, after the sweep of g's gathered rows succeeded: the swept
 * rows and the global rows' new states into x (and y), met (NULL or [n])
 * where the chains are equal; writes out's accept_rate (the global moves'
 * acceptance, or 1 if none), met_fraction (coupled), hidden_input (NULL:
 * the rows were gathered) and the global statistics. */
void ebm__global_end(const ebm__global_split *g, ebm__kernel_out *out, int64_t n, float *x,
                     int64_t ldx, float *y, int64_t ldy, uint8_t *met);

/* For a kernel composed with the global moves of some rows (tempering:
 * the beta = 1 replicas), not mixed: the global rows' new states into x
 * (the rows g was made from; the gathered rows are not written back) and
 * out's accept_rate and global statistics. */
void ebm__global_apply(const ebm__global_split *g, ebm__kernel_out *out, float *x, int64_t ldx);

#endif /* EBM_GLOBAL_H */
