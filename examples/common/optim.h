/* Plain stochastic gradient ascent on a libebm model, as the papers train:
 * theta += lr_t * g, where g is an ebm_estimator_gradient estimate (an ascent
 * direction of the average log-likelihood). Optional, for trainers that need
 * them: the cosine learning-rate decay of Liao et al. (2022; their eq. 22
 * schedule applied to the learning rate, as in their appendix) and clipping
 * of the gradient's Euclidean norm. Neither momentum nor weight decay: none
 * of the reproduced papers uses them. Nothing here prints or exits.
 */
#ifndef EXAMPLES_COMMON_OPTIM_H
#define EXAMPLES_COMMON_OPTIM_H

#include <ebm.h>
#include <stdint.h>

typedef struct optim_sgd {
    double lr;           /* the (initial) learning rate, > 0 */
    int cosine;          /* 1: lr_t = lr (1 + cos(pi t / total_steps)) / 2, reaching 0 */
    int64_t total_steps; /* for the cosine schedule, >= 1 */
    double clip_norm;    /* > 0: g is scaled by min(1, clip_norm / ||g||_2); 0: no clipping */
    int64_t step;        /* steps taken so far: t of the next step */
    double last_norm;    /* ||g||_2 of the last step's gradient */
} optim_sgd;

/** A constant-rate SGD: {lr, 0, 0, 0, 0, 0}. */
optim_sgd optim_sgd_plain(double lr);
/** @return the learning rate the next step will use. */
double optim_sgd_rate(const optim_sgd *o);
/**
 * One step: theta += lr_t * scale * g, through ebm_model_axpy_params (scale
 * from clipping, else 1), then o->step++. g is read, never written.
 * @return as ebm_model_axpy_params (EBM_EVALUE for a non-finite g or result:
 *         the model and o->step are unchanged; ebm_model_errmsg(m) says why)
 */
int optim_sgd_step(optim_sgd *o, ebm_model_t *m, const float *g);

#endif
