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
 * Beside either, optim_average keeps the Polyak-Ruppert tail average of the
 * iterates (Qiu et al. 2020, Alg. 2 returns the average of its SGD
 * iterates), also checkpointable.
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

/* ------------------------------------------------------------------------ */
/* optim_average: the tail average of the iterates (Polyak-Ruppert)         */
/* ------------------------------------------------------------------------ */

/*
 * With theta_t the parameters after t steps of either optimiser (t its
 * `step` count), the average from step N after t > N steps is
 *   avg_t = (1 / (t - N)) sum_{s=N+1}^{t} theta_s,
 * the mean of the last t - N iterates; N = 0 averages every iterate after
 * the first step (theta_0, the initial model, is not one). It is kept as
 * the running mean avg += (theta - avg) / k, k the iterates averaged so far,
 * in double: the float parameters of thousands of iterates would lose their
 * low bits to rounding, and the running form keeps the accumulator at the
 * parameters' scale, where a plain sum would grow with k. Training continues
 * on theta_t; the average is only read (evaluation, model files).
 *
 * An average is active once optim_average_init succeeded with from >= 0. A
 * zeroed or freed one, or one initialised with from < 0 (averaging off), is
 * inactive: it owns nothing, updates do nothing and count stays 0. The
 * fields may be read (checkpoints read from, count and mean).
 */
typedef struct optim_average {
    int64_t n;     /* parameters (0 when inactive) */
    int64_t from;  /* N: the iterates after step N are averaged; -1 when inactive */
    int64_t count; /* iterates averaged so far: max(0, t - N) if updated after every step */
    double *mean;  /* [n] the running mean (zeros while count is 0), or NULL when inactive */
    float *theta;  /* scratch [n]: the parameters read by an update */
} optim_average;

/**
 * Prepare a for n_params parameters, averaging the iterates after step from
 * (from < 0: averaging off, a is inactive and owns nothing).
 * @return OPTIM_OK, OPTIM_EARG (a NULL, or n_params < 1 with from >= 0),
 *         OPTIM_ENOMEM (a is then zeroed, inactive)
 */
int optim_average_init(optim_average *a, int64_t n_params, int64_t from);
/** Free a's buffers and leave it inactive. NULL or an inactive a is a no-op. */
void optim_average_free(optim_average *a);
/** @return 1 if a is active (averaging on), else 0 (also for NULL). */
int optim_average_on(const optim_average *a);
/**
 * Call after every successful optimiser step, with the optimiser's step
 * count after it (o->step): if step > a->from, m's parameters become the
 * count-th averaged iterate. No allocation. An inactive a is a no-op.
 * @return EBM_OK, EBM_ENULL (m NULL), EBM_ESHAPE (m's parameter count is
 *         not a->n); on failure a is unchanged
 */
int optim_average_update(optim_average *a, const ebm_model_t *m, int64_t step);
/**
 * The average rounded to float, into out[a->n].
 * @return OPTIM_OK, OPTIM_EARG (a or out NULL, a inactive, or nothing
 *         averaged yet: count 0; out is then untouched)
 */
int optim_average_get(const optim_average *a, float *out);
/**
 * Set m's parameters to the average rounded to float (through a's scratch;
 * a->mean and count are unchanged).
 * @return EBM_OK, EBM_ENULL (a or m NULL, or a inactive), EBM_ESHAPE (m's
 *         parameter count is not a->n), EBM_EVALUE (nothing averaged yet:
 *         count 0), or as ebm_model_set_params; on failure m is unchanged
 */
int optim_average_apply(optim_average *a, ebm_model_t *m);
/**
 * Restore a checkpoint's average into an active a with the same from and n:
 * count iterates with mean mean[n] (copied exactly), or, for count 0 and
 * mean NULL, an empty average.
 * @return OPTIM_OK, OPTIM_EARG (a inactive, from or n differ, count < 0,
 *         mean NULL with count > 0: a unchanged)
 */
int optim_average_state_set(optim_average *a, int64_t from, int64_t count, const double *mean,
                            int64_t n);

#endif
