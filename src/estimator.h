/*
 * The estimator's inside: its struct, shared by the handle (estimator.c:
 * create, options, chains, ladder), the gradient call (gradient.c) and
 * the estimate (estimate.c: the phases, the telescoping sums, f).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_ESTIMATOR_H
#define EBM_ESTIMATOR_H

#include "ebm.h"
#include "error.h"
#include "model.h"
#include "rng.h"
#include "sampler.h"
#include "scratch.h"

#include <stddef.h>
#include <stdint.h>

/* A list of state rows with signed coefficients: the terms of telescoping
 * sums, turned into gradients by one energy_grad call per f term. */
typedef struct ebm__weighted_rows {
    float *x;
    double *c;
    int64_t rows, cap;
} ebm__weighted_rows;

struct ebm_estimator {
    const ebm_model_t *m;
    int kind;
    /* options */
    int64_t k, max_steps, step_limit, chains_opt, burn_in, search_sweeps, mf_iters;
    int64_t row_offset, chain_offset; /* EBM_ESTIMATOR_ROW_OFFSET, _CHAIN_OFFSET */
    int marginalize, positive, sampler_kind;
    double mf_tol;
    /* samplers: joint and with the visible layer clamped */
    ebm_sampler_t *gibbs, *gibbs_post, *mh, *mh_post, *langevin, *gibbs_langevin;
    /* PT only: it owns the ladder and the swap counts (a call's steps are
     * one tally, committed when the call succeeds) */
    ebm_sampler_t *tempering;
    /* PCD / GRBM_CD / PT persistent chains */
    float *chains;
    int64_t n_chains;
    /* the gradient being built, telescoping terms, and scratch */
    float *g;
    ebm__weighted_rows pos, neg;
    ebm__arena scratch; /* a gradient call's chains (gradient_layout) */
    /* During a gradient call: the stream row of data row r, row_offset +
     * r, and of own chain j, chain_offset + j (NULL for an offset of 0:
     * row r, chain j). */
    const int64_t *row_ids, *chain_ids;
    int64_t *ibuf;
    size_t icap;
    float *gwork; /* ebm__energy_grad_rows' scratch, and its coefficients */
    size_t gwcap;
    double *gcoef;
    size_t gccap;
    /* statistics of the last call */
    double stat[EBM_ESTIMATOR_STAT_COUNT];
    double accept_sum, accept_rows, searches;
    int plain; /* tests only: ebm__estimator_set_plain (testing.h) */
    char errmsg[EBM__MSG_SIZE];
};

/* g += E_data[...] and g += E_model[...] of the estimate (estimate.c): the
 * positive phase over the data rows, the negative phase by the kind's
 * chains; telescoping terms go to e->pos and e->neg. x, y, draw: scratch of
 * n rows (the negative phase: of max(n, n_chains) rows); next_chains: the
 * persistent chains to move (PCD, GRBM_CD). */
int ebm__positive_phase(ebm_estimator_t *e, ebm__msg *msg, ebm_rng_t *rng, int64_t n,
                        const float *data, int64_t ldd, float *x, float *y, float *draw);
int ebm__negative_phase(ebm_estimator_t *e, ebm__msg *msg, ebm_rng_t *rng, int64_t n,
                        const float *data, int64_t ldd, float *x, float *y, float *draw,
                        float *next_chains, int64_t n_chains);
/* g += the f terms of the weighted rows, f keeping the layers `clamped`;
 * EBM_ENOMEM with msg set if its scratch cannot grow. */
int ebm__add_weighted_rows(ebm_estimator_t *e, ebm__msg *msg, uint32_t clamped,
                           const ebm__weighted_rows *rows);

/* The most samplers an estimator has. */
#define EBM__ESTIMATOR_SAMPLERS 7
/* e's samplers (those it created), into list; returns their count. */
int ebm__estimator_samplers(ebm_estimator_t *e, ebm_sampler_t **list);

#endif /* EBM_ESTIMATOR_H */
