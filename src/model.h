/*
 * The model's inside: its struct, its life cycle and message slot
 * (model.c), its parameters (params.c), and the argument checks every
 * public call on a model uses (checks.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_MODEL_H
#define EBM_MODEL_H

#include "ebm.h"
#include "error.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>

/* Log-variances are kept in [-EBM__LOGVAR_MAX, EBM__LOGVAR_MAX] so that
 * 1/sigma^2 and sigma^2 stay finite in float. */
#define EBM__LOGVAR_MAX 30.0

struct ebm_model {
    int64_t n_layers;
    int64_t size[EBM_MAX_LAYERS];
    int64_t column[EBM_MAX_LAYERS]; /* layer column: where layer l starts in a state row */
    int units[EBM_MAX_LAYERS];
    int64_t categories[EBM_MAX_LAYERS]; /* q of a Potts layer (sites of q columns), else 1 */
    int64_t width;
    int64_t max_size; /* largest layer */
    int64_t n_params;
    int64_t w_off[EBM_MAX_LAYERS]; /* W_l at params + w_off[l], l >= 1 */
    int64_t b_off[EBM_MAX_LAYERS];
    int64_t logvar_off; /* -1 unless layer 0 is Gaussian */
    int64_t shape_off;  /* -1 unless layer 1 is dReLU: log gp [n_1], log gn [n_1], D [n_1] */
    float *params;
    /* Derived from params by ebm__model_refresh after every change: */
    double *params_d;   /* double copy: energies are computed in double; its
                         * weight block [0, b_off[0]) is read through
                         * ebm__weights_d, the rest directly */
    /* 1 while params_d's weight block equals the float weights. Axpy clears
     * it (a training step need not pay for a copy nothing may read before
     * the next step); ebm__weights_d refreshes the block on first use, under
     * lock, since const calls may need it concurrently. Atomic accesses. */
    int weights_d_valid;
    /* Gaussian visible units only (NULL otherwise): */
    float *inv_var;     /* 1/sigma^2 [n_0] */
    double *inv_var_d;
    float *w1_scaled;   /* diag(1/sigma^2) W_1: couples v/sigma^2 to layer 1 */
    double *w1_scaled_d;
    /* Centring (centring.c): the centring offsets mu [width] (all 0 unless set), the
     * biases the energy is computed with [width], bt_l = b_l - W_l^T
     * mu_{l-1} - W_{l+1} mu_{l+1} (b_l itself when uncentred), and the
     * constant c = sum_l b_l.mu_l - sum_l mu_{l-1}^T W_l mu_l, so that E(x) =
     * -sum_l bt_l.x_l - sum_l x_{l-1}^T W_l x_l + c. */
    float *mu;
    int centred;        /* some centring offset is nonzero */
    float *bias;
    double *bias_d;
    double shift;       /* c */
    /* The energy paths' error bounds (ebm__energy_bounds): computed on first
     * use after a change (ebm__model_refresh and axpy clear bounds_valid),
     * under lock, since const calls may need them concurrently. */
    int bounds_valid;
    double bound_fast, bound_input;
    /* guards errmsg, the bounds and the double weights: const calls may run
     * concurrently */
    pthread_mutex_t lock;
    char errmsg[EBM__MSG_SIZE];
};

/* Validate a shape and allocate a zeroed model (create and load share it). */
/* categories: q of a Potts visible layer (NULL: not given, as from
 * ebm_model_create, refused for Potts); ignored for the other kinds. */
int ebm__model_new(ebm_model_t **out, ebm__msg *msg, int64_t n_layers, const int64_t *sizes,
                   int visible_units, int hidden_units, const int64_t *categories);
/* The most categories of a Potts layer. */
#define EBM__MAX_CATEGORIES 65536
/* Every value finite, every log-variance and dReLU log gamma within
 * +-EBM__LOGVAR_MAX; the message names the block and index ("W_2[3,4] is
 * nan"). */
int ebm__check_params(const ebm_model_t *m, ebm__msg *msg, const char *name, const float *p);
/* Every offset in mu (state width) in its unit's range: [0, 1] for binary
 * units, [-1, 1] for spin units; all 0 in a model with Gaussian visible
 * units (else EBM_EUNSUPPORTED). The message names name[k], layer and unit. */
int ebm__check_centring(const ebm_model_t *m, ebm__msg *msg, const char *name, const float *mu);
/* Store a message in the model's slot (thread-safe; m may be const). Returns code. */
int ebm__model_set_error(const ebm_model_t *m, int code, const ebm__msg *msg);
/* Format a message into the model's slot (as ebm__model_set_error) and
 * return code: a failing call's last line. */
int ebm__model_error(const ebm_model_t *m, int code, const char *fmt, ...) EBM__PRINTF(3, 4);
/* Recompute params_d, the Gaussian caches and the centred biases from
 * params and the centring offsets. */
void ebm__model_refresh(ebm_model_t *m);
/* params_d with its weight block up to date (refreshed here, under the
 * model's lock, if an axpy left it stale): the only way to read W_l in
 * double, params_d + w_off[l]. Safe in concurrent const calls. */
const double *ebm__weights_d(const ebm_model_t *m);
/* The Gaussian caches (1/sigma^2, diag(1/sigma^2) W_1) from params;
 * nothing without Gaussian visible units. */
void ebm__refresh_gaussian(ebm_model_t *m);
/* The centred biases and c from params, params_d and the offsets. */
void ebm__refresh_bias(ebm_model_t *m);
/* out_l += alpha (W_l^T d_{l-1} + W_{l+1} d_{l+1}) over the layers, d = x -
 * x0 (x0 NULL: d = x), in double: how values d of the units enter the
 * other layers' biases (width entries each). */
void ebm__add_coupled(const ebm_model_t *m, const float *x, const float *x0, double alpha,
                      double *out);
static inline int ebm__is_gaussian(const ebm_model_t *m, int64_t l)
{
    return m->units[l] == EBM_UNITS_GAUSSIAN;
}
static inline int ebm__is_potts(const ebm_model_t *m, int64_t l)
{
    return m->units[l] == EBM_UNITS_POTTS;
}
static inline int ebm__is_drelu(const ebm_model_t *m, int64_t l)
{
    return m->units[l] == EBM_UNITS_DRELU;
}
/* The discrete kinds: binary, spin, Potts (a state has finitely many values). */
static inline int ebm__is_discrete(const ebm_model_t *m, int64_t l)
{
    return !ebm__is_gaussian(m, l) && !ebm__is_drelu(m, l);
}
/* The shape of dReLU layer l's unit j in double: gp = e^{log gp}, gn, D. */
static inline void ebm__drelu_shape(const ebm_model_t *m, int64_t j, double *gp, double *gn,
                                    double *d)
{
    const double *s = m->params_d + m->shape_off;
    const int64_t n = m->size[1];
    *gp = exp(s[j]);
    *gn = exp(s[n + j]);
    *d = s[2 * n + j];
}



/* n >= 0, x != NULL (if n > 0), ld >= width, and n*ld fits. */
int ebm__check_matrix(ebm__msg *msg, const char *name, int64_t n, const void *x, int64_t ld,
                      int64_t width);
/* Every unit of the layers in layer_mask holds a valid value of its kind. */
int ebm__check_states(const ebm_model_t *m, ebm__msg *msg, const char *name, uint32_t layer_mask,
                      int64_t n, const float *x, int64_t ldx);
/* Values of layer l given separately (n x n_l, stride ld). */
int ebm__check_layer_values(const ebm_model_t *m, ebm__msg *msg, const char *name, int64_t l,
                            int64_t n, const float *xl, int64_t ld);
/* sum_out: bits only below n_layers, no two adjacent. */
int ebm__check_sum_out(const ebm_model_t *m, ebm__msg *msg, uint32_t sum_out);
/* clamp mask: NULL, or ldc == 0, or ldc >= width. */
int ebm__check_clamp(const ebm_model_t *m, ebm__msg *msg, int64_t n, const uint8_t *clamp,
                     int64_t ldc);
/* A layer index l in [lo, L]. */
int ebm__check_layer(const ebm_model_t *m, ebm__msg *msg, const char *name, int64_t l, int64_t lo);
/* Mask of all layers. */
static inline uint32_t ebm__all_layers(const ebm_model_t *m)
{
    return (m->n_layers >= 32) ? 0xffffffffu : ((1u << m->n_layers) - 1u);
}
/* Mask of the neighbours of layer l. */
static inline uint32_t ebm__neighbours(const ebm_model_t *m, int64_t l)
{
    uint32_t mask = 0;
    if (l > 0) {
        mask |= 1u << (l - 1);
    }
    if (l + 1 < m->n_layers) {
        mask |= 1u << (l + 1);
    }
    return mask;
}

#endif /* EBM_MODEL_H */
