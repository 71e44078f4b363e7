/*
 * The sampler handle's struct (sampler.c) and its internal calls, for the
 * estimator and the tests. The kernels do not see it: their contract is
 * step.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_SAMPLER_H
#define EBM_SAMPLER_H

#include "error.h"
#include "model.h"
#include "rng.h"
#include "scratch.h"
#include "step.h"

#define EBM__N_SAMPLER_STATS EBM_STAT_COUNT

struct ebm_sampler {
    const ebm_model_t *m;
    int kind;
    /* options (enum ebm_sampler_option): the settings the kernels read
     * (step.h), the step counter, the first stream row */
    ebm__sampler_settings settings;
    int64_t iteration;
    int64_t row_offset; /* stream row of row r: row_offset + r */
    int64_t *row_ids;   /* row_offset + r, for the public calls (grown on demand) */
    size_t row_ids_cap;
    /* EBM_SAMPLER_TEMPERING: the ladder (n_betas 0 until set; ascending,
     * the last 1), and per adjacent pair k the swaps, accepted and
     * proposed: of the last step (step_*), of the tally being summed
     * (tally_*), and of the last tally committed (swap_*: what
     * ebm_sampler_swap_counts reports). The six arrays of n_betas - 1 are
     * pieces of one block, swaps. */
    int64_t n_betas;
    double *betas;
    int64_t *swaps;
    int64_t *swap_accepted, *swap_proposed, *tally_accepted, *tally_proposed;
    int64_t *step_accepted, *step_proposed;
    /* statistics of the last call (enum ebm_sampler_stat) */
    double stat[EBM__N_SAMPLER_STATS];
    int64_t accepted; /* MH moves accepted in the last call (both chains) */
    int64_t global_decisions; /* the global moves' decisions of the last step */
    /* MH decisions the float-GEMM energies left to double (the tests'
     * settings.plain_energies turns that path off) */
    int64_t energy_rechecks;
    /* The kernel's hidden_input of the last step that succeeded (step.h):
     * n x n_1, stride n_1, in the scratch, valid until the next call; or
     * NULL. */
    const float *hidden_input;
    ebm__arena scratch; /* kept between calls, grown on demand */
    /* EBM_SAMPLER_GLOBAL_PROB: the proposal (ebm_sampler_set_proposal; its
     * rows and their counts of upper values in the one block
     * proposal_rows), and the global moves' own scratch */
    ebm__proposal proposal;
    float *proposal_rows;
    ebm__arena global_scratch;
    /* TEMPERING with global moves: the stream rows of the beta = 1
     * replicas, and a copy of a public step's rows (both grown on demand) */
    int64_t *top_ids;
    size_t top_ids_cap;
    float *saved_rows;
    size_t saved_cap;
    char errmsg[EBM__MSG_SIZE];
};

/* What a step reports to an internal caller (the estimator): the
 * sampler's state after it. */
typedef struct ebm__step_out {
    int kind;           /* the sampler's kind (enum ebm_sampler_kind) */
    double accept_rate; /* EBM_STAT_ACCEPT_RATE */
    int64_t accepted;   /* MH moves accepted (both chains; MH_UNIFORM only) */
    /* EBM_SAMPLER_GLOBAL_PROB > 0: the global moves' decisions (a coupled
     * row makes two; 0 if none) and their acceptance */
    int64_t global_decisions;
    double global_accept_rate;
} ebm__step_out;

/* One step of s on validated rows (step.h's ebm__step_in), for the public
 * calls and the estimator alike: the only dispatch to the kernels. The
 * sampler hands a kernel its settings and the step's particulars
 * (ebm__kernel_in, filled once per call) and keeps what it reports
 * (ebm__kernel_out) only if the step succeeds: statistics, counts, the
 * layer input it left, a tempering step's swaps (added to the tally). The
 * step counter moves by one before the kernel runs (the kernel sees the
 * new count as its t) and moves back if the step fails; rng is the
 * caller's to restore. report (NULL: not wanted) gets the report of a step
 * that succeeded. */
int ebm__sampler_run(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const ebm__step_in *in,
                     ebm__step_out *report);
/* After a successful step: the input of layer 1 at each new row (n x n_1,
 * stride n_1, in s's scratch: valid until s's next call) if the step left
 * it (a Gibbs sweep that drew layer 1 last, a Gibbs-Langevin step in which
 * every row took its proposal), else NULL. */
const float *ebm__sampler_hidden_input(const ebm_sampler_t *s);
/* The options' consistency for s's kind, checked before a step moves
 * anything: EBM_EVALUE if a Langevin kind has both
 * EBM_SAMPLER_PRECONDITION and EBM_SAMPLER_SCALE_BY_VARIANCE set; with
 * EBM_SAMPLER_GLOBAL_PROB > 0, EBM_EUNSUPPORTED for a kind other than
 * GIBBS and TEMPERING, a Gaussian or dReLU layer or a clamped layer, and EBM_EVALUE if
 * no proposal is set. */
int ebm__sampler_check_options(const ebm_sampler_t *s, ebm__msg *msg);

/* ebm_sampler_set_proposal in two parts, so that an estimator sets the
 * proposal of several samplers or none: the checks and the copy (a block
 * for ebm__sampler_proposal_set, or an error in msg and *copy NULL), then
 * the setting, which cannot fail (s owns copy). */
int ebm__sampler_proposal_copy(const ebm_sampler_t *s, ebm__msg *msg, int64_t n_rows,
                               const float *rows, int64_t ldr, double flip_prob, float **copy);
void ebm__sampler_proposal_set(ebm_sampler_t *s, float *copy, int64_t n_rows, double flip_prob);
/* The kernel of s's kind (coupled if in->y is set) on the rows of in
 * (sampler.c), with k filled from s for this step. */
int ebm__sampler_dispatch(const ebm_sampler_t *s, const ebm__kernel_in *k, ebm__kernel_out *out,
                          ebm__msg *msg, ebm_rng_t *rng, const ebm__step_in *in);
/* The step of s on the rows of in (proposal.c): ebm__sampler_dispatch's,
 * or with EBM_SAMPLER_GLOBAL_PROB > 0 the mixture (global.h): the global
 * moves of the rows whose coin says so, the kernel's sweep of the others
 * (tempering: its step of every row, then the global moves of the beta = 1
 * replicas). On failure the rows are as they were if in->keep is set. */
int ebm__sampler_mixture(ebm_sampler_t *s, const ebm__kernel_in *k, ebm__kernel_out *out,
                         ebm__msg *msg, ebm_rng_t *rng, const ebm__step_in *in);

/* EBM_SAMPLER_TEMPERING, for the handles that run one (s NULL: none).
 * The ladder's length (0: none yet). */
int64_t ebm__sampler_ladder_size(const ebm_sampler_t *s);
/* A tally sums the swaps of the steps that succeed between its begin and
 * its commit; the commit makes them the counts ebm_sampler_swap_counts
 * reports and sets EBM_STAT_SWAP_RATE (accepted over proposed, all pairs;
 * 1 if none was proposed). A tally not committed changes nothing; a
 * public step is a tally of one step. Both need a ladder. */
void ebm__sampler_tally_begin(ebm_sampler_t *s);
void ebm__sampler_tally_commit(ebm_sampler_t *s);
/* The swap_counts calls: the committed counts of s's ladder into accepted
 * and proposed (either may be NULL), n_pairs checked against the ladder
 * (kind names the handle asked, for the message). */
int ebm__sampler_swap_counts(const ebm_sampler_t *s, ebm__msg *msg, const char *kind,
                             int64_t n_pairs, int64_t *accepted, int64_t *proposed);

#endif /* EBM_SAMPLER_H */
