/*
 * Samplers (sampler.c) and their kernels (coupling.c, langevin.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_SAMPLER_H
#define EBM_SAMPLER_H

#include "error.h"
#include "model.h"
#include "rng.h"

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
    /* scratch kept between calls, grown on demand */
    float *fbuf;
    size_t fcap;
    double *dbuf;
    size_t dcap;
    int64_t *ibuf;
    size_t icap;
    char errmsg[EBM__MSG_SIZE];
};

/* Scratch of at least n elements (grown, contents not kept), or NULL. */
float *ebm__sampler_floats(ebm_sampler_t *s, size_t n);
double *ebm__sampler_doubles(ebm_sampler_t *s, size_t n);
int64_t *ebm__sampler_indices(ebm_sampler_t *s, size_t n);
/* Layers whose units move (not clamped), of one parity (0 even, 1 odd). */
uint32_t ebm__free_layers(const ebm_sampler_t *s, int parity);
/* A stream for try k >= 1 of a rejection loop that started on stream base:
 * a sequence of its own, so loops never run out of numbers. */
ebm__stream ebm__stream_for_try(const ebm__stream *base, uint64_t k);

/* One Gibbs sweep of n rows (even free layers given odd, then odd given
 * even); layer l draws from layer_streams[l], row r from stream row rows[r]
 * (NULL: r); a: n x max_size scratch. Returns 0, with x partly drawn, at
 * the first layer input that overflowed float (parameters too large),
 * else 1. */
int ebm__gibbs_sweep(const ebm_sampler_t *s, const ebm__stream *layer_streams,
                     const int64_t *rows, int64_t n, float *x, int64_t ldx, float *a);

/* Kernels on validated rows, in place. Row r draws from stream row ids[r]
 * (ids NULL: row r), so a caller that compacts its batch keeps every row's
 * randomness. Each takes what it needs from rng, sets the stats of the call,
 * and returns EBM_OK or an error with its message in msg. */
int ebm__gibbs_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                    int64_t n, float *x, int64_t ldx, int keep);
int ebm__mh_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids, int64_t n,
                 float *x, int64_t ldx);
int ebm__langevin_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                       int64_t n, float *x, int64_t ldx);
int ebm__gibbs_langevin_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng,
                             const int64_t *ids, int64_t n, float *x, int64_t ldx);
/* The coupled Gibbs step. keep (here and in ebm__gibbs_step): 1 leaves x
 * and y as they were on any failure (the public calls); 0 lets a failed
 * step leave them partly drawn, for callers that discard them (the
 * estimator's scratch chains). */
int ebm__coupled_gibbs_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                            int64_t n, float *x, int64_t ldx, float *y, int64_t ldy, uint8_t *met,
                            int keep);
/* The residual tries a row of a coupled Gibbs step may make before the
 * step fails with EBM_ELIMIT (2^22; tests lower it). */
extern int64_t ebm__residual_try_limit;
int ebm__coupled_mh_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                         int64_t n, float *x, int64_t ldx, float *y, int64_t ldy, uint8_t *met);

#endif /* EBM_SAMPLER_H */
