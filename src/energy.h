/*
 * Layer inputs, energies, free energies and their gradients: energy.c
 * (layer inputs, free energies in double), energy_fast.c (the MH kernels'
 * float energies with certified bounds), energy_grad.c (gradients). No
 * argument checks but ebm__check_energy_args: callers have validated.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_ENERGY_H
#define EBM_ENERGY_H

#include "error.h"
#include "model.h"

/* a = input of layer l from the float state x (see ebm_model_layer_input). */
void ebm__layer_input(const ebm_model_t *m, int64_t l, int64_t n, const float *x, int64_t ldx,
                      float *a, int64_t lda);
/* The same in double from a double state xd. */
void ebm__layer_input_d(const ebm_model_t *m, int64_t l, int64_t n, const double *xd,
                        int64_t ldxd, double *a, int64_t lda);
/* In place: a -> E[x_l | a] (sigmoid, tanh, identity). */
void ebm__mean_from_input(const ebm_model_t *m, int64_t l, int64_t n, float *a, int64_t lda);

/* Rows per chunk of the double-precision paths (bounds their scratch). */
#define EBM__CHUNK 256

/* Scratch of ebm__free_energy_chunk, in doubles, for `rows` rows. */
int64_t ebm__free_energy_scratch(const ebm_model_t *m, int64_t rows);
/* f[r] = F_S(x_r) in double for rows <= EBM__CHUNK rows; S validated;
 * work has ebm__free_energy_scratch(m, rows) doubles. */
void ebm__free_energy_chunk(const ebm_model_t *m, uint32_t sum_out, int64_t rows, const float *x,
                            int64_t ldx, double *f, double *work);
/* The same with the summed binary and spin layers' log partition sums
 * approximated (vectorised, no libm): err[r] bounds |f[r] - what
 * ebm__free_energy_chunk gives|, rigorously (energy.c: lz_approx); a
 * decision that holds for every value within err[r] of f[r] is the exact
 * path's (global.c). */
void ebm__free_energy_bounded(const ebm_model_t *m, uint32_t sum_out, int64_t rows,
                              const float *x, int64_t ldx, double *f, double *err, double *work);
/* f over any n, allocating scratch once. Returns EBM_OK or EBM_ENOMEM. */
int ebm__free_energy(const ebm_model_t *m, ebm__msg *msg, uint32_t sum_out, int64_t n,
                     const float *x, int64_t ldx, double *f);

/* The checks of the public energy calls: sum_out valid, x an n x width
 * matrix (stride ldx) of valid states of the kept layers, out (named
 * out_name in the message) not NULL when n > 0. Returns EBM_OK or the
 * first failure's code, its message in msg. */
int ebm__check_energy_args(const ebm_model_t *m, ebm__msg *msg, uint32_t sum_out, int64_t n,
                           const float *x, int64_t ldx, const void *out, const char *out_name);

/* Energies of binary/spin states (every layer binary or spin:
 * ebm__energy_fast_ok) with the coupling sums in float GEMMs: e[r] is within
 * ebm__energy_fast_bound(m) of E(x_r), and so is the double path's
 * ebm__free_energy_chunk(m, 0, ...). t: rows x max_size floats. */
int ebm__energy_fast_ok(const ebm_model_t *m);
double ebm__energy_fast_bound(const ebm_model_t *m);
/* E(x_r) of such a model of two or three layers from a1, the float input
 * of layer 1 at x_r (rows of n_1) as ebm__layer_input makes it: E =
 * -sum_{l != 1} b_l.x_l - x_1.a_1 in double, no GEMM. */
void ebm__energy_from_input(const ebm_model_t *m, int64_t rows, const float *x, int64_t ldx,
                            const float *a1, double *e);
/* *fast = ebm__energy_fast_bound(m); *from_input (unless NULL; two or three
 * layers) bounds ebm__energy_from_input's error and the double path's
 * alike. One pass over the weights. */
void ebm__energy_bounds(const ebm_model_t *m, double *fast, double *from_input);
void ebm__energy_fast(const ebm_model_t *m, int64_t rows, const float *x, int64_t ldx, double *e,
                      float *t);

/* Scratch of ebm__energy_grad_rows, in floats, for `rows` rows. */
int64_t ebm__energy_grad_scratch(const ebm_model_t *m, int64_t rows);
/* g += sum_r coef[r] dF_S(x_r)/dtheta (no checks, no allocation; g float). */
void ebm__energy_grad_rows(const ebm_model_t *m, uint32_t sum_out, int64_t n, const float *x,
                           int64_t ldx, const double *coef, float *g, float *work);

#endif /* EBM_ENERGY_H */
