/* Stochastic gradient ascent on a libebm model, as the papers train:
 * theta += lr_t * g, where g is an ebm_estimator_gradient estimate (an ascent
 * direction of the average log-likelihood).
 *
 * Two interfaces:
 *  - optim_sgd: plain SGD with the cosine learning-rate decay of Liao et al.
 *    (2022; their eq. 22 schedule applied to the learning rate, as in their
 *    appendix) and clipping of the gradient's Euclidean norm. No buffers.
 *  - optim: SGD with optional (heavy-ball) momentum, or Adam (Kingma and Ba
 *    2015), with a constant, 1/sqrt or cosine schedule and norm clipping.
 *    Its state (step count and buffers) can be saved and restored exactly
 *    for checkpoints (optim_state_size, optim_state_get, optim_state_set).
 *    The 1/sqrt schedule lr_t = lr / sqrt(1 + gamma t) with gamma = 1e-3 is
 *    the one of Taniguchi et al.'s published code (unbiased_dbm, train.py).
 * No weight decay: none of the reproduced papers uses it. Nothing here
 * prints or exits.
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

/* ------------------------------------------------------------------------ */
/* optim: momentum, Adam, schedules, clipping, checkpointable state         */
/* ------------------------------------------------------------------------ */

enum optim_kind {
    OPTIM_SGD = 0, /* theta += lr_t (g + momentum buffer): buf = mu buf + g (PyTorch's form) */
    OPTIM_ADAM = 1 /* theta += lr_t m_hat / (sqrt(v_hat) + eps), bias-corrected moments */
};

enum optim_schedule {
    OPTIM_CONSTANT = 0, /* lr_t = lr */
    OPTIM_INVSQRT = 1,  /* lr_t = lr / sqrt(1 + gamma t) */
    OPTIM_COSINE = 2    /* lr_t = lr (1 + cos(pi min(t, T) / T)) / 2, T = total_steps */
};

/** Settings; optim_settings_default gives SGD, constant lr, no momentum, no clipping. */
typedef struct optim_settings {
    int kind;            /* enum optim_kind */
    double lr;           /* > 0 */
    int schedule;        /* enum optim_schedule */
    double gamma;        /* OPTIM_INVSQRT: > 0 (1e-3 in Taniguchi's code) */
    int64_t total_steps; /* OPTIM_COSINE: >= 1 */
    double momentum;     /* OPTIM_SGD: in [0, 1); 0 keeps no buffer */
    double beta1, beta2; /* OPTIM_ADAM: in [0, 1) (0.9, 0.999) */
    double eps;          /* OPTIM_ADAM: > 0 (1e-8) */
    double clip_norm;    /* > 0: g scaled by min(1, clip_norm / ||g||_2) first; 0: none */
} optim_settings;

typedef struct optim {
    optim_settings set;
    int64_t n;          /* parameters */
    int64_t step;       /* steps taken: t of the next step */
    double last_norm;   /* ||g||_2 of the last step's gradient (before clipping) */
    float *m, *v;       /* momentum or Adam first moment; Adam second moment (or NULL) */
    float *dir;         /* scratch: the update direction */
    float *m_new, *v_new; /* scratch: buffers of a step not yet accepted */
} optim;

enum optim_status {
    OPTIM_OK = 0,
    OPTIM_EARG = -1,  /* bad settings or arguments */
    OPTIM_ENOMEM = -2 /* out of memory */
};

/** SGD at rate lr, constant schedule, no momentum, Adam's usual betas and eps. */
optim_settings optim_settings_default(double lr);
/** @return NULL if s is valid, else a static text naming the bad field. */
const char *optim_settings_check(const optim_settings *s);
/**
 * Prepare o for n_params parameters (buffers zeroed, step 0).
 * @return OPTIM_OK, OPTIM_EARG (invalid settings or n_params < 1), OPTIM_ENOMEM
 *         (o is then zeroed and owns nothing)
 */
int optim_init(optim *o, const optim_settings *s, int64_t n_params);
/** Free o's buffers and zero it. NULL or a zeroed optim is a no-op. */
void optim_free(optim *o);
/** @return the learning rate the next step will use. */
double optim_rate(const optim *o);
/**
 * One step on m (param_count must equal o->n): clip, update the buffers,
 * theta += lr_t * direction through ebm_model_axpy_params, then o->step++.
 * g is read, never written.
 * @return as ebm_model_axpy_params: on failure (EBM_EVALUE for a non-finite
 *         g or result; ebm_model_errmsg(m) says why) neither the model nor
 *         o (step, buffers) changes. EBM_ENULL for a NULL argument or an
 *         uninitialised o, EBM_ESHAPE if the parameter counts disagree.
 */
int optim_step(optim *o, ebm_model_t *m, const float *g);
/** @return the floats of state buffers: 0 (plain SGD), n (momentum) or 2 n (Adam). */
int64_t optim_buffer_floats(const optim *o);
/** Copy the step count and the buffers (optim_buffer_floats of them) out,
 *  exactly, for checkpoints. buffers may be NULL when there are none. */
void optim_state_get(const optim *o, int64_t *step, float *buffers);
/** Restore what optim_state_get wrote, for the same settings and n.
 *  @return OPTIM_OK, OPTIM_EARG (step < 0 or n_floats != optim_buffer_floats(o):
 *          o unchanged) */
int optim_state_set(optim *o, int64_t step, const float *buffers, int64_t n_floats);

#endif
