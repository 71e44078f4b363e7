/*
 * Draws of layers from their conditionals (conditional.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_CONDITIONAL_H
#define EBM_CONDITIONAL_H

#include "model.h"
#include "rng.h"

/* Draw layer l from its input a into the layer block xl (stride ldx); row r
 * uses stream row rows[r] (rows NULL: row r), from its 32-bit word `word`
 * on (uniforms) or 2 * word on past the normals' base (Gaussian): layers
 * drawn from one stream must start at disjoint words, e.g. their offsets. */
/* That Potts draw for one row: nl columns of sites of q categories, inputs
 * a, uniforms u (the first of each site's q is used), one-hot into x (x
 * may be u): ebm__site_pick of ebm__site_softmax. */
void ebm__potts_draw(int64_t q, int64_t nl, const float *a, const float *u, float *x);
void ebm__sample_from_input(const ebm_model_t *m, int64_t l, const ebm__stream *s,
                            const int64_t *rows, uint64_t word, int64_t n, const float *a,
                            int64_t lda, float *xl, int64_t ldx);
/* The draws of a discrete layer l from its inputs a and uniforms u (stride
 * ldu; u may be xl), as ebm__sample_from_input makes them from its
 * uniforms: a unit's upper value iff u < its probability; a Potts site's
 * category by the inverse CDF of its softmax at the uniform of its first
 * column (ebm__potts_draw). */
void ebm__draw_from_uniforms(const ebm_model_t *m, int64_t l, int64_t n, const float *a,
                             int64_t lda, const float *u, int64_t ldu, float *xl, int64_t ldx);
/* Inputs a (n rows, stride lda) of layer l to an inverse temperature:
 * row r to betas[r mod n_betas]. A discrete layer's input b + W x becomes
 * beta (b + W x); a Gaussian layer's mean mu + c becomes mu + beta c. This
 * is the law exp(-E_G - beta (E - E_G)), E_G the Gaussian layer's
 * self-energy: the path of AIS and of parallel tempering. Rows at beta = 1
 * are left as they are. */
void ebm__temper_input(const ebm_model_t *m, int64_t l, int64_t n, float *a, int64_t lda,
                       const double *betas, int64_t n_betas);
/* Replace the units of the layers in `layers` that clamp does not fix (clamp
 * as in ebm_model_random_state) by uniform values (binary, spin) or N(0,1)
 * draws (Gaussian); row r from stream row rows[r]; draw: width floats. */
void ebm__random_units(const ebm_model_t *m, const ebm__stream *s, const int64_t *rows, int64_t n,
                       float *x, int64_t ldx, uint32_t layers, const uint8_t *clamp, int64_t ldc,
                       float *draw);
/* Two state rows hold the same values (compared as floats: -0 == +0). */
static inline int ebm__rows_equal(const float *a, const float *b, int64_t w)
{
    int64_t k = 0;
    for (; k + 8 <= w; k += 8) { /* eight comparisons, one branch */
        int differ = 0;
        for (int j = 0; j < 8; j++) {
            differ |= a[k + j] != b[k + j];
        }
        if (differ) {
            return 0;
        }
    }
    for (; k < w; k++) {
        if (a[k] != b[k]) {
            return 0;
        }
    }
    return 1;
}
/* log p(x_l = xl | input a) summed over the units of layer l, added to
 * logp[r], in double (inputs are float). */
void ebm__add_layer_logprob(const ebm_model_t *m, int64_t l, int64_t n, const float *a,
                            int64_t lda, const float *xl, int64_t ldx, double *logp);

#endif /* EBM_CONDITIONAL_H */
