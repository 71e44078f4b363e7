/* The held-out log-likelihood of a model during training (--eval-every),
 * shared by the trainers (trainer_eval.c, train_grbm.c): the mean over a
 * fixed set of encoded rows of log p(v), with log Z exact or by AIS, or of a
 * DBM's mean-field bound with AIS log Z, and a DBM's importance-sampled
 * estimate beside it. The evaluation at step s draws from streams of its
 * own, (seed, ais_stream + s) and (seed, is_stream + s), so it never moves
 * training and a resumed run repeats it.
 *
 * The trainer decides how the rows are scored (exact, bound, IS) and fills
 * a heldout_set; heldout_score only computes. Not thread-safe on one set's
 * scratch (each caller passes its own).
 */
#ifndef EXAMPLES_COMMON_HELDOUT_H
#define EXAMPLES_COMMON_HELDOUT_H

#include <ebm.h>
#include <stdint.h>

typedef struct heldout_set {
    const float *x;          /* n encoded rows, stride dim (the model's visible units) */
    int64_t n, dim;
    int exact;               /* log Z by enumeration, else AIS */
    int bound;               /* score the mean-field bound (DBMs), not log p(v) */
    int64_t is_samples;      /* > 0: the IS estimate too, with this many samples a row */
    uint64_t seed, ais_stream, is_stream;
    int64_t ais_chains, ais_betas;
    const float *ais_base;   /* AIS's base visible biases (ebm_model_log_partition_ais_base),
                              * or NULL: the model's default base */
} heldout_set;

/** The mean of x[0..n), summed in order (the trainers' per-row means). */
double heldout_mean(const double *x, int64_t n);

/**
 * Score m on h's rows at a step.
 * @param[in]  h         the rows and how they are scored
 * @param[in]  m         the model
 * @param[in]  step      the training step (the streams' offset)
 * @param[out] ll        scratch of h->n doubles: the last per-row scores
 * @param[out] ll_mean   the rows' mean log p(v) (or bound), nats per row
 * @param[out] log_z     log Z, exact or AIS's
 * @param[out] log_z_se  AIS's standard error, 0 if exact
 * @param[out] is_mean   the IS estimate's mean; set only if h->is_samples > 0
 * @return EBM_OK, or the failing library call's code (m's message says why,
 *         except EBM_ENOMEM from a generator); the outputs are then unset
 */
int heldout_score(const heldout_set *h, const ebm_model_t *m, int64_t step, double *ll,
                  double *ll_mean, double *log_z, double *log_z_se, double *is_mean);

#endif
